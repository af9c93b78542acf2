import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { Item } from "../state/conversation";
import { ConversationView } from "./ConversationView";

describe("ConversationView", () => {
  it("folds thinking away and shows the reply, the tool card and notes", () => {
    const items: Item[] = [
      { kind: "user", key: "a", text: "Fix it" },
      { kind: "thought", key: "b", text: "The bug is in parse()." },
      {
        kind: "tool",
        key: "c",
        call: {
          id: "t1",
          title: "cargo test",
          name: null,
          kind: "execute",
          status: "completed",
          rawInput: { command: "cargo test" },
          rawOutput: { type: "command", command: "cargo test", exit_code: 0, stdout: "ok\n", stderr: "", truncated: false, timed_out: false },
          content: [],
          locations: [],
        },
      },
      { kind: "agent", key: "d", text: "Fixed." },
      { kind: "notice", key: "e", tone: "info", text: "Stopped." },
    ];
    const { container } = render(<ConversationView items={items} busy={false} />);
    const thought = screen.getByTestId("thought") as HTMLDetailsElement;
    expect(thought.open).toBe(false);
    expect(thought.querySelector("summary")?.textContent).toBe("Thinking");
    expect(screen.getByTestId("tool-card").getAttribute("aria-label")).toBe("Run: cargo test");
    expect(screen.getByTestId("exit-code").textContent).toBe("exit 0");
    expect(screen.getByTestId("agent-message").textContent).toBe("Fixed.");
    expect(container.querySelector(".notice")?.textContent).toBe("Stopped.");
  });

  it("shows the images of the person's message and of a Read of an image as thumbnails", () => {
    const items: Item[] = [
      { kind: "user", key: "a", text: "Why is this red?", images: [{ name: "shot.png", mimeType: "image/png", data: "iVBO" }] },
      { kind: "user", key: "b", text: "", images: [{ name: "pasted image", mimeType: "image/gif", data: "R0lG" }] },
      {
        kind: "tool",
        key: "c",
        call: {
          id: "t1",
          title: "Read logo.webp",
          name: "Read",
          kind: "read",
          status: "completed",
          rawInput: { file_path: "logo.webp" },
          rawOutput: { type: "image_read", path: "logo.webp", media_type: "image/webp", bytes: 99 },
          content: [
            { type: "content", content: { type: "text", text: "Image logo.webp (10x10 px)." } },
            { type: "content", content: { type: "image", mimeType: "image/webp", data: "UklG" } },
          ],
          locations: [],
        },
      },
    ];
    render(<ConversationView items={items} busy={false} />);
    const [first, second] = screen.getAllByTestId("user-message");
    expect(first?.querySelector(".message-text")?.textContent).toBe("Why is this red?");
    expect(first?.querySelector("img")?.getAttribute("src")).toBe("data:image/png;base64,iVBO");
    expect(second?.querySelector(".message-text")).toBeNull();
    expect(second?.querySelector("img")?.getAttribute("alt")).toBe("pasted image");
    const card = screen.getByTestId("tool-card");
    expect(card.querySelector("img")?.getAttribute("src")).toBe("data:image/webp;base64,UklG");
  });

  it("shows what the model was told when a call failed without a payload", () => {
    const items: Item[] = [
      {
        kind: "tool",
        key: "a",
        call: {
          id: "t1",
          title: "Write out.txt",
          name: "Write",
          kind: "edit",
          status: "failed",
          rawInput: {},
          rawOutput: undefined,
          content: [{ type: "content", content: { type: "text", text: "The person denied permission to run Write." } }],
          locations: [],
        },
      },
    ];
    const { container } = render(<ConversationView items={items} busy={false} />);
    expect(container.querySelector(".tool-kind")?.textContent).toBe("Write");
    expect(container.querySelector(".tool-error")?.textContent).toBe("The person denied permission to run Write.");
  });

  it("renders only the last window of a long conversation and reveals earlier items on request", () => {
    const items: Item[] = Array.from({ length: 450 }, (_, i) => ({ kind: "user", key: `k${i}`, text: `message ${i}` }));
    const { rerender } = render(<ConversationView items={items} busy={false} />);
    const texts = () => screen.getAllByTestId("user-message").map((m) => m.textContent);
    expect(texts()).toHaveLength(200);
    expect(texts()[0]).toBe("message 250");
    expect(texts().at(-1)).toBe("message 449");
    fireEvent.click(screen.getByRole("button", { name: "Show earlier messages (250 more)" }));
    expect(texts()).toHaveLength(400);
    expect(texts()[0]).toBe("message 50");
    fireEvent.click(screen.getByRole("button", { name: "Show earlier messages (50 more)" }));
    expect(texts()).toHaveLength(450);
    expect(texts()[0]).toBe("message 0");
    expect(screen.queryByRole("button", { name: /Show earlier/ })).toBeNull();
    // New items keep arriving at the end, in order.
    rerender(<ConversationView items={[...items, { kind: "agent", key: "new", text: "Done." }]} busy={false} />);
    expect(screen.getAllByTestId("agent-message").map((m) => m.textContent)).toEqual(["Done."]);
  });

  it("shows no button while everything fits", () => {
    const items: Item[] = [{ kind: "user", key: "a", text: "hi" }];
    render(<ConversationView items={items} busy={false} windowSize={1} />);
    expect(screen.queryByRole("button", { name: /Show earlier/ })).toBeNull();
  });
});
