import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import type { RequestPermissionRequest } from "../bridge";
import { PermissionDialog } from "./PermissionDialog";
import { joinPath } from "./tool-target";

const OPTIONS: RequestPermissionRequest["options"] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow Write(/p/out.txt)", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

function ask(toolCall: RequestPermissionRequest["toolCall"], onAnswer = vi.fn()) {
  render(
    <PermissionDialog
      request={{ sessionId: "s1", toolCall, options: OPTIONS }}
      cwd="/home/me/project"
      otherSession={null}
      onAnswer={onAnswer}
    />,
  );
  return onAnswer;
}

describe("PermissionDialog", () => {
  it("shows a file tool's path resolved against the project, as Riot sends the call today", () => {
    ask({
      toolCallId: "call_1",
      title: "Write ../project/out.txt",
      kind: "edit",
      status: "pending",
      rawInput: { file_path: "../project/./out.txt", content: "a\nb\n" },
    });
    expect(screen.getByRole("dialog").getAttribute("aria-labelledby")).toBe("permission-heading");
    expect(screen.getByRole("heading").textContent).toBe("Riot wants to change a file");
    expect(screen.getByTestId("permission-title").textContent).toBe("Write ../project/out.txt");
    expect(screen.getByTestId("permission-path").textContent).toBe("/home/me/project/out.txt");
    expect(screen.getByText("Content to write (2 lines)")).toBeTruthy();
  });

  it("prefers the path Riot resolved (symlinks and all) when it sends it", () => {
    ask({
      toolCallId: "call_1",
      title: "Write link/out.txt",
      kind: "edit",
      rawInput: { file_path: "link/out.txt", content: "" },
      _meta: {
        riot: {
          detail: {
            tool_use_id: "call_1",
            tool_name: "Write",
            describe: "Write link/out.txt",
            input: {},
            path: "/srv/real/out.txt",
            reason: { kind: "mode", detail: "default mode asks before changing files", mode: "default" },
            message: "Riot wants to write /srv/real/out.txt",
          },
        },
      },
    });
    expect(screen.getByTestId("permission-tool").textContent).toBe("Write");
    expect(screen.getByTestId("permission-path").textContent).toBe("/srv/real/out.txt");
    expect(screen.getByTestId("permission-reason").textContent).toBe("Riot wants to write /srv/real/out.txt");
  });

  it("shows the full command of a shell tool, every line of it", () => {
    ask({
      toolCallId: "call_2",
      title: "Deploy (git push)",
      kind: "execute",
      rawInput: { command: "git push origin main\nrm -rf build", description: "Deploy" },
    });
    expect(screen.getByRole("heading").textContent).toBe("Riot wants to run a command");
    expect(screen.getByTestId("permission-command").textContent).toBe("git push origin main\nrm -rf build");
    expect(screen.queryByTestId("permission-path")).toBeNull();
  });

  it("offers Riot's options in Riot's order and answers with the chosen id", () => {
    const onAnswer = ask({ toolCallId: "call_1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } });
    const buttons = screen.getAllByRole("button");
    expect(buttons.map((b) => b.textContent)).toEqual(["Allow", "Always allow Write(/p/out.txt)", "Reject"]);
    expect(onAnswer).not.toHaveBeenCalled();
    fireEvent.click(screen.getByText("Reject"));
    expect(onAnswer).toHaveBeenCalledWith("reject_once");
  });

  it("does not put focus on an answer, so a stray Enter chooses nothing", () => {
    ask({ toolCallId: "call_1", title: "Write out.txt", kind: "edit", rawInput: { file_path: "out.txt" } });
    expect(document.activeElement).toBe(screen.getByRole("dialog"));
  });
});

describe("joinPath", () => {
  it("resolves . and .. but keeps absolute paths absolute", () => {
    expect(joinPath("/a/b/", "c/../d/./e")).toBe("/a/b/d/e");
    expect(joinPath("/a/b", "/etc/passwd")).toBe("/etc/passwd");
    expect(joinPath("/a", "../../..")).toBe("/");
  });
});
