import type { QueuedPrompt } from "../state/store";

interface Props {
  queue: readonly QueuedPrompt[];
  /** The last turn was stopped or failed: nothing is sent until the person resumes. */
  held: boolean;
  onRemove(key: string): void;
  onResume(): void;
}

/** Messages written while a turn runs, in the order they will be sent; each can be taken out. */
export function QueuePanel({ queue, held, onRemove, onResume }: Props) {
  if (queue.length === 0) return null;
  return (
    <section className="queue" aria-label="Queued messages">
      <div className="queue-head">
        <span>{held ? "Queued — held because the last turn did not finish" : "Queued — sent when the turn ends"}</span>
        {held && (
          <button type="button" onClick={onResume}>
            Resume queue
          </button>
        )}
      </div>
      <ol className="queue-list">
        {queue.map((queued) => (
          <li key={queued.key} className="queued">
            <span className="queued-text">
              {queued.text}
              {queued.images.length > 0 && (
                <span className="badge">{queued.images.length === 1 ? "+1 image" : `+${queued.images.length} images`}</span>
              )}
            </span>
            <button type="button" aria-label={`Remove from queue: ${queued.text}`} onClick={() => onRemove(queued.key)}>
              ×
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
