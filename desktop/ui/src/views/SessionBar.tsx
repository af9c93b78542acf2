import { useEffect, useId, useState } from "react";

import type { SessionModeState, TurnUsage } from "../bridge";
import type { UsageFigures as TokenFigures } from "../generated/riot_methods";
import type { UsageTotals } from "../state/store";

function n(value: number): string {
  return value.toLocaleString("en");
}

/** The session's permission mode, switched with `session/set_mode`. */
export function ModeSelector({ modes, onChange }: { modes: SessionModeState; onChange(id: string): void }) {
  const current = modes.availableModes.find((m) => m.id === modes.currentModeId);
  return (
    <label className="mode-selector" title={current?.description ?? undefined}>
      <span>Mode</span>
      <select aria-label="Mode" value={modes.currentModeId} onChange={(e) => onChange(e.target.value)}>
        {modes.availableModes.map((mode) => (
          <option key={mode.id} value={mode.id}>
            {mode.name}
          </option>
        ))}
      </select>
    </label>
  );
}

interface ModelProps {
  model: string | null;
  /** Models seen in this session, offered as suggestions. */
  models: readonly string[];
  /** Riot offers `_riot/set_model`. */
  editable: boolean;
  onChange(model: string): void;
}

/**
 * The session's model. Editable when Riot can switch it: type a name (or
 * pick one seen this session) and press Enter; Escape or leaving the
 * field puts the current one back. (Keyed by the model: a change resets it.)
 */
export function ModelSelector({ model, models, editable, onChange }: ModelProps) {
  const [draft, setDraft] = useState(model ?? "");
  const listId = useId();
  if (!editable) {
    return model === null ? null : (
      <span className="model-selector" data-testid="model">
        <span>Model</span> <b>{model}</b>
      </span>
    );
  }
  return (
    <label className="model-selector" title="Enter applies the model from the next request">
      <span>Model</span>
      <input
        aria-label="Model"
        list={listId}
        spellCheck={false}
        placeholder="model name"
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            const wanted = draft.trim();
            if (wanted !== "" && wanted !== model) onChange(wanted);
          } else if (e.key === "Escape") {
            // Escape here is for the field, not for the turn.
            e.preventDefault();
            setDraft(model ?? "");
          }
        }}
        onBlur={() => setDraft(model ?? "")}
      />
      <datalist id={listId}>
        {models.map((m) => (
          <option key={m} value={m} />
        ))}
      </datalist>
    </label>
  );
}

/** The thinking levels Riot offers, in order. */
const THINKING_LEVELS = ["off", "low", "medium", "high"] as const;

/**
 * How hard the session's model thinks before it answers (Riot's
 * `thinking` config option: Anthropic's thinking budget, OpenAI's
 * reasoning effort). Shown only while the model can think.
 */
export function ThinkingSelector({
  level,
  disabled,
  onChange,
}: {
  level: string;
  disabled: boolean;
  onChange(level: string): void;
}) {
  return (
    <label className="thinking-selector" title="From the next request; a turn running now keeps its level">
      <span>Thinking</span>
      <select aria-label="Thinking" value={level} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
        {THINKING_LEVELS.map((l) => (
          <option key={l} value={l}>
            {l[0]!.toUpperCase() + l.slice(1)}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * US dollars for people, as Riot writes them: four decimals below a dollar
 * (a cheap session is not `$0.00`), two above; unknown is `—`.
 */
export function usd(value: number | null): string {
  if (value === null) return "—";
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** The session's cost, or a dash and why when it is unknown. */
export function CostFigure({ usd: value }: { usd: number | null }) {
  const title =
    value === null
      ? "Cost unknown: a model of this session has no price. Give it one in Riot's settings: models → price."
      : "What this session has cost so far, side requests included";
  return (
    <span className="usage-cost" data-testid="usage-cost" title={title}>
      <b>{usd(value)}</b>
    </span>
  );
}

/** Whether any token was counted. */
function hasTokens(figures: TokenFigures): boolean {
  return figures.inputTokens + figures.outputTokens + figures.cacheReadTokens + figures.cacheWriteTokens > 0;
}

/** The last turn's token figures, the session's totals and its cost (`_riot/usage`). */
export function UsageFigures({
  last,
  totals,
  cost,
}: {
  last: TurnUsage | null;
  totals: UsageTotals;
  cost: { usd: number | null } | null;
}) {
  if (last === null) {
    // No model request yet, or only built-in commands: the cost alone, once reported.
    return cost === null ? null : (
      <div className="usage" data-testid="usage">
        <CostFigure usd={cost.usd} />
      </div>
    );
  }
  const summary =
    `Session: ${n(totals.inputTokens)} in, ${n(totals.outputTokens)} out, ` +
    `${n(totals.cacheReadTokens)} cache read, ${n(totals.cacheWriteTokens)} cache written, ` +
    `${n(totals.requests)} requests` +
    (hasTokens(totals.side)
      ? `; side requests: ${n(totals.side.inputTokens)} in, ${n(totals.side.outputTokens)} out, ` +
        `${n(totals.side.cacheReadTokens)} cache read, ${n(totals.side.cacheWriteTokens)} cache written`
      : "");
  return (
    <div className="usage" data-testid="usage" title={summary}>
      {cost !== null && <CostFigure usd={cost.usd} />}
      <span>
        <b>{n(last.inputTokens)}</b> in
      </span>
      <span>
        <b>{n(last.outputTokens)}</b> out
      </span>
      <span>
        cache <b>{n(last.cacheReadTokens)}</b> read / <b>{n(last.cacheWriteTokens)}</b> written
      </span>
      {hasTokens(last.side) && (
        <span
          className="usage-side"
          data-testid="usage-side"
          title="Side requests while this turn ran (subagents, compaction summaries, auto mode's classifier, image descriptions, WebFetch's answers): in the cost, not in the figures beside it"
        >
          side <b>{n(last.side.inputTokens)}</b> in /{" "}
          <b>{n(last.side.outputTokens)}</b> out
        </span>
      )}
      <span className="usage-model">
        {last.model} · {last.requests === 1 ? "1 request" : `${n(last.requests)} requests`}
      </span>
    </div>
  );
}

function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}

/**
 * While a turn runs: that Riot is working (from the moment the prompt
 * went out, before the model's first token), for how long, and how to
 * stop it. The seconds are not announced to screen readers every second.
 */
export function WorkingIndicator({
  startedAt,
  stopping,
  waiting,
  now = Date.now,
}: {
  startedAt: number;
  stopping: boolean;
  /** A permission question of this turn waits for an answer. */
  waiting: boolean;
  now?: () => number;
}) {
  const [time, setTime] = useState(now);
  useEffect(() => {
    const timer = setInterval(() => setTime(now()), 1000);
    return () => clearInterval(timer);
  }, [now]);
  const what = stopping ? "Stopping…" : waiting ? "Waiting for your answer…" : "Working…";
  return (
    <div className="working" role="status" data-testid="working">
      <span className="working-dot" aria-hidden="true" />
      <span className="working-what">{what}</span>
      <span className="working-time" aria-hidden="true" data-testid="working-time">
        {elapsed(time - startedAt)}
      </span>
      {!stopping && (
        <span className="working-hint" aria-hidden="true">
          <kbd className="key">Esc</kbd> to stop
        </span>
      )}
    </div>
  );
}

/** Shown while Riot compacts the session's context. */
export function CompactionIndicator({ compacting }: { compacting: boolean }) {
  if (!compacting) return null;
  return (
    <span className="compacting" role="status" data-testid="compacting">
      Compacting context…
    </span>
  );
}
