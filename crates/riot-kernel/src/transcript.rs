//! The loop's transcript sink on a riot-store file.
//!
//! A new session's file is created with its first message (the first
//! prompt), not when the session opens: a session that never got a prompt
//! — a run that failed first, a "New session" left unused — leaves nothing
//! behind. What is recorded before then (a mode or model change) is held
//! and written after the metadata line.

use std::sync::{Arc, Mutex, OnceLock};

use riot_core::TranscriptSink;
use riot_protocol::{Clock, CompactionStrategy, Message, MessageId};
use riot_store::{Record, SessionMeta, SessionStore, StoreError, TranscriptWriter};

/// Where the records go.
#[derive(Debug)]
enum Target {
    /// Not created yet: `held` is written after the metadata line when the
    /// first message arrives.
    Pending {
        store: SessionStore,
        meta: Box<SessionMeta>,
        held: Vec<Record>,
    },
    /// Boxed: a writer carries its transcript's list digest.
    Open(Box<TranscriptWriter>),
}

/// Adapts a transcript file to the loop's sink. A failed write is logged:
/// the session goes on rather than losing the person's work in progress.
#[derive(Debug)]
pub(crate) struct StoreSink {
    target: Mutex<Target>,
    clock: Arc<dyn Clock>,
    /// The session's user message count, for checkpoints (docs/rewind.md);
    /// unset for subagents' transcripts.
    prompts: OnceLock<crate::checkpoints::PromptNumber>,
    /// The last message counted as a prompt: only its withdrawal uncounts
    /// one (a turn of Riot's, with no prompt, can be withdrawn too).
    last_prompt: Mutex<Option<MessageId>>,
}

impl StoreSink {
    /// A sink on a transcript that exists (resumed, or a subagent's).
    pub(crate) fn open(writer: TranscriptWriter, clock: Arc<dyn Clock>) -> Self {
        Self {
            target: Mutex::new(Target::Open(Box::new(writer))),
            clock,
            prompts: OnceLock::new(),
            last_prompt: Mutex::new(None),
        }
    }

    /// A sink whose transcript is created with its first message.
    pub(crate) fn pending(store: SessionStore, meta: SessionMeta, clock: Arc<dyn Clock>) -> Self {
        Self {
            target: Mutex::new(Target::Pending {
                store,
                meta: Box::new(meta),
                held: Vec::new(),
            }),
            clock,
            prompts: OnceLock::new(),
            last_prompt: Mutex::new(None),
        }
    }

    /// Writes `record`; `creates` says whether it may create the file.
    fn write(&self, record: Record, creates: bool) {
        let mut target = self.target.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = write_to(&mut target, record, creates) {
            tracing::error!(error = %e, "could not write the transcript");
        }
    }

    fn now(&self) -> u64 {
        self.clock.now_ms()
    }

    /// `/clear`: the history is empty from here.
    pub(crate) fn cleared(&self) {
        self.write(Record::Cleared { at_ms: self.now() }, false);
    }

    /// Counts the person's prompts into `prompts` from here on.
    pub(crate) fn count_prompts(&self, prompts: crate::checkpoints::PromptNumber) {
        let _ = self.prompts.set(prompts);
    }

    /// A rewind to just before user message `to` (docs/rewind.md), written
    /// at once; an error when it cannot be.
    pub(crate) fn rewound(&self, to: u32, from: &MessageId) -> Result<(), StoreError> {
        let record = Record::Rewound {
            at_ms: self.now(),
            to,
            from: from.clone(),
        };
        let mut target = self.target.lock().unwrap_or_else(|e| e.into_inner());
        write_to(&mut target, record, false)
    }

    /// The last rewind is undone.
    pub(crate) fn rewind_undone(&self) -> Result<(), StoreError> {
        let record = Record::RewindUndone { at_ms: self.now() };
        let mut target = self.target.lock().unwrap_or_else(|e| e.into_inner());
        write_to(&mut target, record, false)
    }

    /// `/mode`, `session/set_mode`: the mode the next turns run in.
    pub(crate) fn mode_changed(&self, mode: riot_protocol::PermissionMode) {
        self.write(
            Record::ModeChanged {
                at_ms: self.now(),
                mode,
            },
            false,
        );
    }
}

