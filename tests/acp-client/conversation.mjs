// A conversation with `riot acp` through the official ACP TypeScript SDK
// (`@agentclientprotocol/sdk`), as an editor would have it. Driven by
// crates/riot-cli/tests/acp_ts_client.rs, which scripts the strict mock
// model server to match the steps below:
//
//   1. initialize → session/new → prompt "Create out.txt": a streamed text
//      chunk, a Write tool call the client is asked about (allow once), the
//      file written byte for byte, the answer, stopReason end_turn.
//   2. set_mode bypass → prompt "Run the slow command": a Bash call that
//      sleeps; cancelled while it runs → stopReason cancelled, the call
//      reported failed, the sleep stopped.
//   3. prompt "Go on": the model is asked again (the strict mock rejects a
//      request whose tool calls and results do not pair) → end_turn.
//   4. A fresh `riot acp` loads the session: the conversation is replayed
//      as updates; then `_riot/shutdown` stops it (exit 0, stdin open).
//
// The first client asks for Riot's `_riot/usage` notification in its
// capabilities' `_meta` and receives one per prompt through the SDK's
// extension-notification handler.
//
// Usage: node conversation.mjs --riot BIN --base-url URL --project DIR
//          --sleep-command CMD
// RIOT_HOME (and the rest of the environment) is passed on to riot.
// Exits 0 when every check passed; otherwise prints what failed and exits 1.

import { spawn } from "node:child_process";
import { readFileSync, readdirSync, existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as acp from "@agentclientprotocol/sdk";

const PATIENCE_MS = 120_000; // only a hang ever reaches it
const WRITTEN = "hello\nwörld\n";

const { values: opts } = parseArgs({
  options: {
    riot: { type: "string" },
    "base-url": { type: "string" },
    project: { type: "string" },
    "sleep-command": { type: "string" },
  },
});
for (const name of ["riot", "base-url", "project", "sleep-command"]) {
  if (!opts[name]) {
    console.error(`conversation.mjs: --${name} is required`);
    process.exit(2);
  }
}
const project = realpathSync(opts.project);

class CheckFailed extends Error {}

function check(condition, what, detail) {
  if (!condition) {
    const shown = detail === undefined ? "" : `\n  got: ${JSON.stringify(detail, null, 2)}`;
    throw new CheckFailed(`${what}${shown}`);
  }
  console.log(`ok - ${what}`);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) {
    throw new CheckFailed(`${what}\n  expected: ${e}\n  got:      ${a}`);
  }
  console.log(`ok - ${what}`);
}

