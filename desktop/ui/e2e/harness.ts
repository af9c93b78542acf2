// The end-to-end tests' world: a temporary project and RIOT_HOME, the
// strict mock model server (`riot-mock-model`, crates/riot-testkit) with a
// script, a real `riot serve --ui-dir dist` against it, and Debian's
// Chromium driven by playwright-core. Every process started here runs in
// its own process group and is killed when the test ends, passed or
// failed, and when this process exits; processes working in the test's
// directories (tool commands Riot started) are killed too.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const UI_DIR = resolve(here, "..");
export const REPO = resolve(UI_DIR, "../..");
export const DIST = join(UI_DIR, "dist");
export const RESULTS = join(UI_DIR, "test-results");

/** Only a hang ever waits this long. */
export const PATIENCE_MS = 30_000;

function targetDir(): string {
  const dir = process.env.CARGO_TARGET_DIR;
  return dir ? resolve(REPO, dir) : join(REPO, "target");
}

export const RIOT_BIN = process.env.RIOT_BIN ?? join(targetDir(), "debug", "riot");
export const MOCK_BIN = process.env.RIOT_MOCK_MODEL_BIN ?? join(targetDir(), "debug", "riot-mock-model");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** What is missing to run these tests, each with how to get it. */
export function missingPrerequisites(): string[] {
  const missing: string[] = [];
  if (!existsSync(CHROMIUM)) missing.push(`${CHROMIUM} (apt-get install chromium)`);
  if (!existsSync(RIOT_BIN)) missing.push(`${RIOT_BIN} (cargo build -p riot-cli)`);
  if (!existsSync(MOCK_BIN)) missing.push(`${MOCK_BIN} (cargo build -p riot-testkit --bin riot-mock-model)`);
  if (!existsSync(join(DIST, "index.html"))) missing.push(`${DIST}/index.html (npm run build)`);
  return missing;
}

// ---- processes ----

/** Process groups still running, killed on exit whatever happens. */
const groups = new Set<number>();
function killAllGroups(): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
process.on("exit", killAllGroups);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAllGroups();
    process.kill(process.pid, signal);
  });
}

interface Started {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process ended. */
  exited: Promise<string>;
}

function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Started {
  // detached: a process group of its own, so the whole tree can be killed.
  const child = spawn(command, args, { ...options, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  if (child.pid !== undefined) groups.add(child.pid);
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => (stderr += d));
  const exited = new Promise<string>((resolveExit) => {
    child.on("exit", (code, signal) => {
      resolveExit(signal ?? String(code));
    });
    child.on("error", (e) => resolveExit(`spawn failed: ${e.message}`));
  });
  return { child, stderr: () => stderr, exited };
}

/** SIGTERM to the group, up to `graceMs` for it to end, then SIGKILL to the group. */
async function stopGroup(started: Started, graceMs: number): Promise<void> {
  const pid = started.child.pid;
  if (pid === undefined) return;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  if (started.child.exitCode === null && started.child.signalCode === null) {
    signal("SIGTERM");
    await Promise.race([started.exited, new Promise((r) => setTimeout(r, graceMs))]);
  }
  signal("SIGKILL");
  groups.delete(pid);
}

/** The first stdout line of `started` matching `pattern`. */
function firstLine(started: Started, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const stdout = started.child.stdout;
  if (stdout === null) throw new Error(`${what}: no stdout`);
  const lines = createInterface({ input: stdout });
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed no line in time: ${started.stderr()}`)), PATIENCE_MS);
    lines.on("line", (line) => {
      const match = pattern.exec(line);
      if (match === null) return;
      clearTimeout(timer);
      lines.close();
      resolveLine(match);
    });
    void started.exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${how}) before printing its line: ${started.stderr()}`));
    });
  });
}

