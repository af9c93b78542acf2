// A fake `riot serve` for the bridge's tests, built on the SDK's agent side
// and reached through the in-memory socket pair. It is as strict as Riot
// (crates/riot-acp/src/agent.rs, ws.rs): it refuses a socket without the
// token, rejects what Riot rejects with Riot's codes and words (a relative
// or unknown cwd, an unknown session, an empty prompt, a second prompt
// while one runs, a mode it does not offer, content other than text and
// resource links), sends `_riot/...` notifications only to a client that
// asked for them, and treats an answer that is not an offered option as a
// rejection. What a test would otherwise miss is recorded in `violations`.
//
// It also has Riot's `_riot/...` requests, each only when advertised:
// the model configuration (`_riot/config`, `_riot/config_set`, refusing
// an unknown provider, an empty model and a base URL that is not http(s);
// the key goes to `credentials` and never comes back), project files for
// mentions (`_riot/files`: hidden files left out, fuzzy-ranked), session
// rename and delete (refused while a turn runs) and a session's model
// (`_riot/set_model`; `session/new` and `session/load` report it in
// `_meta.riot.model`), and checkpoints and rewind (`_riot/checkpoints`,
// `_riot/rewind`: between turns only; the user messages are numbered from
// the history, the files each turn changed and the files the person edited
// since are what the test says with `setChanges`; a conversation rewind
// cuts the history `session/load` replays, and the last rewind can be
// undone until the next prompt), and typing into a session's terminals
// (`_riot/terminal_write`: refused, in Riot's words, for a terminal that
// is not open; `terminal` sends the `_riot/terminal` updates a test
// scripts), and each session's queue and background agents
// (`_riot/queue`, `_riot/background`, `_riot/background_stop`, refused in
// Riot's words; `enqueue`, `deliverQueued` and `backgroundTask` play
// Riot's loop and agents), and the turn of Riot's that gives the model a
// background result waiting between turns (`_riot/deliver`: the next
// scripted turn, `source: "deliver"`; `stopReason: null` when nothing of
// Riot's waits or a turn runs). A turn (a prompt's or a delivery) stopped
// before any reply (text or a tool call; thinking alone does not count)
// is withdrawn, and Riot's messages that went with it wait again marked
// `held: true`, as Riot marks them. A session cannot start before the configuration is
// ready, and params with fields Riot does not know are refused.

