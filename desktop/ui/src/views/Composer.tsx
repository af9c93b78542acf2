import {
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type KeyboardEvent,
} from "react";

import type { AvailableCommand } from "../bridge";
import { IMAGE_ACCEPT, formatBytes, imageUrl, readImages, type AttachedImage } from "../state/images";

interface Props {
  commands: readonly AvailableCommand[];
  running: boolean;
  stopping: boolean;
  disabled: boolean;
  /** Project files matching a query, best first (`_riot/files`); absent when Riot has none to offer. */
  findFiles?: ((query: string) => Promise<string[]>) | undefined;
  /**
   * Takes the focus when this number changes (and once it can: not while
   * disabled) — after "New session" or opening one. 0: never asked.
   */
  focusRequest?: number;
  /**
   * Riot takes images in prompts: paste, drop and the attach button add
   * them. Without it, offered images are refused with a sentence saying so.
   */
  takesImages?: boolean;
  /** Sends, or queues while a turn runs (the store decides), with the images attached. */
  onSend(text: string, images: AttachedImage[]): void;
  onStop(): void;
}

/** The commands matching a `/` being typed as the whole input so far. */
export function matchingCommands(text: string, commands: readonly AvailableCommand[]): AvailableCommand[] {
  const typed = /^\/(\S*)$/.exec(text);
  if (typed === null) return [];
  const prefix = (typed[1] ?? "").toLowerCase();
  return commands.filter((c) => c.name.toLowerCase().startsWith(prefix));
}

/** An `@word` being typed: where its `@` is and what follows it. */
export interface Mention {
  start: number;
  query: string;
}

/** The mention ending at `caret`, if one is being typed there (an `@` at the start or after a space). */
export function mentionAt(text: string, caret: number): Mention | null {
  const typed = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  if (typed === null) return null;
  const query = typed[2] ?? "";
  return { start: caret - query.length - 1, query };
}

/** `text` with the mention replaced by `@path ` and where the caret goes after it. */
export function insertMention(text: string, caret: number, mention: Mention, path: string): { text: string; caret: number } {
  const inserted = `@${path} `;
  const rest = text.slice(caret).replace(/^ /, "");
  return { text: text.slice(0, mention.start) + inserted + rest, caret: mention.start + inserted.length };
}

/**
 * Asks for files as the query changes, one request at a time: while one
 * is out, only the newest query waits; answers to older queries are
 * dropped. No timers.
 */
function useFileSearch(findFiles: ((query: string) => Promise<string[]>) | undefined) {
  const [found, setFound] = useState<{ query: string; files: string[] } | null>(null);
  const wanted = useRef<string | null>(null);
  const busy = useRef(false);
  const source = useRef(findFiles);
  useLayoutEffect(() => {
    source.current = findFiles;
  });

  const run = (query: string) => {
    const find = source.current;
    if (find === undefined) return;
    busy.current = true;
    const done = (files: string[]) => {
      if (wanted.current === query) setFound({ query, files });
      const next = wanted.current;
      if (next !== null && next !== query) run(next);
      else busy.current = false;
    };
    find(query).then(done, () => done([]));
  };

  const search = (query: string | null) => {
    wanted.current = query;
    if (query !== null && !busy.current) run(query);
  };
  return { found, search };
}

/** Whether a drag carries files (not text being moved). */
function carriesFiles(e: DragEvent): boolean {
  return Array.from(e.dataTransfer.types).includes("Files");
}

/**
 * Where people write to Riot: Enter sends (or queues while a turn runs),
 * Shift+Enter breaks the line, `/` opens the command menu and `@` the
 * project's files. Images pasted, dropped or attached are shown as
 * thumbnails (each removable) and sent with the text.
 */
