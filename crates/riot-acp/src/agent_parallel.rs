//! `_riot/queue`, `_riot/background` and `_riot/background_stop` on the
//! open sessions, and the queue, background and terminal notifications
//! for a client that asked for them (`crate::queue`, `crate::background`,
//! `crate::terminals`). A child module of
//! `agent.rs`, sharing its session table.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};

use riot_kernel::SessionUpdate;

use super::{RiotAgent, Slot, lock};
use crate::{background, queue};

impl RiotAgent {
    /// Sends the new session's queue, background task and terminal
    /// changes as the notifications the client asked for; queue and task
    /// changes until the session is closed on this connection (it may
    /// live on for another opening of it, which watches anew).
    pub(super) fn watch_updates(&self, cx: &ConnectionTo<Client>, id: &str, slot: &Arc<Slot>) {
        let wanted = lock(&self.wanted).clone();
        let wants = |method: &str| wanted.iter().any(|m| m == method);
        let (queued, tasks, terminals) = (
            wants(queue::QUEUE_UPDATE),
            wants(background::BACKGROUND_UPDATE),
            wants(crate::terminals::TERMINAL),
        );
        if !(queued || tasks || terminals) {
            return;
        }
        let (cx, id, closed) = (cx.clone(), id.to_owned(), slot.closed.clone());
        slot.session.watch_updates(Arc::new(move |update| {
            // Closed on this connection: the queue may live on for another
            // opening of the session and its tasks are stopped, so this
            // connection hears no more of them; the terminals' last updates
            // (closed, as the session closes them) still go out.
            if closed.is_cancelled() && !matches!(update, SessionUpdate::Terminal(_)) {
                return false;
            }
            let sent = match update {
                SessionUpdate::Queue(change) if queued => {
                    cx.send_notification(queue::notification(&id, change))
                }
                SessionUpdate::Task(task) if tasks => {
                    cx.send_notification(background::notification(&id, task))
                }
                SessionUpdate::Terminal(update) if terminals => {
                    cx.send_notification(crate::terminals::notification(&id, update))
                }
                _ => Ok(()),
            };
            if let Err(e) = sent {
                tracing::debug!(error = %e, "could not send a _riot notification");
            }
            true
        }));
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
