//! Claude Code's headless event lines (`--output-format stream-json`),
//! made from Riot's [`AgentEvent`]s, so a program written against `claude
//! -p --output-format stream-json` reads Riot's output unchanged.
//!
//! The shapes are recorded in
//! `crates/riot-cli/tests/fixtures/claude_code_headless_schema.json`
//! (docs/interfaces.md): a `system`/`init` line first ([`init_line`]),
//! then per model request an `assistant` line holding the whole reply —
//! preceded, with `--include-partial-messages`, by its `stream_event`
//! lines (Anthropic's raw streaming events) — and a `user` line for each
//! message of tool results. A compaction is a `system`/`compact_boundary`
//! line. The `result` line is made by [`super::result`].
//!
//! Riot's other events (tool progress, retries, notes for people) have no
//! line here; `--output-format events` has them all.

use std::sync::Arc;

use riot_protocol::{
    AgentEvent, AssistantBlock, AssistantMessage, IdGen, IdKind, PermissionMode, StopReason,
    StreamDelta, ToolResultContent, ToolUseId, Usage, UserBlock, UserMessage,
};
use serde_json::{Value, json};

/// What the `system`/`init` line says about the session.
#[derive(Debug, Clone, PartialEq)]
pub struct InitInfo {
    pub session_id: String,
    pub cwd: String,
    pub model: String,
    pub mode: PermissionMode,
    /// The tools offered to the model, in the order sent.
    pub tools: Vec<String>,
    /// MCP servers: name and Claude Code's status word.
    pub mcp_servers: Vec<(String, &'static str)>,
    /// Slash commands, without the slash.
    pub slash_commands: Vec<String>,
}

/// Claude Code's name of a permission mode; Riot's own name for the modes
/// Claude Code does not have.
pub fn mode_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Plan => "plan",
        PermissionMode::Bypass => "bypassPermissions",
        PermissionMode::DontAsk => "dontAsk",
        PermissionMode::Auto => "auto",
        PermissionMode::Unattended => "unattended",
    }
}

/// Claude Code's word for an MCP server's status.
pub fn mcp_status(status: &riot_mcp::ServerStatus) -> &'static str {
    match status {
        riot_mcp::ServerStatus::Connecting => "pending",
        riot_mcp::ServerStatus::Ready { .. } => "connected",
        riot_mcp::ServerStatus::Failed { .. } => "failed",
        riot_mcp::ServerStatus::Disabled => "disabled",
    }
}

/// The first line: the session as it starts.
pub fn init_line(info: &InitInfo, uuid: String) -> Value {
    let servers: Vec<Value> = info
        .mcp_servers
        .iter()
        .map(|(name, status)| json!({"name": name, "status": status}))
        .collect();
    json!({
        "type": "system",
        "subtype": "init",
        "uuid": uuid,
        "session_id": info.session_id,
        "cwd": info.cwd,
        "model": info.model,
        "permissionMode": mode_name(info.mode),
        "tools": info.tools,
        "mcp_servers": servers,
        "slash_commands": info.slash_commands,
        "output_style": "default",
    })
}

/// A usage object in Anthropic's names.
pub fn usage_json(usage: &Usage) -> Value {
    let mut value = json!({
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    });
    // The provider's own web searches, where there were any.
    if usage.web_searches > 0 {
        value["server_tool_use"] = json!({"web_search_requests": usage.web_searches});
    }
    value
}

/// The kind of content block a run of deltas builds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    ToolUse(ToolUseId),
}

/// The streamed reply of the current request, for `stream_event` lines.
#[derive(Debug)]
struct Streamed {
    /// The block being streamed and its index.
    open: Option<(Block, usize)>,
    next_index: usize,
}

