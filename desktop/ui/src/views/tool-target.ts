// What a tool call acts on, in the words the permission dialog must use
// (docs/design.md §9): the resolved absolute path of a file tool, or the
// full command of a shell tool.

import { permissionDetail, type ToolCallUpdate } from "../bridge";

export type ToolTarget =
  | { kind: "command"; command: string }
  | { kind: "path"; path: string; resolvedBy: "riot" | "ui" }
  | { kind: "none" };

function field(input: unknown, name: string): string | null {
  if (typeof input !== "object" || input === null) return null;
  const value = (input as Record<string, unknown>)[name];
  return typeof value === "string" && value !== "" ? value : null;
}

/** `path` against `cwd`, with `.` and `..` segments resolved (no symlinks: only Riot can see those). */
export function joinPath(cwd: string, path: string): string {
  const absolute = path.startsWith("/") ? path : `${cwd.replace(/\/+$/, "")}/${path}`;
  const parts: string[] = [];
  for (const part of absolute.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** The target of `call` in a session working in `cwd`. */
export function toolTarget(call: Pick<ToolCallUpdate, "rawInput" | "locations" | "_meta">, cwd: string): ToolTarget {
  const detail = permissionDetail(call._meta);
  if (detail?.command) return { kind: "command", command: detail.command };
  if (detail?.path) return { kind: "path", path: detail.path, resolvedBy: "riot" };
  const command = field(call.rawInput, "command");
  if (command !== null) return { kind: "command", command };
  const located = call.locations?.[0]?.path;
  if (located && located.startsWith("/")) return { kind: "path", path: located, resolvedBy: "riot" };
  const path =
    field(call.rawInput, "file_path") ?? field(call.rawInput, "notebook_path") ?? field(call.rawInput, "path");
  if (path !== null) return { kind: "path", path: joinPath(cwd, path), resolvedBy: "ui" };
  return { kind: "none" };
}
