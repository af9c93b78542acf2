use riot_protocol::{
    AbortSource, AgentError, AssistantMessage, ErrorKind, MessageId, ToolUseId, UserMessage,
};
use serde_json::json;

use super::*;

#[test]
fn tool_names_map_to_acp_kinds() {
    for (name, kind) in [
        ("Read", ToolKind::Read),
        ("Edit", ToolKind::Edit),
        ("Write", ToolKind::Edit),
        ("Bash", ToolKind::Execute),
        ("Grep", ToolKind::Search),
        ("Glob", ToolKind::Search),
        ("WebFetch", ToolKind::Fetch),
        ("mcp__github__create_issue", ToolKind::Other),
    ] {
        assert_eq!(tool_kind(name), kind, "{name}");
    }
}

#[test]
fn terminal_reasons_become_stop_reasons_or_an_error() {
    let error = |kind| TerminalReason::Error {
        error: AgentError {
            kind,
            message: "x".into(),
        },
    };
    assert_eq!(
        stop_reason(&TerminalReason::Completed),
        Some(StopReason::EndTurn)
    );
    assert_eq!(
        stop_reason(&TerminalReason::Aborted {
            by: AbortSource::User
        }),
        Some(StopReason::Cancelled)
    );
    assert_eq!(
        stop_reason(&TerminalReason::MaxTurns),
        Some(StopReason::MaxTurnRequests)
    );
    assert_eq!(
        stop_reason(&TerminalReason::Refusal),
        Some(StopReason::Refusal)
    );
    assert_eq!(
        stop_reason(&error(ErrorKind::OutputLimit)),
        Some(StopReason::MaxTokens)
    );
    assert_eq!(stop_reason(&error(ErrorKind::Auth)), None);
}

#[test]
fn chosen_options_map_to_outcomes_and_unknown_ones_reject() {
    let rule = Some("Write(out.txt)");
    assert_eq!(
        chosen_outcome(ALLOW_ONCE, rule),
        PermissionOutcome::AllowOnce
    );
    assert_eq!(
        chosen_outcome(ALLOW_ALWAYS, rule),
        PermissionOutcome::AllowAlways {
            rule: "Write(out.txt)".into()
        }
    );
    assert_eq!(
        chosen_outcome(REJECT_ALWAYS, rule),
        PermissionOutcome::RejectAlways {
            rule: "Write(out.txt)".into()
        }
    );
    assert_eq!(
        chosen_outcome(REJECT_ONCE, rule),
        PermissionOutcome::RejectOnce { feedback: None }
    );
    assert!(!chosen_outcome("yes-please", rule).is_allowed());
    // Without a suggested rule, "always" options are neither offered nor
    // honoured as always.
    assert_eq!(permission_options(None).len(), 2);
    assert_eq!(permission_options(rule).len(), 4);
    assert_eq!(
        chosen_outcome(ALLOW_ALWAYS, None),
        PermissionOutcome::AllowOnce
    );
}

#[test]
fn modes_offer_the_six_choosable_permission_modes() {
    let state = serde_json::to_value(mode_state(PermissionMode::Default)).unwrap();
    assert_eq!(state["currentModeId"], "default");
    let ids: Vec<&str> = state["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "default",
            "accept-edits",
            "plan",
            "auto",
            "bypass",
            "dont-ask"
        ]
    );
    assert_eq!(
        offered_mode("accept-edits"),
        Some(PermissionMode::AcceptEdits)
    );
    assert_eq!(offered_mode("auto"), Some(PermissionMode::Auto));
    assert_eq!(offered_mode("unattended"), None);
    // A session already in unattended mode lists it too.
    let unattended = serde_json::to_value(mode_state(PermissionMode::Unattended)).unwrap();
    assert_eq!(unattended["availableModes"].as_array().unwrap().len(), 7);
}

#[test]
fn prompt_text_joins_text_and_mentions_resource_links() {
    let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": "Explain"},
        {"type": "resource_link", "name": "main.rs", "uri": "file:///p/src/main.rs"}
    ]))
    .unwrap();
    assert_eq!(
        prompt_text(&blocks).unwrap(),
        ("Explain\n@/p/src/main.rs".to_owned(), vec![])
    );
    let image: Vec<ContentBlock> = serde_json::from_value(json!([
        {"type": "text", "text": "What is this?"},
        {"type": "image", "mimeType": "image/png", "data": "AAAA"}
    ]))
    .unwrap();
    assert_eq!(
        prompt_text(&image).unwrap(),
        (
            "What is this?".to_owned(),
            vec![ImageSource {
                media_type: "image/png".into(),
                data: "AAAA".into()
            }]
        )
    );
    let audio: Vec<ContentBlock> = serde_json::from_value(json!([
        {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}
    ]))
    .unwrap();
    assert_eq!(
        prompt_text(&audio).unwrap_err().to_string(),
        "audio is not supported in prompts"
    );
}

