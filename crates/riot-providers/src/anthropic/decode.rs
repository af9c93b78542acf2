//! Anthropic Messages streaming events → [`ProviderEvent`]s.

use riot_protocol::{
    AssistantBlock, ProviderError, ProviderEvent, StopReason, StreamDelta, ToolUseId, Usage,
    WebResult,
};
use serde_json::{Value, json};

use crate::classify::classify_stream_error;
use crate::decode::{
    Decoder, event_kind, finish, parse_json, parse_tool_input, str_at, stream_cut, u64_at,
};
use crate::sse::SseEvent;

/// The block being streamed.
#[derive(Debug)]
enum Open {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    /// A tool call the server runs itself (`server_tool_use`).
    ServerTool {
        id: String,
        name: String,
        json: String,
    },
    /// A block type Riot does not replay (e.g. a model `fallback` marker).
    Other,
}

/// Decoder state for one Anthropic reply.
#[derive(Debug, Default)]
pub struct AnthropicDecoder {
    /// The model the server says answers (for `Started`).
    model: String,
    /// The model thinking blocks are bound to: the requested name (what
    /// INV-9 compares against), or the target of a mid-stream `fallback`.
    bound: String,
    started: bool,
    open: Option<Open>,
    usage: Usage,
    stop_reason: Option<StopReason>,
    done: bool,
    /// A web search the server started and has not answered yet: its id,
    /// query and `server_tool_use` block as it goes back.
    searching: Option<(String, String, Value)>,
}

impl AnthropicDecoder {
    /// A decoder for a request to `model` (used until `message_start` names
    /// the model that answers).
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            bound: model.to_owned(),
            ..Self::default()
        }
    }

    fn merge_usage(&mut self, usage: &Value, out: &mut Vec<ProviderEvent>) {
        let later = Usage {
            input_tokens: u64_at(usage, &["input_tokens"]),
            output_tokens: u64_at(usage, &["output_tokens"]),
            cache_read_tokens: u64_at(usage, &["cache_read_input_tokens"]),
            cache_write_tokens: u64_at(usage, &["cache_creation_input_tokens"]),
            web_searches: u64_at(usage, &["server_tool_use", "web_search_requests"]),
        };
        self.usage.merge_cumulative(&later);
        out.push(ProviderEvent::Usage(self.usage));
    }

    /// A `web_search_tool_result`: the search it answers, with what it
    /// found or why it failed, as one block.
    fn search_result(&mut self, block: &Value, out: &mut Vec<ProviderEvent>) {
        let answered = str_at(block, "tool_use_id");
        let (id, query, mut replay) = match self.searching.take() {
            Some((id, query, call)) if id == answered => (id, query, vec![call]),
            // The result of a search the previous reply started and the
            // server paused (`pause_turn`): it goes back right after that
            // reply, which the API joins to this one into one turn.
            other => {
                if let Some((id, query, call)) = other {
                    self.searching = Some((id, query, call));
                }
                (answered.to_owned(), String::new(), Vec::new())
            }
        };
        let content = block.get("content").unwrap_or(&Value::Null);
        let (results, error) = match content.as_array() {
            Some(items) => (
                items
                    .iter()
                    .filter(|r| str_at(r, "type") == "web_search_result")
                    .map(|r| WebResult {
                        title: str_at(r, "title").to_owned(),
                        url: str_at(r, "url").to_owned(),
                        snippet: String::new(),
                    })
                    .collect(),
                None,
            ),
            None => {
                let code = str_at(content, "error_code");
                let code = if code.is_empty() { "unknown" } else { code };
                (Vec::new(), Some(search_error(code)))
            }
        };
        replay.push(block.clone());
        out.push(ProviderEvent::Block(AssistantBlock::WebSearch {
            id,
            query,
            results,
            error,
            replay,
        }));
    }

    /// A search the reply ended before answering (a paused turn): it goes
    /// back as it is, so the server can go on with it.
    fn unanswered_search(&mut self, out: &mut Vec<ProviderEvent>) {
        if let Some((id, query, call)) = self.searching.take() {
            out.push(ProviderEvent::Block(AssistantBlock::WebSearch {
                id,
                query,
                results: Vec::new(),
                error: None,
                replay: vec![call],
            }));
        }
    }

    fn close_block(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
        let block = match self.open.take() {
            None | Some(Open::Other) => return Ok(()),
            Some(Open::Text(text)) => AssistantBlock::Text { text },
            Some(Open::Thinking { text, signature }) => AssistantBlock::Thinking {
                text,
                signature: (!signature.is_empty()).then_some(signature),
                model: self.bound.clone(),
                item_id: None,
            },
            Some(Open::Redacted(data)) => AssistantBlock::RedactedThinking {
                data,
                model: self.bound.clone(),
            },
            Some(Open::Tool { id, name, json }) => {
                let input = parse_tool_input(&name, &json)?;
                AssistantBlock::ToolUse {
                    id: ToolUseId::new(id),
                    name,
                    input,
                }
            }
            Some(Open::ServerTool { id, name, json }) => {
                let input = parse_tool_input(&name, &json)?;
                let query = str_at(&input, "query").to_owned();
                let block =
                    json!({"type": "server_tool_use", "id": id, "name": name, "input": input});
                // Shown (and sent back) with its result, which follows.
                self.searching = Some((id, query, block));
                return Ok(());
            }
        };
        out.push(ProviderEvent::Block(block));
        Ok(())
    }
}

