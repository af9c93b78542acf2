//! A turn streamed to the client: `session/prompt` and `_riot/deliver`
//! start one, [`RiotAgent::run_turn`] sends its events as
//! `session/update`s and answers with its stop reason. A child module of
//! `agent.rs`, sharing its session table.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Cost, CurrentModeUpdate, PromptRequest, PromptResponse, SessionUpdate, UsageUpdate,
};
use agent_client_protocol::{Client, Error};
use futures::StreamExt;
use riot_kernel::KernelError;
use riot_protocol::{AgentEvent, CancelReason, PermissionMode, StreamDelta, TerminalReason};

use super::{RiotAgent, Slot, kernel_error, lock, send};
use crate::error::{RequestError, SessionError, TurnError};
use crate::ext::{CompactionNotification, CompactionStatus, UsageNotification};
use crate::mapping;

/// What a turn's events add up to while it streams, for the figures
/// reported when it ends.
struct Tally {
    /// The terminal reason, once the turn said it.
    reason: Option<TerminalReason>,
    usage: riot_protocol::Usage,
    /// The session's side usage when the turn began.
    side_before: riot_protocol::Usage,
    requests: u32,
    model: String,
    /// The mode the client was last told of.
    mode_now: PermissionMode,
}

impl Tally {
    /// An empty tally for a turn of `slot`'s session starting in `mode_before`.
    fn new(slot: &Slot, mode_before: PermissionMode) -> Self {
        Self {
            reason: None,
            usage: riot_protocol::Usage::default(),
            // Side requests (subagents, summaries, the classifier…) are what
            // the session's cost meter counts beside the turn's own.
            side_before: slot.session.cost().side_usage,
            requests: 0,
            model: slot.session.status().model,
            // The client hears of a mode the session chose itself (a plan
            // approved during the turn) as soon as it holds.
            mode_now: mode_before,
        }
    }
}

impl RiotAgent {
    pub(super) async fn prompt(
        &self,
        cx: &ConnectionTo<Client>,
        request: PromptRequest,
    ) -> Result<PromptResponse, Error> {
        let id = request.session_id.0.to_string();
        if self.stop.is_triggered() {
            return Err(SessionError::ShuttingDownOnPrompt.into());
        }
        let slot = self.slot(&id)?;
        let (text, images) = mapping::prompt_text(&request.prompt).map_err(RequestError::from)?;
        if text.trim().is_empty() && images.is_empty() {
            return Err(RequestError::EmptyPrompt.into());
        }
        let mode_before = slot.session.status().mode;
        let events = slot
            .session
            .prompt_with_images(text, images)
            .map_err(kernel_error)?;
        self.run_turn(cx, &id, &slot, events, mode_before).await
    }

    /// `_riot/deliver`: a turn of Riot's for what it queued while no turn
    /// ran (a background agent's result), streamed as a prompt's is;
    /// `stopReason` null when nothing waited or a turn already runs (that
    /// turn takes it).
    pub(super) async fn deliver(
        &self,
        cx: &ConnectionTo<Client>,
        request: &crate::background::DeliverRequest,
    ) -> Result<crate::background::DeliverResponse, Error> {
        let id = request.session_id.clone();
        if self.stop.is_triggered() {
            return Err(SessionError::ShuttingDownOnDeliver.into());
        }
        let slot = self.slot(&id)?;
        let mode_before = slot.session.status().mode;
        let events = match slot.session.deliver() {
            Ok(Some(events)) => events,
            Ok(None) | Err(KernelError::Busy) => {
                return Ok(crate::background::DeliverResponse { stop_reason: None });
            }
            Err(e) => return Err(kernel_error(e)),
        };
        let response = self.run_turn(cx, &id, &slot, events, mode_before).await?;
        Ok(crate::background::DeliverResponse {
            stop_reason: Some(response.stop_reason),
        })
    }

    /// Streams a started turn to the client as `session/update`s and
    /// answers with its stop reason, or the error it ended in.
    async fn run_turn(
        &self,
        cx: &ConnectionTo<Client>,
        id: &str,
        slot: &Arc<Slot>,
        mut events: riot_kernel::Turn,
        mode_before: PermissionMode,
    ) -> Result<PromptResponse, Error> {
        let id = id.to_owned();
        // A shutdown that came while this turn was being set up did not
        // see it running: cancel it here.
        if self.stop.is_triggered() {
            slot.session.cancel(CancelReason::Shutdown);
        }
        let mut tally = Tally::new(slot, mode_before);
        // The gate and the editor's terminals wait for this loop to catch
        // up before they announce a call (mapping::caught_up).
        let (forwarder, mut flushes) = tokio::sync::mpsc::unbounded_channel();
        lock(&slot.calls).set_forwarder(Some(forwarder));
        {
            loop {
                let event = tokio::select! {
                    biased;
                    event = events.next() => event,
                    Some(ack) = flushes.recv() => {
                        // Every event produced so far has been sent.
                        let _ = ack.send(());
                        continue;
                    }
                };
                let Some(event) = event else { break };
                announce_mode(cx, &id, slot, &mut tally.mode_now);
                for update in self.event_updates(cx, &id, slot, &event, &mut tally) {
                    send(cx, &id, update);
                }
            }
        }
        lock(&slot.calls).set_forwarder(None);
        drop(flushes);
        drop(events);
        announce_mode(cx, &id, slot, &mut tally.mode_now);
        // A first prompt names a new session.
        self.announce_title(cx, &id, slot);
        // Before the response, so the client has the figures of the turn
        // that just ended, and what the session has cost with it.
        let cost = slot.session.cost();
        self.notify(
            cx,
            UsageNotification {
                session_id: id.clone(),
                model: tally.model,
                requests: tally.requests,
                usage: tally.usage.into(),
                side_usage: cost.side_usage.since(&tally.side_before).into(),
                cost_usd: cost.usd,
                meta: None,
            },
        );
        turn_response(tally.reason)
    }