/** Pids of live processes whose working directory is under `root`. */
export function processesIn(root: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const zombie = stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
      if (!zombie && (cwd === root || cwd.startsWith(`${root}/`))) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Pids of live processes whose argv is exactly `argv`. */
export function processesWithArgv(argv: string[]): number[] {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") !== wanted) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (!stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

// ---- the world of one test ----

/** A mock model script (crates/riot-testkit/src/lib.rs documents the format). */
export interface MockScript {
  wire: "anthropic" | "openai" | "openai-responses";
  chunk_size?: number;
  /** Replies to requests whose last user message contains a text, out of turn (`when` rules). */
  when?: { last_user_contains: string; reply: unknown }[];
  replies: unknown[];
}

/** A scripted tool call of the mock (its `arguments` are a JSON string, as the wire has them). */
export function toolCall(id: string, name: string, input: Record<string, unknown>, text = ""): unknown {
  return { tool_call: { id, name, arguments: JSON.stringify(input), text } };
}

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  body: { messages?: { role: string; content: unknown }[] } & Record<string, unknown>;
}

export interface WorldOptions {
  /**
   * Start riot serve with the mock as its model (`--provider anthropic
   * --base-url MOCK --model mock-model`; the default). `false`: no
   * provider or model flags, as on a first run.
   */
  configured?: boolean;
  /** The page's size in CSS pixels (default 1280×800). */
  viewport?: { width: number; height: number };
  /** Pass the project as `riot serve --cwd` (default: none). */
  serveCwd?: boolean;
  /** The user's settings (`$RIOT_HOME/settings.json`), e.g. a model's capabilities. */
  settings?: Record<string, unknown>;
}

export class World {
  private constructor(
    readonly root: string,
    readonly project: string,
    readonly home: string,
    private readonly mock: Started,
    /** The mock model's address (`http://127.0.0.1:PORT`). */
    readonly mockUrl: string,
    private readonly riot: Started,
    /** `http://127.0.0.1:PORT/?token=…`, as riot serve printed it. */
    readonly url: string,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  /**
   * Starts the mock with `script` and `riot serve` in a fresh project
   * holding `files` (project-relative paths; directories are made).
   */
  static async start(
    browser: Browser,
    script: MockScript,
    files: Record<string, string> = {},
    options: WorldOptions = {},
  ): Promise<World> {
    const root = realpathSync(await mkdtemp(join(tmpdir(), "riot-ui-e2e-")));
    const project = join(root, "project");
    const home = join(root, "home");
    mkdirSync(project);
    mkdirSync(home);
    if (options.settings !== undefined) await writeFile(join(home, "settings.json"), JSON.stringify(options.settings));
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(dirname(join(project, name)), { recursive: true });
      await writeFile(join(project, name), content);
    }
    const scriptPath = join(root, "script.json");
    await writeFile(scriptPath, JSON.stringify(script));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      // A hermetic Riot: no model keys or RIOT_* settings of the machine.
      if (key.startsWith("RIOT_") || key.endsWith("_API_KEY")) continue;
      env[key] = value;
    }
    env.RIOT_HOME = home;
    env.HOME = home;
    const mock = start(MOCK_BIN, ["--script", scriptPath, "--port", "0"], { cwd: root, env });
    let riot: Started | null = null;
    try {
      const port = (await firstLine(mock, /^PORT (\d+)$/, "riot-mock-model"))[1];
      const mockUrl = `http://127.0.0.1:${port}`;
      const model = options.configured === false ? [] : ["--provider", "anthropic", "--base-url", mockUrl, "--model", "mock-model"];
      const cwd = options.serveCwd === true ? ["--cwd", project] : [];
      riot = start(RIOT_BIN, ["serve", ...model, ...cwd, "--port", "0", "--ui-dir", DIST], { cwd: project, env });
      const url = (await firstLine(riot, /^Riot is serving at (http:\/\/\S+)$/, "riot serve"))[1] ?? "";
      const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
      const page = await context.newPage();
      return new World(root, project, home, mock, mockUrl, riot, url, context, page);
    } catch (e) {
      if (riot !== null) await stopGroup(riot, 0);
      await stopGroup(mock, 0);
      await rm(root, { recursive: true, force: true });
      throw e;
    }
  }

  /** Opens the UI as riot serve printed it, with the project preselected. */
  async open(): Promise<void> {
    await this.page.goto(`${this.url}&cwd=${encodeURIComponent(this.project)}`);
    await this.page.locator('[data-testid="connection"]', { hasText: "connected" }).waitFor({ timeout: PATIENCE_MS });
  }

  /** Every request the mock model received, in order. */
  async requests(): Promise<RecordedRequest[]> {
    const response = await fetch(`${this.mockUrl}/_mock/requests`);
    return (await response.json()) as RecordedRequest[];
  }

  async screenshot(name: string): Promise<void> {
    mkdirSync(RESULTS, { recursive: true });
    await this.page.screenshot({ path: join(RESULTS, `${name}.png`), fullPage: true, animations: "disabled" });
  }

  /** What riot serve wrote on stderr (for failure messages). */
  riotStderr(): string {
    return this.riot.stderr();
  }

  /** Closes the page and stops everything this world started. */
  async stop(): Promise<void> {
    await this.context.close().catch(() => {});
    await stopGroup(this.riot, 5_000);
    await stopGroup(this.mock, 1_000);
    // Tool processes run in groups of their own; none may outlive the test.
    for (const pid of processesIn(this.root)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    await rm(this.root, { recursive: true, force: true });
  }
}

/**
 * Stops a test's world, passed or not; a failed test leaves a screenshot
 * and riot serve's stderr behind.
 */
export async function endWorld(
  world: World | null,
  task: { name: string; result?: { state?: string } },
): Promise<void> {
  if (world === null) return;
  if (task.result?.state === "fail") {
    await world.screenshot(`FAILED-${task.name.replace(/\W+/g, "-")}`).catch(() => {});
    console.error(`riot serve stderr:\n${world.riotStderr()}`);
  }
  await world.stop();
}

/** Polls `test` until it holds; fails after PATIENCE_MS. */
export async function until(what: string, test: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits for `locator` (with `text`, when given) to be there. */
export async function shows(locator: Locator, text?: string): Promise<void> {
  const target = text === undefined ? locator : locator.filter({ hasText: text });
  await target.first().waitFor({ timeout: PATIENCE_MS });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Quiet on a machine without a network (no update checks, no sync).
    args: [
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