/// A web search error code in words.
fn search_error(code: &str) -> String {
    let why = match code {
        "too_many_requests" => "the search service is rate limited",
        "invalid_input" => "the query was not valid",
        "max_uses_exceeded" => "the reply used up its searches",
        "query_too_long" => "the query was too long",
        "unavailable" => "the search service is unavailable",
        _ => "the search failed",
    };
    format!("{why} ({code})")
}

/// Anthropic's `stop_reason` values.
pub fn stop_reason(value: &str) -> StopReason {
    match value {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        "pause_turn" => StopReason::PauseTurn,
        _ => StopReason::Other,
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        let v = parse_json(&event.data)?;
        let kind = event_kind(&v, event);
        match kind {
            "message_start" => {
                let message = v.get("message").unwrap_or(&Value::Null);
                if !self.started {
                    self.started = true;
                    let model = str_at(message, "model");
                    if !model.is_empty() {
                        self.model = model.to_owned();
                    }
                    out.push(ProviderEvent::Started {
                        model: self.model.clone(),
                    });
                }
                if let Some(usage) = message.get("usage") {
                    self.merge_usage(usage, out);
                }
            }
            "content_block_start" => {
                self.close_block(out)?;
                let block = v.get("content_block").unwrap_or(&Value::Null);
                self.open = Some(match str_at(block, "type") {
                    "text" => Open::Text(str_at(block, "text").to_owned()),
                    "thinking" => Open::Thinking {
                        text: str_at(block, "thinking").to_owned(),
                        signature: str_at(block, "signature").to_owned(),
                    },
                    "redacted_thinking" => Open::Redacted(str_at(block, "data").to_owned()),
                    "tool_use" => Open::Tool {
                        id: str_at(block, "id").to_owned(),
                        name: str_at(block, "name").to_owned(),
                        json: String::new(),
                    },
                    "server_tool_use" => Open::ServerTool {
                        id: str_at(block, "id").to_owned(),
                        name: str_at(block, "name").to_owned(),
                        json: String::new(),
                    },
                    "web_search_tool_result" => {
                        self.search_result(block, out);
                        Open::Other
                    }
                    "fallback" => {
                        // The server switched models mid-reply; later
                        // thinking is signed by the new one.
                        if let Some(to) = block.pointer("/to/model").and_then(Value::as_str) {
                            self.bound = to.to_owned();
                        }
                        Open::Other
                    }
                    _ => Open::Other,
                });
            }
            "content_block_delta" => {
                let delta = v.get("delta").unwrap_or(&Value::Null);
                match (self.open.as_mut(), str_at(delta, "type")) {
                    (Some(Open::Text(text)), "text_delta") => {
                        let piece = str_at(delta, "text");
                        text.push_str(piece);
                        out.push(ProviderEvent::Delta(StreamDelta::Text {
                            text: piece.to_owned(),
                        }));
                    }
                    (Some(Open::Thinking { text, .. }), "thinking_delta") => {
                        let piece = str_at(delta, "thinking");
                        text.push_str(piece);
                        out.push(ProviderEvent::Delta(StreamDelta::Thinking {
                            text: piece.to_owned(),
                        }));
                    }
                    (Some(Open::Thinking { signature, .. }), "signature_delta") => {
                        signature.push_str(str_at(delta, "signature"));
                    }
                    (Some(Open::ServerTool { json, .. }), "input_json_delta") => {
                        json.push_str(str_at(delta, "partial_json"));
                    }
                    (Some(Open::Tool { id, name, json }), "input_json_delta") => {
                        let piece = str_at(delta, "partial_json");
                        if !piece.is_empty() {
                            json.push_str(piece);
                            out.push(ProviderEvent::Delta(StreamDelta::ToolInput {
                                tool_use_id: ToolUseId::new(id.clone()),
                                name: name.clone(),
                                partial_json: piece.to_owned(),
                            }));
                        }
                    }
                    _ => {} // citations and future delta types
                }
            }
            "content_block_stop" => self.close_block(out)?,
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(stop_reason(reason));
                }
                if let Some(usage) = v.get("usage") {
                    self.merge_usage(usage, out);
                }
            }
            "message_stop" => {
                self.close_block(out)?;
                self.unanswered_search(out);
                self.done = true;
                return finish(self.stop_reason.unwrap_or(StopReason::EndTurn), out);
            }
            "error" => {
                self.done = true;
                return Err(classify_stream_error(v.get("error").unwrap_or(&v)));
            }
            _ => {} // ping and future event types
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        // Keep finished text; a half-streamed tool call or unsigned
        // thinking cannot be replayed.
        if let Some(Open::Text(text)) = self.open.take()
            && !text.is_empty()
        {
            out.push(ProviderEvent::Block(AssistantBlock::Text { text }));
        }
        Err(stream_cut())
    }
}

