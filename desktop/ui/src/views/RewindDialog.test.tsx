// The rewind picker against the strict fake riot serve: the page, the
// store and the bridge together, as a person uses them.

import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage, type RewindPoint, type RewindScope } from "../bridge";
import { FakeRiot, type FakeTurn } from "../bridge/testing/fake-riot";
import type { FrameScheduler } from "../state/frame-batcher";
import { Store } from "../state/store";
import { App } from "./App";
import { RewindDialog, sentence } from "./RewindDialog";

const PROJECT = "/home/me/project";

const microtaskFrames: FrameScheduler = {
  schedule(run) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

const user = (text: string) => ({ sessionUpdate: "user_message_chunk" as const, content: { type: "text" as const, text } });
const agent = (text: string) => ({ sessionUpdate: "agent_message_chunk" as const, content: { type: "text" as const, text } });

/** A session of three turns: the first changed two files, the third one; the person edited NOTES.md since. */
function threeTurns(edited: string[] = []) {
  const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
  riot.addSession(
    "old",
    PROJECT,
    [
      user("fix the parser"),
      agent("Fixed the parser."),
      user("explain it\nin detail"),
      agent("It reads tokens."),
      user("write notes"),
      agent("Notes written."),
    ],
    { title: "Parser work" },
  );
  riot.setChanges("old", { 1: ["src/parser.rs", "src/new.rs"], 3: ["NOTES.md"] }, edited);
  return riot;
}

async function openOld(riot: FakeRiot) {
  const store = new Store(PROJECT, microtaskFrames);
  render(<App store={store} />);
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await act(() => store.attach(connection));
  fireEvent.click(await screen.findByText("Parser work"));
  await waitFor(() => expect(screen.getAllByTestId("user-message")).toHaveLength(3));
  return store;
}

async function picker() {
  fireEvent.click(screen.getByRole("button", { name: "Rewind…" }));
  const dialog = await screen.findByRole("dialog", { name: "Rewind" });
  await within(dialog).findAllByTestId("rewind-point");
  return dialog;
}

function userMessages(): string[] {
  return screen.getAllByTestId("user-message").map((m) => m.textContent ?? "");
}

describe("the rewind picker", () => {
  it("lists each user message with its number, first line and the files its turn changed", async () => {
    const riot = threeTurns();
    await openOld(riot);
    const dialog = await picker();
    const rows = within(dialog).getAllByTestId("rewind-point");
    expect(rows.map((r) => [r.querySelector(".rewind-number")?.textContent, r.querySelector(".rewind-text")?.textContent])).toEqual([
      ["1", "fix the parser"],
      ["2", "explain it"],
      ["3", "write notes"],
    ]);
    expect(within(dialog).getAllByTestId("rewind-files").map((f) => f.textContent)).toEqual([
      "src/parser.rs, src/new.rs",
      "no files changed",
      "NOTES.md",
    ]);
    // The last message is chosen first; choosing an earlier one shows every file from there on.
    expect(within(dialog).getByTestId("rewind-restores").textContent).toBe("Files to restore: NOTES.md.");
    fireEvent.click(within(rows[0]!).getByRole("radio"));
    expect(within(dialog).getByTestId("rewind-restores").textContent).toBe(
      "Files to restore: src/parser.rs, src/new.rs, NOTES.md.",
    );
    expect(riot.received.filter((m) => m === "_riot/checkpoints")).toHaveLength(1);
    expect(riot.rewinds).toEqual([]);
  });

  it("rewinds files and conversation by default, then reloads the session from the rewind point", async () => {
    const riot = threeTurns();
    await openOld(riot);
    const dialog = await picker();
    fireEvent.click(within(within(dialog).getAllByTestId("rewind-point")[1]!).getByRole("radio"));
    fireEvent.click(within(dialog).getByRole("button", { name: "Rewind" }));
    expect((await within(dialog).findByTestId("rewind-summary")).textContent).toBe(
      "Rewound to just before message 2. The conversation from there on is withdrawn. Restored: NOTES.md.",
    );
    expect(riot.rewinds).toEqual([{ sessionId: "old", to: 2 }]);
    await waitFor(() => expect(userMessages()).toEqual(["fix the parser"]));
    expect(riot.received.filter((m) => m === "session/load")).toHaveLength(2);
    expect(within(dialog).queryByTestId("rewind-conflicts")).toBeNull();
    expect(within(dialog).queryByRole("button", { name: /force/ })).toBeNull();
    fireEvent.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(riot.violations).toEqual([]);
  });

  it("sends files only and conversation only as Riot's flags; files only leaves the conversation shown", async () => {
    const riot = threeTurns();
    await openOld(riot);
    let dialog = await picker();
    fireEvent.click(within(dialog).getByRole("radio", { name: "Files only" }));
    fireEvent.click(within(dialog).getByRole("button", { name: "Rewind" }));
    expect((await within(dialog).findByTestId("rewind-summary")).textContent).toBe(
      "Rewound to just before message 3. Restored: NOTES.md.",
    );
    expect(riot.received.filter((m) => m === "session/load")).toHaveLength(1);
    expect(userMessages()).toEqual(["fix the parser", "explain it\nin detail", "write notes"]);
    fireEvent.click(within(dialog).getByRole("button", { name: "Close" }));

    dialog = await picker();
    fireEvent.click(within(dialog).getByRole("radio", { name: "Conversation only" }));
    expect(within(dialog).queryByTestId("rewind-restores")).toBeNull();
    fireEvent.click(within(dialog).getByRole("button", { name: "Rewind" }));
    expect((await within(dialog).findByTestId("rewind-summary")).textContent).toBe(
      "Rewound to just before message 3. The conversation from there on is withdrawn. Files were left as they are.",
    );
    await waitFor(() => expect(userMessages()).toEqual(["fix the parser", "explain it\nin detail"]));
    expect(riot.rewinds).toEqual([
      { sessionId: "old", to: 3, filesOnly: true },
      { sessionId: "old", to: 3, conversationOnly: true },
    ]);
  });

  it("shows the files the person changed since, and force undoes and resends with force", async () => {
    const riot = threeTurns(["NOTES.md"]);
    await openOld(riot);
    const dialog = await picker();
    fireEvent.click(within(within(dialog).getAllByTestId("rewind-point")[0]!).getByRole("radio"));
    fireEvent.click(within(dialog).getByRole("button", { name: "Rewind" }));
    const conflicts = await within(dialog).findByTestId("rewind-conflicts");
    expect([...conflicts.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["NOTES.md"]);
    await waitFor(() => expect(screen.queryAllByTestId("user-message")).toHaveLength(0));
    fireEvent.click(within(dialog).getByRole("button", { name: "Restore them anyway (force)" }));
    await waitFor(() =>
      expect(within(dialog).getByTestId("rewind-summary").textContent).toBe(
        "Rewound to just before message 1. The conversation from there on is withdrawn. Restored: src/parser.rs, src/new.rs. Restored over your changes (undo the rewind to get them back): NOTES.md.",
      ),
    );
    expect(within(dialog).queryByTestId("rewind-conflicts")).toBeNull();
    expect(riot.rewinds).toEqual([
      { sessionId: "old", to: 1 },
      { sessionId: "old", undo: true },
      { sessionId: "old", to: 1, force: true },
    ]);
    // The undo brought the conversation back and the forced rewind withdrew it again: the page shows Riot's.
    await waitFor(() => expect(riot.received.filter((m) => m === "session/load")).toHaveLength(3));
    expect(screen.queryAllByTestId("user-message")).toHaveLength(0);
    expect(riot.violations).toEqual([]);
  });

  it("is disabled while a turn runs, and offered again when it ends", async () => {
    let release = () => {};
    const riot = threeTurns().script(
      (turn: FakeTurn) =>
        new Promise((resolve) => {
          void turn.send(agent("working"));
          release = () => resolve("end_turn");
        }),
    );
    await openOld(riot);
    const rewind = screen.getByRole("button", { name: "Rewind…" }) as HTMLButtonElement;
    expect(rewind.disabled).toBe(false);
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "more" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(rewind.disabled).toBe(true));
    expect(rewind.title).toBe("A turn is running; rewind when it ends");
    act(() => release());
    await waitFor(() => expect(rewind.disabled).toBe(false));
    expect(riot.received).not.toContain("_riot/checkpoints");
  });

  it("shows Riot's refusal as one sentence and keeps the choice", async () => {
    const riot = threeTurns();
    await openOld(riot);
    const dialog = await picker();
    riot.sessions.delete("old");
    fireEvent.click(within(dialog).getByRole("button", { name: "Rewind" }));
    expect((await within(dialog).findByTestId("rewind-error")).textContent).toBe("Unknown session `old`.");
    expect((within(dialog).getAllByRole("radio")[2] as HTMLInputElement).checked).toBe(true);
    expect(within(dialog).getByRole("button", { name: "Rewind" })).toBeTruthy();
  });
});

describe("sentence", () => {
  it("capitalizes Riot's words and ends them once", () => {
    expect(sentence(new Error("a turn is running in this session; cancel it or wait for its end, then rewind"))).toBe(
      "A turn is running in this session; cancel it or wait for its end, then rewind.",
    );
    expect(sentence(new Error("Not connected to Riot."))).toBe("Not connected to Riot.");
  });
});

describe("RewindDialog on its own", () => {
  const compacted: RewindPoint[] = [
    { number: 1, text: "old work", atMs: 1, inHistory: false, files: ["a.rs"], calls: 1, unfinished: 0 },
    { number: 2, text: "new work", atMs: 2, inHistory: true, files: [], calls: 0, unfinished: 0 },
  ];

  it("offers only files for a message before a compaction, and closes on Escape", async () => {
    const asked: [number, RewindScope, boolean][] = [];
    let closed = 0;
    render(
      <RewindDialog
        load={() => Promise.resolve(compacted)}
        rewind={(to, scope, force) => {
          asked.push([to, scope, force]);
          return Promise.resolve({ to, files: null, conversation: false, prompt: "", summary: "Done." });
        }}
        running={false}
        onClose={() => closed++}
      />,
    );
    const first = (await screen.findAllByTestId("rewind-point"))[0]!;
    expect(first.querySelector(".rewind-note")?.textContent).toBe("before a compaction or clear: files only");
    fireEvent.click(within(first).getByRole("radio"));
    const go = screen.getByRole("button", { name: "Rewind" }) as HTMLButtonElement;
    expect(go.disabled).toBe(true);
    fireEvent.click(screen.getByRole("radio", { name: "Files only" }));
    expect(go.disabled).toBe(false);
    fireEvent.click(go);
    expect((await screen.findByTestId("rewind-summary")).textContent).toBe("Done.");
    expect(asked).toEqual([[1, "files", false]]);
    fireEvent.keyDown(document, { key: "Escape" });
    expect(closed).toBe(1);
  });

  it("says a turn is running and does not rewind then", async () => {
    render(
      <RewindDialog
        load={() => Promise.resolve(compacted)}
        rewind={() => Promise.reject(new Error("must not be asked"))}
        running={true}
        onClose={() => {}}
      />,
    );
    await screen.findAllByTestId("rewind-point");
    expect(screen.getByText("A turn is running; rewind when it ends.")).toBeTruthy();
    expect((screen.getByRole("button", { name: "Rewind" }) as HTMLButtonElement).disabled).toBe(true);
  });
});
