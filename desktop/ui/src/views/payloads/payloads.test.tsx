import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { asUiPayload, type UiPayload } from "./payload";
import { PayloadView } from "./PayloadView";

function show(payload: UiPayload | unknown) {
  return render(<PayloadView raw={payload} />).container;
}

describe("asUiPayload", () => {
  it("accepts every payload kind of schemas/ui_payload.json", () => {
    const samples: UiPayload[] = [
      { type: "file_read", path: "a.rs", start_line: 1, lines: 2, total_lines: 2, truncated: false },
      { type: "image_read", path: "a.png", media_type: "image/png", bytes: 10 },
      { type: "file_diff", path: "a.rs", created: true, hunks: [] },
      { type: "command", command: "ls", exit_code: 0, stdout: "", stderr: "", truncated: false, timed_out: false },
      { type: "file_list", pattern: "*.rs", paths: [], total: 0, truncated: false },
      { type: "search_results", pattern: "x", matches: [], total: 0, truncated: false },
      { type: "todos", todos: [] },
      { type: "text", text: "hi" },
    ];
    for (const sample of samples) expect(asUiPayload(sample)).toBe(sample);
  });

  it.each([
    ["an unknown kind", { type: "hologram" }],
    ["a missing field", { type: "file_read", path: "a.rs", start_line: 1, lines: 2, truncated: false }],
    ["a wrong field type", { type: "command", command: "ls", exit_code: "0", stdout: "", stderr: "", truncated: false, timed_out: false }],
    ["hunks that are not hunks", { type: "file_diff", path: "a", created: false, hunks: [{ lines: "x" }] }],
    ["no object at all", "file_read"],
    ["an inherited kind name", { type: "toString" }],
  ])("rejects %s", (_, raw) => {
    expect(asUiPayload(raw)).toBeNull();
    expect(show(raw).innerHTML).toBe("");
  });
});

describe("PayloadView", () => {
  it("shows a file read as its path and line range", () => {
    show({ type: "file_read", path: "src/main.rs", start_line: 11, lines: 10, total_lines: 200, truncated: true });
    expect(screen.getByText("src/main.rs")).toBeTruthy();
    expect(screen.getByTestId("read-range").textContent).toBe("lines 11–20 of 200");
    expect(screen.getByText("truncated")).toBeTruthy();
  });

  it("shows a whole-file read as all its lines", () => {
    show({ type: "file_read", path: "notes.txt", start_line: 1, lines: 3, total_lines: 3, truncated: false });
    expect(screen.getByTestId("read-range").textContent).toBe("all 3 lines");
  });

  it("shows a diff's hunks with old and new line numbers and +/- marks", () => {
    const container = show({
      type: "file_diff",
      path: "src/lib.rs",
      created: false,
      hunks: [
        {
          old_start: 4,
          old_lines: 3,
          new_start: 4,
          new_lines: 3,
          lines: [
            { kind: "context", text: "fn a() {" },
            { kind: "removed", text: "    old();" },
            { kind: "added", text: "    new();" },
            { kind: "context", text: "}" },
          ],
        },
      ],
    });
    expect(container.querySelector(".diff-hunk-header")?.textContent).toBe("@@ -4,3 +4,3 @@");
    const rows = [...container.querySelectorAll("tr.diff-line")].map((row) =>
      [...row.querySelectorAll("td")].map((td) => td.textContent),
    );
    expect(rows).toEqual([
      ["4", "4", " fn a() {"],
      ["5", "", "-    old();"],
      ["", "5", "+    new();"],
      ["6", "6", " }"],
    ]);
    expect(container.querySelector(".diff-stat")?.textContent).toBe("+1 −1");
    expect(screen.queryByText("new file")).toBeNull();
  });

  it("marks a created file", () => {
    show({
      type: "file_diff",
      path: "out.txt",
      created: true,
      hunks: [{ old_start: 0, old_lines: 0, new_start: 1, new_lines: 1, lines: [{ kind: "added", text: "hello" }] }],
    });
    expect(screen.getByText("new file")).toBeTruthy();
  });

  it("shows a command with its exit code, stdout and stderr", () => {
    const container = show({
      type: "command",
      command: "cargo test --quiet",
      exit_code: 101,
      stdout: "running 3 tests\n",
      stderr: "test failed\n",
      truncated: true,
      timed_out: false,
    });
    expect(screen.getByText("$ cargo test --quiet")).toBeTruthy();
    const exit = screen.getByTestId("exit-code");
    expect(exit.textContent).toBe("exit 101");
    expect(exit.className).toContain("exit-failed");
    expect(container.querySelector(".stdout")?.textContent).toBe("running 3 tests\n");
    expect(container.querySelector(".stderr")?.textContent).toBe("test failed\n");
    expect(screen.getByText(/Output truncated/)).toBeTruthy();
  });

  it("tells a timed-out command and a background one apart from an exit code", () => {
    show({ type: "command", command: "sleep 99", stdout: "", stderr: "", truncated: false, timed_out: true });
    expect(screen.getByTestId("exit-code").textContent).toBe("timed out");
    expect(screen.getByText("No output.")).toBeTruthy();
  });

  it("shows search matches with path and line", () => {
    const container = show({
      type: "search_results",
      pattern: "fn main",
      matches: [
        { path: "src/main.rs", line: 3, text: "fn main() {" },
        { path: "src/bin/x.rs", count: 2 },
      ],
      total: 5,
      truncated: true,
    });
    expect(screen.getByText("2 of 5 matches")).toBeTruthy();
    const matches = [...container.querySelectorAll(".match")].map((m) => m.textContent);
    expect(matches).toEqual(["src/main.rs:3fn main() {", "src/bin/x.rs2"]);
  });

  it("shows a file list", () => {
    show({ type: "file_list", pattern: "**/*.rs", paths: ["a.rs", "b.rs"], total: 2, truncated: false });
    expect(screen.getByText("2 matches")).toBeTruthy();
    expect(screen.getByText("b.rs")).toBeTruthy();
  });

  it("shows todos with their status, the active one in its active form", () => {
    const container = show({
      type: "todos",
      todos: [
        { content: "Read the code", status: "completed" },
        { content: "Fix the bug", status: "in_progress", activeForm: "Fixing the bug" },
        { content: "Run the tests", status: "pending" },
      ],
    });
    const items = [...container.querySelectorAll("li.todo")];
    expect(items.map((li) => li.getAttribute("data-status"))).toEqual(["completed", "in_progress", "pending"]);
    expect(within(items[1] as HTMLElement).getByText("Fixing the bug")).toBeTruthy();
  });

  it("shows text payloads as text, never as markup", () => {
    const container = show({ type: "text", text: "<b>bold?</b>" });
    expect(container.querySelector("b")).toBeNull();
    expect(container.textContent).toBe("<b>bold?</b>");
  });
});
