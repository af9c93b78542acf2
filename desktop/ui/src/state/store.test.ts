import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FAKE_REQUESTS, FakeRiot, UNCONFIGURED, type Answer, type FakeTurn } from "../bridge/testing/fake-riot";
import type { FrameScheduler } from "./frame-batcher";
import { DELIVER, type BackgroundTask } from "../bridge/parallel";
import { resumable, Store, type StoreHooks } from "./store";

const PROJECT = "/home/me/project";

/** Frames that come only when the test says so. */
function manualFrames() {
  const waiting = new Set<() => void>();
  const scheduler: FrameScheduler = {
    schedule(run) {
      waiting.add(run);
      return () => waiting.delete(run);
    },
  };
  const frame = () => {
    const runs = [...waiting];
    waiting.clear();
    runs.forEach((run) => run());
  };
  return { scheduler, frame };
}

async function setup(riot: FakeRiot, hooks: StoreHooks = {}) {
  const frames = manualFrames();
  const store = new Store(PROJECT, frames.scheduler, hooks);
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), store.events, riot.connect);
  await store.attach(connection);
  /** Runs frames until `test` holds. */
  const until = async (test: () => boolean) => {
    for (let i = 0; i < 200 && !test(); i++) {
      await new Promise((r) => setTimeout(r, 1));
      frames.frame();
    }
    expect(test()).toBe(true);
  };
  return { store, frames, until, connection };
}

describe("Store", () => {
  it("applies a turn's deltas once per frame, not as they arrive", async () => {
    let release = () => {};
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      for (const t of ["a", "b", "c"]) await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });
      await new Promise<void>((resolve) => (release = resolve));
      return "end_turn";
    });
    const { store, frames, until } = await setup(riot);
    await store.newSession();
    const sent = store.send("hi");
    await new Promise((r) => setTimeout(r, 5));
    // Three deltas arrived; none is shown before the frame.
    expect(store.current()?.conversation.items.map((i) => i.kind)).toEqual(["user"]);
    let renders = 0;
    store.subscribe(() => renders++);
    frames.frame();
    expect(renders).toBe(1);
    expect(store.current()?.conversation.items[1]).toMatchObject({ kind: "agent", text: "abc" });
    expect(store.current()?.running).toBe(true);
    release();
    await sent;
    await until(() => store.current()?.running === false);
    expect(store.current()?.lastUsage?.inputTokens).toBe(10);
    expect(store.current()?.totals.requests).toBe(1);
  });

  it("says what to do when no project directory is set", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { store } = await setup(riot);
    store.setProjectDir("  ");
    await store.newSession();
    expect(store.getState().error).toBe("Choose a project directory (an absolute path) first.");
    expect(riot.received).not.toContain("session/new");
  });

  it("stop answers the open question with cancelled, cancels the turn and says it stopped", async () => {
    const answers: Answer[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      answers.push(
        await turn.ask({ toolCallId: "c1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } }, [
          { optionId: "allow_once", name: "Allow", kind: "allow_once" },
          { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        ]),
      );
      return turn.cancelled.aborted ? "cancelled" : "end_turn";
    });
    const { store, until } = await setup(riot);
    await store.newSession();
    const sent = store.send("write it");
    await until(() => store.getState().permissions.length === 1);
    await store.stop();
    await sent;
    await until(() => store.current()?.running === false);
    expect(answers).toEqual(["cancelled"]);
    expect(riot.received).toContain("session/cancel");
    expect(store.getState().permissions).toEqual([]);
    const last = store.current()?.conversation.items.at(-1);
    expect(last).toMatchObject({ kind: "notice", text: "Stopped." });
  });

  it("closes a question when its turn ends without an answer", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      // Riot stops waiting (a timeout): the request is withdrawn.
      const gaveUp = new AbortController();
      setTimeout(() => gaveUp.abort(), 20);
      await Promise.race([
        turn.ask({ toolCallId: "c1", title: "Bash", kind: "execute", rawInput: { command: "make" } }, [
          { optionId: "allow_once", name: "Allow", kind: "allow_once" },
        ]),
        new Promise((r) => gaveUp.signal.addEventListener("abort", r)),
      ]);
      return "end_turn";
    });
    const { store, until } = await setup(riot);
    await store.newSession();
    const sent = store.send("build");
    await until(() => store.getState().permissions.length === 1);
    await sent;
    await until(() => store.getState().permissions.length === 0 && store.current()?.running === false);
  });

  it("loads a listed session and shows its replayed conversation", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    riot.addSession("old", PROJECT, [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Create out.txt" } },
      { sessionUpdate: "tool_call", toolCallId: "w1", title: "Write out.txt", kind: "edit", status: "pending" },
      { sessionUpdate: "tool_call_update", toolCallId: "w1", status: "completed" },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Written." } },
    ]);
    const { store, until } = await setup(riot);
    expect(store.getState().sessions.map((s) => s.sessionId)).toEqual(["old"]);
    await store.openSession("old", PROJECT);
    await until(() => store.current()?.loading === false);
    expect(store.current()?.conversation.items.map((i) => i.kind)).toEqual(["user", "tool", "agent"]);
    expect(store.current()?.conversation.modes?.currentModeId).toBe("default");
  });

  it("shows compaction while it runs and notes it when done", async () => {
    let finish = () => {};
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      await turn.compaction({ status: "compacting", strategy: "summary" });
      await new Promise<void>((resolve) => (finish = resolve));
      await turn.compaction({ status: "compacted", strategy: "summary", tokensBefore: 120000, tokensAfter: 30000 });
      return "end_turn";
    });
    const { store, until } = await setup(riot);
    await store.newSession();
    const sent = store.send("/compact");
    await until(() => store.current()?.compacting === true);
    finish();
    await sent;
    await until(() => store.current()?.running === false);
    expect(store.current()?.compacting).toBe(false);
    expect(store.current()?.conversation.items.at(-1)).toMatchObject({
      kind: "notice",
      text: "Context compacted (summarized): 120,000 → 30,000 tokens.",
    });
  });
});

