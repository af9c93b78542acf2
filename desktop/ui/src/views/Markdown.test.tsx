import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { Markdown, splitBlocks } from "./Markdown";

describe("Markdown", () => {
  it("renders emphasis, code blocks and tables", () => {
    const { container } = render(
      <Markdown text={"Hello **world**\n\n```rust\nfn main() {}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"} />,
    );
    expect(container.querySelector("strong")?.textContent).toBe("world");
    expect(container.querySelector("pre code")?.textContent).toBe("fn main() {}\n");
    expect(container.querySelectorAll("td")).toHaveLength(2);
  });

  it("shows raw HTML from the model as text, never as elements", () => {
    const { container } = render(
      <Markdown text={'Look: <img src=x onerror="alert(1)"> <script>alert(2)</script><iframe src="https://x"></iframe>'} />,
    );
    expect(container.querySelector("img, script, iframe")).toBeNull();
    expect(container.textContent).toContain('<img src=x onerror="alert(1)">');
  });

  it("drops javascript: links and opens other links outside the app", () => {
    const { container } = render(<Markdown text={"[bad](javascript:alert(1)) [good](https://example.com)"} />);
    const links = [...container.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["", "https://example.com"]);
    expect(links[1]?.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("does not load images from model output", () => {
    const { container } = render(<Markdown text={"![tracker](https://evil.example/p.png)"} />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.textContent).toBe("[image: tracker]");
  });
});

describe("Markdown code highlighting", () => {
  /** The text of every token span of `kind` (e.g. "keyword") in the first code block. */
  function tokens(container: HTMLElement, kind: string): string[] {
    return [...container.querySelectorAll(`pre code .hljs-${kind}`)].map((span) => span.textContent);
  }

  it("marks Rust keywords and string literals", () => {
    const { container } = render(
      <Markdown text={'```rust\nfn main() {\n    let greeting = "hello";\n}\n```'} />,
    );
    expect(tokens(container, "keyword")).toEqual(expect.arrayContaining(["fn", "let"]));
    expect(tokens(container, "string")).toEqual(['"hello"']);
    // Highlighting only wraps the text: the code reads exactly as written.
    expect(container.querySelector("pre code")?.textContent).toBe('fn main() {\n    let greeting = "hello";\n}\n');
  });

  it("marks a diff's added and removed lines", () => {
    const { container } = render(
      <Markdown text={"```diff\n@@ -1,2 +1,2 @@\n same\n-old line\n+new line\n```"} />,
    );
    expect(tokens(container, "deletion")).toEqual(["-old line"]);
    expect(tokens(container, "addition")).toEqual(["+new line"]);
    expect(tokens(container, "meta")).toEqual(["@@ -1,2 +1,2 @@"]);
  });

  it("knows the usual short names of its languages", () => {
    const { container } = render(
      <Markdown text={'```ts\nconst a: number = 1;\n```\n\n```toml\nname = "riot"\n```\n\n```shell\necho "hi"\n```'} />,
    );
    const blocks = [...container.querySelectorAll("pre code")];
    expect(blocks).toHaveLength(3);
    for (const block of blocks) expect(block.querySelector("[class^='hljs-']")).not.toBeNull();
    expect(blocks[0]?.querySelector(".hljs-keyword")?.textContent).toBe("const");
    expect(blocks[1]?.querySelector(".hljs-string")?.textContent).toBe('"riot"');
    expect(blocks[2]?.querySelector(".hljs-built_in")?.textContent).toBe("echo");
  });

  it("leaves code in an unknown language, or none, as plain text", () => {
    const code = "++++++++[>++++[>++>+++<<-]>+<<-]>>.\nfn main() { \"not rust\" }\n";
    const { container } = render(<Markdown text={`\`\`\`brainfudge\n${code}\`\`\`\n\n\`\`\`\n${code}\`\`\``} />);
    const blocks = [...container.querySelectorAll("pre code")];
    expect(blocks).toHaveLength(2);
    for (const block of blocks) {
      expect(block.textContent).toBe(code);
      expect(block.querySelector("span")).toBeNull();
    }
  });

  it("renders a fence still streaming, then highlights it once closed", () => {
    const { container, rerender } = render(<Markdown text={'Here:\n\n```rust\nfn main() {\n    let s = "unfinished'} />);
    expect(container.querySelector("pre code")?.textContent).toBe('fn main() {\n    let s = "unfinished\n');
    rerender(<Markdown text={'Here:\n\n```rust\nfn main() {\n    let s = "done";\n}\n```\n\nAfter.'} />);
    expect(container.querySelector("pre code")?.textContent).toBe('fn main() {\n    let s = "done";\n}\n');
    expect(tokens(container, "keyword")).toEqual(expect.arrayContaining(["fn", "let"]));
    expect(tokens(container, "string")).toEqual(['"done"']);
    expect(container.querySelector("p:last-child")?.textContent).toBe("After.");
  });
});

describe("splitBlocks", () => {
  it("splits at blank lines but keeps a fenced block whole", () => {
    const text = "# Title\n\nFirst para\nstill first\n\n```sh\necho a\n\necho b\n```\n\n~~~\nx\n\n```\n~~~\n\nlast";
    expect(splitBlocks(text)).toEqual([
      "# Title",
      "First para\nstill first",
      "```sh\necho a\n\necho b\n```",
      "~~~\nx\n\n```\n~~~",
      "last",
    ]);
  });

  it("keeps an unclosed fence (a reply still streaming) in one block", () => {
    expect(splitBlocks("Intro\n\n```\ncode\n\nmore")).toEqual(["Intro", "```\ncode\n\nmore"]);
  });

  it("renders a fenced block with a blank line as one code block", () => {
    const { container } = render(<Markdown text={"Before\n\n```\na\n\nb\n```\n\nAfter"} />);
    expect(container.querySelectorAll("pre")).toHaveLength(1);
    expect(container.querySelector("pre code")?.textContent).toBe("a\n\nb\n");
    expect([...container.querySelectorAll("p")].map((p) => p.textContent)).toEqual(["Before", "After"]);
  });
});
