// The editor's terminals (issue 28, docs/editors.md): the official ACP
// TypeScript SDK (`@agentclientprotocol/sdk`) plays an editor that
// advertises the `terminal` capability and serves terminal/create,
// terminal/output, terminal/wait_for_exit, terminal/kill and
// terminal/release by running the command with node's child_process.
// Driven by crates/riot-cli/tests/acp_ts_terminal.rs, which scripts the
// strict mock model server (one Bash call, then an answer) and checks that
// the command's output reached the model.
//
//   initialize (terminal: true) → session/new → prompt "Run it": the
//   permission question (allow once), then terminal/create (command `env`
//   … `bash -c CMD`, cwd the project) → terminal/wait_for_exit →
//   terminal/output → terminal/release, in that order; the tool call
//   embeds the terminal while it runs and keeps it when done.
//
// Every message Riot sends is validated against the ACP JSON schema of the
// pinned SDK (conformance.mjs).
//
// Usage: node terminal.mjs --riot BIN --base-url URL --project DIR
//          --command CMD
// Exits 0 when every check passed; otherwise prints what failed and exits 1.

import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

import * as acp from "@agentclientprotocol/sdk";

import { conformance, validating } from "./conformance.mjs";

const PATIENCE_MS = 120_000; // only a hang ever reaches it
/** Set in the terminals this editor starts: the command shows it ran here. */
const EDITOR_MARK = "js-editor";

const { values: opts } = parseArgs({
  options: {
    riot: { type: "string" },
    "base-url": { type: "string" },
    project: { type: "string" },
    command: { type: "string" },
  },
});
for (const name of ["riot", "base-url", "project", "command"]) {
  if (!opts[name]) {
    console.error(`terminal.mjs: --${name} is required`);
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

function patiently(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`gave up waiting for ${what}`)), PATIENCE_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const children = new Set();

/** Kills a terminal's whole process group (it was started detached). */
function killGroup(child) {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function stopAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) killGroup(child);
    child.kill("SIGKILL");
  }
}

/** The editor's terminals: id → { child, output, exit (a promise) }. */
const terminals = new Map();
/** Every request Riot made of the editor, in order: [method, params]. */
const log = [];
const updates = [];

function terminal(params) {
  const t = terminals.get(params.terminalId);
  if (t === undefined) throw new Error(`unknown terminal ${params.terminalId}`);
  return t;
}

function exitStatus(code, signal) {
  return signal ? { exitCode: null, signal } : { exitCode: code, signal: null };
}

function editorApp() {
  return acp
    .client({ name: "riot-terminal-test" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      log.push(["session/request_permission", params]);
      const option = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      log.push(["terminal/create", params]);
      const env = { ...process.env, EDITOR_MARK };
      for (const { name, value } of params.env ?? []) env[name] = value;
      const child = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env,
        // An editor's terminal has an input; Riot's command must not read it.
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      children.add(child);
      const t = { child, output: "", exited: null };
      t.exit = new Promise((resolve) => {
        child.on("close", (code, signal) => {
          children.delete(child);
          t.exited = exitStatus(code, signal);
          resolve(t.exited);
        });
      });
      for (const stream of [child.stdout, child.stderr]) {
        stream.setEncoding("utf8");
        stream.on("data", (d) => (t.output += d));
      }
      const terminalId = `term-${terminals.size + 1}`;
      terminals.set(terminalId, t);
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.output, ({ params }) => {
      log.push(["terminal/output", params]);
      const t = terminal(params);
      return { output: t.output, truncated: false, exitStatus: t.exited };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
      log.push(["terminal/wait_for_exit", params]);
      return await terminal(params).exit;
    })
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      log.push(["terminal/kill", params]);
      killGroup(terminal(params).child);
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      log.push(["terminal/release", params]);
      const t = terminal(params);
      if (t.exited === null) killGroup(t.child);
      terminals.delete(params.terminalId);
      return {};
    });
}

async function run() {
  const child = spawn(
    opts.riot,
    ["acp", "--provider", "anthropic", "--base-url", opts["base-url"], "--model", "mock-model"],
    { cwd: project, env: process.env, stdio: ["pipe", "pipe", "pipe"] },
  );
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
  const stream = validating(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));

  await editorApp().connectWith(stream, async (ctx) => {
    await patiently(
      ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { terminal: true },
        clientInfo: { name: "riot-terminal-test", version: "0.0.0" },
      }),
      "initialize",
    );
    const session = await patiently(ctx.buildSession(project).start(), "session/new");
    const response = session.prompt("Run it");
    response.catch(() => {});
    let stopReason;
    for (;;) {
      const message = await patiently(
        Promise.race([session.nextUpdate(), response.then(() => new Promise(() => {}))]),
        "the end of the prompt",
      );
      if (message.kind === "stop") {
        stopReason = message.stopReason;
        break;
      }
    }
    equal(stopReason, "end_turn", "the turn ends normally");
  });

  equal(
    log.map(([method]) => method),
    [
      "session/request_permission",
      "terminal/create",
      "terminal/wait_for_exit",
      "terminal/output",
      "terminal/release",
    ],
    "the permission is asked, then the command runs in one terminal: create, wait, output, release",
  );
  const create = log[1][1];
  equal(create.cwd, project, "the terminal starts in the project");
  equal(create.command, "env", "the editor is handed env, which drops the model keys");
  equal(create.args.slice(-3), ["bash", "-c", opts.command], "the command is Riot's bash -c");
  check(
    create.args.join(" ").includes("-u ANTHROPIC_API_KEY"),
    "the model key is removed from the terminal's environment",
    create.args,
  );
  for (const [method, params] of log.slice(2)) {
    equal(params.terminalId, "term-1", `${method} names the terminal`);
  }
  const calls = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_bash_1");
  const isTerm1 = (c) => c?.type === "terminal" && c?.terminalId === "term-1";
  check(
    calls.some((u) => u.status === "in_progress" && u.content?.length === 1 && isTerm1(u.content[0])),
    "the tool call embeds the terminal while it runs",
    calls,
  );
  const last = calls.at(-1);
  equal(last.status, "completed", "the call completes");
  // ACP embeds a terminal only before its release: the final update leaves
  // the call's content (the terminal) as it is rather than sending it again.
  check(last.content === undefined, "the finished call keeps its terminal, not sent again after the release", last);
  equal(
    calls.filter((u) => u.content?.some(isTerm1)).length,
    1,
    "the terminal is embedded once, before its release",
  );
  equal(conformance.violations, [], "every message Riot sent conforms to the ACP schema");

  child.stdin.end();
  const { code } = await patiently(exited, "riot acp to exit after stdin EOF");
  check(code === 0, "riot acp exits 0 after stdin EOF", { code, stderr });
}

process.on("exit", stopAll);
try {
  await run();
  console.log("terminal.mjs: all checks passed");
  process.exit(0);
} catch (e) {
  const what = e instanceof CheckFailed ? e.message : (e?.stack ?? String(e));
  console.error(`terminal.mjs: FAILED: ${what}`);
  stopAll();
  process.exit(1);
}
