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
    let url = format!("ws://{host}/acp?token={token}");
    let (socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    (riot, client)
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
                json!({"name": name, "branch": format!("riot/{name}"), "path": path, "project": cwd}),
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
