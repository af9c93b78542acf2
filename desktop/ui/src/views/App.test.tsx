// The page against the strict fake riot serve: the store, the bridge and
// the views together, as a person uses them.

import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FAKE_REQUESTS, FakeRiot, UNCONFIGURED, type FakeTurn } from "../bridge/testing/fake-riot";
import { detectShell, type Shell } from "../shell";
import type { FrameScheduler } from "../state/frame-batcher";
import { Store } from "../state/store";
import { App } from "./App";

const PROJECT = "/home/me/project";

/** Frames on the next microtask: no timers to wait for. */
const microtaskFrames: FrameScheduler = {
  schedule(run) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

async function page(riot: FakeRiot, shell?: Shell) {
  const store = new Store(PROJECT, microtaskFrames);
  render(shell === undefined ? <App store={store} /> : <App store={store} shell={shell} />);
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await act(() => store.attach(connection));
  return store;
}

async function newSession() {
  fireEvent.click(screen.getByRole("button", { name: "New session" }));
  return (await screen.findByRole("textbox", { name: "Message" })) as HTMLTextAreaElement;
}

function fill(label: string, value: string) {
  fireEvent.change(screen.getByLabelText(label), { target: { value } });
}

describe("first run and settings", () => {
  it("asks to set up a model when none is ready, and closes once a save makes one ready", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], config: UNCONFIGURED });
    await page(riot);
    const dialog = await screen.findByRole("dialog", { name: "Set up a model" });
    expect(within(dialog).getByTestId("settings-problem").textContent).toBe(
      "No model endpoint is configured: choose a provider and a model.",
    );
    fill("Base URL", "http://127.0.0.1:9999");
    fill("Model", "mock-model");
    fill("API key", "test-key");
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(riot.credentials).toEqual({ anthropic: "test-key" });
    expect(riot.config).toMatchObject({ provider: "anthropic", model: "mock-model", baseUrl: "http://127.0.0.1:9999" });
    // A session can start now, on the saved model.
    await newSession();
    expect((screen.getByRole("combobox", { name: "Model" }) as HTMLInputElement).value).toBe("mock-model");
  });

  it("shows Riot's reason next to the form when it refuses a save, and keeps the form", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], config: UNCONFIGURED });
    await page(riot);
    const dialog = await screen.findByRole("dialog", { name: "Set up a model" });
    fill("Base URL", "ftp://models.example");
    fill("Model", "m");
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    const alert = await within(dialog).findByRole("alert");
    expect(alert.textContent).toBe(
      "base URL `ftp://models.example` is not an http(s) URL: use one like https://api.example.com/v1",
    );
    expect(screen.getByRole("dialog", { name: "Set up a model" })).toBeTruthy();
    expect(riot.config.provider).toBeNull();
  });

  it("opens the same form from Settings, filled in, saying where the key comes from", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    await page(riot);
    expect(screen.queryByRole("dialog")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    const dialog = await screen.findByRole("dialog", { name: "Model settings" });
    expect((within(dialog).getByLabelText("Model") as HTMLInputElement).value).toBe("mock-model");
    expect((within(dialog).getByLabelText("API key") as HTMLInputElement).value).toBe("");
    expect(within(dialog).getByTestId("key-status").textContent).toContain("A key is saved (from $ANTHROPIC_API_KEY)");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("has no Settings where Riot offers no _riot/config", async () => {
    await page(new FakeRiot({ token: "t", projects: [PROJECT], requests: [] }));
    expect(screen.queryByRole("button", { name: "Settings" })).toBeNull();
  });
});

