//! Riot's extensions to ACP (ARCHITECTURE §12), following the protocol's
//! extensibility rules: method names start with `_` (`_riot/...`), every
//! payload may carry `_meta`, and the agent advertises them in
//! `agentCapabilities._meta.riot` of the `initialize` response, so a
//! client only uses what the agent says it has.
//!
//! - `_riot/shutdown` (request, client → agent): the agent replies, then
//!   stops gracefully — running turns are cancelled and finish (their
//!   transcripts keep every tool call paired with its result), pending
//!   prompts get their `cancelled` response, and the process exits 0
//!   (`riot serve`: the whole server).
//!
//! The notifications are sent only to a client that asks for them in
//! `initialize`: `clientCapabilities._meta.riot.notifications`, a list of
//! method names. Clients that do not know them never see them.
//!
//! - `_riot/usage` (notification, agent → client): after each prompt
//!   turn, before its response, the turn's token usage summed over its
//!   model requests, with the cache read/write figures.
//! - `_riot/compaction` (notification, agent → client): the session's
//!   history is being compacted (`status: "compacting"`) or was
//!   (`status: "compacted"`, with the estimated tokens before and after).

use agent_client_protocol::v1::schema::Meta;
use agent_client_protocol::{JsonRpcMessage, JsonRpcRequest, UntypedMessage};
use riot_protocol::{CompactionStrategy, Usage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const SHUTDOWN: &str = "_riot/shutdown";
pub const USAGE: &str = "_riot/usage";
pub const COMPACTION: &str = "_riot/compaction";

/// The `_meta` of the agent's capabilities: which extensions it has.
pub fn capabilities_meta() -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "riot".into(),
        json!({
            "requests": [SHUTDOWN],
            "notifications": [USAGE, COMPACTION],
        }),
    );
    meta
}

/// The `_riot/...` notifications a client asked for in its capabilities'
/// `_meta` (`{"riot": {"notifications": [...]}}`); unknown names are left
/// out.
pub fn wanted_notifications(meta: Option<&Meta>) -> Vec<String> {
    meta.and_then(|m| m.get("riot"))
        .and_then(|r| r.get("notifications"))
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .filter(|n| [USAGE, COMPACTION].contains(n))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `_riot/shutdown`'s params: nothing but an optional `_meta`. Params may
/// also be left out.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShutdownRequest {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl JsonRpcMessage for ShutdownRequest {
    fn matches_method(method: &str) -> bool {
        method == SHUTDOWN
    }

    fn method(&self) -> &str {
        SHUTDOWN
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, agent_client_protocol::Error> {
        UntypedMessage::new(SHUTDOWN, self)
    }

    fn parse_message(method: &str, params: &Value) -> Result<Self, agent_client_protocol::Error> {
        if method != SHUTDOWN {
            return Err(agent_client_protocol::Error::method_not_found());
        }
        if params.is_null() {
            return Ok(Self::default());
        }
        serde_json::from_value(params.clone()).map_err(|e| {
            agent_client_protocol::Error::invalid_params().data(json!({"error": e.to_string()}))
        })
    }
}

impl JsonRpcRequest for ShutdownRequest {
    type Response = ShutdownResponse;
}

/// `_riot/shutdown`'s result: how many prompt turns were running and are
/// being cancelled.
#[derive(Debug, Clone, Default, Serialize, Deserialize, agent_client_protocol::JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownResponse {
    pub cancelled_turns: u32,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Token counts in ACP's camelCase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

impl From<Usage> for UsageFigures {
    fn from(u: Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
}

/// `_riot/usage`: one prompt turn's usage.
#[derive(Debug, Clone, Serialize, Deserialize, agent_client_protocol::JsonRpcNotification)]
#[notification(method = "_riot/usage")]
#[serde(rename_all = "camelCase")]
pub struct UsageNotification {
    pub session_id: String,
    /// The model of the turn's last request.
    pub model: String,
    /// How many model requests the turn made.
    pub requests: u32,
    /// Summed over those requests.
    pub usage: UsageFigures,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `_riot/compaction`'s status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStatus {
    Compacting,
    Compacted,
}

/// `_riot/compaction`: compaction started or finished.
#[derive(Debug, Clone, Serialize, Deserialize, agent_client_protocol::JsonRpcNotification)]
#[notification(method = "_riot/compaction")]
#[serde(rename_all = "camelCase")]
pub struct CompactionNotification {
    pub session_id: String,
    pub status: CompactionStatus,
    /// `clear_tool_results` or `summary`.
    pub strategy: CompactionStrategy,
    /// Estimated context tokens before and after (when `compacted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
