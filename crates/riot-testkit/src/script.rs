//! Scripts: what the mock server answers, request by request, and how each
//! answer becomes bytes in the chosen wire format.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The wire format the server speaks (and validates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wire {
    /// Anthropic Messages, `POST /v1/messages`.
    Anthropic,
    /// Chat Completions, `POST /v1/chat/completions`.
    #[serde(alias = "openai-chat")]
    Openai,
    /// OpenAI Responses, `POST /v1/responses`.
    OpenaiResponses,
}

/// How strictly a Chat Completions server treats `reasoning_content`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasoningRule {
    /// OpenAI's own endpoint: `reasoning_content` in a request is a 400.
    #[default]
    Reject,
    /// Current DeepSeek/Kimi thinking models: every assistant message that
    /// made tool calls must carry it, or 400.
    RequireOnToolTurns,
    /// Accept either.
    Ignore,
}

/// Whether the server insists that user and assistant turns alternate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoleRule {
    /// Anthropic's and OpenAI's own endpoints: two user (or assistant)
    /// messages in a row are accepted — Anthropic merges them.
    #[default]
    Merge,
    /// Endpoints that require strict alternation (Bedrock's Converse, many
    /// OpenAI-compatible servers whose chat template checks it): two user
    /// messages in a row, or two assistant messages with no tool message
    /// between them, are a 400. Not checked for Responses, whose input is
    /// a list of items rather than turns.
    Alternate,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// A complete text reply, streamed (or as JSON for `stream: false`).
    Text(String),
    /// A complete reply calling one tool; `arguments` is raw JSON text.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        #[serde(default)]
        text: String,
    },
    /// Event payloads, framed for the wire (`event:` lines for Anthropic
    /// and Responses; `data: [DONE]` appended for Chat Completions).
    Events(Vec<Value>),
    /// A raw SSE body, sent as is.
    Sse(String),
    /// A raw JSON body with status 200 (a non-streaming reply).
    Json(Value),
    /// An HTTP error.
    Error {
        status: u16,
        body: String,
        #[serde(default)]
        headers: Vec<(String, String)>,
    },
    /// Sends this SSE prefix, then nothing until the server shuts down.
    Stall(String),
    /// Sends this SSE prefix, then drops the connection mid-body.
    Cut(String),
}

/// What usage generated replies (`text`, `tool_call`) report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UsageRule {
    /// 10 input tokens per request, whatever its size.
    #[default]
    Fixed,
    /// Input tokens grow with the request like a real tokenizer's count:
    /// the request body's bytes / 4, rounded up. Context management that
    /// anchors its estimate on reported usage then sees the real growth.
    RequestSize,
}

impl UsageRule {
    /// The input tokens reported for a request body of `body_bytes`.
    pub fn input_tokens(self, body_bytes: usize) -> u64 {
        match self {
            UsageRule::Fixed => FIXED_INPUT_TOKENS,
            UsageRule::RequestSize => (body_bytes as u64).div_ceil(4),
        }
    }
}

/// Input tokens reported under [`UsageRule::Fixed`].
pub const FIXED_INPUT_TOKENS: u64 = 10;

/// A reply given to every (valid) request whose last user message contains
/// `last_user_contains`, instead of the next scripted reply — which stays
/// for the next request. For requests that come at a time the script cannot
/// know, such as a context-compaction summary request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct When {
    /// Matched against the text of the last message with role `user`
    /// (string content, or its `text` / `input_text` parts joined by a
    /// newline; tool results are not text).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_user_contains: String,
    /// Also required when set: the request body, as JSON text, contains
    /// this — for requests told apart only by a tool result (a subagent's
    /// second request, whose last user message is that result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_contains: Option<String>,
    /// When set, a matching request is answered only once some request
    /// whose body (as JSON text) contains this has arrived — a meeting
    /// point that makes "these two requests were in flight together"
    /// something a test can rely on rather than a race it usually wins.
    /// Until then (or until the server stops) the request waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_until: Option<String>,
    pub reply: Reply,
}

impl When {
    /// Whether this rule answers `body` (a request of `wire`).
    pub fn matches(&self, wire: Wire, body: &Value) -> bool {
        let user = self.last_user_contains.is_empty()
            || last_user_text(wire, body).is_some_and(|t| t.contains(&self.last_user_contains));
        let request = self
            .request_contains
            .as_ref()
            .is_none_or(|needle| body.to_string().contains(needle.as_str()));
        user && request
    }
}

