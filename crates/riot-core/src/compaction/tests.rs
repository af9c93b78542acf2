use std::sync::Arc;

use futures::StreamExt;
use riot_protocol::*;
use serde_json::json;

use super::*;
use crate::testing::{
    RecordingTranscript, ScriptItem, ScriptedProvider, ScriptedTools, ToolBehavior, reply,
};
use crate::{AgentDeps, AgentState, NoQueue, NoStopHooks, run_agent};

fn tool_turn(id: &str, ids: &[&str]) -> Vec<Message> {
    let a = Message::Assistant(AssistantMessage {
        id: MessageId::new(format!("a_{id}")),
        content: ids
            .iter()
            .map(|t| AssistantBlock::ToolUse {
                id: ToolUseId::new(*t),
                name: "Read".into(),
                input: json!({"file_path": t}),
            })
            .collect(),
        model: "m".into(),
        stop_reason: None,
        interrupted: false,
    });
    let r = Message::User(UserMessage {
        id: MessageId::new(format!("r_{id}")),
        content: ids
            .iter()
            .map(|t| UserBlock::ToolResult {
                tool_use_id: ToolUseId::new(*t),
                content: vec![ToolResultContent::text(
                    format!("content of {t} ").repeat(50),
                )],
                is_error: false,
                ui: None,
            })
            .collect(),
        origin: MessageOrigin::ToolResults,
    });
    vec![a, r]
}

fn history() -> Vec<Message> {
    let mut h = vec![Message::user_text(MessageId::new("u0"), "Fix the parser")];
    h.extend(tool_turn("1", &["t1", "t2", "t3"])); // a parallel batch
    h.push(Message::Assistant(AssistantMessage {
        id: MessageId::new("a_int"),
        content: vec![AssistantBlock::Text {
            text: "I was saying".into(),
        }],
        model: "m".into(),
        stop_reason: None,
        interrupted: true,
    }));
    h.push(Message::user_text(
        MessageId::new("u1"),
        "also check the lexer",
    ));
    h.extend(tool_turn("2", &["t4"]));
    h.extend(tool_turn("3", &["t5"]));
    h
}

fn results_text(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(Message::as_user)
        .flat_map(|u| u.content.iter())
        .filter_map(|b| match b {
            UserBlock::ToolResult { content, .. } => match &content[0] {
                ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                    Some(text.clone())
                }
                ToolResultContent::Image { .. } => None,
            },
            _ => None,
        })
        .collect()
}

fn request(trigger: CompactTrigger, estimate: u64, idle_ms: u64) -> CompactRequest {
    CompactRequest {
        server_tools: Vec::new(),
        trigger,
        model: "m".into(),
        capabilities: ModelCapabilities {
            context_window: 100_000,
            max_output_tokens: 8_000,
            ..ModelCapabilities::default()
        },
        estimate,
        now_ms: 10_000_000,
        last_request_ms: Some(10_000_000 - idle_ms),
        system: SystemPrompt::stable("sys"),
        tools: vec![],
        session_key: None,
        focus: None,
    }
}

#[test]
fn clearing_keeps_the_last_three_results_and_pairing_with_parallel_and_interrupted_turns() {
    let h = history();
    let cleared = clear_old_results(&h, KEEP_RECENT_RESULTS);
    invariants::check_tool_pairing(&cleared).unwrap();
    let texts = results_text(&cleared);
    assert_eq!(texts.len(), 5);
    assert_eq!(&texts[..2], &[CLEARED_RESULT, CLEARED_RESULT]);
    assert!(texts[2].starts_with("content of t3"));
    assert!(texts[4].starts_with("content of t5"));
    assert_eq!(cleared.len(), h.len(), "no message is dropped");
}

#[test]
fn the_plan_follows_threshold_and_cache_temperature() {
    let cm = ContextManager::new(
        Arc::new(ScriptedProvider::new(vec![])),
        Arc::new(NoWorkingSet),
    );
    let h = history();
    // threshold = 100_000 - 8_000 - 12_500 (an eighth of the window) = 79_500
    let warm = 1_000;
    let cold = CACHE_COLD_AFTER_MS + 1;
    assert_eq!(
        cm.plan(&h, &request(CompactTrigger::Proactive, 50_000, warm)),
        None
    );
    assert_eq!(
        cm.plan(&h, &request(CompactTrigger::Proactive, 80_000, warm)),
        Some(CompactionStrategy::Summary),
        "warm cache: clearing would break the prefix for little gain"
    );
    assert_eq!(
        cm.plan(&h, &request(CompactTrigger::Proactive, 79_600, cold)),
        Some(CompactionStrategy::ClearToolResults),
        "cold cache and clearing frees enough"
    );
    assert_eq!(
        cm.plan(&h, &request(CompactTrigger::Proactive, 95_000, cold)),
        Some(CompactionStrategy::Summary),
        "clearing would not free enough"
    );
    assert_eq!(
        cm.plan(&h, &request(CompactTrigger::Reactive, 10, warm)),
        Some(CompactionStrategy::Summary)
    );
}