/// Turns a session's events into Claude Code's lines.
pub struct ClaudeLines {
    session_id: String,
    partial: bool,
    ids: Arc<dyn IdGen>,
    /// The model of the current request.
    model: String,
    /// The current request's usage, reported before its message.
    usage: Option<Usage>,
    /// With partial messages: the reply streaming now.
    streamed: Option<Streamed>,
}

impl std::fmt::Debug for ClaudeLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClaudeLines")
            .field("session_id", &self.session_id)
            .field("partial", &self.partial)
            .finish_non_exhaustive()
    }
}

impl ClaudeLines {
    /// `partial`: also `stream_event` lines (`--include-partial-messages`).
    pub fn new(session_id: String, model: String, partial: bool, ids: Arc<dyn IdGen>) -> Self {
        Self {
            session_id,
            partial,
            ids,
            model,
            usage: None,
            streamed: None,
        }
    }

    fn uuid(&self) -> String {
        self.ids.next_id(IdKind::Message)
    }

    /// The lines one event makes, in order (often none).
    pub fn event(&mut self, event: &AgentEvent) -> Vec<Value> {
        match event {
            AgentEvent::RequestStart { model, .. } => {
                model.clone_into(&mut self.model);
                self.usage = None;
                self.streamed = None;
                Vec::new()
            }
            AgentEvent::Delta { delta } if self.partial => self.delta(delta),
            AgentEvent::Usage { usage, .. } => {
                self.usage = Some(*usage);
                Vec::new()
            }
            AgentEvent::Message {
                message: riot_protocol::Message::Assistant(a),
            } => {
                let mut lines = self.end_stream(a);
                lines.push(self.assistant(a));
                lines
            }
            AgentEvent::Message {
                message: riot_protocol::Message::User(u),
            } => self.user(u).into_iter().collect(),
            AgentEvent::Compacted { before, .. } => vec![json!({
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": self.uuid(),
                "session_id": self.session_id,
                "compact_metadata": {"trigger": "auto", "pre_tokens": before},
            })],
            _ => Vec::new(),
        }
    }

    fn stream_event(&self, event: Value) -> Value {
        json!({
            "type": "stream_event",
            "uuid": self.uuid(),
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "event": event,
        })
    }

    /// `stream_event` lines for one delta: the message's start on the
    /// first, a block's start when the kind of content changes.
    fn delta(&mut self, delta: &StreamDelta) -> Vec<Value> {
        let mut events = Vec::new();
        if self.streamed.is_none() {
            events.push(json!({
                "type": "message_start",
                "message": {
                    "id": self.ids.next_id(IdKind::Message),
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": usage_json(&Usage::default()),
                },
            }));
            self.streamed = Some(Streamed {
                open: None,
                next_index: 0,
            });
        }
        let (block, start, piece) = match delta {
            StreamDelta::Text { text } => (
                Block::Text,
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": text}),
            ),
            StreamDelta::Thinking { text } => (
                Block::Thinking,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                json!({"type": "thinking_delta", "thinking": text}),
            ),
            StreamDelta::ToolInput {
                tool_use_id,
                name,
                partial_json,
            } => (
                Block::ToolUse(tool_use_id.clone()),
                json!({"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": partial_json}),
            ),
        };
        let Some(streamed) = self.streamed.as_mut() else {
            return Vec::new();
        };
        let index = match &streamed.open {
            Some((open, index)) if *open == block => *index,
            open => {
                if let Some((_, index)) = open {
                    events.push(json!({"type": "content_block_stop", "index": index}));
                }
                let index = streamed.next_index;
                streamed.next_index += 1;
                streamed.open = Some((block, index));
                events.push(json!({
                    "type": "content_block_start",
                    "index": index,
                    "content_block": start,
                }));
                index
            }
        };
        events.push(json!({"type": "content_block_delta", "index": index, "delta": piece}));
        events.into_iter().map(|e| self.stream_event(e)).collect()
    }

