// The page's layout and keyboard use, end to end (issue 18, "the first
// hour with Riot"): a long conversation of tool calls with output, at a
// desktop window, a phone-sized one and a very tall one, must show every
// tool card whole and never scroll sideways; and a person with only a
// keyboard can start a session, send, answer a question and stop a turn.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import {
  endWorld,
  launchBrowser,
  missingPrerequisites,
  PATIENCE_MS,
  shows,
  toolCall,
  until,
  World,
  type MockScript,
  type WorldOptions,
} from "./harness";

const missing = missingPrerequisites();
if (missing.length > 0) {
  const why = `the UI end-to-end tests need ${missing.join(", ")}`;
  if (process.env.CI) throw new Error(`${why}; CI must run them`);
  console.warn(`SKIPPED: ${why}`);
}

// ---- the long conversation ----

/** src/lib.rs: `fn ` on lines 2, 3, 10, 20 and 30 — four runs of lines, so Grep puts three `--` between them. */
const LIB_RS = Array.from({ length: 40 }, (_, i) => {
  const n = i + 1;
  if (n === 2) return "pub fn alpha() {}";
  if ([3, 10, 20, 30].includes(n)) return `pub fn f${n}() -> u32 { ${n} }`;
  return `// line ${n}`;
}).join("\n");
/** Lines matching `fn ` in the project: five in src/lib.rs, one in src/main.rs. */
const FN_MATCHES = 6;

const FILES = {
  "src/lib.rs": `${LIB_RS}\n`,
  "src/main.rs": 'fn main() {\n    println!("hello");\n}\n',
  "notes.txt": Array.from({ length: 12 }, (_, i) => `note ${i + 1}`).join("\n") + "\n",
};

/** Tool calls of every payload kind, most of them with output; the model then says it is done. */
const LONG_TURN = [
  toolCall("call_01", "Bash", { command: "printf 'line %s\\n' $(seq 1 40); echo OK >&2", description: "Print lines" }),
  toolCall("call_02", "Grep", { pattern: "fn ", output_mode: "content", path: "src" }),
  toolCall("call_03", "Glob", { pattern: "**/*.rs" }),
  toolCall("call_04", "Read", { file_path: "notes.txt" }),
  toolCall("call_05", "Read", { file_path: "src/lib.rs" }),
  toolCall("call_06", "Edit", {
    file_path: "src/lib.rs",
    old_string: "pub fn alpha() {}",
    new_string: "pub fn alpha() {\n    f3();\n}",
  }),
  toolCall("call_07", "Write", {
    file_path: "docs/plan.md",
    content: Array.from({ length: 10 }, (_, i) => `- step ${i + 1}`).join("\n") + "\n",
  }),
  toolCall("call_08", "Bash", { command: "ls does-not-exist", description: "List a missing file" }),
  toolCall("call_09", "Grep", { pattern: "fn", output_mode: "files_with_matches" }),
  toolCall("call_10", "Bash", { command: "seq 1 300", description: "Count" }),
  toolCall("call_11", "Grep", { pattern: "pub", output_mode: "count" }),
  toolCall("call_12", "Bash", { command: "echo done; echo 'warning: nothing to do' >&2", description: "Finish" }),
  { text: "All done: **12** tool calls.\n\n```sh\nseq 1 300\n```" },
];
const CARDS = 12;
/** The first prompt, so the session's title: longer than the sidebar is wide. */
const PROMPT = "Look around the project and tell me what every part of it does";

const VIEWPORTS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
  { name: "tall", width: 1280, height: 2400 },
] as const;

/** The smallest height a tool card with content may have: a header line and some of its payload. */
const MIN_CARD_PX = 40;

interface Layout {
  cards: { id: string | null; height: number; scrollHeight: number; clientHeight: number; clipped: string[] }[];
  page: { scrollWidth: number; clientWidth: number };
  conversation: { scrollHeight: number; clientHeight: number; scrollWidth: number; clientWidth: number };
  composer: number;
  sidebarShown: boolean;
  toggleShown: boolean;
}

