//! # riot-store — durable sessions
//!
//! One append-only JSONL transcript per session,
//! `<riot home>/sessions/<session id>.jsonl` (docs/design.md §12). Each line is
//! a [`Record`]: the session's metadata first, then messages, withdrawals,
//! compaction boundaries, model and mode changes, and each model request's
//! usage and cost. Every record is written and flushed as one line, so a
//! `kill -9` loses at most the line being written — and a torn last line
//! is ignored on load, never fatal.
//!
//! Images are not written into the transcript: each is stored once, by
//! content, in `sessions-images/<session id>/`, and its record keeps a
//! reference that loading resolves (a missing file becomes a note, never a
//! failed load), so a resumed session sends its images again.
//!
//! The session list ([`SessionStore::list`]) is derived from the transcripts
//! themselves, so it can always be rebuilt; nothing else needs to agree with
//! them. It reads them through an index beside them (`sessions-index/`,
//! one small entry per transcript, kept current by the writer and checked
//! against each transcript's size and modification time), so listing costs
//! the same whatever the transcripts' length: a current entry is used as it
//! is, records appended since are folded in, and anything else is read
//! again from the transcript.
//!
//! This crate knows files and records, not the agent loop: the kernel
//! adapts a [`TranscriptWriter`] to the loop's transcript sink.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use riot_protocol::{Message, MessageId, SessionId};
//! use riot_store::{SessionMeta, SessionStore};
//!
//! let store = SessionStore::new(dir.path().join("sessions"));
//! let meta = SessionMeta::new(SessionId::new("ses_1"), "/work/p".into(), "m", 1_000);
//! let mut writer = store.create(&meta).unwrap();
//! writer.message(&Message::user_text(MessageId::new("u1"), "hi"), 1_001).unwrap();
//! let loaded = store.load(&SessionId::new("ses_1")).unwrap();
//! assert_eq!(loaded.messages.len(), 1);
//! ```

// riot-store is the file-backed implementation of transcripts; like
// riot-runtime it owns real file I/O (docs/design.md §3).
#![allow(clippy::disallowed_methods)]

mod digest;
mod images;
mod index;
mod loaded;
mod record;

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

pub use images::STORED_PREFIX as STORED_IMAGE_PREFIX;
pub use loaded::{LoadedSession, ShownMessage};
// Rewind's numbering of the person's prompts (docs/rewind.md).
pub use loaded::{Prompt, is_prompt};
pub use record::{Record, SessionMeta, SessionSummary, SessionWorktree};
use riot_protocol::{CompactionStrategy, Message, MessageId, PermissionMode, SessionId};

/// A store operation failed; the message says which file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no session `{0}`; `riot sessions list` shows the sessions that exist")]
    UnknownSession(String),
    #[error("session id `{0}` is not valid: use the id shown by `riot sessions list`")]
    BadId(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{path}:{line}: not a transcript record ({reason}); the file is damaged before its last line"
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{0}: the transcript has no metadata line")]
    NoMeta(PathBuf),
    #[error("a session's name cannot be empty")]
    EmptyTitle,
    #[error(
        "session `{0}` is being written (or its last line is damaged); try again, or resume it once"
    )]
    Busy(String),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The directory of transcripts.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    /// The list's index, beside `dir`.
    index: PathBuf,
}

impl SessionStore {
    /// Transcripts live directly in `dir` (created on first write); the
    /// list's index in its sibling `<dir>-index`.
    pub fn new(dir: PathBuf) -> Self {
        let index = index::dir_for(&dir);
        Self { dir, index }
    }

    /// The index entry of the transcript named `<stem>.jsonl`.
    fn entry_of(&self, stem: &str) -> PathBuf {
        self.index.join(format!("{stem}.json"))
    }

    /// The directory kept beside a session's transcript for what belongs
    /// to it (its images, their descriptions); removed with the session.
    pub fn files_of(&self, id: &SessionId) -> Result<PathBuf, StoreError> {
        Ok(images::dir_for(&self.path_of(id)?))
    }

    /// The transcript path of a session. Ids are checked so a crafted id
    /// cannot name a file outside the store.
    pub fn path_of(&self, id: &SessionId) -> Result<PathBuf, StoreError> {
        let s = id.as_str();
        let ok = !s.is_empty()
            && s.len() <= 128
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok {
            return Err(StoreError::BadId(s.to_owned()));
        }
        Ok(self.dir.join(format!("{s}.jsonl")))
    }

