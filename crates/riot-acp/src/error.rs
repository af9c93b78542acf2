//! The JSON-RPC errors the agent answers, built here from typed errors:
//! the kernel's ([`kernel_error`], coded by `KernelError::jsonrpc_code`),
//! the ones this face finds in a request itself ([`RequestError`]), in
//! the session it names ([`SessionError`]), in authentication
//! ([`AuthError`]), in a turn's end ([`TurnError`]), and Riot's own
//! failures ([`InternalError`]). `Error::new` is called here only.

use std::path::PathBuf;

use agent_client_protocol::Error;
use riot_kernel::KernelError;
use riot_kernel::error::{JSONRPC_INTERNAL_ERROR, JSONRPC_INVALID_PARAMS};
use riot_store::StoreError;

use crate::mapping::UnsupportedContent;
use crate::session_config;

/// ACP's "authentication required" error code.
pub(crate) const JSONRPC_AUTH_REQUIRED: i32 = -32000;

/// The JSON-RPC error of a typed error: its code and its message.
fn coded(code: i32, e: &impl std::fmt::Display) -> Error {
    Error::new(code, e.to_string())
}

/// Names as `a, b, c`.
fn listed(names: &[String]) -> String {
    names.join(", ")
}

/// Names as `` `a`, `b`, `c` ``.
fn ticked(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A request this face refuses before the kernel sees it: the client's
/// to fix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequestError {
    /// `session/prompt` holds content Riot does not take.
    #[error(transparent)]
    Content(#[from] UnsupportedContent),
    /// `session/new` asks for a worktree with neither a name nor `true`.
    #[error(transparent)]
    Worktree(#[from] BadWorktreeAsk),
    /// A `cwd` that is not an absolute path.
    #[error("cwd {} is not an absolute path", .cwd.display())]
    RelativeCwd {
        /// The path as sent.
        cwd: PathBuf,
    },
    /// A `cwd` that cannot be resolved (missing, unreadable).
    #[error("cwd {}: {source}", .cwd.display())]
    Cwd {
        /// The path as sent.
        cwd: PathBuf,
        /// Why it cannot be resolved.
        source: std::io::Error,
    },
    /// `session/prompt` with neither text nor images.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// `_riot/set_model` with a blank model name.
    #[error("the model name is empty")]
    EmptyModelName,
    /// A permission mode Riot does not offer.
    #[error("unknown mode `{wanted}`; use one of {}", listed(.offered))]
    UnknownMode {
        /// The mode asked for.
        wanted: String,
        /// The modes offered.
        offered: Vec<String>,
    },
    /// `session/set_config_option` with a boolean for a select option.
    #[error("`{config_id}` takes one of its listed values, not a boolean")]
    BooleanConfigValue {
        /// The option set.
        config_id: String,
    },
    /// A model that is not among the session's choices.
    #[error("unknown model `{model}`; use one of {}", listed(.offered))]
    UnknownModel {
        /// The model asked for.
        model: String,
        /// The ids of the models offered.
        offered: Vec<String>,
    },
    /// A thinking level for a model that cannot think.
    #[error("`{model}` cannot think; `thinking` is not offered for it")]
    NoThinking {
        /// The session's model.
        model: String,
    },
    /// A thinking level that is not off, low, medium or high.
    #[error("unknown thinking level `{level}`; use off, low, medium or high")]
    UnknownThinkingLevel {
        /// The level asked for.
        level: String,
    },
    /// A config option that is neither the model, thinking nor the mode.
    #[error(
        "unknown config option `{option}`; use `{}`, `{}` or `{}`",
        session_config::MODEL,
        session_config::THINKING,
        session_config::MODE
    )]
    UnknownConfigOption {
        /// The option asked for.
        option: String,
    },
    /// `_riot/rewind` with both `filesOnly` and `conversationOnly`.
    #[error("filesOnly and conversationOnly exclude each other")]
    RewindBothOnly,
    /// `_riot/rewind` with both or neither of `to` and `undo`.
    #[error(
        "give either `to` (the user message to rewind to, from _riot/checkpoints) or `undo: true`"
    )]
    RewindTarget,
    /// `_riot/background_stop` of a task in a session that started none.
    #[error("there is no background task `{id}`: none was started in this session")]
    NoBackgroundTasks {
        /// The task asked for.
        id: String,
    },
    /// `_riot/background_stop` of a task the session does not have.
    #[error("there is no background task `{id}` in this session; its tasks are {}", listed(.known))]
    UnknownBackgroundTask {
        /// The task asked for.
        id: String,
        /// The session's tasks.
        known: Vec<String>,
    },
    /// `_riot/background_stop` of a task that is no longer running.
    #[error("background task `{id}` has already ended ({state}); there is nothing to stop")]
    BackgroundTaskEnded {
        /// The task asked for.
        id: String,
        /// The word for how it ended.
        state: &'static str,
    },
    /// A `_riot/queue` action without the queued message's `id`.
    #[error("{action} needs the `id` of a queued message (from `_riot/queue`'s list)")]
    QueueNeedsId {
        /// The action asked for.
        action: String,
    },
    /// A `_riot/queue` action without the message's text.
    #[error("{action} needs the message's `text`, not empty")]
    QueueNeedsText {
        /// The action asked for.
        action: String,
    },
    /// A change to a background task's result Riot queued.
    #[error(
        "queued message `{id}` is a background task's result Riot queued for the agent; it cannot be edited or removed"
    )]
    QueuedByRiot {
        /// The queued message.
        id: String,
    },
    /// A queued message that is gone, and nothing else waits.
    #[error(
        "there is no queued message `{id}` in this session: it was delivered or removed, and nothing is queued now"
    )]
    NothingQueued {
        /// The message asked for.
        id: String,
    },
    /// A queued message that is gone while others wait.
    #[error(
        "there is no queued message `{id}` in this session: it was delivered or removed; the queued ones are {}",
        ticked(.queued)
    )]
    NotQueued {
        /// The message asked for.
        id: String,
        /// The ids of the messages waiting.
        queued: Vec<String>,
    },
    /// `_riot/mcp_restart` the kernel refused (an unknown or ambiguous
    /// server name, one that cannot start).
    #[error(transparent)]
    McpRestart(KernelError),
}

