import type { PayloadOf } from "./payload";

type Match = PayloadOf<"search_results">["matches"][number];

function plural(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}

function Found({ text }: { text: string }) {
  return (
    <span className="badge" data-testid="match-count">
      {text}
    </span>
  );
}

/** The kind of entries of a search: lines (`content`), per-file counts (`count`), or paths (`files_with_matches`). */
function searchMode(matches: readonly Match[]): "content" | "count" | "files" {
  if (matches.some((m) => m.line != null)) return "content";
  return matches.some((m) => m.count != null) ? "count" : "files";
}

/**
 * In `content` mode, Grep puts an entry with neither line nor text nor
 * count between runs of lines that are not adjacent (ripgrep's `--`). It
 * is not a match.
 */
export function isSeparator(match: Match, mode: "content" | "count" | "files"): boolean {
  return mode === "content" && match.line == null && match.text == null && match.count == null;
}

/**
 * What a search found, in words. Riot's `total` counts every entry,
 * shown or not, separators included: those shown come off it, but
 * entries left out (an offset, a cap) may hold more, so the total of a
 * partial content search is only an upper bound.
 */
export function searchSummary(payload: PayloadOf<"search_results">): string {
  const { matches, total } = payload;
  if (total === 0) return "no matches";
  if (matches.length === 0) return `${total.toLocaleString("en")} found, none shown`;
  const partial = payload.truncated || matches.length < total;
  const mode = searchMode(matches);
  switch (mode) {
    case "content": {
      const separators = matches.filter((m) => isSeparator(m, mode)).length;
      const shown = matches.length - separators;
      return partial
        ? `${shown.toLocaleString("en")} of up to ${plural(total - separators, "match", "matches")}`
        : plural(shown, "match", "matches");
    }
    case "count": {
      const found = plural(
        matches.reduce((sum, m) => sum + (m.count ?? 0), 0),
        "match",
        "matches",
      );
      return partial
        ? `${found} in ${matches.length} of ${total} files`
        : `${found} in ${plural(total, "file", "files")}`;
    }
    case "files":
      return partial ? `${matches.length} of ${plural(total, "file", "files")}` : plural(total, "file", "files");
  }
}

/** Paths a glob pattern found. */
export function FileListView({ payload }: { payload: PayloadOf<"file_list"> }) {
  return (
    <div className="payload payload-files">
      <div className="payload-head">
        <code>{payload.pattern}</code>
        <Found
          text={
            payload.total === 0
              ? "no matches"
              : payload.truncated || payload.paths.length < payload.total
                ? `${payload.paths.length} of ${plural(payload.total, "match", "matches")}`
                : plural(payload.total, "match", "matches")
          }
        />
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
  const mode = searchMode(payload.matches);
  return (
    <div className="payload payload-search">
      <div className="payload-head">
        <code>{payload.pattern}</code>
        <Found text={searchSummary(payload)} />
      </div>
      {payload.matches.length > 0 && (
        <ul className="match-list">
          {payload.matches.map((m, i) =>
            isSeparator(m, mode) ? (
              <li key={i} className="match-gap" aria-hidden="true" />
            ) : (
              <li key={i} className="match">
                <code className="match-where">
                  {m.path}
                  {m.line != null && `:${m.line}`}
                </code>
                {m.text != null && <code className="match-text">{m.text}</code>}
                {m.count != null && <span className="badge">{m.count}</span>}
              </li>
            ),
          )}
        </ul>
      )}
    </div>
  );
}
