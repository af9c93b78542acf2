//! Chat Completions streaming chunks → [`ProviderEvent`]s, for OpenAI and
//! every compatible server (DeepSeek, Kimi, Qwen, vLLM, Ollama, …).

use std::collections::BTreeMap;

use riot_protocol::{
    AssistantBlock, ProviderError, ProviderEvent, StopReason, StreamDelta, ToolUseId, Usage,
};
use serde_json::Value;

use crate::classify::classify_stream_error;
use crate::decode::{Decoder, finish, parse_json, parse_tool_input, str_at, stream_cut, u64_at};
use crate::sse::SseEvent;

#[derive(Debug, Default)]
struct ToolCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decoder state for one Chat Completions reply.
#[derive(Debug, Default)]
pub struct ChatDecoder {
    /// The model the server says answers (for `Started`).
    model: String,
    /// The requested model name; reasoning is bound to it (INV-9).
    requested: String,
    started: bool,
    reasoning: String,
    text: String,
    tools: BTreeMap<u64, ToolCall>,
    usage: Usage,
    saw_usage: bool,
    finish_reason: Option<String>,
    done: bool,
}

/// Chat Completions usage → Riot usage. `input_tokens` excludes cached
/// tokens (docs/interfaces.md: `prompt_tokens − cached_tokens`).
pub fn usage(u: &Value) -> Usage {
    let prompt = u64_at(u, &["prompt_tokens"]);
    let cached = match u64_at(u, &["prompt_tokens_details", "cached_tokens"]) {
        0 => u64_at(u, &["prompt_cache_hit_tokens"]), // DeepSeek
        n => n,
    };
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: u64_at(u, &["completion_tokens"]),
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        web_searches: 0,
    }
}

/// `finish_reason` → stop reason (`length` becomes an output-limit error).
pub fn stop_reason(value: &str) -> StopReason {
    match value {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        _ => StopReason::Other,
    }
}

impl ChatDecoder {
    /// A decoder for a request to `model`.
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            requested: model.to_owned(),
            ..Self::default()
        }
    }

    fn start(&mut self, chunk: &Value, out: &mut Vec<ProviderEvent>) {
        if self.started {
            return;
        }
        // Azure's first chunk has an empty model; wait for a real one.
        let model = str_at(chunk, "model");
        if model.is_empty()
            && chunk
                .get("choices")
                .is_some_and(|c| c.as_array().is_some_and(Vec::is_empty))
        {
            return;
        }
        if !model.is_empty() {
            self.model = model.to_owned();
        }
        self.started = true;
        out.push(ProviderEvent::Started {
            model: self.model.clone(),
        });
    }

    /// Finished blocks in reply order: reasoning, text, tool calls.
    fn blocks(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
        if !self.reasoning.is_empty() {
            out.push(ProviderEvent::Block(AssistantBlock::Thinking {
                text: std::mem::take(&mut self.reasoning),
                signature: None,
                model: self.requested.clone(),
                item_id: None,
            }));
        }
        if !self.text.is_empty() {
            out.push(ProviderEvent::Block(AssistantBlock::Text {
                text: std::mem::take(&mut self.text),
            }));
        }
        for (_, call) in std::mem::take(&mut self.tools) {
            let input = parse_tool_input(&call.name, &call.arguments)?;
            out.push(ProviderEvent::Block(AssistantBlock::ToolUse {
                id: ToolUseId::new(call.id),
                name: call.name,
                input,
            }));
        }
        Ok(())
    }

    fn complete(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
        self.done = true;
        self.blocks(out)?;
        if self.saw_usage {
            out.push(ProviderEvent::Usage(self.usage));
        }
        let reason = self
            .finish_reason
            .as_deref()
            .map_or(StopReason::EndTurn, stop_reason);
        finish(reason, out)
    }
}

