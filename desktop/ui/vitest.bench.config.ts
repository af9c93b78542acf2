import { defineConfig } from "vitest/config";

// The streaming benchmark (e2e/stream.bench.ts, `npm run bench`): real
// processes and Chromium like the end-to-end tests, one at a time. Not
// part of `npm test` or CI.
export default defineConfig({
  test: {
    environment: "node",
    include: ["e2e/**/*.bench.ts"],
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 60_000,
  },
});
