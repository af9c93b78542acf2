//! What loading a transcript rebuilds: the history a resume sends, the
//! messages a person reads back, the prompts rewind numbers, and the
//! digest's figures.

use std::path::Path;

use riot_protocol::{Message, MessageId, PermissionMode, SessionCost};

use crate::StoreError;
use crate::digest::Digest;
use crate::record::{Record, SessionMeta, SessionSummary};

/// A message as a person reads the session back (`riot sessions show`).
#[derive(Debug, Clone, PartialEq)]
pub struct ShownMessage {
    pub message: Message,
    /// A prompt stopped before any reply: kept for the person, not sent to
    /// the model again.
    pub interrupted: bool,
    /// Withdrawn by a rewind: kept for the person, not sent again.
    pub rewound: bool,
}

/// A prompt the person typed, numbered as rewind counts user messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// 1-based, among the prompts still in the session's line (withdrawn
    /// and rewound ones not counted).
    pub number: u32,
    pub id: MessageId,
    pub text: String,
    pub at_ms: u64,
    /// Still in the history a resume sends (not before a compaction or
    /// `/clear`): only such a prompt can be rewound to.
    pub in_history: bool,
}

/// Whether `message` is a prompt the person typed (a user message rewind
/// counts).
pub fn is_prompt(message: &Message) -> bool {
    crate::digest::person_text(message).is_some()
}

/// What a rewind withdrew, for its undo.
struct Withdrawal {
    messages: Vec<Message>,
    prompts: Vec<Prompt>,
}

/// A session rebuilt from its transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    pub meta: SessionMeta,
    /// The history to resume from: withdrawals applied, starting at the
    /// last compaction boundary.
    pub messages: Vec<Message>,
    /// What a person reads from the same point: the history, with prompts
    /// stopped before any reply kept in place and marked interrupted.
    pub shown: Vec<ShownMessage>,
    /// The model in effect at the end (after fallbacks and switches).
    pub model: String,
    pub mode: Option<PermissionMode>,
    pub updated_ms: u64,
    /// Messages ever recorded (including those before a compaction).
    pub message_count: u64,
    /// The person's prompts, numbered (docs/rewind.md).
    pub prompts: Vec<Prompt>,
    /// Whether the last thing recorded is a rewind (so it can be undone).
    pub undoable_rewind: bool,
    /// What the session list shows of it, folded by the same rules.
    digest: Digest,
}

impl LoadedSession {
    pub(crate) fn from_records(path: &Path, records: Vec<Record>) -> Result<Self, StoreError> {
        let mut iter = records.into_iter();
        let Some(Record::Meta(meta)) = iter.next() else {
            return Err(StoreError::NoMeta(path.to_path_buf()));
        };
        let mut digest = Digest::new(&meta);
        let mut messages: Vec<Message> = Vec::new();
        let mut shown: Vec<ShownMessage> = Vec::new();
        let mut mode = None;
        let mut prompts: Vec<Prompt> = Vec::new();
        let mut withdrawals: Vec<Withdrawal> = Vec::new();
        for record in iter {
            digest.apply(&record);
            match record {
                Record::Message { message, at_ms } => {
                    withdrawals.clear();
                    if let Some(text) = crate::digest::person_text(&message) {
                        prompts.push(Prompt {
                            number: 0,
                            id: message.id().clone(),
                            text: text.to_owned(),
                            at_ms,
                            in_history: true,
                        });
                    }
                    shown.push(ShownMessage {
                        message: message.clone(),
                        interrupted: false,
                        rewound: false,
                    });
                    messages.push(message);
                }
                Record::Withdrawn { message_id, .. } => {
                    messages.retain(|m| m.id() != &message_id);
                    prompts.retain(|p| p.id != message_id);
                    for s in &mut shown {
                        if s.message.id() == &message_id {
                            s.interrupted = true;
                        }
                    }
                }
                Record::Compacted { messages: kept, .. } => {
                    withdrawals.clear();
                    shown = kept
                        .iter()
                        .map(|m| ShownMessage {
                            message: m.clone(),
                            interrupted: false,
                            rewound: false,
                        })
                        .collect();
                    messages = kept;
                    for p in &mut prompts {
                        p.in_history = false;
                    }
                }
                Record::Cleared { .. } => {
                    withdrawals.clear();
                    messages.clear();
                    shown.clear();
                    for p in &mut prompts {
                        p.in_history = false;
                    }
                }
                Record::Rewound { from, .. } => {
                    let Some(at) = messages.iter().position(|m| m.id() == &from) else {
                        continue;
                    };
                    let taken = messages.split_off(at);
                    for s in &mut shown {
                        if taken.iter().any(|m| m.id() == s.message.id()) {
                            s.rewound = true;
                        }
                    }
                    let first = prompts
                        .iter()
                        .position(|p| p.id == from)
                        .unwrap_or(prompts.len());
                    withdrawals.push(Withdrawal {
                        messages: taken,
                        prompts: prompts.split_off(first),
                    });
                }
                Record::RewindUndone { .. } => {
                    if let Some(back) = withdrawals.pop() {
                        for s in &mut shown {
                            if back.messages.iter().any(|m| m.id() == s.message.id()) {
                                s.rewound = false;
                            }
                        }
                        messages.extend(back.messages);
                        prompts.extend(back.prompts);
                    }
                }
                Record::ModeChanged { mode: m, .. } => mode = Some(m),
                Record::Meta(_)
                | Record::ModelChanged { .. }
                | Record::Renamed { .. }
                | Record::Usage { .. } => {}
            }
        }
        for (index, prompt) in prompts.iter_mut().enumerate() {
            prompt.number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        }
        Ok(LoadedSession {
            meta,
            messages,
            shown,
            model: digest.model.clone(),
            mode,
            updated_ms: digest.updated_ms,
            message_count: digest.messages,
            prompts,
            undoable_rewind: !withdrawals.is_empty(),
            digest,
        })
    }

    /// The title: the name the person gave the session, else the first
    /// words of the first prompt they typed — kept across compactions and
    /// `/clear`, also when it was stopped before any reply.
    pub fn title(&self) -> String {
        self.digest.title()
    }

    /// The list entry for this session (what [`crate::SessionStore::list`]
    /// shows of it).
    pub fn summary(&self) -> SessionSummary {
        self.digest.summary()
    }

    /// What the session has cost, from its last `usage` record; `None`
    /// when it has none (no request was recorded with its cost).
    pub fn cost(&self) -> Option<&SessionCost> {
        self.digest.cost.as_ref()
    }
}
