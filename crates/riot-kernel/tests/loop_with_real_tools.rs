//! L5 tool side (docs/testing.md): `run_agent` → the real scheduler → the
//! real tools and the real permission chain on a temporary project, with
//! tool pairing asserted on every path, including the failure paths.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests create and read real files

mod support;

use std::sync::Arc;

use futures::StreamExt;
use riot_core::testing::{ScriptItem, ScriptedProvider};
use riot_core::{AgentDeps, AgentState, NoCompaction, NoQueue, NoStopHooks, NoTranscript};
use riot_kernel::NobodyAnswers;
use riot_protocol::*;
use riot_runtime::{RealFs, RealProcessRunner, SystemClock};
use riot_tools::{Scheduler, SchedulerConfig};
use serde_json::json;
use support::{Project, final_reply, tool_reply};

struct Run {
    events: Vec<AgentEvent>,
    state: AgentState,
    provider: Arc<ScriptedProvider>,
}

async fn run(
    project: &Project,
    mode: PermissionMode,
    scripts: Vec<Vec<ScriptItem>>,
    cancel_on_tool_start: bool,
) -> Run {
    let root = project.root();
    let ids: Arc<dyn IdGen> = Arc::new(SequentialIds::new());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let env = ToolEnv::new(
        root.clone(),
        root.join(".spill"),
        Arc::new(RealFs),
        Arc::new(RealProcessRunner::new()),
        Arc::clone(&clock),
        Arc::clone(&ids),
    );
    let policy =
        riot_permissions::Policy::new(root.clone(), None).with_file_system(Arc::new(RealFs));
    let scheduler = Arc::new(Scheduler::new(
        riot_tools::builtin(),
        Arc::new(env),
        Arc::new(policy),
        Arc::new(NobodyAnswers),
        SchedulerConfig::default(),
    ));
    let provider = Arc::new(ScriptedProvider::new(scripts));
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: scheduler.clone(),
        compactor: Arc::new(NoCompaction),
        transcript: Arc::new(NoTranscript),
        hooks: Arc::new(NoStopHooks),
        queue: Arc::new(NoQueue),
        clock,
        ids,
    };
    let mut state = AgentState::new(SessionId::new("ses_l5"), "m", SystemPrompt::stable("test"));
    state.tools = scheduler.specs();
    state.mode = mode;
    let cancel = CancelScope::new();
    let prompt = Message::user_text(MessageId::new("p"), "go");
    let mut events = Vec::new();
    {
        let mut stream = std::pin::pin!(riot_core::run_agent(
            &mut state,
            Some(prompt),
            &deps,
            cancel.clone()
        ));
        while let Some(event) = stream.next().await {
            if cancel_on_tool_start && matches!(event, AgentEvent::ToolStarted { .. }) {
                cancel.cancel(CancelReason::User);
            }
            events.push(event);
        }
    }
    invariants::check_tool_pairing(&state.messages).unwrap();
    Run {
        events,
        state,
        provider,
    }
}

/// The text of the tool result for `id` in the history.
fn result_text(state: &AgentState, id: &str) -> (String, bool) {
    support::tool_result(&state.messages, id).unwrap_or_else(|| panic!("no result for {id}"))
}

fn done(run: &Run) -> &TerminalReason {
    support::done(&run.events)
}

#[tokio::test]
async fn read_then_edit_in_accept_edits_changes_exactly_the_bytes_asked() {
    let project = Project::new();
    let file = project.root().join("lib.rs");
    std::fs::write(&file, b"fn a() -> i32 {\r\n    1\r\n}\r\n").unwrap();
    let path = file.display().to_string();
    let run = run(
        &project,
        PermissionMode::AcceptEdits,
        vec![
            tool_reply(&[("t1", "Read", json!({"file_path": path}))]),
            tool_reply(&[(
                "t2",
                "Edit",
                json!({"file_path": path, "old_string": "    1", "new_string": "    2"}),
            )]),
            final_reply("Changed 1 to 2."),
        ],
        false,
    )
    .await;
    assert_eq!(done(&run), &TerminalReason::Completed);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"fn a() -> i32 {\r\n    2\r\n}\r\n",
        "CRLF kept, only the asked bytes changed"
    );
    let (read, is_error) = result_text(&run.state, "t1");
    assert!(!is_error);
    assert!(
        read.contains("     2\t    1"),
        "cat -n numbering reaches the model: {read}"
    );
    assert_eq!(run.provider.requests().len(), 3);
}

