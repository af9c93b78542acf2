import { describe, expect, it } from "vitest";

import type { TerminalUpdate } from "../generated/terminal_update";
import { acceptsInput, applyTerminalUpdate, SCROLLBACK_ROWS, terminalStatus, type TerminalState } from "./terminals";

const SIZE = { rows: 30, cols: 100 };

function fold(updates: TerminalUpdate[], from: readonly TerminalState[] = []): readonly TerminalState[] {
  return updates.reduce(applyTerminalUpdate, from);
}

const opened = (name: string, command: string): TerminalUpdate => ({ type: "opened", name, command, size: SIZE });
const screen = (name: string, rows: string[], cursor_row: number, cursor_col: number): TerminalUpdate => ({
  type: "screen",
  name,
  rows,
  cursor_row,
  cursor_col,
  full_screen: false,
});

describe("applyTerminalUpdate", () => {
  it("keeps each terminal in opening order, with its latest screen and cursor", () => {
    const terminals = fold([
      opened("py", "python3 -q"),
      opened("dev", "npm run dev"),
      screen("py", [">>>", ""], 0, 4),
      screen("dev", ["ready on :3000"], 1, 0),
      screen("py", [">>> 6*7", "42", ">>>"], 2, 4),
    ]);
    expect(terminals).toEqual([
      {
        name: "py",
        command: "python3 -q",
        size: SIZE,
        rows: [">>> 6*7", "42", ">>>"],
        scrollback: [],
        cursor: { row: 2, col: 4 },
        fullScreen: false,
        exit: null,
        closed: false,
      },
      {
        name: "dev",
        command: "npm run dev",
        size: SIZE,
        rows: ["ready on :3000"],
        scrollback: [],
        cursor: { row: 1, col: 0 },
        fullScreen: false,
        exit: null,
        closed: false,
      },
    ]);
  });

  it("keeps the rows that scrolled off as scrollback, oldest first, and at most SCROLLBACK_ROWS of them", () => {
    const scrolled = (rows: string[], off: string[]): TerminalUpdate => ({
      type: "screen",
      name: "log",
      rows,
      cursor_row: rows.length - 1,
      cursor_col: 0,
      full_screen: false,
      scrolled: off,
    });
    let terminals = fold([opened("log", "tail -f log"), scrolled(["c", "d"], ["a", "b"]), scrolled(["e", "f"], ["c", "d"])]);
    expect(terminals[0]!.scrollback).toEqual(["a", "b", "c", "d"]);
    expect(terminals[0]!.rows).toEqual(["e", "f"]);
    // A screen with nothing scrolled keeps the scrollback as it is.
    terminals = fold([screen("log", ["e", "f", "g"], 2, 0)], terminals);
    expect(terminals[0]!.scrollback).toEqual(["a", "b", "c", "d"]);
    const many = Array.from({ length: SCROLLBACK_ROWS + 10 }, (_, i) => `row ${i}`);
    terminals = fold([scrolled(["x"], many)], terminals);
    expect(terminals[0]!.scrollback).toHaveLength(SCROLLBACK_ROWS);
    expect(terminals[0]!.scrollback[SCROLLBACK_ROWS - 1]).toBe(`row ${SCROLLBACK_ROWS + 9}`);
    // Opened again afresh: no scrollback.
    terminals = fold([{ type: "closed", name: "log" }, opened("log", "other")], terminals);
    expect(terminals[0]!.scrollback).toEqual([]);
  });

  it("records how the program ended and that the terminal was closed, keeping its last screen", () => {
    const ran = fold([opened("t", "make"), screen("t", ["done"], 1, 0)]);
    const exited = fold([{ type: "exited", name: "t", exit: { code: 2, signal: null } }], ran);
    expect(exited[0]?.exit).toEqual({ code: 2, signal: null });
    expect(terminalStatus(exited[0]!)).toBe("exited with code 2");
    expect(acceptsInput(exited[0]!)).toBe(false);
    const closed = fold([{ type: "closed", name: "t" }], exited);
    expect(closed[0]).toMatchObject({ rows: ["done"], closed: true });
    expect(terminalStatus(closed[0]!)).toBe("closed (exited with code 2)");

    const killed = fold([opened("k", "sleep 9"), { type: "exited", name: "k", exit: { code: null, signal: 9 } }]);
    expect(terminalStatus(killed[0]!)).toBe("killed by signal 9");
    const shut = fold([opened("c", "cat"), { type: "closed", name: "c" }]);
    expect(terminalStatus(shut[0]!)).toBe("closed");
    expect(acceptsInput(shut[0]!)).toBe(false);
    expect(terminalStatus(fold([opened("r", "cat")])[0]!)).toBe("running");
  });

  it("starts a name opened again afresh, in its place", () => {
    const before = fold([
      opened("a", "cat"),
      opened("b", "python3"),
      screen("a", ["old"], 0, 3),
      { type: "exited", name: "a", exit: { code: 0, signal: null } },
      { type: "closed", name: "a" },
    ]);
    const after = fold([opened("a", "cat -n")], before);
    expect(after.map((t) => t.name)).toEqual(["a", "b"]);
    expect(after[0]).toEqual({
      name: "a",
      command: "cat -n",
      size: SIZE,
      rows: [],
      scrollback: [],
      cursor: { row: 0, col: 0 },
      fullScreen: false,
      exit: null,
      closed: false,
    });
  });

  it("keeps the screen of a running terminal announced again (the session opened once more)", () => {
    const before = fold([opened("py", "python3 -q"), screen("py", [">>>"], 0, 4)]);
    expect(fold([opened("py", "python3 -q")], before)).toEqual(before);
  });

  it("ignores an update about a terminal it was never told of", () => {
    const before = fold([opened("a", "cat")]);
    expect(fold([screen("zz", ["x"], 0, 1), { type: "closed", name: "zz" }], before)).toBe(before);
  });

  it("marks a full-screen program", () => {
    const terminals = fold([
      opened("v", "less README"),
      { type: "screen", name: "v", rows: ["# Riot", "(END)"], cursor_row: 1, cursor_col: 5, full_screen: true },
    ]);
    expect(terminals[0]?.fullScreen).toBe(true);
  });
});
