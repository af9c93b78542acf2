//! Strict request validation (docs/testing.md "a strict mock model server"):
//! reject what the real APIs reject, with realistic 400 bodies. A lenient
//! mock is how pairing bugs reach users.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::script::{ReasoningRule, Wire};

/// A rejection: HTTP status and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub status: u16,
    pub body: Value,
}

/// An error body in the wire's own shape.
pub fn error_body(wire: Wire, message: &str) -> Value {
    match wire {
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        Wire::Openai | Wire::OpenaiResponses => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
    }
}

fn reject(wire: Wire, message: String) -> Result<(), Rejection> {
    Err(Rejection {
        status: 400,
        body: error_body(wire, &message),
    })
}

/// Validates a request body; `Ok` when the real API would accept it.
pub fn validate(wire: Wire, rule: ReasoningRule, body: &Value) -> Result<(), Rejection> {
    match wire {
        Wire::Anthropic => anthropic(body),
        Wire::Openai => chat(body, rule),
        Wire::OpenaiResponses => responses(body),
    }
}

/// Rejects a request that does not fit a context window of `window`
/// tokens, as the real APIs do: the input, counted as body bytes / 4, plus
/// the output the request reserves (`max_tokens`, `max_completion_tokens`
/// or `max_output_tokens`) must fit. The message is the wire's own.
pub fn check_window(
    wire: Wire,
    body: &Value,
    body_bytes: usize,
    window: u64,
) -> Result<(), Rejection> {
    let input = (body_bytes as u64).div_ceil(4);
    let output = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(0);
    if input + output <= window {
        return Ok(());
    }
    let (message, code) = match wire {
        Wire::Anthropic if input > window => (
            format!("prompt is too long: {input} tokens > {window} maximum"),
            None,
        ),
        Wire::Anthropic => (
            format!(
                "input length and `max_tokens` exceed context limit: {input} + {output} > {window}, decrease input length or `max_tokens` and try again"
            ),
            None,
        ),
        Wire::Openai => (
            format!(
                "This model's maximum context length is {window} tokens. However, you requested {} tokens ({input} in the messages, {output} in the completion). Please reduce the length of the messages or completion.",
                input + output
            ),
            Some("context_length_exceeded"),
        ),
        Wire::OpenaiResponses => (
            "Your input exceeds the context window of this model. Please adjust your input and try again.".to_owned(),
            Some("context_length_exceeded"),
        ),
    };
    let mut body = error_body(wire, &message);
    if let Some(code) = code {
        body["error"]["code"] = json!(code);
    }
    Err(Rejection { status: 400, body })
}

/// Rejects, as an endpoint requiring strict alternation would, two user
/// messages in a row, or two assistant messages without a tool message
/// between them (Chat Completions). Responses input is not checked. Used by
/// the server when the script says [`RoleRule::Alternate`]; the rest of
/// [`validate`] applies as well.
///
/// [`RoleRule::Alternate`]: crate::script::RoleRule::Alternate
pub fn check_alternation(wire: Wire, body: &Value) -> Result<(), Rejection> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    let mut previous: Option<&str> = None;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        match wire {
            Wire::OpenaiResponses => return Ok(()),
            Wire::Anthropic => {
                if previous == Some(role) {
                    return reject(
                        wire,
                        format!(
                            "messages.{i}: roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"
                        ),
                    );
                }
            }
            Wire::Openai => {
                if role == "system" || role == "developer" {
                    continue;
                }
                if previous == Some(role) && (role == "user" || role == "assistant") {
                    return reject(
                        wire,
                        format!(
                            "Conversation roles must alternate user/assistant/user/assistant/... (messages[{i}] is a second '{role}' message in a row)"
                        ),
                    );
                }
            }
        }
        previous = Some(role);
    }
    Ok(())
}

fn count_cache_control(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("cache_control"))
                + m.values().map(count_cache_control).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_cache_control).sum(),
        _ => 0,
    }
}

/// The media types every one of the three APIs accepts for an image.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Anthropic's limit on one image (encoded, before base64).
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

