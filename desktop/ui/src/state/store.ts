// The UI's state and the actions people take, over one bridge connection.
// Everything Riot sends goes through one per-frame batch, in arrival
// order, so a turn's end is never applied before its last delta and a
// stream of deltas costs one render per frame.
//
// Prompts sent while a turn runs wait in the session's queue, which Riot
// keeps (`_riot/queue`: it outlives a page reload): Riot's loop delivers
// them into the running turn after its next tool results, and what still
// waits when the turn ends is sent as the next prompt; a stopped or failed
// turn (or a session opened with messages waiting) holds the queue until
// the person resumes it (or sends again). A background agent's result that
// Riot queues while no turn runs goes to the model at once, in a turn of
// Riot's (`_riot/deliver`), unless the person's own messages wait too
// (then it goes with them) or Riot marked it held (put back after the
// person stopped the turn that carried it: it waits for their next
// message, or for Resume queue). The store never talks to the desktop shell: it
// reports turn ends and questions through `StoreHooks`, which main.tsx
// connects to it.

import type { UsageFigures } from "../generated/riot_methods";
import {
  CHECKPOINTS,
  CONFIG,
  FILES,
  REWIND,
  RiotError,
  SESSION_DELETE,
  SESSION_RENAME,
  SET_MODEL,
  TERMINAL_RESIZE,
  TERMINAL_WRITE,
  type BridgeEvents,
  type CompactionNotice,
  type ModelConfig,
  type ModelConfigInput,
  type RequestPermissionRequest,
  type RewindPoint,
  type RewindResult,
  type RewindScope,
  type RiotConnection,
  type SessionInfo,
  type SessionModeState,
  type SessionNotification,
  type StopReason,
  type TerminalNotice,
  type TurnUsage,
} from "../bridge";
import type { SessionOptions } from "../bridge/riot-ext";
import { worktreeOf, type SessionWorktree } from "../bridge/worktree";
import {
  BACKGROUND,
  BACKGROUND_STOP,
  DELIVER,
  QUEUE,
  type BackgroundNotice,
  type BackgroundTask,
  type QueuedMessage,
  type QueueNotice,
} from "../bridge/parallel";
import {
  applyUpdates,
  emptyConversation,
  withMode,
  withNotice,
  withPrompt,
  type Conversation,
} from "./conversation";
import { FrameBatcher, type FrameScheduler } from "./frame-batcher";
import type { AttachedImage } from "./images";
import { applyTerminalUpdate, type TerminalState } from "./terminals";

export type ConnectionStatus =
  | { status: "connecting" }
  | { status: "open" }
  | { status: "closed"; error: string | null };

export interface UsageTotals {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** The session's side requests (subagents, summaries, the classifier…), apart. */
  side: UsageFigures;
}

/** A message waiting in a session's queue, as Riot keeps it. */
export type QueuedPrompt = QueuedMessage;

export interface SessionView {
  id: string;
  cwd: string;
  /** The git worktree it works in (docs/parallel.md), if any. */
  worktree: SessionWorktree | null;
  /** The model of its next request (`_meta.riot.model`, `_riot/set_model`), when known. */
  model: string | null;
  /** Its OS sandbox as Riot words it (`_meta.riot.sandbox`), when known. */
  sandbox: string | null;
  /** Models seen in this session (its own, those set, those in usage), oldest first. */
  models: readonly string[];
  /** Messages waiting in Riot's queue of the session, in order (`_riot/queue`). */
  queue: readonly QueuedPrompt[];
  /**
   * The person's messages wait for the person: the last turn was stopped
   * or failed, or they were found waiting on opening. (Riot's own
   * messages put back by a stop carry Riot's `held` mark instead.)
   */
  queueHeld: boolean;
  conversation: Conversation;
  /** A prompt is running. */
  running: boolean;
  /** When the running prompt was sent (`Date.now()`); `null` between turns. */
  startedAt: number | null;
  /** Stop was asked and the turn has not ended yet. */
  stopping: boolean;
  /** `session/load` is replaying the conversation. */
  loading: boolean;
  lastUsage: TurnUsage | null;
  totals: UsageTotals;
  /**
   * The session's cost from the latest `_riot/usage`: `usd` is `null` when
   * Riot does not know it; the whole is `null` before the first report.
   */
  cost: { usd: number | null } | null;
  /** Riot is compacting the session's context right now. */
  compacting: boolean;
  /** Its terminals (`_riot/terminal`), in the order they were opened; closed ones stay to be read. */
  terminals: readonly TerminalState[];
  /** Its background agents (`_riot/background`), oldest first. */
  background: readonly BackgroundTask[];
  /** Background agents the person asked to stop that have not ended yet. */
  stoppingTasks: readonly string[];
}

export interface PendingPermission {
  key: string;
  sessionId: string;
  request: RequestPermissionRequest;
}

/** The `_riot/...` requests the UI may use: what Riot advertised. */
export interface Features {
  config: boolean;
  files: boolean;
  rename: boolean;
  delete: boolean;
  setModel: boolean;
  /** `_riot/checkpoints` and `_riot/rewind`. */
  rewind: boolean;
  /** Riot takes images in prompts (`promptCapabilities.image`). */
  images: boolean;
  /** The person can type into terminals (`_riot/terminal_write`). */
  terminals: boolean;
  /** The person can resize terminals (`_riot/terminal_resize`). */
  resizeTerminals: boolean;
  /** Riot keeps the queue (`_riot/queue`). */
  queue: boolean;
  /** Background agents can be listed and stopped (`_riot/background`, `_riot/background_stop`). */
  background: boolean;
  /** A background result waiting between turns can be given to the model in a turn of Riot's (`_riot/deliver`). */
  deliver: boolean;
}

