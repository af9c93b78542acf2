import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { TerminalState } from "../state/terminals";
import { TerminalPanel } from "./TerminalPanel";
import { keyInput, pastedInput, type KeyPress } from "./terminal-keys";

function press(key: string, mods: Partial<Omit<KeyPress, "key">> = {}): KeyPress {
  return { key, ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...mods };
}

describe("keyInput: the bytes a terminal sends", () => {
  it("types printable characters as they are", () => {
    expect(keyInput(press("a"))).toBe("a");
    expect(keyInput(press("A", { shiftKey: true }))).toBe("A");
    expect(keyInput(press(" "))).toBe(" ");
    expect(keyInput(press("é"))).toBe("é");
    expect(keyInput(press("😀"))).toBe("😀");
  });

  it("sends Enter as a carriage return, Backspace as DEL, Tab and Escape as themselves", () => {
    expect(keyInput(press("Enter"))).toBe("\r");
    expect(keyInput(press("Backspace"))).toBe("\u007f");
    expect(keyInput(press("Tab"))).toBe("\t");
    expect(keyInput(press("Tab", { shiftKey: true }))).toBe("\u001b[Z");
    expect(keyInput(press("Escape"))).toBe("\u001b");
  });

  it("sends the arrows and the editing keys as xterm's escape sequences", () => {
    expect(keyInput(press("ArrowUp"))).toBe("\u001b[A");
    expect(keyInput(press("ArrowDown"))).toBe("\u001b[B");
    expect(keyInput(press("ArrowRight"))).toBe("\u001b[C");
    expect(keyInput(press("ArrowLeft"))).toBe("\u001b[D");
    expect(keyInput(press("Home"))).toBe("\u001b[H");
    expect(keyInput(press("End"))).toBe("\u001b[F");
    expect(keyInput(press("Delete"))).toBe("\u001b[3~");
    expect(keyInput(press("PageUp"))).toBe("\u001b[5~");
    expect(keyInput(press("PageDown"))).toBe("\u001b[6~");
  });

  it("sends Ctrl with a letter as its control character", () => {
    expect(keyInput(press("c", { ctrlKey: true }))).toBe("\u0003");
    expect(keyInput(press("d", { ctrlKey: true }))).toBe("\u0004");
    expect(keyInput(press("C", { ctrlKey: true }))).toBe("\u0003");
    expect(keyInput(press("z", { ctrlKey: true }))).toBe("\u001a");
    expect(keyInput(press("[", { ctrlKey: true }))).toBe("\u001b");
    // Alt is Meta: ESC first.
    expect(keyInput(press("b", { altKey: true }))).toBe("\u001bb");
  });

  it("leaves the system's and the browser's shortcuts alone", () => {
    expect(keyInput(press("Shift", { shiftKey: true }))).toBeNull();
    expect(keyInput(press("Control", { ctrlKey: true }))).toBeNull();
    expect(keyInput(press("c", { metaKey: true }))).toBeNull();
    expect(keyInput(press("C", { ctrlKey: true, shiftKey: true }))).toBeNull();
    expect(keyInput(press("F5"))).toBeNull();
    expect(keyInput(press("Enter", { ctrlKey: true }))).toBeNull();
    // AltGr (Ctrl+Alt) makes a character: it is typed.
    expect(keyInput(press("@", { ctrlKey: true, altKey: true }))).toBe("@");
  });

  it("types a paste with its line ends as Enter", () => {
    expect(pastedInput("ls\nexit\r\n")).toBe("ls\rexit\r");
  });
});

function terminal(over: Partial<TerminalState> = {}): TerminalState {
  return {
    name: "py",
    command: "python3 -q",
    size: { rows: 30, cols: 100 },
    rows: [">>> 6*7", "42", ">>>", "", "", ""],
    scrollback: [],
    cursor: { row: 2, col: 4 },
    fullScreen: false,
    exit: null,
    closed: false,
    ...over,
  };
}

function rows(): string[] {
  return [...screen.getByTestId("terminal-screen").querySelectorAll(".terminal-row")].map((r) => r.textContent ?? "");
}

