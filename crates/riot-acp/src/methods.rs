//! Every `_riot/...` method as one JSON Schema, committed as
//! `schemas/riot_methods.json`: for a request its params and its result,
//! for a notification its params. The web UI's TypeScript for them is
//! generated from it (`desktop/ui/src/generated/riot_methods.ts`), and a
//! test fails when the Rust types and the committed schema differ
//! (`cargo run -p riot-acp --bin gen-riot-schema` rewrites it).

use agent_client_protocol::JsonRpcRequest;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::background::{
    BackgroundNotification, BackgroundRequest, BackgroundStopRequest, DeliverRequest,
};
use crate::ext::{
    CheckpointsRequest, CompactionNotification, ConfigRequest, ConfigSetRequest, FilesRequest,
    McpRestartRequest, McpServersRequest, RewindRequest, SessionDeleteRequest,
    SessionRenameRequest, SetModelRequest, ShutdownRequest, UsageNotification,
};
use crate::queue::{QueueNotification, QueueRequest};
use crate::terminals::{TerminalNotification, TerminalResizeRequest, TerminalWriteRequest};

/// A request: what the client sends and what it gets back.
// The result is the response type the request itself names
// (`riot_request!`), so the two cannot be paired wrongly here.
#[derive(JsonSchema)]
#[schemars(inline, bound = "P: JsonSchema, P::Response: JsonSchema")]
#[allow(dead_code)] // a schema, never a value
struct Request<P: JsonRpcRequest> {
    params: P,
    result: P::Response,
}

/// A notification: what the agent sends.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // a schema, never a value
struct Notification<Params> {
    params: Params,
}

/// Riot's methods beyond ACP, by name.
#[derive(JsonSchema)]
#[allow(dead_code)] // a schema, never a value
struct RiotMethods {
    #[serde(rename = "_riot/shutdown")]
    shutdown: Request<ShutdownRequest>,
    #[serde(rename = "_riot/mcp_servers")]
    mcp_servers: Request<McpServersRequest>,
    #[serde(rename = "_riot/mcp_restart")]
    mcp_restart: Request<McpRestartRequest>,
    #[serde(rename = "_riot/config")]
    config: Request<ConfigRequest>,
    #[serde(rename = "_riot/config_set")]
    config_set: Request<ConfigSetRequest>,
    #[serde(rename = "_riot/files")]
    files: Request<FilesRequest>,
    #[serde(rename = "_riot/session_rename")]
    session_rename: Request<SessionRenameRequest>,
    #[serde(rename = "_riot/session_delete")]
    session_delete: Request<SessionDeleteRequest>,
    #[serde(rename = "_riot/set_model")]
    set_model: Request<SetModelRequest>,
    #[serde(rename = "_riot/checkpoints")]
    checkpoints: Request<CheckpointsRequest>,
    #[serde(rename = "_riot/rewind")]
    rewind: Request<RewindRequest>,
    #[serde(rename = "_riot/terminal_write")]
    terminal_write: Request<TerminalWriteRequest>,
    #[serde(rename = "_riot/terminal_resize")]
    terminal_resize: Request<TerminalResizeRequest>,
    #[serde(rename = "_riot/queue")]
    queue: Request<QueueRequest>,
    #[serde(rename = "_riot/background")]
    background: Request<BackgroundRequest>,
    #[serde(rename = "_riot/background_stop")]
    background_stop: Request<BackgroundStopRequest>,
    #[serde(rename = "_riot/deliver")]
    deliver: Request<DeliverRequest>,
    #[serde(rename = "_riot/usage")]
    usage: Notification<UsageNotification>,
    #[serde(rename = "_riot/compaction")]
    compaction: Notification<CompactionNotification>,
    #[serde(rename = "_riot/queue_update")]
    queue_update: Notification<QueueNotification>,
    #[serde(rename = "_riot/background_update")]
    background_update: Notification<BackgroundNotification>,
    #[serde(rename = "_riot/terminal")]
    terminal: Notification<TerminalNotification>,
}

/// The schema of every `_riot/...` method.
pub fn riot_methods_schema() -> Schema {
    SchemaGenerator::new(SchemaSettings::draft2020_12()).into_root_schema_for::<RiotMethods>()
}

/// The names the schema covers, for the test that every method has one.
pub fn schema_method_names() -> Vec<String> {
    riot_methods_schema()
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}