#[test]
fn the_summary_is_taken_from_its_section() {
    assert_eq!(
        extract_summary("<analysis>think</analysis>\n<summary>\n1. Intent: x\n</summary>"),
        "1. Intent: x"
    );
    assert_eq!(extract_summary("<analysis>a</analysis> plain"), "plain");
    assert_eq!(extract_summary("just text"), "just text");
}

#[derive(Debug)]
struct Files;

#[async_trait]
impl WorkingSet for Files {
    async fn restore(&self, _budget_chars: usize) -> Vec<UserBlock> {
        vec![UserBlock::Attachment {
            title: "src/parser.rs (re-read after compaction)".into(),
            text: "     1\tfn parse() {}".into(),
        }]
    }
}

fn summary_reply(text: &str) -> Vec<ScriptItem> {
    let mut items = reply::text("m", text);
    items.extend(reply::stop(StopReason::EndTurn, 500, 120));
    items
}

#[tokio::test]
async fn a_summary_replaces_history_keeps_the_users_words_and_restores_the_working_set() {
    let provider = Arc::new(ScriptedProvider::new(vec![summary_reply(
        "<analysis>long</analysis><summary>1. Intent: fix the parser</summary>",
    )]));
    let cm = ContextManager::new(provider.clone(), Arc::new(Files));
    let h = history();
    let mut req = request(CompactTrigger::Reactive, 90_000, 0);
    req.focus = Some("the lexer".into());
    let compaction = cm
        .compact(&h, &req, CompactionStrategy::Summary)
        .await
        .unwrap();
    assert_eq!(compaction.messages.len(), 1);
    let Message::User(u) = &compaction.messages[0] else {
        panic!("a user message");
    };
    assert_eq!(u.origin, MessageOrigin::Summary);
    let texts: Vec<&str> = u
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        texts[0].contains("<summary>\n1. Intent: fix the parser\n</summary>"),
        "{texts:?}"
    );
    assert!(!texts[0].contains("long"), "the analysis is dropped");
    assert_eq!(
        &texts[1..],
        &[
            "Earlier message from the user, verbatim:\nFix the parser",
            "Earlier message from the user, verbatim:\nalso check the lexer",
            CONTINUE_SUFFIX,
        ]
    );
    assert!(
        matches!(u.content.last(), Some(UserBlock::Attachment { title, .. }) if title.starts_with("src/parser.rs"))
    );
    assert_eq!(compaction.before_tokens, 90_000);
    assert!(compaction.after_tokens < 1_000);

    let sent = &provider.requests()[0];
    invariants::check_no_system_messages(&sent.messages).unwrap();
    invariants::check_tool_pairing(&sent.messages).unwrap();
    // The history ends with results: the instructions join that message,
    // after them, so user and assistant messages still alternate.
    assert!(
        sent.messages.windows(2).all(|w| matches!(
            w,
            [Message::User(_), Message::Assistant(_)] | [Message::Assistant(_), Message::User(_)]
        )),
        "{:#?}",
        sent.messages
    );
    let Message::User(last) = sent.messages.last().unwrap() else {
        panic!("instructions last");
    };
    assert_eq!(last.content.len(), 2, "{last:#?}");
    assert!(
        matches!(&last.content[0], UserBlock::ToolResult { tool_use_id, .. } if tool_use_id.as_str() == "t5"),
        "{last:#?}"
    );
    let UserBlock::Text { text } = &last.content[1] else {
        panic!()
    };
    assert!(text.contains("Do not call any tools"));
    assert!(text.ends_with("focus on: the lexer"));
}

