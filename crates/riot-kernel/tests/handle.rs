//! The session actor (`SessionHandle`), driven the way every face drives
//! it: a real kernel on the disk, the strict mock model server over HTTP,
//! and a person answering its questions who holds a turn still at a known
//! point (an AskUser question) so what happens "during a turn" is not left
//! to timing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests create and read real files

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use riot_config::FlagLayer;
use riot_kernel::{Asker, Capabilities, Kernel, KernelError, OpenOptions, SessionHandle};
use riot_protocol::{
    AgentEvent, CancelReason, Message, PermissionMode, PermissionOutcome, StreamDelta,
    TerminalReason,
};
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};
use riot_testkit::{MockServer, RecordedRequest, Reply, Script, Wire};
use serde_json::json;

mod support;
use support::Person;

struct Fixture {
    _home: tempfile::TempDir,
    project: tempfile::TempDir,
    server: MockServer,
    kernel: Kernel,
    handle: SessionHandle,
    /// Says no to permissions; holds the first AskUser question when
    /// opened with `hold`.
    person: Person,
}

async fn open(replies: Vec<Reply>, hold: bool) -> Fixture {
    let server = MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().canonicalize().unwrap();
    let caps = Capabilities {
        fs: Arc::new(RealFs),
        proc: Arc::new(RealProcessRunner::new()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds::new()),
        web: Arc::new(riot_protocol::NoWeb),
        terminals: Arc::new(riot_protocol::NoTerminals),
        sandbox: Arc::new(riot_protocol::NoSandbox),
        seed: 7,
    };
    let kernel = Kernel::new(caps, home.path().join("riot"));
    let env = BTreeMap::from([
        ("HOME".to_owned(), home.path().display().to_string()),
        ("TEST_KEY".to_owned(), "test-key".to_owned()),
    ]);
    let flags = FlagLayer {
        provider: Some("anthropic".into()),
        base_url: Some(server.base_url()),
        model: Some("first-model".into()),
        api_key_env: Some("TEST_KEY".into()),
        ..FlagLayer::default()
    };
    let handle = kernel
        .start(OpenOptions {
            cwd,
            env,
            flags,
            trust_project: false,
            max_turns: None,
            resume: None,
            asker: Asker::Person,
            mcp_servers: Vec::new(),
        })
        .await
        .unwrap();
    let no = PermissionOutcome::RejectOnce {
        feedback: Some("the test says no".into()),
    };
    let person = Person::answering(&handle, no, hold);
    Fixture {
        _home: home,
        project,
        server,
        kernel,
        handle,
        person,
    }
}

fn ask_user_call(id: &str) -> Reply {
    Reply::ToolCall {
        id: id.into(),
        name: "AskUser".into(),
        arguments: json!({"questions": [{"question": "Go on?"}]}).to_string(),
        text: String::new(),
    }
}

fn reason(events: &[AgentEvent]) -> &TerminalReason {
    match events.last() {
        Some(AgentEvent::Done { reason }) => reason,
        other => panic!("the last event is not Done: {other:?}"),
    }
}

fn body_model(request: &RecordedRequest) -> String {
    request.body["model"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_prompt_streams_its_turn_and_the_status_follows() {
    let f = open(vec![Reply::Text("Hello there.".into())], false).await;
    assert!(!f.handle.status().running);
    let events: Vec<AgentEvent> = f.handle.prompt("hi").unwrap().collect().await;
    assert_eq!(reason(&events), &TerminalReason::Completed);
    let dones = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Done { .. }))
        .count();
    assert_eq!(dones, 1, "exactly one Done");

    let status = f.handle.status();
    assert!(!status.running);
    assert!(!f.handle.is_running());
    assert_eq!(status.requests, 1);
    assert_eq!(status.model, "first-model");
    assert!(status.usage.output_tokens > 0, "{status:?}");
    // The mock's model has no price: the cost is unknown, not zero.
    let cost = f.handle.cost();
    assert_eq!(cost.usage, status.usage);
    assert_eq!(cost.usd, None);

    let messages = f.handle.messages().await.unwrap();
    assert_eq!(messages.len(), 2);
    assert!(matches!(&messages[0], Message::User(_)));
    let Message::Assistant(reply) = &messages[1] else {
        panic!("{messages:?}")
    };
    assert_eq!(reply.text(), "Hello there.");
}

#[tokio::test]
async fn a_second_prompt_during_a_turn_is_refused_and_cancel_stops_the_first() {
    let stall = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"first-model\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Thinking about\"}}\n\n";
    let f = open(
        vec![
            Reply::Stall(stall.into()),
            Reply::Text("Second answer.".into()),
        ],
        false,
    )
    .await;
    let mut turn = f.handle.prompt("a long task").unwrap();
    // Wait for the reply to start streaming: the turn is certainly running.
    loop {
        match turn.next().await.unwrap() {
            AgentEvent::Delta {
                delta: StreamDelta::Text { text },
            } if text == "Thinking about" => break,
            AgentEvent::Done { reason } => panic!("ended early: {reason:?}"),
            _ => {}
        }
    }
    assert!(f.handle.is_running());
    assert!(f.handle.status().running);
    match f.handle.prompt("another") {
        Err(KernelError::Busy) => {}
        other => panic!("expected Busy, got {other:?}"),
    }

    assert!(f.handle.cancel(CancelReason::User));
    let rest: Vec<AgentEvent> = turn.collect().await;
    assert!(
        matches!(reason(&rest), TerminalReason::Aborted { .. }),
        "{:?}",
        reason(&rest)
    );
    // The session is idle again and takes the next prompt.
    let events: Vec<AgentEvent> = f.handle.prompt("and now?").unwrap().collect().await;
    assert_eq!(reason(&events), &TerminalReason::Completed);
    assert!(!f.handle.cancel(CancelReason::User), "nothing runs");
}

