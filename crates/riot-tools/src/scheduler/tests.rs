//! Scheduler tests: order, batches, cascade, pairing on every failure
//! path, permission flow, budgets. Probe tools make each path happen on
//! purpose; the real tools cover the spill.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, DecisionReason, PermissionMode, PermissionOutcome,
    PermissionResult, ProgressPayload, PromptContext, RuleBehavior, RuleSource, Tool, ToolCall,
    ToolCallResult, ToolContext, ToolOutcome, ToolResultContent, ToolUseId, UiPayload,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::*;
use crate::testing::{GateAnswer, ScriptedGate, ScriptedPolicy, TempProject};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Action {
    Ok,
    Fail,
    Panic,
    /// Waits until cancelled.
    Hang,
    /// Cancels the request scope (the user presses stop), then hangs.
    Interrupt,
    Empty,
    /// Yields this many times before finishing.
    Slow,
    /// Sleeps 250 ms of the injected clock.
    Sleep,
    Progress,
    /// `is_concurrency_safe` panics.
    PanicInPredicate,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProbeInput {
    id: String,
    action: Action,
    #[serde(default)]
    safe: bool,
    #[serde(default)]
    yields: usize,
}

/// What probes did, shared by the test.
#[derive(Debug, Default)]
struct Log {
    events: Mutex<Vec<String>>,
    running: AtomicUsize,
    max_running: AtomicUsize,
    interrupt: Mutex<Option<CancelScope>>,
}

impl Log {
    fn push(&self, e: String) {
        self.events.lock().unwrap().push(e);
    }
    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
    fn index(&self, e: &str) -> usize {
        self.events()
            .iter()
            .position(|x| x == e)
            .unwrap_or_else(|| panic!("no `{e}` in {:?}", self.events()))
    }
}

struct Probe {
    name: &'static str,
    cascades: bool,
    log: Arc<Log>,
}

#[async_trait]
impl Tool for Probe {
    type Input = ProbeInput;

    fn name(&self) -> &str {
        self.name
    }
    fn input_schema(&self) -> Value {
        crate::tools::schema_of::<ProbeInput>()
    }
    fn prompt(&self, _cx: &PromptContext) -> String {
        "A test probe.".into()
    }
    fn describe(&self, input: &ProbeInput) -> String {
        format!("probe {}", input.id)
    }
    async fn preview(&self, input: &ProbeInput, _ctx: &ToolContext) -> Option<UiPayload> {
        Some(UiPayload::Text {
            text: format!("what probe {} will do", input.id),
        })
    }
    fn is_concurrency_safe(&self, input: &ProbeInput) -> bool {
        if input.action == Action::PanicInPredicate {
            panic!("predicate of {} exploded", input.id);
        }
        input.safe
    }
    fn cascades_on_failure(&self) -> bool {
        self.cascades
    }
    async fn call(&self, input: ProbeInput, ctx: &ToolContext) -> ToolOutcome {
        let log = &self.log;
        log.push(format!("start {}", input.id));
        let now = log.running.fetch_add(1, Ordering::SeqCst) + 1;
        log.max_running.fetch_max(now, Ordering::SeqCst);
        let outcome = match input.action {
            Action::Ok => ToolOutcome::text(format!("ok {}", input.id), None),
            Action::Fail => ToolOutcome::failed(format!("failed {}", input.id)),
            Action::Panic => panic!("probe {} exploded", input.id),
            Action::Hang => {
                ctx.cancel.cancelled().await;
                ToolOutcome::Cancelled
            }
            Action::Interrupt => {
                let scope = log.interrupt.lock().unwrap().clone();
                if let Some(scope) = scope {
                    scope.cancel(CancelReason::User);
                }
                ctx.cancel.cancelled().await;
                ToolOutcome::Cancelled
            }
            Action::Empty => ToolOutcome::text("", None),
            Action::Slow => {
                for _ in 0..input.yields {
                    tokio::task::yield_now().await;
                }
                ToolOutcome::text(format!("ok {}", input.id), None)
            }
            Action::Sleep => {
                ctx.env.clock.sleep_ms(250).await;
                ToolOutcome::text("slept", None)
            }
            Action::PanicInPredicate => ToolOutcome::text(format!("ran {}", input.id), None),
            Action::Progress => {
                ctx.report(ProgressPayload::Status {
                    text: "halfway".into(),
                });
                ToolOutcome::text("done", None)
            }
        };
        log.running.fetch_sub(1, Ordering::SeqCst);
        log.push(format!("end {}", input.id));
        outcome
    }
}

struct Harness {
    project: TempProject,
    log: Arc<Log>,
    policy: Arc<ScriptedPolicy>,
    gate: Arc<ScriptedGate>,
    scheduler: Scheduler,
}

fn harness_with(policy: ScriptedPolicy, gate: ScriptedGate, config: SchedulerConfig) -> Harness {
    let project = TempProject::new();
    let log = Arc::new(Log::default());
    let mut tools = crate::tools::builtin();
    tools.push(Arc::new(Probe {
        name: "Probe",
        cascades: false,
        log: Arc::clone(&log),
    }));
    tools.push(Arc::new(Probe {
        name: "Shell",
        cascades: true,
        log: Arc::clone(&log),
    }));
    let policy = Arc::new(policy);
    let gate = Arc::new(gate);
    let scheduler = Scheduler::new(
        tools,
        Arc::clone(&project.env),
        Arc::clone(&policy) as Arc<dyn riot_protocol::PermissionPolicy>,
        Arc::clone(&gate) as Arc<dyn riot_protocol::PermissionGate>,
        config,
    );
    Harness {
        project,
        log,
        policy,
        gate,
        scheduler,
    }
}

fn harness() -> Harness {
    harness_with(
        ScriptedPolicy::allow_all(),
        ScriptedGate::answering(vec![]),
        SchedulerConfig::default(),
    )
}

fn probe(tool: &str, id: &str, action: &str, safe: bool) -> ToolCall {
    ToolCall {
        id: ToolUseId::new(format!("t_{id}")),
        name: tool.into(),
        input: json!({"id": id, "action": action, "safe": safe}),
    }
}

fn call(id: &str, name: &str, input: Value) -> ToolCall {
    ToolCall {
        id: ToolUseId::new(id),
        name: name.into(),
        input,
    }
}

struct Ran {
    events: Vec<AgentEvent>,
    results: Vec<ToolCallResult>,
}

impl Ran {
    fn ids(&self) -> Vec<String> {
        self.results
            .iter()
            .map(|r| r.tool_use_id.to_string())
            .collect()
    }
    fn text(&self, i: usize) -> String {
        match &self.results[i].content[0] {
            ToolResultContent::Text { text } => text.clone(),
            ToolResultContent::Image { .. } => "<image>".into(),
            ToolResultContent::Document { .. } => "<document>".into(),
        }
    }
    fn started(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolStarted { tool_use_id, .. } => Some(tool_use_id.to_string()),
                _ => None,
            })
            .collect()
    }
}

