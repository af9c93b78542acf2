//! The kernel's error: what went wrong, from which source, and how a face
//! reports it.

use crate::config::ConfigError;

/// A kernel error, classified for exit codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// Bad input or configuration: exit 2 with this one-line fix.
    #[error("{0}")]
    Usage(String),
    /// Something failed at run time: exit 1.
    #[error("{0}")]
    Failed(String),
    /// A prompt came while a turn was running in the session.
    #[error("a prompt is already running in this session; cancel it or wait for its end")]
    Busy,
    /// The session was closed.
    #[error("the session is closed")]
    Closed,
}

impl From<ConfigError> for KernelError {
    fn from(e: ConfigError) -> Self {
        KernelError::Usage(e.to_string())
    }
}
