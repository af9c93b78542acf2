//! The one request builder (docs/design.md §11): `AgentState` → a
//! provider-neutral `ModelRequest`. Retries change the [`RetryContext`] and
//! call it again; there is no second builder.

use riot_protocol::{
    AssistantBlock, AssistantMessage, CacheHints, Message, ModelRequest, UserBlock, UserMessage,
};

use crate::state::AgentState;

/// What a retry changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetryContext {
    /// A raised output limit (output-limit escalation).
    pub max_tokens: Option<u32>,
}

/// Builds the request for the current state.
///
/// - `System` messages are dropped (INV-7).
/// - The `ui` meta of tool results is stripped: no provider request carries it.
/// - Thinking blocks from another model are dropped, not just unsigned
///   (Anthropic rejects unsigned thinking); thinking is turned off when the
///   last assistant tool-use turn has no thinking block of this model.
/// - Empty text blocks, then messages left with no content, are dropped.
/// - Consecutive user messages become one (tool results first, then the rest, each in order).
pub fn build_request(state: &AgentState, retry: &RetryContext) -> ModelRequest {
    let model = state.model.clone();
    let messages = strip_for_request(&state.messages, &model);
    let thinking = state
        .thinking
        .filter(|_| last_tool_turn_has_own_thinking(&messages, &model));
    ModelRequest {
        model,
        system: state.system.clone(),
        messages,
        tools: state.tools.clone(),
        server_tools: state.server_tools.clone(),
        max_tokens: retry.max_tokens.unwrap_or(state.max_tokens),
        thinking,
        cache: CacheHints {
            session_key: state.cache_key.clone(),
            message_breakpoint: true,
            long_ttl: false,
        },
        stream: true,
    }
}

/// The history as a provider may see it: no `System` messages, no `ui`
/// meta, no thinking from another model, no empty text or empty messages,
/// and user and assistant messages alternating (user runs merged).
pub(crate) fn strip_for_request(messages: &[Message], model: &str) -> Vec<Message> {
    merge_user_runs(messages.iter().filter_map(|m| match m {
        Message::System(_) => None,
        Message::User(u) => strip_ui(u),
        Message::Assistant(a) => own_thinking_only(a, model),
    }))
}

/// Merges each run of consecutive user messages into one, so that roles
/// alternate as strict endpoints require. Such runs are ordinary in Riot's
/// history: results synthesized for tool calls cut by a crash or a cancel,
/// then the next prompt; a turn that failed after its tool results, then
/// the next prompt; a summary request after the last results. The merged
/// message keeps the first one's id and origin and holds every
/// `tool_result` block first (they must open the message that follows a
/// tool use), then the other blocks, each kind in its original order.
pub(crate) fn merge_user_runs(messages: impl IntoIterator<Item = Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for message in messages {
        match (out.last_mut(), message) {
            (Some(Message::User(run)), Message::User(next)) => {
                let (mut results, others): (Vec<UserBlock>, Vec<UserBlock>) = run
                    .content
                    .drain(..)
                    .chain(next.content)
                    .partition(|b| matches!(b, UserBlock::ToolResult { .. }));
                results.extend(others);
                run.content = results;
            }
            (_, message) => out.push(message),
        }
    }
    out
}

fn strip_ui(user: &UserMessage) -> Option<Message> {
    let content: Vec<UserBlock> = user
        .content
        .iter()
        .filter(|b| !matches!(b, UserBlock::Text { text } if text.is_empty()))
        .map(|b| match b {
            UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ui: _,
            } => UserBlock::ToolResult {
                tool_use_id: tool_use_id.clone(),
                content: content.clone(),
                is_error: *is_error,
                ui: None,
            },
            other => other.clone(),
        })
        .collect();
    (!content.is_empty()).then(|| {
        Message::User(UserMessage {
            id: user.id.clone(),
            content,
            origin: user.origin,
        })
    })
}

fn own_thinking_only(assistant: &AssistantMessage, model: &str) -> Option<Message> {
    let content: Vec<AssistantBlock> = assistant
        .content
        .iter()
        .filter(|b| match b {
            AssistantBlock::Thinking { model: from, .. }
            | AssistantBlock::RedactedThinking { model: from, .. } => from == model,
            AssistantBlock::Text { text } => !text.is_empty(),
            AssistantBlock::ToolUse { .. } | AssistantBlock::WebSearch { .. } => true,
        })
        .cloned()
        .collect();
    (!content.is_empty()).then(|| {
        Message::Assistant(AssistantMessage {
            content,
            ..assistant.clone()
        })
    })
}

