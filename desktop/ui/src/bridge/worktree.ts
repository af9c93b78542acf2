// Sessions in git worktrees (docs/parallel.md): `session/new` asks for one
// with `_meta.riot.worktree` (a name, or "" for a name Riot picks) and the
// answer names it in its own `_meta.riot.worktree`; `session/list`
// entries of such sessions carry the same object. It arrives from another
// process, so it is checked field by field.

/** The git worktree a session works in. */
export interface SessionWorktree {
  /** The worktree's name (`riot worktree list`). */
  name: string;
  /** Its branch, e.g. `riot/fix-login`. */
  branch: string;
  /** Its top directory (under Riot's home, never inside the project). */
  path: string;
  /** The checkout it was made from, when Riot says. */
  project: string | null;
  /** Where the session works in it (answers of `session/new` only). */
  cwd: string | null;
  /**
   * False when Riot says the worktree was removed (listed sessions): the
   * session cannot be reopened there.
   */
  present: boolean;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** `_meta.riot.worktree` of an answer or a listed session; `null` when absent or malformed. */
export function worktreeOf(meta: unknown): SessionWorktree | null {
  const riot = typeof meta === "object" && meta !== null ? (meta as { riot?: unknown }).riot : undefined;
  const raw = typeof riot === "object" && riot !== null ? (riot as { worktree?: unknown }).worktree : undefined;
  if (typeof raw !== "object" || raw === null) return null;
  const w = raw as Record<string, unknown>;
  const name = text(w.name);
  const branch = text(w.branch);
  const path = text(w.path);
  if (name === null || branch === null || path === null) return null;
  return { name, branch, path, project: text(w.project), cwd: text(w.cwd), present: w.present !== false };
}

/**
 * `_meta` asking `session/new` for a worktree: `name` trimmed, empty for
 * a name Riot picks.
 */
export function worktreeRequestMeta(name: string): Record<string, unknown> {
  return { riot: { worktree: name.trim() } };
}