fn assistant(content: Vec<AssistantBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        id: MessageId::new("m1"),
        content,
        model: "m".into(),
        stop_reason: None,
        interrupted: false,
    })
}

#[test]
fn a_replayed_conversation_becomes_chunks_and_one_announced_tool_call() {
    let mut calls = ToolCalls::new(PathBuf::from("/p"));
    let messages = [
        Message::user_text(MessageId::new("u1"), "Read a"),
        assistant(vec![
            AssistantBlock::Text {
                text: "Reading.".into(),
            },
            AssistantBlock::ToolUse {
                id: ToolUseId::new("call_1"),
                name: "Read".into(),
                input: json!({"file_path": "a"}),
            },
        ]),
        Message::User(UserMessage {
            id: MessageId::new("u2"),
            content: vec![UserBlock::ToolResult {
                tool_use_id: ToolUseId::new("call_1"),
                content: vec![ToolResultContent::text("     1\thi")],
                is_error: false,
                ui: Some(ToolResultUi {
                    describe: "Read a".into(),
                    payload: Some(UiPayload::FileRead {
                        path: "a".into(),
                        start_line: 1,
                        lines: 1,
                        total_lines: 1,
                        truncated: false,
                    }),
                    duration_ms: 1,
                }),
            }],
            origin: MessageOrigin::ToolResults,
        }),
    ];
    let updates: Vec<Value> = messages
        .iter()
        .flat_map(|m| calls.message_updates(m, true))
        .map(|u| serde_json::to_value(u).unwrap())
        .collect();
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update"
        ]
    );
    assert_eq!(updates[2]["kind"], "read");
    assert_eq!(updates[3]["status"], "completed");
    assert_eq!(updates[3]["content"][0]["content"]["text"], "     1\thi");
    assert_eq!(updates[3]["rawOutput"]["type"], "file_read");
    assert_eq!(updates[3]["locations"][0]["path"], "/p/a");
}

#[test]
fn todo_write_becomes_a_plan_with_every_entry() {
    let payload = UiPayload::Todos {
        todos: vec![
            riot_protocol::Todo {
                content: "Read the notes".into(),
                status: TodoStatus::Completed,
                active_form: None,
            },
            riot_protocol::Todo {
                content: "Summarize".into(),
                status: TodoStatus::InProgress,
                active_form: Some("Summarizing".into()),
            },
        ],
    };
    let update = serde_json::to_value(plan(&payload).unwrap()).unwrap();
    assert_eq!(update["sessionUpdate"], "plan");
    let entries: Vec<(&str, &str)> = update["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("Read the notes", "completed"),
            ("Summarize", "in_progress")
        ]
    );
    assert!(plan(&UiPayload::Text { text: "x".into() }).is_none());
}

#[test]
fn an_edit_becomes_diff_content_of_the_changed_region() {
    use riot_protocol::{DiffHunk, DiffLine};
    let line = |kind, text: &str| DiffLine {
        kind,
        text: text.into(),
    };
    let edit = UiPayload::FileDiff {
        path: "/p/a.rs".into(),
        created: false,
        hunks: vec![DiffHunk {
            old_start: 1,
            old_lines: 2,
            new_start: 1,
            new_lines: 2,
            lines: vec![
                line(DiffLineKind::Context, "fn main() {"),
                line(DiffLineKind::Removed, "    old();"),
                line(DiffLineKind::Added, "    new();"),
            ],
        }],
    };
    let diff = serde_json::to_value(diff_content(&edit, Path::new("/elsewhere")).unwrap()).unwrap();
    assert_eq!(
        diff,
        json!({"type": "diff", "path": "/p/a.rs",
               "oldText": "fn main() {\n    old();\n", "newText": "fn main() {\n    new();\n"})
    );
    assert!(diff_content(&UiPayload::Text { text: "x".into() }, Path::new("/p")).is_none());
}

#[test]
fn a_questions_preview_becomes_diff_content_at_the_resolved_path() {
    use riot_protocol::{DecisionReason, DiffHunk, DiffLine};
    let mut detail = PermissionRequestDetail {
        tool_use_id: ToolUseId::new("t1"),
        tool_name: "Write".into(),
        describe: "Write new.txt".into(),
        input: json!({"file_path": "new.txt", "content": "one\ntwo\n"}),
        path: Some("/real/project/new.txt".into()),
        command: None,
        reason: DecisionReason::Consent {
            detail: "writes need approval".into(),
        },
        message: "Allow?".into(),
        suggested_rule: None,
        preview: Some(UiPayload::FileDiff {
            path: "new.txt".into(),
            created: true,
            hunks: vec![DiffHunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: 2,
                lines: ["one", "two"]
                    .map(|text| DiffLine {
                        kind: DiffLineKind::Added,
                        text: text.into(),
                    })
                    .to_vec(),
            }],
        }),
    };
    let diff = serde_json::to_value(question_diff(&detail).unwrap()).unwrap();
    assert_eq!(
        diff,
        json!({"type": "diff", "path": "/real/project/new.txt", "newText": "one\ntwo\n"}),
        "a new file has no old text"
    );
    detail.preview = None;
    assert!(question_diff(&detail).is_none());
}