#[tokio::test]
async fn in_a_small_window_the_summary_request_declares_no_tools_and_fits() {
    let provider = Arc::new(ScriptedProvider::new(vec![summary_reply(
        "<summary>1. Intent: fix the parser</summary>",
    )]));
    let cm = ContextManager::new(provider.clone(), Arc::new(NoWorkingSet));
    let mut h = history();
    for i in 6..300 {
        h.extend(tool_turn(&i.to_string(), &[&format!("t{i}")]));
    }
    let mut req = request(CompactTrigger::Proactive, 7_000, 0);
    req.capabilities = ModelCapabilities {
        context_window: 8_192,
        max_output_tokens: 8_192,
        ..ModelCapabilities::default()
    };
    req.tools = vec![ToolSpec {
        name: "Read".into(),
        description: "Reads".into(),
        input_schema: json!({"type": "object"}),
    }];
    cm.compact(&h, &req, CompactionStrategy::Summary)
        .await
        .unwrap();
    let sent = &provider.requests()[0];
    assert!(sent.tools.is_empty(), "no declarations for the summariser");
    assert_eq!(sent.max_tokens, 2_048, "a quarter of the window");
    let [Message::User(ask)] = sent.messages.as_slice() else {
        panic!("one user message: {:#?}", sent.messages);
    };
    let [UserBlock::Text { text }] = ask.content.as_slice() else {
        panic!("text only: {ask:#?}");
    };
    assert!(
        text.starts_with("The conversation so far, written out"),
        "{text}"
    );
    assert!(
        text.contains("[user]\nFix the parser"),
        "the task stays: {text}"
    );
    assert!(
        text.contains("older entries left out to fit the context window"),
        "{text}"
    );
    assert!(text.contains("[assistant called Read]"), "{text}");
    assert!(
        text.contains("content of t299"),
        "the latest result stays: {text}"
    );
    assert!(
        !text.contains("content of t296"),
        "older results are cleared: {text}"
    );
    assert!(text.contains("Do not call any tools"));
    let tokens = (sent.system.stable.len() + text.len()).div_ceil(4) as u64;
    assert!(
        tokens + u64::from(sent.max_tokens) <= 8_192,
        "{tokens} tokens of input"
    );

    // A large window shares the normal requests' prefix, tools and all.
    let provider = Arc::new(ScriptedProvider::new(vec![summary_reply(
        "<summary>S</summary>",
    )]));
    let cm = ContextManager::new(provider.clone(), Arc::new(NoWorkingSet));
    let mut req = request(CompactTrigger::Proactive, 80_000, 0);
    req.tools = vec![ToolSpec {
        name: "Read".into(),
        description: "Reads".into(),
        input_schema: json!({"type": "object"}),
    }];
    cm.compact(&history(), &req, CompactionStrategy::Summary)
        .await
        .unwrap();
    assert_eq!(provider.requests()[0].tools.len(), 1);
}

#[tokio::test]
async fn a_summary_request_that_overflows_is_retried_over_less_history() {
    let overflow = vec![ScriptItem::Error(ProviderError::new(
        ProviderErrorKind::ContextOverflow,
        "prompt is too long",
    ))];
    let provider = Arc::new(ScriptedProvider::new(vec![
        overflow,
        summary_reply("<summary>S</summary>"),
    ]));
    let cm = ContextManager::new(provider.clone(), Arc::new(NoWorkingSet));
    let h = history();
    let compaction = cm
        .compact(
            &h,
            &request(CompactTrigger::Reactive, 1, 0),
            CompactionStrategy::Summary,
        )
        .await
        .unwrap();
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].messages.len() < requests[0].messages.len());
    invariants::check_tool_pairing(&requests[1].messages).unwrap();
    // The user's words survive even from the part that was not summarized.
    assert_eq!(
        super::persons_words(&compaction.messages),
        vec!["Fix the parser", "also check the lexer"]
    );
}

#[tokio::test]
async fn a_second_summary_still_carries_the_persons_first_words() {
    let provider = Arc::new(ScriptedProvider::new(vec![
        summary_reply("<summary>first</summary>"),
        summary_reply("<summary>second</summary>"),
    ]));
    let cm = ContextManager::new(provider, Arc::new(NoWorkingSet));
    let reactive = request(CompactTrigger::Reactive, 1, 0);
    let once = cm
        .compact(&history(), &reactive, CompactionStrategy::Summary)
        .await
        .unwrap();
    let mut later = once.messages.clone();
    later.push(Message::user_text(MessageId::new("u9"), "and the docs"));
    let twice = cm
        .compact(&later, &reactive, CompactionStrategy::Summary)
        .await
        .unwrap();
    assert_eq!(
        super::persons_words(&twice.messages),
        vec!["Fix the parser", "also check the lexer", "and the docs"]
    );
}

#[tokio::test]
async fn a_failed_summary_is_an_error_not_an_empty_history() {
    let provider = Arc::new(ScriptedProvider::new(vec![vec![ScriptItem::Error(
        ProviderError::new(ProviderErrorKind::Overloaded, "overloaded"),
    )]]));
    let cm = ContextManager::new(provider, Arc::new(NoWorkingSet));
    let err = cm
        .compact(
            &history(),
            &request(CompactTrigger::Reactive, 1, 0),
            CompactionStrategy::Summary,
        )
        .await
        .unwrap_err();
    assert!(err.0.contains("overloaded"), "{err}");
}

