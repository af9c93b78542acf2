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
use riot_protocol::{CompactionStrategy, Usage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::rpc::DoneResponse;
pub(crate) use crate::rpc::riot_request;

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

/// `_riot/config`: the model endpoint of new sessions in `cwd` (default:
/// the person's home directory).
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(ConfigRequest, CONFIG, ConfigResponse);

/// `_riot/config`'s and `_riot/config_set`'s result. Never the key.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct ConfigResponse {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `present`, `missing` or `not-needed`.
    pub key: String,
    /// `$VAR` or `credentials.json`.
    pub key_source: Option<String>,
    pub ready: bool,
    pub problem: Option<String>,
    /// The `notifications` setting in effect (the web UI follows
    /// `desktop`); absent when the settings could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<riot_config::notifications::NotificationSettings>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

impl From<riot_kernel::model_settings::ModelStatus> for ConfigResponse {
    fn from(status: riot_kernel::model_settings::ModelStatus) -> Self {
        use riot_kernel::model_settings::KeyState;
        Self {
            ready: status.ready(),
            key: match status.key {
                KeyState::Present => "present",
                KeyState::Missing => "missing",
                KeyState::NotNeeded => "not-needed",
            }
            .to_owned(),
            provider: status.provider,
            base_url: status.base_url,
            model: status.model,
            key_source: status.key_source,
            problem: status.problem,
            notifications: None,
            meta: None,
        }
    }
}

/// An API key on the wire: never printed, not even in debug output.
#[derive(schemars::JsonSchema, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WireKey(pub String);

impl std::fmt::Debug for WireKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireKey(redacted)")
    }
}

/// `_riot/config_set`: the endpoint a person chose.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigSetRequest {
    pub provider: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<WireKey>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(ConfigSetRequest, CONFIG_SET, ConfigResponse);

/// `_riot/files`: project files matching what follows an `@`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilesRequest {
    pub cwd: String,
    #[serde(default)]
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(FilesRequest, FILES, FilesResponse);

