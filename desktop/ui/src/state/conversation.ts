// A session's conversation as the UI shows it, built from ACP
// `session/update`s. Pure: `applyUpdates` returns a new conversation and
// never changes the one it was given, so React sees what changed by
// reference. A batch (one frame's worth of updates) copies the item list
// once, not once per delta.

import { sessionOptions } from "../bridge/riot-ext";
import type {
  AvailableCommand,
  PlanEntry,
  SessionModeState,
  SessionOptions,
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
} from "../bridge";

export interface ToolCallView {
  id: string;
  /** The one-line `describe` of the call. */
  title: string;
  /** The tool's name, when Riot sends it. */
  name: string | null;
  kind: ToolKind | null;
  status: ToolCallStatus;
  rawInput: unknown;
  /** Riot's UI payload (`schemas/ui_payload.json`) once the call finished. */
  rawOutput: unknown;
  /** What the model was told (text), and the edit as a diff. */
  content: ToolCallContent[];
  locations: ToolCallLocation[];
}

/** An image shown in a message: what the person attached, or what Riot sent back with a replay. */
export interface ShownImage {
  name: string;
  mimeType: string;
  /** Base64. */
  data: string;
}

export type Item =
  | { kind: "user"; key: string; text: string; images?: readonly ShownImage[] }
  | { kind: "agent"; key: string; text: string }
  | { kind: "thought"; key: string; text: string }
  | { kind: "tool"; key: string; call: ToolCallView }
  | { kind: "notice"; key: string; tone: "info" | "warning" | "error"; text: string };

export interface Conversation {
  items: readonly Item[];
  /** Tool call id → its index in `items`. */
  tools: Readonly<Record<string, number>>;
  /** The latest plan (TodoWrite's list), if any. */
  plan: readonly PlanEntry[] | null;
  commands: readonly AvailableCommand[];
  modes: SessionModeState | null;
  /** The model choices and thinking level Riot offers (config options); `null` from an older Riot. */
  options: SessionOptions | null;
  /** Keys for new items; never reused within a conversation. */
  nextKey: number;
}

export function emptyConversation(
  modes: SessionModeState | null = null,
  options: SessionOptions | null = null,
): Conversation {
  return { items: [], tools: {}, plan: null, commands: [], modes, options, nextKey: 0 };
}

/** Mutable copies for one batch. */
interface Draft {
  items: Item[];
  tools: Record<string, number>;
  plan: readonly PlanEntry[] | null;
  commands: readonly AvailableCommand[];
  modes: SessionModeState | null;
  options: SessionOptions | null;
  nextKey: number;
}

function key(draft: Draft): string {
  return `i${draft.nextKey++}`;
}

type TextKind = "user" | "agent" | "thought";

function appendText(draft: Draft, kind: TextKind, text: string): void {
  const last = draft.items[draft.items.length - 1];
  if (last !== undefined && last.kind === kind) {
    draft.items[draft.items.length - 1] = { ...last, text: last.text + text };
  } else {
    draft.items.push({ kind, key: key(draft), text });
  }
}

/** An `image` content block of a message chunk, when it carries its data. */
function chunkImage(update: { content: { type: string } }): ShownImage | null {
  const content = update.content as { type: string; data?: unknown; mimeType?: unknown; uri?: unknown };
  if (content.type !== "image" || typeof content.data !== "string" || typeof content.mimeType !== "string") return null;
  const name = typeof content.uri === "string" ? (content.uri.split("/").pop() ?? "image") : "image";
  return { name, mimeType: content.mimeType, data: content.data };
}

/** Adds `image` to the person's message being built (a new one when the last item is not theirs). */
function appendUserImage(draft: Draft, image: ShownImage): void {
  const last = draft.items[draft.items.length - 1];
  if (last !== undefined && last.kind === "user") {
    draft.items[draft.items.length - 1] = { ...last, images: [...(last.images ?? []), image] };
  } else {
    draft.items.push({ kind: "user", key: key(draft), text: "", images: [image] });
  }
}

function chunkText(update: { content: { type: string } }): string {
  const content = update.content as { type: string; text?: string; uri?: string };
  switch (content.type) {
    case "text":
      return content.text ?? "";
    case "resource_link":
      return `@${(content.uri ?? "").replace(/^file:\/\//, "")}`;
    default:
      return `[${content.type} not shown]`;
  }
}