fn magic_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Checks an inline image as the APIs do: a known media type, valid
/// base64 (standard alphabet, padded), bytes that are that kind of image,
/// at most 5 MB. `Err` is the reason, without the field's path.
fn check_image_data(media_type: &str, data: &str) -> Result<(), String> {
    use base64::Engine as _;
    if !IMAGE_TYPES.contains(&media_type) {
        return Err(format!(
            "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got '{media_type}')"
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| "The image data is not valid base64.".to_owned())?;
    if magic_type(&bytes) != Some(media_type) {
        return Err(format!(
            "Image does not match the provided media type {media_type}"
        ));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "image exceeds 5 MB maximum: {} bytes > {MAX_IMAGE_BYTES} bytes",
            bytes.len()
        ));
    }
    Ok(())
}

/// An OpenAI `data:` image URL; `Err` is the reason.
fn check_data_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") || url.starts_with("http://") {
        return Ok(());
    }
    let Some((media_type, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    else {
        return Err(
            "Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,...') or an https URL.".to_owned(),
        );
    };
    check_image_data(media_type, data)
}

/// An Anthropic image block at `at` (e.g. `messages.1.content.0`).
fn anthropic_image(b: &Value, at: &str) -> Result<(), Rejection> {
    let source = b.get("source").unwrap_or(&Value::Null);
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let media_type = source
                .get("media_type")
                .and_then(Value::as_str)
                .unwrap_or("");
            let data = source.get("data").and_then(Value::as_str).unwrap_or("");
            check_image_data(media_type, data)
                .or_else(|why| reject(Wire::Anthropic, format!("{at}.image.source.base64: {why}")))
        }
        Some("url") => Ok(()),
        _ => reject(
            Wire::Anthropic,
            format!(
                "{at}.image.source: Input tag does not match any of the expected tags: 'base64', 'url'"
            ),
        ),
    }
}

/// Anthropic's limit on PDF pages in one request, over all its documents.
pub const MAX_DOCUMENT_PAGES: usize = 100;
/// Anthropic's limit on a request body.
pub const MAX_ANTHROPIC_BODY_BYTES: usize = 32 * 1024 * 1024;

/// An Anthropic document block at `at`: a base64 PDF that parses. Returns
/// its page count.
fn anthropic_document(b: &Value, at: &str) -> Result<usize, Rejection> {
    use base64::Engine as _;
    let w = Wire::Anthropic;
    let source = b.get("source").unwrap_or(&Value::Null);
    if source.get("type").and_then(Value::as_str) != Some("base64") {
        reject(
            w,
            format!(
                "{at}.document.source: Input tag does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'"
            ),
        )?;
    }
    let media_type = source
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    if media_type != "application/pdf" {
        reject(
            w,
            format!("{at}.document.source.base64.media_type: Input should be 'application/pdf'"),
        )?;
    }
    let data = source.get("data").and_then(Value::as_str).unwrap_or("");
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        reject(
            w,
            format!("{at}.document.source.base64.data: The PDF data is not valid base64."),
        )?;
        return Ok(0);
    };
    let pages = bytes
        .starts_with(b"%PDF-")
        .then(|| lopdf::Document::load_mem(&bytes).ok())
        .flatten()
        .filter(|doc| !doc.is_encrypted())
        .map(|doc| doc.get_pages().len());
    match pages {
        Some(n) if n > 0 => Ok(n),
        _ => {
            reject(w, "The PDF specified was not valid.".to_owned())?;
            Ok(0)
        }
    }
}

/// Counts the bytes of a serialized body without keeping them.
#[derive(Default)]
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The keys Anthropic's web search tool takes.
const WEB_SEARCH_KEYS: &[&str] = &[
    "type",
    "name",
    "max_uses",
    "allowed_domains",
    "blocked_domains",
    "user_location",
    "cache_control",
];

