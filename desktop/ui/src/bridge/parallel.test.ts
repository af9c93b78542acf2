import { describe, expect, it } from "vitest";

import { connectToRiot, RiotError, type BridgeEvents } from "./connection";
import { endpointFromPage } from "./endpoint";
import {
  parseBackgroundNotice,
  parseBackgroundTasks,
  parseQueue,
  parseQueueNotice,
  type BackgroundNotice,
  type QueueNotice,
} from "./parallel";
import { FakeRiot } from "./testing/fake-riot";

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
    expect(a.messages).toEqual([{ id: a.id, text: "check b", origin: "person" }]);
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
  });
});
