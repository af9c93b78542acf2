//! `ModelRequest` → Anthropic Messages request body.

use riot_protocol::invariants::{check_cache_breakpoints, enforce};
use riot_protocol::{
    AssistantBlock, Message, ModelCapabilities, ModelRequest, ServerTool, ToolResultContent,
    UserBlock,
};
use std::collections::HashSet;

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

/// Anthropic's limit on PDF pages in one request, over all its documents.
pub const MAX_DOCUMENT_PAGES: u32 = 100;
/// The request body size Riot keeps to when it adds documents: the API
/// refuses bodies over 32 MB; this leaves room for what the estimate
/// misses.
pub const MAX_BODY_BYTES: usize = 31 * 1024 * 1024;
/// Bytes a document block adds to a body beyond its base64 data.
const DOCUMENT_BLOCK_BYTES: usize = 128;

/// Which of a request's documents go as PDFs, numbered in the order they
/// appear in the history; the others go as their text.
#[derive(Debug, Default)]
struct Documents {
    sent: Vec<bool>,
    /// The next document's number.
    next: usize,
}

impl Documents {
    /// Whether the next document goes as a PDF.
    fn take(&mut self) -> bool {
        let sent = self.sent.get(self.next).copied().unwrap_or(false);
        self.next += 1;
        sent
    }
}

/// Which documents fit the API's limits, given each one's pages and base64
/// size and the size of the body with every document as text. The oldest
/// come first, so a document read later never displaces one read before it
/// and the cached prefix holds; one that does not fit goes as text, and a
/// later, smaller one may still fit.
fn admit(documents: &[(u32, usize)], base_bytes: usize) -> Vec<bool> {
    let mut pages = 0u32;
    let mut bytes = base_bytes;
    documents
        .iter()
        .map(|&(n, size)| {
            let grown = bytes
                .saturating_add(size)
                .saturating_add(DOCUMENT_BLOCK_BYTES);
            let fits = pages.saturating_add(n) <= MAX_DOCUMENT_PAGES && grown <= MAX_BODY_BYTES;
            if fits {
                pages += n;
                bytes = grown;
            }
            fits
        })
        .collect()
}

/// Each document's pages and base64 size, in history order.
fn documents_of(messages: &[Message]) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    for message in messages {
        let Message::User(user) = message else {
            continue;
        };
        for block in &user.content {
            if let UserBlock::ToolResult { content, .. } = block {
                for c in content {
                    if let ToolResultContent::Document { source, pages, .. } = c {
                        out.push((*pages, source.data.len()));
                    }
                }
            }
        }
    }
    out
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

