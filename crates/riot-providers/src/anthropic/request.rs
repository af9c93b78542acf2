//! `ModelRequest` → Anthropic Messages request body.

use riot_protocol::invariants::{check_cache_breakpoints, enforce};
use riot_protocol::{
    AssistantBlock, Message, ModelCapabilities, ModelRequest, ToolResultContent, UserBlock,
};
use serde_json::{Map, Value, json};

use crate::history::{IMAGE_OMITTED, attachment_text, prepare};

/// Anthropic's smallest thinking budget.
const MIN_THINKING_BUDGET: u32 = 1_024;

fn cache_control(long_ttl: bool) -> Value {
    if long_ttl {
        json!({"type": "ephemeral", "ttl": "1h"})
    } else {
        json!({"type": "ephemeral"})
    }
}

fn image(caps: &ModelCapabilities, media_type: &str, data: &str) -> Value {
    if caps.vision {
        json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
    } else {
        json!({"type": "text", "text": IMAGE_OMITTED})
    }
}

fn user_blocks(content: &[UserBlock], caps: &ModelCapabilities) -> Vec<Value> {
    content
        .iter()
        .map(|block| match block {
            UserBlock::Text { text } => json!({"type": "text", "text": text}),
            UserBlock::Image { source } => image(caps, &source.media_type, &source.data),
            UserBlock::Attachment { title, text } => {
                json!({"type": "text", "text": attachment_text(title, text)})
            }
            UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ui: _, // never sent
            } => {
                let parts: Vec<Value> = content
                    .iter()
                    .map(|c| match c {
                        ToolResultContent::Text { text } => json!({"type": "text", "text": text}),
                        ToolResultContent::Image { source } => {
                            image(caps, &source.media_type, &source.data)
                        }
                    })
                    .collect();
                let mut result = Map::new();
                result.insert("type".into(), "tool_result".into());
                result.insert("tool_use_id".into(), tool_use_id.as_str().into());
                if !parts.is_empty() {
                    result.insert("content".into(), Value::Array(parts));
                }
                if *is_error {
                    result.insert("is_error".into(), true.into());
                }
                Value::Object(result)
            }
        })
        .collect()
}

fn assistant_blocks(content: &[AssistantBlock]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|block| match block {
            AssistantBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            // Sent back unchanged with its signature; unsigned thinking is
            // rejected by the API and dropped.
            AssistantBlock::Thinking {
                text,
                signature: Some(signature),
                ..
            } => Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
            AssistantBlock::Thinking {
                signature: None, ..
            } => None,
            AssistantBlock::RedactedThinking { data, .. } => {
                Some(json!({"type": "redacted_thinking", "data": data}))
            }
            AssistantBlock::ToolUse { id, name, input } => {
                Some(json!({"type": "tool_use", "id": id.as_str(), "name": name, "input": input}))
            }
        })
        .collect()
}

/// docs/design.md §11: thinking is turned off when the assistant turn in
/// progress (tool use since the person's last message) has no thinking of
/// the current model — Anthropic requires such a turn to start with one.
fn thinking_allowed(messages: &[Message]) -> bool {
    for message in messages.iter().rev() {
        match message {
            Message::User(u) if u.tool_results().next().is_none() => return true,
            Message::Assistant(a) if a.has_tool_use() => {
                return a.content.iter().any(|b| {
                    matches!(
                        b,
                        AssistantBlock::Thinking {
                            signature: Some(_),
                            ..
                        } | AssistantBlock::RedactedThinking { .. }
                    )
                });
            }
            _ => {}
        }
    }
    true
}

/// Builds the Messages request body.
pub fn build(request: &ModelRequest, caps: &ModelCapabilities) -> Value {
    let messages = prepare(&request.messages, &request.model);
    let cc = cache_control(request.cache.long_ttl);
    let mut breakpoints = 0;

    let mut system = Vec::new();
    for section in [&request.system.stable, &request.system.session] {
        if section.is_empty() {
            continue;
        }
        let mut block = json!({"type": "text", "text": section});
        // The stable and session sections are byte-stable: cache up to each.
        block["cache_control"] = cc.clone();
        breakpoints += 1;
        system.push(block);
    }

    let mut wire: Vec<Value> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) => {
                Some(json!({"role": "user", "content": user_blocks(&u.content, caps)}))
            }
            Message::Assistant(a) => {
                let blocks = assistant_blocks(&a.content);
                (!blocks.is_empty()).then(|| json!({"role": "assistant", "content": blocks}))
            }
            Message::System(_) => None,
        })
        .collect();

    let mut message_level = 0;
    if request.cache.message_breakpoint
        && let Some(last) = wire
            .last_mut()
            .and_then(|m| m.get_mut("content"))
            .and_then(Value::as_array_mut)
        && let Some(block) = last.iter_mut().rev().find(|b| {
            !matches!(
                b.get("type").and_then(Value::as_str),
                Some("thinking" | "redacted_thinking")
            )
        })
    {
        block["cache_control"] = cc.clone();
        message_level = 1;
        breakpoints += 1;
    }
    enforce(check_cache_breakpoints(message_level, breakpoints));

    // Thinking counts against max_tokens: the budget is added to the
    // answer's room (up to the model's output limit), and the API wants
    // 1024 ≤ budget < max_tokens; a budget that cannot fit is shrunk, or
    // thinking is left off rather than sending a 400.
    let thinking = request
        .thinking
        .filter(|_| caps.thinking && thinking_allowed(&messages))
        .and_then(|t| {
            let max_tokens = request
                .max_tokens
                .saturating_add(t.budget_tokens)
                .min(caps.max_output_tokens.max(request.max_tokens));
            let budget = t.budget_tokens.min(max_tokens.saturating_sub(1));
            (budget >= MIN_THINKING_BUDGET).then_some((budget, max_tokens))
        });
    let max_tokens = thinking.map_or(request.max_tokens, |(_, m)| m);
    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert("max_tokens".into(), max_tokens.into());
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert("messages".into(), Value::Array(std::mem::take(&mut wire)));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some((budget, _)) = thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("stream".into(), request.stream.into());
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use riot_protocol::{CacheHints, Message, MessageId, SystemPrompt};

    use super::*;
    use crate::models::capabilities_for;

    #[test]
    fn long_ttl_marks_every_breakpoint_with_one_hour_and_no_hints_means_no_message_breakpoint() {
        let mut request = ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: SystemPrompt::stable("stable"),
            messages: vec![Message::user_text(MessageId::new("u1"), "hi")],
            tools: vec![],
            max_tokens: 100,
            thinking: None,
            cache: CacheHints {
                session_key: None,
                message_breakpoint: true,
                long_ttl: true,
            },
            stream: true,
        };
        let caps = capabilities_for("claude-sonnet-4-5", &[]);
        let body = build(&request, &caps);
        let one_hour = json!({"type": "ephemeral", "ttl": "1h"});
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "stable", "cache_control": one_hour}])
        );
        assert_eq!(body["messages"][0]["content"][0]["cache_control"], one_hour);
        request.cache = CacheHints::default();
        let body = build(&request, &caps);
        assert!(
            body["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );
    }
}
