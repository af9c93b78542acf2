// The web UI end to end (issue 10, docs/testing.md L5 "Faces"): the built UI
// served by a real `riot serve`, a real Chromium, and the strict mock
// model, which rejects a history whose tool calls and results do not pair.
// Each test starts its own world (harness.ts) and stops it, passed or not.

import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  endWorld,
  launchBrowser,
  missingPrerequisites,
  PATIENCE_MS,
  processesWithArgv,
  shows,
  toolCall,
  until,
  World,
  type MockScript,
  type RecordedRequest,
} from "./harness";

const missing = missingPrerequisites();
if (missing.length > 0) {
  const why = `the UI end-to-end tests need ${missing.join(", ")}`;
  // CI must run these tests: a missing browser or binary is a failure there.
  if (process.env.CI) throw new Error(`${why}; CI must run them`);
  console.warn(`SKIPPED: ${why}`);
}

const script = (replies: unknown[], chunkSize = 16): MockScript => ({ wire: "anthropic", chunk_size: chunkSize, replies });

/** The blocks of the last user message of a recorded Anthropic request. */
function lastUserContent(request: RecordedRequest | undefined): Record<string, unknown>[] {
  const messages = request?.body.messages ?? [];
  const last = messages[messages.length - 1];
  expect(last?.role).toBe("user");
  return Array.isArray(last?.content) ? (last.content as Record<string, unknown>[]) : [];
}

function resultText(block: Record<string, unknown> | undefined): string {
  const content = block?.content;
  if (typeof content === "string") return content;
  return Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? "").join("") : "";
}

