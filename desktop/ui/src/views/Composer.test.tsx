import { act, fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { Composer, insertMention, matchingCommands, mentionAt } from "./Composer";

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
  it("takes the focus when asked, once it is enabled, and not before asked", () => {
    const onSend = vi.fn();
    const onStop = vi.fn();
    const props = { commands: COMMANDS, running: false, stopping: false, onSend, onStop };
    const { rerender } = render(<Composer {...props} disabled={false} focusRequest={0} />);
    const box = screen.getByRole("textbox", { name: "Message" });
    expect(document.activeElement).not.toBe(box);
    rerender(<Composer {...props} disabled focusRequest={1} />);
    expect(document.activeElement).not.toBe(box);
    rerender(<Composer {...props} disabled={false} focusRequest={1} />);
    expect(document.activeElement).toBe(box);
    // Asked once: moving away is the person's choice.
    box.blur();
    rerender(<Composer {...props} disabled={false} focusRequest={1} />);
    expect(document.activeElement).not.toBe(box);
  });

  it("sends on Enter and keeps Shift+Enter for a new line", () => {
    const { onSend, box } = setup();
    fireEvent.change(box, { target: { value: "hello" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledWith("hello", []);
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

  it("queues what is sent while a turn runs (the Queue button and Enter both hand it on)", () => {
    const { onSend, box } = setup({ running: true });
    fireEvent.change(box, { target: { value: "and then the tests" } });
    fireEvent.click(screen.getByText("Queue"));
    expect(onSend).toHaveBeenCalledWith("and then the tests", []);
    expect(box.value).toBe("");
    fireEvent.change(box, { target: { value: "and the docs" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenLastCalledWith("and the docs", []);
  });
});

describe("mentionAt and insertMention", () => {
  it("finds an @word being typed at the caret, at the start or after a space only", () => {
    expect(mentionAt("@mai", 4)).toEqual({ start: 0, query: "mai" });
    expect(mentionAt("look at @src/ma", 15)).toEqual({ start: 8, query: "src/ma" });
    expect(mentionAt("look at @", 9)).toEqual({ start: 8, query: "" });
    expect(mentionAt("mail me@host", 12)).toBeNull();
    expect(mentionAt("@main.rs done", 13)).toBeNull();
    // The caret decides: the mention before it, not the text after it.
    expect(mentionAt("@ma and more", 3)).toEqual({ start: 0, query: "ma" });
  });

  it("replaces the typed mention by @path and one space", () => {
    expect(insertMention("read @mai", 9, { start: 5, query: "mai" }, "src/main.rs")).toEqual({
      text: "read @src/main.rs ",
      caret: 18,
    });
    expect(insertMention("@ma please", 3, { start: 0, query: "ma" }, "src/main.rs")).toEqual({
      text: "@src/main.rs please",
      caret: 13,
    });
  });
});

/** A findFiles whose answers the test gives, one query at a time. */
function controlledFiles() {
  const asked: string[] = [];
  const waiting: ((files: string[]) => void)[] = [];
  const findFiles = (query: string) =>
    new Promise<string[]>((resolve) => {
      asked.push(query);
      waiting.push(resolve);
    });
  const answer = async (files: string[]) => {
    await act(async () => waiting.shift()?.(files));
  };
  return { asked, findFiles, answer };
}

describe("Composer: @ mentions", () => {
  it("lists matching files, moves with the arrows and inserts the chosen one with Enter", async () => {
    const files = controlledFiles();
    const { onSend, box } = setup({ findFiles: files.findFiles });
    fireEvent.change(box, { target: { value: "explain @mai" } });
    expect(files.asked).toEqual(["mai"]);
    await files.answer(["src/main.rs", "docs/maintainers.md"]);
    const list = screen.getByRole("listbox", { name: "Files" });
    expect([...list.querySelectorAll("[role=option]")].map((o) => o.textContent)).toEqual([
      "src/main.rs",
      "docs/maintainers.md",
    ]);
    fireEvent.keyDown(box, { key: "ArrowDown" });
    fireEvent.keyDown(box, { key: "ArrowDown" });
    fireEvent.keyDown(box, { key: "ArrowUp" });
    expect(screen.getAllByRole("option")[1]?.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(box, { key: "ArrowDown" });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("explain @src/main.rs ");
    expect(box.selectionStart).toBe("explain @src/main.rs ".length);
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(onSend).not.toHaveBeenCalled();
  });

  it("inserts with Tab and closes with Escape without inserting", async () => {
    const files = controlledFiles();
    const { box } = setup({ findFiles: files.findFiles });
    fireEvent.change(box, { target: { value: "@REA" } });
    await files.answer(["README.md"]);
    fireEvent.keyDown(box, { key: "Escape" });
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(box.value).toBe("@REA");
    // Typing on opens it again.
    fireEvent.change(box, { target: { value: "@READ" } });
    await files.answer(["README.md"]);
    fireEvent.keyDown(box, { key: "Tab" });
    expect(box.value).toBe("@README.md ");
  });

  it("asks one query at a time, skipping to the newest, and drops stale answers", async () => {
    const files = controlledFiles();
    const { box } = setup({ findFiles: files.findFiles });
    fireEvent.change(box, { target: { value: "@m" } });
    fireEvent.change(box, { target: { value: "@ma" } });
    fireEvent.change(box, { target: { value: "@mai" } });
    expect(files.asked).toEqual(["m"]);
    await files.answer(["Makefile", "src/main.rs"]);
    // The answer for "m" is not shown for "@mai"; "mai" is asked next ("ma" is skipped).
    expect(screen.queryByRole("listbox")).toBeNull();
    expect(files.asked).toEqual(["m", "mai"]);
    await files.answer(["src/main.rs"]);
    expect(screen.getAllByRole("option").map((o) => o.textContent)).toEqual(["src/main.rs"]);
  });

  it("leaves the / menu to commands, and offers no files without findFiles", async () => {
    const files = controlledFiles();
    const { box } = setup({ findFiles: files.findFiles });
    fireEvent.change(box, { target: { value: "/c" } });
    expect(files.asked).toEqual([]);
    expect(screen.getByRole("listbox", { name: "Commands" })).toBeTruthy();
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("/compact ");
    fireEvent.change(box, { target: { value: "/compact @ma" } });
    expect(files.asked).toEqual(["ma"]);
    await files.answer(["src/main.rs"]);
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("/compact @src/main.rs ");
  });

  it("treats @ as text when Riot lists no files", () => {
    const { onSend, box } = setup();
    fireEvent.change(box, { target: { value: "@mai" } });
    expect(screen.queryByRole("listbox")).toBeNull();
    fireEvent.keyDown(box, { key: "Enter" });
    expect(onSend).toHaveBeenCalledWith("@mai", []);
  });

  describe("images", () => {
    const PNG = Uint8Array.from(
      atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
      (c) => c.charCodeAt(0),
    );
    const png = (name: string) => new File([PNG], name, { type: "image/png" });
    const B64 = btoa(String.fromCharCode(...PNG));

    it("attaches a pasted image as a removable thumbnail and sends it with the text", async () => {
      const { onSend, box } = setup({ takesImages: true });
      fireEvent.change(box, { target: { value: "what is wrong here?" } });
      fireEvent.paste(box, { clipboardData: { files: [png("shot.png")], types: ["Files"] } });
      const shot = await screen.findByRole("img", { name: "shot.png" });
      expect(shot.getAttribute("src")).toBe(`data:image/png;base64,${B64}`);
      fireEvent.paste(box, { clipboardData: { files: [png("second.png")], types: ["Files"] } });
      await screen.findByRole("img", { name: "second.png" });
      fireEvent.click(screen.getByRole("button", { name: "Remove second.png" }));
      expect(screen.queryByRole("img", { name: "second.png" })).toBeNull();
      expect(box.value).toBe("what is wrong here?");
      fireEvent.keyDown(box, { key: "Enter" });
      expect(onSend).toHaveBeenCalledWith("what is wrong here?", [
        { name: "shot.png", mimeType: "image/png", data: B64, bytes: PNG.length },
      ]);
      expect(screen.queryByRole("list", { name: "Attached images" })).toBeNull();
    });

    it("sends an image without text, and lets a text paste through", async () => {
      const { onSend, box } = setup({ takesImages: true });
      const notPrevented = fireEvent.paste(box, { clipboardData: { files: [], types: ["text/plain"] } });
      expect(notPrevented).toBe(true);
      const button = screen.getByRole("button", { name: "Send" }) as HTMLButtonElement;
      expect(button.disabled).toBe(true);
      fireEvent.drop(box.parentElement as HTMLElement, { dataTransfer: { files: [png("drop.png")], types: ["Files"] } });
      await screen.findByRole("img", { name: "drop.png" });
      expect(button.disabled).toBe(false);
      fireEvent.click(button);
      expect(onSend).toHaveBeenCalledWith("", [{ name: "drop.png", mimeType: "image/png", data: B64, bytes: PNG.length }]);
    });

    it("attaches what the attach button's chooser gives, and refuses a file that is not an image, saying why", async () => {
      const { onSend, box } = setup({ takesImages: true });
      const input = screen.getByTestId("attach-input") as HTMLInputElement;
      expect(input.accept).toBe("image/png,image/jpeg,image/gif,image/webp");
      fireEvent.change(input, { target: { files: [png("chosen.png"), new File(["a,b\n"], "data.csv", { type: "text/csv" })] } });
      await screen.findByRole("img", { name: "chosen.png" });
      expect(screen.getByRole("alert").textContent).toBe(
        "data.csv is not a PNG, JPEG, GIF or WebP image, so it was not attached.",
      );
      fireEvent.change(box, { target: { value: "see" } });
      fireEvent.keyDown(box, { key: "Enter" });
      expect(onSend).toHaveBeenCalledWith("see", [expect.objectContaining({ name: "chosen.png" })]);
      expect(screen.queryByRole("alert")).toBeNull();
    });

    it("refuses an image over the size limit", async () => {
      const { box } = setup({ takesImages: true });
      const huge = new File([new Uint8Array(6 * 1024 * 1024)], "huge.png", { type: "image/png" });
      fireEvent.paste(box, { clipboardData: { files: [huge], types: ["Files"] } });
      expect((await screen.findByRole("alert")).textContent).toBe(
        "huge.png is 6.0 MB; images of up to 5.0 MB can be attached (make it smaller or crop it).",
      );
      expect(screen.queryByRole("img")).toBeNull();
    });

    it("offers no attach button and refuses images when Riot does not take them", async () => {
      const { box } = setup({ takesImages: false });
      expect(screen.queryByRole("button", { name: "Attach image" })).toBeNull();
      fireEvent.paste(box, { clipboardData: { files: [png("shot.png")], types: ["Files"] } });
      expect((await screen.findByRole("alert")).textContent).toBe(
        "This Riot does not take images in prompts; update riot to attach them.",
      );
      expect(screen.queryByRole("img")).toBeNull();
    });
  });
});
