import { useId, useState, type KeyboardEvent } from "react";

import type { AvailableCommand } from "../bridge";

interface Props {
  commands: readonly AvailableCommand[];
  running: boolean;
  stopping: boolean;
  disabled: boolean;
  onSend(text: string): void;
  onStop(): void;
}

/** The commands matching a `/` being typed as the whole input so far. */
export function matchingCommands(text: string, commands: readonly AvailableCommand[]): AvailableCommand[] {
  const typed = /^\/(\S*)$/.exec(text);
  if (typed === null) return [];
  const prefix = (typed[1] ?? "").toLowerCase();
  return commands.filter((c) => c.name.toLowerCase().startsWith(prefix));
}

/** Where people write to Riot: Enter sends, Shift+Enter breaks the line, `/` opens the command menu. */
export function Composer({ commands, running, stopping, disabled, onSend, onStop }: Props) {
  const [text, setText] = useState("");
  const [selected, setSelected] = useState(0);
  const [menuClosed, setMenuClosed] = useState(false);
  const menuId = useId();
  const menu = menuClosed ? [] : matchingCommands(text, commands);
  const active = Math.min(selected, Math.max(menu.length - 1, 0));

  const send = () => {
    if (disabled || running || text.trim() === "") return;
    onSend(text);
    setText("");
  };
  const pick = (command: AvailableCommand) => {
    setText(`/${command.name} `);
    setMenuClosed(true);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (menu.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setSelected((active + step + menu.length) % menu.length);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        const command = menu[active];
        if (command !== undefined) pick(command);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setMenuClosed(true);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <div className="composer">
      {menu.length > 0 && (
        <ul className="command-menu" id={menuId} role="listbox" aria-label="Commands">
          {menu.map((command, i) => (
            <li
              key={command.name}
              role="option"
              aria-selected={i === active}
              className={i === active ? "command active" : "command"}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(command);
              }}
            >
              <span className="command-name">/{command.name}</span>
              {command.input?.hint && <span className="command-hint">{command.input.hint}</span>}
              <span className="command-description">{command.description}</span>
            </li>
          ))}
        </ul>
      )}
      <textarea
        aria-label="Message"
        placeholder={disabled ? "Open or start a session to write to Riot" : "Ask Riot… (/ for commands)"}
        value={text}
        disabled={disabled}
        rows={3}
        aria-controls={menu.length > 0 ? menuId : undefined}
        aria-expanded={menu.length > 0}
        onChange={(e) => {
          setText(e.target.value);
          setSelected(0);
          setMenuClosed(false);
        }}
        onKeyDown={onKeyDown}
      />
      <div className="composer-actions">
        {running ? (
          <button type="button" className="stop" onClick={onStop} disabled={stopping}>
            {stopping ? "Stopping…" : "Stop"}
          </button>
        ) : (
          <button type="button" className="send" onClick={send} disabled={disabled || text.trim() === ""}>
            Send
          </button>
        )}
      </div>
    </div>
  );
}
