import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "../bridge";
import { FakeRiot, type Answer } from "../bridge/testing/fake-riot";
import type { FrameScheduler } from "./frame-batcher";
import { Store } from "./store";

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

async function setup(riot: FakeRiot) {
  const frames = manualFrames();
  const store = new Store(PROJECT, frames.scheduler);
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
  return { store, frames, until };
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
