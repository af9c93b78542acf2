// A session's terminals as the person sees them (docs/terminals.md):
// each `_riot/terminal` update folded into the list, in the order the
// terminals were opened. The screen arrives already rendered by Riot's
// terminal emulator (one string per row), so nothing here interprets
// escape codes.

import type { TerminalExit, TerminalSize, TerminalUpdate } from "../generated/terminal_update";

/** Rows of scrollback kept per terminal. */
export const SCROLLBACK_ROWS = 5000;

export interface TerminalState {
  name: string;
  /** The command line it runs. */
  command: string;
  size: TerminalSize;
  /** Every row of the screen, trailing spaces removed (empty before the first screen). */
  rows: readonly string[];
  /** The rows that scrolled off the top, oldest first (at most `SCROLLBACK_ROWS`). */
  scrollback: readonly string[];
  /** Row and column of the cursor, from 0. */
  cursor: { row: number; col: number };
  /** A full-screen program (an editor, `less`) shows. */
  fullScreen: boolean;
  /** How the program ended; `null` while it runs. */
  exit: TerminalExit | null;
  /** The agent closed it (or the session ended): nothing can be typed any more. */
  closed: boolean;
}

/** `terminals` after `update`. An update about a terminal never opened is ignored (Riot announces each one first). */
export function applyTerminalUpdate(
  terminals: readonly TerminalState[],
  update: TerminalUpdate,
): readonly TerminalState[] {
  const at = terminals.findIndex((t) => t.name === update.name);
  if (update.type === "opened") {
    // A name opened again (after a close, or announced again when the session is opened) starts afresh.
    const fresh: TerminalState = {
      name: update.name,
      command: update.command,
      size: update.size,
      rows: [],
      scrollback: [],
      cursor: { row: 0, col: 0 },
      fullScreen: false,
      exit: null,
      closed: false,
    };
    if (at < 0) return [...terminals, fresh];
    const before = terminals[at]!;
    // The same running terminal announced again keeps what it shows until its next screen.
    const same = !before.closed && before.exit === null && before.command === update.command;
    return replace(terminals, at, same ? { ...before, size: update.size } : fresh);
  }
  if (at < 0) return terminals;
  const terminal = terminals[at]!;
  switch (update.type) {
    case "screen":
      return replace(terminals, at, {
        ...terminal,
        scrollback:
          update.scrolled === undefined || update.scrolled.length === 0
            ? terminal.scrollback
            : [...terminal.scrollback, ...update.scrolled].slice(-SCROLLBACK_ROWS),
        rows: update.rows,
        cursor: { row: update.cursor_row, col: update.cursor_col },
        fullScreen: update.full_screen,
      });
    case "resized":
      return replace(terminals, at, { ...terminal, size: update.size });
    case "exited":
      return replace(terminals, at, { ...terminal, exit: update.exit });
    case "closed":
      return replace(terminals, at, { ...terminal, closed: true });
  }
}

function replace(terminals: readonly TerminalState[], at: number, terminal: TerminalState): readonly TerminalState[] {
  return terminals.map((t, i) => (i === at ? terminal : t));
}

/** Whether the person can type into it: its program runs and it is open. */
export function acceptsInput(terminal: TerminalState): boolean {
  return terminal.exit === null && !terminal.closed;
}

/** How it stands, in a few words: "running", "exited with code 1", "killed by signal 9", "closed". */
export function terminalStatus(terminal: TerminalState): string {
  const exit = terminal.exit;
  let ended: string | null = null;
  if (exit !== null) {
    if (exit.code !== null && exit.code !== undefined) ended = `exited with code ${exit.code}`;
    else if (exit.signal !== null && exit.signal !== undefined) ended = `killed by signal ${exit.signal}`;
    else ended = "exited";
  }
  if (terminal.closed) return ended === null ? "closed" : `closed (${ended})`;
  return ended ?? "running";
}
