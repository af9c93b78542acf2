// The streaming benchmark (issue 10: "A UI benchmark streams 5,000 deltas
// through the real stack and reports frames dropped / longest main-thread
// task"). Not a test: `npm run bench` runs it, `npm test` and CI do not.
//
// The strict mock model streams one reply of N `text_delta`s (one SSE
// `content_block_delta` each, a few words each) → a real `riot serve`
// (one ACP `agent_message_chunk` per delta) → WebSocket → the built UI in
// Debian's Chromium. In the page, the browser's own APIs measure from the
// prompt's Enter until the final text is in the DOM: requestAnimationFrame
// timestamps (a gap over two frame budgets is a dropped frame), `longtask`
// and `long-animation-frame` entries, React commits (through the DevTools
// hook React calls in production too) and DOM updates of the conversation.
// The rendered text must be exactly the concatenation of the deltas, or
// the run fails: a benchmark that renders the wrong thing is worthless.
//
// References measured the same way in the same run, so the result is a
// ratio, not an absolute claim about this machine:
// - "wire only": a page of the server's origin that speaks ACP itself over
//   the same kind of socket, receives the same N chunk frames and only
//   parses them (no SDK, no store, no React);
// - "ui, 1 delta": the same UI, the same steps, a one-delta reply.
//
// Environment: RIOT_BENCH_DELTAS (default 5000); RIOT_BENCH_PROFILE=1 also
// records a CPU profile of the UI run (test-results/stream-bench-ui.cpuprofile)
// and prints where its samples fell — the profiler slows the page, so the
// numbers of such a run are not comparable.

import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import type { Browser, CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { DIST, launchBrowser, missingPrerequisites, RESULTS, World, type MockScript } from "./harness";

const DELTAS = Number(process.env.RIOT_BENCH_DELTAS ?? "5000");
const PROFILE = process.env.RIOT_BENCH_PROFILE === "1";
/** A paragraph break every this many deltas (a long answer has paragraphs). */
const PARAGRAPH_EVERY = 40;
const PROMPT = "Stream the benchmark reply";
/** 60 Hz. */
const FRAME_MS = 1000 / 60;
/** A gap between two animation frames longer than this dropped at least one frame. */
const DROPPED_GAP_MS = 2 * FRAME_MS;
/** Only a hang waits this long for a turn to end. */
const TURN_PATIENCE_MS = 300_000;

// ---- the reply ----

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"];

/**
 * N deltas of three words each. Plain words only (no Markdown syntax), a
 * space between deltas and a blank line every PARAGRAPH_EVERY deltas, so
 * the rendered Markdown is exactly the paragraphs of the concatenation.
 */
function benchDeltas(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const separator = i === 0 ? "" : i % PARAGRAPH_EVERY === 0 ? "\n\n" : " ";
    out.push(`${separator}${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} d${i}`);
  }
  return out;
}

/** One streamed Anthropic reply: one `content_block_delta` per delta, ended properly. */
function streamScript(deltas: readonly string[]): MockScript {
  const events: unknown[] = [
    {
      type: "message_start",
      message: {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "mock-model",
        content: [],
        stop_reason: null,
        usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...deltas.map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: deltas.length } },
    { type: "message_stop" },
  ];
  return { wire: "anthropic", replies: [{ events }] };
}

// ---- the probe in the page ----

interface Span {
  start: number;
  duration: number;
}

interface LoafScript {
  invoker: string;
  invokerType: string;
  source: string;
  duration: number;
}

interface Loaf extends Span {
  blocking: number;
  renderStart: number;
  styleAndLayoutStart: number;
  scripts: LoafScript[];
}

/** What the probe measured, in the page's `performance.now()` time. */
interface RawMeasure {
  /** The prompt was sent (the Enter keydown, or the reference's send). */
  t0: number;
  /** The final text was in the DOM (last conversation mutation; the reference: the turn's answer). */
  tEnd: number;
  /** requestAnimationFrame timestamps while armed. */
  frames: number[];
  longtasks: Span[];
  loafs: Loaf[];
  longtaskSupported: boolean;
  loafSupported: boolean;
  /** React commits (times). */
  commits: number[];
  /** Mutation observer callbacks touching the conversation (times). */
  mutations: number[];
}