/** Boxes as Chromium laid them out. */
function layout(page: Page): Promise<Layout> {
  return page.evaluate(() => {
    const shown = (el: Element | null) => {
      if (el === null) return false;
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      return (
        style.visibility !== "hidden" && style.display !== "none" && r.width > 0 && r.right > 0 && r.left < innerWidth
      );
    };
    const cards = Array.from(document.querySelectorAll<HTMLElement>('[data-testid="tool-card"]')).map((card) => {
      const box = card.getBoundingClientRect();
      // A part of the card cut off by its bottom edge, or squashed to nothing.
      const clipped = Array.from(card.children)
        .filter((part) => {
          const r = part.getBoundingClientRect();
          return r.height < 1 || r.bottom > box.bottom + 1;
        })
        .map((part) => part.className);
      return {
        id: card.getAttribute("data-tool-call-id"),
        height: box.height,
        scrollHeight: card.scrollHeight,
        clientHeight: card.clientHeight,
        clipped,
      };
    });
    const doc = document.scrollingElement ?? document.documentElement;
    const conversation = document.querySelector('[data-testid="conversation"]') as HTMLElement;
    const composer = document.querySelector('textarea[aria-label="Message"]') as HTMLElement;
    return {
      cards,
      page: { scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth },
      conversation: {
        scrollHeight: conversation.scrollHeight,
        clientHeight: conversation.clientHeight,
        scrollWidth: conversation.scrollWidth,
        clientWidth: conversation.clientWidth,
      },
      composer: composer.getBoundingClientRect().width,
      sidebarShown: shown(document.querySelector(".sidebar")),
      toggleShown: shown(document.querySelector('button[aria-controls="sidebar"]')),
    };
  });
}

// ---- keyboard only ----

/** An Anthropic reply that starts and then sends nothing more: the model "thinks" until stopped. */
const STALLED_REPLY = {
  stall:
    "event: message_start\ndata: " +
    JSON.stringify({
      type: "message_start",
      message: {
        id: "msg_stall",
        type: "message",
        role: "assistant",
        model: "mock-model",
        content: [],
        stop_reason: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }) +
    "\n\n",
};

/** What has the keyboard focus: its accessible label or text, and whether a focus ring is drawn around it. */
function focused(page: Page): Promise<{ label: string; ring: boolean; inSidebar: boolean; tag: string }> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (el === null || el === document.body) return { label: "", ring: false, inSidebar: false, tag: "body" };
    const style = getComputedStyle(el);
    return {
      label: el.getAttribute("aria-label") ?? el.textContent?.trim() ?? "",
      ring: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
      inSidebar: el.closest("#sidebar") !== null,
      tag: el.tagName.toLowerCase(),
    };
  });
}

function sidebarShown(page: Page): Promise<boolean> {
  return page.locator("#sidebar").evaluate((el) => {
    const r = el.getBoundingClientRect();
    return getComputedStyle(el).visibility === "visible" && r.right > 0;
  });
}

