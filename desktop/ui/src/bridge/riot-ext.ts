// Riot's extensions to ACP (crates/riot-acp/src/ext.rs): the client opts
// into the `_riot/...` notifications in `clientCapabilities._meta.riot`,
// and the agent lists what it has in `agentCapabilities._meta.riot`.
// The `_riot/...` requests (model configuration, project files, session
// rename/delete, a session's model, checkpoints and rewind, typing into a
// terminal) are offered only when listed in
// `agentCapabilities._meta.riot.requests`. Their payloads arrive from
// another process, so they are checked here field by field before the UI
// sees them.

import type { CompactionStrategy, DecisionReason, PermissionRequestDetail } from "../generated/agent_event";
import type { UsageFigures } from "../generated/riot_methods";
import type { TerminalExit, TerminalSize, TerminalUpdate } from "../generated/terminal_update";
import { BACKGROUND_UPDATE, QUEUE_UPDATE } from "./parallel";

export const USAGE = "_riot/usage";
export const COMPACTION = "_riot/compaction";
export const SHUTDOWN = "_riot/shutdown";
export const CONFIG = "_riot/config";
export const CONFIG_SET = "_riot/config_set";
export const FILES = "_riot/files";
export const SESSION_RENAME = "_riot/session_rename";
export const SESSION_DELETE = "_riot/session_delete";
export const SET_MODEL = "_riot/set_model";
export const CHECKPOINTS = "_riot/checkpoints";
export const REWIND = "_riot/rewind";
export const TERMINAL = "_riot/terminal";
export const TERMINAL_WRITE = "_riot/terminal_write";
export const TERMINAL_RESIZE = "_riot/terminal_resize";

/** The notifications this UI asks for. */
export const WANTED_NOTIFICATIONS = [USAGE, COMPACTION, TERMINAL, QUEUE_UPDATE, BACKGROUND_UPDATE] as const;

/** `clientCapabilities._meta` of `initialize`. */
export function clientCapabilitiesMeta(): Record<string, unknown> {
  return { riot: { notifications: [...WANTED_NOTIFICATIONS] } };
}

/** One prompt turn's token figures (`_riot/usage`). */
export interface TurnUsage {
  sessionId: string;
  model: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /**
   * The side requests made while the turn ran: its subagents, compaction
   * summaries, auto mode's classifier, image descriptions and WebFetch's
   * answers. Not in the figures above, but in the cost below.
   */
  side: UsageFigures;
  /**
   * What the whole session has cost so far, in US dollars: every request,
   * main and side, also those made before it was loaded. `null` when it is
   * unknown (a model without a price) — never shown as zero.
   */
  costUsd: number | null;
}

/** Compaction started or finished (`_riot/compaction`). */
export interface CompactionNotice {
  sessionId: string;
  status: "compacting" | "compacted";
  strategy: CompactionStrategy;
  tokensBefore: number | null;
  tokensAfter: number | null;
}

/** What the agent advertised in `agentCapabilities._meta.riot`. */
export interface RiotCapabilities {
  requests: string[];
  notifications: string[];
}