impl RequestError {
    /// The JSON-RPC error code: invalid params (`-32602`), as for the
    /// kernel's usage errors.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            RequestError::Content(_)
            | RequestError::Worktree(_)
            | RequestError::RelativeCwd { .. }
            | RequestError::Cwd { .. }
            | RequestError::EmptyPrompt
            | RequestError::EmptyModelName
            | RequestError::UnknownMode { .. }
            | RequestError::BooleanConfigValue { .. }
            | RequestError::UnknownModel { .. }
            | RequestError::NoThinking { .. }
            | RequestError::UnknownThinkingLevel { .. }
            | RequestError::UnknownConfigOption { .. }
            | RequestError::RewindBothOnly
            | RequestError::RewindTarget
            | RequestError::NoBackgroundTasks { .. }
            | RequestError::UnknownBackgroundTask { .. }
            | RequestError::BackgroundTaskEnded { .. }
            | RequestError::QueueNeedsId { .. }
            | RequestError::QueueNeedsText { .. }
            | RequestError::QueuedByRiot { .. }
            | RequestError::NothingQueued { .. }
            | RequestError::NotQueued { .. }
            | RequestError::McpRestart(_) => JSONRPC_INVALID_PARAMS,
        }
    }
}

impl From<RequestError> for Error {
    fn from(e: RequestError) -> Self {
        coded(e.jsonrpc_code(), &e)
    }
}