/// `tools`: client tools (`name`, `input_schema`) and the server tools the
/// API knows, each with only its own keys.
fn anthropic_tools(body: &Value) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    let Some(tools) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(());
    };
    let Some(tools) = tools.as_array() else {
        return reject(w, "tools: Input should be a valid list".into());
    };
    for (i, tool) in tools.iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        match tool.get("type").and_then(Value::as_str) {
            None | Some("custom") => {
                if name.is_empty() {
                    return reject(w, format!("tools.{i}.custom.name: Field required"));
                }
                if !tool.get("input_schema").is_some_and(Value::is_object) {
                    return reject(w, format!("tools.{i}.custom.input_schema: Field required"));
                }
            }
            Some("web_search_20250305") => {
                let at = format!("tools.{i}.web_search_20250305");
                if name != "web_search" {
                    return reject(w, format!("{at}.name: Input should be 'web_search'"));
                }
                if let Some(key) = tool
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.keys())
                    .find(|k| !WEB_SEARCH_KEYS.contains(&k.as_str()))
                {
                    return reject(w, format!("{at}.{key}: Extra inputs are not permitted"));
                }
                if let Some(max) = tool.get("max_uses")
                    && max.as_u64().is_none_or(|n| n == 0)
                {
                    return reject(w, format!("{at}.max_uses: Input should be greater than 0"));
                }
                if tool.get("allowed_domains").is_some() && tool.get("blocked_domains").is_some() {
                    return reject(
                        w,
                        format!("{at}: allowed_domains and blocked_domains cannot both be set"),
                    );
                }
            }
            Some(other) => {
                return reject(
                    w,
                    format!(
                        "tools.{i}: Input tag '{other}' found using 'type' does not match any of the expected tags: 'custom', 'web_search_20250305'"
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The provider's searches in assistant turns (consecutive assistant
/// messages joined, as the API joins them): a result follows its call in
/// the same turn, and a call has its result in that turn unless the turn
/// is the request's last (a paused reply sent back to go on).
fn server_search_pairing(turns: &[(String, Vec<Value>, usize)]) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    let str_of = |b: &Value, key: &str| b.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    for (n, (role, blocks, i)) in turns.iter().enumerate() {
        if role != "assistant" {
            continue;
        }
        let mut open: Vec<String> = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("server_tool_use") => open.push(str_of(b, "id")),
                Some("web_search_tool_result") => {
                    let id = str_of(b, "tool_use_id");
                    let Some(at) = open.iter().position(|o| *o == id) else {
                        return reject(
                            w,
                            format!(
                                "messages.{i}: `web_search_tool_result` block with tool_use_id {id} has no corresponding `server_tool_use` block before it"
                            ),
                        );
                    };
                    open.remove(at);
                }
                _ => {}
            }
        }
        if !open.is_empty() && n + 1 != turns.len() {
            return reject(
                w,
                format!(
                    "messages.{i}: web_search tool use with id {} was found without a corresponding web_search_tool_result block",
                    open.join(", ")
                ),
            );
        }
    }
    Ok(())
}