async fn run_with(h: &Harness, calls: Vec<ToolCall>, cancel: CancelScope) -> Ran {
    let n = calls.len();
    let mut stream = h.scheduler.execute(
        calls,
        ExecuteOptions {
            cancel,
            mode: PermissionMode::Default,
        },
    );
    let mut ran = Ran {
        events: vec![],
        results: vec![],
    };
    while let Some(item) = stream.next().await {
        match item {
            ToolRunEvent::Event(e) => ran.events.push(e),
            ToolRunEvent::Result(r) => ran.results.push(r),
        }
    }
    assert_eq!(ran.results.len(), n, "exactly one result per call");
    ran
}

async fn run(h: &Harness, calls: Vec<ToolCall>) -> Ran {
    run_with(h, calls, CancelScope::new()).await
}

#[tokio::test]
async fn a_parallel_batch_runs_together_and_reports_in_call_order() {
    let h = harness();
    let mut slow = probe("Probe", "a", "slow", true);
    slow.input["yields"] = json!(20);
    let mut b = probe("Probe", "b", "slow", true);
    b.input["yields"] = json!(3);
    let mut c = probe("Probe", "c", "slow", true);
    c.input["yields"] = json!(3);
    let ran = run(&h, vec![slow, b, c]).await;
    assert_eq!(ran.ids(), ["t_a", "t_b", "t_c"]);
    assert_eq!(
        (ran.text(0), ran.text(1), ran.text(2)),
        ("ok a".into(), "ok b".into(), "ok c".into())
    );
    assert!(
        h.log.index("end b") < h.log.index("end a"),
        "b finished while a was still running"
    );
    assert_eq!(h.log.max_running.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_unsafe_call_splits_batches_and_nothing_is_reordered() {
    let h = harness();
    let ran = run(
        &h,
        vec![
            probe("Probe", "r1", "ok", true),
            probe("Probe", "r2", "ok", true),
            probe("Probe", "edit", "ok", false),
            probe("Probe", "r3", "ok", true),
        ],
    )
    .await;
    assert_eq!(ran.ids(), ["t_r1", "t_r2", "t_edit", "t_r3"]);
    assert!(h.log.index("end r1") < h.log.index("start edit"));
    assert!(h.log.index("end r2") < h.log.index("start edit"));
    assert!(h.log.index("end edit") < h.log.index("start r3"));
}

#[tokio::test]
async fn the_concurrency_cap_holds_and_zero_means_one() {
    let h = harness();
    let calls: Vec<ToolCall> = (0..12)
        .map(|i| {
            let mut c = probe("Probe", &format!("p{i}"), "slow", true);
            c.input["yields"] = json!(5);
            c
        })
        .collect();
    let ran = run(&h, calls.clone()).await;
    assert_eq!(ran.results.len(), 12);
    assert_eq!(h.log.max_running.load(Ordering::SeqCst), 10);

    let h0 = harness_with(
        ScriptedPolicy::allow_all(),
        ScriptedGate::answering(vec![]),
        SchedulerConfig {
            max_concurrency: 0,
            ..SchedulerConfig::default()
        },
    );
    run(&h0, calls).await;
    assert_eq!(h0.log.max_running.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_cascading_failure_cancels_running_siblings_and_skips_the_rest() {
    let h = harness();
    let ran = run(
        &h,
        vec![
            probe("Probe", "a", "hang", true),
            probe("Shell", "b", "fail", true),
            probe("Probe", "c", "ok", false),
            probe("Probe", "d", "ok", true),
        ],
    )
    .await;
    assert_eq!(ran.ids(), ["t_a", "t_b", "t_c", "t_d"]);
    assert!(ran.results.iter().all(|r| r.is_error));
    assert_eq!(
        ran.text(0),
        "Cancelled while it was running: a Shell call in the same batch (probe b) failed, and a failing Shell stops the calls that may depend on it. Look at that failure, then make this call again if it is still needed."
    );
    assert_eq!(ran.text(1), "failed b");
    assert!(
        ran.text(2)
            .starts_with("Not run: an earlier Shell call (probe b) failed"),
        "{}",
        ran.text(2)
    );
    assert!(ran.text(3).starts_with("Not run:"));
    let events = h.log.events();
    assert_eq!(&events[..3], ["start a", "start b", "end b"]);
    assert!(
        !events
            .iter()
            .any(|e| e.ends_with(" c") || e.ends_with(" d")),
        "c and d never started: {events:?}"
    );
}

#[tokio::test]
async fn failures_of_non_cascading_tools_and_denials_do_not_cascade() {
    let h = harness_with(
        ScriptedPolicy::allow_all().set("Shell", ScriptedPolicy::deny("plan mode: no commands")),
        ScriptedGate::answering(vec![]),
        SchedulerConfig::default(),
    );
    let ran = run(
        &h,
        vec![
            probe("Probe", "read", "fail", true),
            probe("Probe", "sib", "ok", true),
            probe("Shell", "denied", "fail", false),
            probe("Probe", "after", "ok", false),
        ],
    )
    .await;
    assert_eq!(ran.text(0), "failed read");
    assert_eq!(ran.text(1), "ok sib");
    assert_eq!(
        ran.text(2),
        "Permission to run Shell (probe denied) was denied: plan mode: no commands. Do not retry the same call; choose an approach this permission allows, or tell the person what you need."
    );
    assert_eq!(ran.text(3), "ok after");
    assert!(
        !ran.started().contains(&"t_denied".to_owned()),
        "a denied call never starts"
    );
}

#[tokio::test]
async fn an_interrupt_fills_a_result_for_every_call() {
    let h = harness();
    let request = CancelScope::new();
    *h.log.interrupt.lock().unwrap() = Some(request.clone());
    let ran = run_with(
        &h,
        vec![
            probe("Probe", "a", "ok", false),
            probe("Probe", "sib", "hang", true),
            probe("Probe", "stop", "interrupt", true),
            probe("Shell", "later", "ok", false),
            probe("Probe", "last", "ok", true),
        ],
        request,
    )
    .await;
    assert_eq!(ran.ids(), ["t_a", "t_sib", "t_stop", "t_later", "t_last"]);
    assert_eq!(ran.text(0), "ok a");
    assert_eq!(ran.text(1), "Interrupted by the user while it was running.");
    assert_eq!(ran.text(2), "Interrupted by the user while it was running.");
    assert_eq!(ran.text(3), "Interrupted by the user before it started.");
    assert_eq!(ran.text(4), "Interrupted by the user before it started.");
    assert!(ran.results[1..].iter().all(|r| r.is_error));
    assert!(
        !h.log
            .events()
            .iter()
            .any(|e| e.contains("later") || e.contains("last"))
    );
}

#[tokio::test]
async fn unknown_tools_bad_input_and_panics_each_get_their_result() {
    let h = harness();
    let ran = run(
        &h,
        vec![
            call("u", "Teleport", json!({})),
            call("m", "Probe", json!({"action": "ok"})),
            call(
                "f",
                "Probe",
                json!({"id": "x", "action": "ok", "colour": 1}),
            ),
            call("v", "Probe", json!({"id": "x", "action": "dance"})),
            probe("Probe", "boom", "panic", false),
            probe("Probe", "fine", "ok", false),
        ],
    )
    .await;
    assert_eq!(ran.ids(), ["u", "m", "f", "v", "t_boom", "t_fine"]);
    assert!(ran.text(0).starts_with("There is no tool named `Teleport`. Use one of the available tools: Read, Write, Edit, Glob, Grep, Bash, BashOutput, KillShell, NotebookEdit, Diagnostics, Terminal, Browser, Probe, Shell."));
    assert!(
        ran.text(1)
            .starts_with("Probe was called without the required parameter `id`.")
    );
    assert!(
        ran.text(2)
            .starts_with("`colour` is not a parameter of Probe.")
    );
    assert!(
        ran.text(3)
            .starts_with("`dance` is not an allowed value here. Use one of `ok`, `fail`"),
        "{}",
        ran.text(3)
    );
    assert!(
        ran.text(4)
            .starts_with("Probe crashed with an internal error (probe boom exploded)."),
        "{}",
        ran.text(4)
    );
    assert_eq!(ran.text(5), "ok fine");
    assert!(ran.results[..5].iter().all(|r| r.is_error));
}

#[tokio::test]
async fn empty_output_is_stated_and_ui_carries_describe_and_clock_duration() {
    let h = harness();
    let ran = run(
        &h,
        vec![
            probe("Probe", "e", "empty", false),
            probe("Probe", "s", "sleep", false),
        ],
    )
    .await;
    assert_eq!(ran.text(0), "(Probe completed with no output)");
    assert!(!ran.results[0].is_error);
    let ui = ran.results[1].ui.clone().unwrap();
    assert_eq!((ui.describe.as_str(), ui.duration_ms), ("probe s", 250));
}

#[tokio::test]
async fn progress_and_started_events_are_forwarded() {
    let h = harness();
    let ran = run(&h, vec![probe("Probe", "p", "progress", false)]).await;
    assert_eq!(
        ran.events,
        vec![
            AgentEvent::ToolStarted {
                tool_use_id: "t_p".into(),
                name: "Probe".into(),
                describe: "probe p".into()
            },
            AgentEvent::Progress {
                tool_use_id: "t_p".into(),
                payload: ProgressPayload::Status {
                    text: "halfway".into()
                }
            },
        ]
    );
}

fn ask_harness(answers: Vec<GateAnswer>) -> Harness {
    harness_with(
        ScriptedPolicy::allow_all()
            .set("Shell", ScriptedPolicy::ask("Run this command?"))
            .offering("Shell(make test)"),
        ScriptedGate::answering(answers),
        SchedulerConfig::default(),
    )
}

#[tokio::test]
async fn an_ask_is_put_to_the_person_and_allow_always_is_remembered() {
    let h = ask_harness(vec![GateAnswer::Answer(PermissionOutcome::AllowAlways {
        rule: "Shell(make test)".into(),
    })]);
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert_eq!(ran.text(0), "ok s");
    let kinds: Vec<&str> = ran
        .events
        .iter()
        .map(|e| match e {
            AgentEvent::PermissionRequest { .. } => "request",
            AgentEvent::PermissionResolved { .. } => "resolved",
            AgentEvent::ToolStarted { .. } => "started",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["request", "resolved", "started"]);
    let remembered = h.policy.remembered();
    assert_eq!(remembered.len(), 1);
    assert_eq!(remembered[0].pattern.to_string(), "Shell(make test)");
    assert_eq!(
        (remembered[0].behavior, remembered[0].source),
        (RuleBehavior::Allow, RuleSource::Session)
    );
    let asked = h.gate.asked();
    assert_eq!(asked[0].1.message, "Run this command?");
    assert_eq!(asked[0].1.describe, "probe s");
    // The tool's preview goes with the question, to the gate and in the
    // event alike.
    let preview = Some(UiPayload::Text {
        text: "what probe s will do".into(),
    });
    assert_eq!(asked[0].1.preview, preview);
    let Some(AgentEvent::PermissionRequest { detail, .. }) = ran.events.first() else {
        panic!("{:?}", ran.events)
    };
    assert_eq!(detail.preview, preview);
    assert_eq!(
        asked[0].1.suggested_rule.as_deref(),
        Some("Shell(make test)")
    );
}

#[tokio::test]
async fn only_the_offered_rule_is_remembered_and_none_is_offered_when_the_policy_offers_none() {
    // A face answering "always" with a wider rule than the one offered
    // gets a one-time allow.
    let h = ask_harness(vec![GateAnswer::Answer(PermissionOutcome::AllowAlways {
        rule: "Shell(*)".into(),
    })]);
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert_eq!(ran.text(0), "ok s");
    assert!(
        h.policy.remembered().is_empty(),
        "{:?}",
        h.policy.remembered()
    );
    // A policy that offers nothing (a safety finding): no rule in the
    // question.
    let h = harness_with(
        ScriptedPolicy::allow_all().set("Shell", ScriptedPolicy::ask("Safety check")),
        ScriptedGate::answering(vec![GateAnswer::Answer(PermissionOutcome::AllowAlways {
            rule: "Shell(make test)".into(),
        })]),
        SchedulerConfig::default(),
    );
    run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert_eq!(h.gate.asked()[0].1.suggested_rule, None);
    assert!(h.policy.remembered().is_empty());
    // Nor is a "reject always" with a rule that was not offered; the model
    // is not told a rule was saved.
    let h = harness_with(
        ScriptedPolicy::allow_all().set("Shell", ScriptedPolicy::ask("Safety check")),
        ScriptedGate::answering(vec![GateAnswer::Answer(PermissionOutcome::RejectAlways {
            rule: "Shell(*)".into(),
        })]),
        SchedulerConfig::default(),
    );
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert!(h.policy.remembered().is_empty());
    assert_eq!(
        ran.text(0),
        "The person denied permission to run Shell (probe s). Do not retry it; ask what they would prefer or take another approach."
    );
}

#[tokio::test]
async fn a_rejection_carries_the_persons_feedback_and_the_call_never_starts() {
    let h = ask_harness(vec![GateAnswer::Answer(PermissionOutcome::RejectOnce {
        feedback: Some("use the Makefile".into()),
    })]);
    let ran = run(
        &h,
        vec![
            probe("Shell", "s", "ok", false),
            probe("Probe", "next", "ok", false),
        ],
    )
    .await;
    assert_eq!(
        ran.text(0),
        "The person denied permission to run Shell (probe s) and said: use the Makefile\nFollow their guidance instead of retrying."
    );
    assert_eq!(ran.text(1), "ok next", "a denial does not cascade");
    assert_eq!(ran.started(), ["t_next"]);
}

#[tokio::test]
async fn an_unanswered_question_times_out_as_a_denial_and_closes_the_dialog() {
    let h = ask_harness(vec![GateAnswer::Silence]);
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert_eq!(
        ran.text(0),
        "Permission to run Shell (probe s) was denied: nobody answered the question within 60 seconds. Continue without it, or tell the person what you need."
    );
    assert!(ran.events.iter().any(|e| matches!(
        e,
        AgentEvent::PermissionResolved {
            outcome: PermissionOutcome::TimedOut,
            ..
        }
    )));
    assert!(ran.started().is_empty());
}

#[tokio::test]
async fn when_nobody_can_answer_an_ask_is_a_denial_without_a_question() {
    let h = harness_with(
        ScriptedPolicy::allow_all().set("Shell", ScriptedPolicy::ask("Run this command?")),
        ScriptedGate::nobody(),
        SchedulerConfig::default(),
    );
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert!(ran.text(0).starts_with("Permission to run Shell (probe s) was denied: it needs the person's approval (Run this command?), and nobody can answer"));
    assert!(
        ran.events.is_empty(),
        "no dialog is opened: {:?}",
        ran.events
    );
    assert!(h.gate.asked().is_empty());
}

#[tokio::test]
async fn the_policy_sees_the_query_and_may_change_the_input() {
    let h = harness_with(
        ScriptedPolicy::allow_all().set(
            "Probe",
            PermissionResult::Allow {
                reason: DecisionReason::Hook {
                    detail: "rewrote".into(),
                    hook: "h.sh".into(),
                },
                updated_input: Some(json!({"id": "rewritten", "action": "ok"})),
            },
        ),
        ScriptedGate::answering(vec![]),
        SchedulerConfig::default(),
    );
    let ran = run(&h, vec![probe("Probe", "orig", "fail", false)]).await;
    assert_eq!(ran.text(0), "ok rewritten");
    let q = &h.policy.queries()[0];
    assert_eq!(
        (q.tool_name.as_str(), q.is_read_only, q.mode),
        ("Probe", false, PermissionMode::Default)
    );
}

#[tokio::test]
async fn a_300_kb_bash_output_is_spilled_with_path_preview_and_cut() {
    let h = harness();
    let ran = run(
        &h,
        vec![call(
            "big",
            "Bash",
            json!({"command": "echo START; head -c 300000 /dev/zero | tr '\\0' 'y'; echo; echo END"}),
        )],
    )
    .await;
    let text = ran.text(0);
    let spill = h.project.path(".riot-spill/big.txt");
    assert!(
        text.starts_with(&format!(
            "This result is 300010 characters, over the 50000-character budget, so it was saved in full to {}.",
            spill.display()
        )),
        "{}",
        &text[..300.min(text.len())]
    );
    assert!(text.contains("Shown below: the first 2000 and the last 2000 characters; 296010 characters in between are not shown."));
    assert!(text.contains("--- first 2000 characters ---\nSTART\nyyy"));
    assert!(text.ends_with("yyy\nEND"));
    let saved = String::from_utf8(h.project.read(".riot-spill/big.txt")).unwrap();
    assert_eq!(saved.len(), 300_010);
    assert!(saved.starts_with("START\n") && saved.ends_with("\nEND"));
    assert!(!ran.results[0].is_error);
}

#[tokio::test]
async fn read_is_never_spilled() {
    let h = harness();
    let line = "z".repeat(99) + "\n";
    h.project.write("big.txt", line.repeat(1000)); // 100 KB
    let ran = run(&h, vec![call("r", "Read", json!({"file_path": "big.txt"}))]).await;
    assert!(ran.text(0).starts_with("     1\tzzz"));
    assert!(!h.project.path(".riot-spill/r.txt").exists());
}

#[tokio::test]
async fn a_huge_read_is_cut_at_reads_cap_and_not_spilled() {
    // ~5 MB asked for whole: before, the whole range came back and the
    // message budget spilled all of it to a file as large as the file.
    let h = harness();
    let line = "w".repeat(99) + "\n";
    h.project.write("huge.txt", line.repeat(50_000));
    let ran = run(
        &h,
        vec![call(
            "r",
            "Read",
            json!({"file_path": "huge.txt", "limit": 100_000_000}),
        )],
    )
    .await;
    let text = ran.text(0);
    assert!(text.starts_with("     1\twww"), "{}", &text[..40]);
    assert!(
        text.ends_with(
            "\n\n(Showing lines 1-932 of 50000: one Read shows at most 100000 characters. Continue with offset=933.)"
        ),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(!h.project.path(".riot-spill").exists(), "nothing spilled");
}

#[tokio::test]
async fn a_messages_results_together_stay_within_the_aggregate_budget() {
    // docs/design.md §10 layer 2: five parallel Reads of ~66 KB each (each
    // within its own unlimited budget) would put ~330 KB in one message.
    let h = harness();
    let line = "q".repeat(59) + "\n";
    for i in 0..5 {
        h.project.write(&format!("f{i}.txt"), line.repeat(1000));
    }
    let calls = (0..5)
        .map(|i| {
            call(
                &format!("r{i}"),
                "Read",
                json!({"file_path": format!("f{i}.txt")}),
            )
        })
        .collect();
    let ran = run(&h, calls).await;
    let sizes: Vec<usize> = (0..5).map(|i| ran.text(i).chars().count()).collect();
    for i in 0..2 {
        assert!(
            ran.text(i).starts_with("     1\tqqq"),
            "result {i} is whole"
        );
    }
    for i in 3..5 {
        assert!(
            ran.text(i).contains("saved in full to"),
            "result {i} is spilled: {}",
            &ran.text(i)[..200]
        );
        assert!(h.project.path(&format!(".riot-spill/r{i}.txt")).exists());
    }
    let total: usize = sizes.iter().sum();
    assert!(
        total <= super::budget::MESSAGE_BUDGET_CHARS + 2 * 4 * PREVIEW_CHARS,
        "the message stays near its budget: {sizes:?}"
    );
}

#[tokio::test]
async fn a_request_cancelled_before_execution_gets_cancelled_results() {
    let h = harness();
    let request = CancelScope::new();
    request.cancel(CancelReason::UserInterjection);
    let ran = run_with(
        &h,
        vec![
            probe("Probe", "a", "ok", true),
            call("x", "Nope", json!({})),
        ],
        request,
    )
    .await;
    assert_eq!(
        ran.text(0),
        "Interrupted before it started: the user sent a new message."
    );
    assert_eq!(
        ran.text(1),
        "Interrupted before it started: the user sent a new message."
    );
    assert!(h.log.events().is_empty());
}

#[test]
fn specs_follow_the_tool_order_with_prompts_and_schemas() {
    let h = harness();
    let specs = h.scheduler.specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
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
            "NotebookEdit",
            "Diagnostics",
            "Terminal",
            "Browser",
            "Probe",
            "Shell"
        ]
    );
    assert!(specs[0].description.contains("NEVER"));
    assert_eq!(specs[0].input_schema["required"], json!(["file_path"]));
}

#[tokio::test]
async fn cancellation_is_checked_again_after_the_question() {
    let request = CancelScope::new();
    let h = harness_with(
        ScriptedPolicy::allow_all().set("Shell", ScriptedPolicy::ask("Run this command?")),
        ScriptedGate::answering(vec![GateAnswer::Answer(PermissionOutcome::AllowOnce)])
            .cancelling_on_ask(request.clone()),
        SchedulerConfig::default(),
    );
    let ran = run_with(&h, vec![probe("Shell", "s", "ok", false)], request).await;
    assert_eq!(ran.text(0), "Interrupted by the user before it started.");
    assert!(
        ran.started().is_empty(),
        "an allow that arrives after stop does not run the call"
    );
    assert!(h.log.events().is_empty());
}

#[tokio::test]
async fn a_passthrough_from_the_policy_is_asked_not_allowed() {
    let h = harness_with(
        ScriptedPolicy::with_default(PermissionResult::Passthrough),
        ScriptedGate::nobody(),
        SchedulerConfig::default(),
    );
    let ran = run(&h, vec![probe("Probe", "p", "ok", false)]).await;
    assert!(ran.results[0].is_error);
    assert!(ran.text(0).contains("was denied"), "{}", ran.text(0));
    assert!(h.log.events().is_empty());
}

#[tokio::test]
async fn a_refused_bash_call_cascades_but_a_refused_read_does_not() {
    let h = harness();
    let ran = run(
        &h,
        vec![
            call("r", "Read", json!({"file_path": "missing.txt"})),
            // Not read-only, so it runs in its own batch after the Read.
            call(
                "b",
                "Bash",
                json!({"command": "rm -f x", "timeout": 700000}),
            ),
            call("after", "Bash", json!({"command": "echo never"})),
        ],
    )
    .await;
    assert_eq!(
        ran.text(0),
        "missing.txt does not exist. Check the path; Glob finds files by name."
    );
    assert!(
        ran.text(1)
            .starts_with("`timeout` 700000 ms is over the maximum")
    );
    assert!(
        ran.text(2)
            .starts_with("Not run: an earlier Bash call (rm -f x) failed"),
        "{}",
        ran.text(2)
    );
}

#[tokio::test]
async fn no_calls_is_an_empty_stream() {
    let h = harness();
    let ran = run(&h, vec![]).await;
    assert!(ran.events.is_empty() && ran.results.is_empty());
}

#[tokio::test]
async fn a_panicking_safety_predicate_makes_the_call_unsafe() {
    let h = harness();
    let mut a = probe("Probe", "a", "slow", true);
    a.input["yields"] = json!(3);
    let ran = run(
        &h,
        vec![
            a,
            probe("Probe", "b", "panic_in_predicate", true),
            probe("Probe", "c", "ok", true),
        ],
    )
    .await;
    assert_eq!(ran.ids(), ["t_a", "t_b", "t_c"]);
    assert_eq!(ran.text(1), "ran b");
    assert!(
        h.log.index("end a") < h.log.index("start b"),
        "b ran alone, after a's batch"
    );
    assert!(h.log.index("end b") < h.log.index("start c"));
}

// ---- PreToolUse and PostToolUse hooks (§6.3 steps 5 and 9) ----

/// Hooks that log when they run and answer as scripted.
#[derive(Debug)]
struct ScriptedHooks {
    log: Arc<Log>,
    pre: riot_protocol::HookVerdict,
    post: Option<String>,
}

#[async_trait]
impl riot_protocol::ToolHooks for ScriptedHooks {
    async fn pre_tool_use(&self, call: &ToolCall) -> riot_protocol::HookVerdict {
        self.log
            .push(format!("pre {}", call.input["id"].as_str().unwrap_or("?")));
        self.pre.clone()
    }

    async fn post_tool_use(&self, call: &ToolCall, result: &ToolCallResult) -> Option<String> {
        let ToolResultContent::Text { text } = &result.content[0] else {
            panic!("text result expected");
        };
        self.log.push(format!(
            "post {} saw `{text}`",
            call.input["id"].as_str().unwrap_or("?")
        ));
        self.post.clone()
    }
}

fn hooked(mut h: Harness, pre: riot_protocol::HookVerdict, post: Option<String>) -> Harness {
    let hooks = Arc::new(ScriptedHooks {
        log: Arc::clone(&h.log),
        pre,
        post,
    });
    h.scheduler = h.scheduler.with_hooks(hooks);
    h
}

fn hook_says(
    decision: riot_protocol::HookDecisionKind,
    reason: &str,
) -> riot_protocol::HookVerdict {
    riot_protocol::HookVerdict {
        permission: Some(riot_protocol::HookPermission {
            decision,
            hook: "./guard.sh".into(),
            reason: reason.into(),
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn hooks_run_before_permission_and_after_the_call_in_order() {
    let h = hooked(
        harness(),
        riot_protocol::HookVerdict {
            additional_context: Some("pre context".into()),
            ..Default::default()
        },
        Some("post context".into()),
    );
    let ran = run(&h, vec![probe("Probe", "a", "ok", false)]).await;
    assert_eq!(
        h.log.events(),
        ["pre a", "start a", "end a", "post a saw `ok a`"]
    );
    let texts: Vec<String> = ran.results[0]
        .content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text { text } => text.clone(),
            ToolResultContent::Image { .. } => "<image>".into(),
            ToolResultContent::Document { .. } => "<document>".into(),
        })
        .collect();
    assert_eq!(texts, ["ok a", "pre context", "post context"]);
    assert_eq!(h.policy.queries()[0].hook, None);
}

#[tokio::test]
async fn a_hook_deny_refuses_before_the_policy_and_the_call_never_starts() {
    let h = hooked(
        harness(),
        hook_says(
            riot_protocol::HookDecisionKind::Deny,
            "no pushing on Fridays",
        ),
        Some("never".into()),
    );
    let ran = run(&h, vec![probe("Shell", "s", "ok", false)]).await;
    assert!(ran.results[0].is_error);
    assert!(
        ran.text(0).contains("no pushing on Fridays"),
        "{}",
        ran.text(0)
    );
    assert!(ran.started().is_empty());
    assert!(
        h.policy.queries().is_empty(),
        "the policy was not consulted"
    );
    assert_eq!(
        h.log.events(),
        ["pre s"],
        "no PostToolUse for a refused call"
    );
}

#[tokio::test]
async fn a_hook_ask_is_never_waved_through_by_an_allowing_policy() {
    let h = harness_with(
        ScriptedPolicy::allow_all(),
        ScriptedGate::nobody(),
        SchedulerConfig::default(),
    );
    let h = hooked(
        h,
        hook_says(
            riot_protocol::HookDecisionKind::Ask,
            "check the target branch",
        ),
        None,
    );
    let ran = run(&h, vec![probe("Probe", "p", "ok", false)]).await;
    assert!(ran.results[0].is_error);
    assert!(
        ran.text(0).contains("check the target branch"),
        "{}",
        ran.text(0)
    );
    assert!(ran.started().is_empty());
    let q = &h.policy.queries()[0];
    assert_eq!(
        q.hook.as_ref().map(|h| h.decision),
        Some(riot_protocol::HookDecisionKind::Ask)
    );
}

#[tokio::test]
async fn a_hooks_updated_input_is_prepared_again_and_judged() {
    let h = hooked(
        harness(),
        riot_protocol::HookVerdict {
            updated_input: Some(json!({"id": "rewritten", "action": "ok"})),
            ..Default::default()
        },
        None,
    );
    let ran = run(&h, vec![probe("Probe", "orig", "fail", false)]).await;
    assert_eq!(ran.text(0), "ok rewritten");
    assert_eq!(h.policy.queries()[0].input["id"], "rewritten");

    let h = hooked(
        harness(),
        riot_protocol::HookVerdict {
            updated_input: Some(json!({"id": "x", "bogus": true})),
            ..Default::default()
        },
        None,
    );
    let ran = run(&h, vec![probe("Probe", "orig", "ok", false)]).await;
    assert!(ran.results[0].is_error);
    assert!(ran.text(0).contains("bogus"), "{}", ran.text(0));
    assert!(ran.started().is_empty());
}

/// A PreToolUse hook that hangs after the person presses stop.
#[derive(Debug)]
struct HangingHook {
    log: Arc<Log>,
}

#[async_trait]
impl riot_protocol::ToolHooks for HangingHook {
    async fn pre_tool_use(&self, _call: &ToolCall) -> riot_protocol::HookVerdict {
        let scope = self.log.interrupt.lock().unwrap().clone();
        if let Some(scope) = scope {
            scope.cancel(CancelReason::User);
        }
        futures::future::pending().await
    }
}

#[tokio::test]
async fn an_interrupt_does_not_wait_for_a_hanging_pre_tool_use_hook() {
    let mut h = harness();
    let request = CancelScope::new();
    *h.log.interrupt.lock().unwrap() = Some(request.clone());
    h.scheduler = h.scheduler.with_hooks(Arc::new(HangingHook {
        log: Arc::clone(&h.log),
    }));
    let ran = run_with(&h, vec![probe("Probe", "p", "ok", false)], request).await;
    assert!(ran.results[0].is_error);
    assert_eq!(ran.text(0), "Interrupted by the user before it started.");
    assert!(ran.started().is_empty());
    assert!(h.policy.queries().is_empty());
}

// ---- Checkpoints: a call that may change files is announced (docs/rewind.md) ----

/// Hooks that log the calls announced as changing files.
#[derive(Debug)]
struct ChangeHooks {
    log: Arc<Log>,
}

#[async_trait]
impl riot_protocol::ToolHooks for ChangeHooks {
    async fn before_change(&self, call: &ToolCall, target: &riot_protocol::PermissionTarget) {
        self.log.push(format!(
            "before change {} ({target:?})",
            call.input["id"].as_str().unwrap_or("?")
        ));
    }

    async fn after_change(&self, call: &ToolCall) {
        self.log.push(format!(
            "after change {}",
            call.input["id"].as_str().unwrap_or("?")
        ));
    }
}

#[tokio::test]
async fn a_call_that_may_change_files_is_announced_around_its_run_however_it_ends() {
    let mut h = harness();
    h.scheduler = h.scheduler.with_hooks(Arc::new(ChangeHooks {
        log: Arc::clone(&h.log),
    }));
    let ran = run(
        &h,
        vec![
            probe("Probe", "a", "ok", false),
            probe("Probe", "b", "fail", false),
        ],
    )
    .await;
    assert!(!ran.results[0].is_error && ran.results[1].is_error);
    assert_eq!(
        h.log.events(),
        [
            "before change a (Opaque)",
            "start a",
            "end a",
            "after change a",
            "before change b (Opaque)",
            "start b",
            "end b",
            "after change b",
        ]
    );
}

#[tokio::test]
async fn a_refused_call_is_never_announced_as_a_change() {
    let mut h = harness_with(
        ScriptedPolicy::with_default(PermissionResult::Deny {
            reason: DecisionReason::Consent {
                detail: "not here".into(),
            },
            message: "not here".into(),
        }),
        ScriptedGate::nobody(),
        SchedulerConfig::default(),
    );
    h.scheduler = h.scheduler.with_hooks(Arc::new(ChangeHooks {
        log: Arc::clone(&h.log),
    }));
    let ran = run(&h, vec![probe("Probe", "a", "ok", false)]).await;
    assert!(ran.results[0].is_error);
    assert!(h.log.events().is_empty(), "{:?}", h.log.events());
}
