import { useEffect, useId, useLayoutEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent } from "react";

import { acceptsInput, terminalStatus, type TerminalState } from "../state/terminals";
import { keyInput, pastedInput } from "./terminal-keys";

interface Props {
  /** The session's terminals, in the order they were opened. */
  terminals: readonly TerminalState[];
  /** Riot takes the person's typing (`_riot/terminal_write`). */
  canType: boolean;
  /** Types `input` (the bytes a terminal sends) into terminal `name`. */
  onType(name: string, input: string): void;
  /** Riot resizes terminals (`_riot/terminal_resize`). */
  canResize?: boolean;
  /** Gives terminal `name` `rows` × `cols`. */
  onResize?(name: string, rows: number, cols: number): void;
}

/**
 * The rows and columns `screen` can show without scrolling, from the
 * size of a character in its font (at least 5 × 20; Riot bounds it too).
 */
export function fittingSize(screen: HTMLElement): { rows: number; cols: number } {
  const probe = document.createElement("span");
  probe.textContent = "M".repeat(10);
  probe.style.visibility = "hidden";
  probe.style.position = "absolute";
  screen.appendChild(probe);
  const box = probe.getBoundingClientRect();
  probe.remove();
  const style = getComputedStyle(screen);
  const pad = (a: string, b: string) => (parseFloat(a) || 0) + (parseFloat(b) || 0);
  const width = screen.clientWidth - pad(style.paddingLeft, style.paddingRight);
  const height =
    (parseFloat(style.maxHeight) || screen.clientHeight) - pad(style.paddingTop, style.paddingBottom);
  const charWidth = box.width / 10;
  const lineHeight = box.height;
  const cols = charWidth > 0 ? Math.floor(width / charWidth) : 0;
  const rows = lineHeight > 0 ? Math.floor(height / lineHeight) : 0;
  return { rows: Math.max(5, rows), cols: Math.max(20, cols) };
}

/** The rows worth showing: up to the last one with text or the cursor, whichever is lower. */
function shownRows(terminal: TerminalState): readonly string[] {
  let last = terminal.cursor.row;
  for (let i = terminal.rows.length - 1; i > last; i--) {
    if (terminal.rows[i] !== "") {
      last = i;
      break;
    }
  }
  const rows = terminal.rows.slice(0, last + 1);
  while (rows.length <= terminal.cursor.row) rows.push("");
  return rows;
}

/** One row; the cursor's row shows the cursor as a block over its cell. */
function Row({ text, cursor }: { text: string; cursor: number | null }) {
  if (cursor === null) return <div className="terminal-row">{text === "" ? "\u00a0" : text}</div>;
  const chars = [...text];
  while (chars.length <= cursor) chars.push(" ");
  return (
    <div className="terminal-row">
      {chars.slice(0, cursor).join("")}
      <span className="terminal-cursor" data-testid="terminal-cursor">
        {chars[cursor]}
      </span>
      {chars.slice(cursor + 1).join("")}
    </div>
  );
}

/**
 * The session's terminals (docs/terminals.md): a tab per terminal, the
 * chosen one's screen as Riot's terminal emulator rendered it, kept live
 * by `_riot/terminal` updates. Focus the screen and type: keys go to the
 * program (Enter, Backspace, Tab, the arrows, Ctrl+letter), and the agent
 * is told on its next read.
 */
