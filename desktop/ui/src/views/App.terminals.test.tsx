// The page's terminal view against the strict fake riot serve: the
// `_riot/terminal` updates reach the open session's view, keys typed into
// the screen reach Riot as `_riot/terminal_write`, Escape in the screen
// goes to the program, not to the running turn, and "Fit to panel" asks
// Riot for a new size with `_riot/terminal_resize`.

import { act, fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { FakeRiot } from "../bridge/testing/fake-riot";
import { PROJECT, pageWithSession as page } from "./testing";

function rows(): string[] {
  return [...screen.getByTestId("terminal-screen").querySelectorAll(".terminal-row")].map((r) => r.textContent ?? "");
}

describe("the page's terminal view", () => {
  it("shows the session's terminal live and types the person's keys into it", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { id } = await page(riot);
    expect(screen.queryByRole("region", { name: "Terminals" })).toBeNull();

    await act(() => riot.terminal(id, { type: "opened", name: "py", command: "python3 -q", size: { rows: 30, cols: 100 } }));
    await act(() =>
      riot.terminal(id, { type: "screen", name: "py", rows: [">>>", "", ""], cursor_row: 0, cursor_col: 4, full_screen: false }),
    );
    const box = await screen.findByRole("textbox", { name: "Screen of terminal py" });
    expect(rows()).toEqual([">>>  "]);

    fireEvent.keyDown(box, { key: "1" });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(riot.typed.map((t) => t.input).join("")).toBe("1\r"));
    expect(riot.typed.every((t) => t.sessionId === id && t.name === "py")).toBe(true);
    // The keys went to the terminal, not to the composer.
    expect((screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement).value).toBe("");

    await act(() =>
      riot.terminal(id, { type: "screen", name: "py", rows: [">>> 1", "1", ">>>"], cursor_row: 2, cursor_col: 4, full_screen: false }),
    );
    expect(rows()).toEqual([">>> 1", "1", ">>>  "]);
    await act(() => riot.terminal(id, { type: "exited", name: "py", exit: { code: 0, signal: null } }));
    expect(screen.getByTestId("terminal-status").textContent).toBe("exited with code 0");
    expect(riot.violations).toEqual([]);
  });

  it("sends Escape in the screen to the program and leaves the running turn alone", async () => {
    let release = () => {};
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return "end_turn";
    });
    const { store, id } = await page(riot);
    await act(() => riot.terminal(id, { type: "opened", name: "vi", command: "vi notes.txt", size: { rows: 30, cols: 100 } }));
    const sent = store.send("edit the notes");
    await waitFor(() => expect(store.current()?.running).toBe(true));

    fireEvent.keyDown(screen.getByRole("textbox", { name: "Screen of terminal vi" }), { key: "Escape" });
    await waitFor(() => expect(riot.typed.map((t) => t.input)).toEqual(["\u001b"]));
    expect(riot.received).not.toContain("session/cancel");
    expect(store.current()?.stopping).toBe(false);

    release();
    await act(() => sent);
  });

  it("fits the terminal to its panel through _riot/terminal_resize and shows the size Riot set", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { id } = await page(riot);
    await act(() => riot.terminal(id, { type: "opened", name: "sh", command: "bash", size: { rows: 30, cols: 100 } }));
    await screen.findByRole("textbox", { name: "Screen of terminal sh" });
    expect(screen.getByTestId("terminal-size").textContent).toBe("100×30");
    fireEvent.click(screen.getByRole("button", { name: "Fit to panel" }));
    // jsdom lays nothing out: the fit is the smallest size, which Riot keeps.
    await waitFor(() => expect(riot.resized).toEqual([{ sessionId: id, name: "sh", rows: 5, cols: 20 }]));
    await waitFor(() => expect(screen.getByTestId("terminal-size").textContent).toBe("20×5"));
    // An ended program cannot be resized.
    await act(() => riot.terminal(id, { type: "exited", name: "sh", exit: { code: 0 } }));
    expect(screen.queryByRole("button", { name: "Fit to panel" })).toBeNull();
  });

  it("keeps the rows that scrolled off the screen above it", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { id } = await page(riot);
    await act(() => riot.terminal(id, { type: "opened", name: "log", command: "seq 40", size: { rows: 30, cols: 100 } }));
    await act(() =>
      riot.terminal(id, {
        type: "screen",
        name: "log",
        rows: ["3", "4"],
        cursor_row: 1,
        cursor_col: 1,
        full_screen: false,
        scrolled: ["1", "2"],
      }),
    );
    const box = await screen.findByRole("textbox", { name: "Screen of terminal log" });
    const kept = [...box.querySelectorAll(".terminal-scrollback-row")].map((r) => r.textContent);
    expect(kept).toEqual(["1", "2"]);
    expect(rows()).toEqual(["3", "4 "]);
  });
});
