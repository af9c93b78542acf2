// A session in a git worktree started from the web UI (docs/parallel.md),
// end to end: the built UI in Chromium, a real `riot serve` and the strict
// mock model. The Write the model asks for lands in the worktree under
// RIOT_HOME, never in the project's own checkout.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  endWorld,
  launchBrowser,
  missingPrerequisites,
  PATIENCE_MS,
  shows,
  toolCall,
  World,
  type MockScript,
} from "./harness";

const missing = missingPrerequisites();
if (missing.length > 0) {
  const why = `the UI end-to-end tests need ${missing.join(", ")}`;
  if (process.env.CI) throw new Error(`${why}; CI must run them`);
  console.warn(`SKIPPED: ${why}`);
}

const script = (replies: unknown[]): MockScript => ({ wire: "anthropic", chunk_size: 16, replies });

/** Runs git in `cwd` with a fixed identity; its stdout. */
function git(cwd: string, args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Riot Test", "-c", "user.email=test@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

describe.skipIf(missing.length > 0)("sessions in worktrees from the web UI", () => {
  let browser: Browser;
  let world: World | null = null;

  beforeAll(async () => {
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  afterEach(async (context) => {
    await endWorld(world, context.task);
    world = null;
  });

  async function startInWorktree(w: World, name: string): Promise<void> {
    await w.page.getByRole("button", { name: "New worktree session…" }).click();
    await w.page.getByLabel("Worktree name (empty: Riot picks one)").fill(name);
    await w.page.getByRole("button", { name: "Start in worktree" }).click();
  }

  it("starts a session in a new worktree whose Write lands there, not in the project", async () => {
    world = await World.start(
      browser,
      script([toolCall("call_write_1", "Write", { file_path: "made.txt", content: "from the worktree\n" }), { text: "Written." }]),
      { "README.md": "the project\n" },
    );
    const w = world;
    git(w.project, ["init", "--quiet", "--initial-branch=main"]);
    git(w.project, ["add", "README.md"]);
    git(w.project, ["commit", "--quiet", "-m", "first"]);
    await w.open();

    await startInWorktree(w, "w1");
    const bar = w.page.locator(".session-bar");
    await shows(bar.getByTestId("worktree"), "w1");
    expect(await bar.getByTestId("worktree").textContent()).toBe("⎇ w1riot/w1");
    // The session works in the worktree, under RIOT_HOME.
    const worktree = (await bar.locator(".session-cwd").textContent()) ?? "";
    expect(worktree.startsWith(join(w.home, "worktrees"))).toBe(true);
    expect(worktree.endsWith("/w1")).toBe(true);
    expect(git(w.project, ["worktree", "list", "--porcelain"])).toContain(`worktree ${worktree}\n`);

    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.fill("Make the file");
    await box.press("Enter");
    const dialog = w.page.getByTestId("permission-dialog");
    await dialog.waitFor({ timeout: PATIENCE_MS });
    expect(await dialog.getByTestId("permission-path").textContent()).toBe(join(worktree, "made.txt"));
    await dialog.getByRole("button", { name: "Allow", exact: true }).click();
    await shows(w.page.getByTestId("agent-message"), "Written.");

    expect(readFileSync(join(worktree, "made.txt"), "utf8")).toBe("from the worktree\n");
    expect(existsSync(join(w.project, "made.txt"))).toBe(false);
    // The project's checkout is untouched: nothing new or changed in it.
    expect(git(w.project, ["status", "--porcelain"])).toBe("");
    // The list shows the session with its worktree, under the project.
    const listed = w.page.locator(".sessions .project", { hasText: "Make the file" });
    expect(await listed.locator(".project-name").textContent()).toBe("project");
    await shows(listed.getByTestId("worktree"), "w1");
    await w.screenshot("worktree-session");
    expect((await w.requests()).map((r) => r.status)).toEqual([200, 200]);
  });

  it("shows Riot's refusal when the project is not a git repository", async () => {
    world = await World.start(browser, script([]), { "README.md": "not a repository\n" });
    const w = world;
    await w.open();
    await startInWorktree(w, "w1");
    const error = w.page.getByTestId("error");
    await error.waitFor({ timeout: PATIENCE_MS });
    expect(await error.locator("span").textContent()).toBe(
      `Could not start a session in a worktree: ${w.project} is not in a git repository; ` +
        "worktrees need one (run `git init` and commit first, or drop --worktree)",
    );
    expect(await w.page.getByRole("textbox", { name: "Message" }).count()).toBe(0);
    expect(existsSync(join(w.home, "worktrees"))).toBe(false);
  });
});
