import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FakeRiot } from "../bridge/testing/fake-riot";
import { Store } from "../state/store";
import {
  browserShell,
  detectShell,
  notificationHooks,
  questionNotice,
  shellNotificationSink,
  turnEndedNotice,
} from "./index";

/** A stand-in for the Tauri shell's IPC: records each invoke, answers with `answer`. */
function fakeTauri(answer: (cmd: string, args: unknown) => unknown) {
  const calls: [string, unknown][] = [];
  const scope = {
    __TAURI_INTERNALS__: {
      invoke: async (cmd: string, args?: unknown) => {
        calls.push([cmd, args]);
        return answer(cmd, args);
      },
    },
  };
  return { scope, calls };
}

const microtaskFrames = {
  schedule(run: () => void) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

describe("the desktop shell bridge", () => {
  it("is a plain browser without __TAURI_INTERNALS__ (or without its invoke)", async () => {
    expect(detectShell({})).toBe(browserShell);
    expect(detectShell({ __TAURI_INTERNALS__: { invoke: "no" } })).toBe(browserShell);
    expect(detectShell(globalThis).desktop).toBe(false);
    expect(await browserShell.pickFolder()).toBeNull();
    expect(await browserShell.notify("Riot", "x")).toBe(false);
  });

  it("picks a folder with the shell's pick_folder command", async () => {
    const answers: unknown[] = ["/home/me/project", null, 42];
    const { scope, calls } = fakeTauri(() => answers.shift());
    const shell = detectShell(scope);
    expect(shell.desktop).toBe(true);
    expect(await shell.pickFolder()).toBe("/home/me/project");
    expect(await shell.pickFolder()).toBeNull();
    await expect(shell.pickFolder()).rejects.toThrow("the desktop shell's folder picker answered 42, not a path");
    expect(calls).toEqual([
      ["pick_folder", undefined],
      ["pick_folder", undefined],
      ["pick_folder", undefined],
    ]);
  });

  it("notifies with {title, body}, and a failing notification is no error", async () => {
    let fail = false;
    const { scope, calls } = fakeTauri(() => {
      if (fail) throw new Error("no notification daemon");
      return true;
    });
    const shell = detectShell(scope);
    expect(await shell.notify("Riot", "project — done")).toBe(true);
    expect(await shell.notify("Riot", "other — done", { otherSession: true })).toBe(true);
    fail = true;
    expect(await shell.notify("Riot", "again")).toBe(false);
    expect(calls).toEqual([
      ["notify", { title: "Riot", body: "project — done" }],
      // Shown by the shell even while its window is focused: the page is not showing that session.
      ["notify", { title: "Riot", body: "other — done", otherSession: true }],
      ["notify", { title: "Riot", body: "again" }],
    ]);
  });

  it("words the notices on one line", () => {
    expect(turnEndedNotice("Fix the parser", "done")).toEqual({ title: "Riot", body: "Fix the parser — done" });
    expect(turnEndedNotice("/home/me/project", "stopped")).toEqual({ title: "Riot", body: "/home/me/project — stopped" });
    expect(questionNotice("Write out.txt\nmore")).toEqual({ title: "Riot needs your answer", body: "Write out.txt" });
    expect(questionNotice("")).toEqual({ title: "Riot needs your answer", body: "A tool is waiting for your permission." });
  });

  it("notifies through the shell when a question arrives and when the turn ends, the page being in the background", async () => {
    const { scope, calls } = fakeTauri(() => true);
    const riot = new FakeRiot({ token: "t", projects: ["/p"] }).script(async (turn) => {
      await turn.ask({ toolCallId: "c1", title: "Write out.txt", kind: "edit" }, [
        { optionId: "allow_once", name: "Allow", kind: "allow_once" },
      ]);
      return "end_turn";
    });
    const hooks = notificationHooks({
      sink: shellNotificationSink(detectShell(scope)),
      setting: { enabled: () => true },
      attention: () => ({ currentId: store.getState().currentId, visible: true, focused: false }),
      show: () => {},
    });
    const store: Store = new Store("/p", microtaskFrames, hooks);
    await store.attach(await connectToRiot(endpointFromPage("http://h/?token=t"), store.events, riot.connect));
    await store.newSession();
    const sent = store.send("Write the file");
    for (let i = 0; i < 100 && store.getState().permissions.length === 0; i++) await new Promise((r) => setTimeout(r, 1));
    expect(calls).toEqual([["notify", { title: "Riot needs your answer", body: "Write out.txt" }]]);
    store.answer(store.getState().permissions[0]?.key ?? "", "allow_once");
    await sent;
    for (let i = 0; i < 100 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 1));
    expect(calls[1]).toEqual(["notify", { title: "Riot", body: "Write the file — done" }]);
  });
});
