//! Messages the person sends while a turn runs (docs/design.md §5): queued,
//! editable and removable until the loop delivers them after the pending
//! tool results; one queued after the final answer starts the next turn
//! (the face submits it). Faces reach it only through the session
//! handle's queue operations, and hear of each change — what waits, and
//! what the loop has just delivered — as a `SessionUpdate::Queue`
//! (`SessionHandle::watch_updates`, which [`watch`](PendingMessages::watch)es
//! it).

use std::sync::{Arc, Mutex, MutexGuard};

use riot_core::MessageQueue;
use riot_protocol::{IdGen, Message, MessageId, MessageOrigin, UserBlock, UserMessage};

/// The ids of `waiting` that `held` marks, in queue order.
fn marked(waiting: &[Message], held: &std::collections::HashSet<MessageId>) -> Vec<MessageId> {
    waiting
        .iter()
        .map(Message::id)
        .filter(|id| held.contains(*id))
        .cloned()
        .collect()
}

/// What a queue's watchers are told after each change.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueChange {
    /// What waits now, in order.
    pub waiting: Vec<Message>,
    /// What the loop has just taken into the conversation (empty unless
    /// this change is a delivery).
    pub delivered: Vec<Message>,
    /// Which of `waiting` are held ([`PendingMessages::push_held`]).
    pub held: Vec<MessageId>,
}

/// Told of every change of a queue, in the order the changes were made;
/// called outside the queue's lock but inside its ordering lock: it may
/// read the queue (`list`, `now`), and must not change it (the change
/// would wait for the one being told, forever).
/// Returns whether it still watches: one that returns false is dropped
/// (a client that went away).
pub type QueueWatcher = Arc<dyn Fn(&QueueChange) -> bool + Send + Sync>;

/// The watchers, and the lock every change holds from making the change
/// until they are told, so two changes are never told in reverse order.
#[derive(Default)]
struct Watchers(Mutex<Vec<QueueWatcher>>, Mutex<()>);

impl Watchers {
    fn in_order(&self) -> MutexGuard<'_, ()> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for Watchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |w| w.len());
        write!(f, "Watchers({n})")
    }
}

/// A handle on a session's queue; clone it before a turn borrows the
/// session, then push from anywhere.
#[derive(Debug, Clone)]
pub struct PendingMessages {
    inner: Arc<Mutex<Vec<Message>>>,
    ids: Arc<dyn IdGen>,
    /// A model chosen while the turn runs, for the loop's next request.
    model: Arc<Mutex<Option<String>>>,
    watchers: Arc<Watchers>,
    /// Riot's messages put back after the turn that carried them was
    /// stopped before any reply: they wait for the person.
    held: Arc<Mutex<std::collections::HashSet<MessageId>>>,
}

