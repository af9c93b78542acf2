import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import type { SessionInfo } from "../bridge";
import styles from "../styles.css?raw";
import { Sidebar } from "./Sidebar";

const SESSIONS: SessionInfo[] = [
  { sessionId: "s2", cwd: "/p", title: "Fix the parser" },
  { sessionId: "s1", cwd: "/p", title: null },
];

function setup(props: Partial<Parameters<typeof Sidebar>[0]> = {}) {
  const handlers = { onRename: vi.fn(), onDelete: vi.fn(), onOpen: vi.fn(), onChooseFolder: vi.fn() };
  render(
    <Sidebar
      sessions={SESSIONS}
      currentId="s2"
      projectDir="/p"
      connected
      canRename
      canDelete
      onProjectDir={() => {}}
      onNew={() => {}}
      {...handlers}
      {...props}
    />,
  );
  return handlers;
}

describe("Sidebar", () => {
  it("renames in place: Enter saves the typed title", () => {
    const { onRename, onOpen } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Rename “Fix the parser”" }));
    const input = screen.getByRole("textbox", { name: "Session title" }) as HTMLInputElement;
    expect(input.value).toBe("Fix the parser");
    fireEvent.change(input, { target: { value: "Parser, part 2" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(onRename).toHaveBeenCalledWith("s2", "Parser, part 2");
    expect(screen.queryByRole("textbox", { name: "Session title" })).toBeNull();
    expect(onOpen).not.toHaveBeenCalled();
  });

  it("Escape cancels a rename", () => {
    const { onRename } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Rename “Untitled session”" }));
    const input = screen.getByRole("textbox", { name: "Session title" });
    fireEvent.change(input, { target: { value: "Something" } });
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onRename).not.toHaveBeenCalled();
    expect(screen.getByText("Untitled session")).toBeTruthy();
  });

  it("deletes only after the confirm step, and Keep takes it back", () => {
    const { onDelete } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Delete “Fix the parser”" }));
    const confirm = screen.getByRole("group", { name: "Delete “Fix the parser”?" });
    expect(confirm.textContent).toBe("Delete this session?DeleteKeep");
    expect(onDelete).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Keep" }));
    expect(screen.queryByRole("group")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Delete “Fix the parser”" }));
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    expect(onDelete).toHaveBeenCalledWith("s2");
  });

  it("puts the focus on Keep when asking, and Escape keeps the session", () => {
    const { onDelete } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Delete “Fix the parser”" }));
    const keep = screen.getByRole("button", { name: "Keep" });
    expect(document.activeElement).toBe(keep);
    fireEvent.keyDown(keep, { key: "Escape" });
    expect(screen.queryByRole("group")).toBeNull();
    expect(onDelete).not.toHaveBeenCalled();
  });

  it("lays a row's rename and delete buttons beside its title, never over it (the real stylesheet)", () => {
    const sheet = document.createElement("style");
    sheet.textContent = styles;
    document.head.append(sheet);
    try {
      setup();
      const row = screen.getByText("Fix the parser").closest("li") as HTMLElement;
      const actions = row.querySelector(".session-actions") as HTMLElement;
      const title = row.querySelector("button.session") as HTMLElement;
      // In the row's flow, side by side: the title's button takes the room the buttons leave it.
      expect(getComputedStyle(row).display).toBe("flex");
      expect(getComputedStyle(actions).position).not.toBe("absolute");
      expect(getComputedStyle(actions).flexShrink).toBe("0");
      expect(getComputedStyle(title).minWidth).toBe("0px");
      expect(title.contains(actions)).toBe(false);
    } finally {
      sheet.remove();
    }
  });

  it("offers neither rename nor delete when Riot does not, and no folder picker in a browser", () => {
    setup({ canRename: false, canDelete: false, onChooseFolder: undefined });
    expect(screen.queryByRole("button", { name: /^Rename/ })).toBeNull();
    expect(screen.queryByRole("button", { name: /^Delete/ })).toBeNull();
    expect(screen.queryByRole("button", { name: "Choose…" })).toBeNull();
  });

  it("opens the shell's folder picker from Choose…", () => {
    const { onChooseFolder } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Choose…" }));
    expect(onChooseFolder).toHaveBeenCalledOnce();
  });
});
