//! L4 fault injection (docs/testing.md): each case asserts the specific
//! outcome — which notices were forwarded, which requests were sent, what
//! the model was told, whether a hook ran. Transport retries and backoff are
//! tested in riot-providers; the scheduler's cascade, permission timeout and
//! batching in riot-tools.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

mod support;

use std::collections::BTreeMap;

use riot_core::testing::CLEARED;
use riot_protocol::*;
use serde_json::json;
use support::{Case, MODEL, ToolSpecJson, assert_paired, run_case, script_item};

fn items(v: serde_json::Value) -> Vec<riot_core::testing::ScriptItem> {
    v.as_array().unwrap().iter().flat_map(script_item).collect()
}

fn case(prompt: &str) -> Case {
    Case {
        description: "fault case".into(),
        prompt: prompt.into(),
        ..Case::default()
    }
}

fn tools(entries: &[(&str, ToolSpecJson)]) -> BTreeMap<String, ToolSpecJson> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn done(events: &[AgentEvent]) -> &TerminalReason {
    match events.last() {
        Some(AgentEvent::Done { reason }) => reason,
        other => panic!("last event is not Done: {other:?}"),
    }
}

fn end_turn(text: &str) -> serde_json::Value {
    json!([{"text": text}, {"usage": {"input_tokens": 5, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0}}, {"stop": "end_turn"}])
}

fn retrying(kind: &str, attempt: u32) -> serde_json::Value {
    json!({"retrying": {"attempt": attempt, "delay_ms": 500 * 2u64.pow(attempt - 1), "kind": kind, "reason": format!("{kind} (attempt {attempt})")}})
}

#[tokio::test]
async fn retry_429_notices_are_forwarded_and_the_reply_succeeds() {
    let mut script = vec![retrying("rate_limit", 1), retrying("rate_limit", 2)];
    script.extend(end_turn("done").as_array().unwrap().clone());
    let run = run_case(&case("hi"), vec![items(json!(script))]).await;
    let retries: Vec<(u32, u64)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![(1, 500), (2, 1000)]);
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    assert_eq!(
        run.provider.requests().len(),
        1,
        "the loop does not re-request"
    );
}

#[tokio::test]
async fn auth_error_surfaces_at_once_without_a_loop_retry() {
    let script =
        json!([{"error": {"kind": "auth", "message": "invalid x-api-key", "status": 401}}]);
    let run = run_case(&case("hi"), vec![items(script)]).await;
    let TerminalReason::Error { error } = done(&run.events) else {
        panic!("expected an error");
    };
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(error.message.contains("HTTP 401"), "{}", error.message);
    assert_eq!(run.provider.requests().len(), 1);
    assert_eq!(run.hooks.calls(), 0, "no stop hook after an API error");
}

#[tokio::test]
async fn api_error_never_runs_stop_hooks_but_a_finished_reply_does() {
    let mut c = case("hi");
    c.stop_hooks = vec![support::StopJson::Continue("run the tests".into())];
    let failing =
        json!([{"error": {"kind": "overloaded", "message": "overloaded", "status": 529}}]);
    let run = run_case(&c, vec![items(failing)]).await;
    assert!(matches!(done(&run.events), TerminalReason::Error { .. }));
    assert_eq!(run.hooks.calls(), 0);

    let run = run_case(
        &c,
        vec![items(end_turn("first")), items(end_turn("second"))],
    )
    .await;
    assert_eq!(run.hooks.calls(), 2);
    let after: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::RequestStart { after, .. } => Some(*after),
            _ => None,
        })
        .collect();
    assert_eq!(after, vec![None, Some(Transition::StopHookRetry)]);
    let hook_text = run.provider.requests()[1].messages.last().cloned().unwrap();
    let Message::User(u) = hook_text else {
        panic!("the hook's reason goes to the model as user text");
    };
    assert_eq!(u.origin, MessageOrigin::Hook);
    assert_eq!(
        u.content,
        vec![UserBlock::Text {
            text: "run the tests".into()
        }]
    );
}

