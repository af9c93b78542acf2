//! The session list's index: a cache of each transcript's [`Digest`].
//!
//! Beside the transcripts' directory (`sessions/`) lies `sessions-index/`
//! with one small file per transcript: `<id>.json`, the digest of the
//! transcript's first `covered` bytes (always whole lines), with the
//! transcript's size and modification time when the digest was taken and
//! a fingerprint of its metadata line. The transcripts stay the source of
//! truth; an entry is only believed after it is checked against its
//! transcript:
//!
//! - the transcript is exactly `covered` bytes long and has the recorded
//!   modification time: the digest is current, and the transcript is not
//!   opened at all;
//! - it is longer, still starts with the same metadata line and has a line
//!   break at `covered`: records were appended (transcripts are append-only),
//!   and only those are read and folded in;
//! - anything else (no entry, an unreadable or older entry, a shorter or
//!   rewritten transcript): the whole transcript is read again and the
//!   entry rewritten.
//!
//! A [`crate::TranscriptWriter`] updates its transcript's entry after each
//! record, so a listing normally reads no transcript at all. Entries are
//! replaced by renaming a complete file into place, and any failure to
//! read or write one only costs a rescan: a damaged, stale or missing index
//! never hides a session.

use std::fs::{File, Metadata};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use riot_protocol::file_state::ContentHasher;
use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::record::Record;
use crate::{StoreError, io_err};

/// The entry format; bump it when [`Digest`] changes, so entries written
/// before are rebuilt from their transcripts.
const VERSION: u32 = 3;

/// How much of the metadata line the fingerprint covers.
const HEAD_BYTES: usize = 4096;

/// The index directory of the transcripts in `sessions`: its sibling
/// `<name>-index`, so the transcripts' directory holds only transcripts.
pub(crate) fn dir_for(sessions: &Path) -> PathBuf {
    let name = sessions
        .file_name()
        .map_or_else(|| "sessions".into(), |n| n.to_string_lossy().into_owned());
    sessions.with_file_name(format!("{name}-index"))
}

/// The fingerprint of a transcript from its first line (the metadata,
/// written once and never changed).
pub(crate) fn head_of(first_line: &[u8]) -> u64 {
    let end = first_line
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(first_line.len())
        .min(HEAD_BYTES);
    let mut hasher = ContentHasher::new();
    hasher.update(&first_line[..end]);
    hasher.finish()
}

/// A transcript's modification time, in nanoseconds since the epoch.
fn modified_ns(meta: &Metadata) -> Option<u64> {
    let since = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// One index file.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: u32,
    /// The transcript's bytes the digest covers: whole lines.
    covered: u64,
    /// The transcript's modification time when it was `covered` bytes
    /// long; `None` when it was already longer.
    modified_ns: Option<u64>,
    /// [`head_of`] the transcript.
    head: u64,
    digest: Digest,
}

/// Where a transcript's digest stands after reading it (or its entry).
#[derive(Debug, Clone)]
pub(crate) struct Folded {
    /// The digest of the first `covered` bytes.
    pub digest: Digest,
    pub covered: u64,
    pub head: u64,
    /// With a last record not yet ended by a line break (a record being
    /// written, or a file ending without one), which the listing shows but
    /// the index does not keep.
    pub pending: Option<Digest>,
}

impl Folded {
    /// What the list shows.
    pub(crate) fn shown(self) -> Digest {
        self.pending.unwrap_or(self.digest)
    }
}

/// The transcript's digest, from its entry where the entry holds, and
/// the entry brought up to date.
pub(crate) fn refresh(transcript: &Path, entry_path: &Path) -> Result<Folded, StoreError> {
    let mut file = File::open(transcript).map_err(io_err(transcript))?;
    let stat = file.metadata().map_err(io_err(transcript))?;
    let len = stat.len();
    let entry = read_entry(entry_path);
    if let Some(entry) = &entry
        && entry.covered == len
        && entry.modified_ns.is_some()
        && entry.modified_ns == modified_ns(&stat)
    {
        return Ok(Folded {
            digest: entry.digest.clone(),
            covered: entry.covered,
            head: entry.head,
            pending: None,
        });
    }
    let caught_up = match entry {
        Some(entry) if entry.covered < len => catch_up(&mut file, transcript, entry),
        _ => None,
    };
    let folded = match caught_up {
        Some(folded) => folded,
        None => full_scan(&mut file, transcript)?,
    };
    // The stamp after reading: the file may have grown meanwhile.
    let after = file.metadata().ok();
    let modified = after
        .filter(|m| m.len() == folded.covered)
        .and_then(|m| modified_ns(&m));
    save(entry_path, &folded, modified);
    Ok(folded)
}

/// Folds only what was appended after `entry`, if the transcript is still
/// the one the entry was taken from. `None`: read it all instead.
fn catch_up(file: &mut File, path: &Path, entry: Entry) -> Option<Folded> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    file.by_ref()
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .ok()?;
    if head_of(&head) != entry.head || entry.covered == 0 {
        return None;
    }
    file.seek(SeekFrom::Start(entry.covered - 1)).ok()?;
    let mut reader = BufReader::new(file);
    let mut boundary = [0u8; 1];
    reader.read_exact(&mut boundary).ok()?;
    if boundary != [b'\n'] {
        return None;
    }
    let start = Fold {
        state: Some(entry.digest),
        covered: entry.covered,
        head: entry.head,
        line: 0,
        from_top: false,
    };
    match start.run(&mut reader, path) {
        Ok(folded) => Some(folded),
        Err(e) => {
            // A line that does not parse, or a read that failed: the whole
            // file is read again, which says where.
            tracing::debug!(error = %e, "the appended records did not fold; rereading the transcript");
            None
        }
    }
}