/// A request the session it names cannot take now: unknown, not open
/// here, busy, or Riot stopping.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    /// No session with this id is open on this connection.
    #[error("unknown session `{id}`")]
    Unknown {
        /// The id sent.
        id: String,
    },
    /// `session/close` of a session that is not open.
    #[error("session `{id}` is not open")]
    NotOpen {
        /// The id sent.
        id: String,
    },
    /// A delete while a turn runs in the session.
    #[error("session `{id}` is running a prompt; stop it before deleting it")]
    RunningOnDelete {
        /// The session.
        id: String,
    },
    /// A delete of a session another client has open.
    #[error("session `{id}` is open in another window; close it there first")]
    OpenElsewhere {
        /// The session.
        id: String,
    },
    /// `session/load` while a turn runs in the session.
    #[error("session `{id}` is running a prompt; load it when the turn ends")]
    RunningOnLoad {
        /// The session.
        id: String,
    },
    /// `_riot/checkpoints` while a turn runs.
    #[error("a turn is running in this session; ask for its checkpoints after the turn")]
    RunningOnCheckpoints,
    /// `_riot/rewind` while a turn runs.
    #[error("a turn is running in this session; cancel it or wait for its end, then rewind")]
    RunningOnRewind,
    /// `session/prompt` while Riot shuts down.
    #[error("Riot is shutting down; it takes no new prompts")]
    ShuttingDownOnPrompt,
    /// `_riot/deliver` while Riot shuts down.
    #[error("Riot is shutting down; it starts no new turns")]
    ShuttingDownOnDeliver,
    /// The store refused to delete the saved session.
    #[error(transparent)]
    Delete(StoreError),
    /// The saved session's worktree could not be read on resume.
    #[error(transparent)]
    Worktree(KernelError),
}

impl SessionError {
    /// The JSON-RPC error code: invalid params (`-32602`), the session
    /// being the request's.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            SessionError::Unknown { .. }
            | SessionError::NotOpen { .. }
            | SessionError::RunningOnDelete { .. }
            | SessionError::OpenElsewhere { .. }
            | SessionError::RunningOnLoad { .. }
            | SessionError::RunningOnCheckpoints
            | SessionError::RunningOnRewind
            | SessionError::ShuttingDownOnPrompt
            | SessionError::ShuttingDownOnDeliver
            | SessionError::Delete(_)
            | SessionError::Worktree(_) => JSONRPC_INVALID_PARAMS,
        }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        coded(e.jsonrpc_code(), &e)
    }
}

/// An API key that is missing, or an `authenticate` Riot cannot do.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthError {
    /// New sessions would have no key for their endpoint.
    #[error("Riot has {problem}; authenticate with `{method}` to store one")]
    KeyMissing {
        /// What the model settings lack.
        problem: String,
        /// The authentication method that stores the key.
        method: String,
    },
    /// `authenticate` with `none` for an endpoint that needs a key.
    #[error("this endpoint needs an API key: authenticate with the provider's API-key method")]
    KeyNeeded,
    /// `authenticate` with a method Riot does not list.
    #[error("unknown authentication method `{method}`; use one of {}", listed(.known))]
    UnknownMethod {
        /// The method asked for.
        method: String,
        /// The methods of `initialize`.
        known: Vec<String>,
    },
    /// An API-key method without the key in `_meta.riot.apiKey`.
    #[error("`{method}` needs the key: send it as _meta.riot.apiKey")]
    KeyNotSent {
        /// The method asked for.
        method: String,
    },
}

impl AuthError {
    /// The JSON-RPC error code: ACP's auth required (`-32000`) when a key
    /// is missing, invalid params for a malformed `authenticate`.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            AuthError::KeyMissing { .. } | AuthError::KeyNeeded => JSONRPC_AUTH_REQUIRED,
            AuthError::UnknownMethod { .. } | AuthError::KeyNotSent { .. } => {
                JSONRPC_INVALID_PARAMS
            }
        }
    }
}

impl From<AuthError> for Error {
    fn from(e: AuthError) -> Self {
        coded(e.jsonrpc_code(), &e)
    }
}

/// A turn that ended without a stop reason ACP has: the error it ended
/// in, in the agent's words.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TurnError {
    /// The client's mistake (an unknown slash command).
    #[error("{message}")]
    Usage {
        /// The agent's message.
        message: String,
    },
    /// The provider refused the key: the client can authenticate again.
    #[error("{message}")]
    KeyRefused {
        /// The agent's message.
        message: String,
    },
    /// Anything else that failed on Riot's side.
    #[error("{message}")]
    Failed {
        /// The agent's message.
        message: String,
    },
    /// An end ACP has no stop reason for, by its name.
    #[error("{reason}")]
    Ended {
        /// The terminal reason's snake_case name.
        reason: &'static str,
    },
}

