//! The Anthropic Messages API's checks: fields, thinking, tools, content
//! blocks (images, PDFs, searches) and `tool_use` / `tool_result` pairing.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::{Rejection, check_image_data, reject};
use crate::script::Wire;

/// How many `cache_control` keys `v` holds, at any depth.
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
        return reject(
            w,
            format!(
                "{at}.document.source: Input tag does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'"
            ),
        );
    }
    let media_type = source
        .get("media_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    if media_type != "application/pdf" {
        return reject(
            w,
            format!("{at}.document.source.base64.media_type: Input should be 'application/pdf'"),
        );
    }
    let data = source.get("data").and_then(Value::as_str).unwrap_or("");
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return reject(
            w,
            format!("{at}.document.source.base64.data: The PDF data is not valid base64."),
        );
    };
    let pages = bytes
        .starts_with(b"%PDF-")
        .then(|| lopdf::Document::load_mem(&bytes).ok())
        .flatten()
        .filter(|doc| !doc.is_encrypted())
        .map(|doc| doc.get_pages().len());
    match pages {
        Some(n) if n > 0 => Ok(n),
        _ => reject(w, "The PDF specified was not valid.".to_owned()),
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
fn server_search_pairing(turns: &[Turn]) -> Result<(), Rejection> {
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

/// Consecutive same-role messages joined into one turn, as the API joins
/// them: the role, the blocks, and the index of the turn's first message.
type Turn = (String, Vec<Value>, usize);

/// Validates a Messages request body; `Ok` when the real API would
/// accept it.
pub(super) fn check_request(body: &Value) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    check_body_size(body)?;
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
        check_thinking(thinking, max_tokens)?;
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(w, "messages: Field required".into());
    };
    if messages.is_empty() {
        return reject(w, "messages: at least one message is required".into());
    }
    anthropic_tools(body)?;
    check_tools_declared(body, messages)?;
    check_cache_breakpoints(body)?;
    let (turns, document_pages) = merge_turns(messages)?;
    server_search_pairing(&turns)?;
    if document_pages > MAX_DOCUMENT_PAGES {
        return reject(
            w,
            format!("A maximum of {MAX_DOCUMENT_PAGES} PDF pages may be provided."),
        );
    }
    tool_result_pairing(&turns)
}

/// Rejects, with the API's 413, a body over [`MAX_ANTHROPIC_BODY_BYTES`].
fn check_body_size(body: &Value) -> Result<(), Rejection> {
    let mut size = ByteCount::default();
    if serde_json::to_writer(&mut size, body).is_ok() && size.0 > MAX_ANTHROPIC_BODY_BYTES {
        return Err(Rejection {
            status: 413,
            body: json!({"type": "error", "error": {"type": "request_too_large",
                "message": "Request exceeds the maximum allowed number of bytes."}}),
        });
    }
    Ok(())
}

/// `thinking`: disabled, or enabled with a budget of at least 1024 tokens
/// below `max_tokens`.
fn check_thinking(thinking: &Value, max_tokens: u64) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    match thinking.get("type").and_then(Value::as_str) {
        Some("disabled") => {}
        Some("enabled") => {
            let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_u64) else {
                return reject(w, "thinking.enabled.budget_tokens: Field required".into());
            };
            if budget < 1024 {
                return reject(
                    w,
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                        .into(),
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
    Ok(())
}

/// Rejects `tool_use` or `tool_result` blocks in a request that declares
/// no tools.
fn check_tools_declared(body: &Value, messages: &[Value]) -> Result<(), Rejection> {
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
            Wire::Anthropic,
            "Requests which include `tool_use` or `tool_result` blocks must define tools.".into(),
        );
    }
    Ok(())
}

/// Rejects more than 4 `cache_control` breakpoints anywhere in the body.
fn check_cache_breakpoints(body: &Value) -> Result<(), Rejection> {
    let breakpoints = count_cache_control(body);
    if breakpoints > 4 {
        return reject(
            Wire::Anthropic,
            format!(
                "A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
            ),
        );
    }
    Ok(())
}