/** A turn that ends when the test says so; records the prompts it got. */
/** Handlers for a second client that only sends. */
function quietEvents() {
  return {
    update: () => {},
    usage: () => {},
    compaction: () => {},
    closed: () => {},
    permission: () => new Promise<string | null>(() => {}),
  };
}

function gated(prompts: string[]) {
  const releases: (() => void)[] = [];
  const script = (turn: FakeTurn) =>
    new Promise<"end_turn" | "cancelled">((resolve) => {
      prompts.push(turn.text);
      const end = () => resolve("end_turn");
      releases.push(end);
      turn.cancelled.addEventListener("abort", () => {
        releases.splice(releases.indexOf(end), 1);
        resolve("cancelled");
      });
    });
  const release = () => releases.shift()?.();
  return { script, release };
}

const userTexts = (store: Store) =>
  (store.current()?.conversation.items ?? []).flatMap((i) => (i.kind === "user" ? [i.text] : []));

describe("Store: the queue, kept by Riot", () => {
  it("pushes what is sent during a turn to Riot's queue; what is still waiting at the end goes as one prompt", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    const { store, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("first");
    await until(() => prompts.length === 1);
    await store.send("A");
    await store.send("B");
    expect(riot.queued(id).map((m) => m.text)).toEqual(["A", "B"]);
    expect(store.current()?.queue.map((q) => [q.text, q.origin])).toEqual([
      ["A", "person"],
      ["B", "person"],
    ]);
    release();
    await until(() => prompts.length === 2);
    expect(prompts).toEqual(["first", "A\n\nB"]);
    expect(riot.queued(id)).toEqual([]);
    release();
    await until(() => store.current()?.running === false);
    expect(userTexts(store)).toEqual(["first", "A\n\nB"]);
    expect(store.current()?.queue).toEqual([]);
    expect(riot.violations).toEqual([]);
  });

  it("shows a message Riot delivered into the running turn where it went in, and no longer as queued", async () => {
    const prompts: string[] = [];
    let riot: FakeRiot;
    let release = () => {};
    const script = async (turn: FakeTurn) => {
      prompts.push(turn.text);
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Looking." } });
      await new Promise<void>((resolve) => (release = resolve));
      // The loop, after a batch of tool results.
      await riot.deliverQueued(turn.sessionId);
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Checked b too." } });
      return "end_turn" as const;
    };
    riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script);
    const { store, until } = await setup(riot);
    await store.newSession();
    void store.send("check a");
    await until(() => prompts.length === 1);
    await store.send("and b");
    await until(() => store.current()?.queue.length === 1);
    release();
    await until(() => store.current()?.running === false);
    // Delivered, so not sent again as a prompt.
    expect(prompts).toEqual(["check a"]);
    expect(store.current()?.queue).toEqual([]);
    expect(
      store.current()?.conversation.items.map((i) => (i.kind === "user" ? `user:${i.text}` : i.kind)),
    ).toEqual(["user:check a", "agent", "user:and b", "agent"]);
    expect(riot.violations).toEqual([]);
  });

  it("edits and removes waiting messages in Riot's queue, and shows Riot's refusal for one already delivered", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    const { store, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("first");
    await until(() => prompts.length === 1);
    await store.send("A");
    await store.send("B");
    await store.send("C");
    const [a, b] = store.current()?.queue ?? [];
    await store.removeQueued(id, b?.id ?? "");
    await store.editQueued(id, a?.id ?? "", "A, edited");
    expect(riot.queued(id).map((m) => m.text)).toEqual(["A, edited", "C"]);
    expect(store.current()?.queue.map((q) => q.text)).toEqual(["A, edited", "C"]);
    await store.removeQueued(id, b?.id ?? "");
    expect(store.getState().error).toBe(
      `there is no queued message \`${b?.id}\` in this session: it was delivered or removed; the queued ones are ${riot
        .queued(id)
        .map((m) => `\`${m.id}\``)
        .join(", ")}`,
    );
    release();
    await until(() => prompts.length === 2);
    release();
    await until(() => store.current()?.running === false);
    expect(prompts).toEqual(["first", "A, edited\n\nC"]);
  });

  it("refuses images during a turn, saying why, and queues nothing", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script);
    const { store, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("what broke?");
    await until(() => prompts.length === 1);
    const photo = { name: "photo.jpg", mimeType: "image/jpeg", data: "/9j/", bytes: 3 };
    await store.send("and this", [photo]);
    expect(store.getState().error).toBe(
      "A turn is running and images cannot wait in the queue: send them when the turn ends.",
    );
    expect(riot.queued(id)).toEqual([]);
    release();
    await until(() => store.current()?.running === false);
    expect(prompts).toEqual(["what broke?"]);
  });

  it("holds the queue after a stop until the person resumes it", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    const { store, until } = await setup(riot);
    await store.newSession();
    void store.send("first");
    await until(() => prompts.length === 1);
    await store.send("A");
    await store.stop();
    await until(() => store.current()?.running === false);
    expect(store.current()?.queueHeld).toBe(true);
    expect(store.current()?.queue.map((q) => q.text)).toEqual(["A"]);
    expect(prompts).toEqual(["first"]);
    void store.resumeQueue(store.current()?.id ?? "");
    await until(() => prompts.length === 2);
    release();
    await until(() => store.current()?.running === false);
    expect(prompts).toEqual(["first", "A"]);
    expect(store.current()?.queueHeld).toBe(false);
  });

  it("finds the queue again after a reload, held, and sends it with the person's next prompt", async () => {
    const prompts: string[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      prompts.push(turn.text);
      return "end_turn";
    });
    riot.addSession("s-old", PROJECT, [
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "earlier" } },
    ]);
    await riot.enqueue("s-old", "written before the reload", "person");
    const { store, until } = await setup(riot);
    await store.openSession("s-old", PROJECT);
    await until(() => store.current()?.loading === false && store.current()?.queue.length === 1);
    expect(store.current()?.queueHeld).toBe(true);
    await store.send("and now this");
    await until(() => store.current()?.running === false && prompts.length === 1);
    expect(prompts).toEqual(["written before the reload\n\nand now this"]);
    expect(riot.queued("s-old")).toEqual([]);
  });
});

describe("Store: background agents", () => {
  const task = (over: Partial<BackgroundTask> = {}): BackgroundTask => ({
    id: "bg_1",
    agent: "explore",
    description: "find the config",
    state: "running",
    calls: 0,
    last: null,
    result: null,
    ...over,
  });

  it("lists them on opening, follows their updates, and stops one", async () => {
    // A Riot without `_riot/deliver`: a result waits in the queue for the next prompt.
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== DELIVER) });
    riot.addSession("s-old", PROJECT, []);
    await riot.backgroundTask("s-old", task());
    const { store, until } = await setup(riot);
    await store.openSession("s-old", PROJECT);
    await until(() => store.current()?.background.length === 1);
    await riot.backgroundTask("s-old", task({ calls: 1, last: "explore: Read src/config.rs" }));
    await until(() => store.current()?.background[0]?.calls === 1);
    expect(store.current()?.background[0]?.last).toBe("explore: Read src/config.rs");
    const stopping = store.stopBackground("s-old", "bg_1");
    expect(store.current()?.stoppingTasks).toEqual(["bg_1"]);
    await stopping;
    await until(() => store.current()?.background[0]?.state === "stopped");
    expect(store.current()?.stoppingTasks).toEqual([]);
    expect(store.current()?.background[0]?.result).toBe("The background task was stopped before it finished.");
    // Its result waits for the agent as Riot's message, not the person's.
    await until(() => store.current()?.queue.length === 1);
    expect(store.current()?.queue[0]?.origin).toBe("riot");
    expect(store.current()?.queueHeld).toBe(false);
    // Stopping it again is refused in Riot's words.
    await store.stopBackground("s-old", "bg_1");
    expect(store.getState().error).toBe("background task `bg_1` has already ended (stopped); there is nothing to stop");
    expect(riot.violations).toEqual([]);
  });
});

describe("Store: notifications through its hooks", () => {
  it("reports a turn's end once the session is idle, by its title, and a question by its tool's title", async () => {
    const ended: unknown[] = [];
    const questions: unknown[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(
      async (turn) => {
        await turn.ask({ toolCallId: "c1", title: "Write out.txt", kind: "edit" }, [
          { optionId: "allow_once", name: "Allow", kind: "allow_once" },
        ]);
        return "end_turn";
      },
      async () => "end_turn",
    );
    const { store, until } = await setup(riot, {
      turnEnded: (e) => ended.push(e),
      question: (q) => questions.push(q),
    });
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("Write the file");
    void store.send("Then say so");
    await until(() => store.getState().permissions.length === 1);
    expect(questions).toEqual([{ sessionId: id, title: "Write out.txt" }]);
    store.answer(store.getState().permissions[0]?.key ?? "", "allow_once");
    await until(() => ended.length === 1);
    // One notification, after the queued prompt ran too.
    expect(ended).toEqual([{ sessionId: id, label: "Write the file", outcome: "done" }]);
    expect(userTexts(store)).toEqual(["Write the file", "Then say so"]);
  });

  it("says a stopped turn stopped", async () => {
    const ended: unknown[] = [];
    const { script } = gated([]);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script);
    const { store, until } = await setup(riot, { turnEnded: (e) => ended.push(e) });
    await store.newSession();
    void store.send("Long job");
    await until(() => store.current()?.running === true);
    await store.stop();
    await until(() => ended.length === 1);
    expect(ended).toEqual([{ sessionId: store.current()?.id, label: "Long job", outcome: "stopped" }]);
  });
});

describe("Store: sessions, models and settings", () => {
  it("renames a session and deletes one, closing it", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    riot.addSession("old", PROJECT, [], { title: "Old work" });
    const { store, until } = await setup(riot);
    await store.openSession("old", PROJECT);
    await until(() => store.current()?.loading === false);
    await store.renameSession("old", "  Parser fixes ");
    expect(store.getState().sessions.map((s) => s.title)).toEqual(["Parser fixes"]);
    // Blank or unchanged titles ask Riot nothing.
    await store.renameSession("old", "   ");
    await store.renameSession("old", "Parser fixes");
    expect(riot.received.filter((m) => m === "_riot/session_rename")).toHaveLength(1);
    await store.deleteSession("old");
    expect(store.getState().sessions).toEqual([]);
    expect(store.getState().currentId).toBeNull();
    expect(store.getState().open).toEqual({});
  });

  it("shows Riot's refusal to delete a session whose turn runs", async () => {
    const { script, release } = gated([]);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script);
    const { store, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("work");
    await until(() => store.current()?.running === true);
    await store.deleteSession(id);
    expect(store.getState().error).toBe(`session \`${id}\` is running a prompt; stop it before deleting it`);
    expect(store.getState().currentId).toBe(id);
    release();
  });

  it("knows the session's model and changes it; usage adds the models it saw", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async () => "end_turn");
    const { store, until } = await setup(riot);
    await store.newSession();
    expect(store.current()?.model).toBe("mock-model");
    await store.setModel(" other-model ");
    expect(store.current()?.model).toBe("other-model");
    expect(store.current()?.models).toEqual(["mock-model", "other-model"]);
    void store.send("hi");
    await until(() => store.current()?.running === false && store.current()?.lastUsage !== null);
    expect(store.current()?.lastUsage?.model).toBe("other-model");
    expect(riot.received.filter((m) => m === "_riot/set_model")).toHaveLength(1);
  });

  it("opens onboarding when no model is ready and closes it after a save that makes one ready", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], config: UNCONFIGURED });
    const { store } = await setup(riot);
    expect(store.getState().settings).toEqual({ purpose: "onboarding", saving: false, error: null });
    expect(store.getState().modelConfig?.problem).toBe("No model endpoint is configured: choose a provider and a model.");
    await store.saveSettings({ provider: "openai", model: "gpt-x", baseUrl: "ftp://x" });
    expect(store.getState().settings?.error).toBe(
      "base URL `ftp://x` is not an http(s) URL: use one like https://api.example.com/v1",
    );
    // Saved, but no key: still not ready, so the form stays with Riot's reason.
    await store.saveSettings({ provider: "openai", model: "gpt-x", baseUrl: null });
    expect(store.getState().settings).toEqual({ purpose: "onboarding", saving: false, error: null });
    expect(store.getState().modelConfig?.problem).toBe("No API key for openai: set $OPENAI_API_KEY or save a key here.");
    await store.saveSettings({ provider: "openai", model: "gpt-x", baseUrl: null, apiKey: "sk-1" });
    expect(store.getState().settings).toBeNull();
    expect(store.getState().modelConfig).toMatchObject({ ready: true, key: "present", model: "gpt-x" });
    expect(riot.credentials).toEqual({ openai: "sk-1" });
  });

  it("does not open onboarding when a model is ready, nor offer what Riot does not list", async () => {
    const ready = await setup(new FakeRiot({ token: "t", projects: [PROJECT] }));
    expect(ready.store.getState().settings).toBeNull();
    expect(ready.store.getState().features).toEqual({
      config: true,
      files: true,
      rename: true,
      delete: true,
      setModel: true,
      rewind: true,
      images: true,
      terminals: true,
      resizeTerminals: true,
      queue: true,
      background: true,
      deliver: true,
    });
    const old = new FakeRiot({ token: "t", projects: [PROJECT], config: UNCONFIGURED, requests: ["_riot/shutdown"], images: false });
    const { store } = await setup(old);
    expect(store.getState().features).toEqual({
      config: false,
      files: false,
      rename: false,
      delete: false,
      setModel: false,
      rewind: false,
      images: false,
      terminals: false,
      resizeTerminals: false,
      queue: false,
      background: false,
      deliver: false,
    });
    expect(store.getState().settings).toBeNull();
    expect(old.received).toEqual(["initialize", "session/list"]);
  });
});