export function TerminalPanel({ terminals, canType, onType, canResize = false, onResize }: Props) {
  const [chosen, setChosen] = useState<string | null>(null);
  const [hidden, setHidden] = useState(false);
  const known = useRef<readonly string[]>(terminals.map((t) => t.name));
  const screen = useRef<HTMLPreElement>(null);
  const id = useId();

  // A terminal the agent opens is shown at once.
  useEffect(() => {
    const opened = terminals.find((t) => !known.current.includes(t.name));
    known.current = terminals.map((t) => t.name);
    if (opened !== undefined) {
      setChosen(opened.name);
      setHidden(false);
    }
  }, [terminals]);

  const terminal = terminals.find((t) => t.name === chosen) ?? terminals[terminals.length - 1] ?? null;
  const rows = terminal === null ? [] : shownRows(terminal);

  // The newest rows (where the cursor is) stay in view.
  useLayoutEffect(() => {
    const element = screen.current;
    if (element !== null) element.scrollTop = element.scrollHeight;
  }, [rows.length, terminal?.scrollback.length, terminal?.name, hidden]);

  if (terminal === null) return null;
  const typing = canType && acceptsInput(terminal);
  const status = terminalStatus(terminal);

  const onKeyDown = (e: KeyboardEvent<HTMLPreElement>) => {
    if (!typing) return;
    const input = keyInput(e);
    if (input === null) return;
    // The key is the program's: no scrolling, no focus move, no Escape for the page.
    e.preventDefault();
    e.stopPropagation();
    onType(terminal.name, input);
  };
  const onPaste = (e: ClipboardEvent<HTMLPreElement>) => {
    if (!typing) return;
    const text = e.clipboardData.getData("text/plain");
    e.preventDefault();
    if (text !== "") onType(terminal.name, pastedInput(text));
  };

  const panel = `${id}-screen`;
  return (
    <section className="terminals" aria-label="Terminals">
      <div className="terminals-head">
        <div className="terminal-tabs" role="tablist" aria-label="Terminals">
          {terminals.map((t) => {
            const selected = t.name === terminal.name;
            return (
              <button
                key={t.name}
                type="button"
                role="tab"
                aria-selected={selected}
                aria-controls={panel}
                className={`terminal-tab${selected ? " selected" : ""}${acceptsInput(t) ? "" : " ended"}`}
                title={`${t.command} — ${terminalStatus(t)}`}
                onClick={() => {
                  setChosen(t.name);
                  setHidden(false);
                }}
              >
                {t.name}
              </button>
            );
          })}
        </div>
        <button
          type="button"
          className="terminals-toggle"
          aria-expanded={!hidden}
          aria-controls={panel}
          onClick={() => setHidden((h) => !h)}
        >
          {hidden ? "Show" : "Hide"}
        </button>
      </div>
      {!hidden && (
        <div id={panel} role="tabpanel" className="terminal" aria-label={`Terminal ${terminal.name}`}>
          <div className="terminal-info">
            <code className="terminal-command" title={terminal.command}>
              {terminal.command}
            </code>
            <span
              className={`terminal-status${acceptsInput(terminal) ? "" : " ended"}`}
              data-testid="terminal-status"
            >
              {status}
            </span>
            <span className="terminal-size" data-testid="terminal-size" title="Columns × rows">
              {terminal.size.cols}×{terminal.size.rows}
            </span>
            {canResize && acceptsInput(terminal) && onResize !== undefined && (
              <button
                type="button"
                className="terminal-fit"
                title="Resize the terminal to fill this panel; its program is told"
                onClick={() => {
                  if (screen.current === null) return;
                  const { rows: fitRows, cols } = fittingSize(screen.current);
                  onResize(terminal.name, fitRows, cols);
                }}
              >
                Fit to panel
              </button>
            )}
          </div>
          <pre
            ref={screen}
            className={`terminal-screen${typing ? " typing" : ""}`}
            data-testid="terminal-screen"
            role="textbox"
            aria-multiline="true"
            aria-readonly={!typing}
            aria-label={`Screen of terminal ${terminal.name}`}
            aria-description={
              typing
                ? "Keys typed here go to the program; the agent is told on its next read."
                : undefined
            }
            tabIndex={0}
            onKeyDown={onKeyDown}
            onPaste={onPaste}
          >
            {terminal.scrollback.map((text, i) => (
              <div key={`s${i}`} className="terminal-scrollback-row">
                {text === "" ? "\u00a0" : text}
              </div>
            ))}
            {rows.map((text, i) => (
              <Row key={i} text={text} cursor={typing && i === terminal.cursor.row ? terminal.cursor.col : null} />
            ))}
          </pre>
          {!canType && acceptsInput(terminal) && (
            <p className="terminal-note">This Riot does not take typing into terminals; update riot to type here.</p>
          )}
        </div>
      )}
    </section>
  );
}
