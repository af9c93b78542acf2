// Generated from schemas/riot_methods.json by scripts/generate-types.mjs; do not edit.
// Regenerate with `npm run generate` once schemas/ is current (see the script's header).

/**
 * An API key on the wire: never printed, not even in debug output.
 */
export type WireKey = string;
/**
 * `_riot/compaction`'s status.
 */
export type CompactionStatus = "compacting" | "compacted";
/**
 * What faces are told about terminals as it happens.
 */
export type TerminalUpdate =
  | {
      type: "opened";
      name: string;
      command: string;
      size: TerminalSize;
    }
  | {
      type: "screen";
      name: string;
      /**
       * Every row, trailing spaces removed.
       */
      rows: string[];
      cursor_row: number;
      cursor_col: number;
      full_screen: boolean;
      /**
       * The rows that scrolled off the top of the (main) screen since
       * the last screen, oldest first: a face keeps them as scrollback.
       */
      scrolled?: string[];
    }
  | {
      type: "resized";
      name: string;
      size: TerminalSize;
    }
  | {
      type: "exited";
      name: string;
      exit: TerminalExit;
    }
  | {
      type: "closed";
      name: string;
    };

/**
 * Riot's methods beyond ACP, by name.
 */
export interface RiotMethods {
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/shutdown": {
    params: ShutdownRequest;
    result: ShutdownResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/mcp_servers": {
    params: McpServersRequest;
    result: McpServersResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/mcp_restart": {
    params: McpRestartRequest;
    result: McpRestartResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/config": {
    params: ConfigRequest;
    result: ConfigResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/config_set": {
    params: ConfigSetRequest;
    result: ConfigResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/files": {
    params: FilesRequest;
    result: FilesResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/session_rename": {
    params: SessionRenameRequest;
    result: DoneResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/session_delete": {
    params: SessionDeleteRequest;
    result: DoneResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/set_model": {
    params: SetModelRequest;
    result: DoneResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/checkpoints": {
    params: CheckpointsRequest;
    result: CheckpointsResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/rewind": {
    params: RewindRequest;
    result: RewindResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/terminal_write": {
    params: TerminalWriteRequest;
    result: DoneResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/terminal_resize": {
    params: TerminalResizeRequest;
    result: TerminalResizeResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/queue": {
    params: QueueRequest;
    result: QueueResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/background": {
    params: BackgroundRequest;
    result: BackgroundResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/background_stop": {
    params: BackgroundStopRequest;
    result: BackgroundStopResponse;
  };
  /**
   * A request: what the client sends and what it gets back.
   */
  "_riot/deliver": {
    params: DeliverRequest;
    result: DeliverResponse;
  };
  /**
   * A notification: what the agent sends.
   */
  "_riot/usage": {
    params: UsageNotification;
  };
  /**
   * A notification: what the agent sends.
   */
  "_riot/compaction": {
    params: CompactionNotification;
  };
  /**
   * A notification: what the agent sends.
   */
  "_riot/queue_update": {
    params: QueueNotification;
  };
  /**
   * A notification: what the agent sends.
   */
  "_riot/background_update": {
    params: BackgroundNotification;
  };
  /**
   * A notification: what the agent sends.
   */
  "_riot/terminal": {
    params: TerminalNotification;
  };
}
/**
 * `_riot/shutdown`'s params: nothing but an optional `_meta`. Params may
 * also be left out.
 */
