//! What a session has read, for read-before-write (docs/design.md §6.4).
//!
//! Edit and Write consult this store in `validate_input` and again, by
//! content, inside `call`: the permission prompt may have waited minutes and
//! mtime granularity can hide a same-second save.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// What was known about a file when the session last read or wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// [`content_hash`] of the bytes seen.
    pub content_hash: u64,
    pub mtime_ms: Option<u64>,
    pub view: FileView,
}

/// How much of the file the model has seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileView {
    Full,
    /// Union of viewed 1-based inclusive line ranges, sorted and merged.
    Partial {
        ranges: Vec<(u64, u64)>,
    },
}

impl FileView {
    /// Whether lines `start..=end` were all shown.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        match self {
            FileView::Full => true,
            FileView::Partial { ranges } => ranges.iter().any(|&(a, b)| a <= start && end <= b),
        }
    }

    /// Adds a viewed range, merging overlapping and adjacent ranges.
    pub fn add_range(&mut self, start: u64, end: u64) {
        let FileView::Partial { ranges } = self else {
            return;
        };
        ranges.push((start, end));
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *ranges = merged;
    }
}

/// 64-bit FNV-1a of a file's bytes: stable across processes and versions,
/// so file state survives `riot tools call --session`.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut hash = ContentHasher::new();
    hash.update(bytes);
    hash.finish()
}

/// [`content_hash`] fed a chunk at a time (a file read in pieces): the
/// same value as the hash of all the chunks together.
#[derive(Debug, Clone, Copy)]
pub struct ContentHasher(u64);

impl ContentHasher {
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    pub fn update(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
    }

    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for ContentHasher {
    fn default() -> Self {
        Self::new()
    }
}

/// The session's file states, keyed by absolute path.
#[derive(Debug, Default)]
pub struct FileStateStore {
    files: Mutex<BTreeMap<PathBuf, FileState>>,
}

impl FileStateStore {
    /// The state of a path, if it was read or written.
    pub fn get(&self, path: &Path) -> Option<FileState> {
        self.lock().get(path).cloned()
    }

    /// Records a state, replacing any earlier one.
    pub fn set(&self, path: PathBuf, state: FileState) {
        self.lock().insert(path, state);
    }

    /// Forgets a path.
    pub fn remove(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// Every recorded state, sorted by path (for persisting).
    pub fn snapshot(&self) -> Vec<(PathBuf, FileState)> {
        self.lock()
            .iter()
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, FileState>> {
        // A panic while holding the lock leaves a map that is still valid.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunked_hash_is_the_whole_files_hash() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut h = ContentHasher::new();
        for chunk in bytes.chunks(333) {
            h.update(chunk);
        }
        assert_eq!(h.finish(), content_hash(&bytes));
        // The FNV-1a offset basis: the hash of nothing.
        assert_eq!(content_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(content_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn partial_views_merge_adjacent_ranges() {
        let mut view = FileView::Partial { ranges: vec![] };
        view.add_range(10, 20);
        view.add_range(1, 9);
        view.add_range(40, 50);
        assert_eq!(
            view,
            FileView::Partial {
                ranges: vec![(1, 20), (40, 50)]
            }
        );
        assert!(view.covers(5, 20));
        assert!(!view.covers(19, 41));
        assert!(FileView::Full.covers(1, u64::MAX));
    }

    #[test]
    fn content_hash_is_fnv1a() {
        assert_eq!(content_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(content_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(content_hash(b"a\r\n"), content_hash(b"a\n"));
    }
}
