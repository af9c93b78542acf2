//! OpenAI Responses streaming events → [`ProviderEvent`]s.
//!
//! Reasoning items become `Thinking` blocks whose `signature` is the
//! item's `encrypted_content` and whose `item_id` is the item's id, so they
//! can be sent back unchanged (docs/design.md §11).

use std::collections::BTreeMap;

use riot_protocol::{
    AssistantBlock, ProviderError, ProviderErrorKind, ProviderEvent, StopReason, StreamDelta,
    ToolUseId, Usage, WebResult,
};
use serde_json::Value;

use crate::classify::classify_stream_error;
use crate::decode::{
    Decoder, event_kind, finish, output_limit, parse_json, parse_tool_input, str_at, stream_cut,
    u64_at,
};
use crate::sse::SseEvent;

#[derive(Debug)]
enum Item {
    Reasoning {
        summary: Vec<String>,
    },
    Message {
        text: String,
    },
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
    Other,
}

/// Decoder state for one Responses reply.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    /// The model the server says answers (for `Started`).
    model: String,
    /// The requested model name; reasoning is bound to it (INV-9).
    requested: String,
    started: bool,
    /// Open output items by `output_index`.
    items: BTreeMap<u64, Item>,
    made_calls: bool,
    /// Web searches the reply ran (`web_search_call` items); the usage
    /// the server reports leaves them out.
    searches: u64,
    usage: Usage,
    done: bool,
}

/// Responses usage → Riot usage (`input_tokens` excludes cached tokens).
pub fn usage(u: &Value) -> Usage {
    let input = u64_at(u, &["input_tokens"]);
    let cached = u64_at(u, &["input_tokens_details", "cached_tokens"]);
    Usage {
        input_tokens: input.saturating_sub(cached),
        output_tokens: u64_at(u, &["output_tokens"]),
        cache_read_tokens: cached,
        cache_write_tokens: u64_at(u, &["input_tokens_details", "cache_write_tokens"]),
        web_searches: 0,
    }
}

/// A finished `web_search_call` item: its query, and the pages it found
/// when `web_search_call.action.sources` was asked for (URLs only: the
/// titles are in the answer's citations).
fn web_search_call(item: &Value) -> AssistantBlock {
    let action = item.get("action").unwrap_or(&Value::Null);
    let results = action
        .get("sources")
        .and_then(Value::as_array)
        .map(|sources| {
            sources
                .iter()
                .map(|s| str_at(s, "url"))
                .filter(|url| !url.is_empty())
                .map(|url| WebResult {
                    title: String::new(),
                    url: url.to_owned(),
                    snippet: String::new(),
                })
                .collect()
        })
        .unwrap_or_default();
    let status = str_at(item, "status");
    AssistantBlock::WebSearch {
        id: str_at(item, "id").to_owned(),
        query: str_at(action, "query").to_owned(),
        results,
        error: (status == "failed").then(|| "the search failed".to_owned()),
        replay: Vec::new(),
    }
}

