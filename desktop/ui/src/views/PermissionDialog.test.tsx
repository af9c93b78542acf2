import { act, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import type { RequestPermissionRequest } from "../bridge";
import { KEYS_ARM_MS, PermissionDialog } from "./PermissionDialog";
import { joinPath } from "./tool-target";

const OPTIONS: RequestPermissionRequest["options"] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow Write(/p/out.txt)", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

function ask(toolCall: RequestPermissionRequest["toolCall"], onAnswer = vi.fn(), options = OPTIONS) {
  render(
    <PermissionDialog
      request={{ sessionId: "s1", toolCall, options }}
      cwd="/home/me/project"
      otherSession={null}
      onAnswer={onAnswer}
    />,
  );
  return onAnswer;
}

/** Riot's `_meta.riot.detail` for a question about `tool` on `path`. */
function detail(tool: string, path: string) {
  return {
    tool_use_id: "call_1",
    tool_name: tool,
    describe: `${tool} ${path}`,
    input: {},
    path,
    reason: { kind: "mode", detail: "default mode asks before changing files", mode: "default" },
    message: `Riot wants to change ${path}`,
  };
}

type Kind = "context" | "added" | "removed";

/** A hunk starting at `oldStart` / `newStart` with these lines. */
function hunk(oldStart: number, newStart: number, lines: [Kind, string][]) {
  const count = (kind: Kind) => lines.filter(([k]) => k === "context" || k === kind).length;
  return {
    old_start: oldStart,
    old_lines: count("removed"),
    new_start: newStart,
    new_lines: count("added"),
    lines: lines.map(([kind, text]) => ({ kind, text })),
  };
}

/** Each diff row of `root` as its old number, new number and marked text. */
function rows(root: HTMLElement): string[][] {
  return [...root.querySelectorAll("tr.diff-line")].map((row) =>
    [...row.querySelectorAll("td")].map((cell) => cell.textContent ?? ""),
  );
}

describe("PermissionDialog", () => {
  it("shows a file tool's path resolved against the project, as Riot sends the call today", () => {
    ask({
      toolCallId: "call_1",
      title: "Write ../project/out.txt",
      kind: "edit",
      status: "pending",
      rawInput: { file_path: "../project/./out.txt", content: "a\nb\n" },
    });
    expect(screen.getByRole("dialog").getAttribute("aria-labelledby")).toBe("permission-heading");
    expect(screen.getByRole("heading").textContent).toBe("Riot wants to change a file");
    expect(screen.getByTestId("permission-title").textContent).toBe("Write ../project/out.txt");
    expect(screen.getByTestId("permission-path").textContent).toBe("/home/me/project/out.txt");
    // No preview from Riot, none guessed from the input.
    expect(screen.queryByTestId("permission-preview")).toBeNull();
  });

  it("prefers the path Riot resolved (symlinks and all) when it sends it", () => {
    ask({
      toolCallId: "call_1",
      title: "Write link/out.txt",
      kind: "edit",
      rawInput: { file_path: "link/out.txt", content: "" },
      _meta: {
        riot: {
          detail: {
            tool_use_id: "call_1",
            tool_name: "Write",
            describe: "Write link/out.txt",
            input: {},
            path: "/srv/real/out.txt",
            reason: { kind: "mode", detail: "default mode asks before changing files", mode: "default" },
            message: "Riot wants to write /srv/real/out.txt",
          },
        },
      },
    });
    expect(screen.getByTestId("permission-tool").textContent).toBe("Write");
    expect(screen.getByTestId("permission-path").textContent).toBe("/srv/real/out.txt");
    expect(screen.getByTestId("permission-reason").textContent).toBe("Riot wants to write /srv/real/out.txt");
  });

  it("shows a new file's every line, numbered, and its line count, from Riot's preview", () => {
    ask({
      toolCallId: "call_3",
      title: "Write notes.txt",
      kind: "edit",
      rawInput: { file_path: "notes.txt", content: "first\nsecond\nthird\n" },
      _meta: {
        riot: {
          detail: {
            ...detail("Write", "/home/me/project/notes.txt"),
            preview: {
              type: "file_diff",
              path: "notes.txt",
              created: true,
              hunks: [hunk(0, 1, [["added", "first"], ["added", "second"], ["added", "third"]])],
            },
          },
        },
      },
    });
    const preview = screen.getByTestId("permission-preview");
    expect(preview.querySelector("summary")?.textContent).toBe("New file, 3 lines");
    expect(preview.querySelector(".badge")?.textContent).toBe("new file");
    expect(rows(preview)).toEqual([
      ["", "1", "+first"],
      ["", "2", "+second"],
      ["", "3", "+third"],
    ]);
  });

  it("shows every hunk of an edit that changes several places, with their line numbers", () => {
    ask({
      toolCallId: "call_4",
      title: "Edit m.txt (every occurrence)",
      kind: "edit",
      rawInput: { file_path: "m.txt", old_string: "old", new_string: "new", replace_all: true },
      _meta: {
        riot: {
          detail: {
            ...detail("Edit", "/home/me/project/m.txt"),
            preview: {
              type: "file_diff",
              path: "m.txt",
              created: false,
              hunks: [
                hunk(4, 4, [["context", "4"], ["removed", "old"], ["added", "new"], ["context", "6"]]),
                hunk(24, 24, [["context", "24"], ["removed", "old"], ["added", "new"], ["context", "26"]]),
              ],
            },
          },
        },
      },
    });
    const preview = screen.getByTestId("permission-preview");
    expect(preview.querySelector("summary")?.textContent).toBe("Change in 2 places");
    expect(preview.querySelector(".diff-stat")?.textContent).toBe("+2 −2");
    expect([...preview.querySelectorAll(".diff-hunk-header")].map((h) => h.textContent)).toEqual([
      "@@ -4,3 +4,3 @@",
      "@@ -24,3 +24,3 @@",
    ]);
    expect(rows(preview)).toEqual([
      ["4", "4", " 4"],
      ["5", "", "-old"],
      ["", "5", "+new"],
      ["6", "6", " 6"],
      ["24", "24", " 24"],
      ["25", "", "-old"],
      ["", "25", "+new"],
      ["26", "26", " 26"],
    ]);
  });

  it("shows the full command of a shell tool, every line of it", () => {
    ask({
      toolCallId: "call_2",
      title: "Deploy (git push)",
      kind: "execute",
      rawInput: { command: "git push origin main\nrm -rf build", description: "Deploy" },
    });
    expect(screen.getByRole("heading").textContent).toBe("Riot wants to run a command");
    expect(screen.getByTestId("permission-command").textContent).toBe("git push origin main\nrm -rf build");
    expect(screen.queryByTestId("permission-path")).toBeNull();
  });

  it("offers Riot's options in Riot's order and answers with the chosen id", () => {
    const onAnswer = ask({ toolCallId: "call_1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } });
    const buttons = screen.getAllByRole("button");
    // Each named as Riot names it; the key that chooses it is shown beside the name.
    expect(buttons.map((b) => b.querySelector(".option-name")?.textContent)).toEqual([
      "Allow",
      "Always allow Write(/p/out.txt)",
      "Reject",
    ]);
    expect(buttons.map((b) => b.querySelector("kbd")?.textContent)).toEqual(["y", "a", "n"]);
    expect(screen.getByRole("button", { name: "Allow" }).getAttribute("aria-keyshortcuts")).toBe("y Enter");
    expect(onAnswer).not.toHaveBeenCalled();
    fireEvent.click(screen.getByText("Reject"));
    expect(onAnswer).toHaveBeenCalledWith("reject_once");
  });

  it("does not put focus on an answer: the dialog itself has it", () => {
    ask({ toolCallId: "call_1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } });
    expect(document.activeElement).toBe(screen.getByRole("dialog"));
  });
});

describe("PermissionDialog keys", () => {
  const WRITE = { toolCallId: "call_1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } } as const;

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Shows the question and waits until its keys answer. */
  function armed(onAnswer = vi.fn(), options = OPTIONS) {
    ask(WRITE, onAnswer, options);
    act(() => vi.advanceTimersByTime(KEYS_ARM_MS));
    expect(screen.getByRole("dialog").getAttribute("data-keys")).toBe("ready");
    return onAnswer;
  }

  const press = (key: string, init: KeyboardEventInit = {}, target: Element = screen.getByRole("dialog")) =>
    fireEvent.keyDown(target, { key, ...init });

  it.each([
    ["y", "allow_once"],
    ["Y", "allow_once"],
    ["Enter", "allow_once"],
    ["a", "allow_always"],
    ["n", "reject_once"],
    ["Escape", "reject_once"],
  ])("%s answers %s", (key, optionId) => {
    const onAnswer = armed();
    press(key);
    expect(onAnswer).toHaveBeenCalledTimes(1);
    expect(onAnswer).toHaveBeenCalledWith(optionId);
  });

  it("answers from the page too, when the focus left the dialog", () => {
    const onAnswer = armed();
    press("n", {}, document.body);
    expect(onAnswer).toHaveBeenCalledWith("reject_once");
  });

  it("ignores keys until the keyboard was still for a moment: a stray Enter or words being typed choose nothing", () => {
    const onAnswer = vi.fn();
    ask(WRITE, onAnswer);
    const dialog = screen.getByRole("dialog");
    expect(dialog.getAttribute("data-keys")).toBe("waiting");
    press("Enter");
    // Someone typing on, a key every 100 ms for two seconds, "yes" and "no" among the words.
    for (const key of "yes and no, then more words".split("")) {
      act(() => vi.advanceTimersByTime(100));
      press(key);
    }
    expect(dialog.getAttribute("data-keys")).toBe("waiting");
    act(() => vi.advanceTimersByTime(KEYS_ARM_MS - 1));
    expect(dialog.getAttribute("data-keys")).toBe("waiting");
    expect(onAnswer).not.toHaveBeenCalled();
    act(() => vi.advanceTimersByTime(1));
    expect(dialog.getAttribute("data-keys")).toBe("ready");
    // A key held down since then repeats; a repeat is not a new press.
    press("y", { repeat: true });
    expect(onAnswer).not.toHaveBeenCalled();
    press("y");
    expect(onAnswer).toHaveBeenCalledWith("allow_once");
  });

  it("leaves keys typed in a text field, keys with Ctrl, Alt or Meta, and other keys alone", () => {
    const onAnswer = armed();
    const field = document.createElement("textarea");
    document.body.append(field);
    try {
      press("y", {}, field);
      press("Escape", {}, field);
    } finally {
      field.remove();
    }
    press("a", { ctrlKey: true });
    press("n", { metaKey: true });
    press("y", { altKey: true });
    press("x");
    press("Tab");
    expect(onAnswer).not.toHaveBeenCalled();
  });

  it("lets Enter on a focused button press that button, not Allow", () => {
    const onAnswer = armed();
    const reject = screen.getByRole("button", { name: "Reject" });
    reject.focus();
    expect(press("Enter", {}, reject)).toBe(true); // not taken: the browser clicks the button
    expect(onAnswer).not.toHaveBeenCalled();
  });

  it("offers `a` only with an always option, and says so in the buttons", () => {
    const onAnswer = armed(vi.fn(), [
      { optionId: "allow_once", name: "Allow", kind: "allow_once" },
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    ]);
    expect(screen.getAllByRole("button").map((b) => b.querySelector("kbd")?.textContent)).toEqual(["y", "n"]);
    press("a");
    expect(onAnswer).not.toHaveBeenCalled();
    press("Escape");
    expect(onAnswer).toHaveBeenCalledWith("reject_once");
  });

  it("keeps Tab inside the dialog", () => {
    armed();
    const buttons = screen.getAllByRole("button");
    const last = buttons[buttons.length - 1] as HTMLElement;
    last.focus();
    press("Tab", {}, last);
    expect(document.activeElement).toBe(document.querySelector("summary") ?? buttons[0]);
    press("Tab", { shiftKey: true }, document.activeElement as Element);
    expect(document.activeElement).toBe(last);
  });
});

describe("joinPath", () => {
  it("resolves . and .. but keeps absolute paths absolute", () => {
    expect(joinPath("/a/b/", "c/../d/./e")).toBe("/a/b/d/e");
    expect(joinPath("/a/b", "/etc/passwd")).toBe("/etc/passwd");
    expect(joinPath("/a", "../../..")).toBe("/");
  });
});