describe("sessions in the sidebar", () => {
  it("renames a session: the new title comes back from session/list", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    riot.addSession("old", PROJECT, [], { title: "Old work" });
    await page(riot);
    fireEvent.click(await screen.findByRole("button", { name: "Rename “Old work”" }));
    const input = screen.getByRole("textbox", { name: "Session title" });
    fireEvent.change(input, { target: { value: "Parser fixes" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await screen.findByText("Parser fixes");
    expect(screen.queryByText("Old work")).toBeNull();
    expect(riot.sessions.get("old")?.title).toBe("Parser fixes");
  });

  it("deletes a session after the confirm step, closing it if open", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    riot.addSession("old", PROJECT, [], { title: "Old work" });
    riot.addSession("keep", PROJECT, [], { title: "Keep me" });
    await page(riot);
    fireEvent.click(await screen.findByText("Old work"));
    await screen.findByRole("textbox", { name: "Message" });
    fireEvent.click(screen.getByRole("button", { name: "Delete “Old work”" }));
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByText("Old work")).toBeNull());
    expect(screen.getByText("Keep me")).toBeTruthy();
    expect(screen.queryByRole("textbox", { name: "Message" })).toBeNull();
    expect([...riot.sessions.keys()]).toEqual(["keep"]);
  });

  it("fills the project directory from the desktop shell's folder picker", async () => {
    const shell = detectShell({ __TAURI_INTERNALS__: { invoke: async () => "/home/me/other" } });
    await page(new FakeRiot({ token: "t", projects: [PROJECT] }), shell);
    fireEvent.click(screen.getByRole("button", { name: "Choose…" }));
    await waitFor(() =>
      expect((screen.getByLabelText("Project directory") as HTMLInputElement).value).toBe("/home/me/other"),
    );
  });

  it("has no folder picker in a plain browser", async () => {
    await page(new FakeRiot({ token: "t", projects: [PROJECT] }));
    expect(screen.queryByRole("button", { name: "Choose…" })).toBeNull();
  });
});