    /// Starts a new transcript with its metadata line.
    pub fn create(&self, meta: &SessionMeta) -> Result<TranscriptWriter, StoreError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let path = self.path_of(&meta.id)?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        let mut writer = TranscriptWriter {
            path,
            file,
            tracked: None,
        };
        let line = writer.append(&Record::Meta(meta.clone()))?;
        let folded = index::Folded {
            digest: digest::Digest::new(meta),
            covered: line.len() as u64,
            head: index::head_of(&line),
            pending: None,
        };
        writer.tracked = Some(Tracked {
            entry: self.entry_of(meta.id.as_str()),
            folded,
        });
        writer.save_entry();
        Ok(writer)
    }

    /// Opens an existing transcript for appending (resume). A torn last
    /// line (a crash mid-write) is cut off first: it was never a complete
    /// record, and the next record must start on its own line.
    pub fn append_to(&self, id: &SessionId) -> Result<TranscriptWriter, StoreError> {
        let path = self.path_of(id)?;
        if !path.exists() {
            return Err(StoreError::UnknownSession(id.to_string()));
        }
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        if bytes.last().is_some_and(|b| *b != b'\n') {
            let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let file = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(io_err(&path))?;
            file.set_len(keep as u64).map_err(io_err(&path))?;
        }
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        let entry = self.entry_of(id.as_str());
        let tracked = match index::refresh(&path, &entry) {
            Ok(folded) => Some(Tracked { entry, folded }),
            // Damaged before its last line: it can still be appended to;
            // the list reports it.
            Err(e) => {
                tracing::warn!(error = %e, "the transcript's list entry is not kept");
                None
            }
        };
        Ok(TranscriptWriter {
            path,
            file,
            tracked,
        })
    }

    /// Reads a transcript and rebuilds the session's history.
    pub fn load(&self, id: &SessionId) -> Result<LoadedSession, StoreError> {
        let path = self.path_of(id)?;
        if !path.exists() {
            return Err(StoreError::UnknownSession(id.to_string()));
        }
        let records = read_records(&path)?;
        LoadedSession::from_records(&path, records)
    }

    /// Every record of a transcript, in order (for `riot sessions show --json`).
    pub fn records(&self, id: &SessionId) -> Result<Vec<Record>, StoreError> {
        let path = self.path_of(id)?;
        if !path.exists() {
            return Err(StoreError::UnknownSession(id.to_string()));
        }
        read_records(&path)
    }

    /// All sessions, newest first (by last update, then id). Derived from
    /// the transcripts through the index (see the crate docs): only what
    /// was appended since a transcript's entry was written is read.
    /// Unreadable transcripts are skipped with a warning.
    pub fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry.map_err(io_err(&self.dir))?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                continue;
            }
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            match index::refresh(&path, &self.entry_of(stem)) {
                Ok(folded) => out.push(folded.shown().summary()),
                Err(e) => tracing::warn!(error = %e, "skipping an unreadable transcript"),
            }
        }
        out.sort_by(|a, b| {
            b.updated_ms
                .cmp(&a.updated_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        Ok(out)
    }

    /// The most recently updated top-level session whose cwd is `cwd`
    /// (from [`Self::list`], so as cheap).
    pub fn latest_in(&self, cwd: &Path) -> Result<Option<SessionSummary>, StoreError> {
        Ok(self
            .list()?
            .into_iter()
            .find(|s| s.cwd == cwd && s.parent.is_none()))
    }

    /// Names a session: `title` (trimmed, on one line, at most 200
    /// characters) becomes its title in listings.
    pub fn rename(&self, id: &SessionId, title: &str, at_ms: u64) -> Result<String, StoreError> {
        let one_line: String = title.split_whitespace().collect::<Vec<_>>().join(" ");
        let title: String = one_line.chars().take(200).collect();
        if title.is_empty() {
            return Err(StoreError::EmptyTitle);
        }
        // Not `append_to`: its repair of a torn last line would cut a
        // record another writer (the running session) is in the middle of.
        let path = self.path_of(id)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::UnknownSession(id.to_string()));
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        if bytes.last().is_some_and(|b| *b != b'\n') {
            return Err(StoreError::Busy(id.to_string()));
        }
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        TranscriptWriter {
            path: path.clone(),
            file,
            tracked: None,
        }
        .write(&Record::Renamed {
            at_ms,
            title: title.clone(),
        })?;
        // The index catches up now (one line), not at the next listing.
        if let Err(e) = index::refresh(&path, &self.entry_of(id.as_str())) {
            tracing::debug!(error = %e, "the renamed transcript's list entry is not current");
        }
        Ok(title)
    }

    /// Deletes a transcript.
    pub fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        let path = self.path_of(id)?;
        match std::fs::remove_file(&path) {
            Ok(()) => {
                index::remove(&self.entry_of(id.as_str()));
                let images = images::dir_for(&path);
                if let Err(e) = std::fs::remove_dir_all(&images)
                    && e.kind() != io::ErrorKind::NotFound
                {
                    tracing::warn!(dir = %images.display(), error = %e, "the session's images were not removed");
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(StoreError::UnknownSession(id.to_string()))
            }
            Err(e) => Err(io_err(&path)(e)),
        }
    }
}