fn write_to(target: &mut Target, record: Record, creates: bool) -> Result<(), StoreError> {
    match target {
        Target::Open(writer) => writer.write(&record),
        Target::Pending { held, .. } if !creates => {
            held.push(record);
            Ok(())
        }
        Target::Pending { store, meta, held } => {
            // On failure everything stays held, and the next message tries
            // again.
            let mut writer = store.create(meta)?;
            for earlier in held.iter() {
                writer.write(earlier)?;
            }
            writer.write(&record)?;
            *target = Target::Open(Box::new(writer));
            Ok(())
        }
    }
}

impl riot_providers::meter::CostLog for StoreSink {
    /// A model request's usage and cost, with the session's total so far.
    fn request(&self, request: riot_providers::meter::PricedRequest<'_>) {
        let record = Record::Usage {
            at_ms: self.now(),
            model: request.model.to_owned(),
            usage: *request.usage,
            side: request.side,
            cost_usd: request.cost_usd,
            total: request.total.clone(),
        };
        self.write(record, false);
    }
}

impl TranscriptSink for StoreSink {
    fn message(&self, message: &Message) {
        if let Some(prompts) = self.prompts.get()
            && riot_store::is_prompt(message)
        {
            prompts.bump();
            *self.last_prompt.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(message.id().clone());
        }
        let record = Record::Message {
            at_ms: self.now(),
            message: message.clone(),
        };
        self.write(record, true);
    }
    fn withdrawn(&self, message_id: &MessageId) {
        // A message stopped before any reply is withdrawn: the prompt it
        // was, or a turn of Riot's (a background result), which counted
        // nothing.
        let was_prompt = {
            let mut last = self.last_prompt.lock().unwrap_or_else(|e| e.into_inner());
            if last.as_ref() == Some(message_id) {
                *last = None;
                true
            } else {
                false
            }
        };
        if was_prompt && let Some(prompts) = self.prompts.get() {
            prompts.drop_one();
        }
        let record = Record::Withdrawn {
            at_ms: self.now(),
            message_id: message_id.clone(),
        };
        self.write(record, false);
    }
    fn compacted(&self, messages: &[Message], strategy: CompactionStrategy) {
        let record = Record::Compacted {
            at_ms: self.now(),
            strategy,
            messages: messages.to_vec(),
        };
        self.write(record, false);
    }
    fn model_changed(&self, model: &str) {
        let record = Record::ModelChanged {
            at_ms: self.now(),
            model: model.to_owned(),
        };
        self.write(record, false);
    }
}

#[cfg(test)]
mod tests {
    use riot_protocol::{FixedClock, PermissionMode, SessionId};

    use super::*;

    #[test]
    fn the_file_is_created_with_the_first_message_and_keeps_what_came_before() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = SessionId::new("ses_lazy");
        let meta = SessionMeta::new(id.clone(), "/p".into(), "m", 1);
        let sink = StoreSink::pending(store.clone(), meta, Arc::new(FixedClock::new()));
        sink.mode_changed(PermissionMode::AcceptEdits);
        sink.model_changed("other");
        assert!(
            matches!(store.load(&id), Err(StoreError::UnknownSession(_))),
            "nothing on disk before the first prompt"
        );
        assert!(store.list().unwrap().is_empty());

        let prompt = Message::user_text(MessageId::new("u1"), "hi");
        sink.message(&prompt);
        let loaded = store.load(&id).unwrap();
        assert_eq!(loaded.messages, vec![prompt]);
        assert_eq!(loaded.mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(loaded.model, "other");
        sink.withdrawn(&MessageId::new("u1"));
        assert!(store.load(&id).unwrap().messages.is_empty());
    }

    #[test]
    fn each_priced_request_is_recorded_with_the_running_total() {
        use riot_protocol::{SessionCost, Usage};
        use riot_providers::meter::{CostLog, PricedRequest};

        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = SessionId::new("ses_cost");
        let sink = StoreSink::pending(
            store.clone(),
            SessionMeta::new(id.clone(), "/p".into(), "m", 1),
            Arc::new(FixedClock::new()),
        );
        sink.message(&Message::user_text(MessageId::new("u1"), "hi"));
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
            ..Usage::default()
        };
        let mut total = SessionCost::default();
        total.add("m", &usage, true, None);
        sink.request(PricedRequest {
            model: "m",
            usage: &usage,
            side: true,
            cost_usd: None,
            total: &total,
        });
        let loaded = store.load(&id).unwrap();
        assert_eq!(loaded.cost(), Some(&total));
        assert_eq!(store.list().unwrap()[0].cost.as_ref(), Some(&total));
    }
}
