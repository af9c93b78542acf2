// Where Riot is: the page is served by `riot serve` itself at
// `http://HOST:PORT/?token=TOKEN` (the desktop shell loads that address
// too), so the WebSocket is at `/acp` on the same host with the same
// token, and the browser sends the server's own Origin (docs/design.md §2).

export interface Endpoint {
  /** `ws://HOST:PORT/acp?token=TOKEN`. */
  socketUrl: string;
  /** A project directory the opener chose (`&cwd=`), if any. */
  cwd: string | null;
}

/** The page was opened without the token `riot serve` printed. */
export class MissingTokenError extends Error {
  constructor() {
    super("Open the address `riot serve` printed: it carries the token this page needs.");
    this.name = "MissingTokenError";
  }
}

/** The endpoint of the page at `href`. */
export function endpointFromPage(href: string): Endpoint {
  const page = new URL(href);
  const token = page.searchParams.get("token");
  if (!token) {
    throw new MissingTokenError();
  }
  const scheme = page.protocol === "https:" ? "wss:" : "ws:";
  // riot serve reads `token=` verbatim (no percent-decoding); its tokens
  // are hex, which encoding leaves as it is.
  const socketUrl = `${scheme}//${page.host}/acp?token=${encodeURIComponent(token)}`;
  const cwd = page.searchParams.get("cwd");
  return { socketUrl, cwd: cwd || null };
}
