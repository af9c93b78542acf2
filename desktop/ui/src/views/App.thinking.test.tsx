// The session bar's model choices and thinking level against the strict
// fake riot serve: the `model` config option's choices (what the endpoint
// lists) join the model field's suggestions, the Thinking select shows
// only for a model that can think, and choosing a level sends
// `session/set_config_option` and shows what Riot answered.

import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { FakeRiot } from "../bridge/testing/fake-riot";
import { PROJECT, pageWithSession as page } from "./testing";

describe("the session bar's model choices and thinking level", () => {
  it("offers the listed models and sets the thinking level through session/set_config_option", async () => {
    const riot = new FakeRiot({
      token: "t",
      projects: [PROJECT],
      thinkingModels: ["mock-model"],
      listedModels: [
        { id: "claude-opus-4-1", name: "Claude Opus 4.1" },
        { id: "claude-haiku-4-5", name: "Claude Haiku 4.5" },
      ],
    });
    const { id } = await page(riot);
    const field = screen.getByRole("combobox", { name: "Model" }) as HTMLInputElement;
    const suggested = [...document.querySelectorAll(`#${field.getAttribute("list")!.replace(/:/g, "\\:")} option`)].map(
      (o) => (o as HTMLOptionElement).value,
    );
    expect(suggested).toEqual(["mock-model", "claude-opus-4-1", "claude-haiku-4-5"]);

    const thinking = screen.getByRole("combobox", { name: "Thinking" }) as HTMLSelectElement;
    expect(thinking.value).toBe("off");
    fireEvent.change(thinking, { target: { value: "high" } });
    await waitFor(() => expect(riot.configSet).toEqual([{ sessionId: id, configId: "thinking", value: "high" }]));
    await waitFor(() => expect((screen.getByRole("combobox", { name: "Thinking" }) as HTMLSelectElement).value).toBe("high"));
  });

  it("shows no thinking level for a model that cannot think", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    await page(riot);
    expect(screen.queryByRole("combobox", { name: "Thinking" })).toBeNull();
  });
});
