import type { SessionWorktree } from "../bridge";

/**
 * The git worktree a session works in: its name and branch, the path on
 * hover (docs/parallel.md); "removed" when Riot says the worktree is gone.
 * Nothing for a session in the project's own checkout.
 */
export function WorktreeBadge({ worktree }: { worktree: SessionWorktree | null }) {
  if (worktree === null) return null;
  const title = worktree.present
    ? `Works in the git worktree ${worktree.name} at ${worktree.path}, on the branch ${worktree.branch}`
    : `Worked in the git worktree ${worktree.name}, which was removed: the session cannot be reopened there (its branch ${worktree.branch}, if kept, holds what it committed)`;
  return (
    <span className={worktree.present ? "worktree-badge" : "worktree-badge worktree-gone"} data-testid="worktree" title={title}>
      <span aria-hidden="true">⎇ </span>
      <span className="worktree-name">{worktree.name}</span>
      <span className="worktree-branch">{worktree.branch}</span>
      {worktree.present ? null : <span className="worktree-removed">removed</span>}
    </span>
  );
}