    /// The `session/update`s one event of a turn makes, counting what it
    /// adds to `tally` and sending the `_riot/compaction` notifications.
    fn event_updates(
        &self,
        cx: &ConnectionTo<Client>,
        id: &str,
        slot: &Slot,
        event: &AgentEvent,
        tally: &mut Tally,
    ) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::Delta {
                delta: StreamDelta::Text { text },
            } if !text.is_empty() => vec![mapping::message_chunk(text)],
            AgentEvent::Delta {
                delta: StreamDelta::Thinking { text },
            } if !text.is_empty() => vec![mapping::thought_chunk(text)],
            AgentEvent::Message { message } => lock(&slot.calls).message_updates(message, false),
            AgentEvent::ToolStarted {
                tool_use_id,
                name,
                describe,
            } => vec![lock(&slot.calls).started(tool_use_id.as_str(), name, describe)],
            AgentEvent::Done { reason: r } => {
                tally.reason = Some(r.clone());
                Vec::new()
            }
            AgentEvent::Usage { model: m, usage: u } => {
                tally.usage.add(u);
                tally.requests += 1;
                m.clone_into(&mut tally.model);
                // The context as this request left it: what it
                // read and what it wrote.
                let used =
                    u.input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens;
                let size = slot.session.status().context_window;
                let cost = slot.session.cost().usd.map(|usd| Cost::new(usd, "USD"));
                vec![SessionUpdate::UsageUpdate(
                    UsageUpdate::new(used, size).cost(cost),
                )]
            }
            AgentEvent::Compacting { strategy } => {
                self.notify(
                    cx,
                    CompactionNotification {
                        session_id: id.to_owned(),
                        status: CompactionStatus::Compacting,
                        strategy: *strategy,
                        tokens_before: None,
                        tokens_after: None,
                        meta: None,
                    },
                );
                Vec::new()
            }
            AgentEvent::Compacted {
                before,
                after,
                strategy,
            } => {
                self.notify(
                    cx,
                    CompactionNotification {
                        session_id: id.to_owned(),
                        status: CompactionStatus::Compacted,
                        strategy: *strategy,
                        tokens_before: Some(*before),
                        tokens_after: Some(*after),
                        meta: None,
                    },
                );
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

/// Tells the client the session's mode if it changed from `mode_now`,
/// which then holds it.
fn announce_mode(cx: &ConnectionTo<Client>, id: &str, slot: &Slot, mode_now: &mut PermissionMode) {
    let mode = slot.session.status().mode;
    if mode != *mode_now {
        *mode_now = mode;
        send(
            cx,
            id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str())),
        );
    }
}

/// The answer to a turn that ended with `reason`: its stop reason, or the
/// error it ended in.
fn turn_response(reason: Option<TerminalReason>) -> Result<PromptResponse, Error> {
    let reason = reason.unwrap_or(TerminalReason::Error {
        error: riot_protocol::AgentError {
            kind: riot_protocol::ErrorKind::Internal,
            message: "the turn ended without a terminal reason".into(),
        },
    });
    match mapping::stop_reason(&reason) {
        Some(stop) => Ok(PromptResponse::new(stop)),
        None => {
            // The client's mistake (an unknown slash command) is
            // invalid params; anything else failed on Riot's side.
            let failed = match reason {
                TerminalReason::Error { error }
                    if error.kind == riot_protocol::ErrorKind::Usage =>
                {
                    TurnError::Usage {
                        message: error.message,
                    }
                }
                // A refused key: the client can authenticate again.
                TerminalReason::Error { error } if error.kind == riot_protocol::ErrorKind::Auth => {
                    TurnError::KeyRefused {
                        message: error.message,
                    }
                }
                TerminalReason::Error { error } => TurnError::Failed {
                    message: error.message,
                },
                other => TurnError::Ended {
                    reason: other.name(),
                },
            };
            Err(failed.into())
        }
    }
}
