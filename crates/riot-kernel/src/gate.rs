//! Permission gates the kernel provides itself.

use riot_protocol::PermissionGate;

/// The gate of faces where nobody can answer (`riot exec`): every Ask
/// becomes a Deny, and the model is told why (docs/design.md §9.2).
#[derive(Debug, Clone, Copy, Default)]
pub struct NobodyAnswers;

#[async_trait::async_trait]
impl PermissionGate for NobodyAnswers {
    fn can_answer(&self) -> bool {
        false
    }

    async fn ask(
        &self,
        _request_id: riot_protocol::RequestId,
        _detail: riot_protocol::PermissionRequestDetail,
    ) -> riot_protocol::PermissionOutcome {
        riot_protocol::PermissionOutcome::Cancelled
    }
}