export function Composer({
  commands,
  running,
  stopping,
  disabled,
  findFiles,
  focusRequest = 0,
  takesImages = false,
  onSend,
  onStop,
}: Props) {
  const [text, setText] = useState("");
  const [images, setImages] = useState<AttachedImage[]>([]);
  /** Why offered files were not attached, one sentence each. */
  const [refused, setRefused] = useState<string[]>([]);
  const [reading, setReading] = useState(0);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const attachedBytes = useRef(0);
  attachedBytes.current = images.reduce((n, i) => n + i.bytes, 0);
  const [caret, setCaret] = useState(0);
  const [selected, setSelected] = useState(0);
  const [menuClosed, setMenuClosed] = useState(false);
  const box = useRef<HTMLTextAreaElement>(null);
  const placeCaret = useRef<number | null>(null);
  const menuId = useId();
  const { found, search } = useFileSearch(findFiles);
  const focused = useRef(0);
  useEffect(() => {
    if (disabled || focusRequest === focused.current || box.current === null) return;
    focused.current = focusRequest;
    box.current.focus();
  }, [focusRequest, disabled]);

  const commandMenu = menuClosed ? [] : matchingCommands(text, commands);
  const mention = findFiles === undefined || menuClosed || commandMenu.length > 0 ? null : mentionAt(text, caret);
  const fileMenu = mention !== null && found !== null && found.query === mention.query ? found.files : [];
  const size = commandMenu.length > 0 ? commandMenu.length : fileMenu.length;
  const active = Math.min(selected, Math.max(size - 1, 0));

  useLayoutEffect(() => {
    if (placeCaret.current === null || box.current === null) return;
    box.current.setSelectionRange(placeCaret.current, placeCaret.current);
    placeCaret.current = null;
  });

  const edit = (value: string, at: number) => {
    setText(value);
    setCaret(at);
    setSelected(0);
    setMenuClosed(false);
    search(findFiles === undefined ? null : (mentionAt(value, at)?.query ?? null));
  };
  const empty = text.trim() === "" && images.length === 0;
  const send = () => {
    if (disabled || empty || reading > 0) return;
    onSend(text, images);
    setImages([]);
    setRefused([]);
    edit("", 0);
  };
  const offer = (files: File[]) => {
    if (files.length === 0) return;
    if (!takesImages) {
      setRefused(["This Riot does not take images in prompts; update riot to attach them."]);
      return;
    }
    setReading((n) => n + 1);
    void readImages(files, attachedBytes.current).then(({ images: read, refused: why }) => {
      setImages((before) => [...before, ...read]);
      setRefused(why);
      setReading((n) => n - 1);
    });
  };
  const onPaste = (e: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = Array.from(e.clipboardData.files);
    if (files.length === 0) return;
    // The clipboard holds files (a screenshot, a copied image): attach them, paste no text.
    e.preventDefault();
    offer(files);
  };
  const onDragOver = (e: DragEvent<HTMLDivElement>) => {
    if (disabled || !carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    setDragging(true);
  };
  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    setDragging(false);
    if (disabled || !carriesFiles(e)) return;
    e.preventDefault();
    offer(Array.from(e.dataTransfer.files));
  };
  const pickCommand = (command: AvailableCommand) => {
    setText(`/${command.name} `);
    setMenuClosed(true);
  };
  const pickFile = (path: string) => {
    if (mention === null) return;
    const next = insertMention(text, caret, mention, path);
    placeCaret.current = next.caret;
    setText(next.text);
    setCaret(next.caret);
    setSelected(0);
    search(null);
  };
  const pick = () => {
    const command = commandMenu[active];
    if (command !== undefined) pickCommand(command);
    const file = fileMenu[active];
    if (commandMenu.length === 0 && file !== undefined) pickFile(file);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (size > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setSelected((active + step + size) % size);
        return;
      }
      if (e.key === "Enter" || e.key === "Tab") {
        e.preventDefault();
        pick();
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setMenuClosed(true);
        search(null);
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      send();
    }
  };

  const placeholder = disabled
    ? "Open or start a session to write to Riot"
    : running
      ? "Riot is working… what you send now waits in the queue"
      : findFiles === undefined
        ? "Ask Riot… (/ for commands)"
        : "Ask Riot… (/ for commands, @ for files)";

  return (
    <div
      className={dragging ? "composer dragging" : "composer"}
      onDragOver={onDragOver}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {commandMenu.length > 0 && (
        <ul className="command-menu" id={menuId} role="listbox" aria-label="Commands">
          {commandMenu.map((command, i) => (
            <li
              key={command.name}
              role="option"
              aria-selected={i === active}
              className={i === active ? "command active" : "command"}
              onMouseDown={(e) => {
                e.preventDefault();
                pickCommand(command);
              }}
            >
              <span className="command-name">/{command.name}</span>
              {command.input?.hint && <span className="command-hint">{command.input.hint}</span>}
              <span className="command-description">{command.description}</span>
            </li>
          ))}
        </ul>
      )}
      {fileMenu.length > 0 && (
        <ul className="command-menu" id={menuId} role="listbox" aria-label="Files">
          {fileMenu.map((path, i) => (
            <li
              key={path}
              role="option"
              aria-selected={i === active}
              className={i === active ? "command active" : "command"}
              onMouseDown={(e) => {
                e.preventDefault();
                pickFile(path);
              }}
            >
              <span className="file-path">{path}</span>
            </li>
          ))}
        </ul>
      )}
      {images.length > 0 && (
        <ul className="attachments" aria-label="Attached images">
          {images.map((image, i) => (
            <li key={`${i}-${image.name}`} className="attachment">
              <img className="thumbnail" src={imageUrl(image)} alt={image.name} />
              <span className="attachment-name" title={`${image.name}, ${formatBytes(image.bytes)}`}>
                {image.name}
              </span>
              <button
                type="button"
                className="attachment-remove"
                aria-label={`Remove ${image.name}`}
                onClick={() => setImages((before) => before.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {refused.length > 0 && (
        <div className="attach-refused" role="alert">
          {refused.map((why) => (
            <p key={why}>{why}</p>
          ))}
        </div>
      )}
      <textarea
        ref={box}
        aria-label="Message"
        placeholder={placeholder}
        value={text}
        disabled={disabled}
        rows={3}
        aria-controls={size > 0 ? menuId : undefined}
        aria-expanded={size > 0}
        onChange={(e) => edit(e.target.value, e.target.selectionStart ?? e.target.value.length)}
        onSelect={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
        onKeyDown={onKeyDown}
        onPaste={onPaste}
      />
      <div className="composer-actions">
        {takesImages && (
          <>
            <input
              ref={picker}
              type="file"
              accept={IMAGE_ACCEPT}
              multiple
              hidden
              data-testid="attach-input"
              onChange={(e) => {
                offer(Array.from(e.target.files ?? []));
                e.target.value = "";
              }}
            />
            <button
              type="button"
              className="attach"
              disabled={disabled}
              onClick={() => picker.current?.click()}
              title="Attach images (PNG, JPEG, GIF or WebP; you can also paste or drop them here)"
            >
              Attach image
            </button>
          </>
        )}
        {running ? (
          <>
            <button type="button" className="queue-button" onClick={send} disabled={disabled || empty || reading > 0}>
              Queue
            </button>
            <button type="button" className="stop" onClick={onStop} disabled={stopping} aria-keyshortcuts="Escape">
              {stopping ? "Stopping…" : "Stop"}
            </button>
          </>
        ) : (
          <button type="button" className="send" onClick={send} disabled={disabled || empty || reading > 0}>
            Send
          </button>
        )}
      </div>
    </div>
  );
}
