//! Messages the person sends while a turn runs (docs/design.md §5): queued,
//! editable and removable until the loop delivers them after the pending
//! tool results; one queued after the final answer starts the next turn
//! (the face submits it).

use std::sync::{Arc, Mutex, MutexGuard};

use riot_core::MessageQueue;
use riot_protocol::{IdGen, Message, MessageId, UserBlock};

/// A handle on a session's queue; clone it before a turn borrows the
/// session, then push from anywhere.
#[derive(Debug, Clone)]
pub struct PendingMessages {
    inner: Arc<Mutex<Vec<Message>>>,
    ids: Arc<dyn IdGen>,
    /// A model chosen while the turn runs, for the loop's next request.
    model: Arc<Mutex<Option<String>>>,
}

/// Switches a running turn's model from its next request: the loop takes
/// the switch through [`MessageQueue::model_switch`]; subagents and the
/// classifier follow at once through the session's model cell.
#[derive(Debug, Clone)]
pub struct ModelSwitch {
    wanted: Arc<Mutex<Option<String>>>,
    shared: crate::session::SessionModel,
}

impl ModelSwitch {
    /// Asks for `model` from the next request on.
    pub fn switch(&self, model: &str) {
        *self.wanted.lock().unwrap_or_else(|e| e.into_inner()) = Some(model.to_owned());
        self.shared.set(model);
    }

    /// A switch the loop has not taken yet.
    pub fn take(&self) -> Option<String> {
        self.wanted.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl PendingMessages {
    /// An empty queue.
    pub fn new(ids: Arc<dyn IdGen>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Vec::new())),
            ids,
            model: Arc::new(Mutex::new(None)),
        }
    }

    /// The switch a face uses to change the model of a running turn.
    pub fn model_switch(&self, shared: crate::session::SessionModel) -> ModelSwitch {
        ModelSwitch {
            wanted: Arc::clone(&self.model),
            shared,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Message>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a message; returns its id (to edit or remove it).
    pub fn push(&self, text: &str) -> MessageId {
        let id = MessageId::generate(self.ids.as_ref());
        self.lock().push(Message::user_text(id.clone(), text));
        id
    }

    /// What is waiting, in order.
    pub fn list(&self) -> Vec<Message> {
        self.lock().clone()
    }

    /// Replaces the text of a waiting message; false if already delivered.
    pub fn edit(&self, id: &MessageId, text: &str) -> bool {
        let mut queue = self.lock();
        let Some(message) = queue.iter_mut().find(|m| m.id() == id) else {
            return false;
        };
        if let Message::User(u) = message {
            u.content = vec![UserBlock::Text {
                text: text.to_owned(),
            }];
        }
        true
    }

    /// Removes a waiting message; false if already delivered.
    pub fn remove(&self, id: &MessageId) -> bool {
        let mut queue = self.lock();
        let before = queue.len();
        queue.retain(|m| m.id() != id);
        queue.len() != before
    }

    /// Takes everything waiting (for "stop and send", or the next turn).
    pub fn take_all(&self) -> Vec<Message> {
        std::mem::take(&mut *self.lock())
    }
}

impl MessageQueue for PendingMessages {
    fn drain(&self) -> Vec<Message> {
        self.take_all()
    }

    fn model_switch(&self) -> Option<String> {
        self.model.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[cfg(test)]
mod tests {
    use riot_protocol::SequentialIds;

    use super::*;

    #[test]
    fn waiting_messages_can_be_edited_and_removed_until_drained() {
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        let a = queue.push("check b too");
        let b = queue.push("and c");
        assert!(queue.edit(&a, "check b and d"));
        assert!(queue.remove(&b));
        let drained = MessageQueue::drain(&queue);
        assert_eq!(
            drained,
            vec![Message::user_text(a.clone(), "check b and d")]
        );
        assert!(
            !queue.edit(&a, "too late"),
            "delivered messages cannot change"
        );
        assert!(queue.list().is_empty());
    }
}
