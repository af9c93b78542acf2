//! The JSON-RPC errors the agent answers, built here from typed errors:
//! the kernel's ([`kernel_error`], coded by `KernelError::jsonrpc_code`)
//! and the ones this face finds in a request itself ([`RequestError`]).

use agent_client_protocol::Error;
use riot_kernel::KernelError;
use riot_kernel::error::JSONRPC_INVALID_PARAMS;

use crate::ext::BadWorktreeAsk;
use crate::mapping::UnsupportedContent;

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
}

impl RequestError {
    /// The JSON-RPC error code: invalid params (`-32602`), as for the
    /// kernel's usage errors.
    pub fn jsonrpc_code(&self) -> i32 {
        match self {
            RequestError::Content(_) | RequestError::Worktree(_) => JSONRPC_INVALID_PARAMS,
        }
    }
}

impl From<RequestError> for Error {
    fn from(e: RequestError) -> Self {
        Error::new(e.jsonrpc_code(), e.to_string())
    }
}

/// The kernel says which JSON-RPC code its error is (`KernelError::jsonrpc_code`).
pub(crate) fn kernel_error(e: KernelError) -> Error {
    Error::new(e.jsonrpc_code(), e.to_string())
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
}