#[test]
fn timestamps_are_rfc3339_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20Z");
}

#[test]
fn an_image_a_tool_read_is_shown_with_the_call() {
    let content = [
        ToolResultContent::text("Image shot.png (64x48 px)."),
        ToolResultContent::Image {
            source: riot_protocol::ImageSource {
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            },
        },
    ];
    let fields = tool_finished(&content, false, None, Path::new("/p"));
    let value = serde_json::to_value(&fields).unwrap();
    assert_eq!(
        value["content"],
        json!([
            {"type": "content", "content": {"type": "text", "text": "Image shot.png (64x48 px)."}},
            {"type": "content", "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}}
        ])
    );
}

#[test]
fn the_pages_of_a_pdf_a_tool_read_are_shown_as_their_text() {
    let content = [
        ToolResultContent::text("doc.pdf: page 2 of 5 (PDF text).\n"),
        ToolResultContent::pdf("JVBERi0xLjU=", 1, "--- Page 2 ---\nIntroduction\n"),
    ];
    let fields = tool_finished(&content, false, None, Path::new("/p"));
    let value = serde_json::to_value(&fields).unwrap();
    assert_eq!(
        value["content"],
        json!([
            {"type": "content", "content": {"type": "text", "text": "doc.pdf: page 2 of 5 (PDF text).\n"}},
            {"type": "content", "content": {"type": "text", "text": "--- Page 2 ---\nIntroduction\n"}}
        ])
    );
}

#[test]
fn a_replayed_prompt_shows_only_what_the_person_typed() {
    let mut calls = ToolCalls::new(PathBuf::from("/p"));
    let prompt = Message::User(UserMessage {
        id: MessageId::new("u1"),
        content: vec![
            UserBlock::Text {
                text: "what did it find?".into(),
            },
            UserBlock::Text {
                text: "The person typed into terminal `py` since you last read it: 6*7<Enter>."
                    .into(),
            },
            UserBlock::Text {
                text: "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">…"
                    .into(),
            },
        ],
        origin: MessageOrigin::Person,
    });
    let updates: Vec<Value> = calls
        .message_updates(&prompt, true)
        .into_iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect();
    assert_eq!(updates.len(), 1, "{updates:#?}");
    assert_eq!(updates[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(updates[0]["content"]["text"], "what did it find?");
}

#[test]
fn a_provider_search_shows_as_a_finished_web_search_call_live_and_replayed() {
    let search = AssistantBlock::WebSearch {
        id: "srvtoolu_1".into(),
        query: "riot agent".into(),
        results: vec![riot_protocol::WebResult {
            title: "Riot".into(),
            url: "https://riot.example/".into(),
            snippet: String::new(),
        }],
        error: None,
        replay: vec![json!({"type": "server_tool_use"})],
    };
    let message = assistant(vec![
        search,
        AssistantBlock::Text {
            text: "Riot is an agent.".into(),
        },
    ]);
    for replay in [false, true] {
        let mut calls = ToolCalls::new(PathBuf::from("/p"));
        let updates: Vec<Value> = calls
            .message_updates(&message, replay)
            .into_iter()
            .map(|u| serde_json::to_value(u).unwrap())
            .collect();
        let kinds: Vec<&str> = updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap())
            .collect();
        // Live, the text streamed as deltas already; replayed, it follows.
        let expected = if replay {
            vec!["tool_call", "tool_call_update", "agent_message_chunk"]
        } else {
            vec!["tool_call", "tool_call_update"]
        };
        assert_eq!(kinds, expected, "{updates:#?}");
        assert_eq!(updates[0]["toolCallId"], "srvtoolu_1");
        assert_eq!(updates[0]["title"], "Search the web for \"riot agent\"");
        assert_eq!(updates[0]["kind"], "search");
        assert_eq!(updates[0]["rawInput"], json!({"query": "riot agent"}));
        assert_eq!(updates[1]["status"], "completed");
        assert_eq!(
            updates[1]["content"][0]["content"]["text"],
            "Web search results for \"riot agent\":\n\n1. Riot\n   https://riot.example/\n"
        );
        assert_eq!(
            updates[1]["rawOutput"],
            json!({"type": "web_results", "query": "riot agent",
                   "results": [{"title": "Riot", "url": "https://riot.example/", "snippet": ""}]})
        );
    }
}
