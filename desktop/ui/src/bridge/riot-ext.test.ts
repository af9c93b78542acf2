import { describe, expect, it } from "vitest";

import { MalformedResultError, parseModelConfig } from "./riot-ext";

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
