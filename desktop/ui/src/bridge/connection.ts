// The one connection to Riot: ACP v1 through the official SDK's client,
// over the socket adapter. Everything the UI asks of Riot goes through a
// method here; everything Riot tells the UI arrives at a `BridgeEvents`
// handler.

import * as acp from "@agentclientprotocol/sdk";
import type {
  InitializeResponse,
  ListSessionsResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionInfo,
  SessionModeState,
  SessionNotification,
  StopReason,
  Stream,
} from "@agentclientprotocol/sdk";

import type { TerminalSize } from "../generated/terminal_update";
import type { Endpoint } from "./endpoint";
import {
  CHECKPOINTS,
  COMPACTION,
  CONFIG,
  CONFIG_SET,
  FILES,
  SESSION_DELETE,
  SESSION_RENAME,
  REWIND,
  SET_MODEL,
  TERMINAL,
  TERMINAL_RESIZE,
  TERMINAL_WRITE,
  USAGE,
  clientCapabilitiesMeta,
  parseCheckpoints,
  parseRewind,
  parseCompaction,
  parseFiles,
  parseModelConfig,
  parseTerminal,
  parseTerminalResize,
  parseUsage,
  riotCapabilities,
  sessionModel,
  sessionOptions,
  sessionSandbox,
  type CompactionNotice,
  type ModelConfig,
  type ModelConfigInput,
  type RewindOptions,
  type RewindPoint,
  type RewindResult,
  type RiotCapabilities,
  type SessionOptions,
  type TerminalNotice,
  type TurnUsage,
} from "./riot-ext";
import {
  BACKGROUND,
  BACKGROUND_STOP,
  BACKGROUND_UPDATE,
  DELIVER,
  QUEUE,
  QUEUE_UPDATE,
  parseBackgroundNotice,
  parseBackgroundStop,
  parseBackgroundTasks,
  parseDeliver,
  parseQueue,
  parseQueueNotice,
  type BackgroundNotice,
  type BackgroundTask,
  type QueueNotice,
  type QueueState,
} from "./parallel";
import { socketStream, type SocketLike } from "./socket";
import { worktreeOf, worktreeRequestMeta, type SessionWorktree } from "./worktree";

/** What Riot tells the UI, one handler per kind. */
export interface BridgeEvents {
  /** A `session/update` notification, in arrival order. */
  update(notification: SessionNotification): void;
  /**
   * A permission question. Resolve with one of the offered option ids, or
   * `null` for no answer (the call is not run). `withdrawn` aborts when
   * Riot no longer waits for the answer.
   */
  permission(request: RequestPermissionRequest, withdrawn: AbortSignal): Promise<string | null>;
  /** A prompt turn's token figures (`_riot/usage`). */
  usage(usage: TurnUsage): void;
  /** Compaction started or finished (`_riot/compaction`). */
  compaction(notice: CompactionNotice): void;
  /** A terminal of a session opened, showed a new screen, exited or closed (`_riot/terminal`). */
  terminal?(notice: TerminalNotice): void;
  /** A session's queue changed, or Riot delivered queued messages into its turn (`_riot/queue_update`). */
  queue?(notice: QueueNotice): void;
  /** A session's background agent started, made a tool call or ended (`_riot/background_update`). */
  background?(notice: BackgroundNotice): void;
  /** The connection ended; `error` says why when it was not closed on purpose. */
  closed(error: Error | null): void;
}

/** A session opened by `session/new` or `session/load`. */
export interface OpenedSession {
  sessionId: string;
  cwd: string;
  modes: SessionModeState | null;
  /** The model it uses (`_meta.riot.model` of the response), when Riot says. */
  model: string | null;
  /** The git worktree it works in (`_meta.riot.worktree` of `session/new`'s answer). */
  worktree: SessionWorktree | null;
  /** Its OS sandbox (`_meta.riot.sandbox`), when Riot says. */
  sandbox: string | null;
  /** Its model choices and thinking level (`configOptions`), when Riot says. */
  options: SessionOptions | null;
}

