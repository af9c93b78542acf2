// Sessions in git worktrees from the page (docs/parallel.md), against the
// strict fake riot serve: the action sends `_meta.riot.worktree`, the
// worktree Riot made is shown in the session bar and the session list,
// and Riot's refusal is shown in its words.

import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FakeRiot } from "../bridge/testing/fake-riot";
import type { FrameScheduler } from "../state/frame-batcher";
import { Store } from "../state/store";
import { App } from "./App";

const PROJECT = "/home/me/project";
const PLAIN = "/home/me/notes";

const microtaskFrames: FrameScheduler = {
  schedule(run) {
    let live = true;
    queueMicrotask(() => live && run());
    return () => {
      live = false;
    };
  },
};

async function page(riot: FakeRiot, projectDir = PROJECT) {
  const store = new Store(projectDir, microtaskFrames);
  render(<App store={store} />);
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await act(() => store.attach(connection));
  return store;
}

/** Opens the worktree form, types `name`, starts. */
function startInWorktree(name: string) {
  fireEvent.click(screen.getByRole("button", { name: "New worktree session…" }));
  const form = screen.getByRole("form", { name: "New session in a worktree" });
  fireEvent.change(within(form).getByLabelText("Worktree name (empty: Riot picks one)"), { target: { value: name } });
  fireEvent.click(within(form).getByRole("button", { name: "Start in worktree" }));
}

describe("a new session in a worktree", () => {
  it("asks session/new for the named worktree and shows its name and branch in the session bar and the list", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] }).script(async (turn) => {
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ok" } });
      return "end_turn";
    });
    const store = await page(riot);
    startInWorktree("  fix-login ");
    const box = await screen.findByRole("textbox", { name: "Message" });
    // The request carried the name (trimmed); a plain session/new carries none.
    expect(riot.newSessionMeta).toEqual([{ riot: { worktree: "fix-login" } }]);
    const path = "/home/me/.riot/worktrees/project-0123abcd/fix-login";
    const bar = document.querySelector(".session-bar") as HTMLElement;
    const badge = within(bar).getByTestId("worktree");
    expect(badge.textContent).toBe("⎇ fix-loginriot/fix-login");
    expect(badge.getAttribute("title")).toBe(
      `Works in the git worktree fix-login at ${path}, on the branch riot/fix-login`,
    );
    // The session works in the worktree, not in the project.
    expect(within(bar).getByTitle(path).textContent).toBe(path);
    const id = store.getState().currentId ?? "";
    expect(store.getState().open[id]?.cwd).toBe(path);
    expect(riot.sessions.get(id)?.cwd).toBe(path);

    fireEvent.change(box, { target: { value: "hello" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await screen.findByText("ok");
    // Listed under the project it was made from, with its worktree.
    const nav = screen.getByRole("navigation", { name: "Sessions" });
    await waitFor(() => expect(within(nav).queryByTestId("worktree")).not.toBeNull());
    const row = within(nav).getByTestId("worktree").closest("section") as HTMLElement;
    expect(within(row).getByRole("heading").textContent).toBe("project");
    expect(within(nav).getByTestId("worktree").textContent).toBe("⎇ fix-loginriot/fix-login");
  });

  it("leaves the name to Riot when none is typed, and a plain New session asks for no worktree", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] });
    await page(riot);
    startInWorktree("   ");
    await screen.findByRole("textbox", { name: "Message" });
    fireEvent.click(screen.getByRole("button", { name: "New session" }));
    await waitFor(() => expect(riot.newSessionMeta).toHaveLength(2));
    expect(riot.newSessionMeta).toEqual([{ riot: { worktree: "" } }, null]);
    // The second session is in the project itself: no worktree shown.
    await waitFor(() => expect(document.querySelector(".session-bar [data-testid=worktree]")).toBeNull());
    const bar = document.querySelector(".session-bar") as HTMLElement;
    expect(within(bar).getByTitle(PROJECT).textContent).toBe(PROJECT);
  });

  it("shows Riot's refusal when the project is not a git repository, and opens no session", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PLAIN], gitProjects: [] });
    const store = await page(riot, PLAIN);
    startInWorktree("w1");
    const error = await screen.findByTestId("error");
    expect(error.textContent).toBe(
      "Could not start a session in a worktree: /home/me/notes is not in a git repository; worktrees need one (run `git init` and commit first, or drop --worktree)×",
    );
    expect(store.getState().currentId).toBeNull();
    expect(riot.sessions.size).toBe(0);
    expect(screen.queryByRole("textbox", { name: "Message" })).toBeNull();
  });

  it("shows Riot's refusal of a bad name", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] });
    await page(riot);
    startInWorktree("-x");
    const error = await screen.findByTestId("error");
    expect(error.querySelector("span")?.textContent).toBe(
      "Could not start a session in a worktree: `-x` cannot name a worktree: use 1–64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-` (e.g. --worktree fix-login)",
    );
  });

  it("closes the form with Cancel or Escape without starting anything", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] });
    await page(riot);
    fireEvent.click(screen.getByRole("button", { name: "New worktree session…" }));
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("form", { name: "New session in a worktree" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "New worktree session…" }));
    fireEvent.keyDown(screen.getByLabelText("Worktree name (empty: Riot picks one)"), { key: "Escape" });
    expect(screen.queryByRole("form", { name: "New session in a worktree" })).toBeNull();
    expect(riot.newSessionMeta).toEqual([]);
  });

  it("shows the worktree of a listed session when it is opened, and keeps the project as the place to start", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] }).script(async () => "end_turn");
    const first = await page(riot);
    startInWorktree("w2");
    const box = await screen.findByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "go" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(first.getState().sessions).toHaveLength(1));
    first.dispose();
    cleanup();
    // A second page (a reload, no project chosen yet) opens it from the list.
    await page(riot, "");
    // The project to start in is the one the worktree came from, not the worktree.
    expect((screen.getByLabelText("Project directory") as HTMLInputElement).value).toBe(PROJECT);
    const nav = screen.getByRole("navigation", { name: "Sessions" });
    const row = nav.querySelector("button.session") as HTMLButtonElement;
    expect(row.textContent).toContain("go");
    fireEvent.click(row);
    const bar = await waitFor(() => document.querySelector(".session-bar") as HTMLElement);
    expect(within(bar).getByTestId("worktree").textContent).toBe("⎇ w2riot/w2");
  });

  it("marks a listed session whose worktree Riot removed", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], gitProjects: [PROJECT] }).script(async () => "end_turn");
    const first = await page(riot);
    startInWorktree("w3");
    const box = await screen.findByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "go" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(first.getState().sessions).toHaveLength(1));
    first.dispose();
    cleanup();
    riot.removeWorktree("w3");
    await page(riot, "");
    const nav = screen.getByRole("navigation", { name: "Sessions" });
    const badge = await waitFor(() => within(nav).getByTestId("worktree"));
    expect(badge.textContent).toBe("⎇ w3riot/w3removed");
    expect(badge.getAttribute("title")).toBe(
      "Worked in the git worktree w3, which was removed: the session cannot be reopened there (its branch riot/w3, if kept, holds what it committed)",
    );
  });
});
