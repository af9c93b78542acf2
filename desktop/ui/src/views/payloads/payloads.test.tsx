import { render, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import styles from "../../styles.css?raw";
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
      { type: "notebook_read", path: "n.ipynb", cells: [{ id: "c1", cell_type: "code", lines: 2, outputs: 1 }] },
      { type: "pdf_read", path: "a.pdf", first_page: 2, last_page: 4, total_pages: 9 },
      { type: "document_read", path: "a.xlsx", summary: "Sales: A1:C3" },
      { type: "file_diff", path: "a.rs", created: true, hunks: [] },
      { type: "notebook_cell_diff", path: "n.ipynb", cell_id: "c1", hunks: [] },
      { type: "command", command: "ls", exit_code: 0, stdout: "", stderr: "", truncated: false, timed_out: false },
      { type: "file_list", pattern: "*.rs", paths: [], total: 0, truncated: false },
      { type: "search_results", pattern: "x", matches: [], total: 0, truncated: false },
      { type: "todos", todos: [] },
      { type: "text", text: "hi" },
      { type: "web_page", url: "https://docs.rs/", status: 200, bytes: 10, truncated: false, cached: false },
      { type: "web_results", query: "serde", results: [{ title: "Serde", url: "https://serde.rs/", snippet: "" }] },
      { type: "diagnostics", checkers: ["tsc --noEmit --pretty false"], diagnostics: [], total: 0, truncated: false },
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

  it("shows an image read as its type and size, with a thumbnail when Riot sends the image along", () => {
    const payload = { type: "image_read", path: "shot.png", media_type: "image/png", bytes: 1234 };
    const { container, unmount } = render(<PayloadView raw={payload} />);
    expect(container.querySelector(".badge")?.textContent).toBe("image/png, 1,234 bytes");
    expect(container.querySelector("img")).toBeNull();
    unmount();
    render(<PayloadView raw={payload} images={[{ name: "Read shot.png", mimeType: "image/png", data: "iVBO" }]} />);
    expect(screen.getByRole("img", { name: "shot.png" }).getAttribute("src")).toBe("data:image/png;base64,iVBO");
  });

  it("shows a PDF read as its path and page range", () => {
    show({ type: "pdf_read", path: "spec.pdf", first_page: 3, last_page: 7, total_pages: 40 });
    expect(screen.getByText("spec.pdf")).toBeTruthy();
    expect(screen.getByTestId("read-range").textContent).toBe("pages 3–7 of 40");
  });

  it("shows a notebook read as its cells", () => {
    const container = show({
      type: "notebook_read",
      path: "n.ipynb",
      cells: [
        { id: "intro", cell_type: "markdown", lines: 2, outputs: 0 },
        { id: "c1", cell_type: "code", lines: 1, outputs: 2 },
      ],
    });
    expect(screen.getByTestId("read-range").textContent).toBe("2 cells");
    const items = [...container.querySelectorAll(".payload-cells li")].map((li) => li.textContent);
    expect(items).toEqual(["intro markdown, 2 lines", "c1 code, 1 line, 2 outputs"]);
  });

  it("shows a one-page PDF read as that page", () => {
    show({ type: "pdf_read", path: "spec.pdf", first_page: 2, last_page: 2, total_pages: 40 });
    expect(screen.getByTestId("read-range").textContent).toBe("page 2 of 40");
  });

  it("shows an office document read as its path and what was read", () => {
    show({ type: "document_read", path: "deck.pptx", summary: "slides 1-2 of 3" });
    expect(screen.getByTestId("read-range").textContent).toBe("slides 1-2 of 3");
    expect(screen.getByText("deck.pptx")).toBeTruthy();
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

  it("shows a notebook cell before and after, numbered within the cell", () => {
    const container = show({
      type: "notebook_cell_diff",
      path: "analysis.ipynb",
      cell_id: "c1",
      hunks: [
        {
          old_start: 1,
          old_lines: 2,
          new_start: 1,
          new_lines: 2,
          lines: [
            { kind: "context", text: "import os" },
            { kind: "removed", text: "print(1)" },
            { kind: "added", text: "print(2)" },
          ],
        },
      ],
    });
    expect(screen.getByText("analysis.ipynb")).toBeTruthy();
    expect(screen.getByText("cell c1")).toBeTruthy();
    const rows = [...container.querySelectorAll("tr.diff-line")].map((row) =>
      [...row.querySelectorAll("td")].map((td) => td.textContent),
    );
    expect(rows).toEqual([
      ["1", "1", " import os"],
      ["2", "", "-print(1)"],
      ["", "2", "+print(2)"],
    ]);
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
        { path: "src/bin/x.rs", line: 1, text: "fn main() {}" },
      ],
      total: 2,
      truncated: false,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("2 matches");
    const matches = [...container.querySelectorAll(".match")].map((m) => m.textContent);
    expect(matches).toEqual(["src/main.rs:3fn main() {", "src/bin/x.rs:1fn main() {}"]);
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

  it("shows a fetched page's URL, status, size and title, and a redirect not followed", () => {
    show({
      type: "web_page",
      url: "https://docs.rs/serde",
      status: 200,
      bytes: 5120,
      content_type: "text/html",
      title: "serde - Rust",
      truncated: false,
      cached: true,
    });
    expect(screen.getByText("https://docs.rs/serde")).toBeTruthy();
    expect(screen.getByTestId("web-status").textContent).toBe("HTTP 200, 5,120 bytes");
    expect(screen.getByText("serde - Rust")).toBeTruthy();
    expect(screen.getByText("cached")).toBeTruthy();
    const moved = show({
      type: "web_page",
      url: "http://a.test/old",
      status: 301,
      bytes: 0,
      redirect: "https://b.test/new",
      truncated: false,
      cached: false,
    });
    expect(moved.querySelector("[data-testid=web-redirect]")?.textContent).toBe(
      "redirects to https://b.test/new (another host, not followed)",
    );
  });

  it("shows search results with titles, URLs and snippets", () => {
    const container = show({
      type: "web_results",
      query: "serde flatten",
      results: [
        { title: "Struct flattening", url: "https://serde.rs/attr-flatten.html", snippet: "Flatten a field" },
        { title: "<i>Docs</i>", url: "https://docs.rs/serde", snippet: "" },
      ],
    });
    expect(screen.getByTestId("web-count").textContent).toBe("2 results");
    const items = [...container.querySelectorAll("ol.web-results li")].map((li) => li.textContent);
    expect(items).toEqual(["Struct flatteninghttps://serde.rs/attr-flatten.htmlFlatten a field", "<i>Docs</i>https://docs.rs/serde"]);
    expect(container.querySelector("i")).toBeNull();
  });

  it("shows text payloads as text, never as markup", () => {
    const container = show({ type: "text", text: "<b>bold?</b>" });
    expect(container.querySelector("b")).toBeNull();
    expect(container.textContent).toBe("<b>bold?</b>");
  });
});

/** Grep's `--` between runs of lines that are not adjacent, as Riot sends it in `content` mode. */
const GAP = { path: "src/lib.rs" };

describe("the Grep card's count", () => {
  it("leaves the `--` separators out of the count and shows them as gaps", () => {
    // Grep -n "fn " over a file with matches on lines 2, 3, 10 and 20, and one in main.rs.
    const container = show({
      type: "search_results",
      pattern: "fn ",
      matches: [
        { path: "src/lib.rs", line: 2, text: "fn a() {}" },
        { path: "src/lib.rs", line: 3, text: "fn b() {}" },
        GAP,
        { path: "src/lib.rs", line: 10, text: "fn c() {}" },
        GAP,
        { path: "src/lib.rs", line: 20, text: "fn d() {}" },
        { path: "src/main.rs", line: 1, text: "fn main() {" },
      ],
      total: 7,
      truncated: false,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("5 matches");
    expect(container.querySelectorAll(".match")).toHaveLength(5);
    expect(container.querySelectorAll(".match-gap")).toHaveLength(2);
    // A gap is not a line: it says nothing, to people or to screen readers.
    expect([...container.querySelectorAll(".match-gap")].every((g) => g.textContent === "")).toBe(true);
  });

  it("says one match, not one matches", () => {
    show({
      type: "search_results",
      pattern: "main",
      matches: [{ path: "src/main.rs", line: 1, text: "fn main() {" }],
      total: 1,
      truncated: false,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("1 match");
  });

  it("gives a capped content search's total as an upper bound: entries not shown may be separators", () => {
    show({
      type: "search_results",
      pattern: "fn ",
      matches: [{ path: "a.rs", line: 1, text: "fn a() {}" }, GAP, { path: "a.rs", line: 9, text: "fn b() {}" }],
      total: 10,
      truncated: true,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("2 of up to 9 matches");
  });

  it("keeps path-only entries of a files_with_matches search: they are files, not separators", () => {
    const container = show({
      type: "search_results",
      pattern: "fn",
      matches: [{ path: "src/lib.rs" }, { path: "src/main.rs" }],
      total: 3,
      truncated: true,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("2 of 3 files");
    expect(container.querySelectorAll(".match-gap")).toHaveLength(0);
    expect([...container.querySelectorAll(".match")].map((m) => m.textContent)).toEqual(["src/lib.rs", "src/main.rs"]);
  });

  it("adds up a count search's per-file counts", () => {
    show({
      type: "search_results",
      pattern: "pub",
      matches: [
        { path: "src/lib.rs", count: 5 },
        { path: "src/main.rs", count: 1 },
      ],
      total: 2,
      truncated: false,
    });
    expect(screen.getByTestId("match-count").textContent).toBe("6 matches in 2 files");
  });

  it("says when nothing matched", () => {
    show({ type: "search_results", pattern: "zzz", matches: [], total: 0, truncated: false });
    expect(screen.getByTestId("match-count").textContent).toBe("no matches");
  });
});

describe("a command's stderr, styled by the real stylesheet", () => {
  // jsdom applies the stylesheet's rules; it leaves `var(...)` unresolved, which names the colour used.
  let sheet: HTMLStyleElement;
  beforeEach(() => {
    sheet = document.createElement("style");
    sheet.textContent = styles;
    document.head.append(sheet);
  });
  afterEach(() => sheet.remove());

  const command = (exit_code: number | undefined, stderr: string, extra: Record<string, unknown> = {}) =>
    show({ type: "command", command: "make", exit_code, stdout: "", stderr, truncated: false, timed_out: false, ...extra });
  const colour = (el: Element | null) => (el === null ? "missing" : getComputedStyle(el).color);
  const BAD = "var(--bad)";

  it("is ordinary output when the command succeeded: not in the error colour", () => {
    const container = command(0, "OK\n");
    const stderr = container.querySelector(".stderr");
    expect(stderr?.textContent).toBe("OK\n");
    expect(colour(stderr)).not.toBe(BAD);
    expect(colour(stderr)).toBe(colour(document.body));
    expect(stderr?.getAttribute("aria-label")).toBe("stderr");
  });

  it("is in the error colour when the command failed, like its exit code", () => {
    const container = command(2, "ls: cannot access 'x': No such file or directory\n");
    const stderr = container.querySelector(".stderr");
    expect(colour(stderr)).toBe(BAD);
    expect(colour(screen.getByTestId("exit-code"))).toBe(BAD);
    expect(stderr?.getAttribute("aria-label")).toBe("stderr of the failed command");
  });

  it("counts a timeout as a failure and a command sent to the background as none", () => {
    expect(colour(command(undefined, "slow\n", { timed_out: true }).querySelector(".stderr"))).toBe(BAD);
    const background = command(undefined, "started\n", { background_id: "bash_1" }).querySelector(".stderr");
    expect(colour(background)).not.toBe(BAD);
  });
});
