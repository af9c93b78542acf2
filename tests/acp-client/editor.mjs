// Riot as an editor's agent at full ACP fidelity, driven by the official
// ACP TypeScript SDK (`@agentclientprotocol/sdk`) over one transport —
// `riot acp` (stdio) or `riot serve` (WebSocket). Driven by
// crates/riot-cli/tests/acp_editor.rs, which scripts the strict mock model
// server to match the steps below and checks what the model saw.
//
//   1. The editor's file system: the client offers fs/read_text_file and
//      fs/write_text_file and holds an unsaved buffer of notes.txt. A Read
//      sees the buffer, an Edit arrives as fs/write_text_file (the disk is
//      untouched), a binary file and a file outside the project are read by
//      Riot itself.
//   2. Config options: session/new lists the model and mode options;
//      set_config_option switches the model (seen by the next request);
//      `/model` typed as a prompt arrives as config_option_update;
//      session/set_mode still works.
//   3. usage_update after each model request, its cost the session's (as
//      `_riot/usage` reports it); session_info_update with the title.
//   4. Lifecycle: session/close, then session/resume (nothing replayed) and
//      a prompt that continues the conversation; session/delete.
//   5. Authentication (a second Riot, whose endpoint needs a key):
//      authMethods; session/new → auth required; authenticate with a wrong
//      key → the prompt fails saying the key was refused; authenticate with
//      the right key → it works; logout → auth required again.
//
// Every message Riot sends is validated against the ACP JSON schema of the
// pinned SDK (conformance.mjs); any violation fails the run.
//
// Usage: node [--experimental-websocket] editor.mjs --riot BIN
//          --transport stdio|ws --base-url URL --project DIR --outside FILE
//          --auth-base-url URL --auth-home DIR --proxy URL
//          --wrong-key KEY --right-key KEY
// Exits 0 when every check passed; otherwise prints what failed and exits 1.

import { spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

import { conformance, validating } from "./conformance.mjs";

const PATIENCE_MS = 120_000; // only a hang ever reaches it
const MODEL_A = "claude-haiku-4-5";
const MODEL_B = "claude-sonnet-4-5";
const ON_DISK = "saved on disk\n";
const BUFFER = "unsaved buffer\n";

const { values: opts } = parseArgs({
  options: {
    riot: { type: "string" },
    transport: { type: "string" },
    "base-url": { type: "string" },
    project: { type: "string" },
    outside: { type: "string" },
    "auth-base-url": { type: "string" },
    "auth-home": { type: "string" },
    proxy: { type: "string" },
    "wrong-key": { type: "string" },
    "right-key": { type: "string" },
  },
});
for (const name of ["riot", "transport", "base-url", "project", "outside", "auth-base-url", "auth-home", "proxy", "wrong-key", "right-key"]) {
  if (!opts[name]) {
    console.error(`editor.mjs: --${name} is required`);
    process.exit(2);
  }
}
const project = realpathSync(opts.project);
const outside = realpathSync(opts.outside);
const notes = join(project, "notes.txt");

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

/** The JSON-RPC error a request failed with. */
async function failure(promise, what) {
  try {
    const result = await patiently(promise, what);
    throw new CheckFailed(`${what} succeeded: ${JSON.stringify(result)}`);
  } catch (e) {
    if (e instanceof CheckFailed) throw e;
    return e;
  }
}

const children = new Set();

/**
 * Starts Riot on the chosen transport and returns an SDK stream to it
 * (validated), with how to stop it.
 */
async function startRiot(label, { home, env = {}, args }) {
  const command = opts.transport === "ws" ? ["serve", ...args, "--port", "0", "--exit-on-stdin-eof"] : ["acp", ...args];
  const childEnv = { ...process.env, ...env };
  if (home) childEnv.RIOT_HOME = home;
  const child = spawn(opts.riot, command, { cwd: project, env: childEnv, stdio: ["pipe", "pipe", "pipe"] });
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
  let stream;
  if (opts.transport === "ws") {
    const lines = createInterface({ input: child.stdout });
    const line = await patiently(
      new Promise((resolve) => lines.once("line", resolve)),
      `${label} to print its address`,
    );
    const address = line.replace(/^Riot is serving at http:\/\//, "");
    check(address !== line, `${label} prints its address`, line);
    stream = createWebSocketStream(`ws://${address.replace("/?", "/acp?")}`);
  } else {
    stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  }
  return { child, stream: validating(stream), exited, stderr: () => stderr, label };
}

async function stopRiot(riot) {
  riot.child.stdin.end();
  const { code, signal } = await patiently(riot.exited, `${riot.label} to exit`);
  check(code === 0, `${riot.label} exits 0`, { code, signal, stderr: riot.stderr() });
}

const ofKind = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind);
const chunkText = (updates) =>
  ofKind(updates, "agent_message_chunk")
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("");

/** Sends a prompt and reads the session's updates until its stop. */
async function runTurn(session, text) {
  const response = session.prompt(text);
  response.catch(() => {});
  const updates = [];
  for (;;) {
    const message = await patiently(
      Promise.race([session.nextUpdate(), response.then(() => new Promise(() => {}))]),
      `the end of the prompt "${text}"`,
    );
    if (message.kind === "stop") return { updates, stopReason: message.stopReason };
    updates.push(message.update);
  }
}

function usageParams(raw) {
  if (typeof raw?.sessionId !== "string") throw new Error(`malformed _riot/usage: ${JSON.stringify(raw)}`);
  return raw;
}

/** The editor: its unsaved buffers, and a log of what Riot asked of it. */
function editorClient({ buffers, fsLog, updates, usage }) {
  return acp
    .client({ name: "riot-editor-test" })
    .onNotification("_riot/usage", usageParams, ({ params }) => {
      usage.push(params);
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      fsLog.push({ method: "read", path: params.path });
      const content = buffers.get(params.path) ?? readFileSync(params.path, "utf8");
      return { content };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      fsLog.push({ method: "write", path: params.path, content: params.content });
      // The editor keeps the edit in its buffer: the disk is not touched.
      buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const option = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    });
}

const option = (options, id) => options?.find((o) => o.id === id);

async function editorSession() {
  const buffers = new Map([[notes, BUFFER]]);
  const fsLog = [];
  const updates = [];
  const usage = [];
  const app = editorClient({ buffers, fsLog, updates, usage });
  const riot = await startRiot(`riot (${opts.transport})`, {
    args: ["--provider", "anthropic", "--base-url", opts["base-url"], "--model", MODEL_A],
  });
  await app.connectWith(riot.stream, async (ctx) => {
    const init = await patiently(
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: true, writeTextFile: true },
          _meta: { riot: { notifications: ["_riot/usage"] } },
        },
        clientInfo: { name: "riot-editor-test", version: "0.0.0" },
      }),
      "initialize",
    );
    const caps = init.agentCapabilities?.sessionCapabilities ?? {};
    check(caps.resume && caps.close && caps.delete && caps.list, "the agent offers resume, close, delete and list", caps);
    check(init.agentCapabilities?.auth?.logout !== undefined, "the agent offers logout", init.agentCapabilities?.auth);

    // 1. The editor's file system.
    const session = await patiently(ctx.buildSession(project).start(), "session/new");
    const sessionId = session.sessionId;
    const options = session.sessionResponse?.configOptions ?? session.configOptions;
    const model = option(options, "model");
    equal(model?.category, "model", "the model option has category model");
    equal(model?.currentValue, MODEL_A, "the model option shows the session's model");
    check(model?.options.some((o) => o.value === MODEL_B), `the model option offers ${MODEL_B}`, model?.options);
    const mode = option(options, "mode");
    equal(mode?.category, "mode", "the mode option has category mode");
    equal(mode?.currentValue, "default", "the mode option shows the default mode");

    const turn1 = await runTurn(session, "Fix notes.txt");
    equal(turn1.stopReason, "end_turn", "the edit turn ends with end_turn");
    const reads = fsLog.filter((e) => e.method === "read").map((e) => e.path);
    check(reads.length >= 1 && reads.every((p) => p === notes), "Read went through fs/read_text_file for notes.txt only", fsLog);
    const writes = fsLog.filter((e) => e.method === "write");
    equal(writes, [{ method: "write", path: notes, content: "edited buffer\n" }], "the Edit arrived as one fs/write_text_file of the edited buffer");
    equal(readFileSync(notes, "utf8"), ON_DISK, "the disk copy is untouched: the editor holds the edit");
    const edit = ofKind(turn1.updates, "tool_call_update").filter((u) => u.toolCallId === "call_edit_1").pop();
    equal(edit?.status, "completed", "the Edit completed");
    const blobRead = ofKind(turn1.updates, "tool_call_update").filter((u) => u.toolCallId === "call_read_2").pop();
    equal(blobRead?.status, "completed", "the Read of a binary file completed (read by Riot)");
    const outsideRead = ofKind(turn1.updates, "tool_call_update").filter((u) => u.toolCallId === "call_read_3").pop();
    equal(outsideRead?.status, "completed", "the Read outside the project completed (read by Riot)");
    equal(chunkText(turn1.updates), "Edited.", "the answer streams");

    // 3. Usage and title.
    const usages = ofKind(turn1.updates, "usage_update");
    equal(usages.length, 4, "one usage_update per model request");
    const last = usages[usages.length - 1];
    check(last.size === 200000 && last.used > 0, "usage_update carries the context used and its size", last);
    equal(usage.length, 1, "one _riot/usage for the turn");
    check(typeof usage[0].costUsd === "number" && usage[0].costUsd > 0, "the session has a cost", usage[0]);
    equal(last.cost, { amount: usage[0].costUsd, currency: "USD" }, "the last usage_update's cost is the session's");
    const info = ofKind(turn1.updates, "session_info_update");
    equal(info.map((u) => u.title), ["Fix notes.txt"], "session_info_update names the session after its first prompt");

    // 2. Config options: a model switch seen by the next request.
    const switched = await patiently(
      ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: MODEL_B }),
      "set_config_option model",
    );
    equal(option(switched.configOptions, "model")?.currentValue, MODEL_B, "set_config_option answers with the new model");
    const badModel = await failure(
      ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "no-such-model" }),
      "set_config_option with an unknown model",
    );
    check(/unknown model `no-such-model`; use one of/.test(badModel.message), "an unknown model is refused with the choices", badModel);
    const turn2 = await runTurn(session, "Which model?");
    equal(chunkText(turn2.updates), "Sonnet here.", "the next prompt is answered");
    equal(ofKind(turn2.updates, "config_option_update").length, 0, "the client's own change is not echoed");
    const before = updates.length;
    const turn3 = await runTurn(session, `/model ${MODEL_A}`);
    equal(turn3.stopReason, "end_turn", "/model ends its turn");
    await waitUntil("config_option_update after /model", () =>
      updates.slice(before).some((n) => n.update.sessionUpdate === "config_option_update"),
    );
    const change = updates.slice(before).find((n) => n.update.sessionUpdate === "config_option_update");
    equal(option(change.update.configOptions, "model")?.currentValue, MODEL_A, "/model arrives as config_option_update");
    const byMode = updates.length;
    await patiently(ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "accept-edits" }), "session/set_mode");
    await waitUntil("config_option_update after set_mode", () =>
      updates.slice(byMode).some((n) => n.update.sessionUpdate === "config_option_update"),
    );
    const modeChange = updates.slice(byMode).find((n) => n.update.sessionUpdate === "config_option_update");
    equal(option(modeChange.update.configOptions, "mode")?.currentValue, "accept-edits", "session/set_mode still works and shows as the mode option");

    // 4. Lifecycle: close, resume without replay, go on, delete.
    session.dispose();
    await patiently(ctx.request(acp.methods.agent.session.close, { sessionId }), "session/close");
    const closedPrompt = await failure(
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Still there?" }] }),
      "a prompt to a closed session",
    );
    check(/unknown session/.test(closedPrompt.message), "a closed session takes no prompt", closedPrompt);
    const beforeResume = updates.length;
    const resumed = await patiently(
      ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: project, mcpServers: [] }),
      "session/resume",
    );
    equal(option(resumed.configOptions, "model")?.currentValue, MODEL_A, "the resumed session keeps its model");
    const replayed = updates
      .slice(beforeResume)
      .filter((n) => ["user_message_chunk", "agent_message_chunk", "tool_call"].includes(n.update.sessionUpdate));
    equal(replayed.length, 0, "session/resume replays nothing");
    const again = ctx.attachSession({ sessionId });
    const turn4 = await runTurn(again, "After resume");
    equal(chunkText(turn4.updates), "Resumed.", "the resumed session goes on");
    again.dispose();
    await patiently(ctx.request(acp.methods.agent.session.delete, { sessionId }), "session/delete");
    const listed = await patiently(ctx.request(acp.methods.agent.session.list, { cwd: project }), "session/list");
    equal(listed.sessions.filter((s) => s.sessionId === sessionId).length, 0, "a deleted session is no longer listed");
  });
  await stopRiot(riot);
}

