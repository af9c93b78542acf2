import { memo, useLayoutEffect, useRef, useState } from "react";

import type { Item } from "../state/conversation";
import { imageUrl } from "../state/images";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";

const ItemView = memo(function ItemView({ item }: { item: Item }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="message message-user" data-testid="user-message">
          {item.text !== "" && <p className="message-text">{item.text}</p>}
          {item.images !== undefined && item.images.length > 0 && (
            <ul className="message-images" aria-label="Images sent">
              {item.images.map((image, i) => (
                <li key={i}>
                  <img className="thumbnail" src={imageUrl(image)} alt={image.name} />
                </li>
              ))}
            </ul>
          )}
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

/** How many items are rendered at first, and how many more each "Show earlier messages" adds. */
export const WINDOW = 200;

/**
 * The conversation, kept scrolled to the end while the reader is there.
 * A long one renders only its last `windowSize` items; earlier ones are
 * added a window at a time on request, keeping the reader's place.
 */
export function ConversationView({
  items,
  busy,
  windowSize = WINDOW,
}: {
  items: readonly Item[];
  busy: boolean;
  windowSize?: number;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  /** The distance from the bottom to keep when earlier items are added above. */
  const keep = useRef<number | null>(null);
  const [limit, setLimit] = useState(windowSize);
  const start = Math.max(0, items.length - limit);
  const shown = start === 0 ? items : items.slice(start);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el !== null && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [items]);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el === null || keep.current === null) return;
    el.scrollTop = el.scrollHeight - keep.current;
    keep.current = null;
  }, [limit]);
  return (
    <div
      className="conversation"
      ref={scroller}
      data-testid="conversation"
      role="region"
      aria-label="Conversation"
      // Reachable with Tab, so the arrow keys and Page Up/Down scroll it.
      tabIndex={0}
      aria-busy={busy}
      onScroll={(e) => {
        const el = e.currentTarget;
        atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {items.length === 0 && !busy && <p className="empty">Ask Riot something about this project.</p>}
      {start > 0 && (
        <button
          type="button"
          className="show-earlier"
          onClick={() => {
            const el = scroller.current;
            if (el !== null) keep.current = el.scrollHeight - el.scrollTop;
            setLimit((l) => l + windowSize);
          }}
        >
          Show earlier messages ({start} more)
        </button>
      )}
      {shown.map((item) => (
        <ItemView key={item.key} item={item} />
      ))}
    </div>
  );
}
