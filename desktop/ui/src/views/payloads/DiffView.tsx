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

/** Lines of `kind` in `hunks`. */
function count(hunks: readonly Hunk[], kind: Hunk["lines"][number]["kind"]): number {
  return hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === kind).length, 0);
}

function DiffStat({ hunks }: { hunks: readonly Hunk[] }) {
  return (
    <span className="diff-stat">
      <span className="diff-stat-added">+{count(hunks, "added")}</span>{" "}
      <span className="diff-stat-removed">−{count(hunks, "removed")}</span>
    </span>
  );
}

function Hunks({ hunks }: { hunks: readonly Hunk[] }) {
  return hunks.length === 0 ? (
    <p className="payload-note">No changes.</p>
  ) : (
    <table className="diff">{hunks.map((hunk, i) => <HunkView key={i} hunk={hunk} />)}</table>
  );
}

/** A file created or changed: its hunks with old and new line numbers. */
export function DiffView({ payload }: { payload: PayloadOf<"file_diff"> }) {
  return (
    <div className="payload payload-diff">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        {payload.created && <span className="badge">new file</span>}
        <DiffStat hunks={payload.hunks} />
      </div>
      <Hunks hunks={payload.hunks} />
    </div>
  );
}

/** A notebook cell before and after (NotebookEdit's question): its lines numbered within the cell. */
export function CellDiffView({ payload }: { payload: PayloadOf<"notebook_cell_diff"> }) {
  return (
    <div className="payload payload-diff">
      <div className="payload-head">
        <code className="payload-path">{payload.path}</code>
        <span className="badge">cell {payload.cell_id}</span>
        <DiffStat hunks={payload.hunks} />
      </div>
      <Hunks hunks={payload.hunks} />
    </div>
  );
}
