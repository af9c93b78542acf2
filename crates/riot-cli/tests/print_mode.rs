//! `riot -p` and Claude Code's headless flag names (docs/interfaces.md):
//! print mode runs what `riot exec` runs, and each alias does what the
//! Riot flag it stands for does — checked by what the tools did and what
//! the model was told, against the strict mock model server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{NOTES, World, bodies, only_session, provider, run, tool_call};
use tokio::io::AsyncWriteExt;

async fn mock(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

/// `riot -p` against `server` in the world's project, then `args`.
fn print(world: &World, server: &MockServer, args: &[&str]) -> tokio::process::Command {
    let cwd = world.project.path().to_str().unwrap().to_owned();
    let base = server.base_url();
    let mut all = vec![
        "-p",
        "--cwd",
        cwd.as_str(),
        "--provider",
        provider(Wire::Anthropic),
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
    ];
    all.extend_from_slice(args);
    world.bare(&all)
}

/// A Bash call creating `file`.
fn touch(file: &str) -> Reply {
    tool_call(
        "call_touch_1",
        "Bash",
        json!({"command": format!("touch {file}"), "description": "Make a file"}),
    )
}

/// Whether the tool result of `call_touch_1` in the second request is an
/// error (the call was refused).
fn touch_refused(server: &MockServer) -> bool {
    support::tool_result(&bodies(server)[1], "call_touch_1")["is_error"] == true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_with_json_output_is_exec_with_json_output() {
    let world = World::new();
    let server = mock(vec![Reply::Text("Hello there.".into())]).await;
    let out = run(print(
        &world,
        &server,
        &["--output-format", "json", "Say hello"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Hello there.");
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["session_id"].as_str().unwrap(), only_session(&world));
    assert_eq!(
        support::conversation(bodies(&server)[0]["messages"].as_array().unwrap()),
        ["user: Say hello"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_reads_the_prompt_from_stdin_and_prints_the_answer() {
    let world = World::new();
    let server = mock(vec![Reply::Text("Piped.".into())]).await;
    let mut cmd = print(&world, &server, &["--output-format", "text"]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"From a pipe").await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(support::PATIENCE, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "Piped.\n");
    assert_eq!(
        support::conversation(bodies(&server)[0]["messages"].as_array().unwrap()),
        ["user: From a pipe"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_lets_a_command_run_and_without_it_the_command_is_denied() {
    let wire = Wire::Anthropic;
    // Without the flag: denied (nobody can answer the question).
    let world = World::new();
    let server = mock(vec![touch("made-by-bash"), Reply::Text("No.".into())]).await;
    let out = run(world.exec(&server, wire, &["Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(touch_refused(&server));
    assert!(!world.project.path().join("made-by-bash").exists());

    // Claude Code's rule list, comma-separated, with the older `:*` form;
    // and the kebab-case spelling, space-separated.
    for args in [
        &["--allowedTools", "Read,Bash(touch:*)", "Make the file"][..],
        &[
            "--allowed-tools",
            "Read Bash(touch made-by-bash)",
            "Make the file",
        ],
    ] {
        let world = World::new();
        let server = mock(vec![touch("made-by-bash"), Reply::Text("Made.".into())]).await;
        let out = run(print(&world, &server, args)).await;
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        assert_eq!(out.stdout, "Made.\n");
        assert!(!touch_refused(&server), "{args:?}");
        assert!(
            world.project.path().join("made-by-bash").exists(),
            "{args:?}: the command ran"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disallowed_tools_denies_a_call_and_the_result_lists_it() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let read = tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"}));
    let server = mock(vec![read, Reply::Text("I may not read it.".into())]).await;
    let args = [
        "--disallowedTools",
        "Bash(rm:*),Read",
        "--output-format",
        "json",
        "Read the notes",
    ];
    let out = run(print(&world, &server, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = support::tool_result(&bodies(&server)[1], "call_read_1");
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Permission to run Read (")
            && text.contains("denied by the rule `Read` from a command-line flag"),
        "the model is told the deny rule refused it: {text}"
    );
    let json = out.json();
    assert_eq!(
        json["permission_denials"],
        json!([{"tool_name": "Read", "tool_use_id": "call_read_1",
                "tool_input": {"file_path": "notes.txt"}}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dangerously_skip_permissions_is_bypass_mode() {
    let world = World::new();
    let server = mock(vec![touch("made-in-bypass"), Reply::Text("Made.".into())]).await;
    let args = ["--dangerously-skip-permissions", "Make the file"];
    let out = run(print(&world, &server, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!touch_refused(&server));
    assert!(world.project.path().join("made-in-bypass").exists());

    // With stream-json, the init line says so in Claude Code's word.
    let world = World::new();
    let server = mock(vec![Reply::Text("Hi.".into())]).await;
    let args = [
        "--dangerously-skip-permissions",
        "--output-format",
        "stream-json",
        "Hi",
    ];
    let out = run(print(&world, &server, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let init: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["permissionMode"], "bypassPermissions");

    // Against another --permission-mode: which one was meant is unclear.
    let out = run(print(
        &world,
        &server,
        &[
            "--dangerously-skip-permissions",
            "--permission-mode",
            "plan",
            "Hi",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot exec: --dangerously-skip-permissions means --permission-mode bypass, but --permission-mode plan was given too; drop one of them\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_codes_permission_mode_names_are_riots_modes() {
    let world = World::new();
    let write = tool_call(
        "call_write_1",
        "Write",
        json!({"file_path": "out.txt", "content": "hello\n"}),
    );
    let server = mock(vec![write, Reply::Text("Written.".into())]).await;
    let out = run(print(
        &world,
        &server,
        &["--permission-mode", "acceptEdits", "Write it"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("out.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_model_resume_and_continue_work_under_print_mode() {
    let world = World::new();
    let server = mock(vec![
        Reply::Text("First.".into()),
        Reply::Text("Second.".into()),
        Reply::Text("Third.".into()),
    ])
    .await;
    let out = run(print(&world, &server, &["--output-format", "json", "One"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let id = out.json()["session_id"].as_str().unwrap().to_owned();

    let out = run(print(
        &world,
        &server,
        &["-r", &id, "--max-turns", "3", "Two"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Second.\n");
    let out = run(print(&world, &server, &["-c", "Three"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Third.\n");
    assert_eq!(only_session(&world), id, "both continued the one session");
    let last = bodies(&server).pop().unwrap();
    assert_eq!(
        support::conversation(last["messages"].as_array().unwrap()),
        [
            "user: One",
            "assistant: First.",
            "user: Two",
            "assistant: Second.",
            "user: Three"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_adds_the_progress_lines_to_json_output() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let read = tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"}));
    let server = mock(vec![
        read.clone(),
        Reply::Text("Read.".into()),
        read,
        Reply::Text("Read.".into()),
    ])
    .await;
    let quiet = run(print(&world, &server, &["--output-format", "json", "Read"])).await;
    assert_eq!(quiet.code, Some(0), "{quiet:?}");
    assert_eq!(quiet.stderr, "", "json alone: errors only on stderr");
    let verbose = run(print(
        &world,
        &server,
        &["--verbose", "--output-format", "json", "Read"],
    ))
    .await;
    assert_eq!(verbose.code, Some(0), "{verbose:?}");
    assert_eq!(verbose.json()["result"], "Read.");
    assert!(
        verbose.stderr.lines().any(|l| l.starts_with("• Read")),
        "the tool call's line: {}",
        verbose.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_options_need_print_mode_and_print_mode_takes_no_subcommand() {
    let world = World::new();
    let out = run(world.bare(&["--output-format", "json", "Hi"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot: these options belong to print mode: add -p (riot -p PROMPT …) or use `riot exec`\n"
    );
    let out = run(world.bare(&["-p", "sessions", "list"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot: -p runs a task as `riot exec` does; drop -p, or the subcommand\n"
    );
    // Bare `riot` is the terminal UI, which needs a terminal.
    let out = run(world.bare(&["Hi"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot: the terminal UI needs a terminal on stdin and stdout; to run a task without one, use `riot exec \"PROMPT\"` (or `riot -p`)\n"
    );
}

/// The text blocks of an Anthropic request's `system`, joined.
fn system_text(body: &Value) -> String {
    body["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_prompt_flags_shape_a_new_sessions_prompt_and_a_resumed_one_keeps_its_own() {
    let world = World::new();
    let server = mock(vec![
        Reply::Text("Plain.".into()),
        Reply::Text("Shaped.".into()),
        Reply::Text("Resumed.".into()),
    ])
    .await;
    let out = run(print(&world, &server, &["--output-format", "json", "Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let world = World::new();
    let args = [
        "--system-prompt",
        "You review Rust code and nothing else.",
        "--append-system-prompt",
        "Answer in French.",
        "Hi",
    ];
    let out = run(print(&world, &server, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let sent = bodies(&server);
    let (plain, shaped) = (system_text(&sent[0]), system_text(&sent[1]));
    assert!(plain.starts_with("You are Riot"), "{plain}");
    assert!(
        shaped.starts_with("You review Rust code and nothing else.\n"),
        "{shaped}"
    );
    assert!(!shaped.contains("You are Riot"), "{shaped}");
    assert!(
        shaped.contains("# Environment"),
        "the session section stays: {shaped}"
    );
    assert!(shaped.ends_with("\n\nAnswer in French."), "{shaped}");

    // Resumed: the prompt is the session's own, whatever the flags say.
    let out = run(print(
        &world,
        &server,
        &["-c", "--append-system-prompt", "Answer in German.", "Again"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(system_text(&bodies(&server)[2]), shaped);

    let out = run(print(&world, &server, &["--system-prompt", "", "Hi"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot exec: --system-prompt needs the text of the instructions\n"
    );
}
