import { useEffect, useLayoutEffect, useRef, useState } from "react";

import { permissionDetail, type PermissionOption, type RequestPermissionRequest } from "../bridge";
import { hasModifier, inFront, isTextEntry, useModalFocus } from "./focus";
import { asUiPayload, type UiPayload } from "./payloads/payload";
import { PayloadView } from "./payloads/PayloadView";
import { toolLabel } from "./ToolCard";
import { toolTarget } from "./tool-target";

interface Props {
  request: RequestPermissionRequest;
  /** The session's project directory (relative paths resolve against it). */
  cwd: string;
  /** Set when the question comes from a session other than the one shown. */
  otherSession: string | null;
  onAnswer(optionId: string): void;
}

const VERB: Record<string, string> = {
  read: "read a file",
  edit: "change a file",
  delete: "delete a file",
  move: "move a file",
  execute: "run a command",
  search: "search",
  fetch: "fetch a URL",
  switch_mode: "switch modes",
};

function optionClass(option: PermissionOption): string {
  return option.kind.startsWith("allow") ? "option option-allow" : "option option-reject";
}

/**
 * How long the keyboard must be still before a question's keys answer
 * it: a key meant for something else — the Enter that sent a message,
 * the words still being typed when the question appeared — must not
 * answer a question the person has not seen. Each key pressed in that
 * time starts the wait again.
 */
export const KEYS_ARM_MS = 500;

/** The keys that answer with an option of each kind; the first is shown in the option's button. */
const KEYS: Partial<Record<PermissionOption["kind"], readonly string[]>> = {
  allow_once: ["y", "Enter"],
  allow_always: ["a"],
  reject_once: ["n", "Escape"],
};

/** The option that key `key` chooses, if Riot offered one of its kind. */
export function optionForKey(key: string, options: readonly PermissionOption[]): PermissionOption | undefined {
  const wanted = key.length === 1 ? key.toLowerCase() : key;
  return options.find((option) => KEYS[option.kind]?.includes(wanted) === true);
}

/** A key that activates the element it is pressed on (a button, a summary) belongs to that element. */
function activates(target: EventTarget | null, key: string): boolean {
  return (
    (key === "Enter" || key === " ") && target instanceof HTMLElement && target.matches("button, summary, a[href]")
  );
}

/** The heading of a preview: what it shows. */
function previewTitle(payload: UiPayload): string {
  const lines = (n: number) => (n === 1 ? "1 line" : `${n} lines`);
  switch (payload.type) {
    case "file_diff":
      return payload.created
        ? `New file, ${lines(payload.hunks.reduce((n, h) => n + h.new_lines, 0))}`
        : payload.hunks.length > 1
          ? `Change in ${payload.hunks.length} places`
          : "Change";
    case "notebook_cell_diff":
      return `Cell ${payload.cell_id}, before and after`;
    default:
      return "What it will do";
  }
}

/**
 * What the call will do, as Riot previewed it when it asked (the
 * question's `preview`: an edit's or a write's diff, a new file's every
 * line, a notebook cell before and after) — the payload the terminal UI
 * and ACP clients show too.
 */
function Preview({ raw }: { raw: unknown }) {
  const payload = asUiPayload(raw);
  if (payload === null) return null;
  return (
    <details className="permission-preview" open data-testid="permission-preview">
      <summary>{previewTitle(payload)}</summary>
      <PayloadView raw={payload} />
    </details>
  );
}

/** The keys beyond the ones shown in the buttons. */
function KeysHint({ options }: { options: readonly PermissionOption[] }) {
  const enter = optionForKey("Enter", options);
  const escape = optionForKey("Escape", options);
  if (enter === undefined && escape === undefined) return null;
  return (
    <p className="permission-keys" aria-hidden="true">
      {enter !== undefined && (
        <>
          <kbd className="key">Enter</kbd> {enter.name}
        </>
      )}
      {enter !== undefined && escape !== undefined && " · "}
      {escape !== undefined && (
        <>
          <kbd className="key">Esc</kbd> {escape.name}
        </>
      )}
    </p>
  );
}

