//! A session's background agents over ACP (docs/parallel.md): Task calls
//! with `run_in_background`, listed and stopped through the session
//! handle (`tasks`, `stop_task`), during a turn or between turns.
//!
//! - `_riot/background` (request, `{sessionId}`): the session's
//!   background tasks, oldest first.
//! - `_riot/background_stop` (request, `{sessionId, id}`): stops a running
//!   one; the reply is the task as it stands (still `running` until it
//!   has wound down), `_riot/background_update` says when it `stopped`,
//!   and its result reaches the parent once, as for any background task.
//!   An unknown or ended task is an invalid-params error saying which.
//! - `_riot/background_update` (notification, opt-in): a task started,
//!   made a tool call or ended.
//! - `_riot/deliver` (request, `{sessionId}`): when a task's result waits
//!   in the session's queue and no turn runs (it ended after the turn), a
//!   turn of Riot's gives it to the model — streamed as `session/update`s
//!   like a prompt's turn, cancelled by `session/cancel` — and the reply
//!   is `{stopReason}` as `session/prompt`'s; `{stopReason: null}` when
//!   nothing waited or a turn runs already (that turn takes it). ACP has
//!   no turn an agent starts, so a client that wants the model to hear of
//!   a result without waiting for the person's next prompt asks for one.
//!
//! A task is `{id, agent, description, state, calls, last, result}`:
//! `state` is `running`, `completed`, `failed` or `stopped`; `last` the
//! latest tool call it made; `result` its answer (or why it failed) once
//! it ended.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::Meta;
use riot_kernel::background::{TaskState, TaskSummary};
use riot_kernel::{SessionHandle, Stopper};
use serde::{Deserialize, Serialize};

pub const BACKGROUND: &str = "_riot/background";
pub const BACKGROUND_STOP: &str = "_riot/background_stop";
pub const BACKGROUND_UPDATE: &str = "_riot/background_update";
pub const DELIVER: &str = "_riot/deliver";

use crate::error::RequestError;

/// `_riot/background`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackgroundRequest {
    pub session_id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

crate::rpc::riot_request!(BackgroundRequest, BACKGROUND, BackgroundResponse);

/// `_riot/background_stop`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackgroundStopRequest {
    pub session_id: String,
    /// The task's id (`bg_1`, …).
    pub id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

crate::rpc::riot_request!(
    BackgroundStopRequest,
    BACKGROUND_STOP,
    BackgroundStopResponse
);

/// `_riot/deliver`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliverRequest {
    pub session_id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

crate::rpc::riot_request!(DeliverRequest, DELIVER, DeliverResponse);

/// `_riot/deliver`'s reply: how the turn ended, or null when none ran.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct DeliverResponse {
    /// ACP's stop reason (`end_turn`, `max_tokens`, `max_turn_requests`,
    /// `refusal`, `cancelled`).
    #[schemars(with = "Option<String>")]
    pub stop_reason: Option<agent_client_protocol::v1::schema::StopReason>,
}

/// One background task.
#[derive(schemars::JsonSchema, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackgroundTask {
    pub id: String,
    pub agent: String,
    pub description: String,
    /// `running`, `completed`, `failed` or `stopped`.
    pub state: String,
    /// Tool calls it has started.
    pub calls: usize,
    /// Its latest tool call.
    pub last: Option<String>,
    /// Its answer, or why it failed, once it ended.
    pub result: Option<String>,
}

impl From<TaskSummary> for BackgroundTask {
    fn from(t: TaskSummary) -> Self {
        Self {
            id: t.id,
            agent: t.agent,
            description: t.description,
            state: t.state.word().to_owned(),
            calls: t.calls,
            last: t.last,
            result: t.result,
        }
    }
}

/// `_riot/background`'s reply.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
pub struct BackgroundResponse {
    pub tasks: Vec<BackgroundTask>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/background_stop`'s reply: the task as it stands.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
pub struct BackgroundStopResponse {
    pub task: BackgroundTask,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/background_update`: a task started, made a tool call or ended.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_riot/background_update")]
#[serde(rename_all = "camelCase")]
pub struct BackgroundNotification {
    pub session_id: String,
    pub task: BackgroundTask,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// The `_riot/background_update` notification of `task` in session
/// `session_id`.
pub(crate) fn notification(session_id: &str, task: &TaskSummary) -> BackgroundNotification {
    BackgroundNotification {
        session_id: session_id.to_owned(),
        task: task.clone().into(),
        meta: None,
    }
}

/// `_riot/background`.
pub(crate) fn list(session: &SessionHandle) -> BackgroundResponse {
    BackgroundResponse {
        tasks: session
            .tasks()
            .into_iter()
            .map(BackgroundTask::from)
            .collect(),
        meta: None,
    }
}

/// `_riot/background_stop`.
pub(crate) fn stop(
    session: &SessionHandle,
    request: &BackgroundStopRequest,
) -> Result<BackgroundStopResponse, Error> {
    let id = request.id.as_str();
    let Some(task) = session.task(id) else {
        let known: Vec<String> = session.tasks().into_iter().map(|t| t.id).collect();
        let id = id.to_owned();
        return Err(if known.is_empty() {
            RequestError::NoBackgroundTasks { id }
        } else {
            RequestError::UnknownBackgroundTask { id, known }
        }
        .into());
    };
    if task.state != TaskState::Running || !session.stop_task(id, Stopper::Person) {
        let state = session.task(id).map_or(task.state, |t| t.state);
        return Err(RequestError::BackgroundTaskEnded {
            id: id.to_owned(),
            state: state.word(),
        }
        .into());
    }
    let task = session.task(id).unwrap_or(task);
    Ok(BackgroundStopResponse {
        task: task.into(),
        meta: None,
    })
}
