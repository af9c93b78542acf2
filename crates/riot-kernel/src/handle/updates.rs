//! What a session holds beside its turns — the queue of messages waiting
//! for the model, the background tasks, the terminals — reached only
//! through the handle: operations in, [`SessionUpdate`]s out, each kind in
//! the order its changes happen. No face holds the queue, the task list
//! or the terminals themselves.

use std::sync::{Arc, Mutex};

use riot_protocol::{Message, MessageId, TerminalError, TerminalSize, TerminalUpdate, Typist};

use super::{SessionHandle, lock};
use crate::background::TaskSummary;
use crate::queue::QueueChange;

/// A change of the session beside its turns' events.
#[derive(Debug, Clone)]
pub enum SessionUpdate {
    /// The queue changed: what waits now (held ones marked), and what the
    /// loop has just taken into the conversation.
    Queue(QueueChange),
    /// A background task started, made a tool call or ended.
    Task(TaskSummary),
    /// A terminal opened, drew, exited or closed.
    Terminal(TerminalUpdate),
}

/// Told of every [`SessionUpdate`]: the changes of each kind (the queue,
/// the tasks, the terminals) in the order they happened. Returns whether
/// it still watches that kind: told nothing more of it after returning
/// false (a face that went away returns false to all). Called from the
/// task or thread that made the change, so it must not block, nor change
/// the queue (a queue change waits until the one being told is told).
pub type UpdateSink = Arc<dyn Fn(&SessionUpdate) -> bool + Send + Sync>;

/// Who stops a background task, which decides where its result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopper {
    /// The person, with a face's stop: the result waits for them, held,
    /// and goes with their next prompt instead of starting a turn.
    Person,
    /// Riot, for its own reason (`riot exec`'s wait ran out): the result
    /// wakes the session as any result does.
    Riot,
}

/// One kind's hold on a sink, let go (with whatever the sink holds, such
/// as a client's connection) once the sink stops watching that kind.
struct Teller(Mutex<Option<UpdateSink>>);

impl Teller {
    fn new(sink: &UpdateSink) -> Self {
        Self(Mutex::new(Some(Arc::clone(sink))))
    }

    /// Tells the sink, outside the hold's lock; whether it still watches.
    fn tell(&self, update: SessionUpdate) -> bool {
        let Some(sink) = lock(&self.0).clone() else {
            return false;
        };
        let watching = sink(&update);
        if !watching {
            lock(&self.0).take();
        }
        watching
    }
}

impl SessionHandle {
    /// Tells `sink` of every change of the queue, the background tasks and
    /// the terminals from now on — the terminals already open first — each
    /// kind in the order its changes happen, until it returns false for
    /// that kind (see [`UpdateSink`]).
    pub fn watch_updates(&self, sink: UpdateSink) {
        let queue = Teller::new(&sink);
        self.shared.pending.watch(Arc::new(move |change| {
            queue.tell(SessionUpdate::Queue(change.clone()))
        }));
        let tasks = Teller::new(&sink);
        self.shared.background.watch(Arc::new(move |task| {
            tasks.tell(SessionUpdate::Task(task.clone()));
        }));
        let terminals = Teller::new(&sink);
        self.shared.terminals.subscribe(Arc::new(move |update| {
            terminals.tell(SessionUpdate::Terminal(update.clone()));
        }));
    }

    /// What waits in the queue now, in order, held ones marked
    /// (`delivered` is empty).
    pub fn queued(&self) -> QueueChange {
        self.shared.pending.now()
    }

    /// Replaces the text of the waiting message `id`; false when it no
    /// longer waits (delivered or withdrawn).
    pub fn edit_queued(&self, id: &MessageId, text: &str) -> bool {
        self.shared.pending.edit(id, text)
    }

    /// Withdraws the waiting message `id`; false when it no longer waits.
    pub fn withdraw_queued(&self, id: &MessageId) -> bool {
        self.shared.pending.remove(id)
    }

    /// Takes the person's waiting messages, for the face to send itself
    /// ("stop and send", or the next prompt); Riot's own stay for the
    /// model.
    pub fn take_queued(&self) -> Vec<Message> {
        self.shared.pending.take_all()
    }

    /// The session's background tasks, oldest first.
    pub fn tasks(&self) -> Vec<TaskSummary> {
        self.shared.background.list()
    }

    /// The background task `id`, if the session has one.
    pub fn task(&self, id: &str) -> Option<TaskSummary> {
        self.shared.background.get(id)
    }

    /// Stops the running background task `id` for `by`; false when no
    /// task of that id runs.
    pub fn stop_task(&self, id: &str, by: Stopper) -> bool {
        match by {
            Stopper::Person => self.shared.background.stop(id),
            Stopper::Riot => self.shared.background.stop_for_riot(id),
        }
    }

    /// Types the person's `input` into the terminal `name`.
    ///
    /// # Errors
    /// No such terminal, or it could not be written.
    pub async fn write_terminal(&self, name: &str, input: &[u8]) -> Result<(), TerminalError> {
        self.shared
            .terminals
            .write(name, input, Typist::Person)
            .await
    }

    /// Resizes the terminal `name`; its program is told. Returns the size
    /// it has now.
    ///
    /// # Errors
    /// No such terminal, or a size it cannot take.
    pub async fn resize_terminal(
        &self,
        name: &str,
        size: TerminalSize,
    ) -> Result<TerminalSize, TerminalError> {
        self.shared.terminals.resize(name, size).await
    }
}
