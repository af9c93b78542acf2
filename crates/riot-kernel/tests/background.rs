//! Background subagents (docs/parallel.md) through a real session and the
//! strict mock: a Task with `run_in_background` answers at once, the
//! parent keeps running tools, and the subagent's result reaches the
//! parent's conversation exactly once; a background agent is never asked
//! anything (its would-be questions are denials with the reason, though
//! the session's person would say yes); closing the parent stops it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // a black-box test: real files and processes

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use riot_config::FlagLayer;
use riot_kernel::{Capabilities, Kernel, OpenOptions, SessionHandle};
use riot_protocol::{AgentEvent, PermissionOutcome, TerminalReason};
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};

mod support;
use support::Person;

struct Fixture {
    _home: tempfile::TempDir,
    project: tempfile::TempDir,
    server: MockServer,
    handle: SessionHandle,
    _person: Person,
}

async fn open(script: Script) -> Fixture {
    let server = MockServer::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().canonicalize().unwrap();
    let kernel = Kernel::new(test_capabilities(), home.path().join("riot"));
    let env = BTreeMap::from([
        ("HOME".to_owned(), home.path().display().to_string()),
        ("TEST_KEY".to_owned(), "test-key".to_owned()),
    ]);
    let flags = FlagLayer {
        provider: Some("anthropic".into()),
        base_url: Some(server.base_url()),
        model: Some("mock-model".into()),
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
            asker: riot_kernel::Asker::Person,
            mcp_servers: Vec::new(),
        })
        .await
        .unwrap();
    // A person who says yes to everything: what a background agent is
    // refused, it is refused although the person would have allowed it.
    let person = Person::answering(&handle, PermissionOutcome::AllowOnce, false);
    Fixture {
        _home: home,
        project,
        server,
        handle,
        _person: person,
    }
}

/// The capabilities the fixture does not set itself, as the handle tests
/// build them.
fn test_capabilities() -> Capabilities {
    Capabilities {
        fs: Arc::new(RealFs),
        proc: Arc::new(RealProcessRunner::new()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds::new()),
        web: Arc::new(riot_protocol::NoWeb),
        terminals: Arc::new(riot_protocol::NoTerminals),
        sandbox: Arc::new(riot_protocol::NoSandbox),
        seed: 7,
    }
}

fn call(id: &str, name: &str, input: Value) -> Reply {
    Reply::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: input.to_string(),
        text: String::new(),
    }
}

/// The parent starts an `explore` agent in the background, then gives
/// `after`; the agent's one shell call reads `release.fifo` (see
/// [`hold`]), so it ends only once the test lets it go with [`release`],
/// and then answers `CHILD-ANSWER the notes are in notes.txt`.
fn late_child(after: Vec<Reply>) -> Script {
    let mut replies = vec![background_task("explore", "CHILD-PROMPT find the notes")];
    replies.extend(after);
    Script::new(Wire::Anthropic, replies)
        .when_request_contains(
            "call_child_read",
            Reply::Text("CHILD-ANSWER the notes are in notes.txt".into()),
        )
        .when(
            "CHILD-PROMPT",
            call(
                "call_child_read",
                "Bash",
                json!({"command": "cat release.fifo", "description": "wait for the test"}),
            ),
        )
}

/// Makes the FIFO a [`late_child`] reads in the project: until something
/// writes to it, the child's shell call cannot end.
fn hold(fx: &Fixture) {
    let made = std::process::Command::new("mkfifo")
        .arg(fx.project.path().join("release.fifo"))
        .status()
        .unwrap();
    assert!(made.success());
}

/// Waits until a [`late_child`]'s `cat` has opened its FIFO — the child
/// has made its first request and now blocks — and returns the writing
/// end; [`release`] lets the child end. The open runs on a thread of its
/// own, which a child that never reads leaves behind without holding up
/// the test's end.
async fn child_waiting(fx: &Fixture) -> std::fs::File {
    let fifo = fx.project.path().join("release.fifo");
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(fifo));
    });
    tokio::time::timeout(std::time::Duration::from_secs(30), rx)
        .await
        .expect("the background agent never read its FIFO")
        .unwrap()
        .unwrap()
}