    /// The closing `stream_event` lines of a streamed reply.
    fn end_stream(&mut self, reply: &AssistantMessage) -> Vec<Value> {
        let Some(streamed) = self.streamed.take() else {
            return Vec::new();
        };
        let mut events = Vec::new();
        if let Some((_, index)) = streamed.open {
            events.push(json!({"type": "content_block_stop", "index": index}));
        }
        let output = self.usage.map_or(0, |u| u.output_tokens);
        events.push(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(reply.stop_reason), "stop_sequence": null},
            "usage": {"output_tokens": output},
        }));
        events.push(json!({"type": "message_stop"}));
        events.into_iter().map(|e| self.stream_event(e)).collect()
    }

    /// A whole reply.
    fn assistant(&mut self, reply: &AssistantMessage) -> Value {
        let content: Vec<Value> = reply.content.iter().flat_map(assistant_blocks).collect();
        let usage = self.usage.take().unwrap_or_default();
        json!({
            "type": "assistant",
            "uuid": self.uuid(),
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "message": {
                "id": reply.id,
                "type": "message",
                "role": "assistant",
                "model": reply.model,
                "content": content,
                "stop_reason": stop_reason(reply.stop_reason),
                "stop_sequence": null,
                "usage": usage_json(&usage),
            },
        })
    }

    /// Tool results, as the user turn that carries them; nothing for the
    /// person's own prompt or the context Riot adds.
    fn user(&self, message: &UserMessage) -> Option<Value> {
        let results: Vec<Value> = message
            .content
            .iter()
            .filter_map(|block| match block {
                UserBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    ..
                } => Some(json!({
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": result_content(content),
                    "is_error": is_error,
                })),
                _ => None,
            })
            .collect();
        if results.is_empty() {
            return None;
        }
        Some(json!({
            "type": "user",
            "uuid": self.uuid(),
            "session_id": self.session_id,
            "parent_tool_use_id": null,
            "message": {"role": "user", "content": results},
        }))
    }
}

/// Anthropic's `stop_reason` word; `null` when the reply was cut.
fn stop_reason(reason: Option<StopReason>) -> Value {
    let word = match reason {
        Some(StopReason::EndTurn) => "end_turn",
        Some(StopReason::ToolUse) => "tool_use",
        Some(StopReason::MaxTokens) => "max_tokens",
        Some(StopReason::StopSequence) => "stop_sequence",
        Some(StopReason::Refusal) => "refusal",
        Some(StopReason::PauseTurn) => "pause_turn",
        Some(StopReason::Other) | None => return Value::Null,
    };
    Value::from(word)
}

