//! The session as the loop watches it beside its turns: its updates as
//! they come, and the person's keys written to its terminals by a task
//! of their own.

use std::sync::Arc;

use riot_kernel::{SessionHandle, SessionUpdate};
use tokio::sync::mpsc;

/// The session's updates — its terminals (the open ones first), its
/// background agents and its queue — as they come.
pub(super) fn watch_updates(handle: &SessionHandle) -> mpsc::UnboundedReceiver<SessionUpdate> {
    let (updates_tx, updates_rx) = mpsc::unbounded_channel::<SessionUpdate>();
    handle.watch_updates(Arc::new(move |update: &SessionUpdate| {
        updates_tx.send(update.clone()).is_ok()
    }));
    updates_rx
}

/// The person's keys for the terminals, written in order by a task of
/// their own: a program that does not read its input must not stop the
/// UI. A write that fails comes back as a note.
pub(super) struct Writer {
    /// The keys, with the name of the terminal they are for.
    pub(super) writes: mpsc::UnboundedSender<(String, Vec<u8>)>,
    /// The writes that failed, as notes.
    pub(super) failed: mpsc::UnboundedReceiver<String>,
    /// The task, stopped when the loop ends.
    _task: AbortOnDrop,
}

impl Writer {
    /// Starts the task writing to `handle`'s terminals.
    pub(super) fn spawn(handle: &SessionHandle) -> Self {
        let (writes_tx, mut writes_rx) = mpsc::unbounded_channel::<(String, Vec<u8>)>();
        let (failed_tx, failed_rx) = mpsc::unbounded_channel::<String>();
        let handle = handle.clone();
        let writer = tokio::spawn(async move {
            while let Some((name, input)) = writes_rx.recv().await {
                if let Err(e) = handle.write_terminal(&name, &input).await {
                    let _ = failed_tx.send(format!("Terminal {name}: {e}"));
                }
            }
        });
        Self {
            writes: writes_tx,
            failed: failed_rx,
            _task: AbortOnDrop(writer),
        }
    }
}

/// Stops a spawned task when the loop ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
