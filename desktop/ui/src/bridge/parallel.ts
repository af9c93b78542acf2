// A session's message queue and background agents, kept by Riot
// (crates/riot-acp/src/queue.rs, background.rs): `_riot/queue`
// (list/push/edit/remove/take), `_riot/background` and
// `_riot/background_stop`, `_riot/deliver` (a turn of Riot's for a
// background result waiting between turns), and the opt-in
// `_riot/queue_update` and `_riot/background_update` notifications.
// Payloads come from another process, so they are checked field by field
// here.

import type { StopReason } from "@agentclientprotocol/sdk";

export const QUEUE = "_riot/queue";
export const QUEUE_UPDATE = "_riot/queue_update";
export const BACKGROUND = "_riot/background";
export const BACKGROUND_STOP = "_riot/background_stop";
export const BACKGROUND_UPDATE = "_riot/background_update";
export const DELIVER = "_riot/deliver";

/** A message waiting in a session's queue. */
export interface QueuedMessage {
  id: string;
  text: string;
  /** `person`: written by the person; `riot`: a background agent's result Riot queued (it cannot be edited or removed). */
  origin: "person" | "riot";
  /**
   * Riot's message put back after the person stopped, before any reply,
   * the turn that carried it (`held: true` on the wire, omitted when
   * false): it waits for the person — their next prompt, or an explicit
   * `_riot/deliver` — and no turn is asked for it on its own.
   */
  held: boolean;
}

/** `_riot/queue`'s answer. */
export interface QueueState {
  /** What waits after the action, in order. */
  messages: QueuedMessage[];
  /** The pushed message's id (`push`). */
  id: string | null;
  /** What was taken (`take`). */
  taken: QueuedMessage[];
}

/** The queue changed (`_riot/queue_update`). */
export interface QueueNotice {
  sessionId: string;
  messages: QueuedMessage[];
  /** What Riot's loop just took into the conversation, after the running batch's tool results. */
  delivered: QueuedMessage[];
}

export type BackgroundState = "running" | "completed" | "failed" | "stopped";

/** A background agent (a Task run with `run_in_background`). */
export interface BackgroundTask {
  id: string;
  agent: string;
  description: string;
  state: BackgroundState;
  /** Tool calls it has started. */
  calls: number;
  /** Its latest tool call. */
  last: string | null;
  /** Its answer, or why it failed, once it ended. */
  result: string | null;
}

/** A background agent started, made a tool call or ended (`_riot/background_update`). */
export interface BackgroundNotice {
  sessionId: string;
  task: BackgroundTask;
}

class MalformedError extends Error {
  constructor(what: string, raw: unknown) {
    super(`malformed ${what}: ${JSON.stringify(raw)?.slice(0, 200)}`);
    this.name = "MalformedError";
  }
}

function record(raw: unknown): Record<string, unknown> | null {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
}

function queued(raw: unknown, what: string): QueuedMessage[] {
  if (!Array.isArray(raw)) throw new MalformedError(what, raw);
  return raw.map((item) => {
    const m = record(item);
    const held = m?.held === undefined ? false : m.held;
    if (
      typeof m?.id !== "string" ||
      typeof m.text !== "string" ||
      (m.origin !== "person" && m.origin !== "riot") ||
      typeof held !== "boolean" ||
      // Riot holds only its own messages.
      (held && m.origin !== "riot")
    ) {
      throw new MalformedError(what, item);
    }
    return { id: m.id, text: m.text, origin: m.origin, held };
  });
}

/** Parses `_riot/queue`'s result; throws on anything else. */
export function parseQueue(raw: unknown): QueueState {
  const r = record(raw);
  const id = r?.id ?? null;
  if (r === null || (id !== null && typeof id !== "string")) throw new MalformedError(`${QUEUE} result`, raw);
  return {
    messages: queued(r.messages, `${QUEUE} result`),
    id,
    taken: r.taken === undefined || r.taken === null ? [] : queued(r.taken, `${QUEUE} result`),
  };
}

/** Parses `_riot/queue_update` params; throws on anything else. */
export function parseQueueNotice(raw: unknown): QueueNotice {
  const r = record(raw);
  if (typeof r?.sessionId !== "string") throw new MalformedError(`${QUEUE_UPDATE} params`, raw);
  return {
    sessionId: r.sessionId,
    messages: queued(r.messages, `${QUEUE_UPDATE} params`),
    delivered: queued(r.delivered, `${QUEUE_UPDATE} params`),
  };
}

const STATES: readonly string[] = ["running", "completed", "failed", "stopped"];

function task(raw: unknown, what: string): BackgroundTask {
  const t = record(raw);
  const last = t?.last ?? null;
  const result = t?.result ?? null;
  if (
    typeof t?.id !== "string" ||
    typeof t.agent !== "string" ||
    typeof t.description !== "string" ||
    typeof t.state !== "string" ||
    !STATES.includes(t.state) ||
    typeof t.calls !== "number" ||
    !Number.isSafeInteger(t.calls) ||
    t.calls < 0 ||
    (last !== null && typeof last !== "string") ||
    (result !== null && typeof result !== "string")
  ) {
    throw new MalformedError(what, raw);
  }
  return {
    id: t.id,
    agent: t.agent,
    description: t.description,
    state: t.state as BackgroundState,
    calls: t.calls,
    last,
    result,
  };
}

/** Parses `_riot/background`'s result. */
export function parseBackgroundTasks(raw: unknown): BackgroundTask[] {
  const r = record(raw);
  if (!Array.isArray(r?.tasks)) throw new MalformedError(`${BACKGROUND} result`, raw);
  return r.tasks.map((t) => task(t, `${BACKGROUND} result`));
}

/** Parses `_riot/background_stop`'s result: the task as it stands. */
export function parseBackgroundStop(raw: unknown): BackgroundTask {
  return task(record(raw)?.task, `${BACKGROUND_STOP} result`);
}

/** Parses `_riot/background_update` params. */
export function parseBackgroundNotice(raw: unknown): BackgroundNotice {
  const r = record(raw);
  if (typeof r?.sessionId !== "string") throw new MalformedError(`${BACKGROUND_UPDATE} params`, raw);
  return { sessionId: r.sessionId, task: task(r.task, `${BACKGROUND_UPDATE} params`) };
}

const STOP_REASONS: readonly string[] = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"];

/**
 * Parses `_riot/deliver`'s result: how the turn of Riot's ended, or
 * `null` when none ran (nothing of Riot's waited, or a turn already ran).
 */
export function parseDeliver(raw: unknown): StopReason | null {
  const r = record(raw);
  const reason = r?.stopReason;
  if (reason === null) return null;
  if (typeof reason !== "string" || !STOP_REASONS.includes(reason)) throw new MalformedError(`${DELIVER} result`, raw);
  return reason as StopReason;
}
