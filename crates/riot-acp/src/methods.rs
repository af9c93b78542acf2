//! Every `_riot/...` method as one JSON Schema, committed as
//! `schemas/riot_methods.json`: for a request its params and its result,
//! for a notification its params. The web UI's TypeScript for them is
//! generated from it (`desktop/ui/src/generated/riot_methods.ts`), and a
//! test fails when the Rust types and the committed schema differ
//! (`cargo run -p riot-acp --bin gen-riot-schema` rewrites it).

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::background::{
    BackgroundNotification, BackgroundRequest, BackgroundResponse, BackgroundStopRequest,
    BackgroundStopResponse, DeliverRequest, DeliverResponse,
};
use crate::ext::{
    CheckpointsRequest, CheckpointsResponse, CompactionNotification, ConfigRequest, ConfigResponse,
    ConfigSetRequest, DoneResponse, FilesRequest, FilesResponse, McpRestartRequest,
    McpRestartResponse, McpServersRequest, McpServersResponse, RewindRequest, RewindResponse,
    SessionDeleteRequest, SessionRenameRequest, SetModelRequest, ShutdownRequest, ShutdownResponse,
    UsageNotification,
};
use crate::queue::{QueueNotification, QueueRequest, QueueResponse};
use crate::terminals::{
    TerminalNotification, TerminalResizeRequest, TerminalResizeResponse, TerminalWriteRequest,
};

/// A request: what the client sends and what it gets back.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // a schema, never a value
struct Request<Params, Result> {
    params: Params,
    result: Result,
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
    shutdown: Request<ShutdownRequest, ShutdownResponse>,
    #[serde(rename = "_riot/mcp_servers")]
    mcp_servers: Request<McpServersRequest, McpServersResponse>,
    #[serde(rename = "_riot/mcp_restart")]
    mcp_restart: Request<McpRestartRequest, McpRestartResponse>,
    #[serde(rename = "_riot/config")]
    config: Request<ConfigRequest, ConfigResponse>,
    #[serde(rename = "_riot/config_set")]
    config_set: Request<ConfigSetRequest, ConfigResponse>,
    #[serde(rename = "_riot/files")]
    files: Request<FilesRequest, FilesResponse>,
    #[serde(rename = "_riot/session_rename")]
    session_rename: Request<SessionRenameRequest, DoneResponse>,
    #[serde(rename = "_riot/session_delete")]
    session_delete: Request<SessionDeleteRequest, DoneResponse>,
    #[serde(rename = "_riot/set_model")]
    set_model: Request<SetModelRequest, DoneResponse>,
    #[serde(rename = "_riot/checkpoints")]
    checkpoints: Request<CheckpointsRequest, CheckpointsResponse>,
    #[serde(rename = "_riot/rewind")]
    rewind: Request<RewindRequest, RewindResponse>,
    #[serde(rename = "_riot/terminal_write")]
    terminal_write: Request<TerminalWriteRequest, DoneResponse>,
    #[serde(rename = "_riot/terminal_resize")]
    terminal_resize: Request<TerminalResizeRequest, TerminalResizeResponse>,
    #[serde(rename = "_riot/queue")]
    queue: Request<QueueRequest, QueueResponse>,
    #[serde(rename = "_riot/background")]
    background: Request<BackgroundRequest, BackgroundResponse>,
    #[serde(rename = "_riot/background_stop")]
    background_stop: Request<BackgroundStopRequest, BackgroundStopResponse>,
    #[serde(rename = "_riot/deliver")]
    deliver: Request<DeliverRequest, DeliverResponse>,
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
