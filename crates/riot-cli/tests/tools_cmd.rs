//! `riot tools list` / `riot tools call` through the real binary
//! (docs/interfaces.md): exactly the tools a session's request declares (MCP
//! tools included once their servers are up), one call through a session's
//! full pipeline with its PreToolUse and PostToolUse hooks, questions
//! answered "no" unless `--yes`, the result budget, and `--session` running
//! in that session's file state.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, everything_server, run, tool_call};

/// The tools of a request body or of `tools list --json`, as the model
/// sees them: name, description, input schema, in order.
fn declared(tools: &Value) -> Vec<(String, String, Value)> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["description"].as_str().unwrap().to_owned(),
                t["input_schema"].clone(),
            )
        })
        .collect()
}

fn names(tools: &[(String, String, Value)]) -> Vec<&str> {
    tools.iter().map(|t| t.0.as_str()).collect()
}

/// A user skill and a user agent type, so the Skill and Task descriptions
/// list something of this world's own.
fn extensions(world: &World) {
    let skill = world.home.path().join("skills/release-notes/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        "---\nname: release-notes\ndescription: Writes release notes from the git log\n---\nRead the log.\n",
    )
    .unwrap();
    let agents = world.home.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\ndescription: Reviews a diff for mistakes\ntools: [Read, Grep]\n---\nReview carefully.\n",
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_is_exactly_what_a_sessions_first_request_declares() {
    let world = World::new();
    extensions(&world);
    let server = MockServer::start(Script::new(Wire::Anthropic, vec![Reply::Text("ok".into())]))
        .await
        .unwrap();
    let session = run(world.exec(&server, Wire::Anthropic, &["hi"])).await;
    assert_eq!(session.code, Some(0), "{session:?}");
    let sent = declared(&bodies(&server)[0]["tools"]);

    let out = run(world.bare(&["tools", "list", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed = declared(&serde_json::from_str(&out.stdout).unwrap());
    assert_eq!(
        names(&listed),
        [
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "Bash",
            "Task",
            "TodoWrite",
            "Skill",
            "AskUser",
            "ExitPlanMode",
            "ToolSearch",
        ]
    );
    assert_eq!(listed, sent, "names, descriptions and schemas, in order");
    let task = &listed[6].1;
    assert!(
        task.contains("- reviewer: Reviews a diff for mistakes (tools: Read, Grep)"),
        "{task}"
    );
    let skill = &listed[8].1;
    assert!(skill.contains("release-notes"), "{skill}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_includes_mcp_tools_once_their_servers_are_up_as_a_session_declares_them() {
    let Some(everything) = everything_server("list_includes_mcp_tools") else {
        return;
    };
    let world = World::new();
    std::fs::write(
        world.home.path().join("mcp.json"),
        json!({"mcpServers": {"everything": {"command": "node",
            "args": [everything.to_str().unwrap(), "stdio"]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"permissions": {"allow": ["mcp__everything__echo"]}}).to_string(),
    )
    .unwrap();
    // The session's first call waits for the server, so the request after
    // it declares the server's tools.
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_echo_1",
                "mcp__everything__echo",
                json!({"message": "up?"}),
            ),
            Reply::Text("Up.".into()),
        ],
    ))
    .await
    .unwrap();
    let session = run(world.exec(&server, Wire::Anthropic, &["Echo"])).await;
    assert_eq!(session.code, Some(0), "{session:?}");
    let requests = bodies(&server);
    assert_eq!(requests.len(), 2);
    let first = declared(&requests[0]["tools"]);
    let with_mcp = declared(&requests[1]["tools"]);

    let mut list = world.bare(&["tools", "list", "--json"]);
    list.env("RIOT_MCP_STARTUP_TIMEOUT_MS", "30000");
    let out = run(list).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed = declared(&serde_json::from_str(&out.stdout).unwrap());
    assert!(
        names(&listed).contains(&"mcp__everything__echo"),
        "tools list waited for the server: {:?}",
        names(&listed)
    );
    assert_eq!(
        listed, with_mcp,
        "names, descriptions and schemas, in order"
    );
    // The first request may have gone before the server was up; what it
    // declared is the same list up to the MCP tools.
    let own = |tools: &[(String, String, Value)]| -> Vec<(String, String, Value)> {
        tools
            .iter()
            .filter(|t| !t.0.starts_with("mcp__"))
            .cloned()
            .collect()
    };
    assert_eq!(own(&first), own(&listed));
    assert_eq!(names(&own(&listed)).last(), Some(&"ToolSearch"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_runs_the_sessions_pre_and_post_tool_use_hooks() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "cat > /dev/null; echo 'shell commands are off limits in this project' >&2; exit 2"}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command",
                "command": "cat > post-tool-use.json"}]}]
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::write(world.project.path().join("notes.txt"), "alpha\n").unwrap();

    let refused = run(world.bare(&[
        "tools",
        "call",
        "Bash",
        "--yes",
        "--input",
        r#"{"command":"touch shell-ran"}"#,
    ]))
    .await;
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(
        refused
            .stdout
            .contains("shell commands are off limits in this project"),
        "the hook's reason is printed: {refused:?}"
    );
    assert!(!world.project.path().join("shell-ran").exists());

    let read = run(world.bare(&[
        "tools",
        "call",
        "Read",
        "--input",
        r#"{"file_path":"notes.txt"}"#,
    ]))
    .await;
    assert_eq!(read.code, Some(0), "{read:?}");
    assert_eq!(read.stdout, "     1\talpha\n");
    let post: Value = serde_json::from_slice(
        &std::fs::read(world.project.path().join("post-tool-use.json"))
            .expect("the PostToolUse hook ran"),
    )
    .unwrap();
    assert_eq!(post["hook_event_name"], "PostToolUse", "{post}");
    assert_eq!(post["tool_name"], "Read", "{post}");
    assert_eq!(post["tool_input"]["file_path"], "notes.txt", "{post}");
}

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
            "Task",
            "TodoWrite",
            "Skill",
            "AskUser",
            "ExitPlanMode",
            "ToolSearch",
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
