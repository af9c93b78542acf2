//! What the chain takes in besides the query: a PreToolUse hook's
//! decision and the auto-mode classifier (a hook point the kernel fills).

use async_trait::async_trait;

/// What a PreToolUse hook said about the call (docs/design.md §13). Its
/// `Deny` and `Ask` act before the chain; its `Allow` only counts at step 6
/// and never overrides a deny or ask rule or a safety finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookDecision {
    Allow { hook: String, reason: String },
    Ask { hook: String, reason: String },
    Deny { hook: String, reason: String },
}

impl HookDecision {
    /// The decision a scheduler carried in a `PermissionQuery`.
    pub fn from_query(hook: &riot_protocol::HookPermission) -> Self {
        let (h, reason) = (hook.hook.clone(), hook.reason.clone());
        match hook.decision {
            riot_protocol::HookDecisionKind::Allow => Self::Allow { hook: h, reason },
            riot_protocol::HookDecisionKind::Ask => Self::Ask { hook: h, reason },
            riot_protocol::HookDecisionKind::Deny => Self::Deny { hook: h, reason },
        }
    }
}

/// What the auto-mode classifier sees: the tool's one-line
/// `classifier_input`, never tool outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifierRequest {
    pub tool_name: String,
    pub input: String,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassifierVerdict {
    Allow { reason: String },
    Deny { reason: String },
}

/// The classifier could not answer (unreachable, malformed reply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifierUnavailable(pub String);

/// The auto-mode classifier (docs/design.md §9.5), implemented by the kernel.
#[async_trait]
pub trait Classifier: Send + Sync + std::fmt::Debug {
    async fn classify(
        &self,
        request: &ClassifierRequest,
    ) -> Result<ClassifierVerdict, ClassifierUnavailable>;
}
