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
