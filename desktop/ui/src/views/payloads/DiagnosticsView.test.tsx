import { fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { asUiPayload, type PayloadOf } from "./payload";
import { PayloadView } from "./PayloadView";

const payload: PayloadOf<"diagnostics"> = {
  type: "diagnostics",
  checkers: ["cargo check --message-format=json --quiet"],
  diagnostics: [
    {
      path: "src/main.rs",
      line: 2,
      column: 18,
      severity: "error",
      code: "E0308",
      message: "mismatched types",
      source: "cargo",
    },
    { path: "Cargo.toml", line: 0, column: 0, severity: "warning", message: "unused key", source: "cargo" },
  ],
  total: 3,
  truncated: true,
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the Diagnostics payload", () => {
  it("is a payload this UI knows, and a malformed one is not", () => {
    expect(asUiPayload(payload)).toBe(payload);
    expect(asUiPayload({ ...payload, diagnostics: [{ path: "a", line: "2" }] })).toBeNull();
  });

  it("lists each finding with its location, severity, code and message, and counts what is not shown", () => {
    const { container } = render(<PayloadView raw={payload} />);
    expect(screen.getByTestId("diagnostics-count").textContent).toBe("1 error, 1 warning, 2 of 3 shown");
    const rows = container.querySelectorAll("li.diagnostic");
    expect([...rows].map((r) => r.textContent)).toEqual([
      "src/main.rs:2:18 error[E0308] mismatched types",
      "Cargo.toml warning unused key",
    ]);
    expect(rows[0]?.classList.contains("diagnostic-error")).toBe(true);
    expect(screen.getByText("cargo check --message-format=json --quiet").tagName).toBe("CODE");
  });

  it("copies a finding's file:line when its location is clicked", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    render(<PayloadView raw={payload} />);
    fireEvent.click(screen.getByRole("button", { name: "src/main.rs:2:18" }));
    expect(writeText).toHaveBeenCalledWith("src/main.rs:2:18");
    const row = screen.getByRole("button", { name: "src/main.rs:2:18" }).closest("li")!;
    expect(await within(row).findByText("copied")).toBeTruthy();
  });

  it("says when no checker was found", () => {
    render(<PayloadView raw={{ ...payload, checkers: [], diagnostics: [], total: 0, truncated: false }} />);
    expect(screen.getByTestId("diagnostics-count").textContent).toBe("no checker found");
  });
});
