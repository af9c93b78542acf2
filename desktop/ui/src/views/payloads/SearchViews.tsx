import type { PayloadOf } from "./payload";

function Found({ shown, total, truncated }: { shown: number; total: number; truncated: boolean }) {
  const text =
    total === 0 ? "no matches" : truncated || shown < total ? `${shown} of ${total} matches` : `${total} matches`;
  return <span className="badge">{text}</span>;
}

/** Paths a glob pattern found. */
export function FileListView({ payload }: { payload: PayloadOf<"file_list"> }) {
  return (
    <div className="payload payload-files">
      <div className="payload-head">
        <code>{payload.pattern}</code>
        <Found shown={payload.paths.length} total={payload.total} truncated={payload.truncated} />
      </div>
      {payload.paths.length > 0 && (
        <ul className="path-list">
          {payload.paths.map((path) => (
            <li key={path}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Matches of a content search: a file, a line of a file, or a count per file. */
export function SearchResultsView({ payload }: { payload: PayloadOf<"search_results"> }) {
  return (
    <div className="payload payload-search">
      <div className="payload-head">
        <code>{payload.pattern}</code>
        <Found shown={payload.matches.length} total={payload.total} truncated={payload.truncated} />
      </div>
      {payload.matches.length > 0 && (
        <ul className="match-list">
          {payload.matches.map((m, i) => (
            <li key={i} className="match">
              <code className="match-where">
                {m.path}
                {m.line != null && `:${m.line}`}
              </code>
              {m.text != null && <code className="match-text">{m.text}</code>}
              {m.count != null && <span className="badge">{m.count}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
