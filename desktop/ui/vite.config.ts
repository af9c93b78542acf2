import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

// The built page may load only its own files and talk only to the server
// that served it (`riot serve`): model output rendered on it can never
// pull in a script or send data elsewhere. Not in dev, where Vite injects
// inline scripts of its own.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

function contentSecurityPolicy(): Plugin {
  return {
    name: "riot-csp",
    apply: "build",
    transformIndexHtml: (html) =>
      html.replace(
        '<meta charset="utf-8" />',
        `<meta charset="utf-8" />\n    <meta http-equiv="Content-Security-Policy" content="${CSP}" />`,
      ),
  };
}

// `npm run dev` against a running `riot serve`: RIOT_SERVE=http://127.0.0.1:PORT.
// The proxy drops the browser's Origin (Vite's, which riot serve refuses);
// the token in the page URL still has to match.
const riot = process.env.RIOT_SERVE;

export default defineConfig({
  base: "./",
  plugins: [react(), contentSecurityPolicy()],
  // One bundle of about 0.7 MB (React, the ACP SDK with its schemas, the
  // Markdown parser, the code highlighter's grammars), read from loopback:
  // not worth splitting.
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1024 },
  server: riot
    ? {
        proxy: {
          "/acp": {
            target: riot.replace(/^http/, "ws"),
            ws: true,
            configure: (proxy) => {
              proxy.on("proxyReqWs", (request) => request.removeHeader("origin"));
            },
          },
        },
      }
    : {},
});
