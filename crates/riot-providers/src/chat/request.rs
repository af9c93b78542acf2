//! `ModelRequest` → Chat Completions request body (docs/design.md §11's
//! compatible-server rules).

use riot_protocol::{
    AssistantBlock, ImageSource, Message, ModelCapabilities, ModelRequest, ReasoningReplay,
};
use serde_json::{Map, Value, json};

use crate::history::{IMAGE_OMITTED, UserPart, data_url, prepare, split_user, system_text};

fn image_part(caps: &ModelCapabilities, source: &ImageSource) -> Value {
    if caps.vision {
        json!({"type": "image_url", "image_url": {"url": data_url(&source.media_type, &source.data)}})
    } else {
        json!({"type": "text", "text": IMAGE_OMITTED})
    }
}

/// A user message's parts: plain string content when it is all text.
fn user_message(parts: Vec<Value>) -> Value {
    if parts.iter().all(|p| p["type"] == "text") {
        let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        json!({"role": "user", "content": text.join("\n\n")})
    } else {
        json!({"role": "user", "content": parts})
    }
}

/// Builds the Chat Completions body. `openai` is true for OpenAI's own
/// endpoint (`max_completion_tokens`, `prompt_cache_key`).
pub fn build(request: &ModelRequest, caps: &ModelCapabilities, openai: bool) -> Value {
    let history = prepare(&request.messages, &request.model);
    let mut messages = Vec::new();
    let system = system_text(&request.system);
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &history {
        match message {
            Message::User(user) => {
                let split = split_user(&user.content);
                for (id, text) in split.outputs {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                }
                let parts: Vec<Value> = split
                    .parts
                    .into_iter()
                    .map(|part| match part {
                        UserPart::Text(text) => json!({"type": "text", "text": text}),
                        UserPart::Image(source) => image_part(caps, source),
                    })
                    .collect();
                if !parts.is_empty() {
                    messages.push(user_message(parts));
                }
            }
            Message::Assistant(assistant) => {
                let mut text = String::new();
                let mut reasoning = String::new();
                let mut calls = Vec::new();
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text { text: t } => text.push_str(t),
                        AssistantBlock::Thinking { text: t, .. } => reasoning.push_str(t),
                        AssistantBlock::RedactedThinking { .. }
                        | AssistantBlock::WebSearch { .. } => {}
                        AssistantBlock::ToolUse { id, name, input } => calls.push(json!({
                            "id": id.as_str(),
                            "type": "function",
                            // `arguments` is a JSON string, never an object.
                            "function": {"name": name, "arguments": input.to_string()},
                        })),
                    }
                }
                let replay = match caps.reasoning_replay {
                    ReasoningReplay::None => false,
                    ReasoningReplay::ToolTurns => !calls.is_empty(),
                    ReasoningReplay::All => true,
                };
                if text.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                if !text.is_empty() {
                    m.insert("content".into(), text.into());
                } else {
                    m.insert("content".into(), Value::Null);
                }
                if replay {
                    m.insert("reasoning_content".into(), reasoning.into());
                }
                if !calls.is_empty() {
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            Message::System(_) => {}
        }
    }

    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let max_key = if openai {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(max_key.into(), request.max_tokens.into());
    // Only when the person turned thinking on: without the field, a
    // reasoning model thinks as hard as its server's default.
    if let Some(thinking) = request.thinking
        && caps.thinking
    {
        body.insert("reasoning_effort".into(), thinking.effort().into());
    }
    body.insert("stream".into(), request.stream.into());
    if request.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if openai && let Some(key) = &request.cache.session_key {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use riot_protocol::{CacheHints, Message, MessageId, SystemPrompt};

    use super::*;
    use crate::models::capabilities_for;

    fn request() -> ModelRequest {
        ModelRequest {
            server_tools: Vec::new(),
            model: "gpt-5.1".into(),
            system: SystemPrompt::default(),
            messages: vec![Message::user_text(MessageId::new("u1"), "hi")],
            tools: vec![],
            max_tokens: 100,
            thinking: None,
            cache: CacheHints {
                session_key: Some("sess-1".into()),
                message_breakpoint: true,
                long_ttl: false,
            },
            stream: true,
        }
    }

    #[test]
    fn openais_own_endpoint_gets_prompt_cache_key_and_max_completion_tokens() {
        let caps = capabilities_for("gpt-5.1", &[]);
        let body = build(&request(), &caps, true);
        assert_eq!(body["prompt_cache_key"], "sess-1");
        assert_eq!(body["max_completion_tokens"], 100);
        assert!(body.get("max_tokens").is_none());
        assert!(
            body["messages"].as_array().is_some_and(|m| m.len() == 1),
            "no empty system message"
        );
        let compatible = build(&request(), &caps, false);
        assert!(compatible.get("prompt_cache_key").is_none());
        assert_eq!(compatible["max_tokens"], 100);
        let mut plain = request();
        plain.stream = false;
        assert!(build(&plain, &caps, true).get("stream_options").is_none());
    }
}