fn anthropic(body: &Value) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    let mut size = ByteCount::default();
    if serde_json::to_writer(&mut size, body).is_ok() && size.0 > MAX_ANTHROPIC_BODY_BYTES {
        return Err(Rejection {
            status: 413,
            body: json!({"type": "error", "error": {"type": "request_too_large",
                "message": "Request exceeds the maximum allowed number of bytes."}}),
        });
    }
    let mut document_pages = 0;
    if body
        .get("model")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return reject(w, "model: Field required".into());
    }
    let Some(max_tokens) = body.get("max_tokens").and_then(Value::as_u64) else {
        return reject(w, "max_tokens: Field required".into());
    };
    if let Some(thinking) = body.get("thinking") {
        match thinking.get("type").and_then(Value::as_str) {
            Some("disabled") => {}
            Some("enabled") => {
                let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_u64) else {
                    return reject(w, "thinking.enabled.budget_tokens: Field required".into());
                };
                if budget < 1024 {
                    return reject(
                        w,
                        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
                    );
                }
                if max_tokens <= budget {
                    return reject(
                        w,
                        "`max_tokens` must be greater than `thinking.budget_tokens`".into(),
                    );
                }
            }
            _ => {
                return reject(
                    w,
                    "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled'".into(),
                );
            }
        }
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(w, "messages: Field required".into());
    };
    if messages.is_empty() {
        return reject(w, "messages: at least one message is required".into());
    }
    anthropic_tools(body)?;
    let declares_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let uses_tools = messages.iter().any(|m| {
        m.get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("tool_use" | "tool_result")
                )
            })
    });
    if uses_tools && !declares_tools {
        return reject(
            w,
            "Requests which include `tool_use` or `tool_result` blocks must define tools.".into(),
        );
    }
    let breakpoints = count_cache_control(body);
    if breakpoints > 4 {
        return reject(
            w,
            format!(
                "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
            ),
        );
    }
    // Consecutive same-role turns are merged by the real API, not rejected.
    let mut turns: Vec<(String, Vec<Value>, usize)> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if role != "user" && role != "assistant" {
            return reject(
                w,
                format!("messages.{i}.role: Input should be 'user' or 'assistant'"),
            );
        }
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) if !s.is_empty() => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            _ => {
                return reject(
                    w,
                    format!(
                        "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
                    ),
                );
            }
        };
        for (j, b) in blocks.iter().enumerate() {
            let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
            if kind == "text"
                && b.get("text")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                return reject(
                    w,
                    format!("messages.{i}.content.{j}.text: text content blocks must be non-empty"),
                );
            }
            if kind == "thinking"
                && b.get("signature")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                return reject(
                    w,
                    format!("messages.{i}.content.{j}.thinking.signature: Field required"),
                );
            }
            if kind == "tool_use" && !b.get("input").is_some_and(Value::is_object) {
                return reject(
                    w,
                    format!(
                        "messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"
                    ),
                );
            }
            if matches!(kind, "server_tool_use" | "web_search_tool_result") && role != "assistant" {
                return reject(
                    w,
                    format!(
                        "messages.{i}.content.{j}: `{kind}` blocks may only appear in assistant messages"
                    ),
                );
            }
            if kind == "image" {
                anthropic_image(b, &format!("messages.{i}.content.{j}"))?;
            }
            if kind == "document" {
                document_pages += anthropic_document(b, &format!("messages.{i}.content.{j}"))?;
            }
            if kind == "tool_result" {
                let inner = b.get("content").and_then(Value::as_array);
                for (k, c) in inner.into_iter().flatten().enumerate() {
                    let at = format!("messages.{i}.content.{j}.tool_result.content.{k}");
                    match c.get("type").and_then(Value::as_str).unwrap_or("") {
                        "text" => {}
                        "image" => anthropic_image(c, &at)?,
                        "document" => document_pages += anthropic_document(c, &at)?,
                        other => {
                            return reject(
                                w,
                                format!(
                                    "messages.{i}.content.{j}.tool_result.content.{k}: Input tag '{other}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'"
                                ),
                            );
                        }
                    }
                }
            }
            if kind == "tool_result" && b.get("ui").is_some() {
                return reject(
                    w,
                    format!(
                        "messages.{i}.content.{j}.tool_result.ui: Extra inputs are not permitted"
                    ),
                );
            }
        }
        match turns.last_mut() {
            Some((r, acc, _)) if *r == role => acc.extend(blocks),
            _ => turns.push((role, blocks, i)),
        }
    }
    server_search_pairing(&turns)?;
    if document_pages > MAX_DOCUMENT_PAGES {
        return reject(
            w,
            format!("A maximum of {MAX_DOCUMENT_PAGES} PDF pages may be provided."),
        );
    }
    let mut pending: Vec<String> = Vec::new();
    for (role, blocks, i) in &turns {
        let kind = |b: &Value| {
            b.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        if role == "assistant" {
            pending = blocks
                .iter()
                .filter(|b| kind(b) == "tool_use")
                .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect();
            continue;
        }
        let mut seen_other = false;
        let mut answered = HashSet::new();
        for (j, b) in blocks.iter().enumerate() {
            if kind(b) == "tool_result" {
                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                if seen_other && !pending.is_empty() {
                    return reject(
                        w,
                        format!(
                            "messages.{i}.content.{j}: tool_result blocks must come before any other content in the user message that follows tool use"
                        ),
                    );
                }
                if !pending.iter().any(|p| p == id) {
                    return reject(
                        w,
                        format!(
                            "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        ),
                    );
                }
                answered.insert(id.to_owned());
            } else {
                seen_other = true;
            }
        }
        let missing: Vec<&str> = pending
            .iter()
            .filter(|p| !answered.contains(*p))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return reject(
                w,
                format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ),
            );
        }
        pending.clear();
    }
    if let Some((role, _, i)) = turns.last()
        && role == "assistant"
        && !pending.is_empty()
    {
        return reject(
            w,
            format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                pending.join(", ")
            ),
        );
    }
    Ok(())
}

/// The reasoning efforts OpenAI's APIs take.
const EFFORTS: [&str; 5] = ["none", "minimal", "low", "medium", "high"];

fn check_effort(w: Wire, field: &str, effort: Option<&Value>) -> Result<(), Rejection> {
    match effort {
        None => Ok(()),
        Some(Value::String(e)) if EFFORTS.contains(&e.as_str()) => Ok(()),
        Some(other) => reject(
            w,
            format!(
                "Invalid value for '{field}': {other}. Supported values are: 'none', 'minimal', 'low', 'medium', and 'high'."
            ),
        ),
    }
}

