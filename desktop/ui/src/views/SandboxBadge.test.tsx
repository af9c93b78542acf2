import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { sessionSandbox } from "../bridge/riot-ext";
import { SandboxBadge } from "./SandboxBadge";

describe("SandboxBadge", () => {
  it("says which mechanism sandboxes the session's commands", () => {
    render(<SandboxBadge sandbox="sandboxed (bubblewrap)" />);
    const badge = screen.getByTestId("sandbox");
    expect(badge.textContent).toBe("sandboxed (bubblewrap)");
    expect(badge.className).toBe("sandbox-badge");
  });

  it("says when they are not sandboxed, with Riot's reason on hover", () => {
    render(<SandboxBadge sandbox="not sandboxed: bubblewrap is not installed" />);
    const badge = screen.getByTestId("sandbox");
    expect(badge.textContent).toBe("not sandboxed");
    expect(badge.className).toBe("sandbox-badge sandbox-off");
    expect(badge.getAttribute("title")).toContain("not sandboxed: bubblewrap is not installed");
  });

  it("shows nothing when Riot did not say", () => {
    const { container } = render(<SandboxBadge sandbox={null} />);
    expect(container.innerHTML).toBe("");
  });

  it("reads the status from a session response's _meta.riot.sandbox", () => {
    expect(sessionSandbox({ riot: { model: "m", sandbox: "sandboxed (Landlock)" } })).toBe("sandboxed (Landlock)");
    expect(sessionSandbox({ riot: { model: "m" } })).toBeNull();
    expect(sessionSandbox(undefined)).toBeNull();
  });
});
