// When the page notifies (shell/notify.ts): which events, only for a
// session the person is not looking at, never when turned off; the web
// Notification API injected, its permission asked once; the switch.

import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FakeRiot, type FakeTurn } from "../bridge/testing/fake-riot";
import { Store } from "../state/store";
import {
  followRiotSetting,
  NotificationPreference,
  notificationHooks,
  pageAttention,
  shouldNotify,
  webNotificationSink,
  type NotificationSink,
  type PageAttention,
  type WebNotificationApi,
} from "./index";
import { LOCAL_SWITCH_KEY } from "./notify";

const microtaskFrames = {
  schedule(run: () => void) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

const LOOKING_AT_A: PageAttention = { currentId: "a", visible: true, focused: true };

describe("which events notify", () => {
  it("notifies only for a session the person is not looking at", () => {
    const ended = { kind: "turn-ended", sessionId: "a", outcome: "done" } as const;
    const asked = { kind: "question", sessionId: "a" } as const;
    // On screen, page visible and focused: nothing.
    expect(shouldNotify(ended, LOOKING_AT_A, true)).toBe(false);
    expect(shouldNotify(asked, LOOKING_AT_A, true)).toBe(false);
    // Another session on screen.
    expect(shouldNotify(ended, { ...LOOKING_AT_A, currentId: "b" }, true)).toBe(true);
    expect(shouldNotify(asked, { ...LOOKING_AT_A, currentId: null }, true)).toBe(true);
    // The page in a background tab, or its window not the active one.
    expect(shouldNotify(ended, { ...LOOKING_AT_A, visible: false }, true)).toBe(true);
    expect(shouldNotify(asked, { ...LOOKING_AT_A, focused: false }, true)).toBe(true);
  });

  it("tells of a done or failed turn but not one the person stopped", () => {
    const away = { ...LOOKING_AT_A, currentId: "b" };
    expect(shouldNotify({ kind: "turn-ended", sessionId: "a", outcome: "failed" }, away, true)).toBe(true);
    expect(shouldNotify({ kind: "turn-ended", sessionId: "a", outcome: "stopped" }, away, true)).toBe(false);
  });

  it("never notifies when turned off", () => {
    const away = { currentId: "b", visible: false, focused: false };
    expect(shouldNotify({ kind: "turn-ended", sessionId: "a", outcome: "done" }, away, false)).toBe(false);
    expect(shouldNotify({ kind: "question", sessionId: "a" }, away, false)).toBe(false);
  });

  it("reads the page's visibility and focus", () => {
    const doc = { visibilityState: "hidden", hasFocus: () => true } as unknown as Document;
    expect(pageAttention(doc, "a")).toEqual({ currentId: "a", visible: false, focused: true });
  });
});

/** A sink that records what it was asked to show. */
function recordingSink() {
  const shown: { title: string; body: string; tag: string; otherSession: boolean; click: () => void }[] = [];
  const sink: NotificationSink = {
    show: async (notice, options) => {
      shown.push({ ...notice, tag: options.tag, otherSession: options.otherSession, click: options.onClick });
      return true;
    },
  };
  return { sink, shown };
}

describe("the store's turn ends and questions, notified", () => {
  it("tells of another session's end and question, not of the one in view, and nothing when off", async () => {
    const { sink, shown } = recordingSink();
    let page: PageAttention = { currentId: null, visible: true, focused: true };
    let enabled = true;
    const clicked: string[] = [];
    const hooks = notificationHooks({
      sink,
      setting: { enabled: () => enabled },
      attention: () => ({ ...page, currentId: store.getState().currentId }),
      show: (id) => clicked.push(id),
    });
    let release: () => void = () => {};
    const riot = new FakeRiot({ token: "t", projects: ["/p"] }).script(
      // Session one's turn: it asks, then waits until released.
      async (turn: FakeTurn) => {
        await turn.ask({ toolCallId: "c1", title: "Write out.txt", kind: "edit" }, [
          { optionId: "allow_once", name: "Allow", kind: "allow_once" },
        ]);
        await new Promise<void>((r) => (release = r));
        return "end_turn";
      },
      async () => "end_turn",
      async () => "end_turn",
    );
    const store: Store = new Store("/p", microtaskFrames, hooks);
    await store.attach(await connectToRiot(endpointFromPage("http://h/?token=t"), store.events, riot.connect));
    await store.newSession();
    const one = store.getState().currentId ?? "";
    const first = store.send("Write the file");
    const settle = async (test: () => boolean) => {
      for (let i = 0; i < 200 && !test(); i++) await new Promise((r) => setTimeout(r, 1));
    };
    await settle(() => store.getState().permissions.length > 0);
    expect(store.getState().permissions).toHaveLength(1);
    // Session one is on screen, the page visible and focused: its question is not news.
    expect(shown).toEqual([]);
    store.answer(store.getState().permissions[0]?.key ?? "", "allow_once");

    // Session two is shown now; session one's turn ends behind it.
    await store.newSession();
    const two = store.getState().currentId ?? "";
    expect(two).not.toBe(one);
    release();
    await first;
    await settle(() => shown.length > 0);
    expect(shown.map(({ click: _, ...rest }) => rest)).toEqual([
      { title: "Riot", body: "Write the file — done", tag: `riot:${one}:turn-ended`, otherSession: true },
    ]);
    // Clicking it brings session one back.
    shown[0]?.click();
    expect(clicked).toEqual([one]);

    // The session in view ends while the page is hidden: told, as the session on screen.
    page = { ...page, visible: false };
    await store.send("Again");
    await settle(() => shown.length > 1);
    expect(shown[1]).toMatchObject({ body: "Again — done", tag: `riot:${two}:turn-ended`, otherSession: false });

    // Turned off: nothing more.
    enabled = false;
    await store.send("Once more");
    await new Promise((r) => setTimeout(r, 20));
    expect(shown).toHaveLength(2);
  });
});

/** A stand-in for the browser's Notification: records what was shown and each permission request. */
function fakeWebNotifications(start: NotificationPermission, answer: NotificationPermission) {
  const shown: { title: string; options: NotificationOptions | undefined; instance: { onclick: unknown } }[] = [];
  let requests = 0;
  class FakeNotification {
    static permission: NotificationPermission = start;
    static async requestPermission(): Promise<NotificationPermission> {
      requests++;
      // The person answers later, as a browser's prompt does.
      await new Promise((r) => setTimeout(r, 1));
      FakeNotification.permission = answer;
      return answer;
    }
    onclick: ((this: never, ev: Event) => unknown) | null = null;
    constructor(title: string, options?: NotificationOptions) {
      shown.push({ title, options, instance: this });
    }
  }
  return { api: FakeNotification as WebNotificationApi, shown, requests: () => requests };
}

describe("the web Notification API", () => {
  const notice = { title: "Riot", body: "Fix the parser — done" };

  it("asks for permission the first time one is needed, once, then shows it with its tag; a click opens the session", async () => {
    const web = fakeWebNotifications("default", "granted");
    const sink = webNotificationSink(web.api);
    const clicks: string[] = [];
    const options = { tag: "riot:s1:turn-ended", otherSession: true, onClick: () => clicks.push("s1") };
    const [a, b] = await Promise.all([sink.show(notice, options), sink.show(notice, options)]);
    expect([a, b]).toEqual([true, true]);
    expect(web.requests()).toBe(1);
    expect(web.shown.map((s) => [s.title, s.options])).toEqual([
      ["Riot", { body: "Fix the parser — done", tag: "riot:s1:turn-ended" }],
      ["Riot", { body: "Fix the parser — done", tag: "riot:s1:turn-ended" }],
    ]);
    (web.shown[0]?.instance.onclick as () => void)();
    expect(clicks).toEqual(["s1"]);
  });

  it("shows nothing once refused, and asks no more", async () => {
    const web = fakeWebNotifications("default", "denied");
    const sink = webNotificationSink(web.api);
    const options = { tag: "t", otherSession: false, onClick: () => {} };
    expect(await sink.show(notice, options)).toBe(false);
    expect(await sink.show(notice, options)).toBe(false);
    expect(web.requests()).toBe(1);
    expect(web.shown).toEqual([]);
    const blocked = fakeWebNotifications("denied", "denied");
    expect(await webNotificationSink(blocked.api).show(notice, options)).toBe(false);
    expect(blocked.requests()).toBe(0);
  });

  it("does nothing without the API, and a failing one is no error", async () => {
    const options = { tag: "t", otherSession: false, onClick: () => {} };
    expect(await webNotificationSink(undefined).show(notice, options)).toBe(false);
    const broken = {
      permission: "granted",
      requestPermission: async () => "granted",
      prototype: {},
    } as unknown as WebNotificationApi;
    expect(await webNotificationSink(broken).show(notice, options)).toBe(false);
  });
});

/** An in-memory Storage. */
function memoryStorage() {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    items,
  };
}