impl TurnError {
    /// The JSON-RPC error code: invalid params for usage, auth required
    /// for a refused key, internal error otherwise.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            TurnError::Usage { .. } => JSONRPC_INVALID_PARAMS,
            TurnError::KeyRefused { .. } => JSONRPC_AUTH_REQUIRED,
            TurnError::Failed { .. } | TurnError::Ended { .. } => JSONRPC_INTERNAL_ERROR,
        }
    }
}

impl From<TurnError> for Error {
    fn from(e: TurnError) -> Self {
        coded(e.jsonrpc_code(), &e)
    }
}

/// A failure on Riot's side while answering.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InternalError {
    /// A response that could not be turned into JSON.
    #[error(transparent)]
    Serialize(#[from] serde_json::Error),
    /// The saved sessions could not be listed.
    #[error(transparent)]
    SessionList(StoreError),
}

impl InternalError {
    /// The JSON-RPC error code: internal error (`-32603`).
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            InternalError::Serialize(_) | InternalError::SessionList(_) => JSONRPC_INTERNAL_ERROR,
        }
    }
}

impl From<InternalError> for Error {
    fn from(e: InternalError) -> Self {
        coded(e.jsonrpc_code(), &e)
    }
}

/// The kernel says which JSON-RPC code its error is (`KernelError::jsonrpc_code`).
pub(crate) fn kernel_error(e: KernelError) -> Error {
    coded(e.jsonrpc_code(), &e)
}

/// `_meta.riot.worktree` of a `session/new` that is neither a name nor
/// `true`: refused rather than opening the session in the project's own
/// checkout.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "_meta.riot.worktree must be a worktree name (a string; \"\" for one Riot picks) or true, not {asked}; leave it out to work in the project itself"
)]
pub struct BadWorktreeAsk {
    /// The value the client sent.
    pub asked: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_is_invalid_params_with_its_reason() {
        let refused = Error::from(RequestError::from(UnsupportedContent::Audio));
        assert_eq!(i32::from(refused.code), -32602);
        assert_eq!(refused.message, "audio is not supported in prompts");
        let asked = RequestError::from(BadWorktreeAsk {
            asked: serde_json::json!(3),
        });
        assert_eq!(asked.jsonrpc_code(), -32602);
        assert!(asked.to_string().contains("or true, not 3;"), "{asked}");
    }

    /// The code and message a typed error answers with.
    fn answer(e: impl Into<Error>) -> (i32, String) {
        let e = e.into();
        (i32::from(e.code), e.message)
    }

    /// A stand-in id or name.
    fn id() -> String {
        "x".to_owned()
    }

