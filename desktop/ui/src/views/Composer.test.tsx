import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { Composer, matchingCommands } from "./Composer";

const COMMANDS = [
  { name: "compact", description: "Summarize the session to free context" },
  { name: "clear", description: "Start over" },
  { name: "model", description: "Switch the model", input: { hint: "NAME" } },
];

function setup(props: Partial<Parameters<typeof Composer>[0]> = {}) {
  const onSend = vi.fn();
  const onStop = vi.fn();
  render(
    <Composer commands={COMMANDS} running={false} stopping={false} disabled={false} onSend={onSend} onStop={onStop} {...props} />,
  );
  return { onSend, onStop, box: screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement };
}

describe("matchingCommands", () => {
  it("matches by prefix only while the input is a lone /word", () => {
    expect(matchingCommands("/c", COMMANDS).map((c) => c.name)).toEqual(["compact", "clear"]);
    expect(matchingCommands("/", COMMANDS)).toHaveLength(3);
    expect(matchingCommands("/model gpt", COMMANDS)).toEqual([]);
    expect(matchingCommands("use /c", COMMANDS)).toEqual([]);
  });
});

describe("Composer", () => {
  it("sends on Enter and keeps Shift+Enter for a new line", () => {
    const { onSend, box } = setup();
    fireEvent.change(box, { target: { value: "hello" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledWith("hello");
    expect(box.value).toBe("");
  });

  it("does not send blank text", () => {
    const { onSend, box } = setup();
    fireEvent.change(box, { target: { value: "   " } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
  });

  it("opens the / menu from available_commands_update and inserts the chosen command", () => {
    const { onSend, box } = setup();
    fireEvent.change(box, { target: { value: "/c" } });
    const options = screen.getAllByRole("option");
    expect(options.map((o) => o.querySelector(".command-name")?.textContent)).toEqual(["/compact", "/clear"]);
    fireEvent.keyDown(box, { key: "ArrowDown" });
    expect(screen.getAllByRole("option")[1]?.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("/clear ");
    expect(onSend).not.toHaveBeenCalled();
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("shows a command's argument hint", () => {
    const { box } = setup();
    fireEvent.change(box, { target: { value: "/mo" } });
    expect(screen.getByText("NAME")).toBeTruthy();
  });

  it("offers Stop instead of Send while a turn runs", () => {
    const { onStop } = setup({ running: true });
    expect(screen.queryByText("Send")).toBeNull();
    fireEvent.click(screen.getByText("Stop"));
    expect(onStop).toHaveBeenCalledOnce();
  });
});
