import { memo, useLayoutEffect, useRef } from "react";

import type { Item } from "../state/conversation";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";

const ItemView = memo(function ItemView({ item }: { item: Item }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="message message-user" data-testid="user-message">
          <p className="message-text">{item.text}</p>
        </div>
      );
    case "agent":
      return (
        <div className="message message-agent" data-testid="agent-message">
          <Markdown text={item.text} />
        </div>
      );
    case "thought":
      return (
        <details className="thought" data-testid="thought">
          <summary>Thinking</summary>
          <div className="thought-text">{item.text}</div>
        </details>
      );
    case "tool":
      return <ToolCard call={item.call} />;
    case "notice":
      return (
        <p className={`notice notice-${item.tone}`} role={item.tone === "error" ? "alert" : undefined}>
          {item.text}
        </p>
      );
  }
});

/** The conversation, kept scrolled to the end while the reader is there. */
export function ConversationView({ items, busy }: { items: readonly Item[]; busy: boolean }) {
  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el !== null && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [items]);
  return (
    <div
      className="conversation"
      ref={scroller}
      data-testid="conversation"
      aria-busy={busy}
      onScroll={(e) => {
        const el = e.currentTarget;
        atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {items.length === 0 && !busy && <p className="empty">Ask Riot something about this project.</p>}
      {items.map((item) => (
        <ItemView key={item.key} item={item} />
      ))}
    </div>
  );
}