impl Decoder for ChatDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        if event.data.trim() == "[DONE]" {
            return self.complete(out);
        }
        let chunk = parse_json(&event.data)?;
        if let Some(error) = chunk.get("error") {
            self.done = true;
            return Err(classify_stream_error(error));
        }
        self.start(&chunk, out);
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage.merge_cumulative(&usage(u));
            self.saw_usage = true;
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            // DeepSeek/Kimi/vLLM use `reasoning_content`, OpenRouter `reasoning`.
            let reasoning = delta
                .get("reasoning_content")
                .or_else(|| delta.get("reasoning"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if !reasoning.is_empty() {
                self.reasoning.push_str(reasoning);
                out.push(ProviderEvent::Delta(StreamDelta::Thinking {
                    text: reasoning.to_owned(),
                }));
            }
            let content = str_at(delta, "content");
            if !content.is_empty() {
                self.text.push_str(content);
                out.push(ProviderEvent::Delta(StreamDelta::Text {
                    text: content.to_owned(),
                }));
            }
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                let entry = self.tools.entry(index).or_default();
                if let Some(id) = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    entry.id = id.to_owned();
                }
                let function = call.get("function").unwrap_or(&Value::Null);
                if let Some(name) = function
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    entry.name = name.to_owned();
                }
                let piece = str_at(function, "arguments");
                if !piece.is_empty() {
                    entry.arguments.push_str(piece);
                    out.push(ProviderEvent::Delta(StreamDelta::ToolInput {
                        tool_use_id: ToolUseId::new(entry.id.clone()),
                        name: entry.name.clone(),
                        partial_json: piece.to_owned(),
                    }));
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
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
        // Some local servers close after the finish chunk without `[DONE]`.
        if self.finish_reason.is_some() {
            return self.complete(out);
        }
        self.done = true;
        if !self.text.is_empty() {
            out.push(ProviderEvent::Block(AssistantBlock::Text {
                text: std::mem::take(&mut self.text),
            }));
        }
        Err(stream_cut())
    }
}

/// A complete (non-streaming) chat completion → events.
pub fn decode_complete(body: &Value, model: &str) -> Result<Vec<ProviderEvent>, ProviderError> {
    let mut decoder = ChatDecoder::new(model);
    let mut out = Vec::new();
    let mut chunk = body.clone();
    if let Some(choices) = chunk.get_mut("choices").and_then(Value::as_array_mut) {
        for choice in choices {
            if let Some(obj) = choice.as_object_mut()
                && let Some(mut message) = obj.remove("message")
            {
                if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for (i, call) in calls.iter_mut().enumerate() {
                        if let Some(c) = call.as_object_mut() {
                            c.insert("index".into(), Value::from(i));
                        }
                    }
                }
                obj.insert("delta".into(), message);
            }
        }
    }
    decoder.event(
        &SseEvent {
            event: None,
            data: chunk.to_string(),
        },
        &mut out,
    )?;
    decoder.complete(&mut out)?;
    out.retain(|e| !matches!(e, ProviderEvent::Delta(_)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_complete_chat_completion_decodes_reasoning_text_and_calls() {
        let body = json!({
            "model": "deepseek-v4-flash",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Checking.", "reasoning_content": "think",
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}}]
            }}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}
        });
        let events = decode_complete(&body, "deepseek-v4-flash").unwrap();
        assert_eq!(
            events,
            vec![
                ProviderEvent::Started {
                    model: "deepseek-v4-flash".into()
                },
                ProviderEvent::Block(AssistantBlock::Thinking {
                    text: "think".into(),
                    signature: None,
                    model: "deepseek-v4-flash".into(),
                    item_id: None
                }),
                ProviderEvent::Block(AssistantBlock::Text {
                    text: "Checking.".into()
                }),
                ProviderEvent::Block(AssistantBlock::ToolUse {
                    id: ToolUseId::new("call_1"),
                    name: "Read".into(),
                    input: json!({"file_path": "a"})
                }),
                ProviderEvent::Usage(Usage {
                    input_tokens: 36,
                    output_tokens: 9,
                    cache_read_tokens: 64,
                    cache_write_tokens: 0,
                    web_searches: 0,
                }),
                ProviderEvent::Stop {
                    reason: StopReason::ToolUse
                },
            ]
        );
    }

    #[test]
    fn an_error_chunk_mid_stream_is_classified() {
        let mut decoder = ChatDecoder::new("m");
        let mut out = Vec::new();
        let data =
            json!({"error": {"message": "Rate limit exceeded", "code": "rate_limit_exceeded"}})
                .to_string();
        let err = decoder
            .event(&SseEvent { event: None, data }, &mut out)
            .unwrap_err();
        assert_eq!(err.kind, riot_protocol::ProviderErrorKind::RateLimit);
        assert_eq!(err.message, "Rate limit exceeded");
    }
}
