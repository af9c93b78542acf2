//! `--worktree` (docs/parallel.md) through the real binary and the strict
//! mock: a session in a git worktree of its own under `RIOT_HOME`, kept
//! with its branch when something changed in it, removed when nothing
//! did; `riot worktree list|remove`; `riot sessions list` naming it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::{Path, PathBuf};

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::ws::WsClient;
use support::{PATIENCE, Running, World, run, signal, tool_call};
use tokio::io::AsyncBufReadExt;

/// Runs git in `dir`; its stdout, asserting success.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=Riot Test",
            "-c",
            "user.email=test@riot.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The world's project as a repository with one commit, and an
/// untracked file of the person's that nothing may touch.
fn repository(world: &World) -> PathBuf {
    let cwd = world.cwd();
    git(&cwd, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(cwd.join("README.md"), "# project\n").unwrap();
    git(&cwd, &["add", "README.md"]);
    git(&cwd, &["commit", "--quiet", "-m", "first"]);
    std::fs::write(cwd.join("scratch.txt"), "the person's notes\n").unwrap();
    cwd
}

/// A script writing `file` with `content`, then answering "done".
async fn writer(file: &str, content: &str) -> MockServer {
    MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_write",
                "Write",
                json!({"file_path": file, "content": content}),
            ),
            Reply::Text("done".into()),
        ],
    ))
    .await
    .unwrap()
}

