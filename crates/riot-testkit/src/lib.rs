//! # riot-testkit — test support for every Riot crate
//!
//! A strict, scripted mock model server speaking the three wire formats
//! (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses), in
//! process ([`MockServer`]) and as the `riot-mock-model` binary for tests
//! written in other languages (docs/testing.md: "a strict mock model
//! server"), plus [`TestClock`] for tests that go through real sockets,
//! and test files built in memory ([`office`], [`pdf`]).
//!
//! ## What the server does with a request
//!
//! 1. Records it (method, path, lowercased headers, JSON body, the status
//!    it answered) — [`MockServer::requests`].
//! 2. Rejects, with the real API's status and a realistic body, what the
//!    real API rejects: for Anthropic a `tool_use` without a `tool_result`
//!    in the next user message, content before the `tool_result` blocks,
//!    a result for an unknown id, empty content or empty text blocks,
//!    unsigned thinking, a `ui` field in a tool result, more than 4
//!    `cache_control` blocks (consecutive same-role turns are merged, not
//!    rejected), a missing `anthropic-version` header, a `thinking`
//!    budget under 1024 or not under `max_tokens`, a `document` block
//!    that is not a base64 `application/pdf` lopdf can read, more than 100
//!    PDF pages in one request, a body over 32 MB (413); for Chat
//!    Completions a `tool` message not preceded by matching `tool_calls`,
//!    unanswered `tool_calls`, non-string `arguments`, an empty-string
//!    content, and `reasoning_content` per [`ReasoningRule`] (rejected by
//!    default like OpenAI; required on tool-call turns in DeepSeek mode),
//!    a `reasoning_effort` OpenAI does not know; for Responses unpaired `function_call`/`function_call_output`,
//!    non-string arguments, reasoning without `encrypted_content` under
//!    `store: false`, an unknown `reasoning.effort`. With `"roles": "alternate"` ([`RoleRule`]) it also
//!    rejects two user messages in a row (Anthropic, Chat Completions) or two
//!    assistant messages without a tool message between, as endpoints that
//!    require strict alternation do. Anthropic requests with tool blocks
//!    but no declared tools are rejected too. With `"context_window": N`
//!    a request whose body bytes / 4 plus its reserved output exceed N
//!    gets the wire's overflow error ([`check_window`]). A rejection does
//!    not use up a scripted reply.
//! 3. Answers with the reply of the first `when` rule ([`When`]) whose
//!    text the request's last user message contains (and whose
//!    `request_contains`, when set, the whole body does) — out of turn, without
//!    using up a scripted reply, as often as it matches — and otherwise with
//!    the next scripted [`Reply`]. A script that has run out answers 400 —
//!    never a retryable status (docs/testing.md L4). The recorded request
//!    names the rule that answered it ([`RecordedRequest::rule`]). A rule
//!    with `hold_until` answers only once a request whose body contains
//!    that text has arrived, so two requests a test expects in flight
//!    together are known to have been.
//!
//! ## Script format (JSON, also the `--script` file of the binary)
//!
//! ```json
//! {
//!   "wire": "anthropic" | "openai" | "openai-responses",
//!   "reasoning": "reject" | "require-on-tool-turns" | "ignore",
//!   "roles": "merge" | "alternate",
//!   "chunk_size": 4096,
//!   "model": "mock-model",
//!   "usage": "fixed" | "request-size",
//!   "context_window": 8192,
//!   "models": ["claude-opus-4-1", "claude-haiku-4-5"],
//!   "when": [
//!     {"last_user_contains": "Do not call any tools", "reply": {"text": "<summary>…</summary>"}},
//!     {"last_user_contains": "Explore alpha", "hold_until": "Explore beta", "reply": {"text": "…"}}
//!   ],
//!   "replies": [
//!     {"text": "Hello"},
//!     {"tool_call": {"id": "call_1", "name": "Read", "arguments": "{\"file_path\":\"a\"}", "text": ""}},
//!     {"events": [{"type": "message_start", "message": {}}]},
//!     {"sse": "data: {...}\n\n"},
//!     {"json": {"id": "..."}},
//!     {"error": {"status": 429, "body": "{...}", "headers": [["retry-after", "2"]]}},
//!     {"stall": "event: message_start\ndata: {...}\n\n"},
//!     {"cut": "event: message_start\ndata: {...}\n\n"}
//!   ]
//! }
//! ```
//!
//! `text` and `tool_call` generate a complete reply in the wire's format
//! (streamed, or a JSON body when the request says `"stream": false`);
//! `events` are payloads framed for the wire; `sse` is sent verbatim;
//! `stall` sends its prefix and then nothing until shutdown; `cut` sends
//! its prefix and drops the connection. Bodies are written `chunk_size`
//! bytes per write. Generated replies report 10 input tokens (`fixed`, the
//! default) or, with `request-size`, the request body's bytes / 4 so that a
//! client estimating its context from usage sees it grow ([`UsageRule`]).
//! A `when` rule matches the text of the last message with role `user`
//! (string content, or its `text`/`input_text` parts; tool results are not
//! text) — for requests a script cannot place in order, such as a
//! compaction summary request. Rules see only requests that passed
//! validation. Only `wire` and `replies` are required.
//!
//! `GET /v1/models` (also `/models` on the OpenAI wires) lists `models` in
//! the wire's shape — Anthropic's with a `display_name` and paging fields,
//! needing its version header — and is a 404 without them. Listings are
//! recorded apart from model requests ([`MockServer::model_listings`]).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use riot_testkit::{MockServer, Reply, Script, Wire};
//! let server = MockServer::start(Script::new(Wire::Anthropic, vec![Reply::Text("hi".into())]).chunk_size(7)).await?;
//! let base_url = server.base_url(); // http://127.0.0.1:PORT
//! # let _ = base_url;
//! server.shutdown().await;
//! # Ok(()) }
//! ```

pub mod clock;
pub mod lsp;
pub mod office;
pub mod pdf;
pub mod script;
pub mod search;
pub mod server;
pub mod validate;
pub mod web;

pub use clock::TestClock;
pub use script::{
    ReasoningRule, Reply, RoleRule, Script, UsageRule, When, Wire, frame, last_user_text,
};
pub use server::{MockServer, REQUESTS_PATH, RecordedRequest};
pub use validate::{Rejection, check_alternation, check_window, validate};
