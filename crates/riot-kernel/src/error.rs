//! The kernel's error: what went wrong, with its source kept, and how a
//! face reports it — classified here, once. A person's or client's
//! mistake (a bad argument, an unknown session, a settings file to fix,
//! a model not configured) is a usage error: `riot` exits 2 and ACP
//! answers `-32602` (invalid params; `-32600` for a request to a closed
//! session). Anything else failed at run time: exit 1, `-32603`.

use riot_store::StoreError;

use riot_config::ConfigError;

/// The exit code of a usage or configuration error.
pub const EXIT_USAGE: i32 = 2;
/// The exit code of a run-time failure.
pub const EXIT_FAILURE: i32 = 1;
/// JSON-RPC: the request was not valid here.
pub const JSONRPC_INVALID_REQUEST: i32 = -32600;
/// JSON-RPC: a parameter was wrong.
pub const JSONRPC_INVALID_PARAMS: i32 = -32602;
/// JSON-RPC: the server failed.
pub const JSONRPC_INTERNAL_ERROR: i32 = -32603;

/// A kernel error. Its message is the one sentence a person sees.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// What a person or client asked cannot be done as asked: a bad
    /// argument, an unknown name, a choice to correct.
    #[error("{0}")]
    Input(String),
    /// A settings or hooks file that cannot be used as written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Another file of Riot's that must be fixed or removed first (a
    /// settings or credentials file a UI would rewrite).
    #[error("{0}")]
    BadFile(String),
    /// The model endpoint is not configured well enough to start: the
    /// message names what is missing and the fix.
    #[error("{0}")]
    Endpoint(String),
    /// The provider refused its configuration (a base URL, the client).
    #[error(transparent)]
    Provider(#[from] riot_providers::ConfigError),
    /// The transcript store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An MCP server or hub.
    #[error(transparent)]
    Mcp(#[from] riot_mcp::HubError),
    /// Reading or writing one of Riot's own files failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, or the path.
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Compacting the conversation failed (the model's summary request).
    #[error(transparent)]
    Compaction(#[from] riot_core::CompactError),
    /// A git worktree could not be made, measured or removed.
    #[error(transparent)]
    Worktree(#[from] riot_worktree::WorktreeError),
    /// Something else failed at run time.
    #[error("{0}")]
    Failed(String),
    /// A prompt came while a turn was running in the session.
    #[error("a prompt is already running in this session; cancel it or wait for its end")]
    Busy,
    /// The session was closed.
    #[error("the session is closed")]
    Closed,
}

impl KernelError {
    /// Whether this is the person's or client's to fix (a usage error)
    /// rather than a failure at run time.
    pub fn is_usage(&self) -> bool {
        match self {
            KernelError::Input(_)
            | KernelError::Config(_)
            | KernelError::BadFile(_)
            | KernelError::Endpoint(_)
            | KernelError::Provider(_)
            | KernelError::Busy
            | KernelError::Closed => true,
            KernelError::Store(e) => match e {
                StoreError::UnknownSession(_)
                | StoreError::BadId(_)
                | StoreError::EmptyTitle
                | StoreError::Busy(_) => true,
                StoreError::Io { .. } | StoreError::Corrupt { .. } | StoreError::NoMeta(_) => false,
            },
            KernelError::Mcp(e) => match e {
                riot_mcp::HubError::UnknownServer(_) | riot_mcp::HubError::Disabled(_) => true,
                riot_mcp::HubError::NoRuntime => false,
            },
            KernelError::Worktree(e) => matches!(e, riot_worktree::WorktreeError::Input(_)),
            KernelError::Io { .. } | KernelError::Compaction(_) | KernelError::Failed(_) => false,
        }
    }

    /// The process exit code: [`EXIT_USAGE`] (2) or [`EXIT_FAILURE`] (1).
    pub fn exit_code(&self) -> i32 {
        if self.is_usage() {
            EXIT_USAGE
        } else {
            EXIT_FAILURE
        }
    }

    /// The JSON-RPC error code: invalid params (`-32602`) for a client's
    /// mistake, invalid request (`-32600`) for a request to a closed
    /// session, internal error (`-32603`) for a failure.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            KernelError::Closed => JSONRPC_INVALID_REQUEST,
            e if e.is_usage() => JSONRPC_INVALID_PARAMS,
            _ => JSONRPC_INTERNAL_ERROR,
        }
    }

    /// An I/O failure while doing `what`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| KernelError::Io { what, source }
    }
}

/// Why a tool stack has no model (an inspection command): there is no
/// classifier, and a Task call fails saying why.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoModel {
    /// `riot permissions check` asks no model.
    #[error("a permission check asks no model")]
    PermissionCheck,
    /// No endpoint could be made from the configuration (shared by the
    /// stack's copies, so behind an `Arc`).
    #[error(transparent)]
    Unconfigured(std::sync::Arc<KernelError>),
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn class(e: &KernelError) -> (i32, i32) {
        (e.exit_code(), e.jsonrpc_code())
    }

    #[test]
    fn a_missing_session_is_usage_and_a_store_io_failure_is_a_failure() {
        let missing = KernelError::from(StoreError::UnknownSession("ses_nope".into()));
        assert_eq!(class(&missing), (2, -32602));
        assert_eq!(
            missing.to_string(),
            "no session `ses_nope`; `riot sessions list` shows the sessions that exist"
        );
        let io = KernelError::from(StoreError::Io {
            path: PathBuf::from("/home/a/.config/riot/sessions/ses_1.jsonl"),
            source: std::io::Error::other("disk full"),
        });
        assert_eq!(class(&io), (1, -32603));
        assert_eq!(
            std::error::Error::source(&io).map(ToString::to_string),
            Some("disk full".to_owned()),
            "the store error's own source is kept"
        );
    }

    #[test]
    fn each_source_is_classified_once() {
        let cases: Vec<(KernelError, (i32, i32))> = vec![
            (KernelError::Input("unknown tool `X`".into()), (2, -32602)),
            (
                KernelError::from(ConfigError::Usage("bad".into())),
                (2, -32602),
            ),
            (KernelError::Endpoint("not configured".into()), (2, -32602)),
            (
                KernelError::from(riot_providers::ConfigError::InvalidBaseUrl("x".into())),
                (2, -32602),
            ),
            (
                KernelError::from(StoreError::BadId("../x".into())),
                (2, -32602),
            ),
            (
                KernelError::from(StoreError::Corrupt {
                    path: PathBuf::from("/s.jsonl"),
                    line: 3,
                    reason: "not JSON".into(),
                }),
                (1, -32603),
            ),
            (
                KernelError::from(riot_mcp::HubError::UnknownServer("x".into())),
                (2, -32602),
            ),
            (
                KernelError::from(riot_mcp::HubError::NoRuntime),
                (1, -32603),
            ),
            (
                KernelError::from(riot_worktree::WorktreeError::Input(
                    "/tmp is not in a git repository".into(),
                )),
                (2, -32602),
            ),
            (
                KernelError::from(riot_worktree::WorktreeError::Failed(
                    "git worktree add failed: locked".into(),
                )),
                (1, -32603),
            ),
            (
                KernelError::Io {
                    what: "cannot write /h/settings.json".into(),
                    source: std::io::Error::other("read-only"),
                },
                (1, -32603),
            ),
            (
                KernelError::from(riot_core::CompactError("overloaded".into())),
                (1, -32603),
            ),
            (KernelError::Busy, (2, -32602)),
            (KernelError::Closed, (2, -32600)),
        ];
        for (error, expected) in cases {
            assert_eq!(class(&error), expected, "{error:?}");
        }
    }

    #[test]
    fn messages_are_the_sources_own() {
        let e = KernelError::Io {
            what: "could not record trust in /h/trusted.json".into(),
            source: std::io::Error::other("read-only file system"),
        };
        assert_eq!(
            e.to_string(),
            "could not record trust in /h/trusted.json: read-only file system"
        );
        let e = KernelError::from(riot_mcp::HubError::Disabled("db".into()));
        assert_eq!(
            e.to_string(),
            "the MCP server `db` is disabled in its configuration"
        );
    }
}
