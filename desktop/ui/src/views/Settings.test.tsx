import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import type { ModelConfig } from "../bridge";
import type { SettingsForm } from "../state/store";
import { SettingsDialog } from "./Settings";

const NOTHING: ModelConfig = {
  provider: null,
  baseUrl: null,
  model: null,
  key: "missing",
  keySource: null,
  ready: false,
  problem: "No model endpoint is configured: choose a provider and a model.",
};
const ONBOARDING: SettingsForm = { purpose: "onboarding", saving: false, error: null };

function open(config: ModelConfig, form: SettingsForm = ONBOARDING) {
  const onSave = vi.fn();
  const onClose = vi.fn();
  render(<SettingsDialog config={config} form={form} onSave={onSave} onClose={onClose} />);
  const field = (name: string) => screen.getByLabelText(name) as HTMLInputElement;
  return { onSave, onClose, field };
}

describe("SettingsDialog", () => {
  it("asks for a model at first run, saying why, with the providers in order", () => {
    const { field } = open(NOTHING);
    expect(screen.getByRole("dialog", { name: "Set up a model" })).toBeTruthy();
    expect(screen.getByTestId("settings-problem").textContent).toBe(
      "No model endpoint is configured: choose a provider and a model.",
    );
    const provider = screen.getByLabelText("Provider") as HTMLSelectElement;
    expect([...provider.options].map((o) => o.textContent)).toEqual([
      "Anthropic",
      "OpenAI",
      "OpenAI-compatible (DeepSeek, Kimi, Qwen, vLLM, Ollama, llama.cpp)",
      "OpenAI Responses API",
    ]);
    expect(field("Base URL").placeholder).toBe("https://api.anthropic.com");
    expect(field("API key").type).toBe("password");
    expect(screen.getByTestId("key-status").textContent).toBe("No key yet. Optional: not needed for a local server.");
    fireEvent.change(provider, { target: { value: "openai" } });
    expect(field("Base URL").placeholder).toBe("https://api.openai.com/v1");
  });

  it("drops a base URL when the provider changes wire format, keeps it within the OpenAI family", () => {
    const { field } = open(NOTHING);
    const provider = screen.getByLabelText("Provider") as HTMLSelectElement;
    fireEvent.change(provider, { target: { value: "compatible" } });
    fireEvent.change(field("Base URL"), { target: { value: "http://127.0.0.1:11434/v1" } });
    fireEvent.change(provider, { target: { value: "openai-responses" } });
    expect(field("Base URL").value).toBe("http://127.0.0.1:11434/v1");
    fireEvent.change(provider, { target: { value: "anthropic" } });
    expect(field("Base URL").value).toBe("");
  });

  it("saves the form as Riot's provider, model, base URL and key", () => {
    const { onSave, field } = open(NOTHING);
    fireEvent.change(field("Base URL"), { target: { value: " http://127.0.0.1:9999 " } });
    fireEvent.change(field("Model"), { target: { value: "mock-model" } });
    fireEvent.change(field("API key"), { target: { value: "test-key" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(onSave).toHaveBeenCalledWith({
      provider: "anthropic",
      model: "mock-model",
      baseUrl: "http://127.0.0.1:9999",
      apiKey: "test-key",
    });
  });

  it("maps OpenAI-compatible to the openai provider and requires its base URL", () => {
    const { onSave, field } = open(NOTHING);
    fireEvent.change(screen.getByLabelText("Provider"), { target: { value: "compatible" } });
    expect(field("Base URL").placeholder).toBe("http://localhost:11434/v1");
    fireEvent.change(field("Model"), { target: { value: "qwen3" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(onSave).not.toHaveBeenCalled();
    expect(screen.getByRole("alert").textContent).toBe(
      "Enter the server's base URL, for example http://localhost:11434/v1.",
    );
    fireEvent.change(field("Base URL"), { target: { value: "http://localhost:11434/v1" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    // No key typed: none is sent, so a saved one is kept.
    expect(onSave).toHaveBeenCalledWith({ provider: "openai", model: "qwen3", baseUrl: "http://localhost:11434/v1" });
  });

  it("is pre-filled from the configuration, says where the key comes from and never shows it", () => {
    const { field } = open(
      {
        provider: "openai",
        baseUrl: "https://api.deepseek.com/v1",
        model: "deepseek-v4-flash",
        key: "present",
        keySource: "credentials.json (openai)",
        ready: true,
        problem: null,
      },
      { purpose: "settings", saving: false, error: null },
    );
    expect(screen.getByRole("dialog", { name: "Model settings" })).toBeTruthy();
    expect((screen.getByLabelText("Provider") as HTMLSelectElement).value).toBe("compatible");
    expect(field("Base URL").value).toBe("https://api.deepseek.com/v1");
    expect(field("Model").value).toBe("deepseek-v4-flash");
    expect(field("API key").value).toBe("");
    expect(screen.getByTestId("key-status").textContent).toBe(
      "A key is saved (from credentials.json (openai)); leave the field empty to keep it. Optional: not needed for a local server.",
    );
    expect(screen.queryByTestId("settings-problem")).toBeNull();
  });

  it("shows Riot's refusal next to the form and closes on Escape when not saving", () => {
    const { onClose } = open(NOTHING, {
      purpose: "onboarding",
      saving: false,
      error: "base URL `ftp://x` is not an http(s) URL: use one like https://api.example.com/v1",
    });
    expect(screen.getByRole("alert").textContent).toBe(
      "base URL `ftp://x` is not an http(s) URL: use one like https://api.example.com/v1",
    );
    fireEvent.keyDown(screen.getByLabelText("Model"), { key: "Escape" });
    expect(onClose).toHaveBeenCalledOnce();
  });

  it("cannot be saved twice while saving", () => {
    open(NOTHING, { purpose: "onboarding", saving: true, error: null });
    expect((screen.getByRole("button", { name: "Saving…" }) as HTMLButtonElement).disabled).toBe(true);
  });
});