/// A content block of a reply in Anthropic's shape; the provider's web
/// search is two, its call and its result (the pages' titles and URLs,
/// without the encrypted content a model reads).
fn assistant_blocks(block: &AssistantBlock) -> Vec<Value> {
    let one = match block {
        AssistantBlock::WebSearch {
            id,
            query,
            results,
            error,
            ..
        } => {
            let content = match error {
                Some(why) => json!({"type": "web_search_tool_result_error", "error_code": why}),
                None => results
                    .iter()
                    .map(|r| json!({"type": "web_search_result", "title": r.title, "url": r.url}))
                    .collect(),
            };
            return vec![
                json!({"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}}),
                json!({"type": "web_search_tool_result", "tool_use_id": id, "content": content}),
            ];
        }
        AssistantBlock::Text { text } => json!({"type": "text", "text": text}),
        AssistantBlock::Thinking {
            text, signature, ..
        } => json!({
            "type": "thinking",
            "thinking": text,
            "signature": signature.as_deref().unwrap_or(""),
        }),
        AssistantBlock::RedactedThinking { data, .. } => {
            json!({"type": "redacted_thinking", "data": data})
        }
        AssistantBlock::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
    };
    vec![one]
}

/// A tool result's content: the text itself when it is one text block (as
/// Claude Code writes most results), the blocks otherwise.
fn result_content(content: &[ToolResultContent]) -> Value {
    if let [ToolResultContent::Text { text }] = content {
        return Value::from(text.as_str());
    }
    Value::Array(
        content
            .iter()
            .map(|c| match c {
                ToolResultContent::Text { text } => json!({"type": "text", "text": text}),
                ToolResultContent::Image { source } => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": source.media_type, "data": source.data},
                }),
                // The pages' text: a program reading the stream gets what
                // the pages say, not the PDF's base64.
                ToolResultContent::Document { text, .. } => json!({"type": "text", "text": text}),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use riot_protocol::{Message, MessageId, SequentialIds};

    use super::*;

    fn lines() -> ClaudeLines {
        ClaudeLines::new(
            "ses_1".into(),
            "m".into(),
            true,
            Arc::new(SequentialIds::default()),
        )
    }

    fn reply(blocks: Vec<AssistantBlock>, stop: StopReason) -> AgentEvent {
        AgentEvent::Message {
            message: Message::Assistant(AssistantMessage {
                id: MessageId::new("msg_reply".to_owned()),
                content: blocks,
                model: "m".into(),
                stop_reason: Some(stop),
                interrupted: false,
            }),
        }
    }

    /// The `event` objects of the `stream_event` lines, as `type index`.
    fn stream_skeleton(out: &[Value]) -> Vec<String> {
        out.iter()
            .filter(|l| l["type"] == "stream_event")
            .map(|l| {
                let e = &l["event"];
                match e.get("index") {
                    Some(i) => format!("{} {i}", e["type"].as_str().unwrap_or("")),
                    None => e["type"].as_str().unwrap_or("").to_owned(),
                }
            })
            .collect()
    }

    #[test]
    fn a_streamed_reply_becomes_stream_events_then_the_whole_message() {
        let mut lines = lines();
        let id = ToolUseId::new("toolu_1".to_owned());
        let mut out = Vec::new();
        for event in [
            AgentEvent::RequestStart {
                turn: 1,
                model: "m".into(),
                after: None,
            },
            AgentEvent::Delta {
                delta: StreamDelta::Thinking { text: "hm".into() },
            },
            AgentEvent::Delta {
                delta: StreamDelta::Text { text: "Let".into() },
            },
            AgentEvent::Delta {
                delta: StreamDelta::Text {
                    text: " me look.".into(),
                },
            },
            AgentEvent::Delta {
                delta: StreamDelta::ToolInput {
                    tool_use_id: id.clone(),
                    name: "Read".into(),
                    partial_json: "{\"file_path\":".into(),
                },
            },
            AgentEvent::Delta {
                delta: StreamDelta::ToolInput {
                    tool_use_id: id.clone(),
                    name: "Read".into(),
                    partial_json: "\"a\"}".into(),
                },
            },
            AgentEvent::Usage {
                model: "m".into(),
                usage: Usage {
                    input_tokens: 7,
                    output_tokens: 3,
                    cache_read_tokens: 100,
                    cache_write_tokens: 20,
                    web_searches: 0,
                },
            },
            reply(
                vec![
                    AssistantBlock::Text {
                        text: "Let me look.".into(),
                    },
                    AssistantBlock::ToolUse {
                        id,
                        name: "Read".into(),
                        input: json!({"file_path": "a"}),
                    },
                ],
                StopReason::ToolUse,
            ),
        ] {
            out.extend(lines.event(&event));
        }
        assert_eq!(
            stream_skeleton(&out),
            [
                "message_start",
                "content_block_start 0",
                "content_block_delta 0",
                "content_block_stop 0",
                "content_block_start 1",
                "content_block_delta 1",
                "content_block_delta 1",
                "content_block_stop 1",
                "content_block_start 2",
                "content_block_delta 2",
                "content_block_delta 2",
                "content_block_stop 2",
                "message_delta",
                "message_stop",
            ]
        );
        let deltas: Vec<&Value> = out
            .iter()
            .map(|l| &l["event"]["delta"])
            .filter(|d| !d.is_null())
            .collect();
        assert_eq!(
            deltas[..3],
            [
                &json!({"type": "thinking_delta", "thinking": "hm"}),
                &json!({"type": "text_delta", "text": "Let"}),
                &json!({"type": "text_delta", "text": " me look."}),
            ]
        );
        assert_eq!(
            out[8]["event"]["content_block"],
            json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}})
        );
        let last = out.last().unwrap();
        assert_eq!(last["type"], "assistant");
        assert_eq!(
            last["message"],
            json!({
                "id": "msg_reply", "type": "message", "role": "assistant", "model": "m",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}},
                ],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 7, "output_tokens": 3,
                          "cache_creation_input_tokens": 20, "cache_read_input_tokens": 100},
            })
        );
        assert_eq!(last["session_id"], "ses_1");
        assert_eq!(last["parent_tool_use_id"], Value::Null);
    }

    #[test]
    fn a_documents_pdf_is_written_as_its_text_never_as_base64() {
        let content = [
            ToolResultContent::text("doc.pdf: page 2 of 5 (PDF text).\n"),
            ToolResultContent::pdf("JVBERi0xLjU=", 1, "--- Page 2 ---\nIntroduction\n"),
        ];
        assert_eq!(
            result_content(&content),
            json!([
                {"type": "text", "text": "doc.pdf: page 2 of 5 (PDF text).\n"},
                {"type": "text", "text": "--- Page 2 ---\nIntroduction\n"}
            ])
        );
    }

    #[test]
    fn without_partial_messages_only_whole_messages_are_written() {
        let mut lines = ClaudeLines::new(
            "ses_1".into(),
            "m".into(),
            false,
            Arc::new(SequentialIds::default()),
        );
        let delta = AgentEvent::Delta {
            delta: StreamDelta::Text { text: "Hi".into() },
        };
        assert!(lines.event(&delta).is_empty());
        let out = lines.event(&reply(
            vec![AssistantBlock::Text { text: "Hi".into() }],
            StopReason::EndTurn,
        ));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["message"]["stop_reason"], "end_turn");
        assert_eq!(
            out[0]["message"]["usage"],
            usage_json(&Usage::default()),
            "no usage reported: zeros"
        );
    }

    #[test]
    fn tool_results_are_a_user_line_and_the_prompt_is_not() {
        let mut lines = lines();
        let prompt = AgentEvent::Message {
            message: Message::user_text(MessageId::new("msg_p".to_owned()), "Do it"),
        };
        assert!(lines.event(&prompt).is_empty());
        let results = AgentEvent::Message {
            message: Message::User(UserMessage {
                id: MessageId::new("msg_r".to_owned()),
                content: vec![
                    UserBlock::ToolResult {
                        tool_use_id: ToolUseId::new("toolu_1".to_owned()),
                        content: vec![ToolResultContent::text("ok")],
                        is_error: false,
                        ui: None,
                    },
                    UserBlock::ToolResult {
                        tool_use_id: ToolUseId::new("toolu_2".to_owned()),
                        content: vec![ToolResultContent::text("a"), ToolResultContent::text("b")],
                        is_error: true,
                        ui: None,
                    },
                ],
                origin: riot_protocol::MessageOrigin::ToolResults,
            }),
        };
        let out = lines.event(&results);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["type"], "user");
        assert_eq!(
            out[0]["message"],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": false},
                {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
                 "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            ]})
        );
    }

    #[test]
    fn modes_take_claude_codes_names_where_it_has_them() {
        let names: Vec<&str> = PermissionMode::ALL.into_iter().map(mode_name).collect();
        assert_eq!(
            names,
            [
                "default",
                "acceptEdits",
                "plan",
                "auto",
                "bypassPermissions",
                "dontAsk",
                "unattended"
            ]
        );
    }
}
