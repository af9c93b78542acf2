import type { PayloadOf } from "./payload";

type Hunk = PayloadOf<"file_diff">["hunks"][number];

const MARK = { context: " ", added: "+", removed: "-" } as const;

function HunkView({ hunk }: { hunk: Hunk }) {
  let oldLine = hunk.old_start;
  let newLine = hunk.new_start;
  return (
    <tbody className="diff-hunk">
      <tr className="diff-hunk-header">
        <td colSpan={3}>{`@@ -${hunk.old_start},${hunk.old_lines} +${hunk.new_start},${hunk.new_lines} @@`}</td>
      </tr>
      {hunk.lines.map((line, i) => {
        const oldNo = line.kind === "added" ? "" : String(oldLine++);
        const newNo = line.kind === "removed" ? "" : String(newLine++);
        return (
          <tr key={i} className={`diff-line diff-${line.kind}`} data-kind={line.kind}>
            <td className="diff-no">{oldNo}</td>
            <td className="diff-no">{newNo}</td>
            <td className="diff-text">
              <span className="diff-mark" aria-hidden="true">
                {MARK[line.kind]}
              </span>
              {line.text}
            </td>
          </tr>
        );
      })}
    </tbody>
  );
}

/** A file created or changed: its hunks with old and new line numbers. */
export function DiffView({ payload }: { payload: PayloadOf<"file_diff"> }) {
  const added = payload.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === "added").length, 0);
  const removed = payload.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === "removed").length, 0);
  return (
    <div className="payload payload-diff">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        {payload.created && <span className="badge">new file</span>}
        <span className="diff-stat">
          <span className="diff-stat-added">+{added}</span> <span className="diff-stat-removed">−{removed}</span>
        </span>
      </div>
      {payload.hunks.length === 0 ? (
        <p className="payload-note">No changes.</p>
      ) : (
        <table className="diff">{payload.hunks.map((hunk, i) => <HunkView key={i} hunk={hunk} />)}</table>
      )}
    </div>
  );
}
