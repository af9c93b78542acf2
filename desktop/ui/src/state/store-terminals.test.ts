import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FakeRiot } from "../bridge/testing/fake-riot";
import { Store } from "./store";

const PROJECT = "/home/me/project";

async function setup(riot: FakeRiot) {
  const store = new Store(PROJECT, { schedule: (run) => (queueMicrotask(run), () => {}) });
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await store.attach(connection);
  await store.newSession();
  const id = store.getState().currentId!;
  /** Waits (a bounded number of ticks) until `test` holds. */
  const until = async (test: () => boolean) => {
    for (let i = 0; i < 200 && !test(); i++) await new Promise((r) => setTimeout(r, 1));
    expect(test()).toBe(true);
  };
  return { store, id, until };
}

describe("Store: a session's terminals", () => {
  it("keeps each session's terminals from _riot/terminal, live", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { store, id, until } = await setup(riot);
    const terminals = () => store.getState().open[id]?.terminals ?? [];
    expect(store.getState().features.terminals).toBe(true);
    expect(terminals()).toEqual([]);

    await riot.terminal(id, { type: "opened", name: "py", command: "python3 -q", size: { rows: 30, cols: 100 } });
    await riot.terminal(id, { type: "screen", name: "py", rows: [">>>", ""], cursor_row: 0, cursor_col: 4, full_screen: false });
    await until(() => terminals()[0]?.rows.length === 2);
    expect(terminals()).toEqual([
      {
        name: "py",
        command: "python3 -q",
        size: { rows: 30, cols: 100 },
        rows: [">>>", ""],
        scrollback: [],
        cursor: { row: 0, col: 4 },
        fullScreen: false,
        exit: null,
        closed: false,
      },
    ]);

    await riot.terminal(id, { type: "exited", name: "py", exit: { code: 0, signal: null } });
    await until(() => terminals()[0]?.exit !== null);
    expect(terminals()[0]?.exit).toEqual({ code: 0, signal: null });

    // Another session's terminal stays there.
    await store.newSession();
    const other = store.getState().currentId!;
    await riot.terminal(other, { type: "opened", name: "dev", command: "npm run dev", size: { rows: 30, cols: 100 } });
    await until(() => store.getState().open[other]?.terminals.length === 1);
    expect(terminals().map((t) => t.name)).toEqual(["py"]);
    expect(riot.violations).toEqual([]);
  });

  it("types the person's keys in order, what is typed meanwhile sent together next", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { store, id } = await setup(riot);
    await riot.terminal(id, { type: "opened", name: "py", command: "python3 -q", size: { rows: 30, cols: 100 } });
    // Keys as fast as a person (or a test) can press them: none waits for the last one's answer.
    const writes = ["6", "*", "7", "\r"].map((key) => store.writeTerminal(id, "py", key));
    await Promise.all(writes);
    expect(riot.typed).toEqual([
      { sessionId: id, name: "py", input: "6" },
      { sessionId: id, name: "py", input: "*7\r" },
    ]);
    expect(riot.typed.map((t) => t.input).join("")).toBe("6*7\r");
    expect(store.getState().error).toBeNull();
  });

  it("shows Riot's refusal in its words: a terminal that is not open, a program that ended", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { store, id } = await setup(riot);
    await store.writeTerminal(id, "nope", "x");
    expect(store.getState().error).toBe("no terminal named `nope`; open terminals: none");
    await riot.terminal(id, { type: "opened", name: "py", command: "python3 -q", size: { rows: 30, cols: 100 } });
    await riot.terminal(id, { type: "exited", name: "py", exit: { code: 0, signal: null } });
    await store.writeTerminal(id, "py", "x");
    expect(store.getState().error).toBe(
      "the terminal's program has ended; its input is closed (read it, then close it)",
    );
    expect(riot.typed).toEqual([]);
  });

  it("offers no typing when Riot does not list _riot/terminal_write", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: ["_riot/shutdown"] });
    const store = new Store(PROJECT);
    const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
    await store.attach(connection);
    expect(store.getState().features.terminals).toBe(false);
    await expect(connection.writeTerminal("s1", "py", "x")).rejects.toThrow(
      "This Riot does not offer _riot/terminal_write; update riot to use it.",
    );
    store.dispose();
  });
});