    #[test]
    fn every_request_error_is_invalid_params() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let all = [
            RequestError::RelativeCwd { cwd: "src".into() },
            RequestError::Cwd {
                cwd: "/nope".into(),
                source: io(),
            },
            RequestError::EmptyPrompt,
            RequestError::EmptyModelName,
            RequestError::UnknownMode {
                wanted: id(),
                offered: vec![id()],
            },
            RequestError::BooleanConfigValue { config_id: id() },
            RequestError::UnknownModel {
                model: id(),
                offered: vec![id()],
            },
            RequestError::NoThinking { model: id() },
            RequestError::UnknownThinkingLevel { level: id() },
            RequestError::UnknownConfigOption { option: id() },
            RequestError::RewindBothOnly,
            RequestError::RewindTarget,
            RequestError::NoBackgroundTasks { id: id() },
            RequestError::UnknownBackgroundTask {
                id: id(),
                known: vec![id()],
            },
            RequestError::BackgroundTaskEnded {
                id: id(),
                state: "done",
            },
            RequestError::QueueNeedsId { action: id() },
            RequestError::QueueNeedsText { action: id() },
            RequestError::QueuedByRiot { id: id() },
            RequestError::NothingQueued { id: id() },
            RequestError::NotQueued {
                id: id(),
                queued: vec![id()],
            },
            RequestError::McpRestart(KernelError::Busy),
        ];
        for e in all {
            assert_eq!(answer(e).0, -32602);
        }
        assert_eq!(
            answer(RequestError::RelativeCwd { cwd: "src".into() }),
            (-32602, "cwd src is not an absolute path".to_owned())
        );
        assert_eq!(
            answer(RequestError::UnknownConfigOption {
                option: "colour".into()
            })
            .1,
            "unknown config option `colour`; use `model`, `thinking` or `mode`"
        );
        assert_eq!(
            answer(RequestError::UnknownBackgroundTask {
                id: "bg_9".into(),
                known: vec!["bg_1".into(), "bg_2".into()],
            })
            .1,
            "there is no background task `bg_9` in this session; its tasks are bg_1, bg_2"
        );
        assert_eq!(
            answer(RequestError::NotQueued {
                id: "m3".into(),
                queued: vec!["m1".into(), "m2".into()],
            })
            .1,
            "there is no queued message `m3` in this session: it was delivered or removed; the queued ones are `m1`, `m2`"
        );
    }

    #[test]
    fn every_session_error_is_invalid_params() {
        let all = [
            SessionError::Unknown { id: id() },
            SessionError::NotOpen { id: id() },
            SessionError::RunningOnDelete { id: id() },
            SessionError::OpenElsewhere { id: id() },
            SessionError::RunningOnLoad { id: id() },
            SessionError::RunningOnCheckpoints,
            SessionError::RunningOnRewind,
            SessionError::ShuttingDownOnPrompt,
            SessionError::ShuttingDownOnDeliver,
            SessionError::Delete(StoreError::EmptyTitle),
            SessionError::Worktree(KernelError::Busy),
        ];
        for e in all {
            assert_eq!(answer(e).0, -32602);
        }
        assert_eq!(
            answer(SessionError::Unknown {
                id: "ses_nope".into()
            }),
            (-32602, "unknown session `ses_nope`".to_owned())
        );
        assert_eq!(
            answer(SessionError::RunningOnDelete { id: "s1".into() }).1,
            "session `s1` is running a prompt; stop it before deleting it"
        );
    }

    #[test]
    fn a_missing_key_is_auth_required_and_a_bad_authenticate_invalid_params() {
        let missing = AuthError::KeyMissing {
            problem: "no API key".into(),
            method: "anthropic-api-key".into(),
        };
        assert_eq!(
            answer(missing),
            (
                -32000,
                "Riot has no API key; authenticate with `anthropic-api-key` to store one"
                    .to_owned()
            )
        );
        assert_eq!(answer(AuthError::KeyNeeded).0, -32000);
        let unknown = AuthError::UnknownMethod {
            method: "x".into(),
            known: vec!["a".into(), "none".into()],
        };
        assert_eq!(
            answer(unknown),
            (
                -32602,
                "unknown authentication method `x`; use one of a, none".to_owned()
            )
        );
        assert_eq!(answer(AuthError::KeyNotSent { method: id() }).0, -32602);
    }

    #[test]
    fn a_failed_turn_is_coded_by_its_kind() {
        let message = || "it broke".to_owned();
        assert_eq!(
            answer(TurnError::Usage { message: message() }),
            (-32602, message())
        );
        assert_eq!(
            answer(TurnError::KeyRefused { message: message() }),
            (-32000, message())
        );
        assert_eq!(
            answer(TurnError::Failed { message: message() }),
            (-32603, message())
        );
        assert_eq!(
            answer(TurnError::Ended { reason: "refusal" }),
            (-32603, "refusal".to_owned())
        );
    }

    #[test]
    fn riots_own_failures_are_internal_errors() {
        let Err(bad) = serde_json::from_str::<u8>("x") else {
            panic!("`x` parsed as a number");
        };
        assert_eq!(answer(InternalError::from(bad)).0, -32603);
        let list = InternalError::SessionList(StoreError::EmptyTitle);
        let message = list.to_string();
        assert_eq!(answer(list), (-32603, message));
    }
}
