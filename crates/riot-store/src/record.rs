//! Transcript records and what loading them rebuilds.

use std::path::{Path, PathBuf};

use riot_protocol::{
    CompactionStrategy, Message, MessageId, MessageOrigin, PermissionMode, SessionId, SystemPrompt,
    UserBlock,
};
use serde::{Deserialize, Serialize};

use crate::StoreError;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: what the session is.
    Meta(SessionMeta),
    Message {
        at_ms: u64,
        message: Message,
    },
    /// A prompt stopped before anything was produced: it stays in the
    /// transcript as the person typed it, marked interrupted, but is not
    /// sent to the model again (docs/design.md §5).
    Withdrawn {
        at_ms: u64,
        message_id: MessageId,
    },
    /// The history was replaced by a compacted one; later records follow it.
    Compacted {
        at_ms: u64,
        strategy: CompactionStrategy,
        messages: Vec<Message>,
    },
    ModelChanged {
        at_ms: u64,
        model: String,
    },
    /// The person started over (`/clear`): the history is empty from here.
    Cleared {
        at_ms: u64,
    },
    ModeChanged {
        at_ms: u64,
        mode: PermissionMode,
    },
    /// The person named the session; the name replaces the title taken
    /// from the first prompt.
    Renamed {
        at_ms: u64,
        title: String,
    },
}

/// What a session is: written once, as the first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: SessionId,
    pub cwd: PathBuf,
    pub model: String,
    pub created_ms: u64,
    /// Set for subagent transcripts: the session that started them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
    /// The system prompt snapshotted when the session started; a resumed
    /// session reuses it byte for byte (docs/design.md §11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    /// The wire format the session talks (`anthropic`, `openai`,
    /// `openai-responses`): a resumed session keeps it unless overridden.
    /// Absent in transcripts written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The endpoint root its requests went to, as used (normalized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

impl SessionMeta {
    /// A top-level session.
    pub fn new(id: SessionId, cwd: PathBuf, model: impl Into<String>, created_ms: u64) -> Self {
        Self {
            id,
            cwd,
            model: model.into(),
            created_ms,
            parent: None,
            system: None,
            provider: None,
            base_url: None,
        }
    }
}

/// A message as a person reads the session back (`riot sessions show`).
#[derive(Debug, Clone, PartialEq)]
pub struct ShownMessage {
    pub message: Message,
    /// A prompt stopped before any reply: kept for the person, not sent to
    /// the model again.
    pub interrupted: bool,
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
    /// The first prompt the person typed, kept across compactions and
    /// `/clear` (the title) — also when it was stopped before any reply.
    pub first_prompt: Option<(MessageId, String)>,
    /// The name the person gave the session, if any (the latest).
    pub name: Option<String>,
}

/// The text of a prompt the person typed.
fn person_text(message: &Message) -> Option<&str> {
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

impl LoadedSession {
    pub(crate) fn from_records(path: &Path, records: Vec<Record>) -> Result<Self, StoreError> {
        let mut iter = records.into_iter();
        let Some(Record::Meta(meta)) = iter.next() else {
            return Err(StoreError::NoMeta(path.to_path_buf()));
        };
        let mut session = LoadedSession {
            model: meta.model.clone(),
            updated_ms: meta.created_ms,
            meta,
            messages: Vec::new(),
            shown: Vec::new(),
            mode: None,
            message_count: 0,
            first_prompt: None,
            name: None,
        };
        for record in iter {
            match record {
                Record::Meta(_) => {}
                Record::Message { at_ms, message } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.message_count += 1;
                    if session.first_prompt.is_none()
                        && let Some(text) = person_text(&message)
                    {
                        session.first_prompt = Some((message.id().clone(), text.to_owned()));
                    }
                    session.shown.push(ShownMessage {
                        message: message.clone(),
                        interrupted: false,
                    });
                    session.messages.push(message);
                }
                Record::Withdrawn { at_ms, message_id } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.messages.retain(|m| m.id() != &message_id);
                    for shown in &mut session.shown {
                        if shown.message.id() == &message_id {
                            shown.interrupted = true;
                        }
                    }
                }
                Record::Compacted {
                    at_ms, messages, ..
                } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.shown = messages
                        .iter()
                        .map(|m| ShownMessage {
                            message: m.clone(),
                            interrupted: false,
                        })
                        .collect();
                    session.messages = messages;
                }
                Record::Cleared { at_ms } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.messages.clear();
                    session.shown.clear();
                }
                Record::ModelChanged { at_ms, model } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.model = model;
                }
                Record::ModeChanged { at_ms, mode } => {
                    session.updated_ms = session.updated_ms.max(at_ms);
                    session.mode = Some(mode);
                }
                Record::Renamed { title, .. } => {
                    // A name is not activity: the session keeps its place
                    // in the newest-first list.
                    session.name = Some(title);
                }
            }
        }
        Ok(session)
    }

    /// The title: the first words of the first prompt the person typed.
    pub fn title(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let first = self
            .first_prompt
            .as_ref()
            .map(|(_, text)| text.as_str())
            .or_else(|| self.messages.iter().find_map(person_text));
        let text = first.unwrap_or("(no prompt)");
        let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if one_line.chars().count() > 60 {
            format!("{}…", one_line.chars().take(59).collect::<String>())
        } else {
            one_line
        }
    }

    /// The list entry for this session.
    pub fn summary(&self) -> SessionSummary {
        SessionSummary {
            id: self.meta.id.clone(),
            title: self.title(),
            cwd: self.meta.cwd.clone(),
            created_ms: self.meta.created_ms,
            updated_ms: self.updated_ms,
            messages: self.message_count,
            model: self.model.clone(),
            parent: self.meta.parent.clone(),
        }
    }
}

/// One entry of `riot sessions list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: SessionId,
    pub title: String,
    pub cwd: PathBuf,
    pub created_ms: u64,
    pub updated_ms: u64,
    pub messages: u64,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<SessionId>,
}
