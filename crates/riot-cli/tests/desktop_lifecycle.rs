//! The desktop shell's process lifecycle (docs/design.md §2, issue #10):
//! 50 cycles of the shell's supervisor (`riot-supervisor`) starting the
//! real `riot serve`, a turn running a Bash command through it, and the
//! supervisor stopping it — alternately the graceful way (the server ends
//! the turn and exits within the grace period) and the forced way (the
//! server is frozen with SIGSTOP, so only the group kill ends it). After
//! every cycle neither the server nor the tool's processes may be left.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::ffi::OsString;
use std::time::Duration;

use riot_supervisor::{Policy, ServeCommand, Stopped, Supervisor, acp_socket_url};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::ws::WsClient;
use support::{PATIENCE, World, is_gone, processes_with, provider, signal, tool_call, wait_until};

const CYCLES: usize = 50;
const WIRE: Wire = Wire::Anthropic;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_start_stop_cycles_leave_no_server_or_tool_process_behind() {
    let world = World::new();
    let cwd = world.cwd();
    // A sleep no other test runs: `sleep <pid><cycle>`, and a second
    // command so bash does not replace itself with the sleep.
    let stem = format!("sleep 7{}", std::process::id());
    let replies = (0..CYCLES)
        .map(|cycle| {
            tool_call(
                &format!("toolu_{cycle:02}"),
                "Bash",
                json!({"command": format!("{stem}{cycle:02}; true"), "description": "wait"}),
            )
        })
        .collect::<Vec<Reply>>();
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
    let base = server.base_url();

    let mut command = ServeCommand::new(env!("CARGO_BIN_EXE_riot"));
    for arg in [
        "--cwd",
        cwd.to_str().unwrap(),
        "--provider",
        provider(WIRE),
        "--base-url",
        &base,
        "--model",
        "mock-model",
        "--permission-mode",
        "bypass",
    ] {
        command.args.push(OsString::from(arg));
    }
    command.cwd = Some(cwd.clone());
    // The hermetic environment of the other black-box tests.
    let bare = world.bare(&[]);
    for (key, value) in bare.as_std().get_envs() {
        match value {
            Some(value) => command.env.push((key.to_owned(), value.to_owned())),
            None => command.env_remove.push(key.to_owned()),
        }
    }

    let graceful = Policy {
        grace: PATIENCE,
        polite_timeout: PATIENCE,
        ..Policy::default()
    };
    let forced = Policy {
        grace: Duration::from_millis(300),
        polite_timeout: Duration::from_millis(200),
        ..Policy::default()
    };

    for cycle in 0..CYCLES {
        let force = cycle % 2 == 1;
        let policy = if force {
            forced.clone()
        } else {
            graceful.clone()
        };
        let supervisor = Supervisor::start(command.clone(), policy);
        let url = tokio::time::timeout(PATIENCE, supervisor.ready())
            .await
            .expect("riot serve never became ready")
            .unwrap_or_else(|reason| panic!("cycle {cycle}: {reason}"));
        let serve_pid = match &*supervisor.status().borrow() {
            riot_supervisor::Status::Ready { pid, .. } => i64::from(*pid),
            other => panic!("cycle {cycle}: not ready: {other:?}"),
        };

        let socket = acp_socket_url(&url).unwrap();
        let (socket, _) = tokio_tungstenite::connect_async(socket.as_str())
            .await
            .unwrap();
        let mut ws = WsClient { socket, next_id: 0 };
        let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
        ws.call("initialize", init).await;
        let (_, session) = ws
            .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        let prompt = json!({"sessionId": session["sessionId"],
                            "prompt": [{"type": "text", "text": "wait"}]});
        let prompt_id = ws.send("session/prompt", prompt).await;
        let needle = format!("{stem}{cycle:02}");
        wait_until(&format!("cycle {cycle}: the Bash command"), || {
            !processes_with(&needle).is_empty()
        })
        .await;

        if force {
            // A frozen server cannot answer, read stdin or exit.
            assert!(signal("STOP", serve_pid));
            assert_eq!(
                supervisor.shutdown().await,
                Stopped::Forced,
                "cycle {cycle}"
            );
        } else {
            // It acknowledged `_riot/shutdown`, then exited by itself.
            assert_eq!(
                supervisor.shutdown().await,
                Stopped::Graceful { answered: true },
                "cycle {cycle}"
            );
            // It ended the running turn, and said so, before exiting.
            let response = ws.response_before_close(prompt_id).await;
            assert_eq!(
                response.as_ref().map(|r| &r["result"]["stopReason"]),
                Some(&json!("cancelled")),
                "cycle {cycle}: {response:?}"
            );
        }
        assert!(is_gone(serve_pid), "cycle {cycle}: riot serve is reaped");
        // The tool's group is killed by the server (graceful) or by its
        // watchdog when the server dies (forced).
        wait_until(&format!("cycle {cycle}: the Bash command's end"), || {
            processes_with(&needle).is_empty()
        })
        .await;
    }
    assert_eq!(
        processes_with(&stem),
        Vec::<i64>::new(),
        "no tool process is left"
    );
    assert_eq!(
        processes_with(cwd.to_str().unwrap()),
        Vec::<i64>::new(),
        "no riot serve is left"
    );
}