/// The loop compacts proactively when the estimate passes the threshold:
/// Compacting, the summary side request, Compacted, then the next request
/// carries the summary — and the final answer arrives.
#[tokio::test]
async fn the_loop_compacts_proactively_at_the_threshold() {
    let caps = ModelCapabilities {
        context_window: 100_000,
        max_output_tokens: 8_000,
        ..ModelCapabilities::default()
    };
    let mut first = reply::tool_use("t1", "Read", json!({"file_path": "a"}));
    first.extend(reply::stop(StopReason::ToolUse, 85_000, 100));
    let mut last = reply::text("m", "Done.");
    last.extend(reply::stop(StopReason::EndTurn, 2_000, 10));
    let provider = Arc::new(
        ScriptedProvider::new(vec![first, summary_reply("<summary>S</summary>"), last])
            .with_capabilities(caps),
    );
    let cm = Arc::new(ContextManager::new(provider.clone(), Arc::new(Files)));
    let transcript = Arc::new(RecordingTranscript::default());
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: Arc::new(ScriptedTools::new(
            [("Read".to_owned(), ToolBehavior::Ok("x".into()))].into(),
        )),
        compactor: cm.clone(),
        transcript: transcript.clone(),
        hooks: Arc::new(NoStopHooks),
        queue: Arc::new(NoQueue),
        clock: Arc::new(FixedClock::new()),
        ids: Arc::new(SequentialIds::new()),
    };
    let mut state = AgentState::new(SessionId::new("s"), "m", SystemPrompt::stable("sys"));
    let prompt = Message::user_text(MessageId::new("p"), "read a");
    let events: Vec<AgentEvent> = run_agent(&mut state, Some(prompt), &deps, CancelScope::new())
        .collect()
        .await;
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Compacting { .. } => Some("compacting"),
            AgentEvent::Compacted { .. } => Some("compacted"),
            AgentEvent::RequestStart { .. } => Some("request"),
            AgentEvent::Done { .. } => Some("done"),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        vec!["request", "request", "compacting", "compacted", "done"]
    );
    assert!(matches!(
        events.iter().find(|e| matches!(e, AgentEvent::Compacted { .. })),
        Some(AgentEvent::Compacted { strategy: CompactionStrategy::Summary, before, .. }) if *before > 85_000
    ));
    let requests = provider.requests();
    assert_eq!(requests.len(), 3, "main, summary, main");
    let after = &requests[2].messages;
    assert_eq!(after.len(), 1);
    assert!(matches!(&after[0], Message::User(u) if u.origin == MessageOrigin::Summary));
    // Resume loads the compacted history, not the whole past.
    assert_eq!(transcript.replay(), state.messages);
    assert_eq!(state.messages[0], after[0]);
}

/// `/compact [focus]`: a summary between turns, focused when asked, with
/// the same events as automatic compaction and pairing kept.
#[tokio::test]
async fn manual_compaction_summarizes_with_the_focus() {
    let provider = Arc::new(ScriptedProvider::new(vec![summary_reply(
        "<summary>focused</summary>",
    )]));
    let cm = Arc::new(ContextManager::new(
        provider.clone(),
        Arc::new(NoWorkingSet),
    ));
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: Arc::new(ScriptedTools::new(Default::default())),
        compactor: cm,
        transcript: Arc::new(RecordingTranscript::default()),
        hooks: Arc::new(NoStopHooks),
        queue: Arc::new(NoQueue),
        clock: Arc::new(FixedClock::new()),
        ids: Arc::new(SequentialIds::new()),
    };
    let mut state = AgentState::new(SessionId::new("s"), "m", SystemPrompt::stable("sys"));
    state.messages = history();
    let events = crate::compact_now(&mut state, &deps, Some("the lexer".into()))
        .await
        .unwrap();
    assert!(matches!(
        events.as_slice(),
        [
            AgentEvent::Compacting {
                strategy: CompactionStrategy::Summary
            },
            AgentEvent::Compacted {
                strategy: CompactionStrategy::Summary,
                ..
            }
        ]
    ));
    assert_eq!(state.messages.len(), 1);
    let sent = &provider.requests()[0];
    let Message::User(last) = sent.messages.last().unwrap() else {
        panic!()
    };
    assert!(
        matches!(last.content.last(), Some(UserBlock::Text { text }) if text.ends_with("focus on: the lexer"))
    );
}
