import { useState } from "react";

import type { QueuedPrompt } from "../state/store";

interface Props {
  queue: readonly QueuedPrompt[];
  /** The last turn was stopped or failed, or the session was opened with messages waiting: nothing is sent until the person resumes. */
  held: boolean;
  /** Resume queue can send what waits now (the person's held messages, or Riot's held results alone). */
  resumable: boolean;
  onRemove(id: string): void;
  onEdit(id: string, text: string): void;
  onResume(): void;
}

/** "Background task bg_1's result" for the message Riot queues when a background agent ends. */
function riotLabel(text: string): string {
  const id = /^<background-task id="([^"]+)"/.exec(text)?.[1];
  return id === undefined ? "A message from Riot" : `Background task ${id}'s result`;
}

/**
 * The session's queue as Riot keeps it: messages written while a turn
 * runs, in order. Riot gives them to the agent after its next tool
 * results, or they are sent when the turn ends. The person's can be
 * edited or taken out; a background agent's result Riot queued is shown,
 * not changed, and one Riot holds after a stop is marked as waiting for
 * the person's next message (or Resume queue).
 */
export function QueuePanel({ queue, held, resumable, onRemove, onEdit, onResume }: Props) {
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  if (queue.length === 0) return null;
  const save = () => {
    if (editing === null) return;
    if (editing.text.trim() !== "") onEdit(editing.id, editing.text);
    setEditing(null);
  };
  return (
    <section className="queue" aria-label="Queued messages">
      <div className="queue-head">
        <span>
          {held
            ? "Queued — held until you resume"
            : queue.every((m) => m.held)
              ? "Held after a stop — goes with your next message"
              : "Queued — given to Riot after its next tool results, or sent when the turn ends"}
        </span>
        {resumable && (
          <button type="button" onClick={onResume}>
            Resume queue
          </button>
        )}
      </div>
      <ol className="queue-list">
        {queue.map((queued) =>
          queued.origin === "riot" ? (
            <li key={queued.id} className="queued queued-riot">
              <span className="queued-text" title={queued.text}>
                {riotLabel(queued.text)}
              </span>
              <span className="badge">{queued.held ? "held: goes with your next message" : "waits for the agent"}</span>
            </li>
          ) : editing?.id === queued.id ? (
            <li key={queued.id} className="queued">
              <input
                className="queued-edit"
                aria-label="Edit queued message"
                value={editing.text}
                autoFocus
                onChange={(e) => setEditing({ id: queued.id, text: e.target.value })}
                onKeyDown={(e) => {
                  if (e.key === "Enter") {
                    e.preventDefault();
                    save();
                  } else if (e.key === "Escape") {
                    e.preventDefault();
                    setEditing(null);
                  }
                }}
              />
              <button type="button" onClick={save} disabled={editing.text.trim() === ""}>
                Save
              </button>
            </li>
          ) : (
            <li key={queued.id} className="queued">
              <span className="queued-text">{queued.text}</span>
              <button
                type="button"
                aria-label={`Edit queued message: ${queued.text}`}
                onClick={() => setEditing({ id: queued.id, text: queued.text })}
              >
                Edit
              </button>
              <button type="button" aria-label={`Remove from queue: ${queued.text}`} onClick={() => onRemove(queued.id)}>
                ×
              </button>
            </li>
          ),
        )}
      </ol>
    </section>
  );
}
