//! `_riot/queue`, `_riot/background` and `_riot/background_stop` on the
//! open sessions, and their notifications for a client that asked for
//! them (`crate::queue`, `crate::background`). A child module of
//! `agent.rs`, sharing its session table.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};

use super::{RiotAgent, Slot, lock};
use crate::{background, queue};

impl RiotAgent {
    /// Watches the new session's queue and background tasks for a client
    /// that asked for their notifications.
    pub(super) fn watch_parallel(&self, cx: &ConnectionTo<Client>, id: &str, slot: &Arc<Slot>) {
        let wanted = lock(&self.wanted).clone();
        if wanted.iter().any(|m| m == queue::QUEUE_UPDATE) {
            queue::watch(
                cx.clone(),
                id.to_owned(),
                &slot.session,
                slot.closed.clone(),
            );
        }
        if wanted.iter().any(|m| m == background::BACKGROUND_UPDATE) {
            background::watch(
                cx.clone(),
                id.to_owned(),
                &slot.session,
                slot.closed.clone(),
            );
        }
    }

    /// `_riot/queue`.
    pub(super) fn queue(
        &self,
        request: &queue::QueueRequest,
    ) -> Result<queue::QueueResponse, Error> {
        let slot = self.slot(&request.session_id)?;
        queue::handle(&slot.session, request)
    }

    /// `_riot/background`.
    pub(super) fn background(
        &self,
        request: &background::BackgroundRequest,
    ) -> Result<background::BackgroundResponse, Error> {
        let slot = self.slot(&request.session_id)?;
        Ok(background::list(&slot.session))
    }

    /// `_riot/background_stop`.
    pub(super) fn background_stop(
        &self,
        request: &background::BackgroundStopRequest,
    ) -> Result<background::BackgroundStopResponse, Error> {
        let slot = self.slot(&request.session_id)?;
        background::stop(&slot.session, request)
    }
}
