import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";

import { connectToRiot, RiotError, type BridgeEvents } from "./connection";
import { endpointFromPage } from "./endpoint";
import {
  DELIVER,
  QUEUE_UPDATE,
  parseBackgroundNotice,
  parseBackgroundTasks,
  parseDeliver,
  parseQueue,
  parseQueueNotice,
  type BackgroundNotice,
  type QueueNotice,
} from "./parallel";
import { socketStream } from "./socket";
import { FAKE_REQUESTS, FakeRiot, type FakeTurn } from "./testing/fake-riot";

const PROJECT = "/home/me/project";

async function connected(riot: FakeRiot) {
  const queue: QueueNotice[] = [];
  const background: BackgroundNotice[] = [];
  const events: BridgeEvents = {
    update: () => {},
    usage: () => {},
    compaction: () => {},
    closed: () => {},
    permission: () => new Promise(() => {}),
    queue: (n) => queue.push(n),
    background: (n) => background.push(n),
  };
  const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), events, riot.connect);
  return { connection, queue, background };
}

describe("_riot/queue and _riot/background through the bridge", () => {
  it("pushes, edits, removes and takes queued messages, hearing each change", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { connection, queue } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    const a = await connection.queue(sessionId, { action: "push", text: "check b" });
    expect(a.messages).toEqual([{ id: a.id, text: "check b", origin: "person", held: false }]);
    const b = await connection.queue(sessionId, { action: "push", text: "and c" });
    await connection.queue(sessionId, { action: "edit", id: a.id ?? "", text: "check b and d" });
    const removed = await connection.queue(sessionId, { action: "remove", id: b.id ?? "" });
    expect(removed.messages.map((m) => m.text)).toEqual(["check b and d"]);
    await expect(connection.queue(sessionId, { action: "remove", id: b.id ?? "" })).rejects.toThrow(
      new RiotError(
        `there is no queued message \`${b.id}\` in this session: it was delivered or removed; the queued ones are \`${a.id}\``,
        -32602,
      ),
    );
    const taken = await connection.queue(sessionId, { action: "take" });
    expect(taken.taken.map((m) => m.text)).toEqual(["check b and d"]);
    expect(taken.messages).toEqual([]);
    await new Promise((r) => setTimeout(r, 0));
    expect(queue.map((n) => n.messages.map((m) => m.text))).toEqual([
      ["check b"],
      ["check b", "and c"],
      ["check b and d", "and c"],
      ["check b and d"],
      [],
    ]);
    expect(riot.violations).toEqual([]);
  });

  it("lists background agents and stops one; its end arrives as a notification", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { connection, background } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    await expect(connection.stopBackground(sessionId, "bg_1")).rejects.toThrow(
      "there is no background task `bg_1`: none was started in this session",
    );
    await riot.backgroundTask(sessionId, {
      id: "bg_1",
      agent: "explore",
      description: "look",
      state: "running",
      calls: 0,
      last: null,
      result: null,
    });
    expect((await connection.backgroundTasks(sessionId)).map((t) => [t.id, t.state])).toEqual([["bg_1", "running"]]);
    expect((await connection.stopBackground(sessionId, "bg_1")).state).toBe("running");
    await new Promise((r) => setTimeout(r, 5));
    expect(background.map((n) => n.task.state)).toEqual(["running", "stopped"]);
    expect(riot.violations).toEqual([]);
  });

  it("_riot/deliver runs a turn of Riot's for a result waiting between turns, streamed and cancelled as a prompt's", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const updates: string[] = [];
    const queue: QueueNotice[] = [];
    const events: BridgeEvents = {
      update: (n) => updates.push(n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? n.update.content.text : n.update.sessionUpdate),
      usage: () => {},
      compaction: () => {},
      closed: () => {},
      permission: () => new Promise(() => {}),
      queue: (n) => queue.push(n),
    };
    const connection = await connectToRiot(endpointFromPage("http://127.0.0.1:1/?token=t"), events, riot.connect);
    const { sessionId } = await connection.newSession(PROJECT);
    // Nothing waits, then only the person's message: no turn.
    await expect(connection.deliver(sessionId)).resolves.toBeNull();
    await connection.queue(sessionId, { action: "push", text: "mine" });
    await expect(connection.deliver(sessionId)).resolves.toBeNull();
    const turns: [string, string][] = [];
    riot.script(
      async (turn) => {
        turns.push([turn.source, turn.text]);
        await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Got bg_1." } });
        return "end_turn";
      },
      async (turn) => {
        turns.push([turn.source, turn.text]);
        await new Promise((resolve) => turn.cancelled.addEventListener("abort", resolve));
        return "cancelled";
      },
    );
    const result = (id: string) => ({ id, agent: "explore", description: "look", state: "completed" as const, calls: 0, last: null, result: `${id} found it` });
    await riot.backgroundTask(sessionId, result("bg_1"));
    queue.length = 0;
    await expect(connection.deliver(sessionId)).resolves.toBe("end_turn");
    expect(turns.map(([source, text]) => [source, text.split("\n")[1]])).toEqual([["deliver", "bg_1 found it"]]);
    expect(updates).toContain("Got bg_1.");
    // Riot's message went into the turn; the person's stays queued for its own prompt.
    expect(queue.map((n) => [n.delivered.map((m) => m.origin), n.messages.map((m) => m.text)])).toEqual([[["riot"], ["mine"]]]);
    await riot.backgroundTask(sessionId, result("bg_2"));
    const stopped = connection.deliver(sessionId);
    while (turns.length < 2) await new Promise((r) => setTimeout(r, 1));
    // A turn runs: a second ask starts nothing.
    await expect(connection.deliver(sessionId)).resolves.toBeNull();
    await connection.cancel(sessionId);
    await expect(stopped).resolves.toBe("cancelled");
    // Stopped before any reply: Riot's message waits again, held for the person.
    expect(riot.queued(sessionId).map((m) => [m.origin, m.text.split("\n")[1], m.held])).toEqual([
      ["person", undefined, false],
      ["riot", "bg_2 found it", true],
    ]);
    expect(queue.at(-1)?.messages.map((m) => [m.origin, m.held])).toEqual([
      ["person", false],
      ["riot", true],
    ]);
    await expect(connection.deliver("nope")).rejects.toThrow(new RiotError("unknown session `nope`", -32602));
    expect(riot.violations).toEqual([]);
  });

  it("the fake puts Riot's messages back held when a prompt or a delivery turn is stopped before any reply, as Riot does", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const wire: unknown[] = [];
    const { connection, queue } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    // What the second connection reads off the socket, before any parsing.
    const raw = acp
      .client({ name: "raw" })
      .onNotification(QUEUE_UPDATE, (p: unknown) => p, ({ params }) => void wire.push(params))
      .connect(socketStream(riot.connect("ws://127.0.0.1:1/acp?token=t")));
    await raw.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { _meta: { riot: { notifications: [QUEUE_UPDATE] } } },
    });
    const stopped = (what: (turn: FakeTurn) => Promise<void>) => async (turn: FakeTurn) => {
      await what(turn);
      await new Promise((resolve) => turn.cancelled.addEventListener("abort", resolve));
      return "cancelled" as const;
    };
    const turns: [string, string][] = [];
    riot.script(
      // A prompt stopped with thinking alone: withdrawn, Riot's message back, held.
      stopped(async (turn) => {
        turns.push([turn.source, turn.text]);
        await turn.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } });
      }),
      // A delivery (held messages too) stopped before any reply: held again.
      stopped(async (turn) => void turns.push([turn.source, turn.text])),
      // A prompt stopped after some text: kept, nothing back.
      stopped(async (turn) => {
        turns.push([turn.source, turn.text]);
        await turn.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Partly." } });
      }),
    );
    const stop = async (turn: Promise<unknown>) => {
      while (riot.sessions.get(sessionId)?.running == null) await new Promise((r) => setTimeout(r, 1));
      await connection.cancel(sessionId);
      await expect(turn).resolves.toBe("cancelled");
    };
    await riot.enqueue(sessionId, "result one", "riot");
    await stop(connection.prompt(sessionId, "go"));
    expect(riot.queued(sessionId).map((m) => [m.text, m.held])).toEqual([["result one", true]]);
    expect((wire.at(-1) as { messages: unknown[] }).messages).toEqual([{ id: riot.queued(sessionId)[0]?.id, text: "result one", origin: "riot", held: true }]);
    await riot.enqueue(sessionId, "result two", "riot");
    // Unheld messages go on the wire without the field.
    expect((wire.at(-1) as { messages: unknown[] }).messages).toEqual([
      { id: riot.queued(sessionId)[0]?.id, text: "result one", origin: "riot", held: true },
      { id: riot.queued(sessionId)[1]?.id, text: "result two", origin: "riot" },
    ]);
    await stop(connection.deliver(sessionId));
    expect(riot.queued(sessionId).map((m) => [m.text, m.held])).toEqual([
      ["result one", true],
      ["result two", true],
    ]);
    await stop(connection.prompt(sessionId, "again"));
    expect(riot.queued(sessionId)).toEqual([]);
    expect(turns).toEqual([
      ["prompt", "go"],
      ["deliver", "result one\nresult two"],
      ["prompt", "again"],
    ]);
    // What went with a turn is reported delivered, unmarked.
    expect(queue.filter((n) => n.delivered.length > 0).map((n) => n.delivered.map((m) => [m.text, m.held]))).toEqual([
      [["result one", false]],
      [["result one", false], ["result two", false]],
      [["result one", false], ["result two", false]],
    ]);
    // The withdrawn prompt is not replayed; the kept one is.
    const history = riot.sessions.get(sessionId)?.history.map((u) => u.sessionUpdate);
    expect(history).toEqual(["user_message_chunk", "agent_message_chunk"]);
    raw.close();
    expect(riot.violations).toEqual([]);
  });

  it("the fake releases the session when a turn has no script, so the next one runs", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const { connection } = await connected(riot);
    const { sessionId } = await connection.newSession(PROJECT);
    await riot.enqueue(sessionId, "result one", "riot");
    await expect(connection.deliver(sessionId)).rejects.toThrow("the fake has no scripted turn for this turn");
    expect(riot.violations).toEqual([`a turn of Riot's (${DELIVER}) arrived with no scripted turn: result one`]);
    expect(riot.sessions.get(sessionId)?.running).toBeNull();
    riot.violations.length = 0;
    riot.script(async () => "end_turn");
    await expect(connection.prompt(sessionId, "next")).resolves.toBe("end_turn");
    expect(riot.violations).toEqual([]);
  });

  it("_riot/deliver refuses malformed params as Riot does, and is not sent to a Riot that does not offer it", async () => {
    const riot = new FakeRiot({ token: "t", projects: [PROJECT] });
    const raw = acp.client({ name: "raw" }).connect(socketStream(riot.connect("ws://127.0.0.1:1/acp?token=t")));
    await raw.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const ask = (params: Record<string, unknown>) => raw.agent.request<unknown, Record<string, unknown>>(DELIVER, params);
    await expect(ask({})).rejects.toMatchObject({ code: -32602, message: "_riot/deliver: `sessionId` must be a string" });
    await expect(ask({ sessionId: "s1", now: true })).rejects.toMatchObject({ code: -32602, message: "_riot/deliver: unknown field `now`" });
    raw.close();
    const old = new FakeRiot({ token: "t", projects: [PROJECT], requests: FAKE_REQUESTS.filter((r) => r !== DELIVER) });
    const { connection } = await connected(old);
    const { sessionId } = await connection.newSession(PROJECT);
    await expect(connection.deliver(sessionId)).rejects.toThrow("This Riot does not offer _riot/deliver; update riot to use it.");
    expect(old.received).not.toContain(DELIVER);
  });

  it("refuses payloads that are not what Riot sends", () => {
    expect(() => parseQueue({ messages: [{ id: "m", text: "x", origin: "someone" }] })).toThrow(/malformed _riot\/queue result/);
    expect(() => parseQueue({ messages: [], id: 3 })).toThrow(/malformed/);
    expect(parseQueue({ messages: [] })).toEqual({ messages: [], id: null, taken: [] });
    expect(() => parseQueueNotice({ sessionId: "s", messages: [] })).toThrow(/malformed _riot\/queue_update params/);
    expect(() => parseBackgroundTasks({ tasks: [{ id: "bg_1", agent: "a", description: "d", state: "paused", calls: 0 }] })).toThrow(
      /malformed _riot\/background result/,
    );
    expect(() => parseBackgroundNotice({ sessionId: "s", task: { id: "bg_1", agent: "a", description: "d", state: "running", calls: -1 } })).toThrow(
      /malformed/,
    );
    expect(parseDeliver({ stopReason: null })).toBeNull();
  });

  it("reads Riot's held mark on a queued message (omitted when false) and refuses one that is not a boolean, or on the person's", () => {
    const riots = { id: "m2", text: "<background-task id=\"bg_1\">", origin: "riot" };
    expect(
      parseQueueNotice({ sessionId: "s", messages: [{ id: "m1", text: "mine", origin: "person" }, { ...riots, held: true }], delivered: [] }).messages,
    ).toEqual([
      { id: "m1", text: "mine", origin: "person", held: false },
      { ...riots, held: true },
    ]);
    expect(parseQueue({ messages: [{ ...riots, held: false }] }).messages).toEqual([{ ...riots, held: false }]);
    for (const held of ["true", 1, null, {}]) {
      expect(() => parseQueue({ messages: [{ ...riots, held }] })).toThrow(/malformed _riot\/queue result/);
      expect(() => parseQueueNotice({ sessionId: "s", messages: [{ ...riots, held }], delivered: [] })).toThrow(
        /malformed _riot\/queue_update params/,
      );
    }
    expect(() => parseQueue({ messages: [{ id: "m1", text: "mine", origin: "person", held: true }] })).toThrow(/malformed/);
    expect(() => parseQueue({ messages: [], taken: [{ ...riots, held: "no" }] })).toThrow(/malformed/);
    expect(parseDeliver({ stopReason: "max_turn_requests" })).toBe("max_turn_requests");
    expect(() => parseDeliver({})).toThrow(/malformed _riot\/deliver result/);
    expect(() => parseDeliver({ stopReason: "finished" })).toThrow(/malformed _riot\/deliver result/);
  });
});
