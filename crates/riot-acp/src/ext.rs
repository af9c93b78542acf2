//! Riot's extensions to ACP (docs/design.md §12), following the protocol's
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
//! - `_riot/config` (request, `{cwd?}`): the model endpoint new sessions
//!   would use — provider, base URL, model, whether the key is present
//!   (never the key), `ready`, and the `problem` when not (onboarding).
//! - `_riot/config_set` (request, `{provider, model, baseUrl?, apiKey?}`):
//!   saves the endpoint in the user's settings and the key in
//!   `credentials.json` (owner-only); replies like `_riot/config`. Bad
//!   input is an invalid-params error saying what to fix.
//! - `_riot/files` (request, `{cwd, query, limit?}`): the project's files
//!   (ignored and hidden ones left out) best matching `query`, for `@`
//!   mentions.
//! - `_riot/session_rename` (request, `{sessionId, title}`) and
//!   `_riot/session_delete` (request, `{sessionId}`): name or delete a
//!   saved session; deleting one with a running turn is refused.
//! - `_riot/set_model` (request, `{sessionId, model}`): the session's
//!   model from its next request (after the running turn, if any). The
//!   current model is in `session/new`'s and `session/load`'s
//!   `_meta.riot.model`.
//! - `_riot/checkpoints` (request, `{sessionId}`) and `_riot/rewind`
//!   (request, `{sessionId, to?, filesOnly?, conversationOnly?, force?,
//!   undo?}`): the user messages a rewind can go back to, each with the
//!   files its turn changed, and the rewind itself or the undo of the
//!   last one, between turns (docs/rewind.md).
//!
//! The `initialize` response's own `_meta.riot.defaultCwd` (absent when
//! not set) is the project directory the person started Riot in (`riot
//! serve --cwd DIR`, canonical), for a client to offer as the directory of
//! a new session; clients still name every session's `cwd` themselves.
//!
//! The notifications are sent only to a client that asks for them in
//! `initialize`: `clientCapabilities._meta.riot.notifications`, a list of
//! method names. Clients that do not know them never see them.
//!
//! - `_riot/usage` (notification, agent → client): after each prompt
//!   turn, before its response, the turn's token usage summed over its
//!   model requests, with the cache read/write figures, and `costUsd`:
//!   what the whole session has cost so far in US dollars (every request,
//!   side requests and earlier processes included), `null` when unknown
//!   (a model without a price) — never 0 for unknown.
//! - `_riot/terminal` (notification) and `_riot/terminal_write` (request):
//!   the session's terminals, watched and typed into (`crate::terminals`).
//! - `_riot/queue` (request) and `_riot/queue_update` (notification): the
//!   session's message queue, kept by the session handle
//!   (`crate::queue`).
//! - `_riot/background`, `_riot/background_stop` (requests) and
//!   `_riot/background_update` (notification): the session's background
//!   agents, listed, stopped and watched; `_riot/deliver` (request): a
//!   turn of Riot's for a result that waits (`crate::background`).
//! - `_riot/compaction` (notification, agent → client): the session's
//!   history is being compacted (`status: "compacting"`) or was
//!   (`status: "compacted"`, with the estimated tokens before and after).

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::rpc::DoneResponse;
pub(crate) use crate::rpc::riot_request;

mod config;
mod mcp;
mod notifications;
mod rewind;
mod session;

pub use crate::error::BadWorktreeAsk;
pub use config::{ConfigRequest, ConfigResponse, ConfigSetRequest, WireKey};
pub use mcp::{
    McpRestartRequest, McpRestartResponse, McpServerEntry, McpServersRequest, McpServersResponse,
};
pub use notifications::{
    CompactionNotification, CompactionStatus, UsageFigures, UsageNotification,
};
pub use rewind::{
    CHECKPOINTS, CheckpointsRequest, CheckpointsResponse, REWIND, RewindRequest, RewindResponse,
};
pub use session::{
    FilesRequest, FilesResponse, SessionDeleteRequest, SessionRenameRequest, SetModelRequest,
    add_worktree, listed_worktree, session_meta, worktree_asked,
};

pub const SHUTDOWN: &str = "_riot/shutdown";
pub const USAGE: &str = "_riot/usage";
pub const COMPACTION: &str = "_riot/compaction";
pub const MCP_SERVERS: &str = "_riot/mcp_servers";
pub const MCP_RESTART: &str = "_riot/mcp_restart";
pub const CONFIG: &str = "_riot/config";
pub const CONFIG_SET: &str = "_riot/config_set";
pub const FILES: &str = "_riot/files";
pub const SESSION_RENAME: &str = "_riot/session_rename";
pub const SESSION_DELETE: &str = "_riot/session_delete";
pub const SET_MODEL: &str = "_riot/set_model";

/// The opt-in `_riot/...` notifications, as advertised and as a client
/// may ask for them.
const NOTIFICATIONS: [&str; 5] = [
    USAGE,
    COMPACTION,
    crate::terminals::TERMINAL,
    crate::queue::QUEUE_UPDATE,
    crate::background::BACKGROUND_UPDATE,
];

/// The `_meta` of the agent's capabilities: which extensions it has.
pub fn capabilities_meta() -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "riot".into(),
        json!({
            "requests": [
                SHUTDOWN, MCP_SERVERS, MCP_RESTART, CONFIG, CONFIG_SET, FILES,
                SESSION_RENAME, SESSION_DELETE, SET_MODEL, crate::terminals::TERMINAL_WRITE,
                crate::terminals::TERMINAL_RESIZE,
                CHECKPOINTS, REWIND,
                crate::queue::QUEUE, crate::background::BACKGROUND,
                crate::background::BACKGROUND_STOP, crate::background::DELIVER,
            ],
            "notifications": NOTIFICATIONS,
        }),
    );
    meta
}

/// The `_meta` of the `initialize` response: `riot.defaultCwd`, the
/// project directory Riot was started in. None for a path that is not
/// UTF-8 (JSON cannot carry it faithfully).
pub fn initialize_meta(default_cwd: &std::path::Path) -> Option<Meta> {
    let cwd = default_cwd.to_str()?;
    let mut meta = Meta::new();
    meta.insert("riot".into(), json!({ "defaultCwd": cwd }));
    Some(meta)
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
                .filter(|n| NOTIFICATIONS.contains(n))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `_riot/shutdown`'s params: nothing but an optional `_meta`. Params may
/// also be left out.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
pub struct ShutdownRequest {
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/shutdown`'s result: how many prompt turns were running and are
/// being cancelled.
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
pub struct ShutdownResponse {
    pub cancelled_turns: u32,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(ShutdownRequest, SHUTDOWN, ShutdownResponse);
