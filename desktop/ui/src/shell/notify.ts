// Desktop notifications (docs/parallel.md): when a session's turn ends or a
// permission question waits, and the person is not looking at that
// session — another session is shown, or the page is hidden or not
// focused (another window, another tab). They go through the desktop
// shell's notification plugin inside the app, and through the web
// Notification API in a browser tab (its permission asked the first time
// one is needed). The person can turn them off: `notifications.desktop`
// in Riot's settings, which `_riot/config` reports, else (an older Riot)
// a switch kept in this browser.

import type { StoreHooks, TurnOutcome } from "../state/store";
import type { Shell } from "./shell";
import { questionNotice, turnEndedNotice, type Notice } from "./notices";

/** What the page shows, right now. */
export interface PageAttention {
  /** The session on screen; `null` when none is. */
  currentId: string | null;
  /** The page is visible (not a background tab, not minimized). */
  visible: boolean;
  /** The page has the keyboard focus (its window is the active one). */
  focused: boolean;
}

/** What happened in a session. */
export type NoticeEvent =
  | { kind: "turn-ended"; sessionId: string; outcome: TurnOutcome }
  | { kind: "question"; sessionId: string };

/**
 * Whether `event` deserves a notification: notifications are on, the
 * person is not looking at the session, and it is news — a turn the
 * person stopped is not.
 */
export function shouldNotify(event: NoticeEvent, page: PageAttention, enabled: boolean): boolean {
  if (!enabled) return false;
  if (event.kind === "turn-ended" && event.outcome === "stopped") return false;
  const inView = page.visible && page.focused && page.currentId === event.sessionId;
  return !inView;
}

/** Where a notification goes. */
export interface NotificationSink {
  /**
   * Shows `notice`; `tag` replaces an earlier one with the same tag (one
   * per session and kind); `otherSession`: the session is not the one on
   * screen. Whether it was shown.
   */
  show(notice: Notice, options: { tag: string; otherSession: boolean; onClick: () => void }): Promise<boolean>;
}

/** The part of the web Notification API used here (injected in tests). */
export interface WebNotificationApi {
  readonly permission: NotificationPermission;
  requestPermission(): Promise<NotificationPermission>;
  new (title: string, options?: NotificationOptions): { onclick: ((this: never, ev: Event) => unknown) | null };
}

/**
 * The web Notification API: asks for permission the first time a
 * notification is needed (once; a refusal is kept), and clicking one
 * brings the page to the session.
 */
export function webNotificationSink(api: WebNotificationApi | undefined): NotificationSink {
  let asked: Promise<NotificationPermission> | null = null;
  return {
    async show(notice, { tag, onClick }) {
      if (api === undefined) return false;
      try {
        let permission = api.permission;
        if (permission === "default") {
          asked ??= api.requestPermission();
          permission = await asked;
        }
        if (permission !== "granted") return false;
        const shown = new api(notice.title, { body: notice.body, tag });
        shown.onclick = () => onClick();
        return true;
      } catch {
        // A notification is a courtesy: its failure must not disturb the page.
        return false;
      }
    },
  };
}

/** The desktop shell's notification command. */
export function shellNotificationSink(shell: Shell): NotificationSink {
  return {
    show: (notice, { otherSession }) => shell.notify(notice.title, notice.body, { otherSession }),
  };
}

/** The setting that turns notifications off. */
export interface NotificationSetting {
  enabled(): boolean;
}

/** The key of the switch kept in the browser when Riot has no `notifications.desktop`. */
export const LOCAL_SWITCH_KEY = "riot.notifications.desktop";

/**
 * The person's choice: Riot's `notifications.desktop` when Riot reports
 * it (`fromRiot`), else the switch in `storage` (on unless turned off).
 */
export class NotificationPreference implements NotificationSetting {
  private fromRiot: boolean | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly storage: Pick<Storage, "getItem" | "setItem"> | null) {}

  /** Riot's `notifications.desktop` (`null`: Riot does not say). */
  setFromRiot(value: boolean | null): void {
    this.fromRiot = value;
    this.changed();
  }

  /** Whether the choice is Riot's setting rather than this browser's switch. */
  get byRiot(): boolean {
    return this.fromRiot !== null;
  }

  enabled(): boolean {
    if (this.fromRiot !== null) return this.fromRiot;
    return this.storage?.getItem(LOCAL_SWITCH_KEY) !== "off";
  }

  /** Turns this browser's switch on or off. */
  setLocal(on: boolean): void {
    this.storage?.setItem(LOCAL_SWITCH_KEY, on ? "on" : "off");
    this.changed();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

export interface NotifierOptions {
  sink: NotificationSink;
  setting: NotificationSetting;
  /** What the page shows now. */
  attention(): PageAttention;
  /** Brings session `sessionId` to the screen (a notification was clicked). */
  show(sessionId: string): void;
}

/** Store hooks that notify as `shouldNotify` decides. */
export function notificationHooks(options: NotifierOptions): StoreHooks {
  const send = (event: NoticeEvent, notice: Notice) => {
    const page = options.attention();
    if (!shouldNotify(event, page, options.setting.enabled())) return;
    void options.sink.show(notice, {
      tag: `riot:${event.sessionId}:${event.kind}`,
      otherSession: page.currentId !== event.sessionId,
      onClick: () => options.show(event.sessionId),
    });
  };
  return {
    turnEnded: ({ sessionId, label, outcome }) =>
      send({ kind: "turn-ended", sessionId, outcome }, turnEndedNotice(label, outcome)),
    question: ({ sessionId, title }) => send({ kind: "question", sessionId }, questionNotice(title)),
  };
}

/** What `followRiotSetting` reads of the store. */
export interface ConfigSource {
  subscribe(listener: () => void): () => void;
  getState(): { modelConfig: { desktopNotifications?: boolean } | null };
}

/**
 * Keeps `preference` on Riot's `notifications.desktop` as the store
 * reads it (`_riot/config`, at the start and after the settings are
 * saved); until Riot reports it, the browser's switch decides. The
 * returned function stops following.
 */
export function followRiotSetting(store: ConfigSource, preference: NotificationPreference): () => void {
  let last: boolean | null | undefined;
  const sync = () => {
    const value = store.getState().modelConfig?.desktopNotifications ?? null;
    if (value === last) return;
    last = value;
    preference.setFromRiot(value);
  };
  sync();
  return store.subscribe(sync);
}

/** What a browser page tells about itself. */
export function pageAttention(doc: Document, currentId: string | null): PageAttention {
  return { currentId, visible: doc.visibilityState === "visible", focused: doc.hasFocus() };
}
