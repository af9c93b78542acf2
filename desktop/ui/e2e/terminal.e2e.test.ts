// The web UI's terminal view end to end (issue 28, docs/terminals.md): the
// mock model opens a Terminal running a Python REPL through a real
// `riot serve`; the page shows its screen live, the person types into it
// in Chromium, the REPL's answer appears, and the model's next read says
// what the person typed. The world (harness.ts) is stopped, passed or not,
// and no process of the test outlives it.

import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { endWorld, launchBrowser, missingPrerequisites, shows, toolCall, until, World } from "./harness";

const missing = missingPrerequisites();
if (missing.length > 0) {
  const why = `the UI end-to-end tests need ${missing.join(", ")}`;
  if (process.env.CI) throw new Error(`${why}; CI must run them`);
  console.warn(`SKIPPED: ${why}`);
}

/** The text of every `tool_result` block for `id` in a recorded request. */
function toolResults(body: { messages?: { role: string; content: unknown }[] }, id: string): string[] {
  return (body.messages ?? []).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Record<string, unknown>[])
          .filter((b) => b.type === "tool_result" && b.tool_use_id === id)
          .map((b) =>
            typeof b.content === "string"
              ? b.content
              : Array.isArray(b.content)
                ? (b.content as { text?: string }[]).map((c) => c.text ?? "").join("")
                : "",
          )
      : [],
  );
}

describe.skipIf(missing.length > 0)("the web UI's terminal view against riot serve", () => {
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

  it("shows the agent's terminal live, types the person's keys into it, and the model is told", async () => {
    const replies = [
      toolCall("call_open", "Terminal", { action: "open", name: "py", command: "python3 -q" }),
      { text: "A Python REPL is open." },
      toolCall("call_read", "Terminal", { action: "read", name: "py" }),
      { text: "You computed 42." },
    ];
    world = await World.start(
      browser,
      { wire: "anthropic", chunk_size: 16, replies },
      {},
      // The Terminal tool is allowed: this test is about the view, not the question.
      { settings: { permissions: { allow: ["Terminal"] } } },
    );
    const w = world;
    const page = w.page;
    await w.open();
    await page.getByRole("button", { name: "New session", exact: true }).click();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Open a Python REPL");
    await box.press("Enter");
    await shows(page.getByTestId("agent-message"), "A Python REPL is open.");

    // The terminal the agent opened is shown, its screen as the emulator rendered it.
    const screen = page.getByRole("textbox", { name: "Screen of terminal py" });
    const rows = async () => (await screen.locator(".terminal-row").allTextContents()).map((r) => r.trimEnd());
    await until("the REPL's prompt on the screen", async () => (await rows())[0] === ">>>");
    expect(await page.getByRole("tab", { name: "py" }).getAttribute("aria-selected")).toBe("true");
    expect(await page.locator(".terminal-command").textContent()).toBe("python3 -q");
    expect(await page.getByTestId("terminal-status").textContent()).toBe("running");

    // The person types into the screen: a line and Enter, as a person would press the keys.
    await screen.click();
    await page.keyboard.type("6*7");
    await page.keyboard.press("Enter");
    await until("the typed line's echo and the REPL's answer", async () => {
      const now = await rows();
      return now[0] === ">>> 6*7" && now[1] === "42" && now[2] === ">>>";
    });
    // The keys went to the program, not to the composer.
    expect(await box.inputValue()).toBe("");
    await w.screenshot("terminal-typed");

    // On a phone's width the 100-column screen scrolls inside its box; the page never scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    const widths = await page.evaluate(() => {
      const doc = document.documentElement;
      const shown = document.querySelector(".terminal-screen")!;
      return { page: [doc.scrollWidth, doc.clientWidth], screen: [shown.scrollWidth, shown.clientWidth] };
    });
    expect(widths.page[0]).toBeLessThanOrEqual(widths.page[1]!);
    expect(widths.screen[1]).toBeLessThan(390);
    await w.screenshot("terminal-narrow");
    await page.setViewportSize({ width: 1280, height: 800 });

    // The person's next prompt tells the model what they typed; its read after that does not repeat it.
    await box.fill("What did I do?");
    await box.press("Enter");
    await shows(page.getByTestId("agent-message"), "You computed 42.");
    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const sent = JSON.stringify(requests[2]!.body);
    expect(sent).toContain("The person typed into terminal `py` since you last read it: 6*7<Enter>.");
    const read = toolResults(requests[3]!.body, "call_read");
    expect(read).toHaveLength(1);
    expect(read[0]).not.toContain("The person typed");
    expect(read[0]).toContain(">>> 6*7");

    // Ctrl+D ends the REPL: the view says the program exited and takes no more typing.
    await screen.click();
    await page.keyboard.press("Control+d");
    await shows(page.getByTestId("terminal-status"), "exited with code 0");
    expect(await screen.getAttribute("aria-readonly")).toBe("true");
    await w.screenshot("terminal-exited");
  });

  it("fits the terminal to its panel, and the program is told the new size", async () => {
    const replies = [
      toolCall("call_open", "Terminal", { action: "open", name: "py", command: "python3 -q" }),
      { text: "A Python REPL is open." },
    ];
    world = await World.start(
      browser,
      { wire: "anthropic", chunk_size: 16, replies },
      {},
      { settings: { permissions: { allow: ["Terminal"] } } },
    );
    const w = world;
    const page = w.page;
    await w.open();
    await page.getByRole("button", { name: "New session", exact: true }).click();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Open a Python REPL");
    await box.press("Enter");
    await shows(page.getByTestId("agent-message"), "A Python REPL is open.");
    const screen = page.getByRole("textbox", { name: "Screen of terminal py" });
    const rows = async () => (await screen.locator(".terminal-row").allTextContents()).map((r) => r.trimEnd());
    await until("the REPL's prompt", async () => (await rows())[0] === ">>>");
    const size = page.getByTestId("terminal-size");
    expect(await size.textContent()).toBe("100×30");

    // The panel is narrower than 100 columns at this width: the fit is smaller.
    await page.setViewportSize({ width: 900, height: 800 });
    await page.getByRole("button", { name: "Fit to panel" }).click();
    await until("a new size from Riot", async () => (await size.textContent()) !== "100×30");
    const [cols, lines] = (await size.textContent())!.split("×").map(Number);
    expect(cols).toBeLessThan(100);
    expect(cols).toBeGreaterThanOrEqual(20);
    expect(lines).toBeGreaterThanOrEqual(5);

    await screen.click();
    await page.keyboard.type("import os; os.get_terminal_size()");
    await page.keyboard.press("Enter");
    const told = `os.terminal_size(columns=${cols}, lines=${lines})`;
    await until(`the program reports ${told}`, async () => (await rows()).includes(told));
    // The screen's rows now fit the panel without scrolling sideways.
    const fits = await page.evaluate(() => {
      const shown = document.querySelector(".terminal-screen")!;
      return shown.scrollWidth <= shown.clientWidth;
    });
    expect(fits).toBe(true);
    await w.screenshot("terminal-fitted");
  });
});
