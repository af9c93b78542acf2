import { describe, expect, it } from "vitest";

import {
  MalformedNotificationError,
  MalformedResultError,
  parseCheckpoints,
  parseModelConfig,
  parseRewind,
  parseTerminal,
  parseUsage,
} from "./riot-ext";

describe("parseModelConfig", () => {
  const base = {
    provider: "anthropic",
    baseUrl: null,
    model: "claude-sonnet-4-5",
    key: "present",
    keySource: "credentials.json",
    ready: true,
    problem: null,
  };

  it("takes Riot's result as it is", () => {
    expect(parseModelConfig("_riot/config", base)).toEqual(base);
  });

  it("keeps a misconfigured provider's problem so the form can fix it", () => {
    const typo = {
      ...base,
      provider: "ollama",
      ready: false,
      problem: "unknown provider `ollama`: use anthropic, openai or openai-responses",
    };
    expect(parseModelConfig("_riot/config", typo)).toEqual({ ...typo, provider: null });
  });

  it("refuses a result of another shape", () => {
    expect(() => parseModelConfig("_riot/config", { ...base, key: "secret" })).toThrow(MalformedResultError);
    expect(() => parseModelConfig("_riot/config", { ...base, ready: "yes" })).toThrow(MalformedResultError);
  });
});

describe("parseUsage", () => {
  const base = {
    sessionId: "s1",
    model: "claude-sonnet-4-5",
    requests: 2,
    usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 2 },
    costUsd: 0.0123,
  };
  const figures = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 3, cacheWriteTokens: 2 };

  const none = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

  it("takes the session's cost, and an unknown one as null", () => {
    expect(parseUsage(base)).toEqual({
      sessionId: "s1",
      model: "claude-sonnet-4-5",
      requests: 2,
      ...figures,
      side: none,
      costUsd: 0.0123,
    });
    expect(parseUsage({ ...base, costUsd: null }).costUsd).toBeNull();
    const { costUsd: _, ...older } = base;
    expect(parseUsage(older).costUsd).toBeNull();
  });

  it("keeps the side requests' figures apart, none from a Riot that sends none", () => {
    const side = { inputTokens: 40, outputTokens: 20, cacheReadTokens: 7, cacheWriteTokens: 0 };
    const parsed = parseUsage({ ...base, sideUsage: side });
    expect(parsed.side).toEqual(side);
    expect(parsed.inputTokens).toBe(10);
    expect(parseUsage(base).side).toEqual(none);
    for (const sideUsage of [null, {}, { ...side, outputTokens: -1 }, { ...side, inputTokens: "40" }]) {
      expect(() => parseUsage({ ...base, sideUsage })).toThrow(MalformedNotificationError);
    }
  });

  it("refuses a cost that is not dollars", () => {
    for (const costUsd of [-1, "0.5", Number.NaN, {}]) {
      expect(() => parseUsage({ ...base, costUsd })).toThrow(MalformedNotificationError);
    }
  });
});

describe("parseCheckpoints and parseRewind", () => {
  const point = { number: 1, text: "go", at_ms: 5, in_history: true, files: ["a.rs"], calls: 1, unfinished: 0 };

  it("reads Riot's snake_case points and refuses anything else", () => {
    expect(parseCheckpoints({ points: [point] })).toEqual([
      { number: 1, text: "go", atMs: 5, inHistory: true, files: ["a.rs"], calls: 1, unfinished: 0 },
    ]);
    expect(parseCheckpoints({ points: [] })).toEqual([]);
    expect(() => parseCheckpoints({ points: [{ ...point, number: 0 }] })).toThrow(MalformedResultError);
    expect(() => parseCheckpoints({ points: [{ ...point, files: [1] }] })).toThrow(MalformedResultError);
    expect(() => parseCheckpoints({ points: [{ ...point, in_history: undefined }] })).toThrow(MalformedResultError);
    expect(() => parseCheckpoints({})).toThrow(MalformedResultError);
  });

  it("reads a rewind's outcome: files null when they were left alone", () => {
    const outcome = { to: 2, files: null, conversation: true, prompt: "p" };
    expect(parseRewind({ outcome, summary: "s" })).toEqual({ to: 2, files: null, conversation: true, prompt: "p", summary: "s" });
    const files = { restored: ["a"], removed: ["b"], conflicts: ["c"], forced: [], notes: ["n"] };
    expect(parseRewind({ outcome: { ...outcome, files }, summary: "s" }).files).toEqual(files);
    expect(() => parseRewind({ outcome: { ...outcome, files: { ...files, forced: undefined } }, summary: "s" })).toThrow(
      MalformedResultError,
    );
    expect(() => parseRewind({ outcome })).toThrow(MalformedResultError);
    expect(() => parseRewind({ outcome: { ...outcome, conversation: "yes" }, summary: "s" })).toThrow(MalformedResultError);
  });
});

describe("parseTerminal", () => {
  // Exactly what crates/riot-acp/src/terminals.rs sends (serde's names, snake_case inside `update`).
  it("reads each kind of update as Riot sends it", () => {
    const opened = { type: "opened", name: "py", command: "python3 -q", size: { rows: 30, cols: 100 } };
    expect(parseTerminal({ sessionId: "s1", update: opened })).toEqual({ sessionId: "s1", update: opened });
    const screen = { type: "screen", name: "py", rows: [">>> 6*7", "42", ">>>"], cursor_row: 2, cursor_col: 4, full_screen: false };
    expect(parseTerminal({ sessionId: "s1", update: screen }).update).toEqual(screen);
    const exited = { type: "exited", name: "py", exit: { code: null, signal: 9 } };
    expect(parseTerminal({ sessionId: "s1", update: exited }).update).toEqual(exited);
    expect(parseTerminal({ sessionId: "s1", update: { type: "closed", name: "py" } }).update).toEqual({ type: "closed", name: "py" });
  });

  it("refuses anything else", () => {
    const screen = { type: "screen", name: "py", rows: [""], cursor_row: 0, cursor_col: 0, full_screen: false };
    for (const update of [
      { ...screen, rows: [1] },
      { ...screen, cursor_row: -1 },
      { ...screen, full_screen: "no" },
      { ...screen, name: 3 },
      { type: "opened", name: "py", command: "x", size: { rows: 30 } },
      { type: "exited", name: "py", exit: { code: 1.5, signal: null } },
      { type: "resized", name: "py" },
    ]) {
      expect(() => parseTerminal({ sessionId: "s1", update })).toThrow(MalformedNotificationError);
    }
    expect(() => parseTerminal({ update: screen })).toThrow(MalformedNotificationError);
  });
});