#[tokio::test]
async fn stop_hook_retries_are_bounded() {
    let mut c = case("hi");
    c.stop_hooks = (0..10)
        .map(|_| support::StopJson::Continue("again".into()))
        .collect();
    let replies = (0..10).map(|_| items(end_turn("ok"))).collect();
    let run = run_case(&c, replies).await;
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    assert_eq!(
        run.hooks.calls(),
        4,
        "three retries, then the fourth verdict ends it"
    );
    assert_eq!(run.provider.requests().len(), 4);
}

#[tokio::test]
async fn stop_hook_prevent_ends_with_its_reason() {
    let mut c = case("hi");
    c.stop_hooks = vec![support::StopJson::Prevent("CI is red".into())];
    let run = run_case(&c, vec![items(end_turn("ok"))]).await;
    assert_eq!(done(&run.events), &TerminalReason::StopHookPrevented);
    assert_eq!(TerminalReason::StopHookPrevented.exit_code(), 0);
}

#[tokio::test]
async fn fallback_on_overload_switches_model_drops_foreign_thinking_and_tells_the_user() {
    let mut c = case("fix it");
    c.fallback_model = Some("fallback-model".into());
    c.tools = tools(&[("Read", ToolSpecJson::Ok("     1\tx".into()))]);
    let first = json!([
        {"thinking": {"text": "plan", "signature": "sig-A"}},
        {"tool_use": {"id": "toolu_a", "name": "Read", "input": {"file_path": "a"}}},
        {"stop": "tool_use"}
    ]);
    let overloaded = json!([
        retrying("overloaded", 1),
        retrying("overloaded", 2),
        retrying("overloaded", 3),
        {"stall": true}
    ]);
    let run = run_case(
        &c,
        vec![items(first), items(overloaded), items(end_turn("done"))],
    )
    .await;
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    let requests = run.provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].model, MODEL);
    assert_eq!(requests[2].model, "fallback-model");
    // The thinking block signed by the first model is not sent to the fallback.
    assert_eq!(
        invariants::check_thinking_model(&requests[2].messages, "fallback-model"),
        Ok(())
    );
    assert!(requests[2].messages.iter().all(|m| {
        match m {
            Message::Assistant(a) => a
                .content
                .iter()
                .all(|b| !matches!(b, AssistantBlock::Thinking { .. })),
            _ => true,
        }
    }));
    assert_paired(&requests[2].messages);
    let told = run.events.iter().any(|e| matches!(e,
        AgentEvent::Message { message: Message::System(s) } if s.text.contains("switched to the fallback model fallback-model")));
    assert!(told, "the user is told about the switch");
    let transitions: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::RequestStart { after, model, .. } => Some((model.clone(), *after)),
            _ => None,
        })
        .collect();
    assert_eq!(
        transitions.last(),
        Some(&("fallback-model".to_owned(), Some(Transition::FallbackModel)))
    );
}

#[tokio::test]
async fn context_overflow_is_withheld_compacted_and_retried() {
    let mut c = case("go on");
    c.tools = tools(&[("Read", ToolSpecJson::Ok("big output".into()))]);
    let first = json!([
        {"tool_use": {"id": "toolu_a", "name": "Read", "input": {"file_path": "a"}}},
        {"stop": "tool_use"}
    ]);
    let overflow = json!([{"error": {"kind": "context_overflow", "message": "prompt is too long: 210000 tokens > 200000 maximum", "status": 400}}]);
    let run = run_case(
        &c,
        vec![items(first), items(overflow), items(end_turn("ok"))],
    )
    .await;
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    // Withheld: no error message reached the stream.
    assert!(!run.events.iter().any(|e| matches!(e,
        AgentEvent::Message { message: Message::System(s) } if s.level == SystemLevel::Error)));
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacted { .. }))
    );
    let requests = run.provider.requests();
    assert_eq!(requests.len(), 3);
    let retried = requests[2]
        .messages
        .iter()
        .find_map(Message::as_user)
        .cloned();
    assert!(retried.is_some());
    let cleared = requests[2].messages.iter().any(|m| match m {
        Message::User(u) => u.content.iter().any(|b| matches!(b,
            UserBlock::ToolResult { content, .. } if content == &vec![ToolResultContent::text(CLEARED)])),
        _ => false,
    });
    assert!(cleared, "the retried request carries the compacted history");
    assert_paired(&requests[2].messages);
    let last_start = run
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::RequestStart { after, .. } => Some(*after),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_start, Some(Transition::ReactiveCompactRetry));
}

