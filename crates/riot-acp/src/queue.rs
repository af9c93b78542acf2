//! A session's message queue over ACP (docs/design.md §5): what the person
//! sends while a turn runs waits in the session (the handle's queue
//! operations), not in the client, so it survives a page reload and every
//! window shows the same queue.
//!
//! - `_riot/queue` (request, `{sessionId, action, id?, text?}`): `action`
//!   is `list` (the default), `push` (`text`), `edit` (`id`, `text`),
//!   `remove` (`id`) or `take` (the person's waiting messages, for the
//!   client to send as the next prompt once the turn ended). The reply
//!   lists what waits afterwards (`messages`), with the pushed message's
//!   `id` or the `taken` messages. The loop delivers what waits after the
//!   running batch's tool results; the person's messages still waiting
//!   when the turn ends are the client's to send, Riot's own go with the
//!   next prompt.
//! - `_riot/queue_update` (notification, opt-in): the queue changed —
//!   what waits now, and what the loop has just `delivered` into the
//!   conversation (shown by the client as the person's messages).
//!
//! Each message is `{id, text, origin}`: `origin` is `person`, or `riot`
//! for one Riot queued itself (a background task's result), which cannot
//! be edited or removed. A result the person stopped — its agent, or the
//! turn that carried it, before any reply — has `held: true`: it waits
//! for the person (their next prompt, an explicit `_riot/deliver`, or a
//! delivery turn for another result), and a client does not ask for a
//! turn for it on its own.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::Meta;
use riot_kernel::SessionHandle;
use riot_kernel::queue::QueueChange;
use riot_protocol::{Message, MessageId, MessageOrigin, UserBlock};
use serde::{Deserialize, Serialize};

pub const QUEUE: &str = "_riot/queue";
pub const QUEUE_UPDATE: &str = "_riot/queue_update";

use crate::error::RequestError;

/// What `_riot/queue` does.
#[derive(
    schemars::JsonSchema, Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum QueueAction {
    #[default]
    List,
    Push,
    Edit,
    Remove,
    Take,
}

/// `_riot/queue`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueueRequest {
    pub session_id: String,
    #[serde(default)]
    pub action: QueueAction,
    /// The message to edit or remove.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The text to push, or the edited text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

crate::rpc::riot_request!(QueueRequest, QUEUE, QueueResponse);

/// One waiting message.
#[derive(schemars::JsonSchema, Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedMessage {
    pub id: String,
    pub text: String,
    /// `person`, or `riot` (a background task's result).
    pub origin: String,
    /// Riot's message put back after the person stopped the turn that
    /// carried it: it waits for the person.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

impl QueuedMessage {
    fn of(message: &Message, held: &[MessageId]) -> Option<Self> {
        let Message::User(user) = message else {
            return None;
        };
        let text = user
            .content
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        Some(Self {
            held: held.contains(&user.id),
            id: user.id.to_string(),
            text,
            origin: if user.origin == MessageOrigin::Person {
                "person"
            } else {
                "riot"
            }
            .to_owned(),
        })
    }
}

fn listed(messages: &[Message], held: &[MessageId]) -> Vec<QueuedMessage> {
    messages
        .iter()
        .filter_map(|m| QueuedMessage::of(m, held))
        .collect()
}

/// What waits in `session`'s queue now, held marks included.
fn waiting(session: &SessionHandle) -> Vec<QueuedMessage> {
    let now = session.queued();
    listed(&now.waiting, &now.held)
}

/// `_riot/queue`'s reply.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct QueueResponse {
    /// What waits after the action, in order.
    pub messages: Vec<QueuedMessage>,
    /// The pushed message's id (`push`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What was taken (`take`), in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken: Option<Vec<QueuedMessage>>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/queue_update`: the session's queue changed.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_riot/queue_update")]
#[serde(rename_all = "camelCase")]
pub struct QueueNotification {
    pub session_id: String,
    /// What waits now.
    pub messages: Vec<QueuedMessage>,
    /// What the loop has just delivered into the conversation.
    pub delivered: Vec<QueuedMessage>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// The `_riot/queue_update` notification of `change` in session `session_id`.
pub(crate) fn notification(session_id: &str, change: &QueueChange) -> QueueNotification {
    QueueNotification {
        session_id: session_id.to_owned(),
        messages: listed(&change.waiting, &change.held),
        delivered: listed(&change.delivered, &[]),
        meta: None,
    }
}

/// The waiting person's message `id`, or why it cannot be changed.
fn changeable(session: &SessionHandle, id: Option<&str>, action: &str) -> Result<MessageId, Error> {
    let Some(id) = id else {
        return Err(RequestError::QueueNeedsId {
            action: action.to_owned(),
        }
        .into());
    };
    let waiting = waiting(session);
    match waiting.iter().find(|m| m.id == id) {
        Some(m) if m.origin != "person" => {
            Err(RequestError::QueuedByRiot { id: id.to_owned() }.into())
        }
        Some(_) => Ok(MessageId::new(id)),
        None => Err(gone(id, &waiting)),
    }
}

/// Why the queued message `id` cannot be found: delivered or removed.
fn gone(id: &str, waiting: &[QueuedMessage]) -> Error {
    let id = id.to_owned();
    if waiting.is_empty() {
        RequestError::NothingQueued { id }
    } else {
        RequestError::NotQueued {
            id,
            queued: waiting.iter().map(|m| m.id.clone()).collect(),
        }
    }
    .into()
}

fn text_of(request: &QueueRequest, action: &str) -> Result<String, Error> {
    match request.text.as_deref() {
        Some(text) if !text.trim().is_empty() => Ok(text.to_owned()),
        _ => Err(RequestError::QueueNeedsText {
            action: action.to_owned(),
        }
        .into()),
    }
}

/// `_riot/queue` on the session's queue.
pub(crate) fn handle(
    session: &SessionHandle,
    request: &QueueRequest,
) -> Result<QueueResponse, Error> {
    let mut response = QueueResponse::default();
    match request.action {
        QueueAction::List => {}
        QueueAction::Push => {
            let text = text_of(request, "push")?;
            response.id = Some(session.queue(&text).to_string());
        }
        QueueAction::Edit => {
            let text = text_of(request, "edit")?;
            let id = changeable(session, request.id.as_deref(), "edit")?;
            if !session.edit_queued(&id, &text) {
                return Err(gone(id.as_str(), &waiting(session)));
            }
        }
        QueueAction::Remove => {
            let id = changeable(session, request.id.as_deref(), "remove")?;
            if !session.withdraw_queued(&id) {
                return Err(gone(id.as_str(), &waiting(session)));
            }
        }
        QueueAction::Take => {
            response.taken = Some(listed(&session.take_queued(), &[]));
        }
    }
    response.messages = waiting(session);
    Ok(response)
}
