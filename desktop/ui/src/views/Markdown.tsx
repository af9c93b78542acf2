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

/** Markdown text, rendered safely; re-parsed only when the text changes. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={plugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