const NO_FEATURES: Features = {
  config: false,
  files: false,
  rename: false,
  delete: false,
  setModel: false,
  rewind: false,
  images: false,
  terminals: false,
  resizeTerminals: false,
  queue: false,
  background: false,
  deliver: false,
};

/** The model settings form: shown at first run (`onboarding`) or from the top bar. */
export interface SettingsForm {
  purpose: "onboarding" | "settings";
  saving: boolean;
  /** Why the last save was refused, in Riot's words. */
  error: string | null;
}

/** How a turn ended, for a notification. */
export type TurnOutcome = "done" | "stopped" | "failed";

/** What the store reports outward (main.tsx sends them to the desktop shell). */
export interface StoreHooks {
  /** A session's turn ended and nothing queued follows. `label` is its title, else its directory. */
  turnEnded?(ended: { sessionId: string; label: string; outcome: TurnOutcome }): void;
  /** A permission question arrived; `title` is the tool call's one-line title. */
  question?(asked: { sessionId: string; title: string }): void;
}

export interface AppState {
  connection: ConnectionStatus;
  features: Features;
  /** The model configuration, once read (`_riot/config`). */
  modelConfig: ModelConfig | null;
  /** The settings form, when open. */
  settings: SettingsForm | null;
  sessions: readonly SessionInfo[];
  currentId: string | null;
  open: Readonly<Record<string, SessionView>>;
  /** Questions waiting for an answer, oldest first. */
  permissions: readonly PendingPermission[];
  /** The project directory new sessions start in. */
  projectDir: string;
  /** The last action that failed, in words for people. */
  error: string | null;
}

type Incoming =
  | { type: "update"; notification: SessionNotification }
  | { type: "usage"; usage: TurnUsage }
  | { type: "compaction"; notice: CompactionNotice }
  | { type: "terminal"; notice: TerminalNotice }
  | { type: "queue"; notice: QueueNotice }
  | { type: "background"; notice: BackgroundNotice }
  | { type: "permission"; pending: PendingPermission }
  | { type: "withdrawn"; key: string }
  | { type: "reloading"; sessionId: string }
  | {
      type: "loaded";
      sessionId: string;
      modes: SessionModeState | null;
      model: string | null;
      sandbox: string | null;
      options: SessionOptions | null;
    }
  | { type: "ended"; sessionId: string; stopReason: StopReason | null; error: string | null }
  | { type: "closed"; error: string | null };

const ZERO: UsageTotals = {
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  side: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
};

const STOP_NOTES: Partial<Record<StopReason, [tone: "info" | "warning", text: string]>> = {
  cancelled: ["info", "Stopped."],
  max_tokens: ["warning", "The reply hit the model's output limit."],
  max_turn_requests: ["warning", "The turn reached its limit of model requests."],
  refusal: ["warning", "The model refused to continue."],
};

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function withModel(models: readonly string[], model: string | null): readonly string[] {
  return model === null || models.includes(model) ? models : [...models, model];
}

/** Whether any of `queue` was written by the person (not a background result Riot queued). */
function hasPerson(queue: readonly QueuedMessage[]): boolean {
  return queue.some((m) => m.origin === "person");
}

/** Whether `queue` holds a message Riot queued (a background agent's result). */
function hasRiots(queue: readonly QueuedMessage[]): boolean {
  return queue.some((m) => m.origin === "riot");
}

/**
 * Whether a message of Riot's that is not held waits in `queue`: one the
 * store gives the model on its own. A held one (put back after the person
 * stopped the turn that carried it) waits for the person.
 */
function hasWaking(queue: readonly QueuedMessage[]): boolean {
  return queue.some((m) => m.origin === "riot" && !m.held);
}

/**
 * Whether the person can give the waiting messages of session `view` to
 * the model now (Resume queue): their own held after a stop, a failure or
 * a reload, or, while nothing runs, only results of Riot's held after a
 * stop (asked for with `_riot/deliver`, when Riot offers it).
 */
export function resumable(view: SessionView, features: Features): boolean {
  if (view.queueHeld) return true;
  const heldResults = view.queue.length > 0 && view.queue.every((m) => m.origin === "riot" && m.held);
  return heldResults && features.deliver && !view.running && !view.loading;
}

/** Queued texts sent as one prompt, in order. */
function joined(texts: readonly string[]): string {
  return texts.filter((t) => t.trim() !== "").join("\n\n");
}

/** `tasks` with `task` in its place (a new one last). */
function withTask(tasks: readonly BackgroundTask[], task: BackgroundTask): readonly BackgroundTask[] {
  return tasks.some((t) => t.id === task.id) ? tasks.map((t) => (t.id === task.id ? task : t)) : [...tasks, task];
}

/** "Background task bg_1's result" from the message Riot queues for it. */
function backgroundLabel(text: string): string {
  const id = /^<background-task id="([^"]+)"/.exec(text)?.[1];
  return id === undefined ? "A message Riot queued" : `Background task ${id}'s result`;
}

function outcomeOf(stopReason: StopReason | null, error: string | null): TurnOutcome {
  if (error !== null) return "failed";
  return stopReason === "cancelled" ? "stopped" : "done";
}