fn chat(body: &Value, rule: ReasoningRule) -> Result<(), Rejection> {
    let w = Wire::Openai;
    check_effort(w, "reasoning_effort", body.get("reasoning_effort"))?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(w, "Missing required parameter: 'messages'.".into());
    };
    // Ids of the last assistant `tool_calls` still waiting for answers.
    let mut open: Option<(usize, Vec<String>)> = None;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if let Some(Value::String(s)) = m.get("content")
            && s.is_empty()
        {
            return reject(
                w,
                format!(
                    "Invalid 'messages[{i}].content': string too short. Expected a string with minimum length 1, but got an empty string instead."
                ),
            );
        }
        if let Some(parts) = m.get("content").and_then(Value::as_array) {
            for (k, part) in parts.iter().enumerate() {
                if part.get("type").and_then(Value::as_str) != Some("image_url") {
                    continue;
                }
                if role != "user" {
                    return reject(
                        w,
                        format!(
                            "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL."
                        ),
                    );
                }
                let url = part
                    .pointer("/image_url/url")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Err(why) = check_data_url(url) {
                    return reject(
                        w,
                        format!(
                            "Invalid image URL: 'messages[{i}].content[{k}].image_url.url'. {why}"
                        ),
                    );
                }
            }
        }
        if m.get("reasoning_content").is_some() && rule == ReasoningRule::Reject {
            return reject(
                w,
                format!("Unrecognized request argument supplied: messages[{i}].reasoning_content"),
            );
        }
        if role != "tool"
            && let Some((at, ids)) = &open
            && !ids.is_empty()
        {
            return reject(
                w,
                format!(
                    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {} (messages[{at}])",
                    ids.join(", ")
                ),
            );
        }
        match role {
            "system" | "developer" | "user" => open = None,
            "assistant" => {
                let calls = m.get("tool_calls").and_then(Value::as_array);
                let mut ids = Vec::new();
                for (j, call) in calls.into_iter().flatten().enumerate() {
                    if call.get("type").and_then(Value::as_str) != Some("function") {
                        return reject(
                            w,
                            format!(
                                "Missing required parameter: 'messages[{i}].tool_calls[{j}].type'."
                            ),
                        );
                    }
                    let args = call.pointer("/function/arguments");
                    if !args.is_some_and(Value::is_string) {
                        let got = match args {
                            Some(Value::Object(_)) => "an object",
                            Some(Value::Array(_)) => "an array",
                            None => "nothing",
                            _ => "a non-string value",
                        };
                        return reject(
                            w,
                            format!(
                                "Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string, but got {got} instead."
                            ),
                        );
                    }
                    ids.push(
                        call.get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                    );
                }
                if !ids.is_empty()
                    && rule == ReasoningRule::RequireOnToolTurns
                    && m.get("reasoning_content").is_none()
                {
                    return reject(
                        w,
                        format!(
                            "Missing `reasoning_content` field in the assistant message at message index {i}. In thinking mode, the `reasoning_content` of assistant messages that made tool calls must be passed back to the API."
                        ),
                    );
                }
                let content_ok = match m.get("content") {
                    Some(Value::String(_)) | Some(Value::Array(_)) => true,
                    None | Some(Value::Null) => !ids.is_empty(),
                    _ => false,
                };
                if !content_ok {
                    return reject(
                        w,
                        format!(
                            "Invalid value for 'messages[{i}].content': an assistant message needs content or tool_calls."
                        ),
                    );
                }
                open = Some((i, ids));
            }
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let answered = match &mut open {
                    Some((_, ids)) => match ids.iter().position(|x| x == id) {
                        Some(p) => {
                            ids.remove(p);
                            true
                        }
                        None => false,
                    },
                    None => false,
                };
                if !answered {
                    return reject(w, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into());
                }
            }
            other => {
                return reject(
                    w,
                    format!(
                        "Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'."
                    ),
                );
            }
        }
    }
    if let Some((at, ids)) = open
        && !ids.is_empty()
    {
        return reject(
            w,
            format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {} (messages[{at}])",
                ids.join(", ")
            ),
        );
    }
    Ok(())
}

/// What the Responses API's `include` takes.
const RESPONSES_INCLUDES: &[&str] = &[
    "reasoning.encrypted_content",
    "web_search_call.action.sources",
    "web_search_call.results",
    "code_interpreter_call.outputs",
    "computer_call_output.output.image_url",
    "file_search_call.results",
    "message.input_image.image_url",
    "message.output_text.logprobs",
];