describe("TerminalPanel", () => {
  it("shows nothing while the session has no terminal", () => {
    const { container } = render(<TerminalPanel terminals={[]} canType onType={() => {}} />);
    expect(container.innerHTML).toBe("");
  });

  it("renders the screen as rows, down to the cursor, with the cursor over its cell", () => {
    render(<TerminalPanel terminals={[terminal()]} canType onType={() => {}} />);
    // Empty rows below the cursor are left out; the cursor is one cell past ">>>".
    expect(rows()).toEqual([">>> 6*7", "42", ">>>  "]);
    expect(screen.getByTestId("terminal-cursor").textContent).toBe(" ");
    expect(screen.getByText("python3 -q").tagName).toBe("CODE");
    expect(screen.getByTestId("terminal-status").textContent).toBe("running");
    expect(screen.getByRole("tab", { name: "py" }).getAttribute("aria-selected")).toBe("true");
  });

  it("keeps rows with text below the cursor (a full-screen program's status line)", () => {
    const less = terminal({ name: "v", rows: ["# Riot", "", "", "(END)", ""], cursor: { row: 0, col: 0 }, fullScreen: true });
    render(<TerminalPanel terminals={[less]} canType onType={() => {}} />);
    expect(rows()).toEqual(["# Riot", "\u00a0", "\u00a0", "(END)"]);
  });

  it("sends each key typed into the screen as the bytes a terminal sends, and no other key", () => {
    const typed: [string, string][] = [];
    render(<TerminalPanel terminals={[terminal()]} canType onType={(name, input) => typed.push([name, input])} />);
    const box = screen.getByRole("textbox", { name: "Screen of terminal py" });
    for (const key of ["p", "r", "Backspace", "Enter", "Tab", "ArrowUp", "ArrowLeft"]) fireEvent.keyDown(box, { key });
    fireEvent.keyDown(box, { key: "c", ctrlKey: true });
    fireEvent.keyDown(box, { key: "Shift", shiftKey: true });
    fireEvent.keyDown(box, { key: "v", metaKey: true });
    expect(typed).toEqual([
      ["py", "p"],
      ["py", "r"],
      ["py", "\u007f"],
      ["py", "\r"],
      ["py", "\t"],
      ["py", "\u001b[A"],
      ["py", "\u001b[D"],
      ["py", "\u0003"],
    ]);
  });

  it("takes Escape and Tab for the program, not for the page", () => {
    render(<TerminalPanel terminals={[terminal()]} canType onType={() => {}} />);
    const box = screen.getByRole("textbox", { name: "Screen of terminal py" });
    let pageSaw = false;
    const onPage = (e: KeyboardEvent) => {
      pageSaw = pageSaw || !e.defaultPrevented;
    };
    document.addEventListener("keydown", onPage);
    try {
      expect(fireEvent.keyDown(box, { key: "Escape" })).toBe(false);
      expect(fireEvent.keyDown(box, { key: "Tab" })).toBe(false);
    } finally {
      document.removeEventListener("keydown", onPage);
    }
    expect(pageSaw).toBe(false);
  });

  it("types a paste, line ends as Enter", () => {
    const typed: string[] = [];
    render(<TerminalPanel terminals={[terminal()]} canType onType={(_, input) => typed.push(input)} />);
    fireEvent.paste(screen.getByTestId("terminal-screen"), { clipboardData: { getData: () => "print(1)\nprint(2)\n" } });
    expect(typed).toEqual(["print(1)\rprint(2)\r"]);
  });

  it("says when the program exited, and takes no typing then", () => {
    const typed: string[] = [];
    const ended = terminal({ exit: { code: 0, signal: null } });
    render(<TerminalPanel terminals={[ended]} canType onType={(_, input) => typed.push(input)} />);
    expect(screen.getByTestId("terminal-status").textContent).toBe("exited with code 0");
    const box = screen.getByTestId("terminal-screen");
    expect(box.getAttribute("aria-readonly")).toBe("true");
    fireEvent.keyDown(box, { key: "a" });
    expect(typed).toEqual([]);
    expect(screen.queryByTestId("terminal-cursor")).toBeNull();
  });

  it("takes no typing when Riot offers no terminal_write, and says so", () => {
    const typed: string[] = [];
    render(<TerminalPanel terminals={[terminal()]} canType={false} onType={(_, input) => typed.push(input)} />);
    fireEvent.keyDown(screen.getByTestId("terminal-screen"), { key: "a" });
    expect(typed).toEqual([]);
    expect(screen.getByText(/does not take typing into terminals; update riot/)).toBeTruthy();
  });

  it("updates live, switches terminals by tab, and shows one the agent opens", () => {
    const typed: [string, string][] = [];
    const onType = (name: string, input: string) => typed.push([name, input]);
    const py = terminal();
    const { rerender } = render(<TerminalPanel terminals={[py]} canType onType={onType} />);
    rerender(<TerminalPanel terminals={[{ ...py, rows: [">>> 6*7", "42", ">>> x", ""], cursor: { row: 2, col: 5 } }]} canType onType={onType} />);
    expect(rows()).toEqual([">>> 6*7", "42", ">>> x "]);

    const dev = terminal({ name: "dev", command: "npm run dev", rows: ["ready on :3000"], cursor: { row: 1, col: 0 } });
    rerender(<TerminalPanel terminals={[py, dev]} canType onType={onType} />);
    expect(screen.getByRole("tab", { name: "dev" }).getAttribute("aria-selected")).toBe("true");
    expect(rows()).toEqual(["ready on :3000", " "]);
    fireEvent.keyDown(screen.getByTestId("terminal-screen"), { key: "q" });

    fireEvent.click(screen.getByRole("tab", { name: "py" }));
    expect(screen.getByText("python3 -q")).toBeTruthy();
    fireEvent.keyDown(screen.getByTestId("terminal-screen"), { key: "Enter" });
    expect(typed).toEqual([
      ["dev", "q"],
      ["py", "\r"],
    ]);
  });

  it("hides and shows the screen", () => {
    render(<TerminalPanel terminals={[terminal()]} canType onType={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Hide" }));
    expect(screen.queryByTestId("terminal-screen")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Show" }));
    expect(rows()).toHaveLength(3);
  });
});
