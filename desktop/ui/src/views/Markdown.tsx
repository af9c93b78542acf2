import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";

// Model output is untrusted: react-markdown builds React elements (no
// innerHTML), leaves raw HTML in the text as text, and drops `javascript:`
// and other unsafe link targets. Links open outside the app's page.
const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  ),
  // Images from model output would make the page fetch arbitrary URLs.
  img: ({ alt }) => <span className="md-image">[image: {alt ?? ""}]</span>,
};

const plugins = [remarkGfm];

/**
 * Splits Markdown at the blank lines between top-level blocks, never inside
 * a fenced code block. While a reply streams only its last block changes,
 * so only that block is parsed again (the benchmark in e2e/stream.bench.ts
 * showed whole-message re-parsing as the main rendering cost).
 */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: { char: string; length: number } | null = null;
  for (const line of text.split("\n")) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      const char = marker.charAt(0);
      if (fence === null) {
        fence = { char, length: marker.length };
      } else if (char === fence.char && marker.length >= fence.length && line.trim() === marker) {
        fence = null;
      }
    }
    if (fence === null && line.trim() === "") {
      if (current.length > 0) {
        blocks.push(current.join("\n"));
        current = [];
      }
      continue;
    }
    current.push(line);
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}

/** One block, re-parsed only when its own text changes. */
const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={plugins} components={components}>
      {text}
    </ReactMarkdown>
  );
});

/** Markdown text, rendered safely, block by block. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      {splitBlocks(text).map((block, index) => (
        // Blocks only grow at the end while streaming: the index is stable.
        <MarkdownBlock key={index} text={block} />
      ))}
    </div>
  );
});
