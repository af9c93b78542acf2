//! Replies in which the provider searched the web on its own servers, as
//! Anthropic's Messages API and OpenAI's Responses API stream them: the
//! search's call and its result, then the model's text citing it.

use serde_json::{Value, json};

use crate::script::Reply;

/// One page a search found: its title and URL.
pub type Found<'a> = (&'a str, &'a str);

/// What a scripted search gives back.
#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    /// The pages it found.
    Found(&'a [Found<'a>]),
    /// Anthropic's error code (`max_uses_exceeded`, `unavailable`, …), or
    /// a failed call on the Responses API.
    Failed(&'a str),
}

/// An Anthropic reply: a `server_tool_use` of `web_search` for `query`
/// (its input streamed as JSON deltas), the `web_search_tool_result`
/// with each page's encrypted content, then `text`; the usage counts one
/// search, and the reply ends with `end_turn`.
pub fn anthropic(id: &str, query: &str, outcome: Outcome<'_>, text: &str) -> Reply {
    anthropic_reply(id, Some(query), Some(outcome), text)
}

/// [`anthropic`], paused by the server right after the search started
/// (`stop_reason: "pause_turn"`): the call, and no result.
pub fn anthropic_paused(id: &str, query: &str) -> Reply {
    anthropic_reply(id, Some(query), None, "")
}

/// The reply that goes on after [`anthropic_paused`]: the search's result,
/// then `text` (the call was in the paused reply).
pub fn anthropic_continued(id: &str, outcome: Outcome<'_>, text: &str) -> Reply {
    anthropic_reply(id, None, Some(outcome), text)
}

fn anthropic_reply(
    id: &str,
    query: Option<&str>,
    outcome: Option<Outcome<'_>>,
    text: &str,
) -> Reply {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_search", "type": "message", "role": "assistant",
            "model": "mock-model", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    ];
    if let Some(query) = query {
        events.push(
            json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {}}}),
        );
        events.push(json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "input_json_delta", "partial_json": json!({"query": query}).to_string()}}));
        events.push(json!({"type": "content_block_stop", "index": 0}));
    }
    let paused = outcome.is_none();
    if let Some(outcome) = outcome {
        let content = match outcome {
            Outcome::Found(pages) => Value::Array(
                pages
                    .iter()
                    .enumerate()
                    .map(|(i, (title, url))| {
                        json!({"type": "web_search_result", "title": title, "url": url,
                               "encrypted_content": format!("ENCRYPTED-PAGE-{i}"), "page_age": "2 days ago"})
                    })
                    .collect(),
            ),
            Outcome::Failed(code) => {
                json!({"type": "web_search_tool_result_error", "error_code": code})
            }
        };
        events.push(
            json!({"type": "content_block_start", "index": 1, "content_block":
            {"type": "web_search_tool_result", "tool_use_id": id, "content": content}}),
        );
        events.push(json!({"type": "content_block_stop", "index": 1}));
        events.push(json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": text}}));
        events.push(json!({"type": "content_block_stop", "index": 2}));
    }
    let stop = if paused { "pause_turn" } else { "end_turn" };
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
        "usage": {"output_tokens": 20, "server_tool_use": {"web_search_requests": 1}}}),
    );
    events.push(json!({"type": "message_stop"}));
    Reply::Events(events)
}

/// A Responses reply: a `web_search_call` item for `query` (with its
/// sources, as `include: ["web_search_call.action.sources"]` asks), then
/// a message with `text`.
pub fn responses(id: &str, query: &str, outcome: Outcome<'_>, text: &str) -> Reply {
    let (status, sources) = match outcome {
        Outcome::Found(pages) => (
            "completed",
            pages
                .iter()
                .map(|(_, url)| json!({"type": "url", "url": url}))
                .collect::<Vec<_>>(),
        ),
        Outcome::Failed(_) => ("failed", Vec::new()),
    };
    let call = json!({"id": id, "type": "web_search_call", "status": status,
        "action": {"type": "search", "query": query, "sources": sources}});
    let message = json!({"id": "msg_search", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}]});
    Reply::Events(vec![
        json!({"type": "response.created", "response": {"id": "resp_search", "model": "mock-model", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": id, "type": "web_search_call", "status": "in_progress"}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"id": "msg_search", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "delta": text}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
        json!({"type": "response.completed", "response": {"id": "resp_search", "model": "mock-model", "status": "completed",
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20}}}),
    ])
}
