import type { RequestPermissionRequest, SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";

import { connectToRiot, RiotError, type BridgeEvents } from "./connection";
import { endpointFromPage } from "./endpoint";
import type { CompactionNotice, TurnUsage } from "./riot-ext";
import { FakeRiot, UNCONFIGURED, rankFiles, type Answer } from "./testing/fake-riot";

const TOKEN = "c0ffee";
const PROJECT = "/home/me/project";
const PAGE = `http://127.0.0.1:41234/?token=${TOKEN}`;

/** Records everything the bridge reports; answers questions with `answer`. */
function recorder(answer: Answerer) {
  const seen = {
    updates: [] as SessionNotification[],
    usage: [] as TurnUsage[],
    compaction: [] as CompactionNotice[],
    questions: [] as RequestPermissionRequest[],
    closed: [] as (Error | null)[],
  };
  const events: BridgeEvents = {
    update: (n) => seen.updates.push(n),
    usage: (u) => seen.usage.push(u),
    compaction: (c) => seen.compaction.push(c),
    closed: (e) => seen.closed.push(e),
    permission: (request, withdrawn) => {
      seen.questions.push(request);
      return answer(request, withdrawn);
    },
  };
  return { seen, events };
}

type Answerer = (request: RequestPermissionRequest, withdrawn: AbortSignal) => Promise<string | null>;

const never: Answerer = () => new Promise<string | null>(() => {});

async function connected(riot: FakeRiot, answer: Answerer = never) {
  const { seen, events } = recorder(answer);
  const connection = await connectToRiot(endpointFromPage(PAGE), events, riot.connect);
  return { connection, seen };
}

const WRITE_CALL = {
  toolCallId: "call_write_1",
  title: "Write out.txt",
  kind: "edit" as const,
  status: "pending" as const,
  rawInput: { file_path: "out.txt", content: "hello\n" },
};
const OPTIONS = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" as const },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" as const },
];

