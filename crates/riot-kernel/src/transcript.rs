//! The loop's transcript sink on a riot-store file.

use std::sync::{Arc, Mutex};

use riot_core::TranscriptSink;
use riot_protocol::{Clock, CompactionStrategy, Message, MessageId};
use riot_store::TranscriptWriter;

/// Adapts a transcript file to the loop's sink. A failed write is logged:
/// the session goes on rather than losing the person's work in progress.
#[derive(Debug)]
pub(crate) struct StoreSink {
    pub(crate) writer: Mutex<TranscriptWriter>,
    pub(crate) clock: Arc<dyn Clock>,
}

impl StoreSink {
    fn with(
        &self,
        f: impl FnOnce(&mut TranscriptWriter, u64) -> Result<(), riot_store::StoreError>,
    ) {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = f(&mut writer, self.clock.now_ms()) {
            tracing::error!(error = %e, "could not write the transcript");
        }
    }
}

impl StoreSink {
    /// `/clear`: the history is empty from here.
    pub(crate) fn cleared(&self) {
        self.with(|w, at| w.cleared(at));
    }

    /// `/mode`, `session/set_mode`: the mode the next turns run in.
    pub(crate) fn mode_changed(&self, mode: riot_protocol::PermissionMode) {
        self.with(|w, at| w.mode_changed(mode, at));
    }
}

impl TranscriptSink for StoreSink {
    fn message(&self, message: &Message) {
        self.with(|w, at| w.message(message, at));
    }
    fn withdrawn(&self, message_id: &MessageId) {
        self.with(|w, at| w.withdrawn(message_id, at));
    }
    fn compacted(&self, messages: &[Message], strategy: CompactionStrategy) {
        self.with(|w, at| w.compacted(messages, strategy, at));
    }
    fn model_changed(&self, model: &str) {
        self.with(|w, at| w.model_changed(model, at));
    }
}
