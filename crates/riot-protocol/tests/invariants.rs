//! Each shared invariant accepts a valid history and names the broken rule
//! in an invalid one; `enforce` panics in debug builds (where tests run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

use riot_protocol::invariants::*;
use riot_protocol::*;
use serde_json::json;

fn assistant(id: &str, tool_ids: &[&str]) -> Message {
    let mut content = vec![AssistantBlock::Text {
        text: "working".into(),
    }];
    content.extend(tool_ids.iter().map(|t| AssistantBlock::ToolUse {
        id: ToolUseId::new(*t),
        name: "Read".into(),
        input: json!({"file_path": "a"}),
    }));
    Message::Assistant(AssistantMessage {
        id: MessageId::new(id),
        content,
        model: "m".into(),
        stop_reason: None,
        interrupted: false,
    })
}

fn result(id: &str) -> UserBlock {
    UserBlock::ToolResult {
        tool_use_id: ToolUseId::new(id),
        content: vec![ToolResultContent::text("ok")],
        is_error: false,
        ui: None,
    }
}

fn user(id: &str, content: Vec<UserBlock>) -> Message {
    Message::User(UserMessage {
        id: MessageId::new(id),
        content,
        origin: MessageOrigin::ToolResults,
    })
}

fn text(t: &str) -> UserBlock {
    UserBlock::Text { text: t.into() }
}

#[test]
fn pairing_accepts_results_first_then_queued_text() {
    let history = vec![
        Message::user_text(MessageId::new("u0"), "go"),
        assistant("a1", &["t1", "t2"]),
        user("u1", vec![result("t1"), result("t2"), text("also check b")]),
        assistant("a2", &[]),
    ];
    assert_eq!(check_tool_pairing(&history), Ok(()));
}

#[test]
fn pairing_names_each_kind_of_break() {
    let missing = vec![
        assistant("a1", &["t1", "t2"]),
        user("u1", vec![result("t1")]),
    ];
    let v = check_tool_pairing(&missing).unwrap_err();
    assert_eq!(v.id, "INV-1");
    assert!(v.detail.contains("t2 has no tool_result"), "{v}");

    let orphan = vec![assistant("a1", &[]), user("u1", vec![result("t9")])];
    assert!(
        check_tool_pairing(&orphan)
            .unwrap_err()
            .detail
            .contains("orphan")
    );

    let text_first = vec![
        assistant("a1", &["t1"]),
        user("u1", vec![text("hi"), result("t1")]),
    ];
    assert_eq!(check_tool_pairing(&text_first).unwrap_err().id, "INV-2");

    let twice = vec![
        assistant("a1", &["t1"]),
        user("u1", vec![result("t1"), result("t1")]),
    ];
    assert!(
        check_tool_pairing(&twice)
            .unwrap_err()
            .detail
            .contains("second")
    );

    let open = vec![assistant("a1", &["t1"])];
    assert_eq!(check_tool_pairing(&open).unwrap_err().id, "INV-1");
    assert_eq!(check_tool_pairing_open_tail(&open), Ok(()));
}

#[test]
fn system_messages_are_flagged_for_requests_but_skipped_by_pairing() {
    let note = Message::System(SystemMessage {
        id: MessageId::new("s1"),
        text: "note".into(),
        level: SystemLevel::Info,
    });
    let history = vec![
        assistant("a1", &["t1"]),
        note,
        user("u1", vec![result("t1")]),
    ];
    assert_eq!(check_tool_pairing(&history), Ok(()));
    assert_eq!(check_no_system_messages(&history).unwrap_err().id, "INV-7");
}

#[test]
fn breakpoint_budget() {
    assert_eq!(check_cache_breakpoints(1, 4), Ok(()));
    assert_eq!(check_cache_breakpoints(2, 3).unwrap_err().id, "INV-8");
    assert_eq!(check_cache_breakpoints(1, 5).unwrap_err().id, "INV-8");
}

#[test]
fn thinking_from_another_model_is_flagged() {
    let history = vec![Message::Assistant(AssistantMessage {
        id: MessageId::new("a1"),
        content: vec![AssistantBlock::Thinking {
            text: "t".into(),
            signature: Some("sig".into()),
            model: "model-a".into(),
            item_id: None,
        }],
        model: "model-a".into(),
        stop_reason: None,
        interrupted: false,
    })];
    assert_eq!(check_thinking_model(&history, "model-a"), Ok(()));
    assert_eq!(
        check_thinking_model(&history, "model-b").unwrap_err().id,
        "INV-9"
    );
}

#[test]
#[should_panic(expected = "invariant violated: INV-1")]
fn enforce_panics_in_debug_builds() {
    enforce(check_tool_pairing(&[assistant("a1", &["t1"])]));
}

#[test]
fn a_parallel_batch_with_an_unsafe_call_is_flagged() {
    assert_eq!(check_parallel_batch(&[true, true, true]), Ok(()));
    assert_eq!(
        check_parallel_batch(&[false]),
        Ok(()),
        "a batch of one may hold anything"
    );
    let v = check_parallel_batch(&[true, false, true]).unwrap_err();
    assert_eq!(v.id, "INV-3");
    assert!(v.detail.contains("call 1 of a parallel batch of 3"), "{v}");
}

#[test]
#[should_panic(expected = "invariant violated: INV-3")]
fn enforce_panics_on_an_unsafe_parallel_batch() {
    enforce(check_parallel_batch(&[true, false]));
}