interface Probe {
  /** Starts measuring at the next Enter keydown; done when the composer shows Send again. */
  armUi(): void;
  /** Starts measuring now (the reference). */
  armNow(): void;
  /** The measured span ends now (the reference). */
  endNow(): void;
  /** Resolves once the measured span ended and two more frames passed. */
  finished(timeoutMs: number): Promise<RawMeasure>;
}

declare global {
  interface Window {
    __riotBench?: Probe;
    __REACT_DEVTOOLS_GLOBAL_HOOK__?: unknown;
  }
}

/** Installed before any page script (an init script): everything it needs is inside. */
function installProbe(): void {
  const frames: number[] = [];
  const longtasks: Span[] = [];
  const loafs: Loaf[] = [];
  const commits: number[] = [];
  const mutations: number[] = [];
  let mode: "idle" | "ui" | "reference" = "idle";
  let t0: number | null = null;
  let tEnd: number | null = null;
  let runningSeen = false;
  let framesAfterEnd = 0;
  let complete = false;
  const waiters: (() => void)[] = [];

  // React calls this hook on every commit, production builds included.
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    supportsFiber: true,
    isDisabled: false,
    renderers: new Map(),
    inject: () => 1,
    checkDCE: () => {},
    onScheduleFiberRoot: () => {},
    onCommitFiberRoot: () => {
      if (mode !== "idle") commits.push(performance.now());
    },
    onPostCommitFiberRoot: () => {},
    onCommitFiberUnmount: () => {},
  };

  const supported = PerformanceObserver.supportedEntryTypes;
  const longtaskSupported = supported.includes("longtask");
  const loafSupported = supported.includes("long-animation-frame");
  const keepLongtasks = (entries: PerformanceEntryList) => {
    for (const e of entries) longtasks.push({ start: e.startTime, duration: e.duration });
  };
  const keepLoafs = (entries: PerformanceEntryList) => {
    for (const entry of entries) {
      const e = entry as PerformanceEntry & {
        blockingDuration: number;
        renderStart: number;
        styleAndLayoutStart: number;
        scripts: {
          invoker: string;
          invokerType: string;
          sourceURL: string;
          sourceFunctionName: string;
          sourceCharPosition: number;
          duration: number;
        }[];
      };
      loafs.push({
        start: e.startTime,
        duration: e.duration,
        blocking: e.blockingDuration,
        renderStart: e.renderStart,
        styleAndLayoutStart: e.styleAndLayoutStart,
        scripts: e.scripts.map((s) => ({
          invoker: s.invoker,
          invokerType: s.invokerType,
          source: `${s.sourceFunctionName || "?"} ${s.sourceURL.replace(/^.*\//, "")}:${s.sourceCharPosition}`,
          duration: s.duration,
        })),
      });
    }
  };
  const longtaskObserver = longtaskSupported ? new PerformanceObserver((list) => keepLongtasks(list.getEntries())) : null;
  longtaskObserver?.observe({ type: "longtask", buffered: true });
  const loafObserver = loafSupported ? new PerformanceObserver((list) => keepLoafs(list.getEntries())) : null;
  loafObserver?.observe({ type: "long-animation-frame", buffered: true });

  const finish = () => {
    if (complete) return;
    complete = true;
    mode = "idle";
    if (longtaskObserver !== null) keepLongtasks(longtaskObserver.takeRecords());
    if (loafObserver !== null) keepLoafs(loafObserver.takeRecords());
    for (const w of waiters.splice(0)) w();
  };

  const tick = (t: number) => {
    if (mode === "idle") return;
    frames.push(t);
    if (tEnd !== null && ++framesAfterEnd >= 2) {
      finish();
      return;
    }
    requestAnimationFrame(tick);
  };

  const reset = (as: "ui" | "reference") => {
    frames.length = longtasks.length = loafs.length = commits.length = mutations.length = 0;
    mode = as;
    t0 = tEnd = null;
    runningSeen = false;
    framesAfterEnd = 0;
    complete = false;
    requestAnimationFrame(tick);
  };

  let observer: MutationObserver | null = null;
  const probe: Probe = {
    armUi() {
      reset("ui");
      document.addEventListener(
        "keydown",
        (e) => {
          if (e.key === "Enter") t0 = performance.now();
        },
        { capture: true, once: true },
      );
      observer?.disconnect();
      observer = new MutationObserver((records) => {
        if (t0 === null || tEnd !== null) return;
        const now = performance.now();
        const conversation = document.querySelector('[data-testid="conversation"]');
        if (conversation !== null && records.some((r) => conversation.contains(r.target))) mutations.push(now);
        if (document.querySelector(".composer .stop") !== null) {
          runningSeen = true;
        } else if (runningSeen && document.querySelector(".composer .send") !== null) {
          // The turn's end is applied with (or after) its last delta: the text is final.
          tEnd = mutations[mutations.length - 1] ?? now;
          observer?.disconnect();
        }
      });
      observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    },
    armNow() {
      reset("reference");
      t0 = performance.now();
    },
    endNow() {
      tEnd = performance.now();
    },
    finished(timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the benchmark turn did not end in time")), timeoutMs);
        const done = () => {
          clearTimeout(timer);
          if (t0 === null || tEnd === null) {
            reject(new Error("the benchmark span never started"));
            return;
          }
          resolve({
            t0,
            tEnd,
            frames: frames.slice(),
            longtasks: longtasks.slice(),
            loafs: loafs.slice(),
            longtaskSupported,
            loafSupported,
            commits: commits.slice(),
            mutations: mutations.slice(),
          });
        };
        if (complete) done();
        else waiters.push(done);
      });
    },
  };
  window.__riotBench = probe;
}