/// The text of the last message with role `user` of a request body:
/// Anthropic and Chat Completions `messages`, Responses `input` (a plain
/// string input is the user's text). `None` if there is no user message.
pub fn last_user_text(wire: Wire, body: &Value) -> Option<String> {
    let list = match wire {
        Wire::Anthropic | Wire::Openai => body.get("messages")?,
        Wire::OpenaiResponses => body.get("input")?,
    };
    if let Some(text) = list.as_str() {
        return Some(text.to_owned());
    }
    let last = list
        .as_array()?
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    match last.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter(|p| {
                    matches!(
                        p.get("type").and_then(Value::as_str),
                        Some("text" | "input_text")
                    )
                })
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => Some(String::new()),
    }
}

/// A whole script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Script {
    pub wire: Wire,
    #[serde(default)]
    pub reasoning: ReasoningRule,
    /// Whether roles must alternate (default `merge`: they need not).
    #[serde(default)]
    pub roles: RoleRule,
    /// What generated replies report as usage (default `fixed`).
    #[serde(default)]
    pub usage: UsageRule,
    /// Rules answering matching requests out of turn, first match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<When>,
    /// The model's context window in tokens, enforced as the real APIs
    /// do: a request whose input (body bytes / 4, as
    /// [`UsageRule::RequestSize`] counts it) plus its `max_tokens` exceeds
    /// it is rejected with the wire's own overflow error. `None`: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Bytes per body chunk written to the socket (default 4096).
    #[serde(default = "default_chunk")]
    pub chunk_size: usize,
    /// Model name used in generated replies.
    #[serde(default = "default_model")]
    pub model: String,
    /// The models `GET /v1/models` (or `/models` on the OpenAI wires)
    /// lists, in the wire's shape. `None`: that path is a 404, as on a
    /// server that lists nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    pub replies: Vec<Reply>,
}

fn default_chunk() -> usize {
    4096
}

fn default_model() -> String {
    "mock-model".to_owned()
}

impl Script {
    /// A script for `wire` with the given replies and defaults otherwise.
    pub fn new(wire: Wire, replies: Vec<Reply>) -> Self {
        Self {
            wire,
            reasoning: ReasoningRule::default(),
            roles: RoleRule::default(),
            usage: UsageRule::default(),
            when: Vec::new(),
            context_window: None,
            chunk_size: default_chunk(),
            model: default_model(),
            models: None,
            replies,
        }
    }

    /// Lists `models` at the wire's models path (see [`Script::models`]).
    pub fn models(mut self, models: &[&str]) -> Self {
        self.models = Some(models.iter().map(|m| (*m).to_owned()).collect());
        self
    }

    /// Enforces a context window of `tokens` (see [`Script::context_window`]).
    pub fn context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Sets the chunk size.
    pub fn chunk_size(mut self, size: usize) -> Self {
        self.chunk_size = size.max(1);
        self
    }

    /// Sets the reasoning rule (Chat Completions).
    pub fn reasoning(mut self, rule: ReasoningRule) -> Self {
        self.reasoning = rule;
        self
    }

    /// Sets whether roles must alternate.
    pub fn roles(mut self, rule: RoleRule) -> Self {
        self.roles = rule;
        self
    }

    /// Sets what usage generated replies report.
    pub fn usage(mut self, rule: UsageRule) -> Self {
        self.usage = rule;
        self
    }

    /// Adds a rule: every valid request whose last user message contains
    /// `text` is answered with `reply`, out of turn.
    pub fn when(mut self, text: impl Into<String>, reply: Reply) -> Self {
        self.when.push(When {
            last_user_contains: text.into(),
            request_contains: None,
            hold_until: None,
            reply,
        });
        self
    }

    /// Adds a rule: every valid request whose body (as JSON text) contains
    /// `text` is answered with `reply`, out of turn.
    pub fn when_request_contains(mut self, text: impl Into<String>, reply: Reply) -> Self {
        self.when.push(When {
            last_user_contains: String::new(),
            request_contains: Some(text.into()),
            hold_until: None,
            reply,
        });
        self
    }

    /// Like [`Script::when`], but a matching request is answered only
    /// once a request whose body contains `until` has arrived (see
    /// [`When::hold_until`]).
    pub fn when_held(
        mut self,
        text: impl Into<String>,
        until: impl Into<String>,
        reply: Reply,
    ) -> Self {
        self.when.push(When {
            last_user_contains: text.into(),
            request_contains: None,
            hold_until: Some(until.into()),
            reply,
        });
        self
    }
}

/// Frames event payloads as an SSE body for `wire`.
pub fn frame(wire: Wire, events: &[Value]) -> String {
    let mut out = String::new();
    for event in events {
        match wire {
            Wire::Openai => out.push_str(&format!("data: {event}\n\n")),
            _ => {
                let kind = event
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("message");
                out.push_str(&format!("event: {kind}\ndata: {event}\n\n"));
            }
        }
    }
    if wire == Wire::Openai {
        out.push_str("data: [DONE]\n\n");
    }
    out
}

