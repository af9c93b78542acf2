// Coalesces what arrives between two frames into one flush, so a model
// streaming hundreds of deltas a second costs one render per frame, not
// one per delta (issue 10: "deltas coalesced per animation frame").

export interface FrameScheduler {
  /** Calls `run` before the next frame; returns a way to call it off. */
  schedule(run: () => void): () => void;
}

/**
 * `requestAnimationFrame`, with a timer as a backstop: a hidden page gets
 * no frames, and what it received must still be applied (a permission
 * question waiting while the window is in the background).
 */
export const animationFrames: FrameScheduler = {
  schedule(run) {
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      if (frame !== null) cancelAnimationFrame(frame);
      clearTimeout(timer);
      run();
    };
    const frame = typeof requestAnimationFrame === "function" ? requestAnimationFrame(once) : null;
    const timer = setTimeout(once, 250);
    return () => {
      done = true;
      if (frame !== null) cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  },
};

export class FrameBatcher<T> {
  private queue: T[] = [];
  private cancel: (() => void) | null = null;

  constructor(
    private readonly flushTo: (items: T[]) => void,
    private readonly scheduler: FrameScheduler = animationFrames,
  ) {}

  /** Queues `item`; it is flushed, in order, with everything else queued before the next frame. */
  push(item: T): void {
    this.queue.push(item);
    if (this.cancel === null) {
      this.cancel = this.scheduler.schedule(() => this.flush());
    }
  }

  /** Flushes now (e.g. before acting on a turn's end). */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    if (this.queue.length === 0) return;
    const items = this.queue;
    this.queue = [];
    this.flushTo(items);
  }

  /** Drops what is queued and stops scheduling. */
  dispose(): void {
    this.cancel?.();
    this.cancel = null;
    this.queue = [];
  }
}