/// Switches a running turn's model from its next request: the loop takes
/// the switch through [`MessageQueue::model_switch`]; subagents and the
/// classifier follow at once through the session's model cell.
#[derive(Debug, Clone)]
pub struct ModelSwitch {
    wanted: Arc<Mutex<Option<String>>>,
    shared: crate::world::SessionModel,
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
            watchers: Arc::new(Watchers::default()),
            held: Arc::default(),
        }
    }

    /// The same waiting messages and watchers, with a model switch of its
    /// own: a second opening of the session (another client of `riot
    /// serve`, a reloaded page) shares the queue, not the switch.
    #[must_use]
    pub fn sharing(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            ids: Arc::clone(&self.ids),
            model: Arc::new(Mutex::new(None)),
            watchers: Arc::clone(&self.watchers),
            held: Arc::clone(&self.held),
        }
    }

    /// Calls `watcher` after every change from now on, until it returns
    /// false.
    pub fn watch(&self, watcher: QueueWatcher) {
        self.watchers
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(watcher);
    }

    /// What waits now, held ones marked (nothing delivered). Changes
    /// nothing and takes no ordering lock, so a watcher may call it: a
    /// held mark is set before its message waits and cleared only after
    /// it left.
    pub fn now(&self) -> QueueChange {
        let waiting = self.list();
        let held = marked(
            &waiting,
            &self.held.lock().unwrap_or_else(|e| e.into_inner()),
        );
        QueueChange {
            waiting,
            delivered: Vec::new(),
            held,
        }
    }

    /// Which of `waiting` are held; what no longer waits is held no more.
    fn held_of(&self, waiting: &[Message]) -> Vec<MessageId> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|id| waiting.iter().any(|m| m.id() == id));
        marked(waiting, &held)
    }

    /// Tells the watchers; `waiting` was read under the lock that made
    /// the change.
    fn changed(&self, waiting: Vec<Message>, delivered: Vec<Message>) {
        let held = self.held_of(&waiting);
        let watchers = self
            .watchers
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if watchers.is_empty() {
            return;
        }
        let change = QueueChange {
            waiting,
            delivered,
            held,
        };
        let gone: Vec<QueueWatcher> = watchers.into_iter().filter(|w| !w(&change)).collect();
        if !gone.is_empty() {
            self.watchers
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|w| !gone.iter().any(|g| Arc::ptr_eq(g, w)));
        }
    }

    /// The switch a face uses to change the model of a running turn.
    pub fn model_switch(&self, shared: crate::world::SessionModel) -> ModelSwitch {
        ModelSwitch {
            wanted: Arc::clone(&self.model),
            shared,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Message>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a message from the person; returns its id (to edit or
    /// remove it).
    pub fn push(&self, text: &str) -> MessageId {
        self.push_from(text, MessageOrigin::Person)
    }

    /// Queues a message of `origin` (Riot's own, such as a background
    /// task's result, is [`MessageOrigin::Context`]).
    pub fn push_from(&self, text: &str, origin: MessageOrigin) -> MessageId {
        self.push_marked(text, origin, false)
    }

    /// Queues Riot's message `text` again after the turn that carried it
    /// was stopped before any reply: it goes with the person's next prompt
    /// or a face's explicit delivery, but wakes no idle session
    /// ([`Self::riots_waking`]) — the person stopped that turn.
    pub fn push_held(&self, text: &str, origin: MessageOrigin) -> MessageId {
        self.push_marked(text, origin, true)
    }

    /// Whether waiting message `id` is held.
    #[cfg(test)]
    pub(crate) fn is_held(&self, id: &MessageId) -> bool {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(id)
    }

    /// Whether a message of Riot's waits, held or not.
    pub fn has_riots(&self) -> bool {
        self.lock().iter().any(|m| !by_person(m))
    }

    /// Whether a message of Riot's that is not held waits: one a face may
    /// give the model in a turn of its own.
    pub fn riots_waking(&self) -> bool {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        self.lock()
            .iter()
            .any(|m| !by_person(m) && !held.contains(m.id()))
    }

    fn push_marked(&self, text: &str, origin: MessageOrigin, held: bool) -> MessageId {
        let id = MessageId::generate(self.ids.as_ref());
        let _order = self.watchers.in_order();
        if held {
            self.held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id.clone());
        }
        let waiting = {
            let mut queue = self.lock();
            queue.push(Message::User(UserMessage {
                id: id.clone(),
                content: vec![UserBlock::Text {
                    text: text.to_owned(),
                }],
                origin,
            }));
            queue.clone()
        };
        self.changed(waiting, Vec::new());
        id
    }

    /// What is waiting, in order.
    pub fn list(&self) -> Vec<Message> {
        self.lock().clone()
    }

    /// Replaces the text of a waiting message; false if already delivered.
    pub fn edit(&self, id: &MessageId, text: &str) -> bool {
        let _order = self.watchers.in_order();
        let waiting = {
            let mut queue = self.lock();
            let Some(message) = queue.iter_mut().find(|m| m.id() == id) else {
                return false;
            };
            if let Message::User(u) = message {
                u.content = vec![UserBlock::Text {
                    text: text.to_owned(),
                }];
            }
            queue.clone()
        };
        self.changed(waiting, Vec::new());
        true
    }

    /// Removes a waiting message; false if already delivered.
    pub fn remove(&self, id: &MessageId) -> bool {
        let _order = self.watchers.in_order();
        let waiting = {
            let mut queue = self.lock();
            let before = queue.len();
            queue.retain(|m| m.id() != id);
            if queue.len() == before {
                return false;
            }
            queue.clone()
        };
        self.changed(waiting, Vec::new());
        true
    }

    /// Takes the person's waiting messages (for "stop and send", or the
    /// next turn: the face sends them itself, so they are not told as
    /// delivered). Riot's own (a background task's result) stay for the
    /// loop or the next turn's prompt ([`Self::deliver_riots`]), so a face
    /// never sends them as the person's words.
    pub fn take_all(&self) -> Vec<Message> {
        let _order = self.watchers.in_order();
        let (taken, waiting) = {
            let mut queue = self.lock();
            let (taken, kept): (Vec<Message>, Vec<Message>) =
                std::mem::take(&mut *queue).into_iter().partition(by_person);
            *queue = kept;
            (taken, queue.clone())
        };
        if !taken.is_empty() {
            self.changed(waiting, Vec::new());
        }
        taken
    }

    /// Takes Riot's own waiting messages into a turn that is starting
    /// (they go with its prompt); watchers are told they were delivered.
    pub fn deliver_riots(&self) -> Vec<Message> {
        let _order = self.watchers.in_order();
        let (taken, waiting) = {
            let mut queue = self.lock();
            let (kept, taken): (Vec<Message>, Vec<Message>) =
                std::mem::take(&mut *queue).into_iter().partition(by_person);
            *queue = kept;
            (taken, queue.clone())
        };
        if !taken.is_empty() {
            self.changed(waiting, taken.clone());
        }
        taken
    }
}

fn by_person(message: &Message) -> bool {
    matches!(message, Message::User(u) if u.origin == MessageOrigin::Person)
}

impl MessageQueue for PendingMessages {
    /// The loop takes what waits into the conversation; watchers are told
    /// it was delivered.
    fn drain(&self) -> Vec<Message> {
        let _order = self.watchers.in_order();
        let taken = std::mem::take(&mut *self.lock());
        if !taken.is_empty() {
            self.changed(Vec::new(), taken.clone());
        }
        taken
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

    #[test]
    fn a_face_takes_the_persons_messages_and_a_starting_turn_riots() {
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        let delivered: Arc<Mutex<Vec<usize>>> = Arc::default();
        let log = Arc::clone(&delivered);
        queue.watch(Arc::new(move |c: &QueueChange| {
            log.lock().unwrap().push(c.delivered.len());
            true
        }));
        let result = queue.push_from("a result", MessageOrigin::Context);
        let typed = queue.push("and then this");
        let taken: Vec<MessageId> = queue.take_all().iter().map(|m| m.id().clone()).collect();
        assert_eq!(taken, vec![typed]);
        let ids =
            |ms: Vec<Message>| -> Vec<MessageId> { ms.iter().map(|m| m.id().clone()).collect() };
        assert_eq!(ids(queue.list()), vec![result.clone()]);
        assert_eq!(ids(queue.deliver_riots()), vec![result]);
        assert!(queue.list().is_empty());
        // Nothing to take tells nobody; Riot's delivery is told as delivered.
        assert!(queue.take_all().is_empty() && queue.deliver_riots().is_empty());
        assert_eq!(*delivered.lock().unwrap(), vec![0, 0, 0, 1]);
    }

    #[test]
    fn a_held_message_of_riots_wakes_nobody_and_is_held_no_more_once_taken() {
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        let seen: Arc<Mutex<Vec<Vec<MessageId>>>> = Arc::default();
        let log = Arc::clone(&seen);
        queue.watch(Arc::new(move |c: &QueueChange| {
            log.lock().unwrap().push(c.held.clone());
            true
        }));
        assert!(!queue.riots_waking());
        let held = queue.push_held("a stopped result", MessageOrigin::Context);
        assert!(queue.is_held(&held));
        // Held, and the person's message is not Riot's: nothing wakes.
        queue.push("the person's");
        assert!(!queue.riots_waking());
        let fresh = queue.push_from("a new result", MessageOrigin::Context);
        assert!(queue.riots_waking() && !queue.is_held(&fresh));
        // Delivered, the mark goes with it.
        assert_eq!(queue.deliver_riots().len(), 2);
        assert!(!queue.is_held(&held) && !queue.riots_waking());
        assert_eq!(
            *seen.lock().unwrap(),
            vec![vec![held.clone()], vec![held.clone()], vec![held], vec![]]
        );
    }

    #[test]
    fn watchers_see_each_change_and_what_the_loop_delivered() {
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        let seen: Arc<Mutex<Vec<QueueChange>>> = Arc::default();
        let log = Arc::clone(&seen);
        queue.watch(Arc::new(move |c: &QueueChange| {
            log.lock().unwrap().push(c.clone());
            true
        }));
        let a = queue.push("first");
        let b = queue.push_from("a result", MessageOrigin::Context);
        assert!(queue.edit(&a, "first, edited"));
        assert!(!queue.remove(&MessageId::new("msg_none")));
        let delivered = MessageQueue::drain(&queue);
        // An empty drain (after every batch) tells nobody.
        assert!(MessageQueue::drain(&queue).is_empty());
        let c = queue.push("later");
        assert!(queue.remove(&c));
        let seen = seen.lock().unwrap();
        let texts: Vec<(Vec<String>, Vec<String>)> = seen
            .iter()
            .map(|change| {
                let words = |ms: &[Message]| -> Vec<String> {
                    ms.iter()
                        .map(|m| match m {
                            Message::User(u) => format!("{}:{:?}", u.id, u.origin),
                            other => panic!("{other:?}"),
                        })
                        .collect()
                };
                (words(&change.waiting), words(&change.delivered))
            })
            .collect();
        let (a, b, c) = (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            texts,
            vec![
                (vec![format!("{a}:Person")], vec![]),
                (vec![format!("{a}:Person"), format!("{b}:Context")], vec![]),
                (vec![format!("{a}:Person"), format!("{b}:Context")], vec![]),
                (vec![], vec![format!("{a}:Person"), format!("{b}:Context")]),
                (vec![format!("{c}:Person")], vec![]),
                (vec![], vec![]),
            ]
        );
        assert_eq!(seen[2].waiting[0], delivered[0]);
        assert_eq!(
            delivered[0],
            Message::user_text(MessageId::new(a), "first, edited")
        );
    }
}