/** Rejects after PATIENCE_MS with `what`, so a hang fails clearly. */
function patiently(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`gave up waiting for ${what}`)), PATIENCE_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function waitUntil(what, test) {
  const deadline = Date.now() + PATIENCE_MS;
  while (!test()) {
    if (Date.now() > deadline) throw new CheckFailed(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Pids of live (not zombie) processes whose argv is exactly `argv`. */
function processes(argv) {
  const wanted = argv.join("\0") + "\0";
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") !== wanted) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Every `riot acp` this script started, so all are stopped on failure. */
const children = new Set();

/** Starts `riot acp` and connects the SDK's client to its stdio. */
function startRiot(label) {
  const args = [
    "acp",
    "--provider",
    "anthropic",
    "--base-url",
    opts["base-url"],
    "--model",
    "mock-model",
  ];
  const child = spawn(opts.riot, args, {
    cwd: project,
    env: process.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.add(child);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  child.on("error", (e) => console.error(`${label}: ${e}`));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  return { child, stream, exited, stderr: () => stderr, label };
}

/** Closes riot's stdin; it must then exit on its own with status 0. */
async function stopRiot(riot) {
  riot.child.stdin.end();
  const { code, signal } = await patiently(riot.exited, `${riot.label} to exit after stdin EOF`);
  check(code === 0, `${riot.label} exits 0 after stdin EOF`, { code, signal, stderr: riot.stderr() });
}

/**
 * A client app that answers permission questions with `answer` (recording
 * them in `asked`) and records every session update in `updates`.
 */
function clientApp({ asked, updates, answer, usage = [] }) {
  return acp
    .client({ name: "riot-conversation-test" })
    .onNotification("_riot/usage", usageParams, ({ params }) => {
      usage.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return answer(params);
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
}

/** Parser of `_riot/usage` params (the SDK takes any `parse`-like). */
function usageParams(raw) {
  const figures = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"];
  if (
    typeof raw?.sessionId !== "string" ||
    typeof raw?.requests !== "number" ||
    !figures.every((f) => Number.isInteger(raw?.usage?.[f]))
  ) {
    throw new Error(`malformed _riot/usage params: ${JSON.stringify(raw)}`);
  }
  return raw;
}

function allowOnce(params) {
  const option = params.options.find((o) => o.kind === "allow_once");
  check(option !== undefined, "the permission request offers allow-once", params.options);
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}

/**
 * Sends a prompt on an ActiveSession and reads its updates until the stop
 * message. `onUpdate` may act while the turn runs (e.g. cancel); it is
 * awaited before the next update is read.
 */
async function runTurn(session, text, onUpdate = async () => {}) {
  const response = session.prompt(text);
  // A failed prompt also rejects here, instead of leaving nextUpdate waiting.
  response.catch(() => {});
  const updates = [];
  for (;;) {
    const message = await patiently(
      Promise.race([session.nextUpdate(), response.then(() => new Promise(() => {}))]),
      `the end of the prompt "${text}"`,
    );
    if (message.kind === "stop") {
      return { updates, stopReason: message.stopReason };
    }
    updates.push(message.update);
    await onUpdate(message.update, updates);
  }
}

const kinds = (updates) => updates.map((u) => u.sessionUpdate);
const ofKind = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind);
const chunkText = (updates, kind = "agent_message_chunk") =>
  ofKind(updates, kind)
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("");

async function firstProcess() {
  const asked = [];
  const updates = [];
  const usage = [];
  const app = clientApp({ asked, updates, answer: allowOnce, usage });
  const riot = startRiot("riot acp");
  const sessionId = await app.connectWith(riot.stream, async (ctx) => {
    const init = await patiently(
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // Riot's extensions are opted into with ACP's `_meta` convention.
        clientCapabilities: { _meta: { riot: { notifications: ["_riot/usage"] } } },
        clientInfo: { name: "riot-conversation-test", version: "0.0.0" },
      }),
      "initialize",
    );
    equal(
      init.agentCapabilities?._meta?.riot?.requests,
      [
        "_riot/shutdown",
        "_riot/mcp_servers",
        "_riot/mcp_restart",
        "_riot/config",
        "_riot/config_set",
        "_riot/files",
        "_riot/session_rename",
        "_riot/session_delete",
        "_riot/set_model",
        "_riot/terminal_write",
        "_riot/terminal_resize",
        "_riot/checkpoints",
        "_riot/rewind",
        "_riot/queue",
        "_riot/background",
        "_riot/background_stop",
        "_riot/deliver",
      ],
      "the agent advertises its _riot requests in its capabilities' _meta",
    );
    equal(init.protocolVersion, acp.PROTOCOL_VERSION, "initialize agrees on the protocol version");
    equal(init.agentCapabilities?.loadSession, true, "the agent can load sessions");
    equal(init.agentInfo?.name, "riot", "the agent names itself riot");

    const session = await patiently(ctx.buildSession(project).start(), "session/new");
    const sessionId = session.sessionId;
    check(typeof sessionId === "string" && sessionId.length > 0, "session/new returns a session id");
    equal(session.modes?.currentModeId, "default", "a new session starts in the default mode");

    // 1. A Write the client allows once.
    const out = join(project, "out.txt");
    const turn1 = await runTurn(session, "Create out.txt");
    equal(turn1.stopReason, "end_turn", "the first prompt ends with end_turn");
    equal(usage.length, 1, "a _riot/usage notification arrives before the prompt's response");
    equal(usage[0].sessionId, sessionId, "the usage names the session");
    equal(usage[0].requests, 2, "the usage covers the turn's two model requests");
    equal(chunkText(turn1.updates), "I will write it.Written.", "the agent's text streams as agent_message_chunk");
    const firstChunk = kinds(turn1.updates).indexOf("agent_message_chunk");
    const firstCall = kinds(turn1.updates).indexOf("tool_call");
    check(firstChunk >= 0 && firstChunk < firstCall, "the text before the call streams before it", kinds(turn1.updates));
    const call = ofKind(turn1.updates, "tool_call")[0];
    equal(call?.toolCallId, "call_write_1", "the Write is announced as a tool_call");
    equal(call?.kind, "edit", "the Write's kind is edit");
    equal(call?.rawInput, { file_path: "out.txt", content: WRITTEN }, "the tool_call carries the model's input");
    equal(asked.length, 1, "the client is asked once");
    equal(asked[0].sessionId, sessionId, "the question names the session");
    equal(asked[0].toolCall.toolCallId, "call_write_1", "the question names the Write");
    const callUpdates = ofKind(turn1.updates, "tool_call_update").filter((u) => u.toolCallId === "call_write_1");
    const done = callUpdates[callUpdates.length - 1];
    equal(done?.status, "completed", "a tool_call_update reports the Write completed");
    const diff = (done?.content ?? []).find((c) => c.type === "diff");
    equal(diff?.path, out, "the update carries the edit as a diff of the absolute path");
    equal(diff?.newText, WRITTEN, "the diff's new text is the file's");
    equal(done?.rawOutput?.type, "file_diff", "rawOutput carries Riot's ui payload");
    check(existsSync(out), "out.txt exists after allow-once");
    check(readFileSync(out).equals(Buffer.from(WRITTEN, "utf8")), "out.txt holds exactly the bytes written", readFileSync(out).toString("hex"));

    // 2. A Bash call cancelled while it runs.
    const setMode = await patiently(
      ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "bypass" }),
      "session/set_mode",
    );
    check(setMode !== undefined, "session/set_mode bypass is accepted");
    const sleepArgv = opts["sleep-command"].split(" ");
    let cancelled = false;
    let sleeping = [];
    const turn2 = await runTurn(session, "Run the slow command", async (update) => {
      if (cancelled || update.sessionUpdate !== "tool_call" || update.toolCallId !== "call_bash_1") return;
      equal(update.kind, "execute", "the Bash call's kind is execute");
      equal(update.status, "in_progress", "in bypass mode the Bash call starts without a question");
      await waitUntil("the sleep to start", () => (sleeping = processes(sleepArgv)).length > 0);
      console.log(`ok - the sleep runs (pid ${sleeping.join(", ")}); cancelling`);
      cancelled = true;
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    });
    check(cancelled, "the Bash call was seen running", kinds(turn2.updates));
    equal(turn2.stopReason, "cancelled", "the cancelled prompt ends with stopReason cancelled");
    const bashUpdates = ofKind(turn2.updates, "tool_call_update").filter((u) => u.toolCallId === "call_bash_1");
    equal(bashUpdates[bashUpdates.length - 1]?.status, "failed", "the interrupted Bash call is reported failed");
    equal(asked.length, 1, "bypass mode asks nothing");
    await waitUntil("the sleep to be stopped", () => processes(sleepArgv).length === 0);
    console.log("ok - the sleep was stopped");

    // 3. The next prompt goes to the strict mock, which rejects unpaired calls.
    const turn3 = await runTurn(session, "Go on");
    equal(turn3.stopReason, "end_turn", "the prompt after the cancel ends with end_turn (pairing intact)");
    equal(usage.length, 3, "every prompt, the cancelled one too, reports its usage");
    equal(chunkText(turn3.updates), "Back again.", "the model's next answer streams");
    session.dispose();
    return sessionId;
  });
  await stopRiot(riot);
  return { sessionId, liveUpdates: updates };
}

async function loadInFreshProcess(sessionId) {
  const asked = [];
  const updates = [];
  const app = clientApp({
    asked,
    updates,
    answer: (params) => {
      throw new CheckFailed(`a loaded session asked a question: ${JSON.stringify(params)}`);
    },
  });
  const riot = startRiot("the second riot acp");
  await app.connectWith(riot.stream, async (ctx) => {
    await patiently(
      ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
      "initialize",
    );
    const loaded = await patiently(
      ctx.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] }),
      "session/load",
    );
    // A permissive mode is not carried over into a new process.
    equal(loaded?.modes?.currentModeId, "default", "the loaded session reports its mode");
    // A custom request through the SDK's generic `request`.
    const stopped = await patiently(ctx.request("_riot/shutdown", { _meta: { by: "conversation.mjs" } }), "_riot/shutdown");
    equal(stopped, { cancelledTurns: 0 }, "_riot/shutdown replies with the turns it cancelled");
  });
  const { code, signal } = await patiently(riot.exited, "riot acp to exit after _riot/shutdown");
  check(code === 0, "riot acp exits 0 after _riot/shutdown, stdin still open", { code, signal, stderr: riot.stderr() });
  riot.child.stdin.end();
  equal(asked.length, 0, "loading a session asks no questions");
  const replay = updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  equal(updates.length, replay.length, "every replayed update names the loaded session");
  const users = ofKind(replay, "user_message_chunk").map((u) => u.content.text);
  equal(users, ["Create out.txt", "Run the slow command", "Go on"], "the load replays the person's prompts");
  equal(chunkText(replay), "I will write it.Written.Back again.", "the load replays the agent's text");
  const calls = ofKind(replay, "tool_call").map((u) => [u.toolCallId, u.kind]);
  equal(calls, [["call_write_1", "edit"], ["call_bash_1", "execute"]], "the load replays both tool calls");
  const ends = ofKind(replay, "tool_call_update").map((u) => [u.toolCallId, u.status]);
  equal(ends, [["call_write_1", "completed"], ["call_bash_1", "failed"]], "the load replays both calls' ends");
  const order = replay
    .map((u) =>
      u.sessionUpdate === "user_message_chunk"
        ? `user:${u.content.text}`
        : u.sessionUpdate === "tool_call"
          ? `call:${u.toolCallId}`
          : u.sessionUpdate === "tool_call_update"
            ? `end:${u.toolCallId}`
            : null,
    )
    .filter((x) => x !== null);
  equal(
    order,
    [
      "user:Create out.txt",
      "call:call_write_1",
      "end:call_write_1",
      "user:Run the slow command",
      "call:call_bash_1",
      "end:call_bash_1",
      "user:Go on",
    ],
    "the load replays the conversation in order",
  );
}

function stopAll() {
  for (const child of children) {
    child.kill("SIGKILL");
  }
}

process.on("exit", stopAll);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    stopAll();
    process.exit(1);
  });
}

try {
  const { sessionId } = await firstProcess();
  await loadInFreshProcess(sessionId);
  console.log("conversation.mjs: all checks passed");
  process.exit(0);
} catch (e) {
  const what = e instanceof CheckFailed ? e.message : (e?.stack ?? String(e));
  console.error(`conversation.mjs: FAILED: ${what}`);
  stopAll();
  process.exit(1);
}