/// A complete (non-streaming) Messages response → events.
pub fn decode_complete(body: &Value, model: &str) -> Result<Vec<ProviderEvent>, ProviderError> {
    let mut decoder = AnthropicDecoder::new(model);
    let mut out = Vec::new();
    let mut message = body.clone();
    let content = message
        .as_object_mut()
        .and_then(|m| m.insert("content".into(), Value::Array(Vec::new())));
    let delta = serde_json::json!({
        "type": "message_delta",
        "delta": {"stop_reason": body.get("stop_reason")},
    });
    let mut events = vec![serde_json::json!({"type": "message_start", "message": message})];
    if let Some(Value::Array(blocks)) = content {
        for block in blocks {
            let mut start = block.clone();
            let delta = matches!(str_at(&block, "type"), "tool_use" | "server_tool_use").then(|| {
                serde_json::json!({
                    "type": "input_json_delta",
                    "partial_json": block.get("input").map(Value::to_string).unwrap_or_default(),
                })
            });
            if let Some(obj) = start.as_object_mut()
                && delta.is_some()
            {
                obj.remove("input");
            }
            events.push(serde_json::json!({"type": "content_block_start", "content_block": start}));
            if let Some(delta) = delta {
                events.push(serde_json::json!({"type": "content_block_delta", "delta": delta}));
            }
            events.push(serde_json::json!({"type": "content_block_stop"}));
        }
    }
    events.push(delta);
    events.push(serde_json::json!({"type": "message_stop"}));
    for event in events {
        let sse = SseEvent {
            event: None,
            data: event.to_string(),
        };
        decoder.event(&sse, &mut out)?;
    }
    // The deltas were synthesised; a non-streamed reply has none.
    out.retain(|e| !matches!(e, ProviderEvent::Delta(_)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use riot_protocol::Usage;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_complete_message_decodes_to_the_same_blocks_as_a_stream() {
        let body = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "SIG"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.txt"}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 7}
        });
        let events = decode_complete(&body, "claude-sonnet-4-5").unwrap();
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 7,
            cache_read_tokens: 90,
            cache_write_tokens: 0,
            web_searches: 0,
        };
        assert_eq!(
            events,
            vec![
                ProviderEvent::Started {
                    model: "claude-sonnet-4-5-20250929".into()
                },
                ProviderEvent::Usage(usage),
                ProviderEvent::Block(AssistantBlock::Thinking {
                    text: "plan".into(),
                    signature: Some("SIG".into()),
                    model: "claude-sonnet-4-5".into(),
                    item_id: None,
                }),
                ProviderEvent::Block(AssistantBlock::Text {
                    text: "Reading.".into()
                }),
                ProviderEvent::Block(AssistantBlock::ToolUse {
                    id: ToolUseId::new("toolu_1"),
                    name: "Read".into(),
                    input: json!({"file_path": "a.txt"}),
                }),
                ProviderEvent::Stop {
                    reason: StopReason::ToolUse
                },
            ]
        );
    }

    #[test]
    fn invalid_tool_json_and_max_tokens_are_errors_not_silent_ends() {
        let stream = [
            json!({"type": "message_start", "message": {"model": "m"}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Write", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"content\": \"unterminated"}}),
            json!({"type": "content_block_stop", "index": 0}),
        ];
        let mut decoder = AnthropicDecoder::new("m");
        let mut out = Vec::new();
        let mut result = Ok(());
        for event in &stream {
            result = decoder.event(
                &SseEvent {
                    event: None,
                    data: event.to_string(),
                },
                &mut out,
            );
        }
        let err = result.unwrap_err();
        assert_eq!(err.kind, riot_protocol::ProviderErrorKind::Malformed);
        assert!(err.message.contains("`Write`"), "{}", err.message);

        let body = json!({"model": "m", "content": [{"type": "text", "text": "cut sh"}], "stop_reason": "max_tokens", "usage": {"output_tokens": 5}});
        let err = decode_complete(&body, "m").unwrap_err();
        assert_eq!(err.kind, riot_protocol::ProviderErrorKind::OutputLimit);
        assert!(err.is_recoverable_by_loop());
    }
}