function newView(
  id: string,
  cwd: string,
  modes: SessionModeState | null,
  loading: boolean,
  model: string | null,
  worktree: SessionWorktree | null = null,
  sandbox: string | null = null,
  options: SessionOptions | null = null,
): SessionView {
  return {
    id,
    cwd,
    worktree,
    model,
    sandbox,
    models: withModel([], model),
    queue: [],
    queueHeld: false,
    conversation: emptyConversation(modes, options),
    running: false,
    startedAt: null,
    stopping: false,
    loading,
    lastUsage: null,
    totals: ZERO,
    cost: null,
    compacting: false,
    terminals: [],
    background: [],
    stoppingTasks: [],
  };
}

export class Store {
  private state: AppState;
  private readonly listeners = new Set<() => void>();
  private readonly batch: FrameBatcher<Incoming>;
  private connection: RiotConnection | null = null;
  /** How each waiting question is answered. */
  private readonly answers = new Map<string, (optionId: string | null) => void>();
  private nextKey = 0;
  /** Keys typed into a terminal while its last write is on its way, by session and terminal. */
  private readonly typing = new Map<string, { pending: string }>();
  /**
   * How many starts of a turn are on their way in each session: a `take`
   * of the queue before a prompt, or a `_riot/deliver` in flight. While
   * one is, no other turn of the store's starts there, and what the person
   * sends goes to the queue as during a turn.
   */
  private readonly starting = new Map<string, number>();

  constructor(
    projectDir: string,
    scheduler?: FrameScheduler,
    private readonly hooks: StoreHooks = {},
  ) {
    this.state = {
      connection: { status: "connecting" },
      features: NO_FEATURES,
      modelConfig: null,
      settings: null,
      sessions: [],
      currentId: null,
      open: {},
      permissions: [],
      projectDir,
      error: null,
    };
    this.batch = new FrameBatcher((items) => this.applyIncoming(items), scheduler);
  }

