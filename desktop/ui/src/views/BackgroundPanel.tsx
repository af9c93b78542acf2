import type { BackgroundTask } from "../bridge/parallel";

interface Props {
  tasks: readonly BackgroundTask[];
  /** Ids the person asked to stop that have not ended yet. */
  stopping: readonly string[];
  /** Riot takes `_riot/background_stop` and the connection is open. */
  canStop: boolean;
  onStop(id: string): void;
}

const STATE_WORDS: Record<BackgroundTask["state"], string> = {
  running: "running",
  completed: "done",
  failed: "failed",
  stopped: "stopped",
};

function calls(n: number): string {
  return n === 1 ? "1 tool call" : `${n} tool calls`;
}

/**
 * The session's background agents (Task calls run in the background):
 * what each does, where it stands, its latest tool call, and a Stop
 * button while it runs. Its result reaches the agent by itself.
 */
export function BackgroundPanel({ tasks, stopping, canStop, onStop }: Props) {
  if (tasks.length === 0) return null;
  const running = tasks.filter((t) => t.state === "running").length;
  return (
    <section className="background" aria-label="Background agents">
      <div className="background-head">
        {running === 0
          ? "Background agents — none running"
          : `Background agents — ${running} running`}
      </div>
      <ul className="background-list">
        {tasks.map((task) => {
          const isStopping = stopping.includes(task.id);
          return (
            <li key={task.id} className={`background-task background-${task.state}`} aria-label={`${task.id}: ${task.description}`}>
              <span className="background-title">
                <span className="background-id">{task.id}</span> {task.description}{" "}
                <span className="background-agent">({task.agent})</span>
              </span>
              <span className="background-state">
                {isStopping && task.state === "running" ? "stopping…" : STATE_WORDS[task.state]} · {calls(task.calls)}
              </span>
              {task.state === "running" && task.last !== null && <span className="background-last">{task.last}</span>}
              {task.state !== "running" && task.result !== null && (
                <details className="background-result">
                  <summary>{task.state === "failed" ? "Why it failed" : "Result"}</summary>
                  <pre>{task.result}</pre>
                </details>
              )}
              {task.state === "running" && (
                <button
                  type="button"
                  aria-label={`Stop ${task.id}: ${task.description}`}
                  disabled={!canStop || isStopping}
                  onClick={() => onStop(task.id)}
                >
                  {isStopping ? "Stopping…" : "Stop"}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
