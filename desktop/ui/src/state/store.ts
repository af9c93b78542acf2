// The UI's state and the actions people take, over one bridge connection.
// Everything Riot sends goes through one per-frame batch, in arrival
// order, so a turn's end is never applied before its last delta and a
// stream of deltas costs one render per frame.

import {
  RiotError,
  type BridgeEvents,
  type CompactionNotice,
  type RequestPermissionRequest,
  type RiotConnection,
  type SessionInfo,
  type SessionModeState,
  type SessionNotification,
  type StopReason,
  type TurnUsage,
} from "../bridge";
import {
  applyUpdates,
  emptyConversation,
  withMode,
  withNotice,
  withPrompt,
  type Conversation,
} from "./conversation";
import { FrameBatcher, type FrameScheduler } from "./frame-batcher";

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
}

export interface SessionView {
  id: string;
  cwd: string;
  conversation: Conversation;
  /** A prompt is running. */
  running: boolean;
  /** Stop was asked and the turn has not ended yet. */
  stopping: boolean;
  /** `session/load` is replaying the conversation. */
  loading: boolean;
  lastUsage: TurnUsage | null;
  totals: UsageTotals;
  /** Riot is compacting the session's context right now. */
  compacting: boolean;
}

export interface PendingPermission {
  key: string;
  sessionId: string;
  request: RequestPermissionRequest;
}

export interface AppState {
  connection: ConnectionStatus;
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
  | { type: "permission"; pending: PendingPermission }
  | { type: "withdrawn"; key: string }
  | { type: "loaded"; sessionId: string; modes: SessionModeState | null }
  | { type: "ended"; sessionId: string; stopReason: StopReason | null; error: string | null }
  | { type: "closed"; error: string | null };

const ZERO: UsageTotals = {
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
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

function newView(id: string, cwd: string, modes: SessionModeState | null, loading: boolean): SessionView {
  return {
    id,
    cwd,
    conversation: emptyConversation(modes),
    running: false,
    stopping: false,
    loading,
    lastUsage: null,
    totals: ZERO,
    compacting: false,
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

  constructor(projectDir: string, scheduler?: FrameScheduler) {
    this.state = {
      connection: { status: "connecting" },
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
    let ended: string[] = [];
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
            // A turn that asked the model nothing (a built-in command) keeps the last figures.
            lastUsage: item.usage.requests > 0 ? item.usage : v.lastUsage,
            totals: {
              requests: v.totals.requests + item.usage.requests,
              inputTokens: v.totals.inputTokens + item.usage.inputTokens,
              outputTokens: v.totals.outputTokens + item.usage.outputTokens,
              cacheReadTokens: v.totals.cacheReadTokens + item.usage.cacheReadTokens,
              cacheWriteTokens: v.totals.cacheWriteTokens + item.usage.cacheWriteTokens,
            },
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
        case "permission":
          flushUpdates();
          permissions = [...permissions, item.pending];
          break;
        case "withdrawn":
          permissions = permissions.filter((p) => p.key !== item.key);
          break;
        case "loaded":
          change(item.sessionId, (v) => ({
            ...v,
            loading: false,
            conversation:
              item.modes === null ? v.conversation : { ...v.conversation, modes: item.modes },
          }));
          break;
        case "ended": {
          ended = [...ended, item.sessionId];
          change(item.sessionId, (v) => {
            let conversation = v.conversation;
            const note = item.stopReason === null ? undefined : STOP_NOTES[item.stopReason];
            if (note !== undefined) conversation = withNotice(conversation, note[0], note[1]);
            if (item.error !== null) conversation = withNotice(conversation, "error", item.error);
            return { ...v, running: false, stopping: false, compacting: false, conversation };
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
            if (view?.running) open[id] = { ...view, running: false, stopping: false };
          }
          permissions = [];
          this.answers.clear();
          break;
      }
    }
    flushUpdates();
    this.set({ open, permissions, connection });
    if (ended.length > 0) void this.refreshSessions();
  }

  // ---- what people do ----

  /** Uses `connection` from now on and lists the sessions. */
  async attach(connection: RiotConnection): Promise<void> {
    this.connection = connection;
    this.set({ connection: { status: "open" } });
    await this.refreshSessions();
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

  dismissError(): void {
    this.set({ error: null });
  }

  setProjectDir(projectDir: string): void {
    this.set({ projectDir });
  }

  async refreshSessions(): Promise<void> {
    await this.attempt(async () => {
      const sessions = await this.need().listSessions();
      const projectDir = this.state.projectDir || (sessions[0]?.cwd ?? "");
      this.set({ sessions, projectDir });
    });
  }

  /** Starts a session in the project directory and shows it. */
  async newSession(): Promise<void> {
    const cwd = this.state.projectDir.trim();
    if (cwd === "") {
      this.set({ error: "Choose a project directory (an absolute path) first." });
      return;
    }
    await this.attempt(async () => {
      const opened = await this.need().newSession(cwd);
      this.set({
        open: { ...this.state.open, [opened.sessionId]: newView(opened.sessionId, cwd, opened.modes, false) },
        currentId: opened.sessionId,
        error: null,
      });
      await this.refreshSessions();
    });
  }

  /** Shows a session: the one already open, or loads it (its conversation is replayed). */
  async openSession(id: string, cwd: string): Promise<void> {
    if (this.state.open[id] !== undefined) {
      this.set({ currentId: id });
      return;
    }
    this.set({ open: { ...this.state.open, [id]: newView(id, cwd, null, true) }, currentId: id, error: null });
    await this.attempt(async () => {
      try {
        const loaded = await this.need().loadSession(id, cwd);
        this.batch.push({ type: "loaded", sessionId: id, modes: loaded.modes });
      } catch (e) {
        const { [id]: _, ...rest } = this.state.open;
        this.set({ open: rest, currentId: this.state.currentId === id ? null : this.state.currentId });
        throw e;
      }
    });
  }

  /** Sends a prompt to the current session. */
  async send(text: string): Promise<void> {
    const view = this.current();
    if (view === null || view.running || view.loading || text.trim() === "") return;
    const id = view.id;
    this.updateSession(id, (v) => ({ ...v, running: true, conversation: withPrompt(v.conversation, text) }));
    try {
      const stopReason = await this.need().prompt(id, text);
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

  dispose(): void {
    this.batch.dispose();
    this.connection?.close();
  }
}
