//! `riot tools list` / `riot tools call` through the real binary
//! (docs/interfaces.md): the order sent to the model, one call through the full
//! pipeline, questions answered "no" unless `--yes`, the result budget, and
//! `--session` running in that session's file state.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, run};

#[tokio::test]
async fn list_gives_the_builtin_then_session_tools_in_order_with_schemas() {
    let world = World::new();
    let out = run(world.bare(&["tools", "list", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let tools: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "Bash",
            "BashOutput",
            "KillShell",
            "TodoWrite",
            "Skill",
            "AskUser",
            "ExitPlanMode",
        ]
    );
    for t in &tools {
        assert_eq!(t["input_schema"]["type"], json!("object"), "{t}");
        assert!(
            t["description"].as_str().unwrap().contains("NEVER"),
            "{}",
            t["name"]
        );
    }
}

#[tokio::test]
async fn a_question_is_answered_no_unless_yes() {
    let world = World::new();
    let input = json!({"file_path": "out.txt", "content": "one\r\ntwo\r\n"}).to_string();
    let denied = run(world.bare(&["tools", "call", "Write", "--input", &input])).await;
    assert_eq!(denied.code, Some(1), "{denied:?}");
    assert!(denied.stdout.contains("denied"), "{}", denied.stdout);
    assert!(denied.stdout.contains("pass --yes"), "{}", denied.stdout);
    assert!(!world.project.path().join("out.txt").exists());

    let allowed = run(world.bare(&["tools", "call", "Write", "--yes", "--input", &input])).await;
    assert_eq!(allowed.code, Some(0), "{allowed:?}");
    assert_eq!(
        std::fs::read(world.project.path().join("out.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
}

#[tokio::test]
async fn read_only_calls_run_without_asking_and_bad_input_gets_the_hint() {
    let world = World::new();
    std::fs::write(world.project.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    let out = run(world.bare(&[
        "tools",
        "call",
        "Read",
        "--input",
        r#"{"file_path":"a.txt"}"#,
    ]))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "     1\talpha\n     2\tbeta\n");

    let ls = run(world.bare(&["tools", "call", "Bash", "--input", r#"{"command":"ls"}"#])).await;
    assert_eq!(
        ls.code,
        Some(0),
        "`ls` is read-only, so no question: {ls:?}"
    );
    assert!(ls.stdout.contains("a.txt"), "{}", ls.stdout);

    let bad = run(world.bare(&["tools", "call", "Read", "--input", r#"{"path":"a.txt"}"#])).await;
    assert_eq!(bad.code, Some(1), "{bad:?}");
    assert!(bad.stdout.contains("file_path"), "{}", bad.stdout);
}

#[tokio::test]
async fn an_output_over_budget_is_spilled_with_a_preview_and_the_cut_stated() {
    let world = World::new();
    let input =
        json!({"command": "head -c 300000 /dev/zero | tr '\\0' 'a'; echo; echo END-OF-OUTPUT"})
            .to_string();
    let out = run(world.bare(&["tools", "call", "Bash", "--yes", "--input", &input])).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.len() < 60_000,
        "the model does not get 300 KB: {}",
        out.stdout.len()
    );
    assert!(out.stdout.contains("END-OF-OUTPUT"), "the tail is kept");
    let spilled = world.home.path().join("spill");
    assert!(
        out.stdout.contains(&spilled.display().to_string()),
        "the path of the full output is given: {}",
        &out.stdout[..out.stdout.len().min(2000)]
    );
}

#[tokio::test]
async fn edit_needs_a_read_in_the_named_sessions_file_state() {
    let world = World::new();
    std::fs::write(world.project.path().join("lib.rs"), "let x = 1;\n").unwrap();
    let server = MockServer::start(Script::new(Wire::Anthropic, vec![Reply::Text("ok".into())]))
        .await
        .unwrap();
    let first = run(world.exec(&server, Wire::Anthropic, &["--output-format", "json", "hi"])).await;
    let id = first.json()["session_id"].as_str().unwrap().to_owned();
    server.shutdown().await;

    let edit = json!({"file_path": "lib.rs", "old_string": "1", "new_string": "2"}).to_string();
    let read = json!({"file_path": "lib.rs"}).to_string();
    let without = run(world.bare(&["tools", "call", "Edit", "--yes", "--input", &edit])).await;
    assert_eq!(without.code, Some(1));
    assert!(
        without.stdout.contains("has not been read in this session"),
        "{}",
        without.stdout
    );

    let r = run(world.bare(&["tools", "call", "Read", "--session", &id, "--input", &read])).await;
    assert_eq!(r.code, Some(0), "{r:?}");
    let e = run(world.bare(&[
        "tools",
        "call",
        "Edit",
        "--yes",
        "--session",
        &id,
        "--input",
        &edit,
    ]))
    .await;
    assert_eq!(e.code, Some(0), "{e:?}");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("lib.rs")).unwrap(),
        "let x = 2;\n"
    );

    let unknown = run(world.bare(&[
        "tools",
        "call",
        "Read",
        "--session",
        "ses_nope",
        "--input",
        &read,
    ]))
    .await;
    assert_eq!(unknown.code, Some(2));
    assert!(
        unknown.stderr.contains("no session `ses_nope`"),
        "{}",
        unknown.stderr
    );
}
