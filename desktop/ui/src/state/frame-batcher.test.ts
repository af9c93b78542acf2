import { describe, expect, it } from "vitest";

import { FrameBatcher, type FrameScheduler } from "./frame-batcher";

/** A scheduler the test advances by hand, one frame at a time. */
function manualFrames() {
  const waiting: (() => void)[] = [];
  const scheduler: FrameScheduler = {
    schedule(run) {
      waiting.push(run);
      return () => waiting.splice(waiting.indexOf(run), 1);
    },
  };
  return { scheduler, frame: () => waiting.splice(0).forEach((run) => run()), pending: () => waiting.length };
}

describe("FrameBatcher", () => {
  it("delivers everything pushed between two frames as one batch, in order", () => {
    const frames = manualFrames();
    const batches: number[][] = [];
    const batcher = new FrameBatcher<number>((items) => batches.push(items), frames.scheduler);
    for (let i = 0; i < 500; i++) batcher.push(i);
    expect(frames.pending()).toBe(1);
    expect(batches).toEqual([]);
    frames.frame();
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual([...Array(500).keys()]);
    batcher.push(500);
    frames.frame();
    expect(batches).toEqual([[...Array(500).keys()], [500]]);
  });

  it("flushes on demand and schedules nothing when idle", () => {
    const frames = manualFrames();
    const batches: string[][] = [];
    const batcher = new FrameBatcher<string>((items) => batches.push(items), frames.scheduler);
    batcher.push("a");
    batcher.flush();
    expect(batches).toEqual([["a"]]);
    expect(frames.pending()).toBe(0);
    batcher.flush();
    expect(batches).toHaveLength(1);
  });

  it("drops what is queued on dispose", () => {
    const frames = manualFrames();
    const batches: string[][] = [];
    const batcher = new FrameBatcher<string>((items) => batches.push(items), frames.scheduler);
    batcher.push("a");
    batcher.dispose();
    frames.frame();
    expect(batches).toEqual([]);
  });
});