// ---- the reference client (runs in the page) ----

interface ReferenceResult {
  raw: RawMeasure;
  chunks: number;
  text: string;
  frames: number;
  stopReason: unknown;
}

/** A bare ACP client: initialize, session/new, session/prompt; parses every frame, renders nothing. */
async function referenceClient(arg: {
  wsUrl: string;
  cwd: string;
  prompt: string;
  meta: Record<string, unknown>;
  timeoutMs: number;
}): Promise<ReferenceResult> {
  const probe = window.__riotBench;
  if (probe === undefined) throw new Error("the benchmark probe is not installed");
  const ws = new WebSocket(arg.wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`the reference could not connect to ${arg.wsUrl}`));
  });
  type Message = {
    id?: number;
    method?: string;
    params?: { update?: { sessionUpdate?: string; content?: { text?: string } } };
    result?: unknown;
    error?: { message?: string };
  };
  const waiting = new Map<number, (m: Message) => void>();
  let nextId = 1;
  let chunks = 0;
  let frames = 0;
  let text = "";
  ws.onmessage = (event: MessageEvent) => {
    frames++;
    const message = JSON.parse(event.data as string) as Message;
    if (message.method === undefined) {
      if (message.id !== undefined) waiting.get(message.id)?.(message);
      return;
    }
    if (message.id !== undefined) {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported" } }));
      return;
    }
    const update = message.params?.update;
    if (message.method === "session/update" && update?.sessionUpdate === "agent_message_chunk") {
      chunks++;
      text += update.content?.text ?? "";
    }
  };
  const call = (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, (m) => {
        waiting.delete(id);
        if (m.error !== undefined) reject(new Error(`${method}: ${m.error.message ?? "error"}`));
        else resolve(m.result);
      });
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  await call("initialize", { protocolVersion: 1, clientCapabilities: { _meta: arg.meta } });
  const session = (await call("session/new", { cwd: arg.cwd, mcpServers: [] })) as { sessionId: string };
  frames = 0;
  probe.armNow();
  const answer = (await call("session/prompt", {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: arg.prompt }],
  })) as { stopReason?: unknown };
  probe.endNow();
  const raw = await probe.finished(arg.timeoutMs);
  ws.close();
  return { raw, chunks, text, frames, stopReason: answer.stopReason };
}

// ---- one measurement ----

interface Summary {
  label: string;
  deltas: number;
  /** `agent_message_chunk` frames the page's socket received. */
  chunkFrames: number;
  totalMs: number;
  framesObserved: number;
  medianFrameMs: number;
  framesDropped: number;
  /** Frame slots missed in all (a 100 ms gap misses 5). */
  missedFrames: number;
  longestGapMs: number;
  longtaskSupported: boolean;
  longtasks: number;
  longestTaskMs: number;
  longtaskTotalMs: number;
  reactCommits: number;
  domUpdates: number;
  loaf: LoafSummary | null;
}

interface LoafSummary {
  count: number;
  totalMs: number;
  blockingMs: number;
  /** Script time by what invoked it ("FrameRequestCallback", "WebSocket.onmessage", …). */
  scriptMsByInvoker: Record<string, number>;
  /** Style, layout and paint time of those frames. */
  renderMs: number;
  styleLayoutMs: number;
  topScripts: { source: string; ms: number }[];
}

