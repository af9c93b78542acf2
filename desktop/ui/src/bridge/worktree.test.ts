import { describe, expect, it } from "vitest";

import { connectToRiot, endpointFromPage } from "./index";
import { FakeRiot } from "./testing/fake-riot";
import { worktreeOf, worktreeRequestMeta } from "./worktree";

describe("worktrees on the wire", () => {
  it("reads _meta.riot.worktree field by field", () => {
    const full = { name: "w1", branch: "riot/w1", path: "/h/worktrees/p-1/w1", project: "/p", cwd: "/h/worktrees/p-1/w1/src" };
    expect(worktreeOf({ riot: { model: "m", worktree: full } })).toEqual({ ...full, present: true });
    expect(worktreeOf({ riot: { worktree: { name: "w1", branch: "riot/w1", path: "/x", present: false } } })).toEqual({
      name: "w1",
      branch: "riot/w1",
      path: "/x",
      project: null,
      cwd: null,
      present: false,
    });
    expect(worktreeOf({ riot: { worktree: { name: "w1", branch: 7, path: "/x" } } })).toBeNull();
    expect(worktreeOf({ riot: { model: "m" } })).toBeNull();
    expect(worktreeOf(undefined)).toBeNull();
    expect(worktreeRequestMeta("  w1 ")).toEqual({ riot: { worktree: "w1" } });
  });

  it("opens a session in a worktree: the request carries the name, the session works where Riot says", async () => {
    const riot = new FakeRiot({ token: "t", projects: ["/p"], gitProjects: ["/p"] });
    const connection = await connectToRiot(endpointFromPage("http://h/?token=t"), {
      update: () => {},
      permission: async () => null,
      usage: () => {},
      compaction: () => {},
      closed: () => {},
    } as never, riot.connect);
    const opened = await connection.newSession("/p", { worktree: "w1" });
    expect(riot.newSessionMeta).toEqual([{ riot: { worktree: "w1" } }]);
    const path = "/home/me/.riot/worktrees/p-0123abcd/w1";
    expect(opened.cwd).toBe(path);
    expect(opened.worktree).toEqual({ name: "w1", branch: "riot/w1", path, project: "/p", cwd: path, present: true });
    const plain = await connection.newSession("/p");
    expect(plain.worktree).toBeNull();
    expect(plain.cwd).toBe("/p");
    await expect(connection.newSession("/p", { worktree: "bad name" })).rejects.toThrow(
      "`bad name` cannot name a worktree: use 1–64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-` (e.g. --worktree fix-login)",
    );
    connection.close();
  });
});
