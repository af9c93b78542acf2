import { useState } from "react";

import { worktreeOf, type SessionInfo } from "../bridge";
import { WorktreeBadge } from "./WorktreeBadge";

interface Props {
  sessions: readonly SessionInfo[];
  currentId: string | null;
  projectDir: string;
  connected: boolean;
  /** Riot offers `_riot/session_rename` / `_riot/session_delete`. */
  canRename: boolean;
  canDelete: boolean;
  onProjectDir(dir: string): void;
  /** The desktop shell's folder picker; absent in a plain browser. */
  onChooseFolder?: (() => void) | undefined;
  onNew(): void;
  /** Starts a session in a new git worktree: its name, or "" for one Riot picks. */
  onNewWorktree?: ((name: string) => void) | undefined;
  onOpen(session: SessionInfo): void;
  onRename(sessionId: string, title: string): void;
  onDelete(sessionId: string): void;
}

function basename(path: string): string {
  return path.replace(/\/+$/, "").split("/").pop() || path;
}

function when(updatedAt: string | null | undefined): string {
  if (!updatedAt) return "";
  const date = new Date(updatedAt);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}

interface RowProps {
  session: SessionInfo;
  current: boolean;
  connected: boolean;
  canRename: boolean;
  canDelete: boolean;
  onOpen(): void;
  onRename(title: string): void;
  onDelete(): void;
}

/** One session: click opens it; rename edits in place (Enter saves, Escape cancels); delete asks first. */
function SessionRow({ session, current, connected, canRename, canDelete, onOpen, onRename, onDelete }: RowProps) {
  const [mode, setMode] = useState<"view" | "rename" | "delete">("view");
  const title = session.title || "Untitled session";

  if (mode === "rename") {
    return (
      <li className="session-row">
        <input
          className="session-rename"
          aria-label="Session title"
          defaultValue={session.title ?? ""}
          autoFocus
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              onRename(e.currentTarget.value);
              setMode("view");
            } else if (e.key === "Escape") {
              e.preventDefault();
              setMode("view");
            }
          }}
          onBlur={() => setMode("view")}
        />
      </li>
    );
  }

  return (
    <li className={current ? "session-row current" : "session-row"}>
      <button
        type="button"
        className={current ? "session current" : "session"}
        aria-current={current ? "page" : undefined}
        data-session-id={session.sessionId}
        disabled={!connected}
        onClick={onOpen}
      >
        <span className="session-title">{title}</span>
        <WorktreeBadge worktree={worktreeOf(session._meta)} />
        <span className="session-when">{when(session.updatedAt)}</span>
      </button>
      {mode === "delete" ? (
        <div
          className="session-confirm"
          role="group"
          aria-label={`Delete “${title}”?`}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              setMode("view");
            }
          }}
        >
          <span>Delete this session?</span>
          <button
            type="button"
            className="danger"
            onClick={() => {
              setMode("view");
              onDelete();
            }}
          >
            Delete
          </button>
          <button type="button" autoFocus onClick={() => setMode("view")}>
            Keep
          </button>
        </div>
      ) : (
        (canRename || canDelete) && (
          <div className="session-actions">
            {canRename && (
              <button
                type="button"
                aria-label={`Rename “${title}”`}
                title="Rename"
                disabled={!connected}
                onClick={() => setMode("rename")}
              >
                ✎
              </button>
            )}
            {canDelete && (
              <button
                type="button"
                aria-label={`Delete “${title}”`}
                title="Delete"
                disabled={!connected}
                onClick={() => setMode("delete")}
              >
                ×
              </button>
            )}
          </div>
        )
      )}
    </li>
  );
}

/** Sessions grouped by project, newest first, and a way to start one. */
export function Sidebar({
  sessions,
  currentId,
  projectDir,
  connected,
  canRename,
  canDelete,
  onProjectDir,
  onChooseFolder,
  onNew,
  onNewWorktree,
  onOpen,
  onRename,
  onDelete,
}: Props) {
  /** The worktree form is open: the name typed so far. */
  const [worktreeName, setWorktreeName] = useState<string | null>(null);
  // A session in a worktree is listed under the project it was made from.
  const projects = new Map<string, SessionInfo[]>();
  for (const session of sessions) {
    const project = worktreeOf(session._meta)?.project ?? session.cwd;
    const list = projects.get(project) ?? [];
    list.push(session);
    projects.set(project, list);
  }
  return (
    <aside className="sidebar" id="sidebar" aria-label="Sessions and projects">
      <form
        className="new-session"
        onSubmit={(e) => {
          e.preventDefault();
          onNew();
        }}
      >
        <label htmlFor="project-dir">Project directory</label>
        <div className="project-dir-row">
          <input
            id="project-dir"
            type="text"
            spellCheck={false}
            placeholder="/path/to/project"
            value={projectDir}
            onChange={(e) => onProjectDir(e.target.value)}
          />
          {onChooseFolder !== undefined && (
            <button type="button" className="choose-folder" onClick={onChooseFolder}>
              Choose…
            </button>
          )}
        </div>
        <button type="submit" disabled={!connected}>
          New session
        </button>
        {onNewWorktree !== undefined && worktreeName === null && (
          <button
            type="button"
            className="new-worktree"
            disabled={!connected}
            title="Start a session in a new git worktree of the project, on a branch of its own"
            onClick={() => setWorktreeName("")}
          >
            New worktree session…
          </button>
        )}
      </form>
      {onNewWorktree !== undefined && worktreeName !== null && (
        <form
          className="new-worktree-form"
          aria-label="New session in a worktree"
          onSubmit={(e) => {
            e.preventDefault();
            const name = worktreeName.trim();
            setWorktreeName(null);
            onNewWorktree(name);
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              setWorktreeName(null);
            }
          }}
        >
          <label htmlFor="worktree-name">Worktree name (empty: Riot picks one)</label>
          <input
            id="worktree-name"
            type="text"
            spellCheck={false}
            autoFocus
            placeholder="fix-login"
            value={worktreeName}
            onChange={(e) => setWorktreeName(e.target.value)}
          />
          <div className="new-worktree-buttons">
            <button type="submit" disabled={!connected}>
              Start in worktree
            </button>
            <button type="button" onClick={() => setWorktreeName(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <nav className="sessions" aria-label="Sessions">
        {sessions.length === 0 && <p className="empty">No sessions yet.</p>}
        {[...projects.entries()].map(([cwd, list]) => (
          <section key={cwd} className="project">
            <h3 className="project-name" title={cwd}>
              {basename(cwd)}
            </h3>
            <ul>
              {list.map((session) => (
                <SessionRow
                  key={session.sessionId}
                  session={session}
                  current={session.sessionId === currentId}
                  connected={connected}
                  canRename={canRename}
                  canDelete={canDelete}
                  onOpen={() => onOpen(session)}
                  onRename={(title) => onRename(session.sessionId, title)}
                  onDelete={() => onDelete(session.sessionId)}
                />
              ))}
            </ul>
          </section>
        ))}
      </nav>
    </aside>
  );
}
