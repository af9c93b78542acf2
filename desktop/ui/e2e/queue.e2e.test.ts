// The message queue and background agents in the web UI, end to end: the
// built UI in Chromium, a real `riot serve` and the strict mock model. A
// message queued during a turn is kept by Riot, so it is still there after
// the page reloads, and goes to the model when the person resumes it.

import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  endWorld,
  launchBrowser,
  missingPrerequisites,
  processesWithArgv,
  shows,
  toolCall,
  until,
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

describe.skipIf(missing.length > 0)("Riot's queue in the web UI", () => {
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

  it("keeps a message queued during a turn through a page reload and sends it when resumed", async () => {
    const sleep = ["sleep", "53.7"];
    world = await World.start(
      browser,
      script([toolCall("call_bash_1", "Bash", { command: sleep.join(" ") }), { text: "Remembered." }]),
    );
    const w = world;
    await w.open();
    await w.page.getByRole("button", { name: "New session" }).click();
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.waitFor();
    await w.page.getByRole("combobox", { name: "Mode", exact: true }).selectOption("bypass");
    await box.fill("Run the slow command");
    await box.press("Enter");
    await shows(w.page.locator('[data-tool-call-id="call_bash_1"]').getByTestId("tool-status"), "running");
    await until("the sleep to start", () => processesWithArgv(sleep).length > 0);

    await box.fill("remember this");
    await box.press("Enter");
    const queue = w.page.getByRole("region", { name: "Queued messages" });
    await shows(queue.locator(".queued-text"), "remember this");
    // Stopped: the queue is held for the person.
    await w.page.getByRole("button", { name: "Stop" }).click();
    await shows(w.page.locator(".notice"), "Stopped.");
    await until("the sleep to be killed", () => processesWithArgv(sleep).length === 0);
    await shows(queue.locator(".queue-head"), "held");
    await w.screenshot("queue-held");

    await w.page.reload();
    await shows(w.page.getByTestId("connection"), "connected");
    // Riot kept it: the page shows Riot's queue, still held.
    await shows(queue.locator(".queued-text"), "remember this");
    await shows(queue.locator(".queue-head"), "held");
    expect(await w.requests()).toHaveLength(1);

    await queue.getByRole("button", { name: "Resume queue" }).click();
    await shows(w.page.getByTestId("agent-message").last(), "Remembered.");
    expect(await queue.count()).toBe(0);
    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200, 200]);
    const messages = requests[1]?.body.messages ?? [];
    const last = messages[messages.length - 1];
    const text = Array.isArray(last?.content)
      ? (last.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text).join("")
      : String(last?.content);
    expect(text).toBe("remember this");
    await w.screenshot("queue-resumed");
  });
});