/// Lets a waiting [`late_child`] end.
fn release(mut writer: std::fs::File) {
    use std::io::Write as _;
    writer.write_all(b"go\n").unwrap();
}

fn background_task(agent: &str, prompt: &str) -> Reply {
    call(
        "call_bg",
        "Task",
        json!({"description": "look around", "prompt": prompt, "subagent_type": agent,
               "run_in_background": true}),
    )
}

async fn run_turn(handle: &SessionHandle, prompt: &str) -> Vec<AgentEvent> {
    handle.prompt(prompt).unwrap().collect().await
}

fn reason(events: &[AgentEvent]) -> TerminalReason {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Done { reason } => Some(reason.clone()),
            _ => None,
        })
        .unwrap()
}

/// The parent's requests: those whose first message is the person's prompt.
fn parent_bodies(server: &MockServer, prompt: &str) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["messages"][0]["content"].to_string().contains(prompt))
        .collect()
}

/// Each message's content as text, in order: tool results as
/// `result:<text>`, text blocks as they are.
fn flattened(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(text) => out.push(text.clone()),
            Value::Array(blocks) => {
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => out.push(block["text"].as_str().unwrap().to_owned()),
                        Some("tool_result") => {
                            out.push(format!("result:{}", block["content"]));
                        }
                        Some("tool_use") => out.push(format!("use:{}", block["name"])),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_task_answers_at_once_and_its_result_reaches_the_parent_exactly_once() {
    // The child cannot end before the parent has run a tool of its own:
    // its one shell call reads a FIFO that only the parent's first shell
    // call writes. After that the parent polls with short shell calls
    // until the result is in its conversation; then it answers.
    let mut replies = vec![
        background_task("explore", "CHILD-PROMPT find the notes"),
        call(
            "call_release",
            "Bash",
            json!({"command": "timeout 20 sh -c 'echo go > release.fifo'",
                   "description": "let the child go on"}),
        ),
    ];
    for i in 0..60 {
        replies.push(call(
            &format!("call_wait_{i}"),
            "Bash",
            json!({"command": "sleep 0.2", "description": "wait a moment"}),
        ));
    }
    let script = Script::new(Wire::Anthropic, replies)
        .when_request_contains("CHILD-ANSWER", Reply::Text("PARENT-DONE".into()))
        .when_request_contains(
            "call_child_read",
            Reply::Text("CHILD-ANSWER the notes are in notes.txt".into()),
        )
        .when(
            "CHILD-PROMPT",
            call(
                "call_child_read",
                "Bash",
                json!({"command": "cat release.fifo", "description": "wait for the parent"}),
            ),
        );
    let fx = open(script).await;
    hold(&fx);
    let events = run_turn(&fx.handle, "PARENT-PROMPT start the search").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");

    let parents = parent_bodies(&fx.server, "PARENT-PROMPT");
    let last = flattened(parents.last().unwrap());
    // The Task call answered at once with the task's id.
    let started = last
        .iter()
        .position(|t| t.starts_with("result:") && t.contains("in the background as task bg_1"))
        .unwrap_or_else(|| panic!("{last:#?}"));
    // The result arrived once, as its own message, after the parent had
    // run other tools.
    let delivered: Vec<usize> = last
        .iter()
        .enumerate()
        .filter(|(_, t)| t.contains("CHILD-ANSWER"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(delivered.len(), 1, "{last:#?}");
    assert_eq!(
        last[delivered[0]],
        "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nCHILD-ANSWER the notes are in notes.txt\n\n(subagent `explore`, session \
         ses_PLACEHOLDER, 1 tool call)\n</background-task>\nThe background task \"look around\" has ended; this is its result."
            .replace(
                "ses_PLACEHOLDER",
                last[delivered[0]]
                    .split("session ")
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .next()
                    .unwrap()
            ),
        "{last:#?}"
    );
    // Between the Task's answer and the delivery, the parent ran its own
    // tool (the one that let the child go on).
    let results_between = last[started + 1..delivered[0]]
        .iter()
        .filter(|t| t.starts_with("result:"))
        .count();
    assert!(
        results_between >= 1,
        "the parent ran tools meanwhile: {last:#?}"
    );
    // Only the last parent request answered PARENT-DONE; every earlier one
    // went without the result, and none had it twice.
    for body in &parents[..parents.len() - 1] {
        assert!(!body.to_string().contains("CHILD-ANSWER"), "{body}");
    }
    let texts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Message {
                message: riot_protocol::Message::Assistant(a),
            } => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(texts.last().unwrap(), "PARENT-DONE");
    fx.handle.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_write_that_would_be_asked_is_denied_with_the_reason() {
    let script = Script::new(
        Wire::Anthropic,
        vec![
            background_task("general-purpose", "CHILD-WRITE make the file"),
            Reply::Text("PARENT-STARTED".into()),
        ],
    )
    .when_request_contains("call_child_write", Reply::Text("CHILD-GAVE-UP".into()))
    .when(
        "CHILD-WRITE",
        call(
            "call_child_write",
            "Write",
            json!({"file_path": "out.txt", "content": "x\n"}),
        ),
    );
    let fx = open(script).await;
    let events = run_turn(&fx.handle, "PARENT-PROMPT delegate").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    // The parent's turn ended before the child's; wait for the child's
    // second request by asking TaskOutput's state through the session.
    let tasks = fx.handle.clone();
    for _ in 0..600 {
        if tasks.task("bg_1").unwrap().state != riot_kernel::background::TaskState::Running {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let task = tasks.task("bg_1").unwrap();
    assert_eq!(
        task.state,
        riot_kernel::background::TaskState::Completed,
        "{task:?}"
    );
    assert!(
        task.result.as_ref().unwrap().starts_with("CHILD-GAVE-UP"),
        "{task:?}"
    );
    let child = fx
        .server
        .requests()
        .into_iter()
        .map(|r| r.body)
        .find(|b| {
            b.to_string().contains("call_child_write")
                && b["messages"].as_array().unwrap().len() == 3
        })
        .unwrap();
    let result = flattened(&child).pop().unwrap();
    assert!(
        result.contains("Permission to run Write (")
            && result.contains("was denied: it needs the person's approval (")
            && result.contains("nobody can answer permission questions in this session"),
        "{result}"
    );
    assert!(!fx.project.path().join("out.txt").exists());
    fx.handle.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_parent_stops_its_background_agent_and_its_command() {
    let marker = format!("sleep 31.{}", std::process::id());
    let script = Script::new(
        Wire::Anthropic,
        vec![
            background_task("explore", "CHILD-SLEEP"),
            Reply::Text("PARENT-STARTED".into()),
        ],
    )
    .when(
        "CHILD-SLEEP",
        call(
            "call_child_sleep",
            "Bash",
            json!({"command": marker, "description": "wait"}),
        ),
    );
    let fx = open(script).await;
    let events = run_turn(&fx.handle, "PARENT-PROMPT start").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    let running = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .any(|c| String::from_utf8_lossy(&c).replace('\0', " ").trim() == marker)
    };
    // The child's command starts…
    for _ in 0..600 {
        if running() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(running(), "the background agent's command never started");
    let tasks = fx.handle.clone();
    // …and closing the parent stops it and its command.
    fx.handle.close().await;
    for _ in 0..600 {
        if !running()
            && tasks.task("bg_1").unwrap().state != riot_kernel::background::TaskState::Running
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        !running(),
        "the background agent's command outlived its session"
    );
    assert_eq!(
        tasks.task("bg_1").unwrap().state,
        riot_kernel::background::TaskState::Stopped
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_ends_after_the_turn_goes_with_the_next_prompt_once() {
    // The child waits in a shell call until the parent's turn is over.
    let script = late_child(vec![
        Reply::Text("PARENT-IDLE".into()),
        // The first prompt after it is stopped before any answer.
        Reply::Stall(String::new()),
        Reply::Text("PARENT-SAW".into()),
    ]);
    let fx = open(script).await;
    hold(&fx);
    let events = run_turn(&fx.handle, "PARENT-PROMPT start the search").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    release(child_waiting(&fx).await);
    // The turn is over; the result waits in the queue as Riot's message.
    let mut waiting = Vec::new();
    for _ in 0..400 {
        waiting = fx.handle.queued().waiting;
        if !waiting.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(waiting.len(), 1, "the background result was queued");
    // A face taking the person's queued messages never takes Riot's.
    assert!(fx.handle.take_queued().is_empty());
    assert_eq!(fx.handle.queued().waiting.len(), 1);

    // A prompt withdrawn by a stop before any answer gives it back.
    let before = fx.server.requests().len();
    let stalled = tokio::spawn(
        fx.handle
            .prompt("STOPPED-PROMPT never mind")
            .unwrap()
            .collect::<Vec<AgentEvent>>(),
    );
    for _ in 0..400 {
        if fx.server.requests().len() > before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        fx.server.requests().len() > before,
        "the prompt to be stopped never reached the model"
    );
    assert!(
        fx.handle.queued().waiting.is_empty(),
        "it went with the prompt"
    );
    assert!(fx.handle.cancel(riot_protocol::CancelReason::User));
    let events = stalled.await.unwrap();
    assert!(
        matches!(reason(&events), TerminalReason::Aborted { .. }),
        "{events:#?}"
    );
    assert_eq!(fx.handle.queued().waiting.len(), 1, "it waits again");

    let events = run_turn(&fx.handle, "SECOND-PROMPT what did it find?").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    assert!(fx.handle.queued().waiting.is_empty());
    let parents = parent_bodies(&fx.server, "PARENT-PROMPT");
    let last = parents.last().unwrap();
    let flat = flattened(last);
    // The prompt, then the result, in the same user message; once.
    let prompt = flat
        .iter()
        .position(|t| t == "SECOND-PROMPT what did it find?")
        .unwrap_or_else(|| panic!("{flat:#?}"));
    assert!(
        flat[prompt + 1].starts_with(
            "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nCHILD-ANSWER the notes are in notes.txt"
        ),
        "{flat:#?}"
    );
    assert_eq!(last.to_string().matches("CHILD-ANSWER").count(), 1);
    // Before: only the stopped prompt's request carried it.
    let carried: Vec<bool> = parents[..parents.len() - 1]
        .iter()
        .map(|b| b.to_string().contains("CHILD-ANSWER"))
        .collect();
    assert_eq!(carried, vec![false, false, true], "{parents:#?}");
    fx.handle.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_delivers_a_late_result_in_a_turn_of_its_own() {
    // The child waits in a shell call until the parent's turn is over.
    let script = late_child(vec![
        Reply::Text("PARENT-IDLE".into()),
        Reply::Text("PARENT-SAW".into()),
    ]);
    let fx = open(script).await;
    hold(&fx);
    // Nothing runs and nothing waits: no result can come, and there is
    // nothing to deliver.
    assert!(!fx.handle.background_result().await);
    assert!(fx.handle.deliver().unwrap().is_none());

    let events = run_turn(&fx.handle, "PARENT-PROMPT start the search").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    let writer = child_waiting(&fx).await;
    let requests = fx.server.requests().len();
    release(writer);
    // The child still runs: the wait returns once its result is queued.
    assert!(fx.handle.background_result().await);
    assert_eq!(fx.handle.queued().waiting.len(), 1);
    let events: Vec<AgentEvent> = fx.handle.deliver().unwrap().unwrap().collect().await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    assert!(fx.handle.queued().waiting.is_empty());
    // Settled: nothing more will come.
    assert!(!fx.handle.background_result().await);
    assert!(fx.handle.deliver().unwrap().is_none());

    // One more parent request, whose last message is Riot's, carrying the
    // result alone, once; the model's answer ended the turn.
    let parents = parent_bodies(&fx.server, "PARENT-PROMPT");
    let last = parents.last().unwrap();
    assert_eq!(
        fx.server.requests().len(),
        requests + 2,
        "the child's second request, then the parent's"
    );
    let messages = last["messages"].as_array().unwrap();
    let final_message = messages.last().unwrap();
    assert_eq!(final_message["role"], "user");
    let texts: Vec<&str> = final_message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 1, "{final_message}");
    assert!(
        texts[0].starts_with(
            "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nCHILD-ANSWER the notes are in notes.txt"
        ),
        "{final_message}"
    );
    assert_eq!(last.to_string().matches("CHILD-ANSWER").count(), 1);
    assert_eq!(
        flattened(&json!({"messages": messages[messages.len() - 2..]})),
        vec!["PARENT-IDLE".to_owned(), texts[0].to_owned()]
    );
    let said: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Message {
                message: riot_protocol::Message::Assistant(a),
            } => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(said, vec!["PARENT-SAW".to_owned()]);
    fx.handle.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_delivery_turn_leaves_the_prompts_rewind_numbers_alone() {
    let script = late_child(vec![
        Reply::Text("PARENT-IDLE".into()),
        // The delivery turn: stopped before any answer.
        Reply::Stall(String::new()),
        call(
            "call_write",
            "Write",
            json!({"file_path": "a.txt", "content": "second\n"}),
        ),
        Reply::Text("PARENT-WROTE".into()),
    ]);
    let fx = open(script).await;
    hold(&fx);
    let events = run_turn(&fx.handle, "PARENT-PROMPT start the search").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    release(child_waiting(&fx).await);
    assert!(fx.handle.background_result().await);
    let before = fx.server.requests().len();
    let turn = fx.handle.deliver().unwrap().unwrap();
    let stalled = tokio::spawn(turn.collect::<Vec<AgentEvent>>());
    for _ in 0..400 {
        if fx.server.requests().len() > before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        fx.server.requests().len() > before,
        "the delivery never reached the model"
    );
    assert!(fx.handle.cancel(riot_protocol::CancelReason::User));
    let events = stalled.await.unwrap();
    assert!(
        matches!(reason(&events), TerminalReason::Aborted { .. }),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::PromptWithdrawn { .. })),
        "{events:#?}"
    );
    // The result waits again, held: the person stopped the turn that
    // carried it, so it wakes nobody (the child has ended: nothing more
    // can come)…
    let waiting = fx.handle.queued().waiting;
    assert_eq!(waiting.len(), 1);
    assert_eq!(fx.handle.queued().held, [waiting[0].id().clone()]);
    assert!(!fx.handle.background_result().await);
    // …and goes with the next prompt.
    let events = run_turn(&fx.handle, "SECOND-PROMPT write it").await;
    assert_eq!(reason(&events), TerminalReason::Completed, "{events:#?}");
    assert!(fx.handle.queued().waiting.is_empty());
    let second = fx.server.requests().last().unwrap().body.to_string();
    assert!(second.contains("SECOND-PROMPT write it") && second.contains("CHILD-ANSWER"));
    // The second prompt is still the second: its change is its own.
    let points = fx.handle.rewind_points().await.unwrap();
    let seen: Vec<(u32, &str, Vec<String>)> = points
        .iter()
        .map(|p| (p.number, p.text.as_str(), p.files.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (1, "PARENT-PROMPT start the search", Vec::new()),
            (2, "SECOND-PROMPT write it", vec!["a.txt".to_owned()]),
        ]
    );
    fx.handle.close().await;
}
