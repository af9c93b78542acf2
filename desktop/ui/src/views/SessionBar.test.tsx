import { act, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { UsageFigures, WorkingIndicator, usd } from "./SessionBar";

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

describe("UsageFigures", () => {
  const last = {
    sessionId: "s1",
    model: "m",
    requests: 1,
    inputTokens: 1_200,
    outputTokens: 30,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    side: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0.5,
  };
  const totals = {
    requests: 1,
    inputTokens: 1_200,
    outputTokens: 30,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    side: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  };

  it("leads with the session's cost, a dash with the reason when it is unknown", () => {
    const { rerender } = render(<UsageFigures last={last} totals={totals} cost={{ usd: 0.5 }} />);
    expect(screen.getByTestId("usage-cost").textContent).toBe("$0.5000");
    expect(screen.getByTestId("usage").textContent).toBe("$0.50001,200 in30 outcache 0 read / 0 writtenm · 1 request");
    rerender(<UsageFigures last={last} totals={totals} cost={{ usd: null }} />);
    expect(screen.getByTestId("usage-cost").textContent).toBe("—");
    expect(screen.getByTestId("usage-cost").getAttribute("title")).toContain("has no price");
    // A turn that made no model request (a built-in command) still shows the cost.
    rerender(<UsageFigures last={null} totals={totals} cost={{ usd: 0 }} />);
    expect(screen.getByTestId("usage").textContent).toBe("$0.0000");
    rerender(<UsageFigures last={null} totals={totals} cost={null} />);
    expect(screen.queryByTestId("usage")).toBeNull();
  });

  it("shows the turn's side requests apart, and the session's in the summary", () => {
    const side = { inputTokens: 40, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0 };
    render(
      <UsageFigures last={{ ...last, side }} totals={{ ...totals, side }} cost={{ usd: 0.5 }} />,
    );
    expect(screen.getByTestId("usage-side").textContent).toBe("side 40 in / 20 out");
    expect(screen.getByTestId("usage").getAttribute("title")).toBe(
      "Session: 1,200 in, 30 out, 0 cache read, 0 cache written, 1 requests; " +
        "side requests: 40 in, 20 out, 5 cache read, 0 cache written",
    );
  });

  it("has no side figure when the turn made no side request", () => {
    render(<UsageFigures last={last} totals={totals} cost={{ usd: 0.5 }} />);
    expect(screen.queryByTestId("usage-side")).toBeNull();
    expect(screen.getByTestId("usage").getAttribute("title")).toBe(
      "Session: 1,200 in, 30 out, 0 cache read, 0 cache written, 1 requests",
    );
  });

  it("writes dollars as Riot does", () => {
    expect(usd(null)).toBe("—");
    expect(usd(0)).toBe("$0.0000");
    expect(usd(0.00123)).toBe("$0.0012");
    expect(usd(12.345)).toBe("$12.35");
  });
});
