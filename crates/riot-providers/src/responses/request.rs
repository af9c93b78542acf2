//! `ModelRequest` → OpenAI Responses request body: `store: false`,
//! encrypted reasoning requested and replayed unchanged, tool calls and
//! outputs paired by `call_id` (docs/design.md §11).

use riot_protocol::{
    AssistantBlock, ImageSource, Message, ModelCapabilities, ModelRequest, ServerTool,
};
use serde_json::{Map, Value, json};

use crate::history::{IMAGE_OMITTED, UserPart, data_url, prepare, split_user, system_text};

fn image_part(caps: &ModelCapabilities, source: &ImageSource) -> Value {
    if caps.vision {
        json!({"type": "input_image", "image_url": data_url(&source.media_type, &source.data)})
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
                let split = split_user(&user.content);
                for (id, text) in split.outputs {
                    input.push(
                        json!({"type": "function_call_output", "call_id": id, "output": text}),
                    );
                }
                let parts: Vec<Value> = split
                    .parts
                    .into_iter()
                    .map(|part| match part {
                        UserPart::Text(text) => json!({"type": "input_text", "text": text}),
                        UserPart::Image(source) => image_part(caps, source),
                    })
                    .collect();
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
                        // A search's findings live on in the text that
                        // cites them; the call itself is not sent back.
                        AssistantBlock::Thinking {
                            signature: None, ..
                        }
                        | AssistantBlock::RedactedThinking { .. }
                        | AssistantBlock::WebSearch { .. } => {}
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

    let instructions = system_text(&request.system);
    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    if !instructions.is_empty() {
        body.insert("instructions".into(), instructions.into());
    }
    body.insert("input".into(), Value::Array(input));
    let searches = request
        .server_tools
        .iter()
        .filter(|_| caps.web_search)
        .map(|tool| match tool {
            ServerTool::WebSearch { max_uses } => (json!({"type": "web_search"}), *max_uses),
        });
    let mut max_searches = None;
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}))
        .chain(searches.map(|(tool, max_uses)| {
            max_searches = Some(max_uses);
            tool
        }))
        .collect();
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("max_output_tokens".into(), request.max_tokens.into());
    if let Some(thinking) = request.thinking
        && caps.thinking
    {
        body.insert(
            "reasoning".into(),
            json!({"effort": thinking.effort(), "summary": "auto"}),
        );
    }
    body.insert("store".into(), false.into());
    let mut include = vec!["reasoning.encrypted_content"];
    if let Some(max_uses) = max_searches {
        // The pages each search found, and at most this many built-in
        // tool calls (searches) in the reply.
        include.push("web_search_call.action.sources");
        body.insert("max_tool_calls".into(), max_uses.into());
    }
    body.insert("include".into(), json!(include));
    if let Some(key) = &request.cache.session_key {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
    body.insert("stream".into(), request.stream.into());
    Value::Object(body)
}