describe("Store: a background result between turns goes to the model in a turn of Riot's (_riot/deliver)", () => {
  const done = (id: string, result: string): BackgroundTask => ({
    id,
    agent: "explore",
    description: "find the config",
    state: "completed",
    calls: 1,
    last: "explore: Read src/config.rs",
    result,
  });
  /** What Riot queues for `done(id, result)` (crates/riot-kernel/src/background.rs). */
  const resultText = (id: string, result: string) =>
    `<background-task id="${id}" agent="explore" status="completed">\n${result}\n</background-task>\nThe background task "find the config" has ended; this is its result.`;
  const shown = (store: Store) =>
    (store.current()?.conversation.items ?? []).map((i) => (i.kind === "tool" ? "tool" : `${i.kind}:${i.text}`));
  const delivers = (riot: FakeRiot) => riot.received.filter((m) => m === DELIVER).length;
  /** Lets frames and messages go by, for asserting that something did not happen. */
  const settle = async (frames: { frame(): void }) => {
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 1));
      frames.frame();
    }
  };

  it("asks for one turn when a result arrives while idle: running meanwhile, the reply streamed in, turnEnded once", async () => {
    const ended: unknown[] = [];
    const turns: [string, string][] = [];
    let release = () => {};
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      turns.push([turn.source, turn.text]);
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "bg_1 says: src/config.rs." } });
      await new Promise<void>((resolve) => (release = resolve));
      return "end_turn";
    });
    const { store, until } = await setup(riot, { turnEnded: (e) => ended.push(e) });
    await store.newSession();
    const id = store.current()?.id ?? "";
    await riot.backgroundTask(id, done("bg_1", "The config is src/config.rs."));
    await until(() => shown(store).includes("agent:bg_1 says: src/config.rs."));
    expect(store.current()?.running).toBe(true);
    expect(store.current()?.startedAt).not.toBeNull();
    expect(delivers(riot)).toBe(1);
    expect(turns).toEqual([["deliver", resultText("bg_1", "The config is src/config.rs.")]]);
    // No prompt bubble: the person wrote nothing; the result shows where it went in.
    expect(shown(store)).toEqual(["notice:Background task bg_1's result reached the agent.", "agent:bg_1 says: src/config.rs."]);
    expect(store.current()?.queue).toEqual([]);
    expect(ended).toEqual([]);
    release();
    await until(() => store.current()?.running === false && ended.length === 1);
    expect(ended).toEqual([{ sessionId: id, label: PROJECT, outcome: "done" }]);
    expect(store.current()?.startedAt).toBeNull();
    expect(store.current()?.lastUsage?.inputTokens).toBe(10);
    expect(delivers(riot)).toBe(1);
    expect(riot.received).not.toContain("session/prompt");
    expect(riot.violations).toEqual([]);
  });

  it("stays idle with nothing added when Riot answers stopReason null (another client's turn runs); that turn's loop takes the result", async () => {
    const ended: unknown[] = [];
    let riot: FakeRiot;
    let release = () => {};
    riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      await new Promise<void>((resolve) => (release = resolve));
      // The other turn's loop, after a batch of tool results.
      await riot.deliverQueued(turn.sessionId);
      return "end_turn";
    });
    const { store, frames, until } = await setup(riot, { turnEnded: (e) => ended.push(e) });
    await store.newSession();
    const id = store.current()?.id ?? "";
    // A second client of the same riot serve runs a prompt in the session; this page does not see it run.
    const quiet = {
      update: () => {},
      usage: () => {},
      compaction: () => {},
      closed: () => {},
      permission: () => new Promise<string | null>(() => {}),
    };
    const second = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), quiet, riot.connect);
    const elsewhere = second.prompt(id, "work from the other window");
    await until(() => riot.sessions.get(id)?.running != null);
    const before = store.current()?.conversation;
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => delivers(riot) === 1 && store.current()?.running === false);
    await settle(frames);
    expect(delivers(riot)).toBe(1);
    expect(store.current()?.conversation).toEqual(before);
    expect(store.current()?.queue.map((m) => m.origin)).toEqual(["riot"]);
    expect(store.current()?.startedAt).toBeNull();
    expect(store.getState().error).toBeNull();
    expect(ended).toEqual([]);
    release();
    await expect(elsewhere).resolves.toBe("end_turn");
    // The running turn took it: this page shows where it went, asks nothing more and reports no turn of its own.
    await until(() => store.current()?.queue.length === 0);
    await settle(frames);
    expect(shown(store)).toEqual(["notice:Background task bg_1's result reached the agent."]);
    expect(delivers(riot)).toBe(1);
    expect(store.current()?.running).toBe(false);
    expect(ended).toEqual([]);
    second.close();
    expect(riot.violations).toEqual([]);
  });

  it("leaves a result that arrives during a turn to Riot's loop, and asks nothing after the turn", async () => {
    let riot: FakeRiot;
    let release = () => {};
    riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      await new Promise<void>((resolve) => (release = resolve));
      // The loop, after a batch of tool results.
      await riot.deliverQueued(turn.sessionId);
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Noted bg_1." } });
      return "end_turn";
    });
    const { store, frames, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("work");
    // The turn runs at Riot's (a result queued before would go with the prompt).
    await until(() => store.current()?.running === true && riot.sessions.get(id)?.running != null);
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => store.current()?.queue.length === 1);
    await settle(frames);
    expect(delivers(riot)).toBe(0);
    release();
    await until(() => store.current()?.running === false);
    await settle(frames);
    expect(delivers(riot)).toBe(0);
    expect(shown(store)).toEqual(["user:work", "notice:Background task bg_1's result reached the agent.", "agent:Noted bg_1."]);
    expect(riot.violations).toEqual([]);
  });

  it("never asks a Riot that does not offer _riot/deliver: the result waits for the person's next prompt", async () => {
    const prompts: string[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== DELIVER) }).script(
      async (turn) => {
        prompts.push(turn.text);
        return "end_turn";
      },
    );
    const { store, frames, until } = await setup(riot);
    expect(store.getState().features.deliver).toBe(false);
    await store.newSession();
    const id = store.current()?.id ?? "";
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => store.current()?.queue.length === 1);
    await settle(frames);
    expect(store.current()?.running).toBe(false);
    expect(riot.received).not.toContain(DELIVER);
    await store.send("what did it find?");
    await until(() => store.current()?.running === false && store.current()?.queue.length === 0);
    expect(prompts).toEqual(["what did it find?"]);
    expect(shown(store)).toEqual(["user:what did it find?", "notice:Background task bg_1's result reached the agent."]);
    expect(riot.received).not.toContain(DELIVER);
    expect(riot.violations).toEqual([]);
  });

  it("sends the person's queued message with a waiting result as a prompt at the turn's end, not _riot/deliver", async () => {
    const ended: unknown[] = [];
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    const { store, until } = await setup(riot, { turnEnded: (e) => ended.push(e) });
    await store.newSession();
    const id = store.current()?.id ?? "";
    void store.send("first");
    await until(() => prompts.length === 1);
    await store.send("then this");
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => store.current()?.queue.length === 2);
    release();
    await until(() => prompts.length === 2);
    expect(prompts).toEqual(["first", "then this"]);
    release();
    await until(() => store.current()?.running === false && ended.length === 1);
    expect(riot.received).not.toContain(DELIVER);
    expect(shown(store)).toEqual(["user:first", "user:then this", "notice:Background task bg_1's result reached the agent."]);
    expect(riot.queued(id)).toEqual([]);
    expect(riot.violations).toEqual([]);
  });

  it("delivers a result found waiting alone when a session is opened; holds it with the person's messages", async () => {
    const turns: string[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(async (turn) => {
      turns.push(turn.source);
      await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Thanks, bg_7." } });
      return "end_turn";
    });
    riot.addSession("alone", PROJECT, [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: "earlier" } }]);
    await riot.enqueue("alone", resultText("bg_7", "Found it."), "riot");
    riot.addSession("mixed", PROJECT, []);
    await riot.enqueue("mixed", "written before the reload", "person");
    await riot.enqueue("mixed", resultText("bg_8", "Found that."), "riot");
    const { store, frames, until } = await setup(riot);
    await store.openSession("alone", PROJECT);
    await until(() => turns.length === 1 && store.current()?.running === false);
    expect(turns).toEqual(["deliver"]);
    expect(shown(store)).toEqual(["user:earlier", "notice:Background task bg_7's result reached the agent.", "agent:Thanks, bg_7."]);
    await store.openSession("mixed", PROJECT);
    await until(() => store.current()?.loading === false && store.current()?.queue.length === 2);
    await settle(frames);
    expect(store.current()?.queueHeld).toBe(true);
    expect(store.current()?.running).toBe(false);
    expect(delivers(riot)).toBe(1);
    expect(riot.violations).toEqual([]);
  });

  it("leaves a result Riot put back held after a stop to the person: no turn of its own, Resume queue gives it (_riot/deliver)", async () => {
    const turns: string[] = [];
    const { script, release } = gated(turns);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    const { store, frames, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => turns.length === 1 && store.current()?.running === true);
    expect(resumable(store.current()!, store.getState().features)).toBe(false);
    await store.stop();
    await until(() => store.current()?.running === false && store.current()?.queue.length === 1);
    // Riot withdrew the turn's message: the result waits again, held by Riot for the person.
    expect(store.current()?.queue.map((m) => [m.text, m.held])).toEqual([[resultText("bg_1", "Found it."), true]]);
    expect(store.current()?.queueHeld).toBe(false);
    expect(resumable(store.current()!, store.getState().features)).toBe(true);
    expect(shown(store).at(-1)).toBe("notice:Stopped.");
    await settle(frames);
    expect(delivers(riot)).toBe(1);
    expect(store.current()?.running).toBe(false);
    void store.resumeQueue(id);
    await until(() => turns.length === 2);
    expect(delivers(riot)).toBe(2);
    expect(store.current()?.running).toBe(true);
    release();
    await until(() => store.current()?.running === false);
    expect(store.current()?.queue).toEqual([]);
    expect(store.current()?.queueHeld).toBe(false);
    expect(riot.violations).toEqual([]);
  });

  it("another open window leaves a stopped delivery stopped: window B does not deliver the result A's stop put back", async () => {
    const turns: string[] = [];
    const { script } = gated(turns);
    // One scripted turn: a second delivery would be a violation (no script) as well as a count.
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script);
    const a = await setup(riot);
    const b = await setup(riot);
    await a.store.newSession();
    const id = a.store.current()?.id ?? "";
    await b.store.openSession(id, PROJECT);
    const both = async (test: () => boolean) => {
      for (let i = 0; i < 200 && !test(); i++) {
        await new Promise((r) => setTimeout(r, 1));
        a.frames.frame();
        b.frames.frame();
      }
      expect(test()).toBe(true);
    };
    await b.until(() => b.store.current()?.loading === false);
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    // A runs the turn (B, if it asked too, found it running: null).
    await both(() => turns.length === 1 && a.store.current()?.running === true && b.store.current()?.queue.length === 0);
    const asked = delivers(riot);
    await a.store.stop();
    await both(
      () =>
        a.store.current()?.running === false &&
        a.store.current()?.queue.length === 1 &&
        b.store.current()?.queue.some((m) => m.held) === true,
    );
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 1));
      a.frames.frame();
      b.frames.frame();
    }
    expect(delivers(riot)).toBe(asked);
    expect(turns).toHaveLength(1);
    expect(riot.sessions.get(id)?.running).toBeNull();
    expect(riot.queued(id).map((m) => [m.origin, m.held])).toEqual([["riot", true]]);
    expect([a.store.current()?.running, b.store.current()?.running]).toEqual([false, false]);
    // B shows it waiting for the person, who can still give it now from either window.
    expect(b.store.current()?.queue.map((m) => [m.origin, m.held])).toEqual([["riot", true]]);
    expect(resumable(b.store.current()!, b.store.getState().features)).toBe(true);
    expect(b.store.getState().error).toBeNull();
    expect(riot.violations).toEqual([]);
  });

  it("reports the turn's end when Riot starts no turn of its own after it (_riot/deliver answered null)", async () => {
    const ended: unknown[] = [];
    const prompts: string[] = [];
    let riot: FakeRiot;
    riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(
      async (turn) => {
        prompts.push(turn.text);
        // A background result ends as the turn does: it waits for a turn of its own.
        await riot.backgroundTask(turn.sessionId, done("bg_1", "Found it."));
        await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
        return "end_turn";
      },
      async (turn) => {
        prompts.push(turn.text);
        return "end_turn";
      },
    );
    const { store, frames, until, connection } = await setup(riot, { turnEnded: (e) => ended.push(e) });
    await store.newSession();
    const id = store.current()?.id ?? "";
    // Another window's prompt reaches Riot just before this page's _riot/deliver, and takes the result.
    const second = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), quietEvents(), riot.connect);
    const deliver = connection.deliver.bind(connection);
    connection.deliver = async (sessionId) => {
      await second.prompt(sessionId, "from the other window");
      return deliver(sessionId);
    };
    await store.send("work");
    await until(() => ended.length === 1);
    expect(ended).toEqual([{ sessionId: id, label: "work", outcome: "done" }]);
    await settle(frames);
    expect(prompts).toEqual(["work", "from the other window"]);
    expect(delivers(riot)).toBe(1);
    expect(store.current()?.running).toBe(false);
    expect(ended).toHaveLength(1);
    second.close();
    expect(riot.violations).toEqual([]);
  });

  it("sends the person's message typed while a _riot/deliver was on its way when Riot answers null", async () => {
    const prompts: string[] = [];
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(
      async (turn) => {
        prompts.push(turn.text);
        return "end_turn";
      },
      async (turn) => {
        prompts.push(turn.text);
        return "end_turn";
      },
    );
    const { store, until, connection } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    const second = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), quietEvents(), riot.connect);
    const deliver = connection.deliver.bind(connection);
    connection.deliver = async (sessionId) => {
      // The page shows the session working: what the person sends waits in the queue.
      await store.send("mine");
      expect(riot.queued(sessionId).map((m) => m.origin)).toEqual(["riot", "person"]);
      // Another window's prompt takes the result first.
      await second.prompt(sessionId, "from the other window");
      return deliver(sessionId);
    };
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => prompts.length === 2 && store.current()?.running === false);
    expect(prompts).toEqual(["from the other window", "mine"]);
    expect(riot.queued(id)).toEqual([]);
    expect(userTexts(store)).toEqual(["mine"]);
    expect(delivers(riot)).toBe(1);
    second.close();
    expect(riot.violations).toEqual([]);
  });

  it("a stop with a Riot that does not offer _riot/deliver holds nothing of Riot's: no Resume for the result, it goes with the next prompt", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== DELIVER) }).script(
      script,
      script,
    );
    const { store, until } = await setup(riot);
    await store.newSession();
    const id = store.current()?.id ?? "";
    await riot.backgroundTask(id, done("bg_1", "Found it."));
    await until(() => store.current()?.queue.length === 1);
    void store.send("what did it find?");
    await until(() => prompts.length === 1 && store.current()?.queue.length === 0);
    await store.stop();
    await until(() => store.current()?.running === false && store.current()?.queue.length === 1);
    expect(store.current()?.queue.map((m) => [m.origin, m.held])).toEqual([["riot", true]]);
    expect(store.current()?.queueHeld).toBe(false);
    expect(resumable(store.current()!, store.getState().features)).toBe(false);
    void store.send("and now?");
    await until(() => prompts.length === 2);
    release();
    await until(() => store.current()?.running === false);
    expect(prompts).toEqual(["what did it find?", "and now?"]);
    expect(riot.queued(id)).toEqual([]);
    expect(riot.received).not.toContain(DELIVER);
    expect(riot.violations).toEqual([]);
  });

  it("starts one turn when the person sends twice while the queue's take is on its way; the second waits in the queue", async () => {
    const prompts: string[] = [];
    const { script, release } = gated(prompts);
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] }).script(script, script);
    riot.addSession("s-old", PROJECT, []);
    await riot.enqueue("s-old", "written before the reload", "person");
    const { store, until } = await setup(riot);
    await store.openSession("s-old", PROJECT);
    await until(() => store.current()?.loading === false && store.current()?.queue.length === 1);
    void store.send("a");
    // Sent while the first send's take is on its way: it waits in the queue.
    await store.send("b");
    await until(() => prompts.length === 1);
    expect(prompts).toEqual(["written before the reload\n\na"]);
    expect(riot.queued("s-old").map((m) => m.text)).toEqual(["b"]);
    release();
    await until(() => prompts.length === 2);
    release();
    await until(() => store.current()?.running === false);
    expect(prompts).toEqual(["written before the reload\n\na", "b"]);
    expect(store.getState().error).toBeNull();
    expect(riot.violations).toEqual([]);
  });
});