async function authFlow() {
  const updates = [];
  const app = editorClient({ buffers: new Map(), fsLog: [], updates, usage: [] });
  const riot = await startRiot(`riot needing a key (${opts.transport})`, {
    home: opts["auth-home"],
    // The endpoint has a name, so it needs a key; the proxy reaches the
    // mock model server.
    env: { HTTP_PROXY: opts.proxy, http_proxy: opts.proxy, NO_PROXY: "", no_proxy: "" },
    args: ["--provider", "anthropic", "--base-url", opts["auth-base-url"], "--model", MODEL_A],
  });
  await app.connectWith(riot.stream, async (ctx) => {
    const init = await patiently(
      ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
      "initialize",
    );
    const ids = (init.authMethods ?? []).map((m) => m.id);
    equal(ids, ["anthropic-api-key", "openai-api-key", "none"], "initialize lists an API-key method per provider and none");
    const required = await failure(ctx.buildSession(project).start(), "session/new without a key");
    equal(required.code, -32000, "session/new without a key answers auth required");
    check(/authenticate with `anthropic-api-key`/.test(required.message), "the error names the method to use", required);
    const none = await failure(ctx.request(acp.methods.agent.authenticate, { methodId: "none" }), "authenticate none");
    equal(none.code, -32000, "`none` does not do for an endpoint that needs a key");
    const noKey = await failure(
      ctx.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key" }),
      "authenticate without the key",
    );
    check(/_meta\.riot\.apiKey/.test(noKey.message), "authenticate without a key says where it goes", noKey);

    // A wrong key: stored, then refused by the endpoint, clearly.
    await patiently(
      ctx.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key", _meta: { riot: { apiKey: opts["wrong-key"] } } }),
      "authenticate (wrong key)",
    );
    const session = await patiently(ctx.buildSession(project).start(), "session/new after authenticate");
    const refused = await failure(session.prompt("Hello"), "a prompt with a wrong key");
    equal(refused.code, -32000, "a refused key answers auth required");
    check(/refused the API key/.test(refused.message), "the error says the key was refused", refused);
    check(!refused.message.includes(opts["wrong-key"]), "the error does not echo the key", refused);
    session.dispose();

    // The right key: works.
    await patiently(
      ctx.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key", _meta: { riot: { apiKey: opts["right-key"] } } }),
      "authenticate (right key)",
    );
    const fresh = await patiently(ctx.buildSession(project).start(), "session/new with the right key");
    const turn = await runTurn(fresh, "Hello again");
    equal(chunkText(turn.updates), "Authenticated.", "with the right key the prompt is answered");
    fresh.dispose();

    await patiently(ctx.request(acp.methods.agent.logout, {}), "logout");
    const again = await failure(ctx.buildSession(project).start(), "session/new after logout");
    equal(again.code, -32000, "after logout session/new answers auth required again");
  });
  await stopRiot(riot);
  const log = readFileSync(join(opts["auth-home"], "logs/riot.log"), "utf8");
  check(!log.includes(opts["wrong-key"]) && !log.includes(opts["right-key"]), "no key reaches the log");
}

function stopAll() {
  for (const child of children) child.kill("SIGKILL");
}
process.on("exit", stopAll);

try {
  await editorSession();
  await authFlow();
  const checked = Object.values(conformance.checked).reduce((a, b) => a + b, 0);
  if (conformance.violations.length > 0) {
    throw new CheckFailed(
      `${conformance.violations.length} message(s) from Riot do not match the ACP schema:\n${JSON.stringify(conformance.violations.slice(0, 5), null, 2)}`,
    );
  }
  console.log(`ok - all ${checked} messages from Riot match the ACP schema (${JSON.stringify(conformance.checked)})`);
  console.log("editor.mjs: all checks passed");
  process.exit(0);
} catch (e) {
  const what = e instanceof CheckFailed ? e.message : (e?.stack ?? String(e));
  console.error(`editor.mjs: FAILED: ${what}`);
  stopAll();
  process.exit(1);
}
