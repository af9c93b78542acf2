import { useEffect, useId, useRef, useState } from "react";

import type { RewindPoint, RewindResult, RewindScope } from "../bridge";
import { inFront, useModalFocus } from "./focus";

const SCOPES: readonly { value: RewindScope; label: string }[] = [
  { value: "both", label: "Files and conversation" },
  { value: "files", label: "Files only" },
  { value: "conversation", label: "Conversation only" },
];

/** A failure as one sentence for a person: Riot's words, capitalized and ended. */
export function sentence(error: unknown): string {
  const raw = (error instanceof Error ? error.message : String(error)).trim();
  if (raw === "") return "The rewind failed.";
  const first = raw.charAt(0).toUpperCase() + raw.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The files a rewind to `to` restores: those the turns of `to` and later changed, each once. */
export function filesFrom(points: readonly RewindPoint[], to: number): string[] {
  return [...new Set(points.filter((p) => p.number >= to).flatMap((p) => p.files))];
}

interface Props {
  /** The session's rewind points (`_riot/checkpoints`). */
  load(): Promise<RewindPoint[]>;
  /** Rewinds (`_riot/rewind`) and reloads the session; rejects with Riot's refusal. */
  rewind(to: number, scope: RewindScope, force: boolean): Promise<RewindResult>;
  /** A turn runs in the session: nothing can be rewound until it ends. */
  running: boolean;
  onClose(): void;
}

/**
 * The web UI's `/rewind`: pick one of your messages and what to take back
 * (files and conversation, files only, conversation only); the session goes
 * back to just before it. Files you changed after the agent are left and
 * listed, with a way to restore them anyway.
 */
export function RewindDialog({ load, rewind, running, onClose }: Props) {
  const [points, setPoints] = useState<RewindPoint[] | null>(null);
  const [chosen, setChosen] = useState<number | null>(null);
  const [scope, setScope] = useState<RewindScope>("both");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<RewindResult | null>(null);
  /** The choice the result answers (a forced rerun repeats it). */
  const [done, setDone] = useState<{ to: number; scope: RewindScope } | null>(null);
  const id = useId();
  const dialog = useRef<HTMLDivElement>(null);
  useModalFocus(dialog);

  useEffect(() => {
    let live = true;
    load().then(
      (found) => {
        if (!live) return;
        setPoints(found);
        setChosen(found[found.length - 1]?.number ?? null);
      },
      (e: unknown) => {
        if (live) setError(sentence(e));
      },
    );
    return () => {
      live = false;
    };
  }, [load]);

  const close = useRef(onClose);
  useEffect(() => {
    close.current = busy ? () => {} : onClose;
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented || !inFront(dialog.current)) return;
      e.preventDefault();
      close.current();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const go = async (to: number, how: RewindScope, force: boolean) => {
    setBusy(true);
    setError(null);
    try {
      setResult(await rewind(to, how, force));
      setDone({ to, scope: how });
    } catch (e) {
      setError(sentence(e));
    } finally {
      setBusy(false);
    }
  };

  const point = points?.find((p) => p.number === chosen) ?? null;
  const conversation = scope !== "files";
  // The conversation cannot go back past a compaction or a clear.
  const blocked = point !== null && conversation && !point.inHistory;
  const files = result?.files ?? null;
  const leftAlone = files === null ? [] : files.conflicts.filter((f) => !files.forced.includes(f));

  return (
    <div className="modal-backdrop">
      <div
        className="rewind-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-heading`}
        data-testid="rewind-dialog"
        tabIndex={-1}
        ref={dialog}
      >
        <h2 id={`${id}-heading`}>Rewind</h2>
        {result === null ? (
          <>
            <p className="rewind-intro">
              Go back to just before one of your messages. Only files the agent changed are restored, and the
              conversation from that message on is withdrawn.
            </p>
            {points === null && error === null && <p className="rewind-loading">Reading the checkpoints…</p>}
            {points !== null && points.length === 0 && (
              <p className="rewind-empty">This session has no message to rewind to yet.</p>
            )}
            {points !== null && points.length > 0 && (
              <fieldset className="rewind-points">
                <legend>Your messages</legend>
                <ol>
                  {points.map((p) => (
                    <li key={p.number} data-testid="rewind-point">
                      <label>
                        <input
                          type="radio"
                          name={`${id}-point`}
                          value={p.number}
                          checked={chosen === p.number}
                          disabled={busy}
                          onChange={() => setChosen(p.number)}
                        />
                        <span className="rewind-number">{p.number}</span>
                        <span className="rewind-text">{firstLine(p.text)}</span>
                      </label>
                      <span className="rewind-files" data-testid="rewind-files">
                        {p.files.length === 0 ? "no files changed" : p.files.join(", ")}
                      </span>
                      {!p.inHistory && (
                        <span className="rewind-note">before a compaction or clear: files only</span>
                      )}
                    </li>
                  ))}
                </ol>
              </fieldset>
            )}
            {points !== null && points.length > 0 && (
              <fieldset className="rewind-scope">
                <legend>Take back</legend>
                {SCOPES.map((s) => (
                  <label key={s.value}>
                    <input
                      type="radio"
                      name={`${id}-scope`}
                      value={s.value}
                      checked={scope === s.value}
                      disabled={busy}
                      onChange={() => setScope(s.value)}
                    />
                    {s.label}
                  </label>
                ))}
              </fieldset>
            )}
            {point !== null && scope !== "conversation" && points !== null && (
              <p className="rewind-restores" data-testid="rewind-restores">
                {filesFrom(points, point.number).length === 0
                  ? "No file was changed from this message on."
                  : `Files to restore: ${filesFrom(points, point.number).join(", ")}.`}
              </p>
            )}
            {blocked && (
              <p className="rewind-error">
                The conversation cannot go back before a compaction or clear; choose files only, or a later message.
              </p>
            )}
            {running && <p className="rewind-error">A turn is running; rewind when it ends.</p>}
          </>
        ) : (
          <>
            <p className="rewind-summary" data-testid="rewind-summary">
              {result.summary}
            </p>
            {leftAlone.length > 0 && (
              <div className="rewind-conflicts" data-testid="rewind-conflicts">
                <p>You changed these files after the agent, so they were left as they are:</p>
                <ul>
                  {leftAlone.map((f) => (
                    <li key={f}>{f}</li>
                  ))}
                </ul>
              </div>
            )}
          </>
        )}
        {error !== null && (
          <p className="rewind-error" role="alert" data-testid="rewind-error">
            {error}
          </p>
        )}
        <div className="rewind-actions">
          {result === null ? (
            <>
              <button type="button" onClick={onClose} disabled={busy}>
                Cancel
              </button>
              <button
                type="button"
                className="primary"
                disabled={busy || running || chosen === null || blocked}
                onClick={() => chosen !== null && void go(chosen, scope, false)}
              >
                {busy ? "Rewinding…" : "Rewind"}
              </button>
            </>
          ) : (
            <>
              {leftAlone.length > 0 && done !== null && (
                <button
                  type="button"
                  className="option-reject"
                  disabled={busy || running}
                  title="Undoes this rewind and rewinds again over your changes; undoing that gives your version back"
                  onClick={() => void go(done.to, done.scope, true)}
                >
                  {busy ? "Restoring…" : "Restore them anyway (force)"}
                </button>
              )}
              <button type="button" className="primary" onClick={onClose} disabled={busy}>
                Close
              </button>
            </>
          )}
        </div>
      </div>
    </div>
  );
}