describe.skipIf(missing.length > 0)("layout and keyboard against riot serve", () => {
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

  async function start(mock: MockScript, files: Record<string, string>, options: WorldOptions): Promise<World> {
    world = await World.start(browser, mock, files, options);
    await world.open();
    return world;
  }

  it.each(VIEWPORTS)(
    "a long conversation at $width×$height ($name): every tool card whole, no sideways scroll",
    async ({ name, width, height }) => {
      const w = await start({ wire: "anthropic", chunk_size: 256, replies: LONG_TURN }, FILES, {
        viewport: { width, height },
      });
      const page = w.page;
      const narrow = width < 700;
      if (narrow) {
        // The sessions are a drawer: open it, start a session, and it closes.
        await page.getByRole("button", { name: "Sessions", exact: true }).click();
      }
      await page.getByRole("button", { name: "New session" }).click();
      const box = page.getByRole("textbox", { name: "Message" });
      await box.waitFor();
      await page.getByRole("combobox", { name: "Mode", exact: true }).selectOption("bypass");
      await box.fill(PROMPT);
      await box.press("Enter");
      await shows(page.getByTestId("agent-message"), "All done");
      await page.getByRole("button", { name: "Send" }).waitFor({ timeout: PATIENCE_MS });
      await until(
        "the last card to finish",
        async () => (await page.locator('[data-status="completed"], [data-status="failed"]').count()) === CARDS,
      );

      const measured = await layout(page);
      expect(measured.cards.map((c) => c.id)).toHaveLength(CARDS);
      for (const card of measured.cards) {
        expect(card.height, `card ${card.id} height`).toBeGreaterThanOrEqual(MIN_CARD_PX);
        expect(card.scrollHeight, `card ${card.id} hides part of its content`).toBeLessThanOrEqual(
          card.clientHeight + 1,
        );
        expect(card.clipped, `card ${card.id} cut off`).toEqual([]);
      }
      // The conversation is taller than its window (the case the cards collapsed in), and scrolls.
      expect(measured.conversation.scrollHeight).toBeGreaterThan(measured.conversation.clientHeight);
      expect(measured.page.scrollWidth, "the page scrolls sideways").toBeLessThanOrEqual(measured.page.clientWidth);
      expect(measured.conversation.scrollWidth, "the conversation scrolls sideways").toBeLessThanOrEqual(
        measured.conversation.clientWidth,
      );
      // The composer has the window's width to itself, less its padding and buttons.
      expect(measured.composer).toBeGreaterThan(width * (narrow ? 0.55 : 0.5));
      expect(measured.sidebarShown).toBe(!narrow);
      expect(measured.toggleShown).toBe(narrow);

      // What the cards say: the Grep count leaves out the `--` between runs of lines,
      const grep = page.locator('[data-tool-call-id="call_02"]');
      expect(await grep.getByTestId("match-count").textContent()).toBe(`${FN_MATCHES} matches`);
      expect(await grep.locator(".match-gap").count()).toBe(3);
      // and a command's stderr is red only when the command failed.
      const colour = (id: string, part: string) =>
        page.locator(`[data-tool-call-id="${id}"] ${part}`).evaluate((el) => getComputedStyle(el).color);
      const text = await page.locator("body").evaluate((el) => getComputedStyle(el).color);
      const bad = await colour("call_08", '[data-testid="exit-code"]');
      expect(await page.locator('[data-tool-call-id="call_01"] .stderr').textContent()).toBe("OK\n");
      expect(await colour("call_01", ".stderr")).toBe(text);
      expect(await colour("call_12", ".stderr")).toBe(text);
      expect(await colour("call_08", ".stderr")).toBe(bad);
      expect(bad).not.toBe(text);

      // The session's rename and delete buttons sit beside its title, never on it.
      if (!narrow) {
        const row = page.locator(".session-row.current");
        await row.hover();
        const title = await row.locator(".session-title").boundingBox();
        const actions = await row.locator(".session-actions").boundingBox();
        expect(title !== null && actions !== null && title.x + title.width <= actions.x).toBe(true);
        expect(await row.getByRole("button", { name: /^Rename “Look around the project/ }).isVisible()).toBe(true);
      }

      await w.screenshot(`long-conversation-${name}-end`);
      await page.getByTestId("conversation").evaluate((el) => (el.scrollTop = el.scrollHeight / 3));
      await w.screenshot(`long-conversation-${name}-middle`);
    },
  );

  it("works from the keyboard alone in a narrow window: drawer, new session, Enter, a key for a question, Esc", async () => {
    const w = await start(
      {
        wire: "anthropic",
        replies: [
          toolCall("call_w", "Write", { file_path: "out.txt", content: "hi\n" }),
          { text: "Written." },
          STALLED_REPLY,
        ],
      },
      {},
      { viewport: { width: 390, height: 844 } },
    );
    const page = w.page;
    const keys = page.keyboard;

    // Tab reaches the drawer's button first; Enter opens the drawer and moves into it.
    expect(await sidebarShown(page)).toBe(false);
    await w.screenshot("keyboard-start");
    await keys.press("Tab");
    expect(await focused(page)).toMatchObject({ label: "Sessions", ring: true });
    await keys.press("Enter");
    await until("the drawer to open", () => sidebarShown(page));
    expect((await focused(page)).inSidebar).toBe(true);
    // Escape closes it and gives the focus back to its button.
    await keys.press("Escape");
    await until("the drawer to close", async () => !(await sidebarShown(page)));
    expect((await focused(page)).label).toBe("Sessions");
    await keys.press("Enter");
    await until("the drawer to open again", () => sidebarShown(page));
    await w.screenshot("keyboard-drawer");
    await keys.press("Tab");
    expect(await focused(page)).toMatchObject({ label: "New session", ring: true, inSidebar: true });

    // New session: the drawer closes and the focus is in the composer.
    await keys.press("Enter");
    await until("the composer to have the focus", async () => (await focused(page)).label === "Message");
    await until("the drawer to close", async () => !(await sidebarShown(page)));

    // Enter sends; the question is answered with `y`.
    await keys.type("Create out.txt");
    await keys.press("Enter");
    await shows(page.getByTestId("user-message"), "Create out.txt");
    const dialog = page.getByTestId("permission-dialog");
    await dialog.waitFor({ timeout: PATIENCE_MS });
    expect(await dialog.getByRole("button", { name: "Allow", exact: true }).getAttribute("aria-keyshortcuts")).toBe(
      "y Enter",
    );
    await page.locator('[data-testid="permission-dialog"][data-keys="ready"]').waitFor({ timeout: PATIENCE_MS });
    await w.screenshot("keyboard-permission");
    await keys.press("y");
    await dialog.waitFor({ state: "detached", timeout: PATIENCE_MS });
    await shows(page.getByTestId("agent-message"), "Written.");
    expect(existsSync(join(w.project, "out.txt")) && readFileSync(join(w.project, "out.txt"), "utf8")).toBe("hi\n");
    // The focus went back where it was.
    await until("the focus back in the composer", async () => (await focused(page)).label === "Message");
    await page.getByRole("button", { name: "Send" }).waitFor({ timeout: PATIENCE_MS });

    // Before the model's first token, the page says it is working, and for how long.
    await keys.type("Think about it");
    await keys.press("Enter");
    const working = page.getByTestId("working");
    await shows(working, "Working…");
    await until("a second to pass", async () =>
      /^[1-9]\d*s$/.test((await page.getByTestId("working-time").textContent()) ?? ""),
    );
    expect(await page.getByTestId("agent-message").count()).toBe(1);
    await w.screenshot("keyboard-working");

    // Escape stops the turn: it ends cancelled.
    await keys.press("Escape");
    await shows(page.locator(".notice"), "Stopped.");
    await page.getByRole("button", { name: "Send" }).waitFor({ timeout: PATIENCE_MS });
    expect(await working.count()).toBe(0);
    expect((await w.requests()).map((r) => r.status)).toEqual([200, 200, 200]);

    // Escape closes a dialog too, and the focus goes back to what opened it.
    await page.getByRole("button", { name: "Settings" }).focus();
    await keys.press("Enter");
    const settings = page.getByRole("dialog", { name: "Model settings" });
    await settings.waitFor({ timeout: PATIENCE_MS });
    expect((await focused(page)).tag).toBe("select");
    await keys.press("Escape");
    await settings.waitFor({ state: "detached", timeout: PATIENCE_MS });
    expect((await focused(page)).label).toBe("Settings");
    await w.screenshot("keyboard-stopped");
  });
});