#[tokio::test]
async fn context_overflow_twice_in_one_iteration_surfaces() {
    let overflow = || {
        items(
            json!([{"error": {"kind": "context_overflow", "message": "prompt is too long", "status": 400}}]),
        )
    };
    let run = run_case(&case("hi"), vec![overflow(), overflow()]).await;
    let TerminalReason::Error { error } = done(&run.events) else {
        panic!("expected an error");
    };
    assert_eq!(error.kind, ErrorKind::ContextOverflow);
    assert!(
        error.message.contains("after compacting"),
        "{}",
        error.message
    );
    assert_eq!(
        run.provider.requests().len(),
        2,
        "exactly one compaction retry"
    );
}

#[tokio::test]
async fn compact_circuit_breaker_trips_after_three_failures() {
    // Each turn: overflow → reactive compaction fails → surfaced. The
    // failure streak survives turns and trips the breaker on the 4th.
    let mut c = case("hi");
    c.compactor.failures = 10;
    let overflow = json!([{"error": {"kind": "context_overflow", "message": "prompt is too long", "status": 400}}]);
    let provider_scripts: Vec<_> = (0..4).map(|_| items(overflow.clone())).collect();

    let deps_run = run_case(&c, provider_scripts).await;
    let TerminalReason::Error { error } = done(&deps_run.events) else {
        panic!("expected an error");
    };
    assert!(
        error.message.contains("compaction failed"),
        "{}",
        error.message
    );
    assert_eq!(deps_run.state.recovery.compaction_failures, 1);

    // Drive more turns on the same state to reach the breaker.
    let mut state = deps_run.state;
    let provider = deps_run.provider;
    let deps = riot_core::AgentDeps {
        provider: provider.clone(),
        tools: deps_run.tools.clone(),
        compactor: deps_run.compactor.clone(),
        transcript: deps_run.transcript.clone(),
        hooks: deps_run.hooks.clone(),
        queue: std::sync::Arc::new(riot_core::NoQueue),
        clock: std::sync::Arc::new(FixedClock::new()),
        ids: std::sync::Arc::new(SequentialIds::new()),
    };
    use futures::StreamExt;
    let mut last = Vec::new();
    for turn in 0..3 {
        let prompt = Message::user_text(MessageId::new(format!("p{turn}")), "again");
        last = riot_core::run_agent(&mut state, Some(prompt), &deps, CancelScope::new())
            .collect::<Vec<_>>()
            .await;
    }
    let TerminalReason::Error { error } = done(&last) else {
        panic!("expected an error");
    };
    assert!(
        error.message.contains("failed 3 times in a row"),
        "{}",
        error.message
    );
    assert_eq!(provider.requests().len(), 4);
    assert_eq!(state.recovery.compaction_failures, 3);
}

#[tokio::test]
async fn max_output_escalates_once_then_continues() {
    let mut c = case("write the whole file");
    c.max_tokens = Some(8_000);
    let cut = |text: &str| {
        items(
            json!([{"text": text}, {"usage": {"input_tokens": 5, "output_tokens": 8000, "cache_read_tokens": 0, "cache_write_tokens": 0}}, {"stop": "max_tokens"}]),
        )
    };
    let run = run_case(
        &c,
        vec![
            cut("part one"),
            cut("part one (again)"),
            items(end_turn("part two")),
        ],
    )
    .await;
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    let requests = run.provider.requests();
    assert_eq!(
        requests.iter().map(|r| r.max_tokens).collect::<Vec<_>>(),
        vec![8_000, 32_000, 32_000],
        "escalated to the model maximum once; the continuation keeps it"
    );
    let afters: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::RequestStart { after, .. } => Some(*after),
            _ => None,
        })
        .collect();
    assert_eq!(
        afters,
        vec![
            None,
            Some(Transition::OutputLimitEscalation),
            Some(Transition::OutputLimitContinue)
        ]
    );
    // The continuation request carries the partial answer and the nudge.
    let last = requests[2].messages.last().unwrap();
    let Message::User(u) = last else { panic!() };
    assert_eq!(u.origin, MessageOrigin::Continuation);
    assert!(
        matches!(&requests[2].messages[requests[2].messages.len() - 2],
        Message::Assistant(a) if a.text() == "part one (again)")
    );
}

