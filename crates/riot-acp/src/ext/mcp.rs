//! `_riot/mcp_servers` and `_riot/mcp_restart`: the MCP servers of the
//! projects the agent has sessions in, listed with their status and
//! restarted one at a time.

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};

use super::{MCP_RESTART, MCP_SERVERS};
use crate::rpc::riot_request;

/// `_riot/mcp_servers`: the MCP servers of the projects this agent has
/// sessions in, with their status (for a UI's MCP panel).
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServersRequest {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(McpServersRequest, MCP_SERVERS, McpServersResponse);

/// One server of `_riot/mcp_servers`.
#[derive(schemars::JsonSchema, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct McpServersResponse {
    pub servers: Vec<McpServerEntry>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/mcp_restart`: stop and start one server again (its status goes
/// back to `connecting`).
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpRestartRequest {
    pub name: String,
    /// The project directory, when several have a server of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(McpRestartRequest, MCP_RESTART, McpRestartResponse);

/// `_riot/mcp_restart`'s result.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct McpRestartResponse {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
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