/** The wire protocols Riot speaks to a model endpoint. */
export const PROVIDERS = ["anthropic", "openai", "openai-responses"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Whether Riot has the API key the endpoint needs. */
export type KeyStatus = "present" | "missing" | "not-needed";

/** The effective model configuration (`_riot/config`, `_riot/config_set`). Never the key itself. */
export interface ModelConfig {
  provider: Provider | null;
  baseUrl: string | null;
  model: string | null;
  key: KeyStatus;
  /** Where the key comes from (a variable, the credentials file), when there is one. */
  keySource: string | null;
  /** A session can be started: provider, model and (when needed) a key are there. */
  ready: boolean;
  /** Why it is not ready, in one line a person can act on. */
  problem: string | null;
  /**
   * The `notifications.desktop` setting (docs/parallel.md), when Riot
   * reports it (`notifications: {desktop}` in the answer).
   */
  desktopNotifications?: boolean;
}

/** What `_riot/config_set` saves: `baseUrl: null` is the provider's default; no `apiKey` keeps the saved key. */
export interface ModelConfigInput {
  provider: Provider;
  model: string;
  baseUrl: string | null;
  apiKey?: string;
}

/** An extension request's result that is not what Riot promised. */
export class MalformedResultError extends Error {
  constructor(method: string, raw: unknown) {
    super(`malformed ${method} result: ${JSON.stringify(raw)?.slice(0, 200)}`);
    this.name = "MalformedResultError";
  }
}

export class MalformedNotificationError extends Error {
  constructor(method: string, raw: unknown) {
    super(`malformed ${method} params: ${JSON.stringify(raw)?.slice(0, 200)}`);
    this.name = "MalformedNotificationError";
  }
}

function record(raw: unknown): Record<string, unknown> | null {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : null;
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** A dollar figure: a finite number, not negative. */
function dollars(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** Token figures (`UsageFigures`), or `null` when any is not a count. */
function tokenFigures(raw: unknown): UsageFigures | null {
  const usage = record(raw);
  const figures = {
    inputTokens: count(usage?.inputTokens),
    outputTokens: count(usage?.outputTokens),
    cacheReadTokens: count(usage?.cacheReadTokens),
    cacheWriteTokens: count(usage?.cacheWriteTokens),
  };
  return figures.inputTokens === null ||
    figures.outputTokens === null ||
    figures.cacheReadTokens === null ||
    figures.cacheWriteTokens === null
    ? null
    : (figures as UsageFigures);
}

const NO_TOKENS: UsageFigures = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** Parses `_riot/usage` params; throws on anything else. */
export function parseUsage(raw: unknown): TurnUsage {
  const params = record(raw);
  const requests = count(params?.requests);
  const figures = tokenFigures(params?.usage);
  // A Riot before side usage leaves it out: none; anything sent must be figures.
  const side = params?.sideUsage === undefined ? NO_TOKENS : tokenFigures(params.sideUsage);
  // Unknown is null (or absent, from a Riot before costs); anything else must be dollars.
  const costUsd = params?.costUsd ?? null;
  if (
    typeof params?.sessionId !== "string" ||
    typeof params.model !== "string" ||
    (costUsd !== null && dollars(costUsd) === null) ||
    requests === null ||
    figures === null ||
    side === null
  ) {
    throw new MalformedNotificationError(USAGE, raw);
  }
  return {
    sessionId: params.sessionId,
    model: params.model,
    requests,
    ...figures,
    side,
    costUsd: costUsd === null ? null : (costUsd as number),
  };
}

const STRATEGIES: readonly CompactionStrategy[] = ["clear_tool_results", "summary"];

/** Parses `_riot/compaction` params; throws on anything else. */
export function parseCompaction(raw: unknown): CompactionNotice {
  const params = record(raw);
  const status = params?.status;
  const strategy = params?.strategy;
  const before = params?.tokensBefore;
  const after = params?.tokensAfter;
  if (
    typeof params?.sessionId !== "string" ||
    (status !== "compacting" && status !== "compacted") ||
    !STRATEGIES.includes(strategy as CompactionStrategy) ||
    (before !== undefined && count(before) === null) ||
    (after !== undefined && count(after) === null)
  ) {
    throw new MalformedNotificationError(COMPACTION, raw);
  }
  return {
    sessionId: params.sessionId,
    status,
    strategy: strategy as CompactionStrategy,
    tokensBefore: count(before),
    tokensAfter: count(after),
  };
}

/** The `_meta.riot` of the agent's capabilities (empty lists when absent). */
export function riotCapabilities(meta: unknown): RiotCapabilities {
  const riot = record(record(meta)?.riot);
  const names = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return { requests: names(riot?.requests), notifications: names(riot?.notifications) };
}

const REASON_KINDS: ReadonlySet<DecisionReason["kind"]> = new Set([
  "rule",
  "mode",
  "safety",
  "unverifiable",
  "consent",
  "classifier",
  "hook",
  "sandbox",
  "no_answer",
  "user",
]);

/**
 * The permission question's full detail, when Riot sends it in the
 * request's `_meta.riot.detail` (the resolved path, the command, the
 * reason); `null` when it does not.
 */
export function permissionDetail(meta: unknown): PermissionRequestDetail | null {
  const detail = record(record(record(meta)?.riot)?.detail);
  const reason = record(detail?.reason);
  if (
    detail === null ||
    typeof detail.tool_name !== "string" ||
    typeof detail.describe !== "string" ||
    typeof detail.message !== "string" ||
    typeof reason?.kind !== "string" ||
    !REASON_KINDS.has(reason.kind as DecisionReason["kind"]) ||
    typeof reason.detail !== "string"
  ) {
    return null;
  }
  return detail as unknown as PermissionRequestDetail;
}

function stringOrNull(value: unknown): string | null | undefined {
  if (value === null) return null;
  return typeof value === "string" ? value : undefined;
}

const KEY_STATUSES: readonly KeyStatus[] = ["present", "missing", "not-needed"];

/** Parses a `_riot/config` or `_riot/config_set` result; throws on anything else. */
export function parseModelConfig(method: string, raw: unknown): ModelConfig {
  const r = record(raw);
  const provider = stringOrNull(r?.provider);
  const baseUrl = stringOrNull(r?.baseUrl);
  const model = stringOrNull(r?.model);
  const keySource = stringOrNull(r?.keySource);
  const problem = stringOrNull(r?.problem);
  if (
    r === null ||
    provider === undefined ||
    baseUrl === undefined ||
    model === undefined ||
    !KEY_STATUSES.includes(r.key as KeyStatus) ||
    keySource === undefined ||
    typeof r.ready !== "boolean" ||
    problem === undefined
  ) {
    throw new MalformedResultError(method, raw);
  }
  // A provider Riot does not know (a typo in settings.json) comes with a
  // `problem`; the form shows that and offers the known ones, so the
  // person can fix it from here.
  const known = provider !== null && (PROVIDERS as readonly string[]).includes(provider);
  return {
    provider: known ? (provider as Provider) : null,
    baseUrl,
    model,
    key: r.key as KeyStatus,
    keySource,
    ready: r.ready,
    problem,
    ...desktopNotificationsOf(r.notifications),
  };
}

/** `{desktopNotifications}` from a `notifications` object with a boolean `desktop`; nothing otherwise. */
function desktopNotificationsOf(raw: unknown): { desktopNotifications?: boolean } {
  const desktop = record(raw)?.desktop;
  return typeof desktop === "boolean" ? { desktopNotifications: desktop } : {};
}

/** Parses a `_riot/files` result: the paths, best match first. */
export function parseFiles(raw: unknown): string[] {
  const files = record(raw)?.files;
  if (!Array.isArray(files) || !files.every((f): f is string => typeof f === "string")) {
    throw new MalformedResultError(FILES, raw);
  }
  return files;
}

/** The session's model from a `session/new` or `session/load` response's `_meta.riot.model`. */
export function sessionModel(meta: unknown): string | null {
  const model = record(record(meta)?.riot)?.model;
  return typeof model === "string" && model !== "" ? model : null;
}

/**
 * The session's OS sandbox as every face shows it ("sandboxed (bubblewrap)",
 * "sandboxed (Landlock)", "not sandboxed: REASON") from a `session/new`,
 * `session/load` or `session/resume` response's `_meta.riot.sandbox`.
 */
export function sessionSandbox(meta: unknown): string | null {
  const sandbox = record(record(meta)?.riot)?.sandbox;
  return typeof sandbox === "string" && sandbox !== "" ? sandbox : null;
}

/** What a session's config options offer the page (`configOptions` of `session/new`, `session/load`, `config_option_update`). */
export interface SessionOptions {
  /** The `model` option's choices: id and name, in Riot's order (configured models, then what the endpoint lists). */
  models: readonly { id: string; name: string }[];
  /** The `thinking` option's current level (`off`, `low`, `medium`, `high`); `null` when it is not offered (the model cannot think). */
  thinking: string | null;
}

/** The options the page shows from a `configOptions` list; `null` when there is none (an older Riot). */
export function sessionOptions(configOptions: unknown): SessionOptions | null {
  if (!Array.isArray(configOptions)) return null;
  const option = (id: string) => configOptions.map(record).find((o) => o?.id === id) ?? null;
  const model = option("model");
  const models = (Array.isArray(model?.options) ? model.options : [])
    .map(record)
    .flatMap((o) =>
      typeof o?.value === "string" ? [{ id: o.value, name: typeof o.name === "string" ? o.name : o.value }] : [],
    );
  const thinking = option("thinking")?.currentValue;
  return { models, thinking: typeof thinking === "string" ? thinking : null };
}

/** One user message a rewind can go back to (`_riot/checkpoints`). */
export interface RewindPoint {
  /** 1-based, as `_riot/rewind`'s `to` takes it. */
  number: number;
  text: string;
  atMs: number;
  /** Still in the conversation (after the last compaction or clear): the conversation can go back to it. */
  inHistory: boolean;
  /** Files the message's turn changed (project-relative, or absolute outside it). */
  files: string[];
  /** Calls of the turn that recorded a checkpoint. */
  calls: number;
  /** Calls whose end was never recorded (Riot was killed). */
  unfinished: number;
}

/** What a rewind takes back: files and conversation (the default), or one of them. */
export type RewindScope = "both" | "files" | "conversation";

export interface RewindOptions {
  scope?: RewindScope;
  /** Restore files the person changed after the agent too. */
  force?: boolean;
}

/** What a rewind did to the files (`null` in `RewindOutcome.files` when they were left alone). */
export interface RewindFiles {
  restored: string[];
  removed: string[];
  /** Changed by the person after the agent: left as they are unless forced. */
  conflicts: string[];
  /** Conflicts restored anyway (with `force`). */
  forced: string[];
  /** What it could not do, one sentence each. */
  notes: string[];
}

/** `_riot/rewind`'s result. */
export interface RewindResult {
  /** The message rewound to (just before it). */
  to: number;
  files: RewindFiles | null;
  /** The conversation was rewound (or, for an undo, restored). */
  conversation: boolean;
  /** The text of message `to`, to edit and send again. */
  prompt: string;
  /** The same as one paragraph for a person. */
  summary: string;
}

function strings(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v): v is string => typeof v === "string") ? value : null;
}

/** Parses a `_riot/checkpoints` result; throws on anything else. */
export function parseCheckpoints(raw: unknown): RewindPoint[] {
  const points = record(raw)?.points;
  if (!Array.isArray(points)) throw new MalformedResultError(CHECKPOINTS, raw);
  return points.map((item) => {
    const p = record(item);
    const number = count(p?.number);
    const atMs = count(p?.at_ms);
    const files = strings(p?.files);
    const calls = count(p?.calls);
    const unfinished = count(p?.unfinished);
    if (
      p === null ||
      number === null ||
      number < 1 ||
      typeof p.text !== "string" ||
      atMs === null ||
      typeof p.in_history !== "boolean" ||
      files === null ||
      calls === null ||
      unfinished === null
    ) {
      throw new MalformedResultError(CHECKPOINTS, raw);
    }
    return { number, text: p.text, atMs, inHistory: p.in_history, files, calls, unfinished };
  });
}

/** Parses a `_riot/rewind` result; throws on anything else. */
export function parseRewind(raw: unknown): RewindResult {
  const r = record(raw);
  const outcome = record(r?.outcome);
  const to = count(outcome?.to);
  const rawFiles = outcome?.files;
  let files: RewindFiles | null = null;
  if (rawFiles !== null) {
    const f = record(rawFiles);
    const lists = {
      restored: strings(f?.restored),
      removed: strings(f?.removed),
      conflicts: strings(f?.conflicts),
      forced: strings(f?.forced),
      notes: strings(f?.notes),
    };
    if (Object.values(lists).some((l) => l === null)) throw new MalformedResultError(REWIND, raw);
    files = lists as RewindFiles;
  }
  if (
    outcome === null ||
    to === null ||
    typeof outcome.conversation !== "boolean" ||
    typeof outcome.prompt !== "string" ||
    typeof r?.summary !== "string"
  ) {
    throw new MalformedResultError(REWIND, raw);
  }
  return { to, files, conversation: outcome.conversation, prompt: outcome.prompt, summary: r.summary };
}

/** Something happened in one of a session's terminals (`_riot/terminal`, docs/terminals.md). */
export interface TerminalNotice {
  sessionId: string;
  update: TerminalUpdate;
}

function exitOf(raw: unknown): TerminalExit | null {
  const exit = record(raw);
  const code = exit?.code ?? null;
  const signal = exit?.signal ?? null;
  const whole = (v: unknown) => v === null || (typeof v === "number" && Number.isSafeInteger(v));
  if (exit === null || !whole(code) || !whole(signal)) return null;
  return { code: code as number | null, signal: signal as number | null };
}

/** Parses a `_riot/terminal_resize` result (the size set); throws on anything else. */
export function parseTerminalResize(raw: unknown): TerminalSize {
  const answer = record(raw);
  const rows = count(answer?.rows);
  const cols = count(answer?.cols);
  if (rows === null || cols === null) throw new MalformedResultError(TERMINAL_RESIZE, raw);
  return { rows, cols };
}

/** Parses `_riot/terminal` params; throws on anything else. */
export function parseTerminal(raw: unknown): TerminalNotice {
  const params = record(raw);
  const u = record(params?.update);
  const bad = () => new MalformedNotificationError(TERMINAL, raw);
  if (typeof params?.sessionId !== "string" || u === null || typeof u.name !== "string") throw bad();
  const name = u.name;
  let update: TerminalUpdate;
  switch (u.type) {
    case "opened": {
      const size = record(u.size);
      const rows = count(size?.rows);
      const cols = count(size?.cols);
      if (typeof u.command !== "string" || rows === null || cols === null) throw bad();
      update = { type: "opened", name, command: u.command, size: { rows, cols } };
      break;
    }
    case "screen": {
      const rows = strings(u.rows);
      const cursorRow = count(u.cursor_row);
      const cursorCol = count(u.cursor_col);
      const scrolled = u.scrolled === undefined ? [] : strings(u.scrolled);
      if (
        rows === null ||
        scrolled === null ||
        cursorRow === null ||
        cursorCol === null ||
        typeof u.full_screen !== "boolean"
      ) {
        throw bad();
      }
      update = {
        type: "screen",
        name,
        rows,
        cursor_row: cursorRow,
        cursor_col: cursorCol,
        full_screen: u.full_screen,
        ...(scrolled.length > 0 ? { scrolled } : {}),
      };
      break;
    }
    case "resized": {
      const size = record(u.size);
      const rows = count(size?.rows);
      const cols = count(size?.cols);
      if (rows === null || cols === null) throw bad();
      update = { type: "resized", name, size: { rows, cols } };
      break;
    }
    case "exited": {
      const exit = exitOf(u.exit);
      if (exit === null) throw bad();
      update = { type: "exited", name, exit };
      break;
    }
    case "closed":
      update = { type: "closed", name };
      break;
    default:
      throw bad();
  }
  return { sessionId: params.sessionId, update };
}