impl ResponsesDecoder {
    /// A decoder for a request to `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            requested: model.to_owned(),
            ..Self::default()
        }
    }

    fn start(&mut self, response: &Value, out: &mut Vec<ProviderEvent>) {
        if self.started {
            return;
        }
        self.started = true;
        let model = str_at(response, "model");
        if !model.is_empty() {
            self.model = model.to_owned();
        }
        out.push(ProviderEvent::Started {
            model: self.model.clone(),
        });
    }

    fn item_done(
        &mut self,
        index: u64,
        item: &Value,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        let open = self.items.remove(&index);
        let block = match str_at(item, "type") {
            "reasoning" => {
                let mut summary = match open {
                    Some(Item::Reasoning { summary, .. }) => summary,
                    _ => Vec::new(),
                };
                if let Some(parts) = item.get("summary").and_then(Value::as_array)
                    && !parts.is_empty()
                {
                    summary = parts.iter().map(|p| str_at(p, "text").to_owned()).collect();
                }
                let encrypted = str_at(item, "encrypted_content");
                AssistantBlock::Thinking {
                    text: summary.join("\n\n"),
                    signature: (!encrypted.is_empty()).then(|| encrypted.to_owned()),
                    model: self.requested.clone(),
                    item_id: Some(str_at(item, "id").to_owned()),
                }
            }
            "message" => {
                let mut text = match open {
                    Some(Item::Message { text }) => text,
                    _ => String::new(),
                };
                if let Some(parts) = item.get("content").and_then(Value::as_array)
                    && !parts.is_empty()
                {
                    text = parts
                        .iter()
                        .map(|p| match str_at(p, "type") {
                            "refusal" => str_at(p, "refusal"),
                            _ => str_at(p, "text"),
                        })
                        .collect();
                }
                if text.is_empty() {
                    return Ok(());
                }
                AssistantBlock::Text { text }
            }
            "function_call" => {
                let streamed = match open {
                    Some(Item::Call { arguments, .. }) => arguments,
                    _ => String::new(),
                };
                // The item's own `arguments` is authoritative when present.
                let arguments = match item.get("arguments").and_then(Value::as_str) {
                    Some(a) if !a.is_empty() => a.to_owned(),
                    _ => streamed,
                };
                let name = str_at(item, "name").to_owned();
                let input = parse_tool_input(&name, &arguments)?;
                self.made_calls = true;
                AssistantBlock::ToolUse {
                    id: ToolUseId::new(str_at(item, "call_id")),
                    name,
                    input,
                }
            }
            "web_search_call" => {
                self.searches += 1;
                web_search_call(item)
            }
            _ => return Ok(()),
        };
        out.push(ProviderEvent::Block(block));
        Ok(())
    }
}

impl Decoder for ResponsesDecoder {
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
        let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "response.created" | "response.in_progress" => {
                self.start(v.get("response").unwrap_or(&Value::Null), out);
            }
            "response.output_item.added" => {
                let item = v.get("item").unwrap_or(&Value::Null);
                let open = match str_at(item, "type") {
                    "reasoning" => Item::Reasoning {
                        summary: Vec::new(),
                    },
                    "message" => Item::Message {
                        text: String::new(),
                    },
                    "function_call" => Item::Call {
                        call_id: str_at(item, "call_id").to_owned(),
                        name: str_at(item, "name").to_owned(),
                        arguments: String::new(),
                    },
                    _ => Item::Other,
                };
                self.items.insert(index, open);
            }
            "response.reasoning_summary_part.added" => {
                if let Some(Item::Reasoning { summary, .. }) = self.items.get_mut(&index) {
                    summary.push(String::new());
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(Item::Reasoning { summary, .. }) = self.items.get_mut(&index) {
                    let piece = str_at(&v, "delta");
                    if summary.is_empty() {
                        summary.push(String::new());
                    }
                    if let Some(last) = summary.last_mut() {
                        last.push_str(piece);
                    }
                    out.push(ProviderEvent::Delta(StreamDelta::Thinking {
                        text: piece.to_owned(),
                    }));
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let piece = str_at(&v, "delta");
                if let Some(Item::Message { text }) = self.items.get_mut(&index) {
                    text.push_str(piece);
                }
                out.push(ProviderEvent::Delta(StreamDelta::Text {
                    text: piece.to_owned(),
                }));
            }
            "response.function_call_arguments.delta" => {
                if let Some(Item::Call {
                    call_id,
                    name,
                    arguments,
                }) = self.items.get_mut(&index)
                {
                    let piece = str_at(&v, "delta");
                    arguments.push_str(piece);
                    out.push(ProviderEvent::Delta(StreamDelta::ToolInput {
                        tool_use_id: ToolUseId::new(call_id.clone()),
                        name: name.clone(),
                        partial_json: piece.to_owned(),
                    }));
                }
            }
            "response.output_item.done" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                self.item_done(index, &item, out)?;
            }
            "response.completed" | "response.incomplete" => {
                self.done = true;
                let response = v.get("response").unwrap_or(&Value::Null);
                if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
                    self.usage.merge_cumulative(&Usage {
                        web_searches: self.searches,
                        ..usage(u)
                    });
                    out.push(ProviderEvent::Usage(self.usage));
                }
                if kind == "response.incomplete" {
                    let reason = response
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    return match reason {
                        "content_filter" => finish(StopReason::Refusal, out),
                        _ => Err(output_limit()),
                    };
                }
                let reason = if self.made_calls {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                };
                return finish(reason, out);
            }
            "response.failed" => {
                self.done = true;
                let error = v.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(if error.is_object() {
                    classify_stream_error(error)
                } else {
                    ProviderError::new(ProviderErrorKind::Server, "the response failed")
                });
            }
            "error" => {
                self.done = true;
                return Err(classify_stream_error(v.get("error").unwrap_or(&v)));
            }
            _ => {}
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
        for item in std::mem::take(&mut self.items).into_values() {
            if let Item::Message { text } = item
                && !text.is_empty()
            {
                out.push(ProviderEvent::Block(AssistantBlock::Text { text }));
            }
        }
        Err(stream_cut())
    }
}