/// Whether the turn in progress (the tool calls since the person's last
/// prompt) started with this model's thinking, or has no tool call yet.
/// Turns before the last prompt do not count: thinking switched on later
/// in a session takes effect from the next prompt.
fn last_tool_turn_has_own_thinking(messages: &[Message], model: &str) -> bool {
    for message in messages.iter().rev() {
        match message {
            Message::User(u) if u.tool_results().next().is_none() => return true,
            Message::Assistant(a) if a.has_tool_use() => {
                return a.content.iter().any(|b| {
                    matches!(b, AssistantBlock::Thinking { model: from, .. } if from == model)
                        || matches!(b, AssistantBlock::RedactedThinking { model: from, .. } if from == model)
                });
            }
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use riot_protocol::*;
    use serde_json::json;

    use super::*;

    fn state() -> AgentState {
        let mut s = AgentState::new(SessionId::new("s"), "model-b", SystemPrompt::stable("sys"));
        s.thinking = Some(ThinkingConfig {
            budget_tokens: 1024,
        });
        s
    }

    fn tool_turn(model: &str, with_thinking: bool) -> Message {
        let mut content = Vec::new();
        if with_thinking {
            content.push(AssistantBlock::Thinking {
                text: "t".into(),
                signature: Some("sig".into()),
                model: model.into(),
                item_id: None,
            });
        }
        content.push(AssistantBlock::ToolUse {
            id: ToolUseId::new("t1"),
            name: "Read".into(),
            input: json!({}),
        });
        Message::Assistant(AssistantMessage {
            id: MessageId::new("a1"),
            content,
            model: model.into(),
            stop_reason: None,
            interrupted: false,
        })
    }

    fn results() -> Message {
        Message::User(UserMessage {
            id: MessageId::new("u1"),
            content: vec![UserBlock::ToolResult {
                tool_use_id: ToolUseId::new("t1"),
                content: vec![ToolResultContent::text("ok")],
                is_error: false,
                ui: Some(ToolResultUi {
                    describe: "Read a".into(),
                    payload: None,
                    duration_ms: 1,
                }),
            }],
            origin: MessageOrigin::ToolResults,
        })
    }

    #[test]
    fn system_notes_and_ui_meta_never_reach_the_request() {
        let mut s = state();
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "go"),
            Message::System(SystemMessage {
                id: MessageId::new("n"),
                text: "note".into(),
                level: SystemLevel::Info,
            }),
            tool_turn("model-b", true),
            results(),
        ];
        let req = build_request(&s, &RetryContext::default());
        assert_eq!(req.messages.len(), 3);
        assert_eq!(invariants::check_no_system_messages(&req.messages), Ok(()));
        let text = serde_json::to_string(&req).unwrap();
        assert!(!text.contains("\"ui\""), "{text}");
        assert_eq!(req.thinking.map(|t| t.budget_tokens), Some(1024));
    }

    #[test]
    fn a_model_switch_drops_foreign_thinking_and_turns_thinking_off() {
        let mut s = state();
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "go"),
            tool_turn("model-a", true),
            results(),
        ];
        let req = build_request(&s, &RetryContext::default());
        let Message::Assistant(a) = &req.messages[1] else {
            panic!("assistant expected");
        };
        assert!(
            a.content
                .iter()
                .all(|b| !matches!(b, AssistantBlock::Thinking { .. }))
        );
        assert_eq!(
            invariants::check_thinking_model(&req.messages, "model-b"),
            Ok(())
        );
        assert_eq!(
            req.thinking, None,
            "no own thinking block in the last tool turn"
        );
    }

    #[test]
    fn thinking_turned_on_later_applies_from_the_next_prompt() {
        let mut s = state();
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "go"),
            tool_turn("model-b", false),
            results(),
        ];
        // Mid-turn, a tool turn without thinking keeps it off.
        assert_eq!(build_request(&s, &RetryContext::default()).thinking, None);
        // Once the turn has ended and the person prompts again, that old
        // tool turn no longer counts.
        s.messages.push(Message::Assistant(AssistantMessage {
            id: MessageId::new("a2"),
            content: vec![AssistantBlock::Text {
                text: "done".into(),
            }],
            model: "model-b".into(),
            stop_reason: None,
            interrupted: false,
        }));
        s.messages
            .push(Message::user_text(MessageId::new("u2"), "and now think"));
        assert_eq!(
            build_request(&s, &RetryContext::default())
                .thinking
                .map(|t| t.budget_tokens),
            Some(1024)
        );
    }

    fn roles(messages: &[Message]) -> Vec<&'static str> {
        messages
            .iter()
            .map(|m| match m {
                Message::User(_) => "user",
                Message::Assistant(_) => "assistant",
                Message::System(_) => "system",
            })
            .collect()
    }

    fn interrupted(id: &str) -> UserBlock {
        UserBlock::ToolResult {
            tool_use_id: ToolUseId::new(id),
            content: vec![ToolResultContent::text("Interrupted")],
            is_error: true,
            ui: None,
        }
    }

    fn user(id: &str, content: Vec<UserBlock>, origin: MessageOrigin) -> Message {
        Message::User(UserMessage {
            id: MessageId::new(id),
            content,
            origin,
        })
    }

    fn text(t: &str) -> UserBlock {
        UserBlock::Text { text: t.into() }
    }

    #[test]
    fn a_resumed_crash_sends_the_synthesized_result_and_the_prompt_as_one_user_message() {
        // What a resume after kill -9 holds: the cut tool use, the result
        // synthesized for it, a note for people, then the new prompt.
        let mut s = state();
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "Run the slow command"),
            tool_turn("model-b", true),
            user(
                "u_filled",
                vec![interrupted("t1")],
                MessageOrigin::ToolResults,
            ),
            Message::System(SystemMessage {
                id: MessageId::new("n"),
                text: "resumed".into(),
                level: SystemLevel::Info,
            }),
            Message::user_text(MessageId::new("u_prompt"), "Go on"),
        ];
        let req = build_request(&s, &RetryContext::default());
        assert_eq!(roles(&req.messages), ["user", "assistant", "user"]);
        assert_eq!(
            req.messages[2],
            user(
                "u_filled",
                vec![interrupted("t1"), text("Go on")],
                MessageOrigin::ToolResults
            )
        );
        assert_eq!(invariants::check_tool_pairing(&req.messages), Ok(()));
        // Only the request is merged: the history keeps both messages.
        assert_eq!(s.messages.len(), 5);
    }

    #[test]
    fn a_merged_run_holds_every_result_first_then_the_rest_in_order() {
        let mut s = state();
        let mut call = tool_turn("model-b", false);
        if let Message::Assistant(a) = &mut call {
            a.content.push(AssistantBlock::ToolUse {
                id: ToolUseId::new("t2"),
                name: "Read".into(),
                input: json!({}),
            });
        }
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "go"),
            call,
            user(
                "u1",
                vec![interrupted("t1"), text("queued note")],
                MessageOrigin::ToolResults,
            ),
            user("u2", vec![interrupted("t2")], MessageOrigin::ToolResults),
            user(
                "u3",
                vec![
                    UserBlock::Attachment {
                        title: "a.md".into(),
                        text: "memory".into(),
                    },
                    text(""),
                    text("next prompt"),
                ],
                MessageOrigin::Person,
            ),
        ];
        let req = build_request(&s, &RetryContext::default());
        assert_eq!(roles(&req.messages), ["user", "assistant", "user"]);
        let Message::User(merged) = &req.messages[2] else {
            panic!("user expected");
        };
        assert_eq!(
            merged.content,
            vec![
                interrupted("t1"),
                interrupted("t2"),
                text("queued note"),
                UserBlock::Attachment {
                    title: "a.md".into(),
                    text: "memory".into(),
                },
                text("next prompt"),
            ]
        );
        assert_eq!(merged.id, MessageId::new("u1"));
        assert_eq!(invariants::check_tool_pairing(&req.messages), Ok(()));
    }

    #[test]
    fn an_assistant_message_dropped_from_the_request_does_not_leave_two_user_messages() {
        // Only another model's thinking, or only empty text: nothing is
        // sent for it, and the user messages around it become one.
        let mut s = state();
        let foreign = Message::Assistant(AssistantMessage {
            id: MessageId::new("a_foreign"),
            content: vec![AssistantBlock::Thinking {
                text: "t".into(),
                signature: Some("sig".into()),
                model: "model-a".into(),
                item_id: None,
            }],
            model: "model-a".into(),
            stop_reason: None,
            interrupted: true,
        });
        let empty = Message::Assistant(AssistantMessage {
            id: MessageId::new("a_empty"),
            content: vec![AssistantBlock::Text {
                text: String::new(),
            }],
            model: "model-b".into(),
            stop_reason: None,
            interrupted: true,
        });
        s.messages = vec![
            Message::user_text(MessageId::new("u0"), "one"),
            foreign,
            Message::user_text(MessageId::new("u1"), "two"),
            empty,
            Message::user_text(MessageId::new("u2"), "three"),
        ];
        let req = build_request(&s, &RetryContext::default());
        assert_eq!(
            req.messages,
            vec![user(
                "u0",
                vec![text("one"), text("two"), text("three")],
                MessageOrigin::Person
            )]
        );
    }

    #[test]
    fn retries_change_only_the_retry_context() {
        let s = state();
        let normal = build_request(&s, &RetryContext::default());
        let raised = build_request(
            &s,
            &RetryContext {
                max_tokens: Some(64_000),
            },
        );
        assert_eq!(normal.max_tokens, 8_192);
        assert_eq!(raised.max_tokens, 64_000);
        assert_eq!(
            ModelRequest {
                max_tokens: 8_192,
                ..raised
            },
            normal
        );
    }
}