describe("the bridge against a strict fake riot serve", () => {
  it("is refused without the right token", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    const { events } = recorder(never);
    const wrong = endpointFromPage("http://127.0.0.1:41234/?token=nope");
    await expect(connectToRiot(wrong, events, riot.connect)).rejects.toThrow(
      /^Cannot connect to Riot \(.*\)\. Is `riot serve` running\? Open the address it printed/,
    );
    expect(riot.received).toEqual([]);
  });

  it("initializes as an ACP v1 client that asks for Riot's notifications", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    const { connection } = await connected(riot);
    expect(connection.agent.agentInfo?.name).toBe("riot");
    expect(connection.riot).toEqual({
      requests: [
        "_riot/shutdown",
        "_riot/config",
        "_riot/config_set",
        "_riot/files",
        "_riot/session_rename",
        "_riot/session_delete",
        "_riot/set_model",
        "_riot/checkpoints",
        "_riot/rewind",
        "_riot/terminal_write",
        "_riot/terminal_resize",
        "_riot/queue",
        "_riot/background",
        "_riot/background_stop",
        "_riot/deliver",
      ],
      notifications: ["_riot/usage", "_riot/compaction", "_riot/terminal", "_riot/queue_update", "_riot/background_update"],
    });
    expect(riot.received).toEqual(["initialize"]);
    expect(riot.violations).toEqual([]);
  });

  it("passes Riot's refusals on in Riot's words", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    const { connection } = await connected(riot);
    await expect(connection.newSession("project")).rejects.toMatchObject({
      code: -32602,
      message: "cwd project is not an absolute path",
    });
    const { sessionId } = await connection.newSession(PROJECT);
    await expect(connection.setMode(sessionId, "unattended")).rejects.toThrow(/unknown mode `unattended`/);
    await expect(connection.prompt(sessionId, "   ")).rejects.toThrow("the prompt is empty");
    await expect(connection.prompt("no-such", "hi")).rejects.toThrow("unknown session `no-such`");
  });

  it("streams a turn's updates in order, with its usage before the stop reason", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(async (turn) => {
      for (const text of ["Hel", "lo ", "**world**"]) {
        await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
      }
      return "end_turn";
    });
    const { connection, seen } = await connected(riot);
    const opened = await connection.newSession(PROJECT);
    expect(opened.modes?.currentModeId).toBe("default");
    let usageAtStop = -1;
    const stop = await connection.prompt(opened.sessionId, "hi").then((r) => {
      usageAtStop = seen.usage.length;
      return r;
    });
    expect(stop).toBe("end_turn");
    expect(usageAtStop).toBe(1);
    const text = seen.updates
      .map((n) => n.update)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
      .join("");
    expect(text).toBe("Hello **world**");
    expect(seen.usage[0]).toEqual({
      sessionId: opened.sessionId,
      model: "mock-model",
      requests: 1,
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 3,
      cacheWriteTokens: 2,
      side: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costUsd: 0.0005,
    });
  });

  it("answers a permission question with the option the person chose", async () => {
    const answers: Answer[] = [];
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(
      async (turn) => {
        answers.push(await turn.ask(WRITE_CALL, OPTIONS));
        return "end_turn";
      },
      async (turn) => {
        answers.push(await turn.ask(WRITE_CALL, OPTIONS));
        return "end_turn";
      },
    );
    const choices = ["reject_once", null];
    const { connection, seen } = await connected(riot, async () => choices.shift() ?? null);
    const { sessionId } = await connection.newSession(PROJECT);
    await connection.prompt(sessionId, "write it");
    await connection.prompt(sessionId, "write it again");
    expect(answers).toEqual([{ optionId: "reject_once" }, "cancelled"]);
    expect(seen.questions[0]?.toolCall.rawInput).toEqual(WRITE_CALL.rawInput);
    expect(riot.violations).toEqual([]);
  });

  it("never answers with an option Riot did not offer", async () => {
    let outcome: unknown;
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(async (turn) => {
      outcome = await turn.ask(WRITE_CALL, OPTIONS).catch((e: unknown) => e);
      return "end_turn";
    });
    const { connection } = await connected(riot, async () => "allow_always");
    const { sessionId } = await connection.newSession(PROJECT);
    await connection.prompt(sessionId, "write it");
    // The client answered with an error, not with a selection.
    expect(outcome).toMatchObject({
      code: -32603,
      data: { details: '"allow_always" is not one of the offered options' },
    });
    expect(riot.violations).toEqual([]);
  });

  it("cancels a running turn, and a question Riot withdraws reaches the UI as withdrawn", async () => {
    let withdrawnSeen = false;
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(async (turn) => {
      await turn.send({ sessionUpdate: "tool_call", toolCallId: "call_bash_1", title: "sleep 30", kind: "execute", status: "in_progress" });
      const answer = await turn.ask(WRITE_CALL, OPTIONS);
      return answer === "cancelled" ? "cancelled" : "end_turn";
    });
    const { connection } = await connected(riot, (_request, withdrawn) => {
      // The person does not answer; the turn is stopped instead.
      setTimeout(() => void connection.cancel(sessionId), 0);
      return new Promise((resolve) => {
        withdrawn.addEventListener("abort", () => {
          withdrawnSeen = true;
          resolve(null);
        });
      });
    });
    const { sessionId } = await connection.newSession(PROJECT);
    expect(await connection.prompt(sessionId, "run it")).toBe("cancelled");
    expect(withdrawnSeen).toBe(true);
    expect(riot.received).toContain("session/cancel");
  });

  it("sends images as ACP image blocks after the text, and none to a Riot that does not take them", async () => {
    const seen: { text: string; images: readonly { mimeType: string; data: string }[] }[] = [];
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(
      async (turn) => {
        seen.push({ text: turn.text, images: turn.images });
        return "end_turn";
      },
      async (turn) => {
        seen.push({ text: turn.text, images: turn.images });
        return "end_turn";
      },
    );
    const { connection } = await connected(riot);
    expect(connection.takesImages).toBe(true);
    const { sessionId } = await connection.newSession(PROJECT);
    const png = { mimeType: "image/png", data: "iVBORw0KGgo=" };
    expect(await connection.prompt(sessionId, "what is this?", [png, { mimeType: "image/jpeg", data: "/9j/" }])).toBe("end_turn");
    // An image alone is a prompt: no empty text block goes with it.
    expect(await connection.prompt(sessionId, "", [png])).toBe("end_turn");
    expect(seen).toEqual([
      { text: "what is this?", images: [png, { mimeType: "image/jpeg", data: "/9j/" }] },
      { text: "", images: [png] },
    ]);
    expect(riot.violations).toEqual([]);

    const old = new FakeRiot({ token: TOKEN, projects: [PROJECT], images: false });
    const before = await connected(old);
    expect(before.connection.takesImages).toBe(false);
    const session = await before.connection.newSession(PROJECT);
    await expect(before.connection.prompt(session.sessionId, "see", [png])).rejects.toThrow(
      "This Riot does not take images in prompts; update riot to send them.",
    );
    expect(old.received).not.toContain("session/prompt");
  });

  it("rejects a second prompt while one runs, as Riot does", async () => {
    let release = () => {};
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(
      (turn) =>
        new Promise((resolve) => {
          release = () => resolve("end_turn");
          turn.cancelled.addEventListener("abort", () => resolve("cancelled"));
        }),
    );
    const { connection } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    const first = connection.prompt(sessionId, "one");
    await new Promise((r) => setTimeout(r, 10));
    await expect(connection.prompt(sessionId, "two")).rejects.toThrow(/already running/);
    release();
    expect(await first).toBe("end_turn");
  });

  it("loads a session: the replay arrives before the load resolves", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    riot.addSession("old", PROJECT, [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Create out.txt" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Written." } },
    ]);
    const { connection, seen } = await connected(riot);
    expect((await connection.listSessions()).map((s) => s.sessionId)).toEqual(["old"]);
    await expect(connection.loadSession("old", "relative")).rejects.toThrow(/not an absolute path/);
    const loaded = await connection.loadSession("old", PROJECT);
    expect(loaded.modes?.currentModeId).toBe("default");
    expect(seen.updates.map((n) => [n.sessionId, n.update.sessionUpdate])).toEqual([
      ["old", "user_message_chunk"],
      ["old", "agent_message_chunk"],
    ]);
  });

  it("delivers _riot/compaction and reports a dropped connection as an error", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(async (turn) => {
      await turn.compaction({ status: "compacting", strategy: "summary" });
      await turn.compaction({ status: "compacted", strategy: "summary", tokensBefore: 120000, tokensAfter: 30000 });
      // A malformed one is not passed on.
      await turn.compaction({ status: "exploded", strategy: "summary" });
      return "end_turn";
    });
    const { connection, seen } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    await connection.prompt(sessionId, "go");
    expect(seen.compaction).toEqual([
      { sessionId, status: "compacting", strategy: "summary", tokensBefore: null, tokensAfter: null },
      { sessionId, status: "compacted", strategy: "summary", tokensBefore: 120000, tokensAfter: 30000 },
    ]);
    riot.sockets[0]?.close(1011, "riot crashed");
    await new Promise((r) => setTimeout(r, 10));
    expect(seen.closed).toHaveLength(1);
    expect(seen.closed[0]).toBeInstanceOf(RiotError);
  });

  it("reports its own close as no error", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    const { connection, seen } = await connected(riot);
    connection.close();
    await new Promise((r) => setTimeout(r, 10));
    expect(seen.closed).toEqual([null]);
  });
});