fn read_records(path: &Path) -> Result<Vec<Record>, StoreError> {
    let file = File::open(path).map_err(io_err(path))?;
    let lines: Vec<Vec<u8>> = BufReader::new(file)
        .split(b'\n')
        .collect::<Result<_, _>>()
        .map_err(io_err(path))?;
    let last_nonempty = lines.iter().rposition(|l| !l.is_empty());
    let images = images::dir_for(path);
    let mut records = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(mut record) => {
                images::load(&mut record, &images);
                records.push(record);
            }
            // A crash mid-write leaves a torn last line: ignore it.
            Err(_) if Some(i) == last_nonempty => {
                tracing::warn!(path = %path.display(), line = i + 1, "ignoring a torn last line");
            }
            Err(e) => {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    line: i + 1,
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(records)
}

/// A writer's view of its transcript's list entry.
#[derive(Debug)]
struct Tracked {
    entry: PathBuf,
    folded: index::Folded,
}

/// Appends records to one transcript; each call writes and flushes one line.
/// It keeps the transcript's list entry current as it goes.
#[derive(Debug)]
pub struct TranscriptWriter {
    path: PathBuf,
    file: File,
    /// `None` when the entry is not kept (a rename's one-off writer, a
    /// transcript damaged before its end).
    tracked: Option<Tracked>,
}

impl TranscriptWriter {
    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line and flushes it to the OS.
    pub fn write(&mut self, record: &Record) -> Result<(), StoreError> {
        let line = self.append(record)?;
        if let Some(tracked) = &mut self.tracked {
            tracked.folded.digest.apply(record);
            tracked.folded.covered += line.len() as u64;
            self.save_entry();
        }
        Ok(())
    }

    /// Writes one line; returns it.
    fn append(&mut self, record: &Record) -> Result<Vec<u8>, StoreError> {
        let stored;
        let record = if images::has_inline(record) {
            let mut copy = record.clone();
            let dir = images::dir_for(&self.path);
            images::store(&mut copy, &dir).map_err(io_err(&dir))?;
            stored = copy;
            &stored
        } else {
            record
        };
        let mut line = serde_json::to_vec(record).map_err(|e| StoreError::Io {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(io_err(&self.path))?;
        self.file.flush().map_err(io_err(&self.path))?;
        Ok(line)
    }

    /// Writes the list entry if this writer's count is the file's size;
    /// otherwise someone else appended too (a rename), and the entry is
    /// brought up to date from the transcript's new lines instead.
    fn save_entry(&mut self) {
        let Some(tracked) = &mut self.tracked else {
            return;
        };
        if let Ok(stat) = self.file.metadata()
            && index::save_if_alone(&tracked.entry, &tracked.folded, &stat)
        {
            return;
        }
        match index::refresh(&self.path, &tracked.entry) {
            Ok(folded) => tracked.folded = folded,
            Err(e) => {
                tracing::warn!(error = %e, "the transcript's list entry is no longer kept");
                self.tracked = None;
            }
        }
    }

    /// A finished message.
    pub fn message(&mut self, message: &Message, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::Message {
            at_ms,
            message: message.clone(),
        })
    }

    /// A prompt stopped before any reply: kept in the transcript and shown
    /// as interrupted, but resume does not send it to the model again.
    pub fn withdrawn(&mut self, message_id: &MessageId, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::Withdrawn {
            at_ms,
            message_id: message_id.clone(),
        })
    }

    /// A compaction boundary: the history from here on.
    pub fn compacted(
        &mut self,
        messages: &[Message],
        strategy: CompactionStrategy,
        at_ms: u64,
    ) -> Result<(), StoreError> {
        self.write(&Record::Compacted {
            at_ms,
            strategy,
            messages: messages.to_vec(),
        })
    }

    /// The person started over (`/clear`).
    pub fn cleared(&mut self, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::Cleared { at_ms })
    }

    /// A rewind to just before user message `to`, whose message is `from`:
    /// it and every later message leave the history (docs/rewind.md).
    pub fn rewound(&mut self, to: u32, from: &MessageId, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::Rewound {
            at_ms,
            to,
            from: from.clone(),
        })
    }

    /// The last rewind is undone: what it withdrew is back.
    pub fn rewind_undone(&mut self, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::RewindUndone { at_ms })
    }

    /// The model changed (fallback, `/model`).
    pub fn model_changed(&mut self, model: &str, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::ModelChanged {
            at_ms,
            model: model.to_owned(),
        })
    }

    /// The permission mode changed.
    pub fn mode_changed(&mut self, mode: PermissionMode, at_ms: u64) -> Result<(), StoreError> {
        self.write(&Record::ModeChanged { at_ms, mode })
    }
}

#[cfg(test)]
mod tests;