/// `_riot/files`' result: project-relative paths, best first.
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
pub struct FilesResponse {
    pub files: Vec<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/session_rename`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRenameRequest {
    pub session_id: String,
    pub title: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SessionRenameRequest, SESSION_RENAME, DoneResponse);

/// `_riot/session_delete`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionDeleteRequest {
    pub session_id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SessionDeleteRequest, SESSION_DELETE, DoneResponse);

/// `_riot/set_model`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetModelRequest {
    pub session_id: String,
    pub model: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SetModelRequest, SET_MODEL, DoneResponse);

/// The `_meta` of `session/new`, `session/load` and `session/resume`
/// responses: the session's model, and its OS sandbox as every face shows
/// it ("sandboxed (bubblewrap)", "sandboxed (Landlock)", "not sandboxed:
/// REASON").
pub fn session_meta(model: &str, sandbox: &str) -> Meta {
    let mut meta = Meta::new();
    meta.insert("riot".into(), json!({ "model": model, "sandbox": sandbox }));
    meta
}

/// The worktree a `session/new` asks for in `_meta.riot.worktree`: a
/// name, or `""` / `true` for one Riot picks; `None` when not asked
/// (absent or `null`). Anything else is refused (the reason), rather than
/// opening the session in the project's own checkout.
pub fn worktree_asked(meta: Option<&Meta>) -> Result<Option<String>, String> {
    let Some(asked) = meta
        .and_then(|m| m.get("riot"))
        .and_then(|riot| riot.get("worktree"))
    else {
        return Ok(None);
    };
    match asked {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(name) => Ok(Some(name.clone())),
        serde_json::Value::Bool(true) => Ok(Some(String::new())),
        other => Err(format!(
            "_meta.riot.worktree must be a worktree name (a string; \"\" for one Riot picks) or true, not {other}; leave it out to work in the project itself"
        )),
    }
}

/// Adds the session's worktree to `_meta.riot` of `session/new`'s answer:
/// `{name, branch, path, project, cwd}` — `cwd` is where the session
/// works (the worktree's counterpart of the directory asked from).
pub fn add_worktree(meta: &mut Meta, worktree: &riot_worktree::Worktree) {
    if let Some(serde_json::Value::Object(riot)) = meta.get_mut("riot") {
        riot.insert(
            "worktree".into(),
            json!({
                "name": worktree.name,
                "branch": worktree.branch,
                "path": worktree.path,
                "project": worktree.project,
                "cwd": worktree.cwd,
            }),
        );
    }
}

/// `_meta.riot.worktree` of a `session/list` entry whose session works in
/// a worktree: the transcript's record of it, `{name, branch, path,
/// project}`, and `present`: whether the worktree is still there (a
/// session whose worktree was removed cannot be opened).
pub fn listed_worktree(worktree: &impl serde::Serialize, present: bool) -> Meta {
    let mut listed = json!(worktree);
    if let Some(fields) = listed.as_object_mut() {
        fields.insert("present".into(), json!(present));
    }
    let mut meta = Meta::new();
    meta.insert("riot".into(), json!({ "worktree": listed }));
    meta
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
#[derive(
    schemars::JsonSchema, Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize,
)]
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
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
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
    /// The side requests made while the turn ran (its subagents,
    /// compaction summaries, the auto-mode classifier, image descriptions,
    /// WebFetch's answers), as `riot exec`'s `side_usage` counts them.
    pub side_usage: UsageFigures,
    /// The session's cost so far, in US dollars (`Session::cost`); always
    /// sent, `null` when unknown.
    pub cost_usd: Option<f64>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/compaction`'s status.
#[derive(schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStatus {
    Compacting,
    Compacted,
}

/// `_riot/compaction`: compaction started or finished.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
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
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/checkpoints` (request, `{sessionId}`): the session's user
/// messages, numbered as `_riot/rewind` takes them, each with the files
/// its turn changed (docs/rewind.md).
pub const CHECKPOINTS: &str = "_riot/checkpoints";
/// `_riot/rewind` (request, `{sessionId, to?, filesOnly?,
/// conversationOnly?, force?, undo?}`): rewind to just before user
/// message `to`, or undo the last rewind (docs/rewind.md).
pub const REWIND: &str = "_riot/rewind";

/// `_riot/checkpoints`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointsRequest {
    pub session_id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(CheckpointsRequest, CHECKPOINTS, CheckpointsResponse);

/// `_riot/checkpoints`' reply: `{number, text, at_ms, in_history, files,
/// calls, unfinished}` per user message.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
pub struct CheckpointsResponse {
    pub points: Vec<Value>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/rewind`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RewindRequest {
    pub session_id: String,
    #[serde(default)]
    pub to: Option<u32>,
    #[serde(default)]
    pub files_only: bool,
    #[serde(default)]
    pub conversation_only: bool,
    #[serde(default)]
    pub force: bool,
    #[serde(default)]
    pub undo: bool,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(RewindRequest, REWIND, RewindResponse);

/// `_riot/rewind`'s reply: what happened (`{to, files: {restored,
/// removed, conflicts, forced, notes} | null, conversation, prompt}`) and
/// the same as one paragraph for a person.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
pub struct RewindResponse {
    pub outcome: Value,
    pub summary: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_asked_for_is_a_name_or_true_and_anything_else_is_refused() {
        let meta = |worktree: Value| {
            let mut meta = Meta::new();
            meta.insert("riot".into(), json!({ "worktree": worktree }));
            meta
        };
        assert_eq!(worktree_asked(None), Ok(None));
        assert_eq!(worktree_asked(Some(&Meta::new())), Ok(None));
        assert_eq!(worktree_asked(Some(&meta(Value::Null))), Ok(None));
        assert_eq!(
            worktree_asked(Some(&meta(json!("w1")))),
            Ok(Some("w1".to_owned()))
        );
        assert_eq!(
            worktree_asked(Some(&meta(json!("")))),
            Ok(Some(String::new()))
        );
        assert_eq!(
            worktree_asked(Some(&meta(json!(true)))),
            Ok(Some(String::new()))
        );
        for (bad, shown) in [
            (json!(false), "false"),
            (json!(3), "3"),
            (json!({"name": "w1"}), r#"{"name":"w1"}"#),
            (json!(["w1"]), r#"["w1"]"#),
        ] {
            assert_eq!(
                worktree_asked(Some(&meta(bad))),
                Err(format!(
                    "_meta.riot.worktree must be a worktree name (a string; \"\" for one Riot picks) or true, not {shown}; leave it out to work in the project itself"
                ))
            );
        }
    }

    #[test]
    fn an_unknown_cost_is_sent_as_null_never_left_out_or_zero() {
        let notification = UsageNotification {
            session_id: "s1".into(),
            model: "local".into(),
            requests: 1,
            usage: UsageFigures::default(),
            side_usage: UsageFigures::default(),
            cost_usd: None,
            meta: None,
        };
        let value = serde_json::to_value(&notification).unwrap();
        assert_eq!(value["costUsd"], Value::Null);
        assert!(value.as_object().unwrap().contains_key("costUsd"));
        let known = UsageNotification {
            cost_usd: Some(0.25),
            ..notification
        };
        assert_eq!(
            serde_json::to_value(&known).unwrap()["costUsd"],
            json!(0.25)
        );
    }
}