fn body_bytes(body: &Value) -> usize {
    let mut count = ByteCount::default();
    match serde_json::to_writer(&mut count, body) {
        Ok(()) => count.0,
        // Serializing a `Value` does not fail; were it to, send no PDFs.
        Err(_) => usize::MAX,
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn user_blocks(
    content: &[UserBlock],
    caps: &ModelCapabilities,
    documents: &mut Documents,
) -> Vec<Value> {
    content
        .iter()
        .map(|block| match block {
            UserBlock::Text { text } => text_block(text),
            UserBlock::Image { source } => image(caps, &source.media_type, &source.data),
            UserBlock::Attachment { title, text } => text_block(&attachment_text(title, text)),
            UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ui: _, // never sent
            } => {
                let parts: Vec<Value> = content
                    .iter()
                    .filter_map(|c| match c {
                        ToolResultContent::Text { text } => Some(text_block(text)),
                        ToolResultContent::Image { source } => {
                            Some(image(caps, &source.media_type, &source.data))
                        }
                        ToolResultContent::Document { source, text, .. } => {
                            if documents.take() {
                                Some(json!({"type": "document", "source": {
                                    "type": "base64",
                                    "media_type": source.media_type,
                                    "data": source.data,
                                }}))
                            } else {
                                // The API refuses an empty text block.
                                (!text.is_empty()).then(|| text_block(text))
                            }
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

/// The ids of the provider's searches in a history: those started
/// (`server_tool_use`) and those answered (`web_search_tool_result`).
#[derive(Default)]
struct Searches {
    started: HashSet<String>,
    answered: HashSet<String>,
}

impl Searches {
    fn of(messages: &[Message]) -> Self {
        let mut searches = Self::default();
        for message in messages {
            let Message::Assistant(a) = message else {
                continue;
            };
            for block in &a.content {
                let AssistantBlock::WebSearch { replay, .. } = block else {
                    continue;
                };
                for raw in replay {
                    match raw.get("type").and_then(Value::as_str) {
                        Some("server_tool_use") => {
                            searches.started.insert(str_of(raw, "id"));
                        }
                        Some("web_search_tool_result") => {
                            searches.answered.insert(str_of(raw, "tool_use_id"));
                        }
                        _ => {}
                    }
                }
            }
        }
        searches
    }

    /// Whether a replayed search block can go back: a call with its result
    /// somewhere after it (the reply the server paused, then the one that
    /// went on, which the API joins into one turn), or unanswered in the
    /// last message (a paused reply, sent back so the server goes on); a
    /// result only after its call.
    fn keeps(&self, raw: &Value, last: bool) -> bool {
        match raw.get("type").and_then(Value::as_str) {
            Some("server_tool_use") => last || self.answered.contains(&str_of(raw, "id")),
            Some("web_search_tool_result") => self.started.contains(&str_of(raw, "tool_use_id")),
            _ => true,
        }
    }
}

fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn assistant_blocks(content: &[AssistantBlock], searches: &Searches, last: bool) -> Vec<Value> {
    content
        .iter()
        .flat_map(|block| match block {
            // The provider's own search blocks go back as they came (an
            // empty replay: a search made on another wire, left out), but
            // never a call without its result before the end, nor a
            // result without its call: the API refuses both.
            AssistantBlock::WebSearch { replay, .. } => replay
                .iter()
                .filter(|raw| searches.keeps(raw, last))
                .cloned()
                .collect::<Vec<Value>>(),
            other => assistant_block(other).into_iter().collect(),
        })
        .collect()
}

fn assistant_block(block: &AssistantBlock) -> Option<Value> {
    match block {
        AssistantBlock::WebSearch { .. } => None,
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
    }
}

/// A server tool as the Messages API declares it.
fn server_tool(tool: &ServerTool) -> Value {
    match tool {
        ServerTool::WebSearch { max_uses } => {
            json!({"type": WEB_SEARCH_TOOL_TYPE, "name": "web_search", "max_uses": max_uses})
        }
    }
}

/// The version of Anthropic's web search server tool Riot declares.
pub const WEB_SEARCH_TOOL_TYPE: &str = "web_search_20250305";

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

/// Builds the Messages request body. Documents go as PDFs to a model
/// that reads them (`documents` and `vision`) as far as the API's limits
/// allow: at most [`MAX_DOCUMENT_PAGES`] pages and [`MAX_BODY_BYTES`] in
/// all, the oldest first. The others, and every document for other models,
/// go as their text.
pub fn build(request: &ModelRequest, caps: &ModelCapabilities) -> Value {
    let messages = prepare(&request.messages, &request.model);
    let found = if caps.documents && caps.vision {
        documents_of(&messages)
    } else {
        Vec::new()
    };
    if found.is_empty() {
        return body(request, caps, &messages, Documents::default());
    }
    let as_text = body(request, caps, &messages, Documents::default());
    let documents = Documents {
        sent: admit(&found, body_bytes(&as_text)),
        next: 0,
    };
    body(request, caps, &messages, documents)
}

/// The body, with `documents` saying which documents go as PDFs.
fn body(
    request: &ModelRequest,
    caps: &ModelCapabilities,
    messages: &[Message],
    mut documents: Documents,
) -> Value {
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

    let searches = Searches::of(messages);
    let mut wire: Vec<Value> = messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Message::User(u) => Some(
                json!({"role": "user", "content": user_blocks(&u.content, caps, &mut documents)}),
            ),
            Message::Assistant(a) => {
                let blocks = assistant_blocks(&a.content, &searches, i + 1 == messages.len());
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
        .filter(|_| caps.thinking && thinking_allowed(messages))
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
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .chain(request.server_tools.iter().filter(|_| caps.web_search).map(server_tool))
        .collect();
    if !tools.is_empty() {
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
            server_tools: Vec::new(),
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

    fn read_result(id: &str, document: ToolResultContent) -> Message {
        Message::User(riot_protocol::UserMessage {
            id: MessageId::new(format!("r{id}")),
            content: vec![UserBlock::ToolResult {
                tool_use_id: riot_protocol::ToolUseId::new(id),
                content: vec![
                    ToolResultContent::text("doc.pdf: pages 1-2 of 9."),
                    document,
                ],
                is_error: false,
                ui: None,
            }],
            origin: riot_protocol::MessageOrigin::Person,
        })
    }

    fn read_call(id: &str) -> Message {
        Message::Assistant(riot_protocol::AssistantMessage {
            id: MessageId::new(format!("a{id}")),
            content: vec![AssistantBlock::ToolUse {
                id: riot_protocol::ToolUseId::new(id),
                name: "Read".into(),
                input: json!({"file_path": "doc.pdf"}),
            }],
            model: "claude-sonnet-4-5".into(),
            stop_reason: None,
            interrupted: false,
        })
    }

    fn document(pages: u32, data: &str, text: &str) -> ToolResultContent {
        ToolResultContent::pdf(data, pages, text)
    }

    /// A request reading one document per call, in order.
    fn reading(documents: Vec<ToolResultContent>) -> ModelRequest {
        let mut messages = vec![Message::user_text(MessageId::new("u1"), "read it")];
        for (i, d) in documents.into_iter().enumerate() {
            let id = format!("toolu_{i}");
            messages.push(read_call(&id));
            messages.push(read_result(&id, d));
        }
        ModelRequest {
            server_tools: Vec::new(),
            model: "claude-sonnet-4-5".into(),
            system: SystemPrompt::stable("stable"),
            messages,
            tools: vec![],
            max_tokens: 100,
            thinking: None,
            cache: CacheHints::default(),
            stream: true,
        }
    }

    fn searched(replay: Vec<Value>) -> Message {
        Message::Assistant(riot_protocol::AssistantMessage {
            id: MessageId::new("a_search"),
            content: vec![AssistantBlock::WebSearch {
                id: "srvtoolu_1".into(),
                query: "q".into(),
                results: Vec::new(),
                error: None,
                replay,
            }],
            model: "claude-sonnet-4-5".into(),
            stop_reason: None,
            interrupted: false,
        })
    }

    #[test]
    fn a_search_goes_back_only_whole_or_as_the_paused_end() {
        let call = json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}});
        let result =
            json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []});
        let body = |messages: Vec<Message>| {
            let request = ModelRequest {
                messages,
                ..reading(Vec::new())
            };
            build(&request, &capabilities_for("claude-sonnet-4-5", &[]))
        };
        let types = |body: &Value| -> Vec<Vec<String>> {
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| match &m["content"] {
                    Value::Array(blocks) => blocks
                        .iter()
                        .map(|b| b["type"].as_str().unwrap().to_owned())
                        .collect(),
                    _ => vec!["text".to_owned()],
                })
                .collect()
        };
        let prompt = |id: &str| Message::user_text(MessageId::new(id), "go on");
        // Paused, as the last message: the call goes back so the server
        // goes on with it.
        let paused = body(vec![prompt("u1"), searched(vec![call.clone()])]);
        assert_eq!(types(&paused)[1], ["server_tool_use"]);
        // Paused, then went on: call and result both go, the API joining
        // the two replies.
        let went_on = body(vec![
            prompt("u1"),
            searched(vec![call.clone()]),
            searched(vec![result.clone()]),
            prompt("u2"),
        ]);
        assert_eq!(types(&went_on)[1], ["server_tool_use"]);
        assert_eq!(types(&went_on)[2], ["web_search_tool_result"]);
        // Paused, then stopped (no result ever came) before the next
        // prompt: the lone call is left out; the API refuses it there.
        let stopped = body(vec![prompt("u1"), searched(vec![call]), prompt("u2")]);
        assert_eq!(types(&stopped), [vec!["text"], vec!["text"]]);
        // A result whose call is gone (compacted away) is left out too.
        let orphan = body(vec![prompt("u1"), searched(vec![result]), prompt("u2")]);
        assert_eq!(types(&orphan), [vec!["text"], vec!["text"]]);
    }

    /// The content of each tool result of a body, in order.
    fn result_contents(body: &Value) -> Vec<Value> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().unwrap().iter())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| b["content"].clone())
            .collect()
    }

    #[test]
    fn a_document_goes_as_a_pdf_only_to_a_model_that_reads_documents_and_images() {
        let request = reading(vec![document(2, "JVBERi0x", "--- Page 1 ---\nHello")]);
        let header = json!({"type": "text", "text": "doc.pdf: pages 1-2 of 9."});
        let claude = capabilities_for("claude-sonnet-4-5", &[]);
        assert_eq!(
            result_contents(&build(&request, &claude)),
            [json!([header, {"type": "document", "source": {
                "type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}}])]
        );
        let as_text = json!([header, {"type": "text", "text": "--- Page 1 ---\nHello"}]);
        for caps in [
            ModelCapabilities {
                documents: false,
                ..claude.clone()
            },
            ModelCapabilities {
                vision: false,
                ..claude.clone()
            },
            capabilities_for("my-local-model", &[]),
        ] {
            assert_eq!(
                result_contents(&build(&request, &caps)),
                std::slice::from_ref(&as_text),
                "{caps:?}"
            );
        }
    }

    #[test]
    fn a_document_with_no_text_sent_as_text_adds_no_empty_block() {
        let request = reading(vec![document(1, "JVBERi0x", "")]);
        let caps = ModelCapabilities {
            documents: false,
            ..capabilities_for("claude-sonnet-4-5", &[])
        };
        assert_eq!(
            result_contents(&build(&request, &caps)),
            [json!([{"type": "text", "text": "doc.pdf: pages 1-2 of 9."}])]
        );
    }

    #[test]
    fn documents_past_one_hundred_pages_in_a_request_go_as_text_oldest_kept() {
        // Six reads of 20 pages: the first five fill the 100 pages.
        let request = reading(
            (0..6)
                .map(|i| document(20, "JVBERi0x", &format!("text {i}")))
                .collect(),
        );
        let contents = result_contents(&build(&request, &capabilities_for("claude-opus-4-1", &[])));
        let kinds: Vec<&str> = contents
            .iter()
            .map(|c| c[1]["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "document", "document", "document", "document", "document", "text"
            ]
        );
        assert_eq!(contents[5][1]["text"], "text 5");
    }

    #[test]
    fn documents_that_would_take_the_body_past_its_limit_go_as_text() {
        let big = "A".repeat(20 * 1024 * 1024);
        let request = reading(vec![
            document(1, &big, "first"),
            document(1, &big, "second"),
            document(1, "JVBERi0x", "third"),
        ]);
        let body = build(&request, &capabilities_for("claude-sonnet-4-5", &[]));
        let contents = result_contents(&body);
        let kinds: Vec<&str> = contents
            .iter()
            .map(|c| c[1]["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["document", "text", "document"]);
        assert!(serde_json::to_vec(&body).unwrap().len() <= MAX_BODY_BYTES);
    }

    #[test]
    fn admission_counts_pages_and_bytes_in_history_order() {
        // Pages: 60 and 30 fit, 20 more would make 110, 10 more makes 100.
        let small = 10;
        assert_eq!(
            admit(&[(60, small), (30, small), (20, small), (10, small)], 0),
            [true, true, false, true]
        );
        // Bytes: what is already in the body counts, and each block's own
        // wrapping with it.
        let mb = 1024 * 1024;
        let base = 2 * mb;
        assert_eq!(
            admit(
                &[
                    (1, 20 * mb),
                    (1, 10 * mb),
                    (1, mb - 2 * DOCUMENT_BLOCK_BYTES)
                ],
                base
            ),
            [true, false, true]
        );
        assert_eq!(
            admit(&[(1, MAX_BODY_BYTES - base - DOCUMENT_BLOCK_BYTES)], base),
            [true],
            "a body exactly at the limit is allowed"
        );
        assert_eq!(
            admit(
                &[(1, MAX_BODY_BYTES - base - DOCUMENT_BLOCK_BYTES + 1)],
                base
            ),
            [false]
        );
        assert_eq!(admit(&[(101, small)], 0), [false]);
    }
}
