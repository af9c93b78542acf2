import { useEffect, useRef } from "react";

import { permissionDetail, type PermissionOption, type RequestPermissionRequest } from "../bridge";
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

/** What the call would write or change, when its input says. */
function Preview({ input }: { input: unknown }) {
  if (typeof input !== "object" || input === null) return null;
  const fields = input as Record<string, unknown>;
  if (typeof fields.content === "string") {
    const lines = fields.content === "" ? 0 : fields.content.replace(/\n$/, "").split("\n").length;
    return (
      <details className="permission-preview">
        <summary>Content to write ({lines === 1 ? "1 line" : `${lines} lines`})</summary>
        <pre className="output">{fields.content}</pre>
      </details>
    );
  }
  if (typeof fields.old_string === "string" && typeof fields.new_string === "string") {
    return (
      <details className="permission-preview" open>
        <summary>Change</summary>
        <pre className="output diff-preview">
          {fields.old_string.split("\n").map((l, i) => (
            <span key={`o${i}`} className="diff-removed">{`- ${l}\n`}</span>
          ))}
          {fields.new_string.split("\n").map((l, i) => (
            <span key={`n${i}`} className="diff-added">{`+ ${l}\n`}</span>
          ))}
        </pre>
      </details>
    );
  }
  return null;
}

/**
 * A permission question (ARCHITECTURE §9): the tool, what it would do,
 * the resolved absolute path or the full command, why Riot asks, and the
 * options Riot offered, in its order. Nothing is chosen by default.
 */
export function PermissionDialog({ request, cwd, otherSession, onAnswer }: Props) {
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => dialog.current?.focus(), [request]);
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
        <Preview input={call.rawInput} />
        <div className="permission-options">
          {request.options.map((option) => (
            <button
              key={option.optionId}
              type="button"
              className={optionClass(option)}
              data-kind={option.kind}
              onClick={() => onAnswer(option.optionId)}
            >
              {option.name}
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}