describe.skipIf(missing.length > 0)("the web UI against riot serve", () => {
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

  async function begin(mock: MockScript, files?: Record<string, string>): Promise<World> {
    world = await World.start(browser, mock, files);
    await world.open();
    await world.page.getByRole("button", { name: "New session" }).click();
    await world.page.getByRole("textbox", { name: "Message" }).waitFor();
    return world;
  }

  async function prompt(w: World, text: string): Promise<void> {
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.fill(text);
    await box.press("Enter");
  }

  it("takes the project from riot serve --cwd when the address names none", async () => {
    world = await World.start(browser, script([]), { "README.md": "hi\n" }, { serveCwd: true });
    // A project the page used before must not win over --cwd.
    await world.page.goto(world.url);
    await world.page.evaluate(() => window.localStorage.setItem("riot.projectDir", "/somewhere/else"));
    await world.page.goto(world.url);
    await world.page.locator('[data-testid="connection"]', { hasText: "connected" }).waitFor({ timeout: PATIENCE_MS });
    await until("the project directory is pre-filled", async () =>
      (await world!.page.getByLabel("Project directory").inputValue()) === world!.project,
    );
  });

  it("renders a streamed reply as safe markdown, with the usage figures", async () => {
    const reply =
      "Hello **world**, here is `code`:\n\n```rust\nfn main() {}\n```\n\n" +
      "<img src=x onerror=\"document.title='pwned'\"> and [a link](javascript:alert(1)).";
    const w = await begin(script([{ text: reply }], 5));
    const page = w.page;
    // The session's commands came with available_commands_update.
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("/com");
    await shows(page.getByRole("option"), "/compact");
    await box.fill("");

    await prompt(w, "Say hello");
    await shows(page.getByTestId("user-message"), "Say hello");
    const answer = page.getByTestId("agent-message");
    await shows(answer, "a link.");
    await page.getByRole("button", { name: "Send" }).waitFor();
    expect(await answer.locator("strong").textContent()).toBe("world");
    expect(await answer.locator("pre code").textContent()).toBe("fn main() {}\n");
    // Raw HTML from the model is text: no element, no script ran.
    expect(await answer.locator("img").count()).toBe(0);
    expect(await answer.textContent()).toContain("<img src=x onerror=");
    expect(await page.title()).not.toBe("pwned");
    expect(await answer.locator("a").getAttribute("href")).toBe("");
    // _riot/usage: the mock reports 10 input tokens per request.
    await shows(page.getByTestId("usage"), "10 in");
    // The mock's model has no price: the session's cost is unknown, a dash, never $0.
    await shows(page.getByTestId("usage-cost"), "—");
    // The new session is listed, titled by its first prompt.
    await shows(page.locator(".session.current"), "Say hello");
    await w.screenshot("streamed-reply");

    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200]);
  });

  it("counts a subagent's request as the turn's side usage and in the session's cost", async () => {
    // $1,000 per million input tokens and $2,000 per million output tokens.
    const mock: MockScript = {
      ...script([
        toolCall("call_task", "Task", {
          description: "look around",
          prompt: "CHILD-PROMPT find the notes",
          subagent_type: "explore",
        }),
        { text: "Delegated." },
      ]),
      when: [{ last_user_contains: "CHILD-PROMPT", reply: { text: "The notes are in notes.txt." } }],
    };
    world = await World.start(browser, mock, {}, {
      settings: { models: { "mock-model": { price: { input: 1000, output: 2000, cache_write: 1000, cache_read: 1000 } } } },
    });
    await world.open();
    const w = world;
    await w.page.getByRole("button", { name: "New session" }).click();
    await w.page.getByRole("textbox", { name: "Message" }).waitFor();
    await prompt(w, "Find the notes");
    await shows(w.page.getByTestId("agent-message"), "Delegated.");
    // The parent's two requests are the turn's figures (10 input and 5
    // output tokens each, as the mock reports); the child's one is apart.
    await shows(w.page.getByTestId("usage-side"), "side 10 in / 5 out");
    const usage = w.page.getByTestId("usage");
    expect(await usage.textContent()).toContain("20 in");
    expect(await usage.getAttribute("title")).toBe(
      "Session: 20 in, 10 out, 0 cache read, 0 cache written, 2 requests; " +
        "side requests: 10 in, 5 out, 0 cache read, 0 cache written",
    );
    // The cost counts all three requests, 30 input and 15 output tokens
    // ($0.0400 would be the parent's alone).
    expect(await w.page.getByTestId("usage-cost").textContent()).toBe("$0.0600");
    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200, 200, 200]);
    await w.screenshot("subagent-side-usage");
  });

  it("shows a Read as a tool card with its describe line and payload", async () => {
    const w = await begin(
      script([toolCall("call_read_1", "Read", { file_path: "notes.txt" }), { text: "The notes have three lines." }]),
      { "notes.txt": "one\ntwo\nthree\n" },
    );
    await prompt(w, "What is in notes.txt?");
    const card = w.page.locator('[data-tool-call-id="call_read_1"]');
    await shows(card.locator('[data-testid="tool-status"]'), "done");
    expect(await card.locator(".tool-title").textContent()).toBe("Read notes.txt");
    expect(await card.getByTestId("read-range").textContent()).toBe("all 3 lines");
    await shows(w.page.getByTestId("agent-message"), "three lines");
    await w.screenshot("read-tool-card");

    // The model got the file: the second request carries its tool_result.
    const requests = await w.requests();
    expect(requests).toHaveLength(2);
    const result = lastUserContent(requests[1]).find((b) => b.type === "tool_result");
    expect(result?.tool_use_id).toBe("call_read_1");
    expect(resultText(result)).toContain("two");
  });

  it("sends a pasted image to the model beside the text, with a thumbnail in the composer and the message", async () => {
    // A 1x1 PNG (a red pixel); the mock model can see (a models override).
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
    world = await World.start(browser, script([{ text: "A red dot." }]), {}, {
      settings: { models: { "mock-model": { vision: true } } },
    });
    await world.open();
    const w = world;
    await w.page.getByRole("button", { name: "New session" }).click();
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.waitFor();
    await box.fill("What is this?");
    // A paste as the browser delivers one from a screenshot tool: a file on the clipboard.
    const notPasted = await box.evaluate((el, data) => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const clipboard = new DataTransfer();
      clipboard.items.add(new File([bytes], "shot.png", { type: "image/png" }));
      return el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: clipboard, bubbles: true, cancelable: true }));
    }, png);
    expect(notPasted).toBe(false);
    const thumbnail = w.page.getByRole("list", { name: "Attached images" }).getByRole("img", { name: "shot.png" });
    await thumbnail.waitFor({ timeout: PATIENCE_MS });
    expect(await thumbnail.getAttribute("src")).toBe(`data:image/png;base64,${png}`);
    expect(await box.inputValue()).toBe("What is this?");
    await w.screenshot("image-attached");
    await box.press("Enter");

    await shows(w.page.getByTestId("agent-message"), "A red dot.");
    const message = w.page.getByTestId("user-message");
    expect(await message.locator(".message-text").textContent()).toBe("What is this?");
    expect(await message.getByRole("img", { name: "shot.png" }).getAttribute("src")).toBe(`data:image/png;base64,${png}`);
    expect(await w.page.getByRole("list", { name: "Attached images" }).count()).toBe(0);
    await w.screenshot("image-sent");

    // The model request carries the image after the text, as an Anthropic image block; the strict mock accepted it.
    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200]);
    const content = lastUserContent(requests[0]);
    expect(content[0]).toEqual({ type: "text", text: "What is this?" });
    const image = content.find((b) => b.type === "image");
    expect(image?.source).toEqual({ type: "base64", media_type: "image/png", data: png });
    expect(content.indexOf(image ?? {})).toBeGreaterThan(0);
  });

  it("refuses a dropped file that is not an image, saying why, and sends nothing", async () => {
    const w = await begin(script([]));
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.evaluate((el) => {
      const files = new DataTransfer();
      files.items.add(new File(["a,b\n1,2\n"], "data.csv", { type: "text/csv" }));
      el.dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
    });
    await shows(w.page.getByRole("alert"), "data.csv is not a PNG, JPEG, GIF or WebP image, so it was not attached.");
    expect(await w.page.getByRole("img").count()).toBe(0);
    expect(await w.page.getByRole("button", { name: "Send" }).isDisabled()).toBe(true);
    expect(await w.requests()).toEqual([]);
  });

  it("asks before a Write, showing the absolute path; allow writes the file", async () => {
    const written = "hello\nwörld\n";
    const w = await begin(
      script([toolCall("call_write_1", "Write", { file_path: "out.txt", content: written }), { text: "Written." }]),
    );
    await prompt(w, "Create out.txt");
    const dialog = w.page.getByTestId("permission-dialog");
    await dialog.waitFor({ timeout: PATIENCE_MS });
    const out = join(w.project, "out.txt");
    expect(await dialog.getByTestId("permission-path").textContent()).toBe(out);
    expect(await dialog.getByTestId("permission-title").textContent()).toBe("Write out.txt");
    // The tool's kind ("Edit") until Riot sends the tool's name with the question.
    expect(["Write", "Edit"]).toContain(await dialog.getByTestId("permission-tool").textContent());
    const options = await dialog.locator(".permission-options button .option-name").allTextContents();
    expect(options[0]).toBe("Allow");
    expect(options).toContain("Reject");
    expect(existsSync(out)).toBe(false);
    await w.screenshot("permission-write");

    await dialog.getByRole("button", { name: "Allow", exact: true }).click();
    await dialog.waitFor({ state: "detached" });
    const card = w.page.locator('[data-tool-call-id="call_write_1"]');
    await shows(card.getByTestId("tool-status"), "done");
    expect(readFileSync(out).equals(Buffer.from(written, "utf8"))).toBe(true);
    expect(await card.locator(".badge", { hasText: "new file" }).count()).toBe(1);
    expect(await card.locator("tr.diff-added .diff-text").allTextContents()).toEqual(["+hello", "+wörld"]);
    await shows(w.page.getByTestId("agent-message"), "Written.");
    await w.screenshot("permission-allowed");
  });

  it("deny leaves the file unwritten and the model is told", async () => {
    const w = await begin(
      script([
        toolCall("call_write_1", "Write", { file_path: "out.txt", content: "nope\n" }),
        { text: "Understood, I will not write it." },
      ]),
    );
    await prompt(w, "Create out.txt");
    const dialog = w.page.getByTestId("permission-dialog");
    await dialog.waitFor({ timeout: PATIENCE_MS });
    await dialog.getByRole("button", { name: "Reject", exact: true }).click();
    await shows(w.page.getByTestId("agent-message"), "I will not write it");
    const card = w.page.locator('[data-tool-call-id="call_write_1"]');
    await shows(card.getByTestId("tool-status"), "failed");
    expect(await card.locator(".tool-error").textContent()).toContain("The person denied permission to run Write");
    expect(existsSync(join(w.project, "out.txt"))).toBe(false);

    const requests = await w.requests();
    expect(requests).toHaveLength(2);
    const result = lastUserContent(requests[1]).find((b) => b.type === "tool_result");
    expect(result?.tool_use_id).toBe("call_write_1");
    expect(result?.is_error).toBe(true);
    expect(resultText(result)).toContain("The person denied permission to run Write (Write out.txt)");
    await w.screenshot("permission-denied");
  });

  it("stops a turn during a slow Bash command, killing the command", async () => {
    const sleep = ["sleep", "47.3"];
    const w = await begin(
      script([toolCall("call_bash_1", "Bash", { command: sleep.join(" ") }), { text: "Back again." }]),
    );
    await prompt(w, "Run the slow command");
    const card = w.page.locator('[data-tool-call-id="call_bash_1"]');
    await shows(card.getByTestId("tool-status"), "running");
    await until("the sleep to start", () => processesWithArgv(sleep).length > 0);
    await w.screenshot("bash-running");

    await w.page.getByRole("button", { name: "Stop" }).click();
    await shows(w.page.locator(".notice"), "Stopped.");
    await shows(card.getByTestId("tool-status"), "failed");
    await until("the sleep to be killed", () => processesWithArgv(sleep).length === 0);
    await w.page.getByRole("button", { name: "Send" }).waitFor();

    // The strict mock takes the next request only if the call was paired with a result.
    await prompt(w, "Go on");
    await shows(w.page.getByTestId("agent-message"), "Back again.");
    const requests = await w.requests();
    expect(requests.map((r) => r.status)).toEqual([200, 200]);
    const results = (requests[1]?.body.messages ?? []).flatMap((m) =>
      Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : [],
    );
    expect(results.some((b) => b.type === "tool_result" && b.tool_use_id === "call_bash_1")).toBe(true);
    await w.screenshot("bash-stopped");
  });

  it("switches modes: in accept-edits a Write in the project is not asked", async () => {
    const w = await begin(
      script([toolCall("call_write_1", "Write", { file_path: "a.txt", content: "a\n" }), { text: "Done." }]),
    );
    // exact: the session bar's "Model" field is a combobox too.
    await w.page.getByRole("combobox", { name: "Mode", exact: true }).selectOption("accept-edits");
    await prompt(w, "Create a.txt");
    await shows(w.page.getByTestId("agent-message"), "Done.");
    expect(await w.page.getByTestId("permission-dialog").count()).toBe(0);
    expect(readFileSync(join(w.project, "a.txt"), "utf8")).toBe("a\n");
    expect(await w.page.getByRole("combobox", { name: "Mode", exact: true }).inputValue()).toBe("accept-edits");
  });

  it("runs /compact from the / menu and shows the compaction", async () => {
    const w = await begin(
      script([{ text: "First answer." }, { text: "Summary: the person asked about the API." }]),
    );
    await prompt(w, "Tell me about the API");
    await shows(w.page.getByTestId("agent-message"), "First answer.");
    await w.page.getByRole("button", { name: "Send" }).waitFor();
    const box = w.page.getByRole("textbox", { name: "Message" });
    await box.fill("/comp");
    await shows(w.page.getByRole("option"), "/compact");
    await box.press("Enter");
    expect(await box.inputValue()).toBe("/compact ");
    await box.press("Enter");
    await shows(w.page.locator(".notice"), "Context compacted (summarized)");
    expect(await w.page.getByTestId("compacting").count()).toBe(0);
    await w.screenshot("compacted");
    const requests = await w.requests();
    expect(requests).toHaveLength(2);
  });

  it("restores the session after a reload", async () => {
    const w = await begin(
      script([toolCall("call_read_1", "Read", { file_path: "notes.txt" }), { text: "It has **three** lines." }]),
      { "notes.txt": "one\ntwo\nthree\n" },
    );
    await prompt(w, "Read notes.txt");
    await shows(w.page.getByTestId("agent-message"), "three");
    await w.page.getByRole("button", { name: "Send" }).waitFor();
    const before = w.page.url();
    expect(before).toMatch(/#session=/);

    await w.page.reload();
    await shows(w.page.getByTestId("connection"), "connected");
    await shows(w.page.getByTestId("agent-message"), "three");
    expect(w.page.url()).toBe(before);
    expect(await w.page.getByTestId("user-message").allTextContents()).toEqual(["Read notes.txt"]);
    const card = w.page.locator('[data-tool-call-id="call_read_1"]');
    expect(await card.getByTestId("tool-status").textContent()).toBe("done");
    expect(await card.getByTestId("read-range").textContent()).toBe("all 3 lines");
    expect(await w.page.getByTestId("agent-message").locator("strong").textContent()).toBe("three");
    await shows(w.page.locator(".session.current"), "Read notes.txt");
    // Loading a session asks the model nothing.
    expect(await w.requests()).toHaveLength(2);
    await w.screenshot("reloaded");
  });

  it("onboarding appears with no model configured", async () => {
    const w = await World.start(browser, script([{ text: "Hello from the **mock**." }]), {}, { configured: false });
    world = w;
    await w.open();
    const page = w.page;
    const dialog = page.getByRole("dialog", { name: "Set up a model" });
    await dialog.waitFor({ timeout: PATIENCE_MS });
    // Riot says what is missing, in one line.
    expect((await dialog.getByTestId("settings-problem").textContent())?.trim()).not.toBe("");
    await w.screenshot("onboarding");

    await dialog.getByLabel("Provider", { exact: true }).selectOption({ label: "Anthropic" });
    await dialog.getByLabel("Base URL", { exact: true }).fill(w.mockUrl);
    await dialog.getByLabel("Model", { exact: true }).fill("mock-model");
    await dialog.getByLabel("API key", { exact: true }).fill("test-key");
    await dialog.getByRole("button", { name: "Save", exact: true }).click();
    await dialog.waitFor({ state: "detached", timeout: PATIENCE_MS });

    // A session starts on the saved model and the mock streams its reply.
    await page.getByRole("button", { name: "New session" }).click();
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Say hello");
    await box.press("Enter");
    const answer = page.getByTestId("agent-message");
    await shows(answer, "Hello from the mock.");
    expect(await answer.locator("strong").textContent()).toBe("mock");
    expect(await page.getByRole("combobox", { name: "Model", exact: true }).inputValue()).toBe("mock-model");
    expect((await w.requests()).map((r) => r.status)).toEqual([200]);

    // The key went to credentials.json, readable by its owner only; the rest to settings.json.
    const credentials = join(w.home, "credentials.json");
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    const keys = (JSON.parse(readFileSync(credentials, "utf8")) as { keys?: Record<string, string> }).keys ?? {};
    expect(Object.values(keys)).toContain("test-key");
    const settingsText = readFileSync(join(w.home, "settings.json"), "utf8");
    expect(settingsText).not.toContain("test-key");
    const settings = JSON.parse(settingsText) as Record<string, unknown>;
    expect(settings.provider).toBe("anthropic");
    expect(settings.model).toBe("mock-model");
    expect(settings.base_url).toBe(w.mockUrl);

    // Settings shows the configuration again, with the key's presence but never the key.
    await page.getByRole("button", { name: "Settings", exact: true }).click();
    const again = page.getByRole("dialog", { name: "Model settings" });
    await again.waitFor({ timeout: PATIENCE_MS });
    expect(await again.getByLabel("Model", { exact: true }).inputValue()).toBe("mock-model");
    expect(await again.getByLabel("API key", { exact: true }).inputValue()).toBe("");
    expect(await again.getByTestId("key-status").textContent()).toContain("A key is saved");
    expect(await page.content()).not.toContain("test-key");
    await w.screenshot("onboarding-done");
  });

  it("@ mention completes a project file", async () => {
    const marker = "riot-mention-marker-4711";
    const w = await begin(script([{ text: "It prints a marker." }]), {
      "src/main.rs": `fn main() {\n    println!("${marker}");\n}\n`,
      "README.md": "A project.\n",
    });
    const page = w.page;
    const box = page.getByRole("textbox", { name: "Message" });
    await box.pressSequentially("@mai");
    const files = page.getByRole("listbox", { name: "Files" });
    await shows(files.getByRole("option"), "src/main.rs");
    await w.screenshot("mention-list");
    await files.getByRole("option", { name: "src/main.rs", exact: true }).click();
    expect(await box.inputValue()).toBe("@src/main.rs ");
    await box.pressSequentially("what does it print?");
    await box.press("Enter");
    await shows(page.getByTestId("agent-message"), "It prints a marker.");
    expect(await page.getByTestId("user-message").allTextContents()).toEqual(["@src/main.rs what does it print?"]);

    // Riot attached the mentioned file's text to the prompt the model got.
    const requests = await w.requests();
    expect(requests).toHaveLength(1);
    expect(JSON.stringify(requests[0]?.body.messages)).toContain(marker);
    await w.screenshot("mention-sent");
  });
});

