//! A session's checkpoint log (`sessions/<session id>.jsonl`): one line
//! per event, appended and synced before the call it guards runs, and what
//! folding the lines gives back.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::FileState;

/// One path's change: its state before and after (`None`: no file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    pub before: Option<FileState>,
    pub after: Option<FileState>,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Entry {
    /// Recorded before a call that may change files runs.
    Begin {
        seq: u64,
        at_ms: u64,
        /// The 1-based number of the user message whose turn made the call.
        message: u32,
        tool: String,
        /// The file tools' targets, as they were.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        files: BTreeMap<String, Option<FileState>>,
        /// A command's: the object holding the tree's manifest.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
        /// Files over the size limit, not recorded.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// The walk stopped at the file limit.
        #[serde(default, skip_serializing_if = "is_false")]
        truncated: bool,
    },
    /// The call ended: what it changed.
    End {
        seq: u64,
        at_ms: u64,
        changes: Vec<Change>,
    },
    /// A rewind to just before user message `to`.
    Rewind {
        seq: u64,
        at_ms: u64,
        to: u32,
        /// Whether files were rewound (false: the conversation only).
        files: bool,
        /// Whether the conversation was rewound too.
        #[serde(default)]
        conversation: bool,
        /// The calls it took back.
        #[serde(default)]
        withdrawn: Vec<u64>,
        /// What it wrote: `before` is the file as it found it.
        #[serde(default)]
        changes: Vec<Change>,
        /// Files changed by the person since the agent: left as they are.
        #[serde(default)]
        conflicts: Vec<String>,
    },
    /// The rewind `of` was undone.
    Undo {
        seq: u64,
        at_ms: u64,
        of: u64,
        #[serde(default)]
        changes: Vec<Change>,
        #[serde(default)]
        conflicts: Vec<String>,
    },
}

impl Entry {
    pub(crate) fn seq(&self) -> u64 {
        match self {
            Entry::Begin { seq, .. }
            | Entry::End { seq, .. }
            | Entry::Rewind { seq, .. }
            | Entry::Undo { seq, .. } => *seq,
        }
    }

    pub(crate) fn at_ms(&self) -> u64 {
        match self {
            Entry::Begin { at_ms, .. }
            | Entry::End { at_ms, .. }
            | Entry::Rewind { at_ms, .. }
            | Entry::Undo { at_ms, .. } => *at_ms,
        }
    }
}

/// Reads a log; a torn last line (a process killed mid-write) is ignored.
pub(crate) fn read(path: &Path) -> io::Result<Vec<Entry>> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in io::BufReader::new(file).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(&line) {
            Ok(entry) => out.push(entry),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "skipped a checkpoint log line")
            }
        }
    }
    Ok(out)
}

/// Appends `entry` as one line and syncs it to the disk.
pub(crate) fn append(path: &Path, entry: &Entry) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut line = serde_json::to_vec(entry).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // A torn line from a killed process would glue onto this one: start
    // on a fresh line.
    let len = file.metadata()?.len();
    if len > 0 && !ends_with_newline(path, len)? {
        file.write_all(b"\n")?;
    }
    file.write_all(&line)?;
    file.sync_data()
}

fn ends_with_newline(path: &Path, len: u64) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = fs::File::open(path)?;
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}
