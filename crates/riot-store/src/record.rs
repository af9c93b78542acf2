//! Transcript records: one line of a transcript file each, the
//! session's header, and a listing's entry (what loading them rebuilds
//! is loaded.rs's).

use std::path::PathBuf;

use riot_protocol::{
    CompactionStrategy, Message, MessageId, PermissionMode, SessionCost, SessionId, SystemPrompt,
    Usage,
};
use serde::{Deserialize, Serialize};

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
    /// One model request: its tokens, what it cost, and what the session
    /// has cost with it — so a listing reads the session's total from the
    /// last such record, and a resumed session goes on from it.
    Usage {
        at_ms: u64,
        model: String,
        usage: Usage,
        /// A side request: a compaction summary, auto mode's classifier, a
        /// subagent's request.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        side: bool,
        /// US dollars; absent when the model had no price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The session's cost so far, this request included.
        total: SessionCost,
    },
    /// A rewind to just before user message `to` (docs/rewind.md): the
    /// message `from` and every later one are withdrawn from the history
    /// a resume sends; the records stay, and `riot sessions show` marks
    /// them.
    Rewound {
        at_ms: u64,
        to: u32,
        from: MessageId,
    },
    /// The last rewind was undone: what it withdrew is back.
    RewindUndone {
        at_ms: u64,
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
    /// The git worktree the session works in (`riot --worktree`), when
    /// it runs in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<SessionWorktree>,
}

/// A session's git worktree: made for it on a branch of its own, under
/// Riot's home, apart from the project's checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionWorktree {
    /// The worktree's name (`riot worktree list`).
    pub name: String,
    /// Its branch, e.g. `riot/fix-login`.
    pub branch: String,
    /// Where it is checked out.
    pub path: PathBuf,
    /// The checkout it was made from (the main worktree's top directory).
    pub project: PathBuf,
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
            worktree: None,
        }
    }
}

/// One entry of `riot sessions list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// What it has cost, from its last `usage` record; `None` when its
    /// transcript has none (and its `usd` is `None` when a price was
    /// unknown).
    #[serde(default)]
    pub cost: Option<SessionCost>,
    /// The worktree it works in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<SessionWorktree>,
}
