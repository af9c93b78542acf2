import { useId, useState } from "react";

import type { SessionModeState, TurnUsage } from "../bridge";
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

/** The last turn's token figures and the session's totals (`_riot/usage`). */
export function UsageFigures({ last, totals }: { last: TurnUsage | null; totals: UsageTotals }) {
  if (last === null) return null;
  const summary =
    `Session: ${n(totals.inputTokens)} in, ${n(totals.outputTokens)} out, ` +
    `${n(totals.cacheReadTokens)} cache read, ${n(totals.cacheWriteTokens)} cache written, ` +
    `${n(totals.requests)} requests`;
  return (
    <div className="usage" data-testid="usage" title={summary}>
      <span>
        <b>{n(last.inputTokens)}</b> in
      </span>
      <span>
        <b>{n(last.outputTokens)}</b> out
      </span>
      <span>
        cache <b>{n(last.cacheReadTokens)}</b> read / <b>{n(last.cacheWriteTokens)}</b> written
      </span>
      <span className="usage-model">
        {last.model} · {last.requests === 1 ? "1 request" : `${n(last.requests)} requests`}
      </span>
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
