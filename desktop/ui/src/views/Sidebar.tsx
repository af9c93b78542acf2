import type { SessionInfo } from "../bridge";

interface Props {
  sessions: readonly SessionInfo[];
  currentId: string | null;
  projectDir: string;
  connected: boolean;
  onProjectDir(dir: string): void;
  onNew(): void;
  onOpen(session: SessionInfo): void;
}

function basename(path: string): string {
  return path.replace(/\/+$/, "").split("/").pop() || path;
}

function when(updatedAt: string | null | undefined): string {
  if (!updatedAt) return "";
  const date = new Date(updatedAt);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString();
}

/** Sessions grouped by project, newest first, and a way to start one. */
export function Sidebar({ sessions, currentId, projectDir, connected, onProjectDir, onNew, onOpen }: Props) {
  const projects = new Map<string, SessionInfo[]>();
  for (const session of sessions) {
    const list = projects.get(session.cwd) ?? [];
    list.push(session);
    projects.set(session.cwd, list);
  }
  return (
    <aside className="sidebar">
      <form
        className="new-session"
        onSubmit={(e) => {
          e.preventDefault();
          onNew();
        }}
      >
        <label htmlFor="project-dir">Project directory</label>
        <input
          id="project-dir"
          type="text"
          spellCheck={false}
          placeholder="/path/to/project"
          value={projectDir}
          onChange={(e) => onProjectDir(e.target.value)}
        />
        <button type="submit" disabled={!connected}>
          New session
        </button>
      </form>
      <nav className="sessions" aria-label="Sessions">
        {sessions.length === 0 && <p className="empty">No sessions yet.</p>}
        {[...projects.entries()].map(([cwd, list]) => (
          <section key={cwd} className="project">
            <h3 className="project-name" title={cwd}>
              {basename(cwd)}
            </h3>
            <ul>
              {list.map((session) => (
                <li key={session.sessionId}>
                  <button
                    type="button"
                    className={session.sessionId === currentId ? "session current" : "session"}
                    aria-current={session.sessionId === currentId ? "page" : undefined}
                    data-session-id={session.sessionId}
                    disabled={!connected}
                    onClick={() => onOpen(session)}
                  >
                    <span className="session-title">{session.title || "Untitled session"}</span>
                    <span className="session-when">{when(session.updatedAt)}</span>
                  </button>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </nav>
    </aside>
  );
}