/**
 * A permission question (docs/design.md §9): the tool, what it would do,
 * the resolved absolute path or the full command, why Riot asks, and the
 * options Riot offered, in its order. Nothing is chosen by default; keys
 * answer too (shown in the buttons: `y` or Enter allows once, `a` always
 * allows when Riot offers it, `n` or Esc rejects), but only once no key
 * was pressed for KEYS_ARM_MS since the question appeared, and never
 * while a text field has the focus. Enter on a focused button presses
 * that button.
 */
export function PermissionDialog({ request, cwd, otherSession, onAnswer }: Props) {
  const dialog = useRef<HTMLDivElement>(null);
  useModalFocus(dialog);
  const [armed, setArmed] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  /** (Re)starts the wait for a still keyboard. */
  const arm = useRef(() => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setArmed(true), KEYS_ARM_MS);
  });
  useEffect(() => {
    setArmed(false);
    dialog.current?.focus();
    arm.current();
    return () => clearTimeout(timer.current);
  }, [request]);
  // The keys answer from anywhere but a text field, while this question is shown.
  const answer = useRef({ armed, options: request.options, onAnswer });
  useLayoutEffect(() => {
    answer.current = { armed, options: request.options, onAnswer };
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const { armed, options, onAnswer } = answer.current;
      if (!armed) arm.current();
      if (e.defaultPrevented || hasModifier(e) || !inFront(dialog.current)) return;
      if (isTextEntry(e.target) || activates(e.target, e.key)) return;
      const option = optionForKey(e.key, options);
      if (option === undefined) return;
      e.preventDefault();
      if (armed && !e.repeat) onAnswer(option.optionId);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  const call = request.toolCall;
  const detail = permissionDetail(call._meta);
  const target = toolTarget(call, cwd);
  const tool = detail?.tool_name ?? toolLabel({ name: call.name ?? null, kind: call.kind ?? null });
  const why = detail?.message ?? null;
  const texts = (call.content ?? []).flatMap((c) =>
    c.type === "content" && c.content.type === "text" ? [c.content.text] : [],
  );
  return (
    <div className="modal-backdrop">
      <div
        className="permission-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="permission-heading"
        data-testid="permission-dialog"
        data-keys={armed ? "ready" : "waiting"}
        tabIndex={-1}
        ref={dialog}
      >
        <h2 id="permission-heading">Riot wants to {VERB[call.kind ?? ""] ?? "use a tool"}</h2>
        {otherSession !== null && <p className="permission-session">In another session: {otherSession}</p>}
        <dl className="permission-facts">
          <dt>Tool</dt>
          <dd data-testid="permission-tool">{tool}</dd>
          {call.title && (
            <>
              <dt>Action</dt>
              <dd data-testid="permission-title">{call.title}</dd>
            </>
          )}
          {target.kind === "path" && (
            <>
              <dt>Path</dt>
              <dd>
                <code data-testid="permission-path">{target.path}</code>
              </dd>
            </>
          )}
          {target.kind === "command" && (
            <>
              <dt>Command</dt>
              <dd>
                <pre className="permission-command" data-testid="permission-command">
                  {target.command}
                </pre>
              </dd>
            </>
          )}
          {why !== null && (
            <>
              <dt>Why</dt>
              <dd data-testid="permission-reason">{why}</dd>
            </>
          )}
        </dl>
        {texts.map((t, i) => (
          <pre key={i} className="permission-text">
            {t}
          </pre>
        ))}
        <Preview raw={detail?.preview} />
        <div className="permission-options">
          {request.options.map((option) => {
            const keys = KEYS[option.kind];
            return (
              <button
                key={option.optionId}
                type="button"
                className={optionClass(option)}
                data-kind={option.kind}
                aria-keyshortcuts={keys?.join(" ")}
                onClick={() => onAnswer(option.optionId)}
              >
                <span className="option-name">{option.name}</span>
                {keys !== undefined && (
                  <kbd className="key" aria-hidden="true">
                    {keys[0]}
                  </kbd>
                )}
              </button>
            );
          })}
        </div>
        <KeysHint options={request.options} />
      </div>
    </div>
  );
}
