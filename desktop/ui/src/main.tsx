import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

import { connectToRiot, endpointFromPage } from "./bridge";
import { detectShell, shellHooks } from "./shell";
import { Store } from "./state/store";
import { App } from "./views/App";
import "./styles.css";

const PROJECT_KEY = "riot.projectDir";

/** `#session=ID` keeps the open session across a reload. */
function sessionFromHash(): string | null {
  const match = /^#session=(.+)$/.exec(window.location.hash);
  return match?.[1] === undefined ? null : decodeURIComponent(match[1]);
}

async function start(store: Store): Promise<void> {
  const endpoint = endpointFromPage(window.location.href);
  if (endpoint.cwd !== null) store.setProjectDir(endpoint.cwd);
  const connection = await connectToRiot(endpoint, store.events);
  // `riot serve --cwd DIR` names the project: it wins over the last one
  // used here, but not over a `&cwd=` the opener put in the address.
  const served = (connection.agent._meta?.riot as { defaultCwd?: unknown } | undefined)?.defaultCwd;
  if (endpoint.cwd === null && typeof served === "string" && served !== "") store.setProjectDir(served);
  await store.attach(connection);
  const wanted = sessionFromHash();
  const found = store.getState().sessions.find((s) => s.sessionId === wanted);
  if (found !== undefined) await store.openSession(found.sessionId, found.cwd);
}

// Inside the desktop shell: its folder picker, and notifications while the window is in the background.
const shell = detectShell(window);
const store = new Store(window.localStorage.getItem(PROJECT_KEY) ?? "", undefined, shellHooks(shell));
let shown: string | null = null;
let project = store.getState().projectDir;
store.subscribe(() => {
  const state = store.getState();
  if (state.currentId !== shown) {
    shown = state.currentId;
    const hash = shown === null ? "" : `#session=${encodeURIComponent(shown)}`;
    // The query (the token) stays: a reload must find the page again.
    window.history.replaceState(null, "", `${window.location.pathname}${window.location.search}${hash}`);
  }
  if (state.projectDir !== project) {
    project = state.projectDir;
    window.localStorage.setItem(PROJECT_KEY, project);
  }
});
window.addEventListener("beforeunload", () => store.dispose());

const root = document.getElementById("root");
if (root === null) throw new Error("index.html has no #root");
createRoot(root).render(
  <StrictMode>
    <App store={store} shell={shell} />
  </StrictMode>,
);
start(store).catch((e: unknown) => store.failed(e));