/// `riot worktree list --json` in the project.
async fn listed(world: &World) -> Vec<Value> {
    let out = run(world.bare(&["worktree", "list", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The paths `git worktree list` shows for the project.
fn git_worktrees(cwd: &Path) -> Vec<PathBuf> {
    git(cwd, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

fn branches(cwd: &Path) -> String {
    git(
        cwd,
        &["branch", "--list", "riot/*", "--format=%(refname:short)"],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lands_in_the_worktree_which_is_kept_with_its_branch() {
    let world = World::new();
    let cwd = repository(&world);
    let server = writer("new.txt", "from the agent\n").await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--worktree",
            "w1",
            "--permission-mode",
            "accept-edits",
            "write it",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "done");

    let list = listed(&world).await;
    assert_eq!(list.len(), 1, "{list:?} {}", out.stderr);
    let path = PathBuf::from(list[0]["path"].as_str().unwrap());
    assert_eq!(list[0]["name"], "w1");
    assert_eq!(list[0]["branch"], "riot/w1");
    assert_eq!(list[0]["uncommitted"], 1);
    assert_eq!(list[0]["commits"], 0);
    // Under Riot's home, never in the project.
    let home = world.home.path().canonicalize().unwrap();
    assert!(
        path.starts_with(home.join("worktrees")),
        "{}",
        path.display()
    );
    assert_eq!(path.file_name().unwrap(), "w1");

    // The file is in the worktree, not in the main checkout, whose
    // untracked file is as the person left it.
    assert_eq!(
        std::fs::read_to_string(path.join("new.txt")).unwrap(),
        "from the agent\n"
    );
    assert!(!cwd.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(cwd.join("scratch.txt")).unwrap(),
        "the person's notes\n"
    );
    assert!(
        !path.join("scratch.txt").exists(),
        "untracked files stay put"
    );
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone(), path.clone()]);
    assert_eq!(branches(&cwd).trim(), "riot/w1");
    assert!(
        out.stderr.contains(&format!(
            "riot: worktree w1 kept at {} with 1 uncommitted change; its branch is riot/w1",
            path.display()
        )),
        "{}",
        out.stderr
    );

    // The session ran there and says so.
    let sessions = run(world.bare(&["sessions", "list", "--json"])).await;
    let sessions: Value = serde_json::from_str(&sessions.stdout).unwrap();
    assert_eq!(sessions[0]["cwd"], json!(path));
    assert_eq!(
        sessions[0]["worktree"],
        json!({"name": "w1", "branch": "riot/w1", "path": path, "project": cwd})
    );
    let text = run(world.bare(&["sessions", "list"])).await;
    assert!(
        text.stdout.contains("[worktree w1, riot/w1]"),
        "{}",
        text.stdout
    );

    // Uncommitted changes need --force; committed ones keep the branch.
    let refused = run(world.bare(&["worktree", "remove", "w1"])).await;
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert_eq!(
        refused.stderr.trim(),
        "riot worktree remove: worktree w1 has 1 uncommitted change; commit or discard them, or remove it anyway with --force"
    );
    assert!(path.join("new.txt").exists());
    git(&path, &["add", "new.txt"]);
    git(&path, &["commit", "--quiet", "-m", "agent work"]);
    let removed = run(world.bare(&["worktree", "remove", "w1"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        removed.stdout.trim(),
        "Removed worktree w1; its branch riot/w1 is kept with its 1 commit (`git branch -D riot/w1` deletes it)."
    );
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd).trim(), "riot/w1");
    assert!(listed(&world).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_worktree_is_removed_with_its_branch_at_the_end() {
    let world = World::new();
    let cwd = repository(&world);
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("nothing to do".into())],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["--worktree", "w2", "look"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let home = world.home.path().canonicalize().unwrap();
    assert!(
        out.stderr
            .contains("riot: worktree w2 removed: nothing changed in it"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "riot: working in worktree w2 at {}",
            home.join("worktrees").display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd), "");
    assert!(listed(&world).await.is_empty());
    // The model saw the worktree as its working directory.
    let body = &server.requests()[0].body;
    assert!(
        body["system"].to_string().contains("/worktrees/"),
        "{}",
        body["system"]
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("scratch.txt")).unwrap(),
        "the person's notes\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_with_a_bare_w_before_the_prompt_picks_a_name_and_sends_the_prompt() {
    let world = World::new();
    let cwd = repository(&world);
    let server = writer("new.txt", "from the agent\n").await;
    let base = server.base_url();
    let out = run(world.bare(&[
        "-p",
        "--cwd",
        cwd.to_str().unwrap(),
        "--provider",
        "anthropic",
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
        "--permission-mode",
        "acceptEdits",
        "-w",
        "write the new file",
    ]))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "done");
    // The words were the prompt, not a worktree name.
    assert_eq!(
        support::conversation(server.requests()[0].body["messages"].as_array().unwrap()),
        ["user: write the new file"]
    );
    let list = listed(&world).await;
    assert_eq!(list.len(), 1, "{list:?} {}", out.stderr);
    let name = list[0]["name"].as_str().unwrap();
    assert!(name.starts_with("wt-"), "{name}");
    let path = PathBuf::from(list[0]["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(path.join("new.txt")).unwrap(),
        "from the agent\n"
    );
    assert!(!cwd.join("new.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_removes_a_worktree_with_uncommitted_changes_and_its_branch() {
    let world = World::new();
    let cwd = repository(&world);
    let server = writer("draft.txt", "x\n").await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["-w", "w3", "--permission-mode", "accept-edits", "draft"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let path = PathBuf::from(listed(&world).await[0]["path"].as_str().unwrap());
    assert!(path.join("draft.txt").exists());
    let removed = run(world.bare(&["worktree", "remove", "w3", "--force"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        removed.stdout.trim(),
        "Removed worktree w3 and its branch riot/w3."
    );
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd), "");
    assert_eq!(
        std::fs::read_to_string(cwd.join("scratch.txt")).unwrap(),
        "the person's notes\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_name_or_a_directory_outside_git_is_a_clear_usage_error() {
    // No request may reach the model: an empty strict script.
    let server = MockServer::start(Script::new(Wire::Anthropic, vec![]))
        .await
        .unwrap();
    let plain = World::new();
    let out = run(plain.exec(&server, Wire::Anthropic, &["--worktree", "w1", "go"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        format!(
            "riot: {} is not in a git repository; worktrees need one (run `git init` and commit first, or drop --worktree)",
            plain.cwd().display()
        )
    );

    let world = World::new();
    repository(&world);
    let out = run(world.exec(&server, Wire::Anthropic, &["--worktree", "a/b", "go"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        "riot: `a/b` cannot name a worktree: use 1–64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-` (e.g. --worktree fix-login)"
    );
    let out = run(world.bare(&["worktree", "remove", "nope"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .starts_with("riot worktree remove: there is no worktree `nope` of "),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

/// `riot serve` in accept-edits mode; the running server and a client
/// connected to it.
async fn serve(world: &World, server: &MockServer) -> (Running, WsClient) {
    let (riot, url) = serving(world, server).await;
    (riot, connect(&url).await)
}

/// `riot serve` in accept-edits mode; the running server and its ACP
/// address.
async fn serving(world: &World, server: &MockServer) -> (Running, String) {
    let base = server.base_url();
    let mut cmd = world.bare(&[
        "serve",
        "--provider",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--permission-mode",
        "accept-edits",
        "--port",
        "0",
    ]);
    cmd.stdin(std::process::Stdio::piped());
    let mut riot = Running::spawn(cmd);
    let stdout = riot.child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(PATIENCE, lines.next_line())
        .await
        .expect("riot serve printed no line")
        .unwrap()
        .expect("riot serve closed stdout");
    let address = line
        .strip_prefix("Riot is serving at http://")
        .unwrap_or_else(|| panic!("unexpected line: {line}"));
    let (host, token) = address.split_once("/?token=").unwrap();
    (riot, format!("ws://{host}/acp?token={token}"))
}

/// A client of `riot serve` (another window), initialized.
async fn connect(url: &str) -> WsClient {
    let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_two_worktrees_of_one_serve_run_at_once_apart() {
    let world = World::new();
    let cwd = repository(&world);
    // Each session's requests told apart: by its prompt, then by its own
    // call's id once the result is in.
    let write = |id: &str, file: &str| {
        tool_call(
            id,
            "Write",
            json!({"file_path": file, "content": format!("{file} from its own session\n")}),
        )
    };
    let server = MockServer::start(
        Script::new(Wire::Anthropic, vec![])
            .when_request_contains("call_alpha", Reply::Text("alpha done".into()))
            .when_request_contains("call_beta", Reply::Text("beta done".into()))
            .when("write alpha", write("call_alpha", "alpha.txt"))
            .when("write beta", write("call_beta", "beta.txt")),
    )
    .await
    .unwrap();
    let (riot, mut client) = serve(&world, &server).await;
    let mut sessions = Vec::new();
    for name in ["wa", "wb"] {
        let (_, opened) = client
            .call(
                "session/new",
                json!({"cwd": cwd, "mcpServers": [], "_meta": {"riot": {"worktree": name}}}),
            )
            .await;
        let worktree = opened["_meta"]["riot"]["worktree"].clone();
        assert_eq!(worktree["name"], name, "{opened}");
        assert_eq!(worktree["branch"], format!("riot/{name}"), "{opened}");
        // Started at the project's top, the session works at the worktree's.
        assert_eq!(worktree["cwd"], worktree["path"], "{opened}");
        assert_eq!(worktree["project"], json!(cwd), "{opened}");
        sessions.push((
            opened["sessionId"].as_str().unwrap().to_owned(),
            PathBuf::from(worktree["path"].as_str().unwrap()),
        ));
    }
    assert_eq!(
        git_worktrees(&cwd),
        vec![cwd.clone(), sessions[0].1.clone(), sessions[1].1.clone()]
    );
    // Both prompts go out before either answer comes back.
    let a = client
        .send(
            "session/prompt",
            json!({"sessionId": sessions[0].0, "prompt": [{"type": "text", "text": "write alpha"}]}),
        )
        .await;
    let b = client
        .send(
            "session/prompt",
            json!({"sessionId": sessions[1].0, "prompt": [{"type": "text", "text": "write beta"}]}),
        )
        .await;
    let mut done = Vec::new();
    while done.len() < 2 {
        let message = client.read().await;
        if message["id"] == json!(a) || message["id"] == json!(b) {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            done.push(message["id"].clone());
        }
    }
    let (alpha, beta) = (&sessions[0].1, &sessions[1].1);
    assert_eq!(
        std::fs::read_to_string(alpha.join("alpha.txt")).unwrap(),
        "alpha.txt from its own session\n"
    );
    assert_eq!(
        std::fs::read_to_string(beta.join("beta.txt")).unwrap(),
        "beta.txt from its own session\n"
    );
    assert!(!alpha.join("beta.txt").exists());
    assert!(!beta.join("alpha.txt").exists());
    assert!(!cwd.join("alpha.txt").exists() && !cwd.join("beta.txt").exists());
    assert_eq!(server.requests().len(), 4);
    // `session/list` names each session's worktree (the web UI shows it).
    let (_, list) = client.call("session/list", json!({})).await;
    let mut named: Vec<(String, Value)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["sessionId"].as_str().unwrap().to_owned(),
                s["_meta"]["riot"]["worktree"].clone(),
            )
        })
        .collect();
    named.sort_by(|a, b| a.1["name"].as_str().cmp(&b.1["name"].as_str()));
    let expected: Vec<(String, Value)> = sessions
        .iter()
        .zip(["wa", "wb"])
        .map(|((id, path), name)| {
            (
                id.clone(),
                json!({"name": name, "branch": format!("riot/{name}"), "path": path, "project": cwd, "present": true}),
            )
        })
        .collect();
    assert_eq!(named, expected, "{list}");

    // The server's end keeps both (each changed something), with branches.
    client.socket.close(None).await.unwrap();
    assert!(signal("TERM", i64::from(riot.pid())));
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(alpha.exists() && beta.exists());
    assert_eq!(branches(&cwd), "riot/wa\nriot/wb\n");
    let listed: Vec<String> = listed(&world)
        .await
        .iter()
        .map(|w| format!("{} {}", w["name"], w["uncommitted"]))
        .collect();
    assert_eq!(listed, ["\"wa\" 1", "\"wb\" 1"]);
}

/// A script answering "nothing to do": a session that changes nothing.
async fn idle() -> MockServer {
    MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("nothing to do".into())],
    ))
    .await
    .unwrap()
}

/// A session in the worktree `name` writing `file` (so it is kept); the
/// worktree's path.
async fn kept_worktree(world: &World, name: &str, file: &str) -> PathBuf {
    let server = writer(file, "from the agent\n").await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--worktree",
            name,
            "--permission-mode",
            "accept-edits",
            "write it",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let list = listed(world).await;
    let entry = list.iter().find(|w| w["name"] == name).unwrap();
    PathBuf::from(entry["path"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_git_file_cannot_make_riots_own_git_run_a_program() {
    let world = World::new();
    let cwd = repository(&world);
    let path = kept_worktree(&world, "w1", "new.txt").await;
    // What a command in the worktree could do: point its `.git` file at
    // a git directory whose config names an fsmonitor program.
    let outside = tempfile::tempdir().unwrap();
    let evil = outside.path().join("evil.git");
    let marker = outside.path().join("ran");
    git(
        outside.path(),
        &["init", "--quiet", "--bare", evil.to_str().unwrap()],
    );
    let hook = outside.path().join("hook.sh");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    std::process::Command::new("chmod")
        .args(["+x", hook.to_str().unwrap()])
        .status()
        .unwrap();
    let git_dir = format!("--git-dir={}", evil.display());
    git(outside.path(), &[&git_dir, "config", "core.bare", "false"]);
    git(
        outside.path(),
        &[&git_dir, "config", "core.fsmonitor", hook.to_str().unwrap()],
    );
    // The planted config does run a program for a plain `git status`
    // there: the attack is real.
    std::fs::write(path.join(".git"), format!("gitdir: {}\n", evil.display())).unwrap();
    git(&path, &["status", "--porcelain"]);
    assert!(marker.exists(), "the fsmonitor hook did not run for git");
    std::fs::remove_file(&marker).unwrap();

    // `riot worktree list`, from the project and from the worktree.
    let list = listed(&world).await;
    assert_eq!(list[0]["uncommitted"], 1, "{list:?}");
    let mut inside = world.bare(&["worktree", "list", "--json"]);
    inside.current_dir(&path);
    let out = run(inside).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !marker.exists(),
        "riot worktree list ran the planted program"
    );

    // The end of a session reopened in it.
    let server = idle().await;
    let out = run(world.exec(&server, Wire::Anthropic, &["--worktree", "w1", "look"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "riot: worktree w1 kept at {} with 1 uncommitted change;",
            path.display()
        )),
        "{}",
        out.stderr
    );
    assert!(
        !marker.exists(),
        "the session's end ran the planted program"
    );

    // Removing it: Riot puts the `.git` file back and removes the right
    // worktree, running nothing.
    let removed = run(world.bare(&["worktree", "remove", "w1", "--force"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert!(
        !marker.exists(),
        "riot worktree remove ran the planted program"
    );
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_with_commits_is_kept_wherever_the_worktrees_head_is_or_its_directory_gone() {
    let world = World::new();
    let cwd = repository(&world);
    let base = git(&cwd, &["rev-parse", "HEAD"]).trim().to_owned();
    let path = kept_worktree(&world, "w2", "new.txt").await;
    // The agent commits on the branch, then puts HEAD back on the base:
    // the worktree looks clean and at its base.
    git(&path, &["add", "new.txt"]);
    git(&path, &["commit", "--quiet", "-m", "agent work"]);
    git(&path, &["checkout", "--quiet", "--detach", &base]);
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    let list = listed(&world).await;
    assert_eq!(list[0]["commits"], 1, "{list:?}");

    // The end of a session in it keeps it, naming the commit.
    let server = idle().await;
    let out = run(world.exec(&server, Wire::Anthropic, &["--worktree", "w2", "look"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "riot: worktree w2 kept at {} with 1 commit; its branch is riot/w2",
            path.display()
        )),
        "{}",
        out.stderr
    );
    assert!(path.exists());
    assert_eq!(branches(&cwd).trim(), "riot/w2");

    // Its directory deleted by hand: the branch is still measured, and
    // kept.
    std::fs::remove_dir_all(&path).unwrap();
    let list = listed(&world).await;
    assert_eq!(list[0]["present"], false, "{list:?}");
    assert_eq!(list[0]["commits"], 1, "{list:?}");
    let removed = run(world.bare(&["worktree", "remove", "w2"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        removed.stdout.trim(),
        "Removed worktree w2; its branch riot/w2 is kept with its 1 commit (`git branch -D riot/w2` deletes it)."
    );
    assert_eq!(branches(&cwd).trim(), "riot/w2");
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(
        git(&cwd, &["log", "--format=%s", "-1", "riot/w2"]).trim(),
        "agent work"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_on_a_detached_head_keep_the_worktree() {
    let world = World::new();
    let cwd = repository(&world);
    let path = kept_worktree(&world, "w3", "new.txt").await;
    // Committed on a detached HEAD: the branch stays at the base.
    git(&path, &["checkout", "--quiet", "--detach"]);
    git(&path, &["add", "new.txt"]);
    git(&path, &["commit", "--quiet", "-m", "detached work"]);
    let server = idle().await;
    let out = run(world.exec(&server, Wire::Anthropic, &["--worktree", "w3", "look"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "riot: worktree w3 kept at {} with 1 commit not on its branch;",
            path.display()
        )),
        "{}",
        out.stderr
    );
    let refused = run(world.bare(&["worktree", "remove", "w3"])).await;
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert_eq!(
        refused.stderr.trim(),
        "riot worktree remove: worktree w3 has 1 commit on its HEAD that its branch riot/w3 does not have; put them on a branch (`git branch NAME` in the worktree), or remove it anyway with --force"
    );
    assert!(path.exists());
    assert_eq!(branches(&cwd).trim(), "riot/w3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_is_not_removed_while_another_session_works_in_it() {
    let world = World::new();
    let cwd = repository(&world);
    // One answer: window A's prompt, which saves the session B loads.
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("nothing to do".into())],
    ))
    .await
    .unwrap();
    let (riot, url) = serving(&world, &server).await;
    let mut client = connect(&url).await;
    // Two sessions given the same worktree name share it.
    let mut ids = Vec::new();
    let mut path = PathBuf::new();
    for _ in 0..2 {
        let (_, opened) = client
            .call(
                "session/new",
                json!({"cwd": cwd, "mcpServers": [], "_meta": {"riot": {"worktree": "shared"}}}),
            )
            .await;
        path = PathBuf::from(
            opened["_meta"]["riot"]["worktree"]["path"]
                .as_str()
                .unwrap(),
        );
        ids.push(opened["sessionId"].as_str().unwrap().to_owned());
    }
    // The first one closes: its unchanged worktree stays for the second.
    client
        .call("session/close", json!({"sessionId": ids[0]}))
        .await;
    assert!(path.exists(), "removed under the other session");
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone(), path.clone()]);
    // The last one closes: now it goes.
    client
        .call("session/close", json!({"sessionId": ids[1]}))
        .await;
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd), "");

    // Window A makes a worktree session, window B loads it, A closes:
    // the worktree stays for B; when B closes, it goes.
    let (_, opened) = client
        .call(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [], "_meta": {"riot": {"worktree": "seen"}}}),
        )
        .await;
    let id = opened["sessionId"].as_str().unwrap().to_owned();
    let path = PathBuf::from(
        opened["_meta"]["riot"]["worktree"]["path"]
            .as_str()
            .unwrap(),
    );
    client
        .call(
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "look"}]}),
        )
        .await;
    let mut window_b = connect(&url).await;
    window_b
        .call(
            "session/load",
            json!({"sessionId": id, "cwd": path, "mcpServers": []}),
        )
        .await;
    client.call("session/close", json!({"sessionId": id})).await;
    assert!(path.exists(), "removed under window B");
    window_b
        .call("session/close", json!({"sessionId": id}))
        .await;
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd), "");
    window_b.socket.close(None).await.unwrap();
    client.socket.close(None).await.unwrap();
    assert!(signal("TERM", i64::from(riot.pid())));
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_goes_on_in_its_worktree_or_is_refused_once_it_is_removed() {
    let world = World::new();
    let cwd = repository(&world);
    let path = kept_worktree(&world, "w4", "first.txt").await;
    let sessions = run(world.bare(&["sessions", "list", "--json"])).await;
    let sessions: Value = serde_json::from_str(&sessions.stdout).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_owned();

    // `--resume ID` without --worktree: it works where it worked.
    let server = writer("second.txt", "later\n").await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--resume", &id, "--permission-mode", "accept-edits", "more"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "riot: working in worktree w4 at {} (branch riot/w4), where this session worked",
            path.display()
        )),
        "{}",
        out.stderr
    );
    assert!(path.join("second.txt").exists());
    assert!(!cwd.join("second.txt").exists());

    let removed = run(world.bare(&["worktree", "remove", "w4", "--force"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    let sentence = "the worktree w4 of this session was removed, so the session cannot be reopened where it worked; start a new session (its branch riot/w4, if kept, holds what it committed)";
    // Refused, never run in the main checkout.
    let none = MockServer::start(Script::new(Wire::Anthropic, vec![]))
        .await
        .unwrap();
    let out = run(world.exec(&none, Wire::Anthropic, &["--resume", &id, "more"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(out.stderr.trim(), format!("riot: {sentence}"));

    // Over ACP: listed as gone, and opening it says why.
    let (riot, mut client) = serve(&world, &none).await;
    let (_, list) = client.call("session/list", json!({})).await;
    assert_eq!(
        list["sessions"][0]["_meta"]["riot"]["worktree"],
        json!({"name": "w4", "branch": "riot/w4", "path": path, "project": cwd, "present": false}),
        "{list}"
    );
    for method in ["session/load", "session/resume"] {
        let (_, answer) = client
            .exchange(
                method,
                json!({"sessionId": id, "cwd": path, "mcpServers": []}),
            )
            .await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert_eq!(answer["error"]["message"], sentence, "{method}: {answer}");
    }
    // A malformed worktree request is refused, not opened in the project.
    let (_, answer) = client
        .exchange(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [], "_meta": {"riot": {"worktree": false}}}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("_meta.riot.worktree must be a worktree name"),
        "{answer}"
    );
    client.socket.close(None).await.unwrap();
    assert!(signal("TERM", i64::from(riot.pid())));
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(none.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_removes_a_broken_worktree_and_new_ignored_files_keep_one() {
    let world = World::new();
    let cwd = repository(&world);
    std::fs::write(cwd.join(".gitignore"), "build/\n").unwrap();
    git(&cwd, &["add", ".gitignore"]);
    git(&cwd, &["commit", "--quiet", "-m", "ignore build"]);

    // Only git-ignored files written: kept, and said so.
    let server = writer("build/out.txt", "built\n").await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--worktree",
            "w5",
            "--permission-mode",
            "accept-edits",
            "build",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let list = listed(&world).await;
    let path = PathBuf::from(list[0]["path"].as_str().unwrap());
    assert!(
        out.stderr.contains(&format!(
            "riot: worktree w5 kept at {} with 1 new git-ignored file;",
            path.display()
        )),
        "{}",
        out.stderr
    );
    assert_eq!(list[0]["ignored"], 1, "{list:?}");
    let refused = run(world.bare(&["worktree", "remove", "w5"])).await;
    assert_eq!(refused.code, Some(2), "{refused:?}");
    assert_eq!(
        refused.stderr.trim(),
        "riot worktree remove: worktree w5 has 1 new git-ignored file; commit or discard them, or remove it anyway with --force"
    );

    // Broken: its `.git` file names nothing. --force still removes it.
    std::fs::write(path.join(".git"), "gitdir: /nonexistent/riot-test\n").unwrap();
    let removed = run(world.bare(&["worktree", "remove", "w5", "--force"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    assert_eq!(
        removed.stdout.trim(),
        "Removed worktree w5 and its branch riot/w5."
    );
    assert!(!path.exists());
    assert_eq!(git_worktrees(&cwd), vec![cwd.clone()]);
    assert_eq!(branches(&cwd), "");
}
