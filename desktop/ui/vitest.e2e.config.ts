import { defineConfig } from "vitest/config";

// Browser end-to-end tests: real processes, one at a time, in one forked
// worker (so the harness's exit handler can kill what it started).
export default defineConfig({
  test: {
    environment: "node",
    include: ["e2e/**/*.e2e.test.ts"],
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 60_000,
  },
});
