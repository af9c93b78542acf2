//! What a session list shows of a transcript, folded record by record.
//!
//! A [`Digest`] starts from the metadata line and takes every later record
//! in order. It is small (a title, counts, times), so the list can keep one
//! per transcript in its index (`index.rs`) and bring it up to date by
//! folding only the records appended since. Loading a whole session folds
//! the same digest, so a listing and a loaded session agree by
//! construction.
//!
//! A field that a later record overrides — the model, the name, and any
//! running total a record carries — is simply set in [`Digest::apply`]:
//! folding the appended records in order leaves the last one's value.
//! Adding a field means bumping `index::VERSION`, so indexes written
//! without it are rebuilt from the transcripts.

use std::path::PathBuf;

use riot_protocol::{Message, MessageId, MessageOrigin, SessionCost, SessionId, UserBlock};
use serde::{Deserialize, Serialize};

use crate::record::{Record, SessionMeta, SessionSummary, SessionWorktree};

/// The text of a prompt the person typed.
pub(crate) fn person_text(message: &Message) -> Option<&str> {
    match message {
        Message::User(u) if u.origin == MessageOrigin::Person => {
            u.content.iter().find_map(|b| match b {
                UserBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
        }
        _ => None,
    }
}

/// A prompt as a title: its words on one line, at most 60 characters.
fn short_title(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 60 {
        format!("{}…", one_line.chars().take(59).collect::<String>())
    } else {
        one_line
    }
}

/// The list entry of a session, as far as its records have been folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Digest {
    pub id: SessionId,
    pub cwd: PathBuf,
    pub created_ms: u64,
    pub parent: Option<SessionId>,
    /// The model in effect after the last change.
    pub model: String,
    /// The latest time of activity (a rename is not activity).
    pub updated_ms: u64,
    /// Messages ever recorded, including those before a compaction.
    pub messages: u64,
    /// The first prompt the person typed, as a title — kept across
    /// compactions, `/clear` and its own withdrawal.
    pub prompt: Option<String>,
    /// The latest name the person gave the session.
    pub name: Option<String>,
    /// While no prompt was recorded: the person's prompts a compaction
    /// carried into the history (as titles), the title's last resort.
    pub carried: Vec<(MessageId, String)>,
    /// The running total of the last `usage` record.
    pub cost: Option<SessionCost>,
    /// The worktree the session works in.
    #[serde(default)]
    pub worktree: Option<SessionWorktree>,
}

impl Digest {
    /// The digest of a transcript holding only its metadata line.
    pub(crate) fn new(meta: &SessionMeta) -> Self {
        Self {
            id: meta.id.clone(),
            cwd: meta.cwd.clone(),
            created_ms: meta.created_ms,
            parent: meta.parent.clone(),
            model: meta.model.clone(),
            updated_ms: meta.created_ms,
            messages: 0,
            prompt: None,
            name: None,
            carried: Vec::new(),
            cost: None,
            worktree: meta.worktree.clone(),
        }
    }

    fn touch(&mut self, at_ms: u64) {
        self.updated_ms = self.updated_ms.max(at_ms);
    }

    /// Takes the next record of the transcript.
    pub(crate) fn apply(&mut self, record: &Record) {
        match record {
            Record::Meta(_) => {}
            Record::Message { at_ms, message } => {
                self.touch(*at_ms);
                self.messages += 1;
                if self.prompt.is_none()
                    && let Some(text) = person_text(message)
                {
                    self.prompt = Some(short_title(text));
                    self.carried.clear();
                }
            }
            Record::Withdrawn { at_ms, message_id } => {
                self.touch(*at_ms);
                self.carried.retain(|(id, _)| id != message_id);
            }
            Record::Compacted {
                at_ms, messages, ..
            } => {
                self.touch(*at_ms);
                if self.prompt.is_none() {
                    self.carried = messages
                        .iter()
                        .filter_map(|m| person_text(m).map(|t| (m.id().clone(), short_title(t))))
                        .collect();
                }
            }
            Record::Cleared { at_ms } => {
                self.touch(*at_ms);
                self.carried.clear();
            }
            Record::ModelChanged { at_ms, model } => {
                self.touch(*at_ms);
                self.model.clone_from(model);
            }
            Record::ModeChanged { at_ms, .. } => self.touch(*at_ms),
            // A name is not activity: the session keeps its place in the
            // newest-first list.
            Record::Renamed { title, .. } => self.name = Some(title.clone()),
            Record::Usage { at_ms, total, .. } => {
                self.touch(*at_ms);
                self.cost = Some(total.clone());
            }
            Record::Rewound { at_ms, .. } | Record::RewindUndone { at_ms } => self.touch(*at_ms),
        }
    }

    /// The title: the person's name for the session, else the first words
    /// of the first prompt they typed.
    pub(crate) fn title(&self) -> String {
        self.name
            .as_ref()
            .or(self.prompt.as_ref())
            .or(self.carried.first().map(|(_, title)| title))
            .map_or_else(|| "(no prompt)".to_owned(), Clone::clone)
    }

    /// The list entry.
    pub(crate) fn summary(&self) -> SessionSummary {
        SessionSummary {
            id: self.id.clone(),
            title: self.title(),
            cwd: self.cwd.clone(),
            created_ms: self.created_ms,
            updated_ms: self.updated_ms,
            messages: self.messages,
            model: self.model.clone(),
            parent: self.parent.clone(),
            cost: self.cost.clone(),
            worktree: self.worktree.clone(),
        }
    }
}
