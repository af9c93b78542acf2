//! `_riot/checkpoints` and `_riot/rewind` (docs/rewind.md): the open
//! session's rewind through its handle, between turns. A child module of
//! `agent.rs`, sharing its session table.

use agent_client_protocol::Error;
use riot_kernel::checkpoints::RewindWhat;

use super::{RiotAgent, kernel_error};
use crate::error::{RequestError, SessionError};
use crate::ext;

impl RiotAgent {
    /// `_riot/checkpoints`.
    pub(super) async fn checkpoints(
        &self,
        request: &ext::CheckpointsRequest,
    ) -> Result<ext::CheckpointsResponse, Error> {
        let slot = self.slot(&request.session_id)?;
        if slot.session.is_running() {
            return Err(SessionError::RunningOnCheckpoints.into());
        }
        let points = slot.session.rewind_points().await.map_err(kernel_error)?;
        Ok(ext::CheckpointsResponse {
            points: points
                .iter()
                .map(|p| serde_json::to_value(p).unwrap_or_default())
                .collect(),
            meta: None,
        })
    }

    /// `_riot/rewind`: a rewind, or the undo of the last one.
    pub(super) async fn rewind(
        &self,
        request: &ext::RewindRequest,
    ) -> Result<ext::RewindResponse, Error> {
        let slot = self.slot(&request.session_id)?;
        // Between turns only: a rewind waiting for a turn's end would hold
        // this request, and the turn may be waiting for this client.
        if slot.session.is_running() {
            return Err(SessionError::RunningOnRewind.into());
        }
        let what = match (request.files_only, request.conversation_only) {
            (true, true) => {
                return Err(RequestError::RewindBothOnly.into());
            }
            (true, false) => RewindWhat::FilesOnly,
            (false, true) => RewindWhat::ConversationOnly,
            (false, false) => RewindWhat::Both,
        };
        let outcome = match (request.to, request.undo) {
            (None, true) => slot.session.undo_rewind(request.force).await,
            (Some(to), false) => slot.session.rewind(to, what, request.force).await,
            _ => {
                return Err(RequestError::RewindTarget.into());
            }
        }
        .map_err(kernel_error)?;
        Ok(ext::RewindResponse {
            summary: outcome.describe(request.undo),
            outcome: serde_json::to_value(&outcome).unwrap_or_default(),
            meta: None,
        })
    }
}