#[tokio::test]
async fn an_edit_without_a_read_is_refused_with_that_reason_and_the_file_is_untouched() {
    let project = Project::new();
    let file = project.root().join("a.txt");
    std::fs::write(&file, "x = 1\n").unwrap();
    let run = run(
        &project,
        PermissionMode::AcceptEdits,
        vec![
            tool_reply(&[(
                "t1",
                "Edit",
                json!({"file_path": file.display().to_string(), "old_string": "1", "new_string": "2"}),
            )]),
            final_reply("I need to read it first."),
        ],
        false,
    )
    .await;
    let (text, is_error) = result_text(&run.state, "t1");
    assert!(is_error);
    assert!(
        text.contains("has not been read in this session"),
        "the reason is 'not read', not a generic failure: {text}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 1\n");
}

#[tokio::test]
async fn in_exec_a_write_in_default_mode_is_denied_and_the_model_is_told_why() {
    let project = Project::new();
    let file = project.root().join("new.txt");
    let run = run(
        &project,
        PermissionMode::Default,
        vec![
            tool_reply(&[(
                "t1",
                "Write",
                json!({"file_path": file.display().to_string(), "content": "hello"}),
            )]),
            final_reply("Denied; stopping."),
        ],
        false,
    )
    .await;
    let (text, is_error) = result_text(&run.state, "t1");
    assert!(is_error);
    assert!(text.starts_with("Permission to run Write"), "{text}");
    assert!(text.contains("was denied"), "{text}");
    assert!(!file.exists());
    // A permission denial does not cascade and the turn completes.
    assert_eq!(done(&run), &TerminalReason::Completed);
}

#[tokio::test]
async fn a_failing_bash_cascades_to_the_calls_after_it_but_a_failing_read_does_not() {
    let project = Project::new();
    std::fs::write(project.root().join("a.txt"), "a\n").unwrap();
    let a = project.root().join("a.txt").display().to_string();
    let missing = project.root().join("missing.txt").display().to_string();
    let run = run(
        &project,
        PermissionMode::Bypass,
        vec![
            tool_reply(&[
                ("t1", "Read", json!({"file_path": missing})),
                ("t2", "Read", json!({"file_path": a})),
                ("t3", "Bash", json!({"command": "exit 3"})),
                ("t4", "Read", json!({"file_path": a})),
            ]),
            final_reply("ok"),
        ],
        false,
    )
    .await;
    let (t1, e1) = result_text(&run.state, "t1");
    let (t2, e2) = result_text(&run.state, "t2");
    let (t3, e3) = result_text(&run.state, "t3");
    let (t4, e4) = result_text(&run.state, "t4");
    assert!(e1, "{t1}");
    assert!(!e2, "a failed Read does not cascade: {t2}");
    assert!(e3 && t3.contains('3'), "the exit code is reported: {t3}");
    assert!(e4, "the call after a failed Bash is skipped: {t4}");
    assert!(t4.starts_with("Not run: an earlier Bash call"), "{t4}");
}

#[tokio::test]
async fn stopping_during_a_real_command_answers_every_call_and_ends_aborted() {
    let project = Project::new();
    let marker = project.root().join("never.txt");
    let run = run(
        &project,
        PermissionMode::Bypass,
        vec![tool_reply(&[
            ("t1", "Bash", json!({"command": "sleep 30"})),
            // Not read-only, so it waits for the first call's batch.
            (
                "t2",
                "Bash",
                json!({"command": format!("touch {}", marker.display())}),
            ),
        ])],
        true,
    )
    .await;
    assert!(matches!(done(&run), TerminalReason::Aborted { .. }));
    let (_, e1) = result_text(&run.state, "t1");
    let (t2, e2) = result_text(&run.state, "t2");
    assert!(e1);
    assert!(e2, "{t2}");
    assert!(!marker.exists(), "the call after the stop never ran");
}