/// `tools`, `include` and `max_tool_calls` as the Responses API checks them.
fn responses_tools(body: &Value) -> Result<(), Rejection> {
    let w = Wire::OpenaiResponses;
    for (i, tool) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match tool.get("type").and_then(Value::as_str).unwrap_or("") {
            "function" => {
                if tool
                    .get("name")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    return reject(w, format!("Missing required parameter: 'tools[{i}].name'."));
                }
            }
            "web_search" | "web_search_2025_08_26" => {
                if let Some(key) = tool
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.keys())
                    .find(|k| {
                        !matches!(
                            k.as_str(),
                            "type" | "filters" | "search_context_size" | "user_location"
                        )
                    })
                {
                    return reject(w, format!("Unknown parameter: 'tools[{i}].{key}'."));
                }
            }
            other => {
                return reject(
                    w,
                    format!(
                        "Invalid value: '{other}'. Supported values are: 'function', 'web_search', 'web_search_2025_08_26', 'file_search', 'computer_use_preview', 'code_interpreter', 'image_generation', 'mcp' and 'local_shell'."
                    ),
                );
            }
        }
    }
    for (i, value) in body
        .get("include")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = value.as_str().unwrap_or("");
        if !RESPONSES_INCLUDES.contains(&name) {
            return reject(
                w,
                format!("Invalid value: '{name}'. Supported values are listed for 'include[{i}]'."),
            );
        }
    }
    if let Some(max) = body.get("max_tool_calls")
        && max.as_u64().is_none_or(|n| n == 0)
    {
        return reject(
            w,
            "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1.".into(),
        );
    }
    Ok(())
}

fn responses(body: &Value) -> Result<(), Rejection> {
    let w = Wire::OpenaiResponses;
    responses_tools(body)?;
    check_effort(
        w,
        "reasoning.effort",
        body.get("reasoning").and_then(|r| r.get("effort")),
    )?;
    let Some(input) = body.get("input").and_then(Value::as_array) else {
        return reject(w, "Missing required parameter: 'input'.".into());
    };
    let store = body.get("store").and_then(Value::as_bool).unwrap_or(true);
    let mut calls: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (i, item) in input.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "function_call" => {
                if !item.get("arguments").is_some_and(Value::is_string) {
                    return reject(
                        w,
                        format!(
                            "Invalid type for 'input[{i}].arguments': expected a string, but got an object instead."
                        ),
                    );
                }
                calls.push(
                    item.get("call_id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                );
            }
            "function_call_output" => {
                let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                if !calls.iter().any(|c| c == id) {
                    return reject(
                        w,
                        format!("No tool call found for function call output with call_id {id}."),
                    );
                }
                answered.insert(id.to_owned());
            }
            "reasoning" => {
                if !store
                    && item
                        .get("encrypted_content")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                    return reject(
                        w,
                        format!(
                            "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                        ),
                    );
                }
            }
            _ => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                let parts = item.get("content").and_then(Value::as_array);
                for (k, part) in parts.into_iter().flatten().enumerate() {
                    let t = part.get("type").and_then(Value::as_str).unwrap_or("");
                    match t {
                        "input_image" if role == "assistant" => {
                            return reject(
                                w,
                                format!(
                                    "Invalid value: 'input_image'. Supported values are: 'output_text' and 'refusal'. (input[{i}].content[{k}])"
                                ),
                            );
                        }
                        "input_image" => {
                            let url = part.get("image_url").and_then(Value::as_str).unwrap_or("");
                            if let Err(why) = check_data_url(url) {
                                return reject(
                                    w,
                                    format!("Invalid 'input[{i}].content[{k}].image_url'. {why}"),
                                );
                            }
                        }
                        "image_url" => {
                            return reject(
                                w,
                                format!(
                                    "Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'. (input[{i}].content[{k}].type)"
                                ),
                            );
                        }
                        _ => {}
                    }
                }
                if role == "user"
                    && let Some(missing) = calls.iter().find(|c| !answered.contains(*c))
                {
                    return reject(
                        w,
                        format!("No tool output found for function call {missing}."),
                    );
                }
            }
        }
    }
    if let Some(missing) = calls.iter().find(|c| !answered.contains(*c)) {
        return reject(
            w,
            format!("No tool output found for function call {missing}."),
        );
    }
    Ok(())
}
