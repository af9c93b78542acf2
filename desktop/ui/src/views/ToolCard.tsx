import { memo } from "react";

import type { ShownImage, ToolCallView } from "../state/conversation";
import { PayloadView } from "./payloads/PayloadView";
import { asUiPayload } from "./payloads/payload";

const STATUS: Record<ToolCallView["status"], string> = {
  pending: "waiting",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};

const KIND: Record<string, string> = {
  read: "Read",
  edit: "Edit",
  delete: "Delete",
  move: "Move",
  search: "Search",
  execute: "Run",
  think: "Plan",
  fetch: "Fetch",
  switch_mode: "Mode",
  other: "Tool",
};

/** The label of a call's tool: its name when Riot sends it, else its kind. */
export function toolLabel(call: Pick<ToolCallView, "name" | "kind">): string {
  return call.name ?? KIND[call.kind ?? "other"] ?? "Tool";
}

/** What the model was told, as text (an error, a refusal). */
function modelText(call: ToolCallView): string {
  return call.content
    .flatMap((c) => (c.type === "content" && c.content.type === "text" ? [c.content.text] : []))
    .join("\n");
}

/** The images in what the model was told (a Read of an image), with their data. */
export function toolImages(call: ToolCallView): ShownImage[] {
  return call.content.flatMap((c) =>
    c.type === "content" && c.content.type === "image" && c.content.data !== ""
      ? [{ name: call.title, mimeType: c.content.mimeType, data: c.content.data }]
      : [],
  );
}

/** One tool call: its one-line describe, its status, and Riot's payload once it finished. */
export const ToolCard = memo(function ToolCard({ call }: { call: ToolCallView }) {
  const hasPayload = asUiPayload(call.rawOutput) !== null;
  const text = modelText(call);
  return (
    <article
      className={`tool-card status-${call.status}`}
      data-testid="tool-card"
      data-tool-call-id={call.id}
      data-status={call.status}
      aria-label={`${toolLabel(call)}: ${call.title}`}
    >
      <header className="tool-head">
        <span className={`tool-kind kind-${call.kind ?? "other"}`}>{toolLabel(call)}</span>
        <span className="tool-title">{call.title || "…"}</span>
        <span className="tool-status" data-testid="tool-status">
          {STATUS[call.status]}
        </span>
      </header>
      {hasPayload && <PayloadView raw={call.rawOutput} images={toolImages(call)} />}
      {/* Without a payload, a failed call shows what the model was told. */}
      {!hasPayload && call.status === "failed" && text !== "" && <pre className="tool-error">{text}</pre>}
      {!hasPayload && call.status === "completed" && text !== "" && (
        <details className="tool-text">
          <summary>Result</summary>
          <pre className="output">{text}</pre>
        </details>
      )}
    </article>
  );
});