const round = (x: number) => Math.round(x * 10) / 10;

function summarize(label: string, deltas: number, chunkFrames: number, raw: RawMeasure): Summary {
  const { t0, tEnd } = raw;
  // The frames from the send to the first frame at or after the final render.
  const after = raw.frames.find((t) => t >= tEnd);
  const until = after ?? tEnd;
  const frames = raw.frames.filter((t) => t >= t0 && t <= until);
  const gaps = frames.slice(1).map((t, i) => t - (frames[i] ?? t));
  const sorted = gaps.slice().sort((a, b) => a - b);
  const inSpan = (s: Span) => s.start + s.duration > t0 && s.start < until;
  const tasks = raw.longtasks.filter(inSpan);
  const loafs = raw.loafs.filter(inSpan);
  let loaf: LoafSummary | null = null;
  if (raw.loafSupported) {
    const byInvoker: Record<string, number> = {};
    const bySource: Record<string, number> = {};
    let renderMs = 0;
    let styleLayoutMs = 0;
    for (const l of loafs) {
      const end = l.start + l.duration;
      if (l.renderStart > 0) renderMs += end - l.renderStart;
      if (l.styleAndLayoutStart > 0) styleLayoutMs += end - l.styleAndLayoutStart;
      for (const s of l.scripts) {
        const invoker = s.invoker.replace(/\d+/g, "#");
        byInvoker[invoker] = (byInvoker[invoker] ?? 0) + s.duration;
        bySource[s.source] = (bySource[s.source] ?? 0) + s.duration;
      }
    }
    loaf = {
      count: loafs.length,
      totalMs: round(loafs.reduce((a, l) => a + l.duration, 0)),
      blockingMs: round(loafs.reduce((a, l) => a + l.blocking, 0)),
      scriptMsByInvoker: Object.fromEntries(
        Object.entries(byInvoker)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => [k, round(v)]),
      ),
      renderMs: round(renderMs),
      styleLayoutMs: round(styleLayoutMs),
      topScripts: Object.entries(bySource)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([source, ms]) => ({ source, ms: round(ms) })),
    };
  }
  return {
    label,
    deltas,
    chunkFrames,
    totalMs: round(tEnd - t0),
    framesObserved: frames.length,
    medianFrameMs: round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    framesDropped: gaps.filter((g) => g > DROPPED_GAP_MS).length,
    missedFrames: gaps.reduce((a, g) => a + Math.max(0, Math.round(g / FRAME_MS) - 1), 0),
    longestGapMs: round(sorted[sorted.length - 1] ?? 0),
    longtaskSupported: raw.longtaskSupported,
    longtasks: tasks.length,
    longestTaskMs: round(Math.max(0, ...tasks.map((t) => t.duration))),
    longtaskTotalMs: round(tasks.reduce((a, t) => a + t.duration, 0)),
    reactCommits: raw.commits.filter((t) => t >= t0 && t <= until).length,
    domUpdates: raw.mutations.filter((t) => t >= t0 && t <= until).length,
    loaf,
  };
}

/** The `agent_message_chunk`s the page's sockets received, as the network saw them. */
function watchChunks(page: Page): { count: () => number; text: () => string } {
  let count = 0;
  let text = "";
  page.on("websocket", (ws) => {
    ws.on("framereceived", ({ payload }) => {
      if (typeof payload !== "string" || !payload.includes('"agent_message_chunk"')) return;
      const message = JSON.parse(payload) as { params?: { update?: { content?: { text?: string } } } };
      count++;
      text += message.params?.update?.content?.text ?? "";
    });
  });
  return { count: () => count, text: () => text };
}

/** The mock got one request and answered it. */
async function expectOneRequest(world: World): Promise<void> {
  const requests = await world.requests();
  expect(requests.map((r) => r.status)).toEqual([200]);
}

