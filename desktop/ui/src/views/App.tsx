import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from "react";

import { browserShell, type NotificationPreference, type Shell } from "../shell";
import { resumable, type AppState, type Store } from "../state/store";
import { Composer } from "./Composer";
import { ConversationView } from "./ConversationView";
import { PermissionDialog } from "./PermissionDialog";
import { BackgroundPanel } from "./BackgroundPanel";
import { QueuePanel } from "./QueuePanel";
import { RewindDialog } from "./RewindDialog";
import {
  CompactionIndicator,
  ModeSelector,
  ModelSelector,
  ThinkingSelector,
  UsageFigures,
  WorkingIndicator,
} from "./SessionBar";
import { SettingsDialog } from "./Settings";
import { NotificationToggle } from "./NotificationToggle";
import { SandboxBadge } from "./SandboxBadge";
import { Sidebar } from "./Sidebar";
import { WorktreeBadge } from "./WorktreeBadge";
import { TerminalPanel } from "./TerminalPanel";
import { TodosView } from "./payloads/TodosView";

function ConnectionBadge({ connection }: { connection: AppState["connection"] }) {
  const text =
    connection.status === "open" ? "connected" : connection.status === "connecting" ? "connecting…" : "disconnected";
  return (
    <span className={`connection connection-${connection.status}`} data-testid="connection">
      {text}
    </span>
  );
}

/** Below this width the sidebar is a drawer (styles.css has the same figure). */
export const NARROW = "(max-width: 699px)";

function narrow(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches;
}

/**
 * The page. `shell` is the desktop shell when the page runs in it (main.tsx detects it).
 *
 * Keys: Escape closes what is open in front (a dialog handles its own,
 * then the sessions drawer), else stops the running turn.
 */