/// Checks each message's role, content and blocks, and joins the messages
/// into turns. Returns the turns and the PDF pages of all documents.
fn merge_turns(messages: &[Value]) -> Result<(Vec<Turn>, usize), Rejection> {
    let w = Wire::Anthropic;
    let mut document_pages = 0;
    // Consecutive same-role turns are merged by the real API, not rejected.
    let mut turns: Vec<Turn> = Vec::new();
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
            document_pages += check_block(b, &role, i, j)?;
        }
        match turns.last_mut() {
            Some((r, acc, _)) if *r == role => acc.extend(blocks),
            _ => turns.push((role, blocks, i)),
        }
    }
    Ok((turns, document_pages))
}

/// Checks block `j` of message `i` (of role `role`); returns the PDF pages
/// it holds.
fn check_block(b: &Value, role: &str, i: usize, j: usize) -> Result<usize, Rejection> {
    let w = Wire::Anthropic;
    let mut document_pages = 0;
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
            format!("messages.{i}.content.{j}.tool_use.input: Input should be a valid dictionary"),
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
        document_pages += tool_result_content(b, i, j)?;
    }
    if kind == "tool_result" && b.get("ui").is_some() {
        return reject(
            w,
            format!("messages.{i}.content.{j}.tool_result.ui: Extra inputs are not permitted"),
        );
    }
    Ok(document_pages)
}

/// Checks the content of the `tool_result` block `j` of message `i`: text,
/// images and documents only. Returns the PDF pages it holds.
fn tool_result_content(b: &Value, i: usize, j: usize) -> Result<usize, Rejection> {
    let mut document_pages = 0;
    let inner = b.get("content").and_then(Value::as_array);
    for (k, c) in inner.into_iter().flatten().enumerate() {
        let at = format!("messages.{i}.content.{j}.tool_result.content.{k}");
        match c.get("type").and_then(Value::as_str).unwrap_or("") {
            "text" => {}
            "image" => anthropic_image(c, &at)?,
            "document" => document_pages += anthropic_document(c, &at)?,
            other => {
                return reject(
                    Wire::Anthropic,
                    format!(
                        "messages.{i}.content.{j}.tool_result.content.{k}: Input tag '{other}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'"
                    ),
                );
            }
        }
    }
    Ok(document_pages)
}

/// The client's tools over the turns: each assistant turn's `tool_use`
/// blocks are answered by `tool_result` blocks at the start of the next
/// user turn, and the request does not end on unanswered ones.
fn tool_result_pairing(turns: &[Turn]) -> Result<(), Rejection> {
    let mut pending: Vec<String> = Vec::new();
    for (role, blocks, i) in turns {
        if role == "assistant" {
            pending = blocks
                .iter()
                .filter(|b| block_kind(b) == "tool_use")
                .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect();
            continue;
        }
        check_tool_results(blocks, *i, &pending)?;
        pending.clear();
    }
    if let Some((role, _, i)) = turns.last()
        && role == "assistant"
        && !pending.is_empty()
    {
        return reject(
            Wire::Anthropic,
            format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                pending.join(", ")
            ),
        );
    }
    Ok(())
}

/// A block's `type`, or `""`.
fn block_kind(b: &Value) -> String {
    b.get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// The user turn starting at message `i`, after an assistant turn whose
/// `tool_use` ids are `pending`: its `tool_result` blocks come first, each
/// answers a pending call, and every pending call is answered.
fn check_tool_results(blocks: &[Value], i: usize, pending: &[String]) -> Result<(), Rejection> {
    let w = Wire::Anthropic;
    let mut seen_other = false;
    let mut answered = HashSet::new();
    for (j, b) in blocks.iter().enumerate() {
        if block_kind(b) == "tool_result" {
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
    Ok(())
}
