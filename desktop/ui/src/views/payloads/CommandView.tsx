import type { PayloadOf } from "./payload";

function exitLabel(payload: PayloadOf<"command">): { text: string; ok: boolean } {
  if (payload.timed_out) return { text: "timed out", ok: false };
  if (payload.background_id != null) return { text: `in the background (${payload.background_id})`, ok: true };
  if (payload.exit_code == null) return { text: "no exit code", ok: false };
  return { text: `exit ${payload.exit_code}`, ok: payload.exit_code === 0 };
}

/**
 * A shell command: the full command, its exit code, and what it printed.
 * Output on stderr is ordinary (progress, warnings, "OK"): it is marked
 * as an error only when the command failed.
 */
export function CommandView({ payload }: { payload: PayloadOf<"command"> }) {
  const exit = exitLabel(payload);
  const quiet = payload.stdout === "" && payload.stderr === "";
  return (
    <div className="payload payload-command">
      <div className="payload-head">
        <code className="command-line">$ {payload.command}</code>
        <span className={`badge exit ${exit.ok ? "exit-ok" : "exit-failed"}`} data-testid="exit-code">
          {exit.text}
        </span>
      </div>
      {payload.stdout !== "" && <pre className="output stdout">{payload.stdout}</pre>}
      {payload.stderr !== "" && (
        <pre
          className={exit.ok ? "output stderr" : "output stderr stderr-failed"}
          aria-label={exit.ok ? "stderr" : "stderr of the failed command"}
        >
          {payload.stderr}
        </pre>
      )}
      {quiet && <p className="payload-note">No output.</p>}
      {payload.truncated && <p className="payload-note">Output truncated: the middle was left out.</p>}
    </div>
  );
}
