import { useEffect, useId, useRef, useState, type FormEvent } from "react";

import type { ModelConfig, ModelConfigInput, Provider } from "../bridge";
import type { SettingsForm } from "../state/store";
import { inFront, useModalFocus } from "./focus";

/** What the person picks; "compatible" is the OpenAI wire at a server of their choosing. */
type Choice = Provider | "compatible";

/** The wire family of a choice. */
function wire(choice: Choice): "anthropic" | "openai" {
  return choice === "anthropic" ? "anthropic" : "openai";
}

interface ChoiceInfo {
  value: Choice;
  label: string;
  provider: Provider;
  /** The provider's default base URL, or an example where there is none. */
  placeholder: string;
}

const CHOICES: readonly ChoiceInfo[] = [
  { value: "anthropic", label: "Anthropic", provider: "anthropic", placeholder: "https://api.anthropic.com" },
  { value: "openai", label: "OpenAI", provider: "openai", placeholder: "https://api.openai.com/v1" },
  {
    value: "compatible",
    label: "OpenAI-compatible (DeepSeek, Kimi, Qwen, vLLM, Ollama, llama.cpp)",
    provider: "openai",
    placeholder: "http://localhost:11434/v1",
  },
  {
    value: "openai-responses",
    label: "OpenAI Responses API",
    provider: "openai-responses",
    placeholder: "https://api.openai.com/v1",
  },
];

const OPENAI_DEFAULT = "https://api.openai.com/v1";

function choiceOf(config: ModelConfig): Choice {
  switch (config.provider) {
    case null:
      return "anthropic";
    case "openai":
      return config.baseUrl !== null && config.baseUrl.replace(/\/+$/, "") !== OPENAI_DEFAULT ? "compatible" : "openai";
    default:
      return config.provider;
  }
}

function keyStatus(config: ModelConfig): string {
  switch (config.key) {
    case "present":
      return config.keySource === null
        ? "A key is saved; leave the field empty to keep it."
        : `A key is saved (from ${config.keySource}); leave the field empty to keep it.`;
    case "not-needed":
      return "This server needs no key.";
    case "missing":
      return "No key yet.";
  }
}

interface Props {
  config: ModelConfig;
  form: SettingsForm;
  onSave(input: ModelConfigInput): void;
  onClose(): void;
}

/**
 * The model endpoint Riot uses: at first run (when no model is ready)
 * and from the top bar's Settings. The key is written, never shown:
 * Riot only says whether it has one and where it comes from.
 */
export function SettingsDialog({ config, form, onSave, onClose }: Props) {
  const [choice, setChoice] = useState<Choice>(() => choiceOf(config));
  const [baseUrl, setBaseUrl] = useState(config.baseUrl ?? "");
  const [model, setModel] = useState(config.model ?? "");
  const [apiKey, setApiKey] = useState("");
  const [missing, setMissing] = useState<string | null>(null);
  const id = useId();
  const info = CHOICES.find((c) => c.value === choice) ?? CHOICES[0]!;
  const onboarding = form.purpose === "onboarding";
  const heading = onboarding ? "Set up a model" : "Model settings";
  const dialog = useRef<HTMLDivElement>(null);
  useModalFocus(dialog, () => dialog.current?.querySelector("select") ?? null);
  // Escape closes it wherever the focus is (not while saving).
  const close = useRef(() => {});
  useEffect(() => {
    close.current = form.saving ? () => {} : onClose;
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.defaultPrevented || !inFront(dialog.current)) return;
      e.preventDefault();
      close.current();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (choice === "compatible" && baseUrl.trim() === "") {
      setMissing(`Enter the server's base URL, for example ${info.placeholder}.`);
      return;
    }
    setMissing(null);
    const key = apiKey.trim();
    onSave({
      provider: info.provider,
      model: model.trim(),
      baseUrl: baseUrl.trim() === "" ? null : baseUrl.trim(),
      ...(key === "" ? {} : { apiKey: key }),
    });
  };
  const error = missing ?? form.error;

  return (
    <div className="modal-backdrop">
      <div
        className="settings-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-heading`}
        data-testid="settings-dialog"
        tabIndex={-1}
        ref={dialog}
      >
        <h2 id={`${id}-heading`}>{heading}</h2>
        <p className="settings-intro">
          Riot needs a model endpoint to work: pick the provider, name the model and, unless the server runs on this
          machine, give its API key.
        </p>
        {!config.ready && config.problem !== null && (
          <p className="settings-problem" data-testid="settings-problem">
            {config.problem}
          </p>
        )}
        <form className="settings-form" onSubmit={submit}>
          <label htmlFor={`${id}-provider`}>Provider</label>
          <select
            id={`${id}-provider`}
            value={choice}
            onChange={(e) => {
              const next = e.target.value as Choice;
              // An address typed for one wire format is another vendor's
              // server: it does not carry over between Anthropic and the
              // OpenAI family (within that family it often does).
              if (wire(next) !== wire(choice)) setBaseUrl("");
              setChoice(next);
              setMissing(null);
            }}
          >
            {CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>

          <label htmlFor={`${id}-base-url`}>Base URL</label>
          <input
            id={`${id}-base-url`}
            type="url"
            spellCheck={false}
            placeholder={info.placeholder}
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
          />
          <p className="settings-note">
            {choice === "compatible" ? "Required: the server's OpenAI-compatible address." : "Empty: the provider's own."}
          </p>

          <label htmlFor={`${id}-model`}>Model</label>
          <input
            id={`${id}-model`}
            type="text"
            spellCheck={false}
            placeholder={choice === "anthropic" ? "claude-sonnet-4-5" : "gpt-5"}
            value={model}
            onChange={(e) => setModel(e.target.value)}
          />

          <label htmlFor={`${id}-key`}>API key</label>
          <input
            id={`${id}-key`}
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
          />
          <p className="settings-note" data-testid="key-status">
            {keyStatus(config)} Optional: not needed for a local server.
          </p>

          {error !== null && (
            <p className="settings-error" role="alert" data-testid="settings-error">
              {error}
            </p>
          )}
          <div className="settings-actions">
            <button type="button" onClick={onClose} disabled={form.saving}>
              {onboarding ? "Not now" : "Cancel"}
            </button>
            <button type="submit" className="primary" disabled={form.saving}>
              {form.saving ? "Saving…" : "Save"}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