describe("the composer and the session bar", () => {
  it("completes an @ mention from the project's files and sends it", async () => {
    const prompts: string[] = [];
    const riot = new FakeRiot({
      token: "t",
      projects: [PROJECT],
      files: { [PROJECT]: ["Cargo.toml", "src/main.rs", "src/domain.rs", ".env"] },
    }).script(async (turn) => {
      prompts.push(turn.text);
      return "end_turn";
    });
    await page(riot);
    const box = await newSession();
    fireEvent.change(box, { target: { value: "what does @mai" } });
    const files = await screen.findByRole("listbox", { name: "Files" });
    expect(within(files).getAllByRole("option").map((o) => o.textContent)).toEqual(["src/main.rs", "src/domain.rs"]);
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("what does @src/main.rs ");
    fireEvent.change(box, { target: { value: `${box.value}do?` } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(prompts).toEqual(["what does @src/main.rs do?"]));
  });

  it("queues messages written during a turn in Riot's queue, edits and removes them, and sends the rest when the turn ends", async () => {
    const prompts: string[] = [];
    const releases: (() => void)[] = [];
    const gated = (turn: FakeTurn) =>
      new Promise<"end_turn">((resolve) => {
        prompts.push(turn.text);
        releases.push(() => resolve("end_turn"));
      });
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(gated, gated);
    const store = await page(riot);
    const box = await newSession();
    fireEvent.change(box, { target: { value: "first" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(prompts).toEqual(["first"]));
    for (const text of ["A", "B", "C"]) {
      fireEvent.change(box, { target: { value: text } });
      fireEvent.keyDown(box, { key: "Enter" });
    }
    const queue = await screen.findByRole("region", { name: "Queued messages" });
    const shown = () => [...queue.querySelectorAll(".queued-text")].map((q) => q.textContent);
    await waitFor(() => expect(shown()).toEqual(["A", "B", "C"]));
    const id = store.current()?.id ?? "";
    fireEvent.click(within(queue).getByRole("button", { name: "Remove from queue: B" }));
    await waitFor(() => expect(shown()).toEqual(["A", "C"]));
    fireEvent.click(within(queue).getByRole("button", { name: "Edit queued message: C" }));
    const edit = within(queue).getByRole("textbox", { name: "Edit queued message" });
    fireEvent.change(edit, { target: { value: "C, then D" } });
    fireEvent.keyDown(edit, { key: "Enter" });
    await waitFor(() => expect(shown()).toEqual(["A", "C, then D"]));
    // The panel shows Riot's list: Riot has exactly that.
    expect(riot.queued(id).map((m) => m.text)).toEqual(["A", "C, then D"]);
    act(() => releases.shift()?.());
    await waitFor(() => expect(prompts).toEqual(["first", "A\n\nC, then D"]));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Queued messages" })).toBeNull());
    act(() => releases.shift()?.());
    await screen.findByRole("button", { name: "Send" });
    expect(screen.getAllByTestId("user-message").map((m) => m.textContent)).toEqual(["first", "A\n\nC, then D"]);
  });

  it("lists the session's background agents with their state and stops one with its Stop button", async () => {
    // A Riot without `_riot/deliver`: the results wait in the queue for the next prompt.
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== "_riot/deliver") });
    riot.addSession("s-bg", PROJECT, [], { title: "Delegating" });
    const running = {
      id: "bg_1",
      agent: "explore",
      description: "find the config",
      state: "running" as const,
      calls: 2,
      last: "explore: Read src/config.rs",
      result: null,
    };
    await riot.backgroundTask("s-bg", running);
    await riot.backgroundTask("s-bg", {
      ...running,
      id: "bg_2",
      description: "count the tests",
      state: "completed",
      calls: 1,
      last: "explore: Grep #[test]",
      result: "There are 42 tests.",
    });
    const store = await page(riot);
    await act(() => store.openSession("s-bg", PROJECT));
    const panel = await screen.findByRole("region", { name: "Background agents" });
    expect(panel.querySelector(".background-head")?.textContent).toBe("Background agents — 1 running");
    const first = within(panel).getByRole("listitem", { name: "bg_1: find the config" });
    expect(first.querySelector(".background-state")?.textContent).toBe("running · 2 tool calls");
    expect(first.querySelector(".background-last")?.textContent).toBe("explore: Read src/config.rs");
    const second = within(panel).getByRole("listitem", { name: "bg_2: count the tests" });
    expect(second.querySelector(".background-state")?.textContent).toBe("done · 1 tool call");
    expect(within(second).queryByRole("button")).toBeNull();
    expect(second.querySelector(".background-result pre")?.textContent).toBe("There are 42 tests.");
    fireEvent.click(within(first).getByRole("button", { name: "Stop bg_1: find the config" }));
    await waitFor(() => expect(first.querySelector(".background-state")?.textContent).toBe("stopped · 2 tool calls"));
    expect(within(first).queryByRole("button")).toBeNull();
    expect(panel.querySelector(".background-head")?.textContent).toBe("Background agents — none running");
    expect(riot.received.filter((m) => m === "_riot/background_stop")).toHaveLength(1);
    // The results wait in the queue for the agent, shown but not editable.
    const queue = await screen.findByRole("region", { name: "Queued messages" });
    await waitFor(() =>
      expect([...queue.querySelectorAll(".queued-riot .queued-text")].map((q) => q.textContent)).toEqual([
        "Background task bg_2's result",
        "Background task bg_1's result",
      ]),
    );
    expect(within(queue).queryByRole("button", { name: /Remove/ })).toBeNull();
    expect(riot.violations).toEqual([]);
  });

  it("gives a background result that ends while idle to the model at once: working, noted, answered, no message of the person's", async () => {
    let answer = () => {};
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      await new Promise<void>((resolve) => (answer = resolve));
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "bg_1 found 42 tests." } });
      return "end_turn";
    });
    const store = await page(riot);
    await newSession();
    const id = store.current()?.id ?? "";
    await act(() =>
      riot.backgroundTask(id, {
        id: "bg_1",
        agent: "explore",
        description: "count the tests",
        state: "completed",
        calls: 1,
        last: "explore: Grep #[test]",
        result: "There are 42 tests.",
      }),
    );
    // The page works on it before the model says anything, and the queue is empty.
    const working = await screen.findByRole("status");
    expect(working.textContent).toMatch(/^Working…\d+sEsc to stop$/);
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Send" })).toBeNull();
    await screen.findByText("Background task bg_1's result reached the agent.");
    expect(screen.queryByRole("region", { name: "Queued messages" })).toBeNull();
    act(() => answer());
    await screen.findByRole("button", { name: "Send" });
    expect(screen.getAllByTestId("agent-message").map((m) => m.textContent)).toEqual(["bg_1 found 42 tests."]);
    expect(screen.queryAllByTestId("user-message")).toEqual([]);
    expect(riot.received.filter((m) => m === "_riot/deliver")).toHaveLength(1);
    expect(riot.violations).toEqual([]);
  });

  it("shows a result Riot held after a stop as waiting for the person, and Resume queue gives it to the agent", async () => {
    const bg = {
      id: "bg_1",
      agent: "explore",
      description: "count the tests",
      state: "completed" as const,
      calls: 1,
      last: "explore: Grep #[test]",
      result: "There are 42 tests.",
    };
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(
      async (turn) => {
        await new Promise((resolve) => turn.cancelled.addEventListener("abort", resolve));
        return "cancelled";
      },
      async (turn) => {
        await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "bg_1 found 42 tests." } });
        return "end_turn";
      },
    );
    const store = await page(riot);
    await newSession();
    const id = store.current()?.id ?? "";
    await act(() => riot.backgroundTask(id, bg));
    fireEvent.click(await screen.findByRole("button", { name: "Stop" }));
    const queue = await screen.findByRole("region", { name: "Queued messages" });
    expect(within(queue).getByText("Held after a stop — goes with your next message")).toBeTruthy();
    expect(within(queue).getByText("Background task bg_1's result")).toBeTruthy();
    expect(within(queue).getByText("held: goes with your next message")).toBeTruthy();
    expect(riot.received.filter((m) => m === "_riot/deliver")).toHaveLength(1);
    fireEvent.click(within(queue).getByRole("button", { name: "Resume queue" }));
    await screen.findByText("bg_1 found 42 tests.");
    await waitFor(() => expect(screen.queryByRole("region", { name: "Queued messages" })).toBeNull());
    expect(riot.received.filter((m) => m === "_riot/deliver")).toHaveLength(2);
    expect(screen.queryAllByTestId("user-message")).toEqual([]);
    expect(riot.violations).toEqual([]);
  });

  it("offers no Resume for a result held after a stop when Riot does not offer _riot/deliver: it goes with the next message", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== "_riot/deliver") }).script(
      async (turn) => {
        await new Promise((resolve) => turn.cancelled.addEventListener("abort", resolve));
        return "cancelled";
      },
    );
    const store = await page(riot);
    const composer = await newSession();
    const id = store.current()?.id ?? "";
    await act(() => riot.enqueue(id, "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nFound it.\n</background-task>", "riot"));
    fireEvent.change(composer, { target: { value: "what did it find?" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    fireEvent.click(await screen.findByRole("button", { name: "Stop" }));
    const queue = await screen.findByRole("region", { name: "Queued messages" });
    await screen.findByRole("button", { name: "Send" });
    expect(within(queue).getByText("held: goes with your next message")).toBeTruthy();
    expect(within(queue).queryByRole("button", { name: "Resume queue" })).toBeNull();
    expect(riot.received).not.toContain("_riot/deliver");
    expect(riot.violations).toEqual([]);
  });

  it("shows the session's model and switches it with Enter", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async () => "end_turn");
    await page(riot);
    const box = await newSession();
    const model = screen.getByRole("combobox", { name: "Model" }) as HTMLInputElement;
    expect(model.value).toBe("mock-model");
    fireEvent.change(model, { target: { value: "bigger-model" } });
    fireEvent.keyDown(model, { key: "Enter" });
    await waitFor(() => expect(riot.sessions.get("s1")?.model).toBe("bigger-model"));
    await waitFor(() =>
      expect((screen.getByRole("combobox", { name: "Model" }) as HTMLInputElement).value).toBe("bigger-model"),
    );
    // The models seen this session are offered.
    const listId = screen.getByRole("combobox", { name: "Model" }).getAttribute("list") ?? "";
    expect([...(document.getElementById(listId)?.querySelectorAll("option") ?? [])].map((o) => o.value)).toEqual([
      "mock-model",
      "bigger-model",
    ]);
    fireEvent.change(box, { target: { value: "hi" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(screen.getByTestId("usage").textContent).toContain("bigger-model"));
  });

  it("shows the session's cost in the header after each turn, and an unknown cost as a dash, never $0", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(
      async (turn) => {
        // What the kernel computes for this session (cost.rs), reported as is.
        turn.setCost(0.077955);
        return "end_turn";
      },
      async (turn) => {
        turn.setCost(null);
        return "end_turn";
      },
      async (turn) => {
        turn.setCost(12.345);
        return "end_turn";
      },
    );
    await page(riot);
    const box = await newSession();
    expect(screen.queryByTestId("usage-cost")).toBeNull();
    const send = async (text: string) => {
      fireEvent.change(box, { target: { value: text } });
      fireEvent.keyDown(box, { key: "Enter" });
      await screen.findByRole("button", { name: "Send" });
    };
    await send("one");
    await waitFor(() => expect(screen.getByTestId("usage-cost").textContent).toBe("$0.0780"));
    await send("two");
    await waitFor(() => expect(screen.getByTestId("usage-cost").textContent).toBe("—"));
    expect(screen.getByTestId("usage-cost").getAttribute("title")).toBe(
      "Cost unknown: a model of this session has no price. Give it one in Riot's settings: models → price.",
    );
    await send("three");
    await waitFor(() => expect(screen.getByTestId("usage-cost").textContent).toBe("$12.35"));
  });

  it("shows the model read-only when Riot cannot switch it", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: ["_riot/config"] });
    await page(riot);
    await newSession();
    expect(screen.queryByRole("combobox", { name: "Model" })).toBeNull();
    expect(screen.getByTestId("model").textContent).toBe("Model mock-model");
  });
});

