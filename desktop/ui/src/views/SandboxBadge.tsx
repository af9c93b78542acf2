/**
 * Whether the session's commands run in Riot's OS sandbox, in Riot's own
 * words: "sandboxed (bubblewrap)", "sandboxed (Landlock)" or "not
 * sandboxed: REASON" (the same status as `riot sandbox check`). Nothing
 * when Riot did not say.
 */
export function SandboxBadge({ sandbox }: { sandbox: string | null }) {
  if (sandbox === null) return null;
  const off = sandbox.startsWith("not sandboxed");
  const [short] = sandbox.split(":");
  return (
    <span
      className={off ? "sandbox-badge sandbox-off" : "sandbox-badge"}
      data-testid="sandbox"
      title={off ? `${sandbox}. Commands are asked about as without a sandbox; riot sandbox check says more.` : sandbox}
    >
      {short}
    </span>
  );
}
