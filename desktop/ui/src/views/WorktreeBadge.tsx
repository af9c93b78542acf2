import type { SessionWorktree } from "../bridge";

/**
 * The git worktree a session works in: its name and branch, the path on
 * hover (docs/parallel.md). Nothing for a session in the project's own
 * checkout.
 */
export function WorktreeBadge({ worktree }: { worktree: SessionWorktree | null }) {
  if (worktree === null) return null;
  return (
    <span
      className="worktree-badge"
      data-testid="worktree"
      title={`Works in the git worktree ${worktree.name} at ${worktree.path}, on the branch ${worktree.branch}`}
    >
      <span aria-hidden="true">⎇ </span>
      <span className="worktree-name">{worktree.name}</span>
      <span className="worktree-branch">{worktree.branch}</span>
    </span>
  );
}