describe("the keyboard", () => {
  /** A turn that runs until the client cancels it. */
  const untilCancelled = (turn: FakeTurn) =>
    new Promise<"cancelled">((resolve) => turn.cancelled.addEventListener("abort", () => resolve("cancelled")));

  it("puts the focus in the composer after New session", async () => {
    await page(new FakeRiot({ token: "t", projects: [PROJECT] }));
    const newButton = screen.getByRole("button", { name: "New session" });
    newButton.focus();
    fireEvent.click(newButton);
    const box = await screen.findByRole("textbox", { name: "Message" });
    await waitFor(() => expect(document.activeElement).toBe(box));
  });

  it("shows that Riot is working from the moment a prompt goes out, and Escape stops the turn", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(untilCancelled);
    await page(riot);
    const box = await newSession();
    fireEvent.change(box, { target: { value: "Think" } });
    fireEvent.keyDown(box, { key: "Enter" });
    // Nothing has come back from the model yet, and the page says it works on it.
    const working = await screen.findByRole("status");
    expect(working.textContent).toMatch(/^Working…\d+sEsc to stop$/);
    expect(screen.queryAllByTestId("agent-message")).toEqual([]);

    fireEvent.keyDown(box, { key: "Escape" });
    await screen.findByText("Stopped.");
    expect(riot.received).toContain("session/cancel");
    expect(screen.queryByTestId("working")).toBeNull();
    await screen.findByRole("button", { name: "Send" });
  });

  it("gives Escape to an open / menu first: it closes the menu and the turn runs on", async () => {
    const riot = new FakeRiot({
      token: "t",
      projects: [PROJECT],
      commands: [{ name: "compact", description: "Compact the context" }],
    }).script(untilCancelled);
    await page(riot);
    const box = await newSession();
    fireEvent.change(box, { target: { value: "Think" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await screen.findByTestId("working");
    fireEvent.change(box, { target: { value: "/comp" } });
    await screen.findByRole("listbox", { name: "Commands" });
    fireEvent.keyDown(box, { key: "Escape" });
    expect(screen.queryByRole("listbox", { name: "Commands" })).toBeNull();
    expect(riot.received).not.toContain("session/cancel");
    fireEvent.keyDown(box, { key: "Escape" });
    await screen.findByText("Stopped.");
  });

  it("closes Settings with Escape wherever the focus is, and gives the focus back to its button", async () => {
    await page(new FakeRiot({ token: "t", projects: [PROJECT] }));
    const settings = screen.getByRole("button", { name: "Settings" });
    settings.focus();
    fireEvent.click(settings);
    const dialog = await screen.findByRole("dialog", { name: "Model settings" });
    // The focus moved into the form.
    expect(dialog.contains(document.activeElement)).toBe(true);
    fireEvent.keyDown(document.body, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(document.activeElement).toBe(settings);
  });

  it("has a labelled button for the sessions drawer that says whether it is open", async () => {
    await page(new FakeRiot({ token: "t", projects: [PROJECT] }));
    const toggle = screen.getByRole("button", { name: "Sessions" });
    expect(toggle.getAttribute("aria-controls")).toBe("sidebar");
    expect(document.getElementById("sidebar")).not.toBeNull();
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    fireEvent.click(screen.getByRole("button", { name: "New session" }));
    await screen.findByRole("textbox", { name: "Message" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
  });
});