/// Folds the whole transcript.
fn full_scan(file: &mut File, path: &Path) -> Result<Folded, StoreError> {
    file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
    let start = Fold {
        state: None,
        covered: 0,
        head: 0,
        line: 0,
        from_top: true,
    };
    start.run(&mut BufReader::new(file), path)
}

/// A fold in progress over a transcript's lines.
struct Fold {
    /// `None` until the metadata line.
    state: Option<Digest>,
    covered: u64,
    head: u64,
    /// Lines read so far.
    line: usize,
    /// Whether the fold started at the top, so `line` is a line number.
    from_top: bool,
}

impl Fold {
    /// Reads lines to the end: every whole line that parses is folded in.
    /// A line that does not parse is ignored when nothing follows it (a
    /// write cut short), and is damage otherwise — as when loading.
    fn run(mut self, reader: &mut impl BufRead, path: &Path) -> Result<Folded, StoreError> {
        let mut buf = Vec::new();
        let mut pending: Option<Digest> = None;
        let mut bad: Option<(usize, String)> = None;
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io_err(path))?;
            if n == 0 {
                break;
            }
            self.line += 1;
            let whole = buf.last() == Some(&b'\n');
            let text = if whole { &buf[..n - 1] } else { &buf[..] };
            if self.state.is_none() && self.line == 1 {
                self.head = head_of(text);
            }
            if text.is_empty() {
                if whole && bad.is_none() {
                    self.covered += n as u64;
                }
                continue;
            }
            if let Some((line, reason)) = bad.take() {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    line,
                    reason,
                });
            }
            match serde_json::from_slice::<Record>(text) {
                Ok(record) if whole => {
                    take(&mut self.state, &record, path)?;
                    self.covered += n as u64;
                }
                Ok(record) => {
                    let mut ahead = self.state.clone();
                    take(&mut ahead, &record, path)?;
                    pending = ahead;
                }
                Err(e) => bad = Some((self.line, e.to_string())),
            }
        }
        if let Some((line, _)) = bad {
            // Line numbers count from the top only in a full scan.
            let line = self.from_top.then_some(line);
            tracing::warn!(path = %path.display(), ?line, "ignoring a torn last line");
        }
        match self.state {
            Some(digest) => Ok(Folded {
                digest,
                covered: self.covered,
                head: self.head,
                pending,
            }),
            None => match pending {
                // Only a metadata line, not yet ended by a line break.
                Some(digest) => Ok(Folded {
                    digest: digest.clone(),
                    covered: 0,
                    head: self.head,
                    pending: Some(digest),
                }),
                None => Err(StoreError::NoMeta(path.to_path_buf())),
            },
        }
    }
}

/// Folds one record in; the first must be the metadata.
fn take(state: &mut Option<Digest>, record: &Record, path: &Path) -> Result<(), StoreError> {
    match (state.as_mut(), record) {
        (Some(digest), record) => digest.apply(record),
        (None, Record::Meta(meta)) => *state = Some(Digest::new(meta)),
        (None, _) => return Err(StoreError::NoMeta(path.to_path_buf())),
    }
    Ok(())
}

fn read_entry(path: &Path) -> Option<Entry> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "unreadable index entry");
            return None;
        }
    };
    match serde_json::from_slice::<Entry>(&bytes) {
        Ok(entry) if entry.version == VERSION => Some(entry),
        Ok(_) => None,
        Err(e) => {
            tracing::debug!(path = %path.display(), error = %e, "damaged index entry");
            None
        }
    }
}

/// Writes a transcript's entry: a complete file renamed into place, so a
/// reader sees the old entry or the new one. A failure is only logged.
pub(crate) fn save(entry_path: &Path, folded: &Folded, modified_ns: Option<u64>) {
    if folded.covered == 0 {
        return;
    }
    let entry = Entry {
        version: VERSION,
        covered: folded.covered,
        modified_ns,
        head: folded.head,
        digest: folded.digest.clone(),
    };
    if let Err(e) = write_entry(entry_path, &entry) {
        tracing::debug!(path = %entry_path.display(), error = %e, "could not write an index entry");
    }
}

/// Writes the entry of a transcript its writer has just appended to, if
/// `stat` shows that the writer's count is the file's size (nobody else
/// appended). `false`: the writer must take the index's word instead.
pub(crate) fn save_if_alone(entry_path: &Path, folded: &Folded, stat: &Metadata) -> bool {
    if stat.len() != folded.covered {
        return false;
    }
    save(entry_path, folded, modified_ns(stat));
    true
}

fn write_entry(path: &Path, entry: &Entry) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let bytes = serde_json::to_vec(entry).map_err(io::Error::other)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(
        "{}.{}-{}.tmp",
        name.unwrap_or_default(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = match std::fs::write(&temp, &bytes) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&temp, &bytes)
        }
        other => other,
    };
    let renamed = written.and_then(|()| std::fs::rename(&temp, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    renamed
}

/// Removes a transcript's entry (the transcript was deleted).
pub(crate) fn remove(entry_path: &Path) {
    match std::fs::remove_file(entry_path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::debug!(path = %entry_path.display(), error = %e, "could not remove an index entry");
        }
    }
}
