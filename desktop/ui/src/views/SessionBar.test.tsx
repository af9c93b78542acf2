import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { WorkingIndicator } from "./SessionBar";

describe("WorkingIndicator", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("counts the seconds since the prompt went out, in minutes after the first one", () => {
    let clock = 10_000;
    const now = () => clock;
    render(<WorkingIndicator startedAt={10_000} stopping={false} waiting={false} now={now} />);
    const time = screen.getByTestId("working-time");
    expect(screen.getByRole("status").textContent).toBe("Working…0sEsc to stop");
    clock += 3_400;
    act(() => vi.advanceTimersByTime(1_000));
    expect(time.textContent).toBe("3s");
    clock = 10_000 + 65_000;
    act(() => vi.advanceTimersByTime(1_000));
    expect(time.textContent).toBe("1m 05s");
    // The seconds are shown, not read out every second.
    expect(time.getAttribute("aria-hidden")).toBe("true");
  });

  it("says when it waits for an answer, and when it is stopping", () => {
    const { rerender } = render(<WorkingIndicator startedAt={0} stopping={false} waiting now={() => 0} />);
    expect(screen.getByRole("status").textContent).toContain("Waiting for your answer…");
    rerender(<WorkingIndicator startedAt={0} stopping waiting={false} now={() => 0} />);
    expect(screen.getByRole("status").textContent).toBe("Stopping…0s");
  });
});