/// A complete (non-streaming) response object → events.
pub fn decode_complete(body: &Value, model: &str) -> Result<Vec<ProviderEvent>, ProviderError> {
    let mut decoder = ResponsesDecoder::new(model);
    let mut out = Vec::new();
    decoder.start(body, &mut out);
    let items = body
        .get("output")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        decoder.item_done(i as u64, item, &mut out)?;
    }
    let status = str_at(body, "status");
    let kind = match status {
        "incomplete" => "response.incomplete",
        "failed" => "response.failed",
        _ => "response.completed",
    };
    let event = serde_json::json!({"type": kind, "response": body});
    decoder.event(
        &SseEvent {
            event: None,
            data: event.to_string(),
        },
        &mut out,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn feed(events: &[Value]) -> (Vec<ProviderEvent>, Result<(), ProviderError>) {
        let mut decoder = ResponsesDecoder::new("gpt-5.1");
        let mut out = Vec::new();
        for e in events {
            let sse = SseEvent {
                event: None,
                data: e.to_string(),
            };
            if let Err(err) = decoder.event(&sse, &mut out) {
                return (out, Err(err));
            }
        }
        (out, Ok(()))
    }

    #[test]
    fn an_incomplete_response_at_the_token_limit_is_an_output_limit_error_after_its_text() {
        let (out, result) = feed(&[
            json!({"type": "response.created", "response": {"model": "gpt-5.1-2025-11-13"}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}}),
            json!({"type": "response.output_text.delta", "output_index": 0, "delta": "partial"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "content": [{"type": "output_text", "text": "partial"}]}}),
            json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}, "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 9}}}),
        ]);
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::OutputLimit);
        assert_eq!(
            out[2],
            ProviderEvent::Block(AssistantBlock::Text {
                text: "partial".into()
            })
        );
        assert_eq!(
            out[3],
            ProviderEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 9,
                cache_read_tokens: 40,
                cache_write_tokens: 0,
                web_searches: 0,
            })
        );
    }

    #[test]
    fn a_complete_response_object_keeps_reasoning_ids_and_encrypted_content() {
        let body = json!({"model": "gpt-5.1", "status": "completed", "output": [
            {"id": "rs_9", "type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}], "encrypted_content": "ENC"},
            {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
        ], "usage": {"input_tokens": 5, "output_tokens": 2}});
        let events = decode_complete(&body, "gpt-5.1").unwrap();
        assert_eq!(
            events[1],
            ProviderEvent::Block(AssistantBlock::Thinking {
                text: "think".into(),
                signature: Some("ENC".into()),
                model: "gpt-5.1".into(),
                item_id: Some("rs_9".into()),
            })
        );
        assert_eq!(
            events[2],
            ProviderEvent::Block(AssistantBlock::ToolUse {
                id: ToolUseId::new("call_1"),
                name: "f".into(),
                input: json!({})
            })
        );
        assert_eq!(
            events.last(),
            Some(&ProviderEvent::Stop {
                reason: StopReason::ToolUse
            })
        );
    }
}