#[tokio::test]
async fn a_mode_chosen_during_a_turn_applies_to_the_next_tool_batch() {
    let write = Reply::ToolCall {
        id: "toolu_write".into(),
        name: "Write".into(),
        arguments: json!({"file_path": "notes.txt", "content": "written\n"}).to_string(),
        text: String::new(),
    };
    let f = open(
        vec![
            ask_user_call("toolu_ask"),
            write,
            Reply::Text("Done.".into()),
        ],
        true,
    )
    .await;
    assert_eq!(f.handle.status().mode, PermissionMode::Default);
    let turn = f.handle.prompt("write the notes").unwrap();
    let events = tokio::spawn(turn.collect::<Vec<AgentEvent>>());
    // The turn is held inside the AskUser call: switch the mode now.
    f.person.asked.notified().await;
    f.handle
        .set_mode(PermissionMode::AcceptEdits)
        .await
        .unwrap();
    assert_eq!(f.handle.status().mode, PermissionMode::AcceptEdits);
    f.person.release();
    let events = events.await.unwrap();
    assert_eq!(reason(&events), &TerminalReason::Completed);
    // In default mode the person would have said no; accept-edits let the
    // Write through in the same turn.
    let written = std::fs::read_to_string(f.project.path().join("notes.txt")).unwrap();
    assert_eq!(written, "written\n");
    assert_eq!(f.handle.status().mode, PermissionMode::AcceptEdits);
}

#[tokio::test]
async fn a_model_chosen_during_a_turn_applies_from_the_next_request() {
    let f = open(
        vec![ask_user_call("toolu_ask"), Reply::Text("Done.".into())],
        true,
    )
    .await;
    let turn = f.handle.prompt("ask me").unwrap();
    let events = tokio::spawn(turn.collect::<Vec<AgentEvent>>());
    f.person.asked.notified().await;
    f.handle.set_model("second-model").await.unwrap();
    assert_eq!(f.handle.status().model, "second-model");
    f.person.release();
    let events = events.await.unwrap();
    assert_eq!(reason(&events), &TerminalReason::Completed);

    let requests = f.server.requests();
    let models: Vec<String> = requests.iter().map(body_model).collect();
    assert_eq!(models, ["first-model", "second-model"]);
    assert_eq!(f.handle.status().model, "second-model");
    // The transcript says so: a resumed session continues on it.
    let id = f.handle.id().clone();
    f.handle.clone().close().await;
    let loaded = f.kernel.store().load(&id).unwrap();
    assert_eq!(loaded.model, "second-model");
}

#[tokio::test]
async fn operations_sent_during_a_turn_run_after_it_in_order() {
    let f = open(
        vec![ask_user_call("toolu_ask"), Reply::Text("Done.".into())],
        true,
    )
    .await;
    let turn = f.handle.prompt("ask me").unwrap();
    let events = tokio::spawn(turn.collect::<Vec<AgentEvent>>());
    f.person.asked.notified().await;
    // A read sent now waits for the turn; so does a clear sent after it.
    let count = tokio::spawn({
        let handle = f.handle.clone();
        async move { handle.messages().await.unwrap().len() }
    });
    tokio::task::yield_now().await;
    f.person.release();
    let events = events.await.unwrap();
    assert_eq!(reason(&events), &TerminalReason::Completed);
    // prompt, AskUser call, its result, the final reply.
    assert_eq!(count.await.unwrap(), 4);
    f.handle.clear().await.unwrap();
    assert!(f.handle.messages().await.unwrap().is_empty());
}

#[tokio::test]
async fn close_stops_a_running_turn_and_refuses_what_comes_after() {
    let stall = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"first-model\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";
    let f = open(vec![Reply::Stall(stall.into())], false).await;
    let mut turn = f.handle.prompt("a long task").unwrap();
    loop {
        if let AgentEvent::RequestStart { .. } = turn.next().await.unwrap() {
            break;
        }
    }
    let other = f.handle.clone();
    f.handle.close().await;
    let rest: Vec<AgentEvent> = turn.collect().await;
    assert!(
        matches!(reason(&rest), TerminalReason::Aborted { .. }),
        "{:?}",
        reason(&rest)
    );
    match other.prompt("more") {
        Err(KernelError::Closed) => {}
        other => panic!("expected Closed, got {other:?}"),
    }
    assert!(matches!(other.messages().await, Err(KernelError::Closed)));
}

#[tokio::test]
async fn a_face_that_saw_done_may_prompt_again_at_once() {
    let f = open(
        vec![
            Reply::Text("One.".into()),
            Reply::Text("Two.".into()),
            Reply::Text("Three.".into()),
        ],
        false,
    )
    .await;
    for (prompt, answer) in [("one", "One."), ("two", "Two."), ("three", "Three.")] {
        let mut turn = f.handle.prompt(prompt).unwrap();
        // Read up to `Done` and no further: the stream's end is not awaited.
        let mut text = String::new();
        loop {
            match turn.next().await.unwrap() {
                AgentEvent::Delta {
                    delta: StreamDelta::Text { text: t },
                } => text.push_str(&t),
                AgentEvent::Done { reason } => {
                    assert_eq!(reason, TerminalReason::Completed);
                    break;
                }
                _ => {}
            }
        }
        assert_eq!(text, answer);
        assert!(!f.handle.status().running);
    }
}
