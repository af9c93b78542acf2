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