describe("Riot's _riot/... requests", () => {
  it("reads the model configuration, never a key, and says why it is not ready", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT], config: UNCONFIGURED });
    const { connection } = await connected(riot);
    expect(await connection.modelConfig()).toEqual({
      provider: null,
      baseUrl: null,
      model: null,
      key: "missing",
      keySource: null,
      ready: false,
      problem: "No model endpoint is configured: choose a provider and a model.",
    });
    // Nothing can start before the configuration is ready.
    await expect(connection.newSession(PROJECT)).rejects.toThrow(
      "No model endpoint is configured: choose a provider and a model.",
    );
    await expect(connection.modelConfig("project")).rejects.toThrow("cwd project is not an absolute path");
    expect(riot.received).toEqual(["initialize", "_riot/config", "session/new", "_riot/config"]);
  });

  it("saves a configuration: the key goes to the credentials, the answer only says it is there", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT], config: UNCONFIGURED });
    const { connection } = await connected(riot);
    const saved = await connection.setModelConfig({
      provider: "anthropic",
      model: " claude-x ",
      baseUrl: null,
      apiKey: "sk-secret",
    });
    expect(saved).toEqual({
      provider: "anthropic",
      baseUrl: null,
      model: "claude-x",
      key: "present",
      keySource: "credentials.json (anthropic)",
      ready: true,
      problem: null,
    });
    expect(riot.credentials).toEqual({ anthropic: "sk-secret" });
    expect(JSON.stringify(riot.sockets[0]?.sent)).not.toContain("sk-secret");
    // Without a key the saved one is kept; a local server needs none.
    const local = await connection.setModelConfig({ provider: "openai", model: "qwen", baseUrl: "http://127.0.0.1:8000/v1/" });
    expect(local).toMatchObject({ provider: "openai", baseUrl: "http://127.0.0.1:8000/v1", key: "not-needed", ready: true });
    const opened = await connection.newSession(PROJECT);
    expect(opened.model).toBe("qwen");
  });

  it("passes the kernel's reason for refusing a configuration on, word for word", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT], config: UNCONFIGURED });
    const { connection } = await connected(riot);
    await expect(connection.setModelConfig({ provider: "gemini" as "openai", model: "m", baseUrl: null })).rejects.toMatchObject({
      code: -32602,
      message: "unknown provider `gemini`: use anthropic, openai or openai-responses",
    });
    await expect(connection.setModelConfig({ provider: "openai", model: "  ", baseUrl: null })).rejects.toThrow(
      "the model is empty: name the model to use",
    );
    await expect(connection.setModelConfig({ provider: "openai", model: "m", baseUrl: "ftp://host" })).rejects.toThrow(
      "base URL `ftp://host` is not an http(s) URL: use one like https://api.example.com/v1",
    );
    expect(riot.config).toMatchObject({ provider: null, model: null });
  });

  it("lists project files for a mention, best match first, hidden ones left out", async () => {
    const riot = new FakeRiot({
      token: TOKEN,
      projects: [PROJECT],
      files: { [PROJECT]: ["README.md", "docs/maintainers.md", "src/domain.rs", "src/main.rs", ".env", ".git/config"] },
    });
    const { connection } = await connected(riot);
    expect(await connection.files(PROJECT, "main")).toEqual(["src/main.rs", "docs/maintainers.md", "src/domain.rs"]);
    expect(await connection.files(PROJECT, "", 2)).toEqual(["README.md", "src/main.rs"]);
    expect(await connection.files(PROJECT, "zzz")).toEqual([]);
    await expect(connection.files("/elsewhere", "a")).rejects.toThrow("cwd /elsewhere: No such file or directory");
  });

  it("renames and deletes sessions; a running one is not deleted", async () => {
    let release = () => {};
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(
      () => new Promise((resolve) => (release = () => resolve("end_turn"))),
    );
    const { connection } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    const turn = connection.prompt(sessionId, "Fix the parser");
    await new Promise((r) => setTimeout(r, 5));
    expect((await connection.listSessions()).map((s) => s.title)).toEqual(["Fix the parser"]);
    await connection.renameSession(sessionId, "Parser work");
    expect((await connection.listSessions()).map((s) => s.title)).toEqual(["Parser work"]);
    await expect(connection.deleteSession(sessionId)).rejects.toThrow(
      `session \`${sessionId}\` is running a prompt; stop it before deleting it`,
    );
    release();
    await turn;
    await connection.deleteSession(sessionId);
    expect(await connection.listSessions()).toEqual([]);
    await expect(connection.renameSession(sessionId, "x")).rejects.toThrow(`unknown session \`${sessionId}\``);
  });

  it("reports a session's model from _meta.riot.model and changes it for the next request", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(async () => "end_turn");
    riot.addSession("old", PROJECT, [], { model: "old-model" });
    const { connection, seen } = await connected(riot);
    expect((await connection.loadSession("old", PROJECT)).model).toBe("old-model");
    const opened = await connection.newSession(PROJECT);
    expect(opened.model).toBe("mock-model");
    await connection.setModel(opened.sessionId, "bigger-model");
    await connection.prompt(opened.sessionId, "hi");
    expect(seen.usage.map((u) => u.model)).toEqual(["bigger-model"]);
  });

  it("refuses a request Riot did not advertise, without sending it", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT], requests: ["_riot/shutdown"] });
    const { connection } = await connected(riot);
    expect(connection.supports("_riot/files")).toBe(false);
    await expect(connection.files(PROJECT, "a")).rejects.toThrow(
      "This Riot does not offer _riot/files; update riot to use it.",
    );
    expect(riot.received).toEqual(["initialize"]);
  });
});