function newCall(id: string): ToolCallView {
  return {
    id,
    title: "",
    name: null,
    kind: null,
    status: "pending",
    rawInput: undefined,
    rawOutput: undefined,
    content: [],
    locations: [],
  };
}

/** The call with the fields `update` carries; absent and null fields keep their value. */
export function mergeCall(call: ToolCallView, update: Omit<ToolCallUpdate, "toolCallId">): ToolCallView {
  const next = { ...call };
  if (update.title != null) next.title = update.title;
  if (update.name != null) next.name = update.name;
  if (update.kind != null) next.kind = update.kind;
  if (update.status != null) next.status = update.status;
  if (update.rawInput !== undefined && update.rawInput !== null) next.rawInput = update.rawInput;
  if (update.rawOutput !== undefined && update.rawOutput !== null) next.rawOutput = update.rawOutput;
  if (update.content != null) next.content = update.content;
  if (update.locations != null) next.locations = update.locations;
  return next;
}

function applyCall(draft: Draft, id: string, update: Omit<ToolCallUpdate, "toolCallId">): void {
  const index = draft.tools[id];
  const existing = index === undefined ? undefined : draft.items[index];
  if (index !== undefined && existing?.kind === "tool") {
    draft.items[index] = { ...existing, call: mergeCall(existing.call, update) };
    return;
  }
  const call = mergeCall(newCall(id), update);
  draft.tools[id] = draft.items.length;
  draft.items.push({ kind: "tool", key: key(draft), call });
}

function apply(draft: Draft, update: SessionUpdate): void {
  switch (update.sessionUpdate) {
    case "user_message_chunk": {
      const image = chunkImage(update);
      if (image !== null) appendUserImage(draft, image);
      else appendText(draft, "user", chunkText(update));
      return;
    }
    case "agent_message_chunk":
      appendText(draft, "agent", chunkText(update));
      return;
    case "agent_thought_chunk":
      appendText(draft, "thought", chunkText(update));
      return;
    case "tool_call": {
      const { toolCallId, sessionUpdate: _, ...fields } = update;
      applyCall(draft, toolCallId, fields);
      return;
    }
    case "tool_call_update": {
      const { toolCallId, sessionUpdate: _, ...fields } = update;
      applyCall(draft, toolCallId, fields);
      return;
    }
    case "plan":
      draft.plan = update.entries;
      return;
    case "available_commands_update":
      draft.commands = update.availableCommands;
      return;
    case "current_mode_update":
      if (draft.modes !== null) {
        draft.modes = { ...draft.modes, currentModeId: update.currentModeId };
      }
      return;
    case "config_option_update":
      draft.options = sessionOptions(update.configOptions) ?? draft.options;
      return;
    default:
      // Updates that change nothing shown here (session info).
      return;
  }
}

/** The conversation after `updates`, in order. */
export function applyUpdates(conversation: Conversation, updates: readonly SessionUpdate[]): Conversation {
  if (updates.length === 0) return conversation;
  const draft: Draft = {
    items: conversation.items.slice(),
    tools: { ...conversation.tools },
    plan: conversation.plan,
    commands: conversation.commands,
    modes: conversation.modes,
    options: conversation.options,
    nextKey: conversation.nextKey,
  };
  for (const update of updates) apply(draft, update);
  return draft;
}

/** The conversation with the person's prompt (and the images sent with it), shown before Riot answers. */
export function withPrompt(conversation: Conversation, text: string, images: readonly ShownImage[] = []): Conversation {
  const item: Item =
    images.length === 0
      ? { kind: "user", key: `i${conversation.nextKey}`, text }
      : { kind: "user", key: `i${conversation.nextKey}`, text, images: images.map(({ name, mimeType, data }) => ({ name, mimeType, data })) };
  return {
    ...conversation,
    items: [...conversation.items, item],
    nextKey: conversation.nextKey + 1,
  };
}

/** The conversation with a note from the UI (a stop, an error, a compaction). */
export function withNotice(
  conversation: Conversation,
  tone: "info" | "warning" | "error",
  text: string,
): Conversation {
  return {
    ...conversation,
    items: [...conversation.items, { kind: "notice", key: `i${conversation.nextKey}`, tone, text }],
    nextKey: conversation.nextKey + 1,
  };
}

/** The conversation in another mode (after `session/set_mode` succeeded). */
export function withMode(conversation: Conversation, modeId: string): Conversation {
  if (conversation.modes === null) return conversation;
  return { ...conversation, modes: { ...conversation.modes, currentModeId: modeId } };
}