export interface ShutdownRequest {
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/shutdown`'s result: how many prompt turns were running and are
 * being cancelled.
 */
export interface ShutdownResponse {
  cancelledTurns: number;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/mcp_servers`: the MCP servers of the projects this agent has
 * sessions in, with their status (for a UI's MCP panel).
 */
export interface McpServersRequest {
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/mcp_servers`'s result.
 */
export interface McpServersResponse {
  servers: McpServerEntry[];
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * One server of `_riot/mcp_servers`.
 */
export interface McpServerEntry {
  project: string;
  name: string;
  /**
   * `user`, `project` or `session`.
   */
  scope: string;
  /**
   * `stdio` or `http`.
   */
  transport: string;
  /**
   * `connecting`, `ready`, `failed` or `disabled`.
   */
  status: string;
  tools?: number | null;
  reason?: string | null;
}
/**
 * `_riot/mcp_restart`: stop and start one server again (its status goes
 * back to `connecting`).
 */
export interface McpRestartRequest {
  name: string;
  /**
   * The project directory, when several have a server of that name.
   */
  project?: string | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/mcp_restart`'s result.
 */
export interface McpRestartResponse {
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/config`: the model endpoint of new sessions in `cwd` (default:
 * the person's home directory).
 */
export interface ConfigRequest {
  cwd?: string | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/config`'s and `_riot/config_set`'s result. Never the key.
 */
export interface ConfigResponse {
  provider?: string | null;
  baseUrl?: string | null;
  model?: string | null;
  /**
   * `present`, `missing` or `not-needed`.
   */
  key: string;
  /**
   * `$VAR` or `credentials.json`.
   */
  keySource?: string | null;
  ready: boolean;
  problem?: string | null;
  /**
   * The `notifications` setting in effect (the web UI follows
   * `desktop`); absent when the settings could not be read.
   */
  notifications?: NotificationSettings | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `{"bell": true, "title": true, "desktop": true}`.
 */
export interface NotificationSettings {
  /**
   * The terminal UI rings the bell when a turn ends or a question waits.
   */
  bell: boolean;
  /**
   * The terminal UI shows the session's title and state in the
   * terminal's title.
   */
  title: boolean;
  /**
   * The desktop app notifies when a session in another window finishes
   * or waits for a permission.
   */
  desktop: boolean;
}
/**
 * `_riot/config_set`: the endpoint a person chose.
 */
export interface ConfigSetRequest {
  provider: string;
  model: string;
  baseUrl?: string | null;
  apiKey?: WireKey | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/files`: project files matching what follows an `@`.
 */
export interface FilesRequest {
  cwd: string;
  query?: string;
  limit?: number | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/files`' result: project-relative paths, best first.
 */
export interface FilesResponse {
  files: string[];
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/session_rename`.
 */
export interface SessionRenameRequest {
  sessionId: string;
  title: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * The empty result of a request that only acts.
 */
export interface DoneResponse {
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/session_delete`.
 */
export interface SessionDeleteRequest {
  sessionId: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/set_model`.
 */
export interface SetModelRequest {
  sessionId: string;
  model: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/checkpoints`.
 */
export interface CheckpointsRequest {
  sessionId: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/checkpoints`' reply: `{number, text, at_ms, in_history, files,
 * calls, unfinished}` per user message.
 */
export interface CheckpointsResponse {
  points: unknown[];
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/rewind`.
 */
export interface RewindRequest {
  sessionId: string;
  to?: number | null;
  filesOnly?: boolean;
  conversationOnly?: boolean;
  force?: boolean;
  undo?: boolean;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/rewind`'s reply: what happened (`{to, files: {restored,
 * removed, conflicts, forced, notes} | null, conversation, prompt}`) and
 * the same as one paragraph for a person.
 */
export interface RewindResponse {
  outcome: unknown;
  summary: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/terminal_write`: the person types `input` (the bytes a terminal
 * sends: `"\r"` for Enter, `"\u0003"` for Ctrl+C) into terminal `name`.
 */
export interface TerminalWriteRequest {
  sessionId: string;
  name: string;
  input: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/terminal_resize`: terminal `name` gets `rows` × `cols`
 * (clamped to 5×20 … 200×500); the answer is the size set.
 */
export interface TerminalResizeRequest {
  sessionId: string;
  name: string;
  rows: number;
  cols: number;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * The size a terminal was given.
 */
export interface TerminalResizeResponse {
  rows: number;
  cols: number;
}
/**
 * `_riot/queue`.
 */
export interface QueueRequest {
  sessionId: string;
  /**
   * What `_riot/queue` does.
   */
  action?: "list" | "push" | "edit" | "remove" | "take";
  /**
   * The message to edit or remove.
   */
  id?: string | null;
  /**
   * The text to push, or the edited text.
   */
  text?: string | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/queue`'s reply.
 */
export interface QueueResponse {
  /**
   * What waits after the action, in order.
   */
  messages: QueuedMessage[];
  /**
   * The pushed message's id (`push`).
   */
  id?: string | null;
  /**
   * What was taken (`take`), in order.
   */
  taken?: QueuedMessage[] | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * One waiting message.
 */
export interface QueuedMessage {
  id: string;
  text: string;
  /**
   * `person`, or `riot` (a background task's result).
   */
  origin: string;
  /**
   * Riot's message put back after the person stopped the turn that
   * carried it: it waits for the person.
   */
  held?: boolean;
}
/**
 * `_riot/background`.
 */
export interface BackgroundRequest {
  sessionId: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/background`'s reply.
 */
export interface BackgroundResponse {
  tasks: BackgroundTask[];
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * One background task.
 */
export interface BackgroundTask {
  id: string;
  agent: string;
  description: string;
  /**
   * `running`, `completed`, `failed` or `stopped`.
   */
  state: string;
  /**
   * Tool calls it has started.
   */
  calls: number;
  /**
   * Its latest tool call.
   */
  last?: string | null;
  /**
   * Its answer, or why it failed, once it ended.
   */
  result?: string | null;
}
/**
 * `_riot/background_stop`.
 */
export interface BackgroundStopRequest {
  sessionId: string;
  /**
   * The task's id (`bg_1`, …).
   */
  id: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/background_stop`'s reply: the task as it stands.
 */
export interface BackgroundStopResponse {
  task: BackgroundTask;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/deliver`.
 */
export interface DeliverRequest {
  sessionId: string;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/deliver`'s reply: how the turn ended, or null when none ran.
 */
export interface DeliverResponse {
  /**
   * ACP's stop reason (`end_turn`, `max_tokens`, `max_turn_requests`,
   * `refusal`, `cancelled`).
   */
  stopReason?: string | null;
}
/**
 * `_riot/usage`: one prompt turn's usage.
 */
export interface UsageNotification {
  sessionId: string;
  /**
   * The model of the turn's last request.
   */
  model: string;
  /**
   * How many model requests the turn made.
   */
  requests: number;
  usage: UsageFigures;
  sideUsage: UsageFigures1;
  /**
   * The session's cost so far, in US dollars (`Session::cost`); always
   * sent, `null` when unknown.
   */
  costUsd?: number | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * Summed over those requests.
 */
export interface UsageFigures {
  /**
   * Input tokens not read from or written to the cache.
   */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}
/**
 * The side requests made while the turn ran (its subagents,
 * compaction summaries, the auto-mode classifier, image descriptions,
 * WebFetch's answers), as `riot exec`'s `side_usage` counts them.
 */
export interface UsageFigures1 {
  /**
   * Input tokens not read from or written to the cache.
   */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}
/**
 * `_riot/compaction`: compaction started or finished.
 */
export interface CompactionNotification {
  sessionId: string;
  status: CompactionStatus;
  /**
   * `clear_tool_results` or `summary`.
   */
  strategy: "clear_tool_results" | "summary";
  /**
   * Estimated context tokens before and after (when `compacted`).
   */
  tokensBefore?: number | null;
  tokensAfter?: number | null;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/queue_update`: the session's queue changed.
 */
export interface QueueNotification {
  sessionId: string;
  /**
   * What waits now.
   */
  messages: QueuedMessage[];
  /**
   * What the loop has just delivered into the conversation.
   */
  delivered: QueuedMessage[];
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/background_update`: a task started, made a tool call or ended.
 */
export interface BackgroundNotification {
  sessionId: string;
  task: BackgroundTask;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * `_riot/terminal`: something happened in one of the session's terminals.
 */
export interface TerminalNotification {
  sessionId: string;
  update: TerminalUpdate;
  _meta?: {
    [k: string]: unknown | undefined;
  } | null;
}
/**
 * Rows and columns of a terminal.
 */
export interface TerminalSize {
  rows: number;
  cols: number;
}
/**
 * How a terminal's program ended.
 */
export interface TerminalExit {
  /**
   * `None` when a signal ended it.
   */
  code?: number | null;
  signal?: number | null;
}