describe("the notifications switch", () => {
  it("is on until turned off, and the choice is kept in the browser", () => {
    const storage = memoryStorage();
    const preference = new NotificationPreference(storage);
    let changes = 0;
    preference.subscribe(() => changes++);
    expect(preference.enabled()).toBe(true);
    preference.setLocal(false);
    expect(preference.enabled()).toBe(false);
    expect(storage.items.get(LOCAL_SWITCH_KEY)).toBe("off");
    expect(new NotificationPreference(storage).enabled()).toBe(false);
    preference.setLocal(true);
    expect(new NotificationPreference(storage).enabled()).toBe(true);
    expect(changes).toBe(2);
  });

  it("follows Riot's notifications.desktop when Riot reports it", () => {
    const storage = memoryStorage();
    const preference = new NotificationPreference(storage);
    preference.setFromRiot(false);
    expect(preference.byRiot).toBe(true);
    expect(preference.enabled()).toBe(false);
    preference.setFromRiot(null);
    expect(preference.byRiot).toBe(false);
    expect(preference.enabled()).toBe(true);
  });

  it("follows notifications.desktop from Riot's _riot/config, and the browser's switch when Riot does not say", async () => {
    const settings = { bell: true, title: true, desktop: false };
    for (const [notifications, enabled, byRiot] of [
      [settings, false, true],
      [undefined, true, false],
    ] as const) {
      const riot = new FakeRiot({ token: "t", projects: ["/p"], ...(notifications ? { notifications } : {}) });
      const store = new Store("/p", microtaskFrames);
      const preference = new NotificationPreference(memoryStorage());
      const stop = followRiotSetting(store, preference);
      expect(preference.byRiot).toBe(false);
      await store.attach(await connectToRiot(endpointFromPage("http://h/?token=t"), store.events, riot.connect));
      expect(store.getState().modelConfig?.desktopNotifications).toBe(notifications?.desktop);
      expect(preference.enabled()).toBe(enabled);
      expect(preference.byRiot).toBe(byRiot);
      stop();
      store.dispose();
    }
  });
});
