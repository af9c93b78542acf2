//! The cancellation tree of docs/design.md §8: session → user request →
//! batch → tool. Each scope is a `CancellationToken` with the reason stored
//! beside it; a child cancelled because its parent was reports the parent's
//! reason.

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Why a scope was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CancelReason {
    /// The person pressed stop.
    User,
    /// The person sent a message with "stop and send".
    UserInterjection,
    /// A sibling in the same batch failed and its tool cascades.
    SiblingFailure,
    /// The kernel is shutting down.
    Shutdown,
}

/// One node of the cancellation tree.
#[derive(Debug, Clone)]
pub struct CancelScope {
    token: CancellationToken,
    reason: Arc<OnceLock<CancelReason>>,
    parent: Option<Box<CancelScope>>,
}

impl Default for CancelScope {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelScope {
    /// A root scope.
    pub fn new() -> Self {
        Self {
            token: CancellationToken::new(),
            reason: Arc::new(OnceLock::new()),
            parent: None,
        }
    }

    /// A child cancelled with this scope (but not the other way round).
    pub fn child(&self) -> Self {
        Self {
            token: self.token.child_token(),
            reason: Arc::new(OnceLock::new()),
            parent: Some(Box::new(self.clone())),
        }
    }

    /// Cancels this scope and its children. The first reason given wins.
    pub fn cancel(&self, reason: CancelReason) {
        let _ = self.reason.set(reason);
        self.token.cancel();
    }

    /// Whether this scope (or an ancestor) was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// The reason of the nearest cancelled scope on the way to the root.
    pub fn reason(&self) -> Option<CancelReason> {
        if !self.is_cancelled() {
            return None;
        }
        let mut scope = Some(self);
        while let Some(s) = scope {
            if let Some(r) = s.reason.get() {
                return Some(*r);
            }
            scope = s.parent.as_deref();
        }
        None
    }

    /// The token, for code that only needs to wait on cancellation.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// Completes when this scope is cancelled.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_reports_its_own_reason_or_its_ancestors() {
        let session = CancelScope::new();
        let request = session.child();
        let batch = request.child();
        let tool = batch.child();

        batch.cancel(CancelReason::SiblingFailure);
        assert_eq!(tool.reason(), Some(CancelReason::SiblingFailure));
        assert!(
            !request.is_cancelled(),
            "cancelling a child leaves the parent running"
        );

        request.cancel(CancelReason::User);
        assert_eq!(
            tool.reason(),
            Some(CancelReason::SiblingFailure),
            "first reason wins"
        );
        assert_eq!(request.child().reason(), Some(CancelReason::User));
        assert_eq!(session.reason(), None);
    }
}