  // ---- React binding ----

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): AppState => this.state;

  private set(next: Partial<AppState>): void {
    this.state = { ...this.state, ...next };
    for (const listener of this.listeners) listener();
  }

  private updateSession(id: string, change: (view: SessionView) => SessionView): void {
    const view = this.state.open[id];
    if (view === undefined) return;
    this.set({ open: { ...this.state.open, [id]: change(view) } });
  }

  /** The session shown, if any. */
  current(): SessionView | null {
    const id = this.state.currentId;
    return id === null ? null : (this.state.open[id] ?? null);
  }

  // ---- what Riot tells us ----

  /** The handlers to give the bridge. */
  readonly events: BridgeEvents = {
    update: (notification) => this.batch.push({ type: "update", notification }),
    usage: (usage) => this.batch.push({ type: "usage", usage }),
    compaction: (notice) => this.batch.push({ type: "compaction", notice }),
    terminal: (notice) => this.batch.push({ type: "terminal", notice }),
    queue: (notice) => this.batch.push({ type: "queue", notice }),
    background: (notice) => this.batch.push({ type: "background", notice }),
    closed: (error) => this.batch.push({ type: "closed", error: error?.message ?? null }),
    permission: (request, withdrawn) =>
      new Promise<string | null>((resolve) => {
        const key = `p${this.nextKey++}`;
        this.answers.set(key, resolve);
        withdrawn.addEventListener("abort", () => {
          this.answers.delete(key);
          resolve(null);
          this.batch.push({ type: "withdrawn", key });
        });
        this.batch.push({ type: "permission", pending: { key, sessionId: request.sessionId, request } });
      }),
  };

  private applyIncoming(items: Incoming[]): void {
    // Consecutive updates of one session are applied as one batch.
    let open = { ...this.state.open };
    let permissions = this.state.permissions;
    let connection = this.state.connection;
    const ended: { id: string; outcome: TurnOutcome }[] = [];
    /** Sessions whose queue changed or whose replay ended: a result of Riot's may now be deliverable. */
    const touched = new Set<string>();
    const asked: PendingPermission[] = [];
    let pending: { id: string; updates: SessionNotification["update"][] } | null = null;
    const flushUpdates = () => {
      if (pending === null) return;
      const view = open[pending.id];
      if (view !== undefined) {
        open[pending.id] = { ...view, conversation: applyUpdates(view.conversation, pending.updates) };
      }
      pending = null;
    };
    const change = (id: string, f: (v: SessionView) => SessionView) => {
      flushUpdates();
      const view = open[id];
      if (view !== undefined) open[id] = f(view);
    };
    for (const item of items) {
      switch (item.type) {
        case "update": {
          const id = item.notification.sessionId;
          if (pending !== null && pending.id !== id) flushUpdates();
          pending ??= { id, updates: [] };
          pending.updates.push(item.notification.update);
          break;
        }
        case "usage":
          change(item.usage.sessionId, (v) => ({
            ...v,
            models: withModel(v.models, item.usage.requests > 0 ? item.usage.model : null),
            // A turn that asked the model nothing (a built-in command) keeps the last figures.
            lastUsage: item.usage.requests > 0 ? item.usage : v.lastUsage,
            totals: {
              requests: v.totals.requests + item.usage.requests,
              inputTokens: v.totals.inputTokens + item.usage.inputTokens,
              outputTokens: v.totals.outputTokens + item.usage.outputTokens,
              cacheReadTokens: v.totals.cacheReadTokens + item.usage.cacheReadTokens,
              cacheWriteTokens: v.totals.cacheWriteTokens + item.usage.cacheWriteTokens,
              side: {
                inputTokens: v.totals.side.inputTokens + item.usage.side.inputTokens,
                outputTokens: v.totals.side.outputTokens + item.usage.side.outputTokens,
                cacheReadTokens: v.totals.side.cacheReadTokens + item.usage.side.cacheReadTokens,
                cacheWriteTokens: v.totals.side.cacheWriteTokens + item.usage.side.cacheWriteTokens,
              },
            },
            // The session's running total: the latest report replaces the last.
            cost: { usd: item.usage.costUsd },
          }));
          break;
        case "compaction":
          change(item.notice.sessionId, (v) => {
            if (item.notice.status === "compacting") return { ...v, compacting: true };
            const how = item.notice.strategy === "summary" ? "summarized" : "old tool results cleared";
            const figures =
              item.notice.tokensBefore !== null && item.notice.tokensAfter !== null
                ? `: ${item.notice.tokensBefore.toLocaleString("en")} → ${item.notice.tokensAfter.toLocaleString("en")} tokens`
                : "";
            return {
              ...v,
              compacting: false,
              conversation: withNotice(v.conversation, "info", `Context compacted (${how})${figures}.`),
            };
          });
          break;
        case "queue":
          change(item.notice.sessionId, (v) => {
            // What Riot's loop took into the running turn shows where it went in.
            let conversation = v.conversation;
            for (const m of item.notice.delivered) {
              conversation =
                m.origin === "person"
                  ? withPrompt(conversation, m.text)
                  : withNotice(conversation, "info", `${backgroundLabel(m.text)} reached the agent.`);
            }
            const queue = item.notice.messages;
            return { ...v, conversation, queue, queueHeld: v.queueHeld && hasPerson(queue) };
          });
          touched.add(item.notice.sessionId);
          break;
        case "background":
          change(item.notice.sessionId, (v) => ({
            ...v,
            background: withTask(v.background, item.notice.task),
            stoppingTasks:
              item.notice.task.state === "running"
                ? v.stoppingTasks
                : v.stoppingTasks.filter((t) => t !== item.notice.task.id),
          }));
          break;
        case "terminal":
          change(item.notice.sessionId, (v) => ({
            ...v,
            terminals: applyTerminalUpdate(v.terminals, item.notice.update),
          }));
          break;
        case "permission":
          flushUpdates();
          permissions = [...permissions, item.pending];
          asked.push(item.pending);
          break;
        case "withdrawn":
          permissions = permissions.filter((p) => p.key !== item.key);
          break;
        case "reloading":
          // What `session/load` replays next replaces the conversation shown.
          change(item.sessionId, (v) => ({
            ...v,
            loading: true,
            conversation: emptyConversation(v.conversation.modes, v.conversation.options),
          }));
          break;
        case "loaded":
          change(item.sessionId, (v) => ({
            ...v,
            loading: false,
            model: item.model ?? v.model,
            sandbox: item.sandbox ?? v.sandbox,
            models: withModel(v.models, item.model),
            conversation: {
              ...v.conversation,
              modes: item.modes ?? v.conversation.modes,
              options: item.options ?? v.conversation.options,
            },
          }));
          touched.add(item.sessionId);
          break;
        case "ended": {
          const outcome = outcomeOf(item.stopReason, item.error);
          ended.push({ id: item.sessionId, outcome });
          change(item.sessionId, (v) => {
            let conversation = v.conversation;
            const note = item.stopReason === null ? undefined : STOP_NOTES[item.stopReason];
            if (note !== undefined) conversation = withNotice(conversation, note[0], note[1]);
            if (item.error !== null) conversation = withNotice(conversation, "error", item.error);
            // A stopped or failed turn holds the person's queued messages; the
            // person decides. Riot's own put back by a stop come marked held
            // by Riot, so no window gives them to the model on its own.
            const queueHeld = outcome !== "done" && hasPerson(v.queue);
            return {
              ...v,
              running: false,
              startedAt: null,
              stopping: false,
              compacting: false,
              queueHeld,
              conversation,
            };
          });
          // Riot no longer waits for answers about a turn that ended.
          for (const p of permissions.filter((p) => p.sessionId === item.sessionId)) {
            this.answers.get(p.key)?.(null);
            this.answers.delete(p.key);
          }
          permissions = permissions.filter((p) => p.sessionId !== item.sessionId);
          break;
        }
        case "closed":
          flushUpdates();
          connection = { status: "closed", error: item.error };
          for (const id of Object.keys(open)) {
            const view = open[id];
            if (view?.running) open[id] = { ...view, running: false, startedAt: null, stopping: false };
          }
          permissions = [];
          this.answers.clear();
          break;
      }
    }
    flushUpdates();
    this.set({ open, permissions, connection });
    for (const pending of asked) {
      this.hooks.question?.({ sessionId: pending.sessionId, title: pending.request.toolCall.title ?? "" });
    }
    for (const id of touched) if (!ended.some((e) => e.id === id)) void this.deliverWaiting(id);
    if (ended.length === 0) return;
    // The queue moves on at once; the notification waits for the session's
    // (new) title, and, where something was to follow, for whether it did:
    // Riot may start no turn (the person's messages taken elsewhere, a
    // `_riot/deliver` answered null), and then this turn's end is reported.
    const idle: typeof ended = [];
    for (const e of ended) {
      const view = this.state.open[e.id];
      const next = view === undefined || connection.status !== "open" ? null : this.follows(view);
      if (next === null) {
        idle.push(e);
        continue;
      }
      const started = next === "prompt" ? this.sendNext(e.id) : this.deliverWaiting(e.id);
      void started.then((ran) => {
        if (!ran) this.reportEnded([e]);
      });
    }
    void this.refreshSessions().then(() => this.reportEnded(idle));
  }

  /** Tells the hooks that these turns ended and nothing follows, each by its session's title (else its directory). */
  private reportEnded(ended: readonly { id: string; outcome: TurnOutcome }[]): void {
    for (const { id, outcome } of ended) {
      const title = this.state.sessions.find((s) => s.sessionId === id)?.title;
      const label = title || (this.state.open[id]?.cwd ?? id);
      this.hooks.turnEnded?.({ sessionId: id, label, outcome });
    }
  }

  // ---- what people do ----

  /** Uses `connection` from now on and lists the sessions. */
  async attach(connection: RiotConnection): Promise<void> {
    this.connection = connection;
    const features: Features = {
      config: connection.supports(CONFIG),
      files: connection.supports(FILES),
      rename: connection.supports(SESSION_RENAME),
      delete: connection.supports(SESSION_DELETE),
      setModel: connection.supports(SET_MODEL),
      rewind: connection.supports(CHECKPOINTS) && connection.supports(REWIND),
      images: connection.takesImages,
      terminals: connection.supports(TERMINAL_WRITE),
      resizeTerminals: connection.supports(TERMINAL_RESIZE),
      queue: connection.supports(QUEUE),
      background: connection.supports(BACKGROUND) && connection.supports(BACKGROUND_STOP),
      deliver: connection.supports(DELIVER),
    };
    this.set({ connection: { status: "open" }, features });
    await this.refreshSessions();
    if (features.config) {
      // First run: without a usable model nothing works, so ask for one.
      await this.attempt(async () => {
        const modelConfig = await this.need().modelConfig();
        this.set({
          modelConfig,
          settings: modelConfig.ready ? this.state.settings : { purpose: "onboarding", saving: false, error: null },
        });
      });
    }
  }

  /** The connection could not be opened. */
  failed(error: unknown): void {
    this.set({ connection: { status: "closed", error: message(error) } });
  }

  private need(): RiotConnection {
    if (this.connection === null || this.state.connection.status !== "open") {
      throw new RiotError("Not connected to Riot.", null);
    }
    return this.connection;
  }

  private async attempt<T>(action: () => Promise<T>): Promise<T | undefined> {
    try {
      return await action();
    } catch (e) {
      this.set({ error: message(e) });
      return undefined;
    }
  }

  /** Shows `error` (a failed action outside Riot, e.g. the folder picker). */
  reportError(error: unknown): void {
    this.set({ error: message(error) });
  }

  dismissError(): void {
    this.set({ error: null });
  }

  setProjectDir(projectDir: string): void {
    this.set({ projectDir });
  }

  async refreshSessions(): Promise<void> {
    await this.attempt(async () => {
      const sessions = await this.need().listSessions();
      // The newest session's project: the checkout a worktree was made from, not the worktree.
      const newest = sessions[0];
      const projectDir = this.state.projectDir || (worktreeOf(newest?._meta)?.project ?? newest?.cwd ?? "");
      this.set({ sessions, projectDir });
    });
  }

  /**
   * Starts a session in the project directory and shows it; with
   * `worktree` (a name, or "" for one Riot picks), in a new git worktree
   * of the project, and Riot's refusal (no git repository, a taken name)
   * is shown as the page's error.
   */
  async newSession(options: { worktree?: string } = {}): Promise<void> {
    const cwd = this.state.projectDir.trim();
    if (cwd === "") {
      this.set({ error: "Choose a project directory (an absolute path) first." });
      return;
    }
    await this.attempt(async () => {
      let opened;
      try {
        opened = await this.need().newSession(cwd, options.worktree === undefined ? {} : { worktree: options.worktree });
      } catch (e) {
        if (options.worktree === undefined) throw e;
        throw new RiotError(`Could not start a session in a worktree: ${message(e)}`, null);
      }
      this.set({
        open: {
          ...this.state.open,
          [opened.sessionId]: newView(
            opened.sessionId,
            opened.cwd,
            opened.modes,
            false,
            opened.model,
            opened.worktree,
            opened.sandbox,
            opened.options,
          ),
        },
        currentId: opened.sessionId,
        error: null,
      });
      await this.readParallel(opened.sessionId);
      await this.refreshSessions();
    });
  }

  /** Shows a session: the one already open, or loads it (its conversation is replayed). */
  async openSession(id: string, cwd: string): Promise<void> {
    if (this.state.open[id] !== undefined) {
      this.set({ currentId: id });
      return;
    }
    const listed = this.state.sessions.find((s) => s.sessionId === id);
    const worktree = worktreeOf(listed?._meta);
    this.set({
      open: { ...this.state.open, [id]: newView(id, cwd, null, true, null, worktree) },
      currentId: id,
      error: null,
    });
    await this.attempt(async () => {
      try {
        const loaded = await this.need().loadSession(id, cwd);
        this.batch.push({
          type: "loaded",
          sessionId: id,
          modes: loaded.modes,
          model: loaded.model,
          sandbox: loaded.sandbox,
          options: loaded.options,
        });
        await this.readParallel(id);
      } catch (e) {
        const { [id]: _, ...rest } = this.state.open;
        this.set({ open: rest, currentId: this.state.currentId === id ? null : this.state.currentId });
        throw e;
      }
    });
  }

  /**
   * Sends a prompt to the current session. While a turn runs it goes to
   * Riot's queue (images cannot wait there: they are refused with a
   * reason); otherwise anything still waiting is sent with it, first (a
   * held queue moves on: the person acted).
   */
  async send(text: string, images: readonly AttachedImage[] = []): Promise<void> {
    const view = this.current();
    if (view === null || view.loading || (text.trim() === "" && images.length === 0)) return;
    const id = view.id;
    // A turn runs, or one is starting (the queue's take or a `_riot/deliver`
    // on its way): the message waits in the queue.
    if (view.running || this.starting.has(id)) {
      if (images.length > 0) {
        this.set({ error: "A turn is running and images cannot wait in the queue: send them when the turn ends." });
        return;
      }
      await this.attempt(async () => {
        const state = await this.need().queue(id, { action: "push", text });
        this.updateSession(id, (v) => ({ ...v, queue: state.messages }));
      });
      // The turn may have ended while the message was on its way.
      await this.sendNext(id);
      return;
    }
    const waiting = this.state.open[id]?.queue ?? [];
    if (waiting.length > 0 && this.state.features.queue) {
      await this.takeAndRun(id, text, images);
      return;
    }
    await this.run(id, text, images);
  }

  /**
   * Sends what waits in session `id`'s queue as one prompt, unless a turn
   * runs or is starting, the queue is held, or only Riot's own messages
   * (background results) wait: those go with the person's next prompt.
   * Resolves once that turn ended, with whether one ran.
   */
  private async sendNext(id: string): Promise<boolean> {
    const view = this.state.open[id];
    if (view === undefined || !hasPerson(view.queue) || view.running || view.loading || view.queueHeld) return false;
    if (this.state.connection.status !== "open" || this.starting.has(id)) return false;
    return this.takeAndRun(id, "", []);
  }

  private begin(id: string): void {
    this.starting.set(id, (this.starting.get(id) ?? 0) + 1);
  }

  private end(id: string): void {
    const left = (this.starting.get(id) ?? 1) - 1;
    if (left > 0) this.starting.set(id, left);
    else this.starting.delete(id);
  }

  /**
   * Takes the person's waiting messages out of session `id`'s queue and
   * sends them, then `text` and `images`, as one prompt (Riot's own go
   * with it). No other turn of the store's starts while the take is on
   * its way, and the session shows running before the guard is lifted.
   * When nothing is sent (someone else took them), what the person queued
   * meanwhile goes next. Resolves once the turn ended, with whether one ran.
   */
  private async takeAndRun(id: string, text: string, images: readonly AttachedImage[]): Promise<boolean> {
    this.begin(id);
    let turn: Promise<void> | null = null;
    let took = false;
    try {
      const taken = await this.attempt(() => this.need().queue(id, { action: "take" }));
      if (taken === undefined) return false;
      took = true;
      this.updateSession(id, (v) => ({ ...v, queue: taken.messages, queueHeld: false }));
      const prompt = joined([...taken.taken.map((m) => m.text), text]);
      // `run` marks the session running before it returns its promise.
      if (prompt !== "" || images.length > 0) turn = this.run(id, prompt, images);
    } finally {
      this.end(id);
    }
    if (turn === null) return took ? this.sendNext(id) : false;
    await turn;
    return true;
  }

  /**
   * What follows a turn in idle session `view` on its own: the person's
   * waiting messages as a prompt, or a turn of Riot's for its own
   * messages alone when one of them is not held; `null` when the queue is
   * held, nothing waits, or only Riot's held messages do (they wait for
   * the person).
   */
  private follows(view: SessionView): "prompt" | "deliver" | null {
    if (view.queueHeld) return null;
    if (hasPerson(view.queue)) return "prompt";
    return this.state.features.deliver && hasWaking(view.queue) ? "deliver" : null;
  }

  /**
   * Gives the background results waiting in session `id`'s queue to the
   * model in a turn of Riot's (`_riot/deliver`) when only Riot's messages
   * wait, one of them not held, and nothing runs there: the person's
   * messages go through `sendNext` (Riot's go with them), and a held
   * queue waits for the person. `asked`: the person asked (Resume queue),
   * so Riot's held messages go too. The session shows running meanwhile,
   * with no prompt of the person's; the turn streams and ends as a
   * prompt's does. Riot answers `null` when it started nothing (a turn of
   * another client's runs and takes them, or nothing waited any more):
   * the session is idle again, and a message the person sent meanwhile
   * (queued, as during a turn) goes now. Resolves once the turn ended,
   * with whether one ran (or was refused, which ends as a failed turn).
   */
  private async deliverWaiting(id: string, { asked = false } = {}): Promise<boolean> {
    const view = this.state.open[id];
    if (view === undefined || view.running || view.loading) return false;
    const wanted = asked
      ? this.state.features.deliver && hasRiots(view.queue) && !hasPerson(view.queue)
      : this.follows(view) === "deliver";
    if (!wanted || this.state.connection.status !== "open" || this.starting.has(id)) return false;
    this.begin(id);
    this.updateSession(id, (v) => ({ ...v, running: true, startedAt: Date.now() }));
    let stopReason: StopReason | null;
    try {
      stopReason = await this.need().deliver(id);
    } catch (e) {
      this.batch.push({ type: "ended", sessionId: id, stopReason: null, error: message(e) });
      return true;
    } finally {
      this.end(id);
    }
    if (stopReason !== null) {
      this.batch.push({ type: "ended", sessionId: id, stopReason, error: null });
      return true;
    }
    this.updateSession(id, (v) => ({ ...v, running: false, startedAt: null, stopping: false }));
    return this.sendNext(id);
  }

  /** Takes message `messageId` out of session `id`'s queue (Riot refuses one already delivered). */
  async removeQueued(id: string, messageId: string): Promise<void> {
    await this.attempt(async () => {
      const state = await this.need().queue(id, { action: "remove", id: messageId });
      this.updateSession(id, (v) => ({ ...v, queue: state.messages, queueHeld: v.queueHeld && hasPerson(state.messages) }));
    });
  }

  /** Rewrites queued message `messageId` of session `id` (Riot refuses one already delivered). */
  async editQueued(id: string, messageId: string, text: string): Promise<void> {
    if (text.trim() === "") return;
    await this.attempt(async () => {
      const state = await this.need().queue(id, { action: "edit", id: messageId, text });
      this.updateSession(id, (v) => ({ ...v, queue: state.messages }));
    });
  }

  /**
   * Sends what is queued in session `id` after a stop, a failure or a
   * reload held it: the person's messages as a prompt (Riot's go with
   * them), or Riot's alone, held ones included, in a turn of Riot's
   * (`_riot/deliver`).
   */
  async resumeQueue(id: string): Promise<void> {
    this.updateSession(id, (v) => ({ ...v, queueHeld: false }));
    if (hasPerson(this.state.open[id]?.queue ?? [])) await this.sendNext(id);
    else await this.deliverWaiting(id, { asked: true });
  }

  /** Stops background agent `taskId` of session `id`; its end arrives as `_riot/background_update`. */
  async stopBackground(id: string, taskId: string): Promise<void> {
    this.updateSession(id, (v) => ({
      ...v,
      stoppingTasks: v.stoppingTasks.includes(taskId) ? v.stoppingTasks : [...v.stoppingTasks, taskId],
    }));
    const stopped = await this.attempt(() => this.need().stopBackground(id, taskId));
    if (stopped === undefined) {
      this.updateSession(id, (v) => ({ ...v, stoppingTasks: v.stoppingTasks.filter((t) => t !== taskId) }));
      return;
    }
    this.updateSession(id, (v) => ({
      ...v,
      // A notification of its end may have come first.
      background: v.background.some((t) => t.id === taskId && t.state !== "running") ? v.background : withTask(v.background, stopped),
    }));
  }

  /**
   * Reads session `id`'s queue and background agents from Riot (a
   * session just opened, or loaded after a page reload). The person's
   * messages found waiting between turns are held for the person to send
   * or remove (Riot's wait with them). Background results found waiting
   * alone go to the model at once, in a turn of Riot's: they are what the
   * agent would have been given had the page been open, and nobody has
   * to decide about them (the person sees them arrive in the
   * conversation and can stop that turn) — unless Riot marked them all
   * held, after the person stopped the turn that carried them.
   */
  private async readParallel(id: string): Promise<void> {
    const { queue, background } = this.state.features;
    if (queue) {
      const state = await this.attempt(() => this.need().queue(id, { action: "list" }));
      if (state !== undefined) {
        this.updateSession(id, (v) => ({ ...v, queue: state.messages, queueHeld: !v.running && hasPerson(state.messages) }));
      }
    }
    if (background) {
      const tasks = await this.attempt(() => this.need().backgroundTasks(id));
      if (tasks !== undefined) this.updateSession(id, (v) => ({ ...v, background: tasks }));
    }
    // While `session/load` still replays, the end of the replay does it.
    void this.deliverWaiting(id);
  }

  private async run(id: string, text: string, images: readonly AttachedImage[]): Promise<void> {
    this.updateSession(id, (v) => ({
      ...v,
      running: true,
      startedAt: Date.now(),
      conversation: withPrompt(v.conversation, text, images),
    }));
    try {
      const stopReason = await this.need().prompt(
        id,
        text,
        images.map(({ mimeType, data }) => ({ mimeType, data })),
      );
      this.batch.push({ type: "ended", sessionId: id, stopReason, error: null });
    } catch (e) {
      this.batch.push({ type: "ended", sessionId: id, stopReason: null, error: message(e) });
    }
  }

  /** Stops the current session's turn. */
  async stop(): Promise<void> {
    const view = this.current();
    if (view === null || !view.running) return;
    const id = view.id;
    this.updateSession(id, (v) => ({ ...v, stopping: true }));
    // ACP: a client that cancels answers its open questions with `cancelled`.
    for (const p of this.state.permissions.filter((p) => p.sessionId === id)) this.answer(p.key, null);
    await this.attempt(() => this.need().cancel(id));
  }

  /** Answers a permission question with an offered option id, or `null` for no answer. */
  answer(key: string, optionId: string | null): void {
    const resolve = this.answers.get(key);
    this.answers.delete(key);
    this.set({ permissions: this.state.permissions.filter((p) => p.key !== key) });
    resolve?.(optionId);
  }

  /** Switches the current session's mode. */
  async setMode(modeId: string): Promise<void> {
    const view = this.current();
    if (view === null) return;
    const id = view.id;
    await this.attempt(async () => {
      await this.need().setMode(id, modeId);
      this.updateSession(id, (v) => ({ ...v, conversation: withMode(v.conversation, modeId) }));
    });
  }

  /** Uses `model` for the current session's next requests (`_riot/set_model`). */
  async setModel(model: string): Promise<void> {
    const view = this.current();
    const wanted = model.trim();
    if (view === null || wanted === "" || wanted === view.model) return;
    const id = view.id;
    await this.attempt(async () => {
      await this.need().setModel(id, wanted);
      this.updateSession(id, (v) => ({ ...v, model: wanted, models: withModel(v.models, wanted) }));
    });
  }

  /** Sets how hard the current session's model thinks (`session/set_config_option` `thinking`). */
  async setThinking(level: string): Promise<void> {
    const view = this.current();
    if (view === null || view.conversation.options?.thinking === level) return;
    const id = view.id;
    await this.attempt(async () => {
      const options = await this.need().setConfigOption(id, "thinking", level);
      this.updateSession(id, (v) => ({
        ...v,
        conversation: { ...v.conversation, options: options ?? v.conversation.options },
      }));
    });
  }

  /** Names session `id` `title` (blank or unchanged: nothing happens). */
  async renameSession(id: string, title: string): Promise<void> {
    const wanted = title.trim();
    const before = this.state.sessions.find((s) => s.sessionId === id)?.title ?? "";
    if (wanted === "" || wanted === before) return;
    await this.attempt(async () => {
      await this.need().renameSession(id, wanted);
      await this.refreshSessions();
    });
  }

  /** Deletes session `id` (Riot refuses while a turn runs in it). */
  async deleteSession(id: string): Promise<void> {
    await this.attempt(async () => {
      await this.need().deleteSession(id);
      const { [id]: _, ...open } = this.state.open;
      this.set({
        open,
        currentId: this.state.currentId === id ? null : this.state.currentId,
        sessions: this.state.sessions.filter((s) => s.sessionId !== id),
      });
      await this.refreshSessions();
    });
  }

  /** Session `id`'s user messages a rewind can go back to (`_riot/checkpoints`); throws Riot's refusal. */
  checkpoints(id: string): Promise<RewindPoint[]> {
    return this.need().checkpoints(id);
  }

  /**
   * Rewinds session `id` to just before user message `to`, then, when the
   * conversation was rewound, reloads it so it shows the kept history.
   * With `force`, files the person changed after the agent are restored
   * too: Riot takes a forced restore only as a new rewind, so the last
   * one (which left them) is undone first. Throws Riot's refusal.
   */
  async rewind(id: string, to: number, scope: RewindScope, force = false): Promise<RewindResult> {
    const view = this.state.open[id];
    if (view === undefined) throw new RiotError("Open the session before rewinding it.", null);
    if (view.running) throw new RiotError("A turn is running in this session; stop it or wait for its end, then rewind.", null);
    const connection = this.need();
    if (!force) {
      const result = await connection.rewind(id, to, { scope });
      if (result.conversation) await this.reload(id);
      return result;
    }
    await connection.undoRewind(id);
    // The undo may have brought the conversation back: show what Riot has, whatever the rewind does.
    try {
      return await connection.rewind(id, to, { scope, force: true });
    } finally {
      await this.reload(id);
    }
  }

  /** Replays session `id`'s conversation from Riot (`session/load`) in place of the one shown. */
  private async reload(id: string): Promise<void> {
    const view = this.state.open[id];
    if (view === undefined) return;
    this.batch.push({ type: "reloading", sessionId: id });
    try {
      const loaded = await this.need().loadSession(id, view.cwd);
      this.batch.push({
          type: "loaded",
          sessionId: id,
          modes: loaded.modes,
          model: loaded.model,
          sandbox: loaded.sandbox,
          options: loaded.options,
        });
    } catch (e) {
      this.batch.push({ type: "loaded", sessionId: id, modes: null, model: null, sandbox: null, options: null });
      throw e;
    }
  }

  /**
   * Types `input` (the bytes a terminal sends) into session `id`'s
   * terminal `name` as the person. Keys reach Riot in the order typed:
   * one write at a time per terminal, what is typed meanwhile sent
   * together next. A refusal is shown as the page's error, and what was
   * typed after it is dropped.
   */
  async writeTerminal(id: string, name: string, input: string): Promise<void> {
    if (input === "") return;
    const key = `${id}\u0000${name}`;
    const waiting = this.typing.get(key);
    if (waiting !== undefined) {
      waiting.pending += input;
      return;
    }
    const typing = { pending: input };
    this.typing.set(key, typing);
    try {
      while (typing.pending !== "") {
        const chunk = typing.pending;
        typing.pending = "";
        const written = await this.attempt(async () => {
          await this.need().writeTerminal(id, name, chunk);
          return true;
        });
        if (written !== true) break;
      }
    } finally {
      this.typing.delete(key);
    }
  }

  /** Gives session `id`'s terminal `name` a new size (`_riot/terminal_resize`); a refusal is shown as the page's error. */
  async resizeTerminal(id: string, name: string, rows: number, cols: number): Promise<void> {
    await this.attempt(async () => {
      await this.need().resizeTerminal(id, name, rows, cols);
      return true;
    });
  }

  /** Project files under `cwd` matching `query`, best first (for `@` mentions). */
  findFiles(cwd: string, query: string): Promise<string[]> {
    return this.need().files(cwd, query, 20);
  }

  /** Opens the model settings, filled from the configuration in effect. */
  async openSettings(): Promise<void> {
    await this.attempt(async () => {
      const modelConfig = await this.need().modelConfig();
      this.set({ modelConfig, settings: { purpose: "settings", saving: false, error: null } });
    });
  }

  closeSettings(): void {
    this.set({ settings: null });
  }

  /** Saves the model settings; the form closes once a model is ready, and shows Riot's reason otherwise. */
  async saveSettings(input: ModelConfigInput): Promise<void> {
    const form = this.state.settings;
    if (form === null || form.saving) return;
    this.set({ settings: { ...form, saving: true, error: null } });
    try {
      const modelConfig = await this.need().setModelConfig(input);
      this.set({ modelConfig, settings: modelConfig.ready ? null : { ...form, saving: false, error: null } });
    } catch (e) {
      this.set({ settings: { ...form, saving: false, error: message(e) } });
    }
  }

  dispose(): void {
    this.batch.dispose();
    this.connection?.close();
  }
}
