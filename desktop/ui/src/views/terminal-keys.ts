// The bytes a terminal sends for a key the person presses in the terminal
// view (what `_riot/terminal_write` takes; docs/terminals.md). xterm's
// sequences, as the terminal's TERM (xterm-256color) promises.

/** The parts of a keyboard event the mapping reads. */
export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  metaKey: boolean;
}

const ESC = "\u001b";

const NAMED: Readonly<Record<string, string>> = {
  Enter: "\r",
  Backspace: "\u007f",
  Tab: "\t",
  Escape: ESC,
  ArrowUp: `${ESC}[A`,
  ArrowDown: `${ESC}[B`,
  ArrowRight: `${ESC}[C`,
  ArrowLeft: `${ESC}[D`,
  Home: `${ESC}[H`,
  End: `${ESC}[F`,
  Insert: `${ESC}[2~`,
  Delete: `${ESC}[3~`,
  PageUp: `${ESC}[5~`,
  PageDown: `${ESC}[6~`,
};

/** Ctrl with these (besides the letters) sends a control character too. */
const CTRL_PUNCTUATION: Readonly<Record<string, string>> = {
  "@": "\u0000",
  " ": "\u0000",
  "[": ESC,
  "\\": "\u001c",
  "]": "\u001d",
  "^": "\u001e",
  _: "\u001f",
};

/**
 * What pressing `press` types into a terminal, or `null` when the key is
 * not for the terminal (a modifier alone, a shortcut of the system or the
 * browser: Cmd/Meta anything, Ctrl+Shift for copy and paste).
 */
export function keyInput(press: KeyPress): string | null {
  const { key, ctrlKey, altKey, shiftKey, metaKey } = press;
  if (metaKey) return null;
  if (key === "Tab" && shiftKey && !ctrlKey && !altKey) return `${ESC}[Z`;
  const named = NAMED[key];
  if (named !== undefined) {
    if (ctrlKey) return null;
    return altKey ? `${ESC}${named}` : named;
  }
  // One character (an emoji is one too, however many UTF-16 units).
  if ([...key].length !== 1) return null;
  if (ctrlKey) {
    if (shiftKey) return null;
    const lower = key.toLowerCase();
    const letter = lower >= "a" && lower <= "z";
    // AltGr arrives as Ctrl+Alt with the character it makes (`@` on a German keyboard).
    if (altKey && !letter) return key;
    const control = letter ? String.fromCharCode(lower.charCodeAt(0) - 96) : CTRL_PUNCTUATION[key];
    if (control === undefined) return null;
    return altKey ? `${ESC}${control}` : control;
  }
  return altKey ? `${ESC}${key}` : key;
}

/** Pasted text as typed: line ends become Enter (`\r`), as a terminal sends them. */
export function pastedInput(text: string): string {
  return text.replace(/\r\n|\n/g, "\r");
}
