//! The editor's terminals with a real client (issue 28, docs/editors.md):
//! the official TypeScript SDK (`@agentclientprotocol/sdk`, pinned in
//! `tests/acp-client/package.json`) plays an editor advertising
//! `terminal` in `tests/acp-client/terminal.mjs`, runs Riot's Bash command
//! with node's child_process and checks create → wait_for_exit → output →
//! release; this test scripts the strict mock model server and checks the
//! command's output — printed in the editor's terminal — reached the model.
//!
//! Without `node` (or without the installed SDK) the test fails under CI
//! (`CI` set) and is skipped with a printed reason elsewhere.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // the skip reason and the script's checks, for the record

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::node_client::{client_dir, prerequisites_met};
use support::{PATIENCE, World, tool_call};
use tokio::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_runs_a_bash_call_in_its_terminal_and_the_output_reaches_the_model() {
    if !prerequisites_met(
        "the_typescript_sdk_runs_a_bash_call_in_its_terminal_and_the_output_reaches_the_model",
    ) {
        return;
    }
    let world = World::new();
    // `$EDITOR_MARK` is set only in the terminals terminal.mjs starts.
    let command = "pwd; echo \"ran in ${EDITOR_MARK:-riot}\"";
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_bash_1",
                "Bash",
                json!({"command": command, "description": "Say where"}),
            ),
            Reply::Text("It ran in the editor.".into()),
        ],
    ))
    .await
    .unwrap();

    let mut node = Command::new("node");
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if key.starts_with("RIOT_")
            || key == "ANTHROPIC_API_KEY"
            || key == "OPENAI_API_KEY"
            || key == "XDG_CONFIG_HOME"
        {
            node.env_remove(key);
        }
    }
    node.env("RIOT_HOME", world.home.path())
        .env("HOME", world.home.path())
        // The pinned permission and tool behaviour of these tests: no OS
        // sandbox, no browser (as `World::bare`).
        .env("RIOT_SANDBOX", "off")
        .env("RIOT_BROWSER", "off")
        .current_dir(client_dir())
        .arg(client_dir().join("terminal.mjs"))
        .arg("--riot")
        .arg(env!("CARGO_BIN_EXE_riot"))
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--project")
        .arg(world.project.path())
        .arg("--command")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = node.spawn().expect("spawn node");
    let output = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("terminal.mjs did not finish in time")
        .expect("wait for node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "terminal.mjs failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    eprintln!("{stdout}");
    assert!(
        stdout.contains("all checks passed"),
        "terminal.mjs ended early:\n{stdout}\n{stderr}"
    );

    // The model got what the editor's terminal printed, as a Bash result.
    let bodies = support::bodies(&server);
    assert_eq!(bodies.len(), 2);
    let result = support::tool_result(&bodies[1], "call_bash_1");
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| b["text"].as_str().unwrap_or("").to_owned())
            .collect(),
        other => panic!("unexpected tool_result content {other}"),
    };
    let project = std::fs::canonicalize(world.project.path()).unwrap();
    assert_eq!(text, format!("{}\nran in js-editor", project.display()));
    assert_ne!(result["is_error"], true, "{result}");
    server.shutdown().await;
}