/** The UI: a new session, the prompt, N deltas rendered. */
async function measureUi(browser: Browser, n: number, profile: boolean): Promise<Summary> {
  const deltas = benchDeltas(n);
  const expected = deltas.join("");
  const world = await World.start(browser, streamScript(deltas));
  try {
    await world.context.addInitScript(installProbe);
    const chunks = watchChunks(world.page);
    await world.open();
    await world.page.getByRole("button", { name: "New session" }).click();
    const box = world.page.getByRole("textbox", { name: "Message" });
    await box.waitFor();
    await box.fill(PROMPT);
    await world.page.getByRole("button", { name: "Send" }).waitFor();
    // Let the session list's refresh and the first paints settle.
    await world.page.waitForTimeout(500);
    let cdp: CDPSession | null = null;
    if (profile) {
      cdp = await world.context.newCDPSession(world.page);
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 250 });
      await cdp.send("Profiler.start");
    }
    await world.page.evaluate(() => window.__riotBench?.armUi());
    await box.press("Enter");
    const raw = await world.page.evaluate((timeout) => {
      const probe = window.__riotBench;
      if (probe === undefined) throw new Error("the benchmark probe is not installed");
      return probe.finished(timeout);
    }, TURN_PATIENCE_MS);
    if (cdp !== null) {
      const { profile: cpu } = await cdp.send("Profiler.stop");
      mkdirSync(RESULTS, { recursive: true });
      writeFileSync(join(RESULTS, "stream-bench-ui.cpuprofile"), JSON.stringify(cpu));
      printProfile(cpu);
      await cdp.detach();
    }

    // Riot delivered exactly the deltas, one frame each …
    expect(chunks.count()).toBe(n);
    expect(chunks.text() === expected).toBe(true);
    // … and the page shows exactly their concatenation: one agent message
    // whose Markdown is the paragraphs of the text, nothing else.
    const rendered = await world.page.evaluate(() => {
      const messages = document.querySelectorAll('[data-testid="agent-message"]');
      const markdown = messages[0]?.querySelector(".markdown");
      const blocks = markdown === null || markdown === undefined ? [] : Array.from(markdown.children);
      return {
        messages: messages.length,
        tags: [...new Set(blocks.map((b) => b.tagName))],
        paragraphs: blocks.map((b) => b.textContent ?? ""),
      };
    });
    expect(rendered.messages).toBe(1);
    expect(rendered.tags).toEqual(["P"]);
    expect(rendered.paragraphs.length).toBe(expected.split("\n\n").length);
    if (rendered.paragraphs.join("\n\n") !== expected) {
      throw new Error(`the rendered text is not the concatenation of the ${n} deltas`);
    }
    await expectOneRequest(world);
    return summarize(`ui, ${n} delta${n === 1 ? "" : "s"}`, n, chunks.count(), raw);
  } catch (e) {
    console.error(`riot serve stderr:\n${world.riotStderr()}`);
    throw e;
  } finally {
    await world.stop();
  }
}

/** The reference: same server, same frames, a page that only receives and parses them. */
async function measureWireOnly(browser: Browser, n: number): Promise<Summary> {
  const deltas = benchDeltas(n);
  const expected = deltas.join("");
  const world = await World.start(browser, streamScript(deltas));
  try {
    await world.context.addInitScript(installProbe);
    const chunks = watchChunks(world.page);
    // A page of the server's own origin that runs no script: the UI's
    // stylesheet, shown as text. Its socket is then same-origin and
    // loopback to loopback, as the UI's is. (Chromium's local network
    // access checks block the socket of a page fulfilled by page.route,
    // and an empty 404 becomes an error page.)
    const served = new URL(world.url);
    const css = readdirSync(join(DIST, "assets")).find((f) => f.endsWith(".css"));
    if (css === undefined) throw new Error(`${DIST}/assets has no stylesheet to use as an empty page`);
    const response = await world.page.goto(`${served.origin}/assets/${css}`);
    expect(response?.status()).toBe(200);
    await world.page.waitForTimeout(500);
    const result = await world.page.evaluate(referenceClient, {
      wsUrl: `ws://${served.host}/acp${served.search}`,
      cwd: world.project,
      prompt: PROMPT,
      meta: { riot: { notifications: ["_riot/usage", "_riot/compaction"] } },
      timeoutMs: TURN_PATIENCE_MS,
    });
    expect(result.stopReason).toBe("end_turn");
    expect(result.chunks).toBe(n);
    expect(chunks.count()).toBe(n);
    if (result.text !== expected) throw new Error(`the reference received other text than the ${n} deltas`);
    await expectOneRequest(world);
    return summarize(`wire only, ${n} deltas`, n, result.chunks, result.raw);
  } catch (e) {
    console.error(`riot serve stderr:\n${world.riotStderr()}`);
    throw e;
  } finally {
    await world.stop();
  }
}

// ---- the report ----

