//! `_riot/checkpoints` and `_riot/rewind` (docs/rewind.md): the user
//! messages a rewind can go back to, and the rewind itself.

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rpc::riot_request;

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