#[tokio::test]
async fn tool_panic_becomes_an_error_result_and_the_turn_goes_on() {
    let mut c = case("run it");
    c.tools = tools(&[("Bash", ToolSpecJson::Panic)]);
    let first = json!([{"tool_use": {"id": "toolu_a", "name": "Bash", "input": {"command": "x"}}}, {"stop": "tool_use"}]);
    let run = run_case(&c, vec![items(first), items(end_turn("ok"))]).await;
    assert_eq!(done(&run.events), &TerminalReason::Completed);
    let results = run.provider.requests()[1].messages.last().cloned().unwrap();
    let Message::User(u) = results else { panic!() };
    assert!(
        matches!(&u.content[0], UserBlock::ToolResult { is_error: true, content, .. }
        if matches!(&content[0], ToolResultContent::Text { text } if text.contains("crashed")))
    );
}

#[tokio::test]
async fn interrupt_during_parallel_fills_every_result_in_order() {
    let mut c = case("read all");
    c.tools = tools(&[
        ("Read", ToolSpecJson::Ok("ok".into())),
        ("Grep", ToolSpecJson::Hang),
    ]);
    c.cancel_on = Some("tool_started".into());
    let first = json!([
        {"tool_use": {"id": "toolu_a", "name": "Grep", "input": {"pattern": "x"}}},
        {"tool_use": {"id": "toolu_b", "name": "Read", "input": {"file_path": "b"}}},
        {"tool_use": {"id": "toolu_c", "name": "Nope", "input": {}}},
        {"stop": "tool_use"}
    ]);
    let run = run_case(&c, vec![items(first)]).await;
    assert!(matches!(
        done(&run.events),
        TerminalReason::Aborted {
            by: AbortSource::User
        }
    ));
    let results: Vec<(String, bool)> = run
        .state
        .messages
        .iter()
        .filter_map(Message::as_user)
        .flat_map(|u| u.tool_results())
        .map(|(id, err)| (id.to_string(), err))
        .collect();
    assert_eq!(
        results,
        vec![
            ("toolu_a".into(), true),
            ("toolu_b".into(), true),
            ("toolu_c".into(), true)
        ]
    );
    assert_paired(&run.state.messages);
}

#[tokio::test]
async fn a_stream_cut_before_stop_is_an_error_not_a_silent_end() {
    let cut = json!([{"text": "half an ans"}]);
    let run = run_case(&case("hi"), vec![items(cut)]).await;
    let TerminalReason::Error { error } = done(&run.events) else {
        panic!("expected an error");
    };
    assert_eq!(error.kind, ErrorKind::Network);
}

#[tokio::test]
async fn a_stop_seen_first_by_the_provider_still_ends_aborted() {
    // The person presses stop while the provider is being polled: the
    // stream notices first and ends with its `Cancelled` error before the
    // loop's own cancel check runs again. That is a stop, not a model error
    // (a multi-threaded face hits this race; CI did once).
    let mut c = case("explain");
    c.stop_when_stalled = true;
    let stalled = json!([{"text": "Partial answer"}, {"stall": null}]);
    let run = run_case(&c, vec![items(stalled)]).await;
    assert_eq!(
        done(&run.events),
        &TerminalReason::Aborted {
            by: AbortSource::User
        }
    );
    let kept: Vec<String> = run
        .state
        .messages
        .iter()
        .filter_map(Message::as_assistant)
        .map(|a| a.text())
        .collect();
    assert_eq!(kept, ["Partial answer"]);
}

#[tokio::test]
async fn running_out_of_script_is_a_non_retryable_error() {
    let run = run_case(&case("hi"), vec![]).await;
    let TerminalReason::Error { error } = done(&run.events) else {
        panic!("expected an error");
    };
    assert_eq!(error.kind, ErrorKind::InvalidRequest);
    assert_eq!(run.provider.requests().len(), 1);
}

#[tokio::test]
async fn refusal_ends_the_turn_with_refusal() {
    let refusal = json!([{"text": "I can't help with that."}, {"stop": "refusal"}]);
    let run = run_case(&case("hi"), vec![items(refusal)]).await;
    assert_eq!(done(&run.events), &TerminalReason::Refusal);
    assert_eq!(TerminalReason::Refusal.exit_code(), 1);
}

