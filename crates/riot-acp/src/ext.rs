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
//! - `_riot/mcp_servers` (request): the MCP servers of the projects this
//!   agent has sessions in — project, name, scope, transport, status,
//!   tool count or failure reason.
//! - `_riot/mcp_restart` (request, `{name, project?}`): stops a server
//!   and starts it again; unknown names are an invalid-params error.
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
pub const MCP_SERVERS: &str = "_riot/mcp_servers";
pub const MCP_RESTART: &str = "_riot/mcp_restart";

/// The `_meta` of the agent's capabilities: which extensions it has.
pub fn capabilities_meta() -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "riot".into(),
        json!({
            "requests": [SHUTDOWN, MCP_SERVERS, MCP_RESTART],
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

/// Implements the JSON-RPC plumbing of a `_riot/...` request whose params
/// may be left out when every field has a default.
macro_rules! riot_request {
    ($request:ty, $method:expr, $response:ty) => {
        impl JsonRpcMessage for $request {
            fn matches_method(method: &str) -> bool {
                method == $method
            }
            fn method(&self) -> &str {
                $method
            }
            fn to_untyped_message(&self) -> Result<UntypedMessage, agent_client_protocol::Error> {
                UntypedMessage::new($method, self)
            }
            fn parse_message(
                method: &str,
                params: &Value,
            ) -> Result<Self, agent_client_protocol::Error> {
                if method != $method {
                    return Err(agent_client_protocol::Error::method_not_found());
                }
                let params = if params.is_null() { json!({}) } else { params.clone() };
                serde_json::from_value(params).map_err(|e| {
                    agent_client_protocol::Error::invalid_params()
                        .data(json!({"error": e.to_string()}))
                })
            }
        }
        impl JsonRpcRequest for $request {
            type Response = $response;
        }
    };
}

/// `_riot/mcp_servers`: the MCP servers of the projects this agent has
/// sessions in, with their status (for a UI's MCP panel).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServersRequest {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

riot_request!(McpServersRequest, MCP_SERVERS, McpServersResponse);

/// One server of `_riot/mcp_servers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerEntry {
    pub project: String,
    pub name: String,
    /// `user`, `project` or `session`.
    pub scope: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `connecting`, `ready`, `failed` or `disabled`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `_riot/mcp_servers`'s result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, agent_client_protocol::JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct McpServersResponse {
    pub servers: Vec<McpServerEntry>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `_riot/mcp_restart`: stop and start one server again (its status goes
/// back to `connecting`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpRestartRequest {
    pub name: String,
    /// The project directory, when several have a server of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

riot_request!(McpRestartRequest, MCP_RESTART, McpRestartResponse);

/// `_riot/mcp_restart`'s result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, agent_client_protocol::JsonRpcResponse)]
#[serde(rename_all = "camelCase")]
pub struct McpRestartResponse {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl From<riot_kernel::session::McpServerInfo> for McpServerEntry {
    fn from(info: riot_kernel::session::McpServerInfo) -> Self {
        let (status, tools, reason) = match info.status {
            riot_mcp::ServerStatus::Connecting => ("connecting", None, None),
            riot_mcp::ServerStatus::Ready { tools } => ("ready", Some(tools), None),
            riot_mcp::ServerStatus::Failed { reason } => ("failed", None, Some(reason)),
            riot_mcp::ServerStatus::Disabled => ("disabled", None, None),
        };
        Self {
            project: info.project.display().to_string(),
            name: info.name,
            scope: info.scope,
            transport: info.transport.to_owned(),
            status: status.to_owned(),
            tools,
            reason,
        }
    }
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