/// The streamed events of a generated reply reporting `input_tokens`.
pub fn generated_events(
    wire: Wire,
    model: &str,
    text: &str,
    call: Option<(&str, &str, &str)>,
    input_tokens: u64,
) -> Vec<Value> {
    match wire {
        Wire::Anthropic => {
            let mut ev = vec![
                json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "usage": {"input_tokens": input_tokens, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
            ];
            let mut index = 0;
            if !text.is_empty() {
                ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}));
                ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}));
                ev.push(json!({"type": "content_block_stop", "index": index}));
                index += 1;
            }
            if let Some((id, name, args)) = call {
                ev.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                ev.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": args}}));
                ev.push(json!({"type": "content_block_stop", "index": index}));
            }
            let stop = if call.is_some() {
                "tool_use"
            } else {
                "end_turn"
            };
            ev.push(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}));
            ev.push(json!({"type": "message_stop"}));
            ev
        }
        Wire::Openai => {
            let chunk = |delta: Value, finish: Value| json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            let mut ev = vec![chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            )];
            if !text.is_empty() {
                ev.push(chunk(json!({"content": text}), Value::Null));
            }
            if let Some((id, name, args)) = call {
                ev.push(chunk(json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
                ev.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
                    Value::Null,
                ));
            }
            let finish = if call.is_some() { "tool_calls" } else { "stop" };
            ev.push(chunk(json!({}), json!(finish)));
            ev.push(json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": model, "choices": [], "usage": {"prompt_tokens": input_tokens, "completion_tokens": 5, "total_tokens": input_tokens + 5}}));
            ev
        }
        Wire::OpenaiResponses => {
            let mut ev = vec![
                json!({"type": "response.created", "response": {"id": "resp_mock", "model": model, "status": "in_progress", "output": []}}),
            ];
            let mut index = 0;
            if !text.is_empty() {
                ev.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": "msg_mock", "type": "message", "role": "assistant", "content": []}}));
                ev.push(json!({"type": "response.output_text.delta", "output_index": index, "item_id": "msg_mock", "delta": text}));
                ev.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"id": "msg_mock", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}}));
                index += 1;
            }
            if let Some((id, name, args)) = call {
                ev.push(json!({"type": "response.output_item.added", "output_index": index, "item": {"id": "fc_mock", "type": "function_call", "call_id": id, "name": name, "arguments": ""}}));
                ev.push(json!({"type": "response.function_call_arguments.delta", "output_index": index, "item_id": "fc_mock", "delta": args}));
                ev.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"id": "fc_mock", "type": "function_call", "call_id": id, "name": name, "arguments": args}}));
            }
            ev.push(json!({"type": "response.completed", "response": {"id": "resp_mock", "model": model, "status": "completed", "usage": {"input_tokens": input_tokens, "output_tokens": 5}}}));
            ev
        }
    }
}

/// The non-streaming JSON body of a generated reply reporting
/// `input_tokens`.
pub fn generated_json(
    wire: Wire,
    model: &str,
    text: &str,
    call: Option<(&str, &str, &str)>,
    input_tokens: u64,
) -> Value {
    match wire {
        Wire::Anthropic => {
            let mut content = Vec::new();
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            if let Some((id, name, args)) = call {
                let input: Value = serde_json::from_str(args).unwrap_or(Value::Null);
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            let stop = if call.is_some() {
                "tool_use"
            } else {
                "end_turn"
            };
            json!({"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": content, "stop_reason": stop, "usage": {"input_tokens": input_tokens, "output_tokens": 5}})
        }
        Wire::Openai => {
            let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if let Some((id, name, args)) = call {
                message["tool_calls"] = json!([{"id": id, "type": "function", "function": {"name": name, "arguments": args}}]);
            }
            let finish = if call.is_some() { "tool_calls" } else { "stop" };
            json!({"id": "chatcmpl-mock", "object": "chat.completion", "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": {"prompt_tokens": input_tokens, "completion_tokens": 5, "total_tokens": input_tokens + 5}})
        }
        Wire::OpenaiResponses => {
            let mut output = Vec::new();
            if !text.is_empty() {
                output.push(json!({"id": "msg_mock", "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}));
            }
            if let Some((id, name, args)) = call {
                output.push(json!({"id": "fc_mock", "type": "function_call", "call_id": id, "name": name, "arguments": args}));
            }
            json!({"id": "resp_mock", "object": "response", "model": model, "status": "completed", "output": output, "usage": {"input_tokens": input_tokens, "output_tokens": 5}})
        }
    }
}
