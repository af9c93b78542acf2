//! A session's terminals over ACP (docs/terminals.md): the
//! `_riot/terminal` notification carries each `TerminalUpdate` to a client
//! that asked for it, the `_riot/terminal_write` request types the
//! person's keys into a terminal (the agent's next read says so), and
//! `_riot/terminal_resize` gives a terminal a new size.

use agent_client_protocol::v1::schema::Meta;
use riot_kernel::SessionHandle;
use riot_protocol::TerminalUpdate;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const TERMINAL: &str = "_riot/terminal";
pub const TERMINAL_WRITE: &str = "_riot/terminal_write";
pub const TERMINAL_RESIZE: &str = "_riot/terminal_resize";

/// `_riot/terminal`: something happened in one of the session's terminals.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_riot/terminal")]
#[serde(rename_all = "camelCase")]
pub struct TerminalNotification {
    pub session_id: String,
    pub update: TerminalUpdate,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/terminal_write`: the person types `input` (the bytes a terminal
/// sends: `"\r"` for Enter, `"\u0003"` for Ctrl+C) into terminal `name`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalWriteRequest {
    pub session_id: String,
    pub name: String,
    pub input: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

crate::rpc::riot_request!(
    TerminalWriteRequest,
    TERMINAL_WRITE,
    crate::rpc::DoneResponse
);

/// `_riot/terminal_resize`: terminal `name` gets `rows` × `cols`
/// (clamped to 5×20 … 200×500); the answer is the size set.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminalResizeRequest {
    pub session_id: String,
    pub name: String,
    pub rows: u16,
    pub cols: u16,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// The size a terminal was given.
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
pub struct TerminalResizeResponse {
    pub rows: u16,
    pub cols: u16,
}

crate::rpc::riot_request!(
    TerminalResizeRequest,
    TERMINAL_RESIZE,
    TerminalResizeResponse
);

/// Resizes a terminal for the person.
pub(crate) async fn resize(
    session: &SessionHandle,
    request: &TerminalResizeRequest,
) -> Result<TerminalResizeResponse, agent_client_protocol::Error> {
    let size = riot_protocol::TerminalSize {
        rows: request.rows,
        cols: request.cols,
    };
    let size = session
        .resize_terminal(&request.name, size)
        .await
        .map_err(|e| {
            agent_client_protocol::Error::invalid_params().data(json!({"error": e.to_string()}))
        })?;
    Ok(TerminalResizeResponse {
        rows: size.rows,
        cols: size.cols,
    })
}

/// The `_riot/terminal` notification of `update` in session `session_id`.
pub(crate) fn notification(session_id: &str, update: &TerminalUpdate) -> TerminalNotification {
    TerminalNotification {
        session_id: session_id.to_owned(),
        update: update.clone(),
        meta: None,
    }
}

/// Types the person's input.
pub(crate) async fn write(
    session: &SessionHandle,
    request: &TerminalWriteRequest,
) -> Result<crate::rpc::DoneResponse, agent_client_protocol::Error> {
    session
        .write_terminal(&request.name, request.input.as_bytes())
        .await
        .map_err(|e| {
            agent_client_protocol::Error::invalid_params().data(json!({"error": e.to_string()}))
        })?;
    Ok(crate::rpc::DoneResponse::default())
}