function printProfile(profile: {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  samples?: number[];
  timeDeltas?: number[];
}): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let total = 0;
  samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node === undefined) return;
    const ms = (deltas[i + 1] ?? deltas[i] ?? 0) / 1000;
    const f = node.callFrame;
    const where = f.url === "" ? "" : ` ${f.url.replace(/^.*\//, "")}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
    const key = `${f.functionName || "(anonymous)"}${where}`;
    self.set(key, (self.get(key) ?? 0) + ms);
    total += ms;
  });
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
  console.log(
    [`CPU profile of the UI run (self time, ${round(total)} ms sampled):`]
      .concat(top.map(([k, ms]) => `  ${round(ms).toString().padStart(8)} ms  ${k}`))
      .join("\n"),
  );
}

function report(runs: Summary[]): string {
  const rows: [string, (s: Summary) => string | number][] = [
    ["deltas", (s) => s.deltas],
    ["chunk frames received", (s) => s.chunkFrames],
    ["total ms (send → final text)", (s) => s.totalMs],
    ["frames observed (rAF)", (s) => s.framesObserved],
    ["median frame interval ms", (s) => s.medianFrameMs],
    [`frames dropped (gap > ${round(DROPPED_GAP_MS)} ms)`, (s) => s.framesDropped],
    ["frame slots missed", (s) => s.missedFrames],
    ["longest frame gap ms", (s) => s.longestGapMs],
    ["longest main-thread task ms", (s) => (s.longtaskSupported ? (s.longtasks === 0 ? "< 50" : s.longestTaskMs) : "n/a")],
    ["longtasks (> 50 ms)", (s) => (s.longtaskSupported ? s.longtasks : "n/a")],
    ["longtask total ms", (s) => (s.longtaskSupported ? s.longtaskTotalMs : "n/a")],
    ["React commits", (s) => s.reactCommits],
    ["DOM updates (conversation)", (s) => s.domUpdates],
    ["long animation frames", (s) => s.loaf?.count ?? "n/a"],
    ["  their blocking ms", (s) => s.loaf?.blockingMs ?? "n/a"],
    ["  their style+layout ms", (s) => s.loaf?.styleLayoutMs ?? "n/a"],
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  const col = Math.max(18, ...runs.map((r) => r.label.length + 2));
  const lines = [
    "".padEnd(width) + runs.map((r) => r.label.padStart(col)).join(""),
    ...rows.map(([name, get]) => name.padEnd(width) + runs.map((r) => String(get(r)).padStart(col)).join("")),
  ];
  const [ui, wire] = runs;
  if (ui !== undefined && wire !== undefined) {
    const longest = (s: Summary) => (s.longtasks === 0 ? "< 50" : String(s.longestTaskMs));
    const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? "1.0" : "∞") : (a / b).toFixed(1));
    lines.push(
      "",
      `ui / wire-only: total time ×${ratio(ui.totalMs, wire.totalMs)}, ` +
        `frames dropped ${ui.framesDropped} vs ${wire.framesDropped}, ` +
        `longest task ${longest(ui)} vs ${longest(wire)} ms, ` +
        `longest frame gap ×${ratio(ui.longestGapMs, wire.longestGapMs)}`,
    );
  }
  for (const run of runs) {
    if (run.loaf === null || run.loaf.count === 0) continue;
    const invokers = Object.entries(run.loaf.scriptMsByInvoker)
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(", ");
    const top = run.loaf.topScripts.map((s) => `${s.source} ${s.ms} ms`).join("; ");
    lines.push(`${run.label}: long-frame script time by invoker: ${invokers}`, `  top scripts: ${top}`);
  }
  return lines.join("\n");
}

// ---- the run ----

const missing = missingPrerequisites();

describe("streaming benchmark", () => {
  let browser: Browser;

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`the benchmark needs ${missing.join(", ")}`);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it(`streams ${DELTAS} deltas through riot serve into the UI`, async () => {
    const wire = await measureWireOnly(browser, DELTAS);
    const one = await measureUi(browser, 1, false);
    const ui = await measureUi(browser, DELTAS, PROFILE);
    const runs = [ui, wire, one];
    const text = report(runs);
    console.log(`\nRiot UI streaming benchmark (${new Date().toISOString()}, Chromium headless)\n${text}\n`);
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, "stream-bench.json"), `${JSON.stringify(runs, null, 2)}\n`);
  });
});
