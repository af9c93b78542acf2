import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

import { connectToRiot, endpointFromPage } from "./bridge";
import {
  detectShell,
  followRiotSetting,
  notificationHooks,
  NotificationPreference,
  pageAttention,
  shellNotificationSink,
  webNotificationSink,
} from "./shell";
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

// Inside the desktop shell: its folder picker and its notifications; in a
// browser tab, the web Notification API. Either notifies about a session
// the person is not looking at (shell/notify.ts).
const shell = detectShell(window);
const webNotifications = typeof Notification === "undefined" ? undefined : Notification;
const notifications = new NotificationPreference(window.localStorage);
const hooks = notificationHooks({
  sink: shell.desktop ? shellNotificationSink(shell) : webNotificationSink(webNotifications),
  setting: notifications,
  attention: () => pageAttention(document, store.getState().currentId),
  show: (id) => {
    window.focus();
    const state = store.getState();
    const cwd = state.open[id]?.cwd ?? state.sessions.find((s) => s.sessionId === id)?.cwd;
    if (cwd !== undefined) void store.openSession(id, cwd);
  },
});
const store = new Store(window.localStorage.getItem(PROJECT_KEY) ?? "", undefined, hooks);
// Riot's `notifications.desktop`, once `_riot/config` reports it, decides over the page's switch.
followRiotSetting(store, notifications);
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
    <App
      store={store}
      shell={shell}
      notifications={notifications}
      onNotificationsOn={
        // Turned on in a browser tab: ask for the permission while the click lasts.
        shell.desktop || webNotifications?.permission !== "default"
          ? undefined
          : () => void webNotifications.requestPermission().catch(() => undefined)
      }
    />
  </StrictMode>,
);
start(store).catch((e: unknown) => store.failed(e));