export function App({
  store,
  shell = browserShell,
  notifications,
  onNotificationsOn,
}: {
  store: Store;
  shell?: Shell;
  /** The notifications switch (main.tsx); no switch without it. */
  notifications?: NotificationPreference;
  onNotificationsOn?: (() => void) | undefined;
}) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const view = state.currentId === null ? null : (state.open[state.currentId] ?? null);
  const connected = state.connection.status === "open";
  const question = state.permissions[0] ?? null;
  const questionSession = question === null ? null : (state.open[question.sessionId] ?? null);
  /** The sessions drawer of a narrow window is open. */
  const [drawer, setDrawer] = useState(false);
  const drawerRef = useRef(drawer);
  const toggle = useRef<HTMLButtonElement>(null);
  /** The session whose rewind picker is open. */
  const [rewinding, setRewinding] = useState<string | null>(null);
  const rewindingRef = useRef(rewinding);
  useEffect(() => {
    rewindingRef.current = rewinding;
  }, [rewinding]);
  // Stable per opening, so the picker reads the checkpoints once.
  const loadCheckpoints = useCallback(
    () => (rewinding === null ? Promise.resolve([]) : store.checkpoints(rewinding)),
    [store, rewinding],
  );
  /** Bumped to send the focus to the composer (after starting or opening a session). */
  const [focusComposer, setFocusComposer] = useState(0);

  const title = view === null ? "Riot" : `Riot — ${view.cwd}`;
  useEffect(() => {
    document.title = title;
  }, [title]);

  useEffect(() => {
    drawerRef.current = drawer;
    const sidebar = document.getElementById("sidebar");
    if (!drawer || sidebar === null || !narrow()) return;
    // Opened: the keyboard goes into the drawer; when it leaves (Tab past its end), the drawer closes.
    sidebar.querySelector<HTMLElement>("input, button")?.focus();
    const onFocusOut = (e: FocusEvent) => {
      const next = e.relatedTarget;
      if (next instanceof Node && !sidebar.contains(next) && next !== toggle.current) setDrawer(false);
    };
    sidebar.addEventListener("focusout", onFocusOut);
    return () => sidebar.removeEventListener("focusout", onFocusOut);
  }, [drawer]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented) return;
      // A dialog answers its own Escape.
      const now = store.getState();
      if (now.permissions.length > 0 || now.settings !== null || rewindingRef.current !== null) return;
      if (drawerRef.current && narrow()) {
        e.preventDefault();
        setDrawer(false);
        toggle.current?.focus();
        return;
      }
      const running = store.current();
      if (running !== null && running.running && !running.stopping) {
        e.preventDefault();
        void store.stop();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [store]);

  const waiting = view !== null && state.permissions.some((p) => p.sessionId === view.id);

  return (
    <div className={drawer ? "app drawer-open" : "app"}>
      <header className="topbar">
        <button
          type="button"
          className="drawer-toggle"
          ref={toggle}
          aria-label="Sessions"
          aria-controls="sidebar"
          aria-expanded={drawer}
          onClick={() => setDrawer((open) => !open)}
        >
          <span aria-hidden="true">☰</span>
        </button>
        <span className="brand">Riot</span>
        <ConnectionBadge connection={state.connection} />
        {state.features.config && (
          <button
            type="button"
            className="topbar-button"
            disabled={!connected || state.settings !== null}
            onClick={() => void store.openSettings()}
          >
            Settings
          </button>
        )}
        {notifications !== undefined && <NotificationToggle preference={notifications} onTurnOn={onNotificationsOn} />}
      </header>
      <Sidebar
        sessions={state.sessions}
        currentId={state.currentId}
        projectDir={state.projectDir}
        connected={connected}
        canRename={state.features.rename}
        canDelete={state.features.delete}
        onProjectDir={(dir) => store.setProjectDir(dir)}
        onChooseFolder={
          shell.desktop
            ? () =>
                void shell.pickFolder().then(
                  (dir) => {
                    if (dir !== null) store.setProjectDir(dir);
                  },
                  (e: unknown) => store.reportError(e),
                )
            : undefined
        }
        onNew={() => {
          setDrawer(false);
          void store.newSession().then(() => setFocusComposer((n) => n + 1));
        }}
        onNewWorktree={(name) => {
          setDrawer(false);
          void store.newSession({ worktree: name }).then(() => setFocusComposer((n) => n + 1));
        }}
        onOpen={(s) => {
          setDrawer(false);
          setFocusComposer((n) => n + 1);
          void store.openSession(s.sessionId, s.cwd);
        }}
        onRename={(id, title) => void store.renameSession(id, title)}
        onDelete={(id) => void store.deleteSession(id)}
      />
      {drawer && <div className="drawer-scrim" aria-hidden="true" onClick={() => setDrawer(false)} />}
      <main className="main">
        {state.connection.status === "closed" && (
          <div className="banner banner-error" role="alert">
            {state.connection.error ?? "Disconnected from Riot."} Reload the page to reconnect.
          </div>
        )}
        {state.error !== null && (
          <div className="banner banner-error" role="alert" data-testid="error">
            <span>{state.error}</span>
            <button type="button" onClick={() => store.dismissError()} aria-label="Dismiss">
              ×
            </button>
          </div>
        )}
        {view === null ? (
          <div className="welcome">
            <h1>Riot</h1>
            <p>
              Pick a session<span className="wide-only">{" on the left"}</span>
              {", or choose a project directory and start a new one."}
            </p>
            <button type="button" className="narrow-only primary" onClick={() => setDrawer(true)}>
              Open the sessions
            </button>
          </div>
        ) : (
          <>
            <div className="session-bar">
              <span className="session-cwd" title={view.cwd}>
                {view.cwd}
              </span>
              <WorktreeBadge worktree={view.worktree} />
              <SandboxBadge sandbox={view.sandbox} />
              <CompactionIndicator compacting={view.compacting} />
              <UsageFigures last={view.lastUsage} totals={view.totals} cost={view.cost} />
              <ModelSelector
                key={`${view.id}:${view.model ?? ""}`}
                model={view.model}
                models={[
                  ...view.models,
                  ...(view.conversation.options?.models ?? [])
                    .map((m) => m.id)
                    .filter((m) => !view.models.includes(m)),
                ]}
                editable={state.features.setModel && connected}
                onChange={(model) => void store.setModel(model)}
              />
              {view.conversation.options?.thinking != null && (
                <ThinkingSelector
                  level={view.conversation.options.thinking}
                  disabled={!connected}
                  onChange={(level) => void store.setThinking(level)}
                />
              )}
              {view.conversation.modes !== null && (
                <ModeSelector modes={view.conversation.modes} onChange={(id) => void store.setMode(id)} />
              )}
              {state.features.rewind && (
                <button
                  type="button"
                  className="rewind-button"
                  disabled={!connected || view.running || view.loading}
                  title={
                    view.running
                      ? "A turn is running; rewind when it ends"
                      : "Go back to just before one of your messages: files, conversation or both"
                  }
                  onClick={() => setRewinding(view.id)}
                >
                  Rewind…
                </button>
              )}
            </div>
            <ConversationView key={`conversation:${view.id}`} items={view.conversation.items} busy={view.loading} />
            {view.running && view.startedAt !== null && (
              <WorkingIndicator
                key={view.startedAt}
                startedAt={view.startedAt}
                stopping={view.stopping}
                waiting={waiting}
              />
            )}
            {view.conversation.plan !== null && view.conversation.plan.length > 0 && (
              <section className="plan" aria-label="Plan">
                <TodosView todos={view.conversation.plan} />
              </section>
            )}
            <QueuePanel
              queue={view.queue}
              held={view.queueHeld}
              resumable={resumable(view, state.features)}
              onRemove={(messageId) => void store.removeQueued(view.id, messageId)}
              onEdit={(messageId, text) => void store.editQueued(view.id, messageId, text)}
              onResume={() => void store.resumeQueue(view.id)}
            />
            <BackgroundPanel
              tasks={view.background}
              stopping={view.stoppingTasks}
              canStop={state.features.background && connected}
              onStop={(taskId) => void store.stopBackground(view.id, taskId)}
            />
            <TerminalPanel
              key={`terminals:${view.id}`}
              terminals={view.terminals}
              canType={state.features.terminals && connected}
              onType={(name, input) => void store.writeTerminal(view.id, name, input)}
              canResize={state.features.resizeTerminals && connected}
              onResize={(name, rows, cols) => void store.resizeTerminal(view.id, name, rows, cols)}
            />
            <Composer
              key={view.id}
              commands={view.conversation.commands}
              running={view.running}
              stopping={view.stopping}
              disabled={!connected || view.loading}
              focusRequest={focusComposer}
              findFiles={state.features.files ? (query) => store.findFiles(view.cwd, query) : undefined}
              takesImages={state.features.images}
              onSend={(text, images) => void store.send(text, images)}
              onStop={() => void store.stop()}
            />
          </>
        )}
      </main>
      {question !== null && (
        <PermissionDialog
          key={question.key}
          request={question.request}
          cwd={questionSession?.cwd ?? ""}
          otherSession={question.sessionId === state.currentId ? null : (questionSession?.cwd ?? question.sessionId)}
          onAnswer={(optionId) => store.answer(question.key, optionId)}
        />
      )}
      {rewinding !== null && state.open[rewinding] !== undefined && (
        <RewindDialog
          key={rewinding}
          load={loadCheckpoints}
          rewind={(to, scope, force) => store.rewind(rewinding, to, scope, force)}
          running={state.open[rewinding]?.running ?? false}
          onClose={() => setRewinding(null)}
        />
      )}
      {state.settings !== null && state.modelConfig !== null && (
        <SettingsDialog
          config={state.modelConfig}
          form={state.settings}
          onSave={(input) => void store.saveSettings(input)}
          onClose={() => store.closeSettings()}
        />
      )}
    </div>
  );
}
