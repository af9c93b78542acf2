//! Auto mode through `riot exec` (docs/design.md §9.5): the session's own
//! model, on the strict mock, acts as the classifier. What the classifier
//! is sent and how its verdicts are parsed is tested in riot-kernel; here,
//! that a session in auto mode consults it and obeys it, and that its usage
//! is reported apart.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

/// A script whose classifier requests (recognised by the call they carry)
/// get `verdict`.
async fn server(verdict: &str) -> MockServer {
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tool_call("call_bash_1", "Bash", json!({"command": "touch built.txt"})),
            Reply::Text("Finished.".into()),
        ],
    )
    .when("Bash: touch built.txt", Reply::Text(verdict.into()));
    MockServer::start(script).await.unwrap()
}

fn bash_result(server: &MockServer) -> Value {
    let bodies = bodies(server);
    bodies
        .iter()
        .rev()
        .flat_map(|b| b["messages"].as_array().unwrap().clone())
        .flat_map(|m| m["content"].as_array().unwrap().clone())
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == "call_bash_1")
        .unwrap_or_else(|| panic!("no result for the Bash call"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowing_classifier_lets_the_command_run_and_its_usage_is_reported_apart() {
    let world = World::new();
    let server =
        server(r#"{"decision": "allow", "reason": "the person asked for the build marker"}"#).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--permission-mode",
            "auto",
            "--output-format",
            "json",
            "Create the build marker",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(world.cwd().join("built.txt").exists(), "the command ran");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "turn, classifier, turn");
    assert_eq!(
        requests[1].rule,
        Some(0),
        "the second request was the classifier's"
    );
    let classifier = requests[1].body.to_string();
    assert!(
        classifier.contains("Create the build marker"),
        "{classifier}"
    );
    assert!(requests[1].body.get("tools").is_none(), "{classifier}");
    let result = out.json();
    assert_eq!(result["result"], "Finished.");
    assert!(
        result["side_usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denying_classifier_stops_the_command_and_the_model_gets_the_reason() {
    let world = World::new();
    let server =
        server(r#"{"decision": "deny", "reason": "creating files was not requested"}"#).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "auto", "Explain the build"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !world.cwd().join("built.txt").exists(),
        "the command did not run"
    );
    let result = bash_result(&server);
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .to_string()
            .contains("creating files was not requested"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_never_reach_the_classifier() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), "notes\n").unwrap();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"})),
            tool_call("call_ls_1", "Bash", json!({"command": "ls -la"})),
            Reply::Text("Looked.".into()),
        ],
    )
    .when(
        "recent_requests",
        Reply::Text(r#"{"decision": "deny", "reason": "no"}"#.into()),
    );
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "auto", "Look around"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests.iter().all(|r| r.rule.is_none()),
        "no classifier request"
    );
}