describe("rankFiles (the fake's ranking)", () => {
  it("needs every query character in order and prefers file names", () => {
    expect(rankFiles(["src/main.rs", "lib/amin.rs", "main/x.txt"], "mai", 10)).toEqual(["src/main.rs", "main/x.txt"]);
  });
});

describe("checkpoints and rewind (_riot/checkpoints, _riot/rewind)", () => {
  const user = (text: string) => ({ sessionUpdate: "user_message_chunk" as const, content: { type: "text" as const, text } });
  const agent = (text: string) => ({ sessionUpdate: "agent_message_chunk" as const, content: { type: "text" as const, text } });

  function twoTurns() {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] });
    riot.addSession("old", PROJECT, [user("fix the parser"), agent("Fixed."), user("now add tests\nfor the lexer"), agent("Added.")]);
    riot.setChanges("old", { 1: ["src/parser.rs", "NOTES.md"], 2: ["tests/lexer.rs"] }, ["NOTES.md"]);
    return riot;
  }

  it("lists the user messages, numbered from 1, with the files each turn changed", async () => {
    const riot = twoTurns();
    const { connection } = await connected(riot);
    expect(await connection.checkpoints("old")).toEqual([
      {
        number: 1,
        text: "fix the parser",
        atMs: 1_767_225_600_000,
        inHistory: true,
        files: ["src/parser.rs", "NOTES.md"],
        calls: 2,
        unfinished: 0,
      },
      { number: 2, text: "now add tests\nfor the lexer", atMs: 1_767_225_660_000, inHistory: true, files: ["tests/lexer.rs"], calls: 1, unfinished: 0 },
    ]);
    await expect(connection.checkpoints("nope")).rejects.toThrow("unknown session `nope`");
    expect(riot.violations).toEqual([]);
  });

  it("sends the scope as Riot's flags and reads what the rewind did", async () => {
    const riot = twoTurns();
    const { connection } = await connected(riot);
    const files = await connection.rewind("old", 2, { scope: "files" });
    expect(files).toEqual({
      to: 2,
      files: { restored: ["tests/lexer.rs"], removed: [], conflicts: [], forced: [], notes: [] },
      conversation: false,
      prompt: "now add tests\nfor the lexer",
      summary: "Rewound to just before message 2. Restored: tests/lexer.rs.",
    });
    const both = await connection.rewind("old", 1);
    expect(both.files?.conflicts).toEqual(["NOTES.md"]);
    expect(both.files?.forced).toEqual([]);
    expect(both.conversation).toBe(true);
    expect(riot.sessions.get("old")?.history).toEqual([]);
    const undone = await connection.undoRewind("old");
    expect(undone.summary).toBe("Undid the last rewind. The conversation is back. Restored: src/parser.rs, tests/lexer.rs.");
    const talk = await connection.rewind("old", 2, { scope: "conversation", force: true });
    expect(talk.files).toBeNull();
    expect(riot.rewinds).toEqual([
      { sessionId: "old", to: 2, filesOnly: true },
      { sessionId: "old", to: 1 },
      { sessionId: "old", undo: true },
      { sessionId: "old", to: 2, conversationOnly: true, force: true },
    ]);
    expect(riot.violations).toEqual([]);
  });

  it("passes on Riot's refusal of a rewind while a turn runs", async () => {
    let release = () => {};
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT] }).script(
      () => new Promise((resolve) => (release = () => resolve("end_turn"))),
    );
    const { connection } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    const turn = connection.prompt(sessionId, "go");
    await expect.poll(() => riot.sessions.get(sessionId)?.running !== null).toBe(true);
    await expect(connection.rewind(sessionId, 1)).rejects.toThrow(
      "a turn is running in this session; cancel it or wait for its end, then rewind",
    );
    await expect(connection.checkpoints(sessionId)).rejects.toThrow(
      "a turn is running in this session; ask for its checkpoints after the turn",
    );
    release();
    expect(await turn).toBe("end_turn");
    expect((await connection.rewind(sessionId, 1)).conversation).toBe(true);
  });

  it("refuses both before asking a Riot that does not offer them", async () => {
    const riot = new FakeRiot({ token: TOKEN, projects: [PROJECT], requests: ["_riot/shutdown"] });
    const { connection } = await connected(riot);
    await expect(connection.checkpoints("old")).rejects.toThrow(
      "This Riot does not offer _riot/checkpoints; update riot to use it.",
    );
    await expect(connection.rewind("old", 1)).rejects.toThrow("This Riot does not offer _riot/rewind; update riot to use it.");
    expect(riot.received).toEqual(["initialize"]);
  });
});
