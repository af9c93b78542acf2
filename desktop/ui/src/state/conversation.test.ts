import { describe, expect, it } from "vitest";

import type { SessionUpdate } from "../bridge";
import { applyUpdates, emptyConversation, withPrompt } from "./conversation";

const text = (sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", t: string): SessionUpdate => ({
  sessionUpdate,
  content: { type: "text", text: t },
});

describe("applyUpdates", () => {
  it("shows the image blocks of a replayed prompt with its text", () => {
    const c = applyUpdates(emptyConversation(), [
      text("user_message_chunk", "see this"),
      { sessionUpdate: "user_message_chunk", content: { type: "image", mimeType: "image/png", data: "iVBO", uri: "file:///p/shot.png" } },
      text("agent_message_chunk", "A cat."),
      { sessionUpdate: "user_message_chunk", content: { type: "image", mimeType: "image/jpeg", data: "/9j/" } },
    ]);
    expect(c.items).toEqual([
      { kind: "user", key: "i0", text: "see this", images: [{ name: "shot.png", mimeType: "image/png", data: "iVBO" }] },
      { kind: "agent", key: "i1", text: "A cat." },
      { kind: "user", key: "i2", text: "", images: [{ name: "image", mimeType: "image/jpeg", data: "/9j/" }] },
    ]);
  });

  it("joins consecutive chunks into one message and starts a new one after a tool call", () => {
    const c = applyUpdates(emptyConversation(), [
      text("agent_thought_chunk", "Let me "),
      text("agent_thought_chunk", "look."),
      text("agent_message_chunk", "I will "),
      text("agent_message_chunk", "read it."),
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.txt", kind: "read", status: "in_progress" },
      text("agent_message_chunk", "Done."),
    ]);
    expect(c.items.map((i) => [i.kind, "text" in i ? i.text : i.kind === "tool" ? i.call.title : ""])).toEqual([
      ["thought", "Let me look."],
      ["agent", "I will read it."],
      ["tool", "Read a.txt"],
      ["agent", "Done."],
    ]);
  });

  it("merges tool_call_update fields into the call and keeps what an update leaves out", () => {
    const c = applyUpdates(emptyConversation(), [
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "Write", kind: "edit", status: "pending", rawInput: { file_path: "a" } },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress", title: "Write a" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "t1",
        status: "completed",
        rawOutput: { type: "file_diff", path: "a", created: true, hunks: [] },
        title: null,
      },
    ]);
    expect(c.items).toHaveLength(1);
    const item = c.items[0];
    expect(item?.kind === "tool" && item.call).toMatchObject({
      id: "t1",
      title: "Write a",
      kind: "edit",
      status: "completed",
      rawInput: { file_path: "a" },
      rawOutput: { type: "file_diff" },
    });
  });

  it("shows an update for a call it never saw announced as a card of its own", () => {
    const c = applyUpdates(emptyConversation(), [
      { sessionUpdate: "tool_call_update", toolCallId: "t9", status: "failed", title: "Bash" },
    ]);
    expect(c.items[0]).toMatchObject({ kind: "tool", call: { id: "t9", status: "failed" } });
  });

  it("never changes the conversation it was given", () => {
    const before = applyUpdates(emptyConversation(), [text("agent_message_chunk", "a")]);
    const snapshot = JSON.stringify(before);
    const after = applyUpdates(before, [
      text("agent_message_chunk", "b"),
      { sessionUpdate: "plan", entries: [{ content: "x", priority: "medium", status: "pending" }] },
    ]);
    expect(JSON.stringify(before)).toBe(snapshot);
    expect(after.items[0]).toMatchObject({ text: "ab" });
    expect(after.plan).toHaveLength(1);
  });

  it("keeps the commands, the mode and the person's own prompt", () => {
    let c = emptyConversation({ currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] });
    c = withPrompt(c, "hello");
    c = applyUpdates(c, [
      { sessionUpdate: "available_commands_update", availableCommands: [{ name: "compact", description: "d" }] },
      { sessionUpdate: "current_mode_update", currentModeId: "plan" },
      text("agent_message_chunk", "hi"),
    ]);
    expect(c.items.map((i) => i.kind)).toEqual(["user", "agent"]);
    expect(c.commands.map((x) => x.name)).toEqual(["compact"]);
    expect(c.modes?.currentModeId).toBe("plan");
    expect(new Set(c.items.map((i) => i.key)).size).toBe(2);
  });

  it("takes the model choices and thinking level from a config_option_update", () => {
    const c = applyUpdates(emptyConversation(), [
      {
        sessionUpdate: "config_option_update",
        configOptions: [
          {
            type: "select",
            id: "model",
            name: "Model",
            currentValue: "m1",
            options: [
              { value: "m1", name: "m1" },
              { value: "m2", name: "Model Two" },
            ],
          },
          {
            type: "select",
            id: "thinking",
            name: "Thinking",
            currentValue: "medium",
            options: [{ value: "off", name: "Off" }],
          },
        ],
      },
    ]);
    expect(c.options).toEqual({
      models: [
        { id: "m1", name: "m1" },
        { id: "m2", name: "Model Two" },
      ],
      thinking: "medium",
    });
    // A model that cannot think: the option is gone.
    const after = applyUpdates(c, [
      {
        sessionUpdate: "config_option_update",
        configOptions: [{ type: "select", id: "model", name: "Model", currentValue: "m3", options: [] }],
      },
    ]);
    expect(after.options?.thinking).toBeNull();
  });
});
