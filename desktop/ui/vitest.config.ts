import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Component and bridge tests (jsdom). The browser end-to-end tests have
// their own config (vitest.e2e.config.ts).
export default defineConfig({
  plugins: [react()],
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test-setup.ts"],
    // The stylesheet's text, for the tests that check what it makes of an element (`styles.css?raw`).
    css: { include: [/styles\.css/] },
    pool: "threads",
    maxWorkers: 2,
  },
});
