import type { PayloadOf } from "./payload";

/** A page WebFetch read: its URL, status, size and title; a redirect it did not follow. */
export function WebPageView({ payload }: { payload: PayloadOf<"web_page"> }) {
  return (
    <div className="payload payload-web">
      <div className="payload-head">
        <code className="payload-path">{payload.url}</code>
        <span className="badge" data-testid="web-status">
          HTTP {payload.status}
          {payload.redirect == null && `, ${payload.bytes.toLocaleString("en")} bytes`}
        </span>
        {payload.cached && <span className="badge">cached</span>}
        {payload.truncated && <span className="badge badge-warning">cut at 10 MB</span>}
      </div>
      {payload.title != null && <div className="web-title">{payload.title}</div>}
      {payload.redirect != null && (
        <div className="web-redirect" data-testid="web-redirect">
          redirects to <code>{payload.redirect}</code> (another host, not followed)
        </div>
      )}
    </div>
  );
}

/** What WebSearch found: each result's title, URL and snippet. */
export function WebResultsView({ payload }: { payload: PayloadOf<"web_results"> }) {
  const n = payload.results.length;
  return (
    <div className="payload payload-web">
      <div className="payload-head">
        <code className="payload-path">{payload.query}</code>
        <span className="badge" data-testid="web-count">
          {n} {n === 1 ? "result" : "results"}
        </span>
      </div>
      <ol className="web-results">
        {payload.results.map((r) => (
          <li key={r.url}>
            <div className="web-title">{r.title}</div>
            <code className="web-url">{r.url}</code>
            {r.snippet !== "" && <div className="web-snippet">{r.snippet}</div>}
          </li>
        ))}
      </ol>
    </div>
  );
}
