import { memo } from "react";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shellSession from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
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

// Fenced code is highlighted by the language named after its fence, from
// this short list only (each grammar brings its usual aliases: rs, ts, tsx,
// js, jsx, py, sh, toml, yml, html, patch, …). Any other or no language stays
// plain text: guessing is slow and, on a half-streamed block, often wrong.
const highlighter = rehypeHighlight({
  languages: {
    bash,
    c,
    // highlight.js's "shell" grammar is for sessions with `$ ` prompts; fences
    // named shell in replies mostly hold bare commands, so shell means bash
    // below and the session grammar answers to console/shellsession.
    console: shellSession,
    cpp,
    css,
    diff,
    go,
    ini,
    java,
    javascript,
    json,
    markdown,
    python,
    rust,
    sql,
    typescript,
    xml,
    yaml,
  },
  aliases: { bash: ["shell"] },
  detect: false,
});

/**
 * The highlighter as a rehype plugin. react-markdown builds a new processor
 * on every render, and rehype-highlight would set up a new highlight.js for
 * each one, registering and compiling its grammars again; handing out the one
 * transformer built above spares that on every streamed delta. A grammar that
 * fails on some input leaves the code from there on plain instead of taking
 * the conversation down.
 */
function highlightCode() {
  return (...args: Parameters<typeof highlighter>) => {
    try {
      highlighter(...args);
    } catch {
      // Keep whatever was not highlighted as plain text.
    }
  };
}

const plugins = [remarkGfm];
const rehypePlugins = [highlightCode];

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
    <ReactMarkdown remarkPlugins={plugins} rehypePlugins={rehypePlugins} components={components}>
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
