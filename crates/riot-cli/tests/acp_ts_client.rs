//! The ACP conversation test with a real client (issue 9, docs/testing.md L5
//! "Faces"): the official TypeScript SDK (`@agentclientprotocol/sdk`,
//! pinned in `tests/acp-client/package.json`, installed by `.ci/run` with
//! `npm ci --prefix tests/acp-client`) drives the real `riot acp` from the
//! Node script `tests/acp-client/conversation.mjs`, against the strict mock
//! model server scripted here. The script checks the conversation step by
//! step and exits non-zero naming the failed check; this test checks what
//! the model server saw.
//!
//! Without `node` (or without the installed SDK) the test fails under CI
//! (`CI` set) and is skipped with a printed reason elsewhere.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // the skip reason and the script's checks, for the record

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::node_client::{client_dir, prerequisites_met};
use support::{PATIENCE, World, tool_call};
use tokio::process::Command;

/// Kills, on drop, the processes whose command line is exactly `argv`:
/// a `sleep` Riot failed to stop must not outlive the test.
struct SleepGuard(Vec<String>);

impl SleepGuard {
    fn running(&self) -> Vec<i64> {
        let wanted: Vec<u8> = self
            .0
            .iter()
            .flat_map(|a| [a.as_bytes(), b"\0"])
            .flatten()
            .copied()
            .collect();
        support::processes_with(&self.0[0])
            .into_iter()
            .filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == wanted))
            .collect()
    }
}

impl Drop for SleepGuard {
    fn drop(&mut self) {
        for pid in self.running() {
            support::signal("KILL", pid);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_holds_a_conversation_with_riot_acp() {
    if !prerequisites_met("the_typescript_sdk_holds_a_conversation_with_riot_acp") {
        return;
    }
    let world = World::new();
    // `sleep 30` with a fraction no other test uses, so the script and the
    // guard find exactly this sleep.
    let sleep_command = format!("sleep 30.{}", std::process::id());
    let guard = SleepGuard(sleep_command.split(' ').map(str::to_owned).collect());
    let replies = vec![
        Reply::ToolCall {
            id: "call_write_1".into(),
            name: "Write".into(),
            arguments: json!({"file_path": "out.txt", "content": "hello\nwörld\n"}).to_string(),
            text: "I will write it.".into(),
        },
        Reply::Text("Written.".into()),
        tool_call(
            "call_bash_1",
            "Bash",
            json!({"command": &sleep_command, "description": "Wait"}),
        ),
        Reply::Text("Back again.".into()),
    ];
    let server = MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap();

    // The same hermetic environment `World::bare` gives riot: no model
    // keys, no RIOT_* settings, a fresh RIOT_HOME. Node passes it on.
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
        .current_dir(client_dir())
        .arg(client_dir().join("conversation.mjs"))
        .arg("--riot")
        .arg(env!("CARGO_BIN_EXE_riot"))
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--project")
        .arg(world.project.path())
        .arg("--sleep-command")
        .arg(&sleep_command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = node.spawn().expect("spawn node");
    let output = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("conversation.mjs did not finish in time")
        .expect("wait for node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "conversation.mjs failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    eprintln!("{stdout}");
    assert!(
        stdout.contains("all checks passed"),
        "conversation.mjs ended early:\n{stdout}\n{stderr}"
    );

    // What the model saw: four requests, each accepted by the strict mock
    // (pairing intact after the cancel), and none for the load.
    let requests = server.requests();
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 200, 200], "{requests:#?}");
    let last = support::bodies(&server).pop().unwrap();
    let messages = last["messages"].as_array().unwrap();
    support::assert_paired(messages);
    assert_eq!(
        support::conversation(messages),
        [
            "user: Create out.txt",
            "assistant: I will write it.",
            "assistant: tool_use call_write_1",
            "user: tool_result call_write_1",
            "assistant: Written.",
            "user: Run the slow command",
            "assistant: tool_use call_bash_1",
            "user: tool_result call_bash_1",
            "user: Go on",
        ]
    );
    assert!(guard.running().is_empty(), "the cancelled sleep still runs");
    assert_eq!(
        std::fs::read(world.project.path().join("out.txt")).unwrap(),
        "hello\nwörld\n".as_bytes()
    );
    server.shutdown().await;
}