import * as acp from "@agentclientprotocol/sdk";
import type {
  PermissionOption,
  RequestPermissionResponse,
  SessionModeState,
  SessionUpdate,
  StopReason,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";

import {
  CHECKPOINTS,
  COMPACTION,
  CONFIG,
  CONFIG_SET,
  FILES,
  PROVIDERS,
  REWIND,
  SESSION_DELETE,
  SESSION_RENAME,
  SET_MODEL,
  SHUTDOWN,
  TERMINAL,
  TERMINAL_RESIZE,
  TERMINAL_WRITE,
  USAGE,
  type KeyStatus,
  type ModelConfig,
} from "../riot-ext";
import type { TerminalUpdate } from "../../generated/terminal_update";
import {
  BACKGROUND,
  BACKGROUND_STOP,
  BACKGROUND_UPDATE,
  DELIVER,
  QUEUE,
  QUEUE_UPDATE,
  type BackgroundTask,
  type QueuedMessage,
} from "../parallel";
import { parseFrame, socketStream, type SocketLike } from "../socket";
import { refusedSocket, socketPair, type FakeSocket } from "./fake-socket";
import type { RiotMethods } from "../../generated/riot_methods";

/** What Riot answers `M` with, on the wire. */
type WireResult<M extends keyof RiotMethods> = RiotMethods[M] extends { result: infer R } ? R : never;
/** What Riot sends with `M`, on the wire. */
type WireParams<M extends keyof RiotMethods> = RiotMethods[M]["params"];

const INVALID_PARAMS = -32602;

/** What the fake says of its sandbox, as a Riot with bubblewrap does. */
export const FAKE_SANDBOX = "sandboxed (bubblewrap)";

/** The modes Riot offers (crates/riot-acp/src/mapping.rs, OFFERED_MODES). */
export const OFFERED_MODES = ["default", "accept-edits", "plan", "auto", "bypass", "dont-ask"] as const;

function modeState(current: string): SessionModeState {
  return {
    currentModeId: current,
    availableModes: OFFERED_MODES.map((id) => ({ id, name: id })),
  };
}

/** How a fake turn saw a permission question end. */
export type Answer = { optionId: string } | "rejected" | "cancelled";

/** What a scripted turn can do. */
/** An image block of a prompt, as the fake received it. */
export interface FakeImage {
  mimeType: string;
  data: string;
}

export interface FakeTurn {
  readonly sessionId: string;
  readonly text: string;
  /** The prompt's image blocks, in order. */
  readonly images: readonly FakeImage[];
  /**
   * `prompt`: the person's `session/prompt`; `deliver`: a turn of Riot's
   * (`_riot/deliver`) whose `text` is Riot's waiting messages, in order.
   */
  readonly source: "prompt" | "deliver";
  /** Aborts when the client sends `session/cancel`. */
  readonly cancelled: AbortSignal;
  send(update: SessionUpdate): Promise<void>;
  /** Asks the client, as Riot's gate does; an id not offered is a rejection. */
  ask(toolCall: ToolCallUpdate, options: PermissionOption[]): Promise<Answer>;
  /** Sends `_riot/compaction` (only to a client that asked for it). */
  compaction(params: Record<string, unknown>): Promise<void>;
  /**
   * The session's cost the turn's `_riot/usage` reports (`null`: unknown).
   * Unset, each turn adds $0.0005 to the session's figure.
   */
  setCost(usd: number | null): void;
}

export type TurnScript = (turn: FakeTurn) => Promise<StopReason>;

/** A git worktree a fake session works in (`_meta.riot.worktree`). */
export interface FakeWorktree {
  name: string;
  branch: string;
  path: string;
  project: string;
  /** False once removed (`removeWorktree`): listed with `present: false`, as Riot does. */
  present?: boolean;
}

interface FakeSession {
  cwd: string;
  /** The worktree it works in (docs/parallel.md), if any. */
  worktree?: FakeWorktree;
  title: string | null;
  model: string;
  mode: string;
  /** Its thinking level (`off` until set). */
  thinking: string;
  /** What `session/load` replays. */
  history: SessionUpdate[];
  running: AbortController | null;
  /** What it has cost, as Riot reports it in `_riot/usage`. */
  costUsd: number | null;
  /** The files each user message's turn changed, by message number. */
  changed: Map<number, string[]>;
  /** Files the person changed after the agent: a rewind's conflicts. */
  edited: Set<string>;
  /** What the last rewind undoes, until the session goes on. */
  undo: {
    history: SessionUpdate[];
    changed: Map<number, string[]>;
    to: number;
    /** The files the rewind wrote (`null`: it left files alone). */
    files: string[] | null;
    conversation: boolean;
  } | null;
}

/** The index in `history` where each user message starts (a run of user chunks is one message). */
function promptStarts(history: readonly SessionUpdate[]): number[] {
  const starts: number[] = [];
  history.forEach((u, i) => {
    if (u.sessionUpdate === "user_message_chunk" && history[i - 1]?.sessionUpdate !== "user_message_chunk") {
      starts.push(i);
    }
  });
  return starts;
}

function promptText(history: readonly SessionUpdate[], start: number): string {
  let text = "";
  for (let i = start; i < history.length; i++) {
    const u = history[i]!;
    if (u.sessionUpdate !== "user_message_chunk") break;
    if (u.content.type === "text") text += u.content.text;
  }
  return text;
}

/** Riot's one paragraph for a rewind (crates/riot-kernel/src/checkpoints.rs, `describe`). */
function describeRewind(
  outcome: { to: number; conversation: boolean; files: { restored: string[]; removed: string[]; conflicts: string[]; forced: string[] } | null },
  undo: boolean,
): string {
  let out = undo ? "Undid the last rewind." : `Rewound to just before message ${outcome.to}.`;
  if (outcome.conversation) out += undo ? " The conversation is back." : " The conversation from there on is withdrawn.";
  const f = outcome.files;
  if (f === null) return `${out} Files were left as they are.`;
  if (f.restored.length === 0 && f.removed.length === 0) out += " No file needed restoring.";
  if (f.restored.length > 0) out += ` Restored: ${f.restored.join(", ")}.`;
  if (f.removed.length > 0) out += ` Removed: ${f.removed.join(", ")}.`;
  const kept = f.conflicts.filter((c) => !f.forced.includes(c));
  if (kept.length > 0) {
    out += ` Changed by you since the agent, left as they are: ${kept.join(", ")} (to restore them too, undo this rewind and rewind again with --force; your version is kept as a checkpoint first).`;
  }
  if (f.forced.length > 0) out += ` Restored over your changes (undo the rewind to get them back): ${f.forced.join(", ")}.`;
  return out;
}

/** Every `_riot/...` request the fake has. */
export const FAKE_REQUESTS = [
  SHUTDOWN,
  CONFIG,
  CONFIG_SET,
  FILES,
  SESSION_RENAME,
  SESSION_DELETE,
  SET_MODEL,
  CHECKPOINTS,
  REWIND,
  TERMINAL_WRITE,
  TERMINAL_RESIZE,
  QUEUE,
  BACKGROUND,
  BACKGROUND_STOP,
  DELIVER,
] as const;

/** The model configuration the fake starts with (its settings and environment). */
export interface FakeConfig {
  provider: string | null;
  baseUrl: string | null;
  model: string | null;
  /** The environment's key variables. */
  env: Record<string, string>;
}

/** A configured endpoint, with its key in the environment. */
export const READY_CONFIG: FakeConfig = {
  provider: "anthropic",
  baseUrl: null,
  model: "mock-model",
  env: { ANTHROPIC_API_KEY: "sk-env" },
};

/** A first run: nothing configured, no key anywhere. */
export const UNCONFIGURED: FakeConfig = { provider: null, baseUrl: null, model: null, env: {} };

export interface FakeRiotOptions {
  token: string;
  projects: string[];
  commands?: { name: string; description: string; hint?: string }[];
  /** Default: `READY_CONFIG`. */
  config?: FakeConfig;
  /** The files on disk per project directory, project-relative (hidden ones too). */
  files?: Record<string, string[]>;
  /** The `_riot/...` requests advertised (and answered); default: all of `FAKE_REQUESTS`. */
  requests?: readonly string[];
  /** Advertise `promptCapabilities.image` and take image blocks (default: true, as Riot does). */
  images?: boolean;
  /**
   * The projects that are git repositories with a commit: only they can
   * have sessions in worktrees (default: none, so a worktree is refused
   * with Riot's words).
   */
  gitProjects?: string[];
  /** The `notifications` setting `_riot/config` reports (default: none, as an older Riot). */
  notifications?: { bell: boolean; title: boolean; desktop: boolean };
  /** Models that can think: a session on one offers the `thinking` option (default: none). */
  thinkingModels?: string[];
  /** Models the endpoint lists, offered after the session's own in the `model` option (default: none). */
  listedModels?: { id: string; name: string }[];
}

/** Riot's rule for a worktree's name (crates/riot-worktree/src/lib.rs, `check_name`). */
function worktreeNameProblem(name: string): string | null {
  const fine =
    name.length > 0 &&
    name.length <= 64 &&
    !/^[.-]/.test(name) &&
    !name.endsWith(".") &&
    !name.endsWith(".lock") &&
    !name.includes("..") &&
    /^[A-Za-z0-9._-]+$/.test(name);
  return fine
    ? null
    : `\`${name}\` cannot name a worktree: use 1–64 letters, digits, \`.\`, \`_\` or \`-\`, not starting with \`.\` or \`-\` (e.g. --worktree fix-login)`;
}

function keyVariable(provider: string): string {
  return provider === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

/** How well `path` matches `query` (every character, in order, ignoring case); `null` when it does not. */
export function fuzzyScore(path: string, query: string): number | null {
  const wanted = query.toLowerCase().replace(/\s+/g, "");
  const lower = path.toLowerCase();
  const nameStart = lower.lastIndexOf("/") + 1;
  let score = 0;
  let from = 0;
  let previous = -2;
  for (const ch of wanted) {
    const at = lower.indexOf(ch, from);
    if (at < 0) return null;
    const wordStart = at === 0 || "/._- ".includes(lower[at - 1] ?? "");
    score += 1 + (wordStart ? 7 : 0) + (at === previous + 1 ? 5 : 0) + (at >= nameStart ? 3 : 0);
    previous = at;
    from = at + 1;
  }
  return score * 1000 - path.length;
}

/** The `limit` best matches, best first; for an empty query the shallowest, shortest paths. */
export function rankFiles(files: readonly string[], query: string, limit: number): string[] {
  const visible = files.filter((f) => !f.split("/").some((part) => part.startsWith(".")));
  const scored: [number, string][] =
    query.trim() === ""
      ? visible.map((f) => [-(f.split("/").length * 10000 + f.length), f])
      : visible.flatMap((f) => {
          const s = fuzzyScore(f, query);
          return s === null ? [] : [[s, f] as [number, string]];
        });
  scored.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return scored.slice(0, limit).map(([, f]) => f);
}

/** Queued messages as Riot sends them: `held` only when true (crates/riot-acp/src/queue.rs). */
function onWire(messages: readonly QueuedMessage[]): WireResult<typeof QUEUE>["messages"] {
  return messages.map(({ held, ...m }) => (held ? { ...m, held } : m));
}

/** Whether `update` is a reply Riot keeps when the turn is stopped: text, or a tool call (thinking alone is withdrawn). */
function replies(update: SessionUpdate): boolean {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return update.content.type === "text";
    case "tool_call":
    case "tool_call_update":
      return true;
    default:
      return false;
  }
}

export class FakeRiot {
  readonly sessions = new Map<string, FakeSession>();
  /** Things real Riot would have refused or never sent. */
  readonly violations: string[] = [];
  /** Every request and notification method received, in order. */
  readonly received: string[] = [];
  /** The server end of each connection. */
  readonly sockets: FakeSocket[] = [];
  /** The params of each `_riot/rewind` received, in order. */
  readonly rewinds: Record<string, unknown>[] = [];
  /** The `_meta` of each `session/new` received, in order (`null`: none). */
  readonly newSessionMeta: unknown[] = [];
  /** The worktrees made for sessions, by their top directory. */
  readonly worktrees = new Map<string, FakeWorktree>();

  /** Removes worktree `name` (`riot worktree remove`): its sessions are listed with `present: false`. */
  removeWorktree(name: string): void {
    for (const w of this.worktrees.values()) if (w.name === name) w.present = false;
  }
  /** What `session/set_config_option` set, in order. */
  readonly configSet: { sessionId: string; configId: string; value: string }[] = [];
  /** What `_riot/terminal_resize` asked for (after Riot's bounds), in order. */
  readonly resized: { sessionId: string; name: string; rows: number; cols: number }[] = [];
  /** What `_riot/terminal_write` typed, in order. */
  readonly typed: { sessionId: string; name: string; input: string }[] = [];
  /** Each connection that asked for `_riot/terminal` updates. */
  private readonly terminalWatchers: ((params: { sessionId: string; update: TerminalUpdate }) => Promise<void>)[] = [];
  /** Per session, its terminals and whether each still runs (closed ones are gone). */
  private readonly terminals = new Map<string, Map<string, boolean>>();
  /** What `_riot/config_set` saved in `credentials.json`: provider → key. */
  readonly credentials: Record<string, string> = {};
  /** The settings as `_riot/config_set` left them. */
  readonly config: FakeConfig;
  private nextId = 1;
  private turns: TurnScript[] = [];
  /**
   * Each session's message queue, as Riot keeps it (crates/riot-acp/src/queue.rs):
   * `_riot/queue` changes it, `deliverQueued` is the loop taking it into a turn.
   */
  readonly queues = new Map<string, QueuedMessage[]>();
  /** Each session's background agents, as a test scripts them with `backgroundTask`. */
  readonly backgrounds = new Map<string, BackgroundTask[]>();
  /** Each connection that asked for `_riot/queue_update` and `_riot/background_update`. */
  private readonly queueWatchers: ((params: WireParams<typeof QUEUE_UPDATE>) => Promise<void>)[] = [];
  private readonly backgroundWatchers: ((params: WireParams<typeof BACKGROUND_UPDATE>) => Promise<void>)[] = [];
  private nextQueued = 1;

  constructor(private readonly options: FakeRiotOptions) {
    const start = options.config ?? READY_CONFIG;
    this.config = { ...start, env: { ...start.env } };
  }

  /** The configuration as `_riot/config` reports it. */
  effectiveConfig(): ModelConfig {
    const { provider, baseUrl, model, env } = this.config;
    let key: KeyStatus = "missing";
    let keySource: string | null = null;
    if (provider !== null) {
      const variable = keyVariable(provider);
      if ((env[variable] ?? "").trim() !== "") {
        key = "present";
        keySource = `$${variable}`;
      } else if (this.credentials[provider] !== undefined) {
        key = "present";
        keySource = `credentials.json (${provider})`;
      } else if (baseUrl !== null && isLoopback(baseUrl)) {
        key = "not-needed";
      }
    }
    let problem: string | null = null;
    if (provider === null) problem = "No model endpoint is configured: choose a provider and a model.";
    else if (model === null) problem = "No model is configured: name the model to use.";
    else if (key === "missing") problem = `No API key for ${provider}: set $${keyVariable(provider)} or save a key here.`;
    return {
      provider: provider as ModelConfig["provider"],
      baseUrl,
      model,
      key,
      keySource,
      ready: problem === null,
      problem,
    };
  }

  /** `_riot/config`'s answer: the configuration and, when set, the `notifications` setting. */
  private configAnswer(): WireResult<typeof CONFIG> {
    const notifications = this.options.notifications;
    return notifications === undefined ? { ...this.effectiveConfig() } : { ...this.effectiveConfig(), notifications };
  }

  /** Queues the scripts of the next prompts, in order. */
  script(...turns: TurnScript[]): this {
    this.turns.push(...turns);
    return this;
  }

  /** A session Riot would list and load. */
  addSession(id: string, cwd: string, history: SessionUpdate[], extra: { title?: string; model?: string } = {}): void {
    this.sessions.set(id, {
      cwd,
      title: extra.title ?? null,
      model: extra.model ?? this.config.model ?? "mock-model",
      mode: "default",
      thinking: "off",
      history,
      running: null,
      costUsd: 0,
      changed: new Map(),
      edited: new Set(),
      undo: null,
    });
  }

  /**
   * What the agent changed in session `id`: `turns[n]` lists the files the
   * turn of user message `n` changed; `edited` are files the person
   * changed after the agent (a rewind's conflicts).
   */
  setChanges(id: string, turns: Record<number, string[]>, edited: string[] = []): void {
    const found = this.sessions.get(id);
    if (found === undefined) throw new Error(`no fake session ${id}`);
    found.changed = new Map(Object.entries(turns).map(([n, files]) => [Number(n), files]));
    found.edited = new Set(edited);
  }

  /** A session's config options as Riot builds them (crates/riot-acp/src/session_config.rs). */
  private configOptions(found: FakeSession): acp.SessionConfigOption[] {
    const models = [
      { value: found.model, name: found.model },
      ...(this.options.listedModels ?? [])
        .filter((m) => m.id !== found.model)
        .map((m) => ({ value: m.id, name: m.name })),
    ];
    const options: acp.SessionConfigOption[] = [
      { type: "select", id: "model", name: "Model", category: "model", currentValue: found.model, options: models },
    ];
    if ((this.options.thinkingModels ?? []).includes(found.model)) {
      options.push({
        type: "select",
        id: "thinking",
        name: "Thinking",
        category: "thought_level",
        currentValue: found.thinking,
        options: ["off", "low", "medium", "high"].map((l) => ({ value: l, name: l[0]!.toUpperCase() + l.slice(1) })),
      });
    }
    options.push({
      type: "select",
      id: "mode",
      name: "Permission mode",
      category: "mode",
      currentValue: found.mode,
      options: OFFERED_MODES.map((m) => ({ value: m, name: m })),
    });
    return options;
  }

  /**
   * Something happens in a terminal of session `sessionId`: Riot's
   * `_riot/terminal` notification to every client that asked for it.
   */
  async terminal(sessionId: string, update: TerminalUpdate): Promise<void> {
    if (!this.sessions.has(sessionId)) throw new Error(`no fake session ${sessionId}`);
    const open = this.terminals.get(sessionId) ?? new Map<string, boolean>();
    this.terminals.set(sessionId, open);
    if (update.type === "opened") open.set(update.name, true);
    else if (update.type === "exited") open.set(update.name, false);
    else if (update.type === "closed") open.delete(update.name);
    for (const watch of this.terminalWatchers) await watch({ sessionId, update });
  }

  /** What waits in session `sessionId`'s queue. */
  queued(sessionId: string): QueuedMessage[] {
    return [...(this.queues.get(sessionId) ?? [])];
  }

  private async queueChanged(sessionId: string, delivered: QueuedMessage[] = []): Promise<void> {
    const messages = onWire(this.queued(sessionId));
    // What was delivered is held no more (Riot sends it unmarked).
    const taken = onWire(delivered.map((m) => ({ ...m, held: false })));
    for (const watch of this.queueWatchers) await watch({ sessionId, messages, delivered: taken });
  }

  /**
   * Puts a message in session `sessionId`'s queue, as Riot does with a
   * background agent's result (`origin: "riot"`); `held`: one of Riot's
   * put back after the person stopped the turn that carried it.
   */
  async enqueue(sessionId: string, text: string, origin: QueuedMessage["origin"], { held = false } = {}): Promise<string> {
    if (held && origin !== "riot") throw new Error("Riot holds only its own messages");
    const id = `msg_q${this.nextQueued++}`;
    this.queues.set(sessionId, [...this.queued(sessionId), { id, text, origin, held }]);
    await this.queueChanged(sessionId);
    return id;
  }

  /**
   * Riot's loop, after a batch of tool results in a running turn of
   * session `sessionId`: takes what waits into the conversation (the
   * person's messages are replayed by `session/load` from then on).
   */
  async deliverQueued(sessionId: string): Promise<QueuedMessage[]> {
    const delivered = this.queued(sessionId);
    if (delivered.length === 0) return [];
    this.queues.set(sessionId, []);
    const found = this.sessions.get(sessionId);
    for (const m of delivered) {
      if (m.origin === "person") found?.history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: m.text } });
    }
    await this.queueChanged(sessionId, delivered);
    return delivered;
  }

  /**
   * A background agent of session `sessionId` started or changed: Riot's `_riot/background_update`.
   * `stoppedByPerson`: stopped through `_riot/background_stop`, so its result waits held, as Riot's does.
   */
  async backgroundTask(sessionId: string, task: BackgroundTask, { stoppedByPerson = false } = {}): Promise<void> {
    const tasks = (this.backgrounds.get(sessionId) ?? []).filter((t) => t.id !== task.id);
    const at = (this.backgrounds.get(sessionId) ?? []).findIndex((t) => t.id === task.id);
    tasks.splice(at < 0 ? tasks.length : at, 0, task);
    this.backgrounds.set(sessionId, tasks);
    for (const watch of this.backgroundWatchers) await watch({ sessionId, task });
    if (task.state !== "running" && task.result !== null) {
      // Its result waits for the parent as Riot's message (crates/riot-kernel/src/background.rs).
      await this.enqueue(
        sessionId,
        `<background-task id="${task.id}" agent="${task.agent}" status="${task.state}">\n${task.result}\n</background-task>\nThe background task "${task.description}" has ended; this is its result.`,
        "riot",
        { held: stoppedByPerson },
      );
    }
  }

  /** What the page's `new WebSocket(url)` would get. */
  connect = (url: string): SocketLike => {
    const parsed = new URL(url);
    if (parsed.pathname !== "/acp" || parsed.searchParams.get("token") !== this.options.token) {
      return refusedSocket();
    }
    const { client, server } = socketPair();
    this.sockets.push(server);
    // Riot reads one JSON-RPC message per text frame; anything else is a bug.
    server.addEventListener("message", (event) => {
      try {
        parseFrame((event as MessageEvent).data);
      } catch (e) {
        this.violations.push(`client sent a bad frame: ${(e as Error).message}`);
      }
    });
    this.serve(server);
    return client;
  };

  private serve(socket: FakeSocket): void {
    let wanted: string[] = [];
    const fail = (message: string) => new acp.RequestError(INVALID_PARAMS, message);
    const session = (id: string) => {
      const found = this.sessions.get(id);
      if (!found) throw fail(`unknown session \`${id}\``);
      return found;
    };
    const checkCwd = (cwd: string) => {
      if (!cwd.startsWith("/")) throw fail(`cwd ${cwd} is not an absolute path`);
      if (!this.options.projects.includes(cwd) && !this.worktrees.has(cwd)) {
        throw fail(`cwd ${cwd}: No such file or directory (os error 2)`);
      }
    };
    /** Riot's params are closed: a field it does not know is refused. */
    const only = (method: string, raw: unknown, known: string[]): Record<string, unknown> => {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw fail(`${method}: params must be an object`);
      const params = raw as Record<string, unknown>;
      const unknown = Object.keys(params).filter((k) => k !== "_meta" && !known.includes(k));
      if (unknown.length > 0) throw fail(`${method}: unknown field \`${unknown[0]}\``);
      return params;
    };
    const text = (method: string, params: Record<string, unknown>, name: string): string => {
      const value = params[name];
      if (typeof value !== "string") throw fail(`${method}: \`${name}\` must be a string`);
      return value;
    };
    const advertised = this.options.requests ?? FAKE_REQUESTS;
    const takesImages = this.options.images ?? true;
    const commands: SessionUpdate = {
      sessionUpdate: "available_commands_update",
      availableCommands: (this.options.commands ?? []).map((c) => ({
        name: c.name,
        description: c.description,
        input: c.hint === undefined ? null : { hint: c.hint },
      })),
    };
    /**
     * Runs the next scripted turn of session `sessionId` and answers as
     * Riot does when it ends: `session/prompt`'s turn (`prompt`, the
     * person's text and images) or a turn of Riot's (`_riot/deliver`,
     * `prompt` null), streamed and cancelled alike
     * (crates/riot-acp/src/agent.rs, `run_turn`; crates/riot-kernel/src/session.rs,
     * `run_message`). The caller has checked that no turn runs; the
     * session is taken at once (before anything is awaited) and released
     * however the turn ends. Riot's waiting messages go with the turn (the
     * person's stay queued); a turn stopped before any reply is withdrawn,
     * and Riot's messages that went with it wait again, held.
     */
    const runTurn = async (
      client: acp.AgentContext,
      sessionId: string,
      found: FakeSession,
      prompt: { text: string; images: FakeImage[] } | null,
    ): Promise<{ stopReason: StopReason }> => {
      const running = new AbortController();
      found.running = running;
      try {
        const waiting = this.queued(sessionId);
        const riots = waiting.filter((m) => m.origin === "riot");
        if (riots.length > 0) {
          this.queues.set(sessionId, waiting.filter((m) => m.origin === "person"));
          await this.queueChanged(sessionId, riots);
        }
        const source: FakeTurn["source"] = prompt === null ? "deliver" : "prompt";
        const text = prompt?.text ?? riots.map((m) => m.text).join("\n");
        const script = this.turns.shift();
        if (!script) {
          const what = source === "prompt" ? "a prompt" : `a turn of Riot's (${DELIVER})`;
          this.violations.push(`${what} arrived with no scripted turn: ${text}`);
          throw new acp.RequestError(-32603, `the fake has no scripted turn for this ${source === "prompt" ? "prompt" : "turn"}`);
        }
        const before = found.history.length;
        if (source === "prompt") {
          // Riot titles a session by its first prompt.
          found.title ??= text.split("\n")[0]?.slice(0, 80) ?? null;
          // A turn of Riot's gives the model Riot's message, which session/load does not replay.
          found.history.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text } });
        }
        // The session went on: the last rewind can no longer be undone.
        found.undo = null;
        /** Whether the model's reply began: text or a tool call (a question is asked about one). */
        let replied = false;
        let costSet = false;
        const turn: FakeTurn = {
          sessionId,
          text,
          images: prompt?.images ?? [],
          source,
          cancelled: running.signal,
          send: async (update) => {
            if (replies(update)) replied = true;
            found.history.push(update);
            await client.notify(acp.methods.client.session.update, { sessionId, update });
          },
          ask: async (toolCall, options) => {
            replied = true;
            const response: RequestPermissionResponse = await client.request(
              acp.methods.client.session.requestPermission,
              { sessionId, toolCall, options },
              { cancellationSignal: running.signal },
            );
            if (response.outcome.outcome === "cancelled") return "cancelled";
            const chosen = response.outcome.optionId;
            if (!options.some((o) => o.optionId === chosen)) {
              this.violations.push(`the client answered with an option it was not offered: ${chosen}`);
              return "rejected";
            }
            return { optionId: chosen };
          },
          compaction: async (extra) => {
            if (wanted.includes(COMPACTION)) await client.notify(COMPACTION, { sessionId, ...extra });
          },
          setCost: (usd) => {
            costSet = true;
            found.costUsd = usd;
          },
        };
        const stopReason = await script(turn);
        if (stopReason === "cancelled" && !replied) {
          // Withdrawn (crates/riot-core/src/agent.rs, `abort`): session/load
          // no longer replays the prompt, and Riot's messages wait again,
          // held for the person (crates/riot-kernel/src/session.rs,
          // `requeue_if_withdrawn`).
          found.history.length = before;
          for (const m of riots) await this.enqueue(sessionId, m.text, "riot", { held: true });
        }
        if (!costSet && found.costUsd !== null) found.costUsd += 0.0005;
        if (wanted.includes(USAGE)) {
          await client.notify(USAGE, {
            sessionId,
            model: found.model,
            requests: 1,
            usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 2 },
            sideUsage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
            costUsd: found.costUsd,
          });
        }
        return { stopReason };
      } finally {
        found.running = null;
      }
    };
    const app = acp
      .agent({ name: "fake-riot" })
      .onRequest(acp.methods.agent.initialize, ({ params, client }) => {
        this.received.push("initialize");
        const asked = (params.clientCapabilities?._meta as { riot?: { notifications?: unknown } } | undefined)
          ?.riot?.notifications;
        wanted = Array.isArray(asked)
          ? asked.filter(
              (n): n is string =>
                n === USAGE || n === COMPACTION || n === TERMINAL || n === QUEUE_UPDATE || n === BACKGROUND_UPDATE,
            )
          : [];
        if (wanted.includes(TERMINAL)) this.terminalWatchers.push((update) => client.notify(TERMINAL, update));
        if (wanted.includes(QUEUE_UPDATE)) this.queueWatchers.push((params) => client.notify(QUEUE_UPDATE, params));
        if (wanted.includes(BACKGROUND_UPDATE)) {
          this.backgroundWatchers.push((params) => client.notify(BACKGROUND_UPDATE, params));
        }
        return {
          protocolVersion: acp.PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            sessionCapabilities: { list: {} },
            promptCapabilities: { image: takesImages },
            _meta: {
              riot: {
                requests: [...advertised],
                notifications: [USAGE, COMPACTION, TERMINAL, QUEUE_UPDATE, BACKGROUND_UPDATE],
              },
            },
          },
          agentInfo: { name: "riot", version: "0.0.0-fake" },
        };
      })
      .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
        this.received.push("session/new");
        this.newSessionMeta.push(params._meta ?? null);
        const asked = (params._meta as { riot?: { worktree?: unknown } } | null | undefined)?.riot?.worktree;
        const wantsWorktree = typeof asked === "string" || asked === true;
        let worktree: FakeWorktree | undefined;
        if (wantsWorktree) {
          // As Riot: the worktree is made (or a kept one reused) before the session opens.
          if (!params.cwd.startsWith("/")) throw fail(`cwd ${params.cwd} is not an absolute path`);
          if (!(this.options.gitProjects ?? []).includes(params.cwd)) {
            throw fail(
              `${params.cwd} is not in a git repository; worktrees need one (run \`git init\` and commit first, or drop --worktree)`,
            );
          }
          const name = typeof asked === "string" && asked !== "" ? asked : `wt-${this.nextId}`;
          const problem = worktreeNameProblem(name);
          if (problem !== null) throw fail(problem);
          const base = params.cwd.split("/").pop() ?? "project";
          const path = `/home/me/.riot/worktrees/${base}-0123abcd/${name}`;
          worktree = this.worktrees.get(path) ?? { name, branch: `riot/${name}`, path, project: params.cwd };
          this.worktrees.set(path, worktree);
        } else {
          checkCwd(params.cwd);
        }
        const config = this.effectiveConfig();
        if (!config.ready || config.model === null) throw fail(config.problem ?? "no model configured");
        const sessionId = `s${this.nextId++}`;
        this.sessions.set(sessionId, {
          cwd: worktree?.path ?? params.cwd,
          ...(worktree === undefined ? {} : { worktree }),
          title: null,
          model: config.model,
          mode: "default",
          thinking: "off",
          history: [],
          running: null,
          costUsd: 0,
          changed: new Map(),
          edited: new Set(),
          undo: null,
        });
        // After the response, as Riot does.
        setTimeout(() => void client.notify(acp.methods.client.session.update, { sessionId, update: commands }), 0);
        const riot =
          worktree === undefined
            ? { model: config.model, sandbox: FAKE_SANDBOX }
            : { model: config.model, sandbox: FAKE_SANDBOX, worktree: { ...worktree, cwd: worktree.path } };
        return {
          sessionId,
          modes: modeState("default"),
          configOptions: this.configOptions(this.sessions.get(sessionId)!),
          _meta: { riot },
        };
      })
      .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
        this.received.push("session/load");
        checkCwd(params.cwd);
        const found = session(params.sessionId);
        if (found.running) {
          throw fail(`session \`${params.sessionId}\` is running a prompt; load it when the turn ends`);
        }
        for (const update of found.history) {
          await client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update });
        }
        setTimeout(
          () =>
            void client.notify(acp.methods.client.session.update, {
              sessionId: params.sessionId,
              update: commands,
            }),
          0,
        );
        return {
          modes: modeState(found.mode),
          configOptions: this.configOptions(found),
          _meta: { riot: { model: found.model, sandbox: FAKE_SANDBOX } },
        };
      })
      .onRequest(acp.methods.agent.session.list, ({ params }) => {
        this.received.push("session/list");
        const sessions = [...this.sessions.entries()]
          .filter(([, s]) => params.cwd == null || s.cwd === params.cwd)
          .reverse()
          .map(([sessionId, s]) => ({
            sessionId,
            cwd: s.cwd,
            title: s.title,
            updatedAt: "2026-01-01T00:00:00Z",
            ...(s.worktree === undefined ? {} : { _meta: { riot: { worktree: s.worktree } } }),
          }));
        return { sessions };
      })
      .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
        this.received.push("session/set_mode");
        const found = session(params.sessionId);
        if (!(OFFERED_MODES as readonly string[]).includes(params.modeId)) {
          throw fail(`unknown mode \`${params.modeId}\`; use one of ${OFFERED_MODES.join(", ")}`);
        }
        found.mode = params.modeId;
        return {};
      })
      .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
        this.received.push("session/set_config_option");
        const found = session(params.sessionId);
        const value = "value" in params && typeof params.value === "string" ? params.value : null;
        if (value === null) throw fail(`\`${params.configId}\` takes one of its listed values, not a boolean`);
        // As Riot (crates/riot-acp/src/agent_editor.rs, set_config_option).
        if (params.configId === "thinking") {
          if (!(this.options.thinkingModels ?? []).includes(found.model)) {
            throw fail(`\`${found.model}\` cannot think; \`thinking\` is not offered for it`);
          }
          if (!["off", "low", "medium", "high"].includes(value)) {
            throw fail(`unknown thinking level \`${value}\`; use off, low, medium or high`);
          }
          found.thinking = value;
        } else if (params.configId === "mode") {
          found.mode = value;
        } else if (params.configId === "model") {
          found.model = value;
        } else {
          throw fail(`unknown config option \`${params.configId}\`; use \`model\`, \`thinking\` or \`mode\``);
        }
        this.configSet.push({ sessionId: params.sessionId, configId: params.configId, value });
        return { configOptions: this.configOptions(found) };
      })
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
        this.received.push("session/cancel");
        this.sessions.get(params.sessionId)?.running?.abort();
      })
      .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
        this.received.push("session/prompt");
        const found = session(params.sessionId);
        const parts: string[] = [];
        const images: FakeImage[] = [];
        for (const block of params.prompt) {
          if (block.type === "text") parts.push(block.text);
          else if (block.type === "resource_link") parts.push(`@${block.uri.replace(/^file:\/\//, "")}`);
          else if (block.type === "resource") throw fail("embedded resources are not supported; send a resource link");
          else if (block.type === "image" && takesImages) {
            // As Riot: the data is required (an image only by uri is refused).
            if (block.data === "") throw fail("an image block needs its base64 `data`; an image only by `uri` is not supported");
            images.push({ mimeType: block.mimeType, data: block.data });
          } else if (block.type === "audio") throw fail("audio is not supported in prompts");
          else throw fail("unsupported prompt content");
        }
        const text = parts.join("\n");
        if (text.trim() === "" && images.length === 0) throw fail("the prompt is empty");
        if (found.running) {
          throw fail("a prompt is already running in this session; cancel it or wait for its end");
        }
        // As Riot: what Riot queued while no turn ran goes with this prompt (held or not).
        return runTurn(client, params.sessionId, found, { text, images });
      });
    // Each answer is typed by the method's result in the generated
    // schema of Riot's methods, so the fake cannot drift from Riot's wire.
    const extension = <M extends keyof RiotMethods & string>(
      method: M,
      handle: (params: unknown, client: acp.AgentContext) => WireResult<M> | Promise<WireResult<M>>,
    ) => {
      if (!advertised.includes(method)) return;
      app.onRequest(
        method,
        (raw: unknown) => raw,
        ({ params, client }) => {
          this.received.push(method);
          return handle(params, client);
        },
      );
    };
    extension(CONFIG, (raw) => {
      const params = only(CONFIG, raw, ["cwd"]);
      if (params.cwd !== undefined) checkCwd(text(CONFIG, params, "cwd"));
      return this.configAnswer();
    });
    extension(CONFIG_SET, (raw) => {
      const params = only(CONFIG_SET, raw, ["provider", "model", "baseUrl", "apiKey"]);
      const provider = text(CONFIG_SET, params, "provider");
      const model = text(CONFIG_SET, params, "model").trim();
      const baseUrl = params.baseUrl ?? null;
      const apiKey = params.apiKey ?? null;
      if (!(PROVIDERS as readonly string[]).includes(provider)) {
        throw fail(`unknown provider \`${provider}\`: use anthropic, openai or openai-responses`);
      }
      if (model === "") throw fail("the model is empty: name the model to use");
      if (baseUrl !== null && (typeof baseUrl !== "string" || !/^https?:\/\/[^/\s]+/.test(baseUrl))) {
        throw fail(`base URL \`${String(baseUrl)}\` is not an http(s) URL: use one like https://api.example.com/v1`);
      }
      if (apiKey !== null && typeof apiKey !== "string") throw fail(`${CONFIG_SET}: \`apiKey\` must be a string`);
      this.config.provider = provider;
      this.config.model = model;
      this.config.baseUrl = baseUrl === null ? null : baseUrl.replace(/\/+$/, "");
      if (apiKey !== null && apiKey.trim() !== "") this.credentials[provider] = apiKey.trim();
      return this.configAnswer();
    });
    extension(FILES, (raw) => {
      const params = only(FILES, raw, ["cwd", "query", "limit"]);
      const cwd = text(FILES, params, "cwd");
      const query = text(FILES, params, "query");
      const limit = params.limit ?? 50;
      if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) {
        throw fail(`${FILES}: \`limit\` must be a positive integer`);
      }
      checkCwd(cwd);
      return { files: rankFiles(this.options.files?.[cwd] ?? [], query, limit) };
    });
    extension(SESSION_RENAME, (raw) => {
      const params = only(SESSION_RENAME, raw, ["sessionId", "title"]);
      const found = session(text(SESSION_RENAME, params, "sessionId"));
      found.title = text(SESSION_RENAME, params, "title");
      return {};
    });
    extension(SESSION_DELETE, (raw) => {
      const params = only(SESSION_DELETE, raw, ["sessionId"]);
      const id = text(SESSION_DELETE, params, "sessionId");
      if (session(id).running) {
        throw fail(`session \`${id}\` is running a prompt; stop it before deleting it`);
      }
      this.sessions.delete(id);
      return {};
    });
    extension(SET_MODEL, (raw) => {
      const params = only(SET_MODEL, raw, ["sessionId", "model"]);
      const found = session(text(SET_MODEL, params, "sessionId"));
      found.model = text(SET_MODEL, params, "model");
      return {};
    });
    extension(CHECKPOINTS, (raw) => {
      const params = only(CHECKPOINTS, raw, ["sessionId"]);
      const found = session(text(CHECKPOINTS, params, "sessionId"));
      if (found.running) {
        throw fail("a turn is running in this session; ask for its checkpoints after the turn");
      }
      const points = promptStarts(found.history).map((start, i) => {
        const files = found.changed.get(i + 1) ?? [];
        return {
          number: i + 1,
          text: promptText(found.history, start),
          at_ms: 1_767_225_600_000 + i * 60_000,
          in_history: true,
          files,
          calls: files.length,
          unfinished: 0,
        };
      });
      return { points };
    });
    extension(REWIND, (raw) => {
      const params = only(REWIND, raw, ["sessionId", "to", "filesOnly", "conversationOnly", "force", "undo"]);
      this.rewinds.push({ ...params });
      const found = session(text(REWIND, params, "sessionId"));
      for (const flag of ["filesOnly", "conversationOnly", "force", "undo"]) {
        if (params[flag] !== undefined && typeof params[flag] !== "boolean") throw fail(`${REWIND}: \`${flag}\` must be a boolean`);
      }
      const to = params.to ?? null;
      if (to !== null && (typeof to !== "number" || !Number.isSafeInteger(to) || to < 0)) {
        throw fail(`${REWIND}: \`to\` must be a whole number`);
      }
      if (found.running) {
        throw fail("a turn is running in this session; cancel it or wait for its end, then rewind");
      }
      const filesOnly = params.filesOnly === true;
      const conversationOnly = params.conversationOnly === true;
      const force = params.force === true;
      if (filesOnly && conversationOnly) throw fail("filesOnly and conversationOnly exclude each other");
      const undo = params.undo === true;
      if (undo && to === null) {
        const last = found.undo;
        if (last === null) {
          throw fail(
            "there is no rewind to undo: nothing was rewound, or the session went on after the last rewind",
          );
        }
        found.history = last.history;
        found.changed = last.changed;
        found.undo = null;
        const outcome = {
          to: last.to,
          files: last.files === null ? null : { restored: last.files, removed: [], conflicts: [], forced: [], notes: [] },
          conversation: last.conversation,
          prompt: "",
        };
        return { outcome, summary: describeRewind(outcome, true) };
      }
      if (undo || to === null) {
        throw fail("give either `to` (the user message to rewind to, from _riot/checkpoints) or `undo: true`");
      }
      const starts = promptStarts(found.history);
      const start = starts[to - 1];
      if (to < 1 || start === undefined) {
        throw fail(
          starts.length === 0
            ? "this session has no user message to rewind to yet"
            : `there is no user message ${to} in this session; choose 1 to ${starts.length} (\`riot sessions checkpoints ID\` lists them)`,
        );
      }
      const prompt = promptText(found.history, start);
      const before = { history: found.history, changed: found.changed };
      let files = null;
      if (!conversationOnly) {
        const touched = [
          ...new Set([...found.changed.entries()].filter(([n]) => n >= to).flatMap(([, f]) => f)),
        ];
        const conflicts = touched.filter((f) => found.edited.has(f));
        files = {
          restored: touched.filter((f) => !found.edited.has(f)),
          removed: [],
          conflicts,
          forced: force ? conflicts : [],
          notes: [],
        };
      }
      if (!filesOnly) {
        found.history = found.history.slice(0, start);
        found.changed = new Map([...found.changed.entries()].filter(([n]) => n < to));
      }
      found.undo = {
        ...before,
        to,
        files: files === null ? null : [...files.restored, ...files.forced],
        conversation: !filesOnly,
      };
      const outcome = { to, files, conversation: !filesOnly, prompt };
      return { outcome, summary: describeRewind(outcome, false) };
    });
    extension(TERMINAL_WRITE, (raw) => {
      const params = only(TERMINAL_WRITE, raw, ["sessionId", "name", "input"]);
      const sessionId = text(TERMINAL_WRITE, params, "sessionId");
      const name = text(TERMINAL_WRITE, params, "name");
      const input = text(TERMINAL_WRITE, params, "input");
      session(sessionId);
      const open = this.terminals.get(sessionId) ?? new Map<string, boolean>();
      // Riot's refusal: invalid params, the reason in the error's data (crates/riot-acp/src/terminals.rs).
      const refuse = (error: string) => new acp.RequestError(INVALID_PARAMS, "Invalid params", { error });
      if (!open.has(name)) {
        const names = [...open.keys()];
        throw refuse(`no terminal named \`${name}\`; open terminals: ${names.length === 0 ? "none" : names.join(", ")}`);
      }
      if (open.get(name) === false) throw refuse("the terminal's program has ended; its input is closed (read it, then close it)");
      this.typed.push({ sessionId, name, input });
      return {};
    });
    extension(TERMINAL_RESIZE, async (raw) => {
      const params = only(TERMINAL_RESIZE, raw, ["sessionId", "name", "rows", "cols"]);
      const sessionId = text(TERMINAL_RESIZE, params, "sessionId");
      const name = text(TERMINAL_RESIZE, params, "name");
      session(sessionId);
      const rows = params.rows;
      const cols = params.cols;
      if (typeof rows !== "number" || typeof cols !== "number") throw fail("`rows` and `cols` must be numbers");
      if (!(this.terminals.get(sessionId)?.has(name) ?? false)) {
        throw new acp.RequestError(INVALID_PARAMS, "Invalid params", { error: `no terminal named \`${name}\`` });
      }
      // Riot's bounds (crates/riot-protocol/src/terminal.rs, TerminalSize::clamped).
      const size = { rows: Math.min(200, Math.max(5, rows)), cols: Math.min(500, Math.max(20, cols)) };
      this.resized.push({ sessionId, name, ...size });
      await this.terminal(sessionId, { type: "resized", name, size });
      return size;
    });
    extension(QUEUE, async (raw) => {
      const params = only(QUEUE, raw, ["sessionId", "action", "id", "text"]);
      const sessionId = text(QUEUE, params, "sessionId");
      session(sessionId);
      const action = params.action ?? "list";
      const waiting = this.queued(sessionId);
      const message = () => {
        const value = params.text;
        if (typeof value !== "string" || value.trim() === "") throw fail(`${String(action)} needs the message's \`text\`, not empty`);
        return value;
      };
      // Riot's words (crates/riot-acp/src/queue.rs).
      const changeable = () => {
        if (typeof params.id !== "string") {
          throw fail(`${String(action)} needs the \`id\` of a queued message (from \`_riot/queue\`'s list)`);
        }
        const id = params.id;
        const found = waiting.find((m) => m.id === id);
        if (found === undefined) {
          throw fail(
            waiting.length === 0
              ? `there is no queued message \`${id}\` in this session: it was delivered or removed, and nothing is queued now`
              : `there is no queued message \`${id}\` in this session: it was delivered or removed; the queued ones are ${waiting.map((m) => `\`${m.id}\``).join(", ")}`,
          );
        }
        if (found.origin !== "person") {
          throw fail(`queued message \`${id}\` is a background task's result Riot queued for the agent; it cannot be edited or removed`);
        }
        return id;
      };
      let id: string | undefined;
      let taken: QueuedMessage[] | undefined;
      if (action === "push") {
        id = await this.enqueue(sessionId, message(), "person");
      } else if (action === "edit") {
        const which = changeable();
        const edited = message();
        this.queues.set(sessionId, waiting.map((m) => (m.id === which ? { ...m, text: edited } : m)));
        await this.queueChanged(sessionId);
      } else if (action === "remove") {
        const which = changeable();
        this.queues.set(sessionId, waiting.filter((m) => m.id !== which));
        await this.queueChanged(sessionId);
      } else if (action === "take") {
        // As Riot: only the person's messages; Riot's own go with the next prompt.
        taken = waiting.filter((m) => m.origin === "person");
        this.queues.set(sessionId, waiting.filter((m) => m.origin !== "person"));
        if (taken.length > 0) await this.queueChanged(sessionId);
      } else if (action !== "list") {
        throw fail(`${QUEUE}: unknown variant \`${String(action)}\`, expected one of \`list\`, \`push\`, \`edit\`, \`remove\`, \`take\``);
      }
      return {
        messages: onWire(this.queued(sessionId)),
        ...(id === undefined ? {} : { id }),
        ...(taken === undefined ? {} : { taken: onWire(taken) }),
      };
    });
    extension(DELIVER, async (raw, client) => {
      const params = only(DELIVER, raw, ["sessionId"]);
      const sessionId = text(DELIVER, params, "sessionId");
      const found = session(sessionId);
      // As Riot (crates/riot-acp/src/agent.rs, `deliver`): nothing of Riot's
      // waits, or a turn runs and takes it: no turn, and nothing changes.
      // Held messages are delivered too: the client asked.
      if (!this.queued(sessionId).some((m) => m.origin === "riot") || found.running !== null) return { stopReason: null };
      return runTurn(client, sessionId, found, null);
    });
    extension(BACKGROUND, (raw) => {
      const params = only(BACKGROUND, raw, ["sessionId"]);
      const sessionId = text(BACKGROUND, params, "sessionId");
      session(sessionId);
      return { tasks: this.backgrounds.get(sessionId) ?? [] };
    });
    extension(BACKGROUND_STOP, (raw) => {
      const params = only(BACKGROUND_STOP, raw, ["sessionId", "id"]);
      const sessionId = text(BACKGROUND_STOP, params, "sessionId");
      const id = text(BACKGROUND_STOP, params, "id");
      session(sessionId);
      const tasks = this.backgrounds.get(sessionId) ?? [];
      const found = tasks.find((t) => t.id === id);
      // Riot's words (crates/riot-acp/src/background.rs).
      if (found === undefined) {
        throw fail(
          tasks.length === 0
            ? `there is no background task \`${id}\`: none was started in this session`
            : `there is no background task \`${id}\` in this session; its tasks are ${tasks.map((t) => t.id).join(", ")}`,
        );
      }
      if (found.state !== "running") {
        throw fail(`background task \`${id}\` has already ended (${found.state}); there is nothing to stop`);
      }
      // It winds down after the answer, as Riot's does.
      setTimeout(
        () =>
          void this.backgroundTask(
            sessionId,
            {
              ...found,
              state: "stopped",
              result: "The background task was stopped before it finished.",
            },
            { stoppedByPerson: true },
          ),
        0,
      );
      return { task: found };
    });
    app.connect(socketStream(socket));
  }
}