/** How `session/new` opens the session. */
export interface NewSessionOptions {
  /** In a new git worktree of the project: its name, or "" for a name Riot picks. */
  worktree?: string;
}

/** An image sent with a prompt as an ACP `image` content block. */
export interface PromptImage {
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  mimeType: string;
  /** The file's bytes, base64 (standard alphabet, padded). */
  data: string;
}

/** A request Riot refused or could not answer, in words for people. */
export class RiotError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    /** The JSON-RPC error's `data`, when Riot sent one. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RiotError";
  }
}

function riotError(e: unknown): RiotError {
  if (e instanceof RiotError) return e;
  if (e instanceof acp.RequestError) return new RiotError(e.message, e.code, e.data);
  if (e instanceof Error) return new RiotError(e.message, null);
  return new RiotError(String(e), null);
}

/** The `data.error` sentence Riot puts in an invalid-params error, when there is one. */
function detail(e: RiotError): string | null {
  const data = e.data as { error?: unknown } | undefined;
  return typeof data?.error === "string" && data.error !== "" ? data.error : null;
}

/** Runs `request`, turning every failure into a `RiotError`. */
async function asked<T>(request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (e) {
    throw riotError(e);
  }
}

const CLIENT_INFO = { name: "riot-ui", title: "Riot", version: "0.1.0" };

export class RiotConnection {
  private constructor(
    private readonly connection: acp.ClientConnection,
    /** The agent's `initialize` answer. */
    readonly agent: InitializeResponse,
    /** Riot's advertised extensions. */
    readonly riot: RiotCapabilities,
    /** Shared with the close handler: a close we asked for is no error. */
    private readonly lifecycle: { closing: boolean },
  ) {}

