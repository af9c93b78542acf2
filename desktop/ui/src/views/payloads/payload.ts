// Riot's structured tool payload (docs/design.md §6.2) arrives as a tool
// call's `rawOutput`, and as a permission question's preview (in
// `_meta.riot.detail.preview`). Its type is generated from schemas/ui_payload.json;
// this checks that a value really has that shape before a renderer
// trusts it, so a payload from a newer Riot shows as "not shown" rather
// than breaking the conversation.

import type { UiPayload } from "../../generated/ui_payload";

export type { UiPayload };
export type PayloadOf<K extends UiPayload["type"]> = Extract<UiPayload, { type: K }>;

type Fields = Record<string, unknown>;

const isString = (v: unknown): v is string => typeof v === "string";
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;
const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isOptional = (check: (v: unknown) => boolean) => (v: unknown) => v === undefined || v === null || check(v);
const isInteger = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isArrayOf = (check: (v: unknown) => boolean) => (v: unknown) => Array.isArray(v) && v.every(check);
const isRecord = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v);
const shape = (fields: Record<string, (v: unknown) => boolean>) => (v: unknown) =>
  isRecord(v) && Object.entries(fields).every(([name, check]) => check(v[name]));

const isDiffLine = shape({ kind: (k) => k === "context" || k === "added" || k === "removed", text: isString });
const isHunk = shape({
  old_start: isCount,
  old_lines: isCount,
  new_start: isCount,
  new_lines: isCount,
  lines: isArrayOf(isDiffLine),
});
const isMatch = shape({ path: isString, line: isOptional(isCount), text: isOptional(isString), count: isOptional(isCount) });
const isTodo = shape({
  content: isString,
  status: (s) => s === "pending" || s === "in_progress" || s === "completed",
  activeForm: isOptional(isString),
});

const SHAPES: { [K in UiPayload["type"]]: (v: Fields) => boolean } = {
  file_read: shape({ path: isString, start_line: isCount, lines: isCount, total_lines: isCount, truncated: isBool }),
  image_read: shape({ path: isString, media_type: isString, bytes: isCount }),
  notebook_read: shape({
    path: isString,
    cells: isArrayOf(shape({ id: isString, cell_type: isString, lines: isCount, outputs: isCount })),
  }),
  pdf_read: shape({ path: isString, first_page: isCount, last_page: isCount, total_pages: isCount }),
  document_read: shape({ path: isString, summary: isString }),
  file_diff: shape({ path: isString, created: isBool, hunks: isArrayOf(isHunk) }),
  notebook_cell_diff: shape({ path: isString, cell_id: isString, hunks: isArrayOf(isHunk) }),
  command: shape({
    command: isString,
    exit_code: isOptional(isInteger),
    stdout: isString,
    stderr: isString,
    truncated: isBool,
    timed_out: isBool,
    background_id: isOptional(isString),
  }),
  file_list: shape({ pattern: isString, paths: isArrayOf(isString), total: isCount, truncated: isBool }),
  search_results: shape({ pattern: isString, matches: isArrayOf(isMatch), total: isCount, truncated: isBool }),
  todos: shape({ todos: isArrayOf(isTodo) }),
  text: shape({ text: isString }),
  web_page: shape({
    url: isString,
    status: isCount,
    bytes: isCount,
    content_type: isOptional(isString),
    title: isOptional(isString),
    redirect: isOptional(isString),
    truncated: isBool,
    cached: isBool,
  }),
  web_results: shape({ query: isString, results: isArrayOf(shape({ title: isString, url: isString, snippet: isString })) }),
  diagnostics: shape({
    checkers: isArrayOf(isString),
    diagnostics: isArrayOf(
      shape({
        path: isString,
        line: isCount,
        column: isCount,
        severity: (s) => s === "error" || s === "warning" || s === "info" || s === "hint",
        code: isOptional(isString),
        message: isString,
        source: isString,
      }),
    ),
    total: isCount,
    truncated: isBool,
  }),
};

/** `raw` as a UI payload, or `null` when it is not one this UI knows. */
export function asUiPayload(raw: unknown): UiPayload | null {
  if (!isRecord(raw) || !isString(raw.type) || !Object.hasOwn(SHAPES, raw.type)) return null;
  const check = SHAPES[raw.type as UiPayload["type"]];
  return check(raw) ? (raw as unknown as UiPayload) : null;
}