#[tokio::test]
async fn orphan_tool_uses_from_a_crash_are_answered_before_the_next_prompt() {
    // A transcript cut by kill -9 ends with an unanswered tool use.
    let c = case("continue");
    let provider_script = vec![items(end_turn("resumed"))];
    let mut run = run_case(&Case { ..c.clone() }, vec![items(end_turn("first"))]).await;
    run.state
        .messages
        .push(Message::Assistant(AssistantMessage {
            id: MessageId::new("a_crash"),
            content: vec![AssistantBlock::ToolUse {
                id: ToolUseId::new("toolu_lost"),
                name: "Bash".into(),
                input: json!({"command": "sleep 100"}),
            }],
            model: MODEL.into(),
            stop_reason: None,
            interrupted: false,
        }));
    let provider = std::sync::Arc::new(riot_core::testing::ScriptedProvider::new(provider_script));
    let deps = riot_core::AgentDeps {
        provider: provider.clone(),
        tools: run.tools.clone(),
        compactor: run.compactor.clone(),
        transcript: run.transcript.clone(),
        hooks: run.hooks.clone(),
        queue: std::sync::Arc::new(riot_core::NoQueue),
        clock: std::sync::Arc::new(FixedClock::new()),
        ids: std::sync::Arc::new(SequentialIds::new()),
    };
    use futures::StreamExt;
    let prompt = Message::user_text(MessageId::new("p2"), "continue");
    let events: Vec<_> =
        riot_core::run_agent(&mut run.state, Some(prompt), &deps, CancelScope::new())
            .collect()
            .await;
    assert_eq!(done(&events), &TerminalReason::Completed);
    let sent = &provider.requests()[0].messages;
    assert_paired(sent);
}

#[tokio::test]
async fn a_resumed_crash_sends_the_filled_result_and_the_new_prompt_as_one_user_message() {
    // The transcript of a session killed while its Bash call ran: the
    // prompt, then the assistant's tool use, and nothing after it.
    let mut run = run_case(
        &case("Run the slow command"),
        vec![items(end_turn("first"))],
    )
    .await;
    run.state.messages = vec![
        Message::user_text(MessageId::new("u_first"), "Run the slow command"),
        Message::Assistant(AssistantMessage {
            id: MessageId::new("a_crash"),
            content: vec![AssistantBlock::ToolUse {
                id: ToolUseId::new("toolu_lost"),
                name: "Bash".into(),
                input: json!({"command": "sleep 100"}),
            }],
            model: MODEL.into(),
            stop_reason: None,
            interrupted: false,
        }),
    ];
    let provider = std::sync::Arc::new(riot_core::testing::ScriptedProvider::new(vec![items(
        end_turn("resumed"),
    )]));
    let deps = riot_core::AgentDeps {
        provider: provider.clone(),
        tools: run.tools.clone(),
        compactor: run.compactor.clone(),
        transcript: run.transcript.clone(),
        hooks: run.hooks.clone(),
        queue: std::sync::Arc::new(riot_core::NoQueue),
        clock: std::sync::Arc::new(FixedClock::new()),
        ids: std::sync::Arc::new(SequentialIds::new()),
    };
    use futures::StreamExt;
    let prompt = Message::user_text(MessageId::new("p2"), "Go on");
    let events: Vec<_> =
        riot_core::run_agent(&mut run.state, Some(prompt), &deps, CancelScope::new())
            .collect()
            .await;
    assert_eq!(done(&events), &TerminalReason::Completed);

    let sent = &provider.requests()[0].messages;
    assert_paired(sent);
    let roles: Vec<&str> = sent
        .iter()
        .map(|m| match m {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::System(_) => "system",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent:#?}");
    let Message::User(merged) = &sent[2] else {
        panic!("the last message sent is not the person's");
    };
    assert_eq!(
        merged.content,
        vec![
            UserBlock::ToolResult {
                tool_use_id: ToolUseId::new("toolu_lost"),
                content: vec![ToolResultContent::text(riot_core::INTERRUPTED_RESULT)],
                is_error: true,
                ui: None,
            },
            UserBlock::Text {
                text: "Go on".into()
            },
        ]
    );
}