  /** Connects over `stream` and initializes; rejects when Riot does not answer as an ACP v1 agent. */
  static async open(stream: Stream, events: BridgeEvents): Promise<RiotConnection> {
    const lifecycle = { closing: false };
    const app = acp
      .client({ name: CLIENT_INFO.name })
      .onRequest(
        acp.methods.client.session.requestPermission,
        async ({ params, signal }): Promise<RequestPermissionResponse> => {
          const chosen = await events.permission(params, signal);
          if (chosen === null || signal.aborted) {
            return { outcome: { outcome: "cancelled" } };
          }
          // Only an offered option is an answer (Riot reads any other id as a rejection).
          if (!params.options.some((o) => o.optionId === chosen)) {
            throw new RiotError(`"${chosen}" is not one of the offered options`, null);
          }
          return { outcome: { outcome: "selected", optionId: chosen } };
        },
      )
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        events.update(params);
      })
      .onNotification(USAGE, parseUsage, ({ params }) => {
        events.usage(params);
      })
      .onNotification(COMPACTION, parseCompaction, ({ params }) => {
        events.compaction(params);
      })
      .onNotification(TERMINAL, parseTerminal, ({ params }) => {
        events.terminal?.(params);
      })
      .onNotification(QUEUE_UPDATE, parseQueueNotice, ({ params }) => {
        events.queue?.(params);
      })
      .onNotification(BACKGROUND_UPDATE, parseBackgroundNotice, ({ params }) => {
        events.background?.(params);
      });
    const connection = app.connect(stream);
    connection.closed.then(
      () =>
        events.closed(lifecycle.closing ? null : new RiotError("Riot closed the connection", null)),
      (e: unknown) => events.closed(lifecycle.closing ? null : riotError(e)),
    );
    let init: InitializeResponse;
    try {
      init = await connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { _meta: clientCapabilitiesMeta() },
        clientInfo: CLIENT_INFO,
      });
    } catch (e) {
      lifecycle.closing = true;
      connection.close();
      if (e instanceof acp.RequestError) throw riotError(e);
      // A refused handshake (wrong token, foreign Origin) looks like a dropped socket to a page.
      throw new RiotError(
        `Cannot connect to Riot (${riotError(e).message}). Is \`riot serve\` running? ` +
          "Open the address it printed: it carries the token.",
        null,
      );
    }
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      lifecycle.closing = true;
      connection.close();
      throw new RiotError(
        `Riot speaks ACP version ${init.protocolVersion}; this UI speaks ${acp.PROTOCOL_VERSION}`,
        null,
      );
    }
    return new RiotConnection(
      connection,
      init,
      riotCapabilities(init.agentCapabilities?._meta),
      lifecycle,
    );
  }

  /** Every session Riot has (newest first), or those of `cwd`. */
  async listSessions(cwd?: string): Promise<SessionInfo[]> {
    const sessions: SessionInfo[] = [];
    let cursor: string | null = null;
    // Pages until Riot says there are no more.
    for (let page = 0; page < 100; page++) {
      const response: ListSessionsResponse = await asked(
        this.connection.agent.request(acp.methods.agent.session.list, {
          ...(cwd === undefined ? {} : { cwd }),
          ...(cursor === null ? {} : { cursor }),
        }),
      );
      sessions.push(...response.sessions);
      cursor = response.nextCursor ?? null;
      if (cursor === null) break;
    }
    return sessions;
  }

  /**
   * `session/new` in the project `cwd` (an absolute path); with
   * `options.worktree`, in a new git worktree of it, and the session's
   * `cwd` is then where it works there.
   */
  async newSession(cwd: string, options: NewSessionOptions = {}): Promise<OpenedSession> {
    const meta = options.worktree === undefined ? {} : { _meta: worktreeRequestMeta(options.worktree) };
    const response = await asked(
      this.connection.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [], ...meta }),
    );
    const worktree = worktreeOf(response._meta);
    if (options.worktree !== undefined && worktree === null) {
      throw new RiotError("This Riot did not open the session in a worktree; update riot to use worktrees.", null);
    }
    return {
      sessionId: response.sessionId,
      cwd: worktree?.cwd ?? worktree?.path ?? cwd,
      modes: response.modes ?? null,
      model: sessionModel(response._meta),
      worktree,
      sandbox: sessionSandbox(response._meta),
      options: sessionOptions(response.configOptions),
    };
  }

  /**
   * `session/load`: Riot replays the conversation as `session/update`
   * notifications before this resolves.
   */
  async loadSession(sessionId: string, cwd: string): Promise<OpenedSession> {
    const response = await asked(
      this.connection.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd,
        mcpServers: [],
      }),
    );
    return {
      sessionId,
      cwd,
      modes: response?.modes ?? null,
      model: sessionModel(response?._meta),
      worktree: null,
      sandbox: sessionSandbox(response?._meta),
      options: sessionOptions(response?.configOptions),
    };
  }

  /** Whether Riot takes `image` blocks in prompts (`promptCapabilities.image`). */
  get takesImages(): boolean {
    return this.agent.agentCapabilities?.promptCapabilities?.image === true;
  }

  /**
   * Sends a prompt: the text, then each image as an ACP `image` block;
   * resolves with the stop reason when the turn ends. Images are refused
   * here when Riot did not say it takes them.
   */
  async prompt(sessionId: string, text: string, images: readonly PromptImage[] = []): Promise<StopReason> {
    if (images.length > 0 && !this.takesImages) {
      throw new RiotError("This Riot does not take images in prompts; update riot to send them.", null);
    }
    const prompt: acp.ContentBlock[] = text === "" && images.length > 0 ? [] : [{ type: "text", text }];
    for (const image of images) prompt.push({ type: "image", mimeType: image.mimeType, data: image.data });
    const response = await asked(this.connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt }));
    return response.stopReason;
  }

  /** Asks Riot to stop the running turn; the prompt then ends with `cancelled`. */
  async cancel(sessionId: string): Promise<void> {
    await asked(this.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId }));
  }

  /** `session/set_mode`: one of the ids in the session's `modes`. */
  async setMode(sessionId: string, modeId: string): Promise<void> {
    await asked(this.connection.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId }));
  }

  /**
   * `session/set_config_option`: sets option `configId` (`model`,
   * `thinking`, `mode`) to `value`; the options as they now stand.
   */
  async setConfigOption(sessionId: string, configId: string, value: string): Promise<SessionOptions | null> {
    const response = await asked(
      this.connection.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value }),
    );
    return sessionOptions(response?.configOptions);
  }

  /** Whether Riot listed the `_riot/...` request `method` in its capabilities. */
  supports(method: string): boolean {
    return this.riot.requests.includes(method);
  }

  /** Sends a `_riot/...` request Riot advertised; refuses one it did not. */
  private async extension(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.supports(method)) {
      throw new RiotError(`This Riot does not offer ${method}; update riot to use it.`, null);
    }
    return asked(this.connection.agent.request<unknown, Record<string, unknown>>(method, params));
  }

  /** `_riot/config`: the model configuration in effect (for `cwd`'s project, when given). */
  async modelConfig(cwd?: string): Promise<ModelConfig> {
    const raw = await this.extension(CONFIG, cwd === undefined ? {} : { cwd });
    return parseModelConfig(CONFIG, raw);
  }

  /**
   * `_riot/config_set`: saves the provider, model and base URL in the
   * user's settings and the key (when given) in Riot's credentials file;
   * resolves with the configuration in effect afterwards.
   */
  async setModelConfig(input: ModelConfigInput): Promise<ModelConfig> {
    const raw = await this.extension(CONFIG_SET, {
      provider: input.provider,
      model: input.model,
      baseUrl: input.baseUrl,
      ...(input.apiKey === undefined ? {} : { apiKey: input.apiKey }),
    });
    return parseModelConfig(CONFIG_SET, raw);
  }

  /** `_riot/files`: project-relative paths under `cwd` matching `query`, best first. */
  async files(cwd: string, query: string, limit?: number): Promise<string[]> {
    const raw = await this.extension(FILES, { cwd, query, ...(limit === undefined ? {} : { limit }) });
    return parseFiles(raw);
  }

  /** `_riot/session_rename`: `session/list` reports `title` from now on. */
  async renameSession(sessionId: string, title: string): Promise<void> {
    await this.extension(SESSION_RENAME, { sessionId, title });
  }

  /** `_riot/session_delete`: refused while a turn runs in the session. */
  async deleteSession(sessionId: string): Promise<void> {
    await this.extension(SESSION_DELETE, { sessionId });
  }

  /** `_riot/set_model`: the session's model from its next model request. */
  async setModel(sessionId: string, model: string): Promise<void> {
    await this.extension(SET_MODEL, { sessionId, model });
  }

  /** `_riot/checkpoints`: the session's user messages, numbered, each with the files its turn changed. Refused while a turn runs. */
  async checkpoints(sessionId: string): Promise<RewindPoint[]> {
    return parseCheckpoints(await this.extension(CHECKPOINTS, { sessionId }));
  }

  /**
   * `_riot/rewind`: back to just before user message `to` (files and
   * conversation unless `scope` says one). Refused while a turn runs; the
   * client reloads the session to show the shortened conversation.
   */
  async rewind(sessionId: string, to: number, options: RewindOptions = {}): Promise<RewindResult> {
    const scope = options.scope ?? "both";
    const raw = await this.extension(REWIND, {
      sessionId,
      to,
      ...(scope === "files" ? { filesOnly: true } : {}),
      ...(scope === "conversation" ? { conversationOnly: true } : {}),
      ...(options.force === true ? { force: true } : {}),
    });
    return parseRewind(raw);
  }

  /** `_riot/rewind` with `undo`: takes the last rewind back, as long as the session did nothing since. */
  async undoRewind(sessionId: string, force = false): Promise<RewindResult> {
    return parseRewind(await this.extension(REWIND, { sessionId, undo: true, ...(force ? { force: true } : {}) }));
  }

  /**
   * `_riot/terminal_write`: types `input` into session `sessionId`'s
   * terminal `name` as the person (the bytes a terminal sends: `"\r"` for
   * Enter, `"\u0003"` for Ctrl+C); the agent's next read says so.
   */
  async writeTerminal(sessionId: string, name: string, input: string): Promise<void> {
    try {
      await this.extension(TERMINAL_WRITE, { sessionId, name, input });
    } catch (e) {
      // Riot says why in the error's data (`{"error": "no terminal named …"}`).
      const why = e instanceof RiotError ? detail(e) : null;
      throw why === null ? e : new RiotError(why, (e as RiotError).code);
    }
  }

  /**
   * `_riot/terminal_resize`: gives session `sessionId`'s terminal `name`
   * `rows` × `cols` (Riot keeps it within 5×20 … 200×500); the size set.
   */
  async resizeTerminal(sessionId: string, name: string, rows: number, cols: number): Promise<TerminalSize> {
    return parseTerminalResize(await this.extension(TERMINAL_RESIZE, { sessionId, name, rows, cols }));
  }

  /**
   * `_riot/queue`: session `sessionId`'s queue, kept by Riot (it outlives
   * the page). `push` a message written while a turn runs (Riot's loop
   * delivers it after the running batch's tool results), `edit` or
   * `remove` a waiting one, or `take` everything waiting to send it as the
   * next prompt. Resolves with what waits afterwards; throws Riot's
   * refusal (an id no longer waiting, a result Riot queued).
   */
  async queue(
    sessionId: string,
    action: { action: "list" } | { action: "push"; text: string } | { action: "edit"; id: string; text: string } | { action: "remove"; id: string } | { action: "take" },
  ): Promise<QueueState> {
    return parseQueue(await this.extension(QUEUE, { sessionId, ...action }));
  }

  /** `_riot/background`: session `sessionId`'s background agents, oldest first. */
  async backgroundTasks(sessionId: string): Promise<BackgroundTask[]> {
    return parseBackgroundTasks(await this.extension(BACKGROUND, { sessionId }));
  }

  /**
   * `_riot/background_stop`: stops a running background agent; resolves
   * with it as it stands (still `running` until it wound down, which
   * `_riot/background_update` tells). Throws Riot's refusal for an
   * unknown or ended one.
   */
  async stopBackground(sessionId: string, id: string): Promise<BackgroundTask> {
    return parseBackgroundStop(await this.extension(BACKGROUND_STOP, { sessionId, id }));
  }

  /**
   * `_riot/deliver`: when a background agent's result waits in session
   * `sessionId`'s queue and no turn runs, Riot starts a turn of its own
   * that gives it to the model. The turn streams as `session/update`s and
   * stops on `cancel` as a prompt's does; resolves with its stop reason,
   * or `null` when no turn ran (nothing of Riot's waited, or a turn
   * already runs and takes it). Throws Riot's refusal as `prompt` does.
   */
  async deliver(sessionId: string): Promise<StopReason | null> {
    return parseDeliver(await this.extension(DELIVER, { sessionId }));
  }

  /** Closes the connection; pending requests reject. */
  close(): void {
    this.lifecycle.closing = true;
    this.connection.close();
  }
}

/** Opens the browser's WebSocket to `endpoint` and connects over it. */
export function connectToRiot(
  endpoint: Endpoint,
  events: BridgeEvents,
  makeSocket: (url: string) => SocketLike = (url) => new WebSocket(url),
): Promise<RiotConnection> {
  return RiotConnection.open(socketStream(makeSocket(endpoint.socketUrl)), events);
}
