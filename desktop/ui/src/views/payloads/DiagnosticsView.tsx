import { useState } from "react";

import type { PayloadOf } from "./payload";

type Diagnostic = PayloadOf<"diagnostics">["diagnostics"][number];

/** `path:line:col` as a checker prints it (line and column only when known). */
export function location(d: Diagnostic): string {
  if (d.line === 0) return d.path;
  return d.column === 0 ? `${d.path}:${d.line}` : `${d.path}:${d.line}:${d.column}`;
}

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

/** "2 errors, 1 warning" over what the checkers found (`total` counts those not listed). */
export function diagnosticsSummary(payload: PayloadOf<"diagnostics">): string {
  if (payload.total === 0) return payload.checkers.length === 0 ? "no checker found" : "no diagnostics";
  const errors = payload.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = payload.diagnostics.filter((d) => d.severity === "warning").length;
  const parts = [plural(errors, "error", "errors"), plural(warnings, "warning", "warnings")];
  const shown = payload.diagnostics.length;
  if (shown < payload.total) parts.push(`${shown.toLocaleString("en")} of ${payload.total.toLocaleString("en")} shown`);
  return parts.join(", ");
}

/** One finding; its `file:line` copies itself for pasting into an editor. */
function Row({ d }: { d: Diagnostic }) {
  const [copied, setCopied] = useState(false);
  const where = location(d);
  const copy = () => {
    void navigator.clipboard?.writeText(where).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };
  return (
    <li className={`diagnostic diagnostic-${d.severity}`}>
      <button type="button" className="diagnostic-location" title={`Copy ${where}`} onClick={copy}>
        {where}
      </button>{" "}
      <span className="diagnostic-severity">{d.severity}</span>
      {d.code != null && <span className="diagnostic-code">[{d.code}]</span>}{" "}
      <span className="diagnostic-message">{d.message}</span>
      {copied && <span className="badge">copied</span>}
    </li>
  );
}

/** What Diagnostics found: the checkers that ran and each finding, errors first. */
export function DiagnosticsView({ payload }: { payload: PayloadOf<"diagnostics"> }) {
  return (
    <div className="payload payload-diagnostics">
      <div className="payload-head">
        {payload.checkers.map((c) => (
          <code key={c} className="payload-path">
            {c}
          </code>
        ))}
        <span className="badge" data-testid="diagnostics-count">
          {diagnosticsSummary(payload)}
        </span>
      </div>
      {payload.diagnostics.length > 0 && (
        <ul className="diagnostics">
          {payload.diagnostics.map((d, i) => (
            <Row key={i} d={d} />
          ))}
        </ul>
      )}
    </div>
  );
}
