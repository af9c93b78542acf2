//! `ModelRequest` → OpenAI Responses request body: `store: false`,
//! encrypted reasoning requested and replayed unchanged, tool calls and
//! outputs paired by `call_id` (ARCHITECTURE §11).

use riot_protocol::{
    AssistantBlock, Message, ModelCapabilities, ModelRequest, ToolResultContent, UserBlock,
};
use serde_json::{Map, Value, json};

use crate::chat::request::EMPTY_RESULT;
use crate::history::{IMAGE_OMITTED, attachment_text, data_url, prepare, result_text};

fn image_part(caps: &ModelCapabilities, media_type: &str, data: &str) -> Value {
    if caps.vision {
        json!({"type": "input_image", "image_url": data_url(media_type, data)})
    } else {
        json!({"type": "input_text", "text": IMAGE_OMITTED})
    }
}

/// Builds the Responses body.
pub fn build(request: &ModelRequest, caps: &ModelCapabilities) -> Value {
    let history = prepare(&request.messages, &request.model);
    let mut input = Vec::new();
    for message in &history {
        match message {
            Message::User(user) => {
                let mut parts = Vec::new();
                for block in &user.content {
                    match block {
                        UserBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                            ..
                        } => {
                            let mut text = result_text(content);
                            if text.is_empty() {
                                text = EMPTY_RESULT.to_owned();
                            }
                            if *is_error {
                                text = format!("Error: {text}");
                            }
                            input.push(json!({"type": "function_call_output", "call_id": tool_use_id.as_str(), "output": text}));
                            for c in content {
                                if let ToolResultContent::Image { source } = c {
                                    parts.push(image_part(caps, &source.media_type, &source.data));
                                }
                            }
                        }
                        UserBlock::Text { text } => {
                            parts.push(json!({"type": "input_text", "text": text}))
                        }
                        UserBlock::Attachment { title, text } => {
                            parts.push(
                                json!({"type": "input_text", "text": attachment_text(title, text)}),
                            );
                        }
                        UserBlock::Image { source } => {
                            parts.push(image_part(caps, &source.media_type, &source.data));
                        }
                    }
                }
                if !parts.is_empty() {
                    input.push(json!({"role": "user", "content": parts}));
                }
            }
            Message::Assistant(assistant) => {
                for block in &assistant.content {
                    match block {
                        // Reasoning goes back exactly as it came: same id,
                        // same encrypted content.
                        AssistantBlock::Thinking {
                            text,
                            signature: Some(encrypted),
                            item_id,
                            ..
                        } => {
                            let mut item = Map::new();
                            item.insert("type".into(), "reasoning".into());
                            if let Some(id) = item_id {
                                item.insert("id".into(), id.clone().into());
                            }
                            let summary: Vec<Value> = if text.is_empty() {
                                Vec::new()
                            } else {
                                vec![json!({"type": "summary_text", "text": text})]
                            };
                            item.insert("summary".into(), Value::Array(summary));
                            item.insert("encrypted_content".into(), encrypted.clone().into());
                            input.push(Value::Object(item));
                        }
                        AssistantBlock::Thinking {
                            signature: None, ..
                        }
                        | AssistantBlock::RedactedThinking { .. } => {}
                        AssistantBlock::Text { text } => input.push(json!({
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text}],
                        })),
                        AssistantBlock::ToolUse {
                            id,
                            name,
                            input: args,
                        } => input.push(json!({
                            "type": "function_call",
                            "call_id": id.as_str(),
                            "name": name,
                            "arguments": args.to_string(),
                        })),
                    }
                }
            }
            Message::System(_) => {}
        }
    }

    let mut instructions = request.system.stable.clone();
    if !request.system.session.is_empty() {
        if !instructions.is_empty() {
            instructions.push_str("\n\n");
        }
        instructions.push_str(&request.system.session);
    }
    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    if !instructions.is_empty() {
        body.insert("instructions".into(), instructions.into());
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("max_output_tokens".into(), request.max_tokens.into());
    if request.thinking.is_some() && caps.thinking {
        body.insert(
            "reasoning".into(),
            json!({"effort": "medium", "summary": "auto"}),
        );
    }
    body.insert("store".into(), false.into());
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(key) = &request.cache.session_key {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
    body.insert("stream".into(), request.stream.into());
    Value::Object(body)
}
