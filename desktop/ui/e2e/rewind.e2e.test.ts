// Rewind from the web UI against a real `riot serve` and the strict mock
// model (docs/rewind.md): a turn's Write is undone from the Rewind
// dialog, the file the person had stays as it was, and the conversation
// goes back to before the message. The session bar also says whether the
// session's commands are sandboxed, in Riot's words.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { endWorld, launchBrowser, missingPrerequisites, PATIENCE_MS, shows, toolCall, until, World } from "./harness";

const missing = missingPrerequisites();
if (missing.length > 0) {
  const why = `the UI end-to-end tests need ${missing.join(", ")}`;
  if (process.env.CI) throw new Error(`${why}; CI must run them`);
  console.warn(`SKIPPED: ${why}`);
}

describe.skipIf(missing.length > 0)("rewind from the web UI", () => {
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

  it("undoes a turn's Write and takes the conversation back to before its message", async () => {
    world = await World.start(
      browser,
      {
        wire: "anthropic",
        chunk_size: 16,
        replies: [
          toolCall("call_write_1", "Write", { file_path: "made.txt", content: "made by the model\n" }),
          { text: "Written." },
        ],
      },
      { "notes.txt": "the person's notes\n" },
    );
    const w = world;
    await w.open();
    await w.page.getByRole("button", { name: "New session" }).click();
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.fill("Make the file");
    await box.press("Enter");
    const question = w.page.getByTestId("permission-dialog");
    await question.waitFor({ timeout: PATIENCE_MS });
    await question.getByRole("button", { name: "Allow", exact: true }).click();
    await shows(w.page.getByTestId("agent-message"), "Written.");
    expect(readFileSync(join(w.project, "made.txt"), "utf8")).toBe("made by the model\n");

    // What the session bar says of the sandbox is Riot's own phrase.
    const sandbox = (await w.page.locator(".session-bar").getByTestId("sandbox").textContent()) ?? "";
    expect(["sandboxed (bubblewrap)", "sandboxed (Landlock)", "not sandboxed"]).toContain(sandbox);

    await w.page.getByRole("button", { name: "Rewind…" }).click();
    const dialog = w.page.getByTestId("rewind-dialog");
    await dialog.waitFor({ timeout: PATIENCE_MS });
    const point = dialog.getByTestId("rewind-point");
    await shows(point.first(), "Make the file");
    expect(await dialog.getByTestId("rewind-files").first().textContent()).toBe("made.txt");
    await point.first().getByRole("radio").click();
    await dialog.getByRole("button", { name: "Rewind", exact: true }).click();
    await shows(dialog.getByTestId("rewind-summary"), "Rewound to just before message 1.");

    await until("made.txt is gone", () => !existsSync(join(w.project, "made.txt")));
    expect(readFileSync(join(w.project, "notes.txt"), "utf8")).toBe("the person's notes\n");
    await dialog.getByRole("button", { name: "Close" }).click();
    // The session was reloaded from the rewind point: no message is left.
    await until("the conversation is empty", async () => (await w.page.getByTestId("agent-message").count()) === 0);
    expect((await w.requests()).map((r) => r.status)).toEqual([200, 200]);
    await w.screenshot("rewind");
  });
});
