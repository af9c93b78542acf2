//! Checkpoints and rewind (docs/rewind.md), end to end: the real `riot`
//! binary against the strict mock model, in a real git repository.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{
    PATIENCE, Running, World, bodies, conversation, run, signal, stalled_partial_answer, tool_call,
    wait_until,
};

const WIRE: Wire = Wire::Anthropic;

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(WIRE, replies)).await.unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Person", "-c", "user.email=p@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// What rewind must never touch in `.git`: the refs (every file under
/// refs/, HEAD, packed-refs), the index's bytes, how many objects there
/// are, and the config.
fn git_state(project: &Path) -> (BTreeMap<String, Vec<u8>>, Vec<u8>, usize, Vec<u8>) {
    let git = project.join(".git");
    let mut refs = BTreeMap::new();
    let mut objects = 0;
    let mut stack = vec![git.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path
                .strip_prefix(&git)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            } else if rel.starts_with("objects/") {
                objects += 1;
            } else if rel.starts_with("refs/") || rel == "HEAD" || rel == "packed-refs" {
                refs.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    (
        refs,
        std::fs::read(git.join("index")).unwrap(),
        objects,
        std::fs::read(git.join("config")).unwrap(),
    )
}

/// A project that is a git repository with one committed file.
fn repository(world: &World) {
    let project = world.project.path();
    git(project, &["init", "-q", "-b", "main"]);
    write(&project.join("tracked.txt"), "original line\n");
    write(&project.join(".gitignore"), "build/\ntarget/\n");
    git(project, &["add", "tracked.txt", ".gitignore"]);
    git(project, &["commit", "-q", "-m", "start"]);
}

fn session_id(run: &support::Run) -> String {
    run.json()["session_id"].as_str().unwrap().to_owned()
}

/// The one turn of the first tests: write a new file, read and edit the
/// tracked one, run a command that makes another file.
fn working_turn() -> Vec<Reply> {
    vec![
        tool_call(
            "call_write",
            "Write",
            json!({"file_path": "src/new.txt", "content": "written by the agent\n"}),
        ),
        tool_call("call_read", "Read", json!({"file_path": "tracked.txt"})),
        tool_call(
            "call_edit",
            "Edit",
            json!({"file_path": "tracked.txt", "old_string": "original line", "new_string": "edited line"}),
        ),
        tool_call(
            "call_bash",
            "Bash",
            json!({"command": "echo made > made.txt && mkdir -p build target && echo out > build/out.bin && echo out > target/out.bin"}),
        ),
        Reply::Text("Done.".into()),
    ]
}

async fn exec(world: &World, server: &MockServer, args: &[&str]) -> support::Run {
    let mut all = vec!["--permission-mode", "bypass", "--output-format", "json"];
    all.extend_from_slice(args);
    let out = run(world.exec(server, WIRE, &all)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    out
}

async fn riot(world: &World, args: &[&str]) -> support::Run {
    run(world.bare(args)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_restores_the_agents_three_changes_and_touches_nothing_else() {
    let world = World::new();
    repository(&world);
    let project = world.project.path();
    let server = server(working_turn()).await;
    let first = exec(&world, &server, &["Do the work"]).await;
    let id = session_id(&first);
    assert_eq!(read(&project.join("src/new.txt")), "written by the agent\n");
    assert_eq!(read(&project.join("tracked.txt")), "edited line\n");
    assert_eq!(read(&project.join("made.txt")), "made\n");

    // The person's own untracked file, and the repository as it is now.
    write(&project.join("mine.txt"), "my notes\n");
    let git_before = git_state(project);

    let listed = riot(&world, &["sessions", "checkpoints", &id, "--json"]).await;
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let points: Value = serde_json::from_str(listed.stdout.trim()).unwrap();
    assert_eq!(points[0]["number"], 1);
    assert_eq!(points[0]["text"], "Do the work");
    // build/ is ignored but recorded, like every file a command may
    // change; target/ is a build folder, made again by a build, and left
    // out.
    assert_eq!(
        points[0]["files"],
        json!(["build/out.bin", "made.txt", "src/new.txt", "tracked.txt"])
    );

    let out = riot(&world, &["sessions", "rewind", &id, "--to", "1"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "Rewound to just before message 1. The conversation from there on is withdrawn. Restored: tracked.txt. Removed: build/out.bin, made.txt, src/new.txt.\n"
    );
    assert!(!project.join("src/new.txt").exists());
    assert!(!project.join("made.txt").exists());
    assert_eq!(read(&project.join("tracked.txt")), "original line\n");
    assert_eq!(read(&project.join("mine.txt")), "my notes\n");
    assert!(!project.join("build/out.bin").exists());
    assert_eq!(read(&project.join("target/out.bin")), "out\n");
    assert_eq!(git_state(project), git_before);

    // The conversation is withdrawn but kept, marked, in the transcript.
    let shown = riot(&world, &["sessions", "show", &id]).await;
    assert!(
        shown
            .stdout
            .contains("> Do the work\n  (withdrawn by a rewind; not sent to the model again)"),
        "{}",
        shown.stdout
    );

    // And the rewind itself can be undone.
    let undo = riot(&world, &["sessions", "rewind", &id, "--undo"]).await;
    assert_eq!(undo.code, Some(0), "{undo:?}");
    assert_eq!(read(&project.join("src/new.txt")), "written by the agent\n");
    assert_eq!(read(&project.join("tracked.txt")), "edited line\n");
    assert_eq!(read(&project.join("made.txt")), "made\n");
    assert_eq!(git_state(project), git_before);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_person_changed_after_the_agent_is_kept_and_reported_unless_forced() {
    let world = World::new();
    repository(&world);
    let project = world.project.path();
    let server = server(vec![
        tool_call("call_read", "Read", json!({"file_path": "tracked.txt"})),
        tool_call(
            "call_edit",
            "Edit",
            json!({"file_path": "tracked.txt", "old_string": "original line", "new_string": "agent line"}),
        ),
        Reply::Text("Edited.".into()),
    ])
    .await;
    let id = session_id(&exec(&world, &server, &["Edit it"]).await);
    write(&project.join("tracked.txt"), "the person's line\n");

    let out = riot(
        &world,
        &["sessions", "rewind", &id, "--to", "1", "--files-only"],
    )
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("Changed by you since the agent, left as they are: tracked.txt"),
        "{}",
        out.stdout
    );
    assert_eq!(read(&project.join("tracked.txt")), "the person's line\n");

    // Forced: the agent's change is taken back over the person's, whose
    // version is kept first — undoing the forced rewind returns it.
    let undo = riot(&world, &["sessions", "rewind", &id, "--undo"]).await;
    assert_eq!(undo.code, Some(0), "{undo:?}");
    let forced = riot(
        &world,
        &[
            "sessions",
            "rewind",
            &id,
            "--to",
            "1",
            "--files-only",
            "--force",
            "--json",
        ],
    )
    .await;
    assert_eq!(forced.code, Some(0), "{forced:?}");
    let report: Value = serde_json::from_str(forced.stdout.trim()).unwrap();
    assert_eq!(report["files"]["forced"], json!(["tracked.txt"]));
    assert_eq!(report["files"]["restored"], json!(["tracked.txt"]));
    assert_eq!(read(&project.join("tracked.txt")), "original line\n");
    let undo = riot(&world, &["sessions", "rewind", &id, "--undo"]).await;
    assert_eq!(undo.code, Some(0), "{undo:?}");
    assert_eq!(read(&project.join("tracked.txt")), "the person's line\n");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversation_only_keeps_the_files_and_resume_sends_only_the_kept_messages() {
    let world = World::new();
    let project = world.project.path();
    let server = server(vec![
        tool_call(
            "call_a",
            "Write",
            json!({"file_path": "a.txt", "content": "a\n"}),
        ),
        Reply::Text("One done.".into()),
        tool_call(
            "call_b",
            "Write",
            json!({"file_path": "b.txt", "content": "b\n"}),
        ),
        Reply::Text("Two done.".into()),
        Reply::Text("Again done.".into()),
    ])
    .await;
    let id = session_id(&exec(&world, &server, &["First"]).await);
    exec(&world, &server, &["--resume", &id, "Second"]).await;

    let out = riot(
        &world,
        &[
            "sessions",
            "rewind",
            &id,
            "--to",
            "2",
            "--conversation-only",
        ],
    )
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "Rewound to just before message 2. The conversation from there on is withdrawn. Files were left as they are.\n"
    );
    assert_eq!(read(&project.join("a.txt")), "a\n");
    assert_eq!(read(&project.join("b.txt")), "b\n");

    exec(&world, &server, &["--resume", &id, "Again"]).await;
    let last = bodies(&server).pop().unwrap();
    assert_eq!(
        conversation(last["messages"].as_array().unwrap()),
        [
            "user: First",
            "assistant: tool_use call_a",
            "user: tool_result call_a",
            "assistant: One done.",
            "user: Again",
        ]
    );
    // The next prompt takes number 2 again.
    let listed = riot(&world, &["sessions", "checkpoints", &id, "--json"]).await;
    let points: Value = serde_json::from_str(listed.stdout.trim()).unwrap();
    let numbered: Vec<(u64, &str)> = points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["number"].as_u64().unwrap(), p["text"].as_str().unwrap()))
        .collect();
    assert_eq!(numbered, [(1, "First"), (2, "Again")]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_after_riot_was_killed_restores_from_the_disk_alone() {
    let world = World::new();
    repository(&world);
    let project = world.project.path();
    let server = server(vec![
        tool_call(
            "call_write",
            "Write",
            json!({"file_path": "new.txt", "content": "agent\n"}),
        ),
        stalled_partial_answer(),
    ])
    .await;
    let running = Running::spawn(world.exec(
        &server,
        WIRE,
        &["--permission-mode", "bypass", "Write and wait"],
    ));
    // The second request means the Write ran and its checkpoint was
    // recorded; the reply then stalls, and riot is killed mid-turn.
    wait_until("the request after the Write", || {
        server.requests().len() >= 2
    })
    .await;
    assert!(signal("KILL", i64::from(running.pid())));
    let killed = tokio::time::timeout(PATIENCE, running.finish())
        .await
        .unwrap();
    assert_ne!(killed.code, Some(0));
    assert_eq!(read(&project.join("new.txt")), "agent\n");

    let sessions: Vec<_> = std::fs::read_dir(world.home.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id = sessions[0].trim_end_matches(".jsonl").to_owned();
    let out = riot(&world, &["sessions", "rewind", &id, "--to", "1"]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("Removed: new.txt."), "{}", out.stdout);
    assert!(!project.join("new.txt").exists());
    assert_eq!(read(&project.join("tracked.txt")), "original line\n");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_in_an_open_session_takes_back_its_last_turn_and_the_session_goes_on_from_before_it() {
    let world = World::new();
    let project = world.project.path();
    let server = server(vec![
        tool_call(
            "call_a",
            "Write",
            json!({"file_path": "a.txt", "content": "a\n"}),
        ),
        Reply::Text("One done.".into()),
        tool_call(
            "call_b",
            "Write",
            json!({"file_path": "b.txt", "content": "b\n"}),
        ),
        Reply::Text("Two done.".into()),
        Reply::Text("Three done.".into()),
    ])
    .await;
    let id = session_id(&exec(&world, &server, &["First"]).await);
    exec(&world, &server, &["--resume", &id, "Second"]).await;

    // `/rewind` and `/undo` run in the session itself (Session::rewind),
    // not through `riot sessions`.
    let listed = run(world.exec(&server, WIRE, &["--resume", &id, "/rewind"])).await;
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let said = format!("{}{}", listed.stdout, listed.stderr);
    assert!(said.contains("1. First — changed a.txt"), "{said}");
    assert!(said.contains("2. Second — changed b.txt"), "{said}");

    let undo = run(world.exec(&server, WIRE, &["--resume", &id, "/undo"])).await;
    assert_eq!(undo.code, Some(0), "{undo:?}");
    let said = format!("{}{}", undo.stdout, undo.stderr);
    assert!(
        said.contains("Rewound to just before message 2. The conversation from there on is withdrawn. Removed: b.txt."),
        "{said}"
    );
    assert!(!project.join("b.txt").exists());
    assert_eq!(read(&project.join("a.txt")), "a\n");

    exec(&world, &server, &["--resume", &id, "Third"]).await;
    let last = bodies(&server).pop().unwrap();
    assert_eq!(
        conversation(last["messages"].as_array().unwrap()),
        [
            "user: First",
            "assistant: tool_use call_a",
            "user: tool_result call_a",
            "assistant: One done.",
            "user: Third",
        ]
    );
    server.shutdown().await;
}
