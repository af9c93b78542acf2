//! Reading the state of files: one file (the file tools' targets) or the
//! whole project tree (before a command), the tree walked with the
//! `ignore` crate, ignored files included but for the directories a build
//! makes again. A file whose size,
//! modification and change times and inode match the previous walk is
//! not read again: its recorded version is reused.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::FileState;
use crate::objects::Objects;

/// What identifies a file's version without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stat {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
    mode: u32,
}

impl Stat {
    fn of(meta: &fs::Metadata) -> Self {
        Self {
            len: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            ino: meta.ino(),
            mode: meta.permissions().mode() & 0o7777,
        }
    }
}

/// The last walk of a project: each file's stat and recorded version.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TreeCache {
    /// When that walk started (nanoseconds since the epoch): a file
    /// modified less than [`RACY_NS`] before it is read again next time,
    /// as a change within the file system's timestamp resolution would not
    /// show in its stat.
    taken_ns: i128,
    entries: HashMap<String, (Stat, FileState)>,
}

/// Two seconds: more than any file system's timestamp resolution Riot runs on.
const RACY_NS: i128 = 2_000_000_000;

/// A walk's result.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Every file recorded, by key.
    pub manifest: BTreeMap<String, FileState>,
    /// Files over the size limit, not recorded.
    pub skipped: Vec<String>,
    /// The walk stopped at the file limit.
    pub truncated: bool,
    /// Files read (the others reused from the cache).
    pub read: usize,
    pub cache: TreeCache,
}

/// How big a file may be and how many a walk takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_file_bytes: u64,
    pub max_files: usize,
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The state of one path now: `Ok(None)` when nothing is there (or a
/// directory), `Err` for a file over `max_file_bytes` or unreadable.
pub(crate) fn read_one(
    objects: &Objects,
    path: &Path,
    max_file_bytes: u64,
) -> io::Result<Option<FileState>> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    record(objects, path, &meta, max_file_bytes)
}

fn record(
    objects: &Objects,
    path: &Path,
    meta: &fs::Metadata,
    max_file_bytes: u64,
) -> io::Result<Option<FileState>> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = fs::read_link(path)?;
        let bytes = target.as_os_str().as_encoded_bytes().to_vec();
        let id = objects.put(&bytes)?;
        return Ok(Some(FileState {
            id,
            len: bytes.len() as u64,
            mode: 0,
            link: true,
        }));
    }
    if !kind.is_file() {
        return Ok(None);
    }
    if meta.len() > max_file_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("{} is over the checkpoint size limit", path.display()),
        ));
    }
    let bytes = fs::read(path)?;
    let id = objects.put(&bytes)?;
    Ok(Some(FileState {
        id,
        len: bytes.len() as u64,
        mode: meta.permissions().mode() & 0o7777,
        link: false,
    }))
}

/// Directories a build or a package manager makes again from the project
/// (`cargo build`, `npm install`, a virtual environment, caches): a
/// command's checkpoint leaves them out, tracked or not, so the first
/// checkpoint of a project costs its own files rather than its build.
pub const REGENERABLE_DIRS: [&str; 17] = [
    "target",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".svelte-kit",
    ".dart_tool",
];

/// Walks `root`, recording every file — ignored ones too, since a command
/// Riot allowed unasked may delete them (`rm local.db`, `git clean -x`) —
/// but never entering `.git`, the [`REGENERABLE_DIRS`] or the `exclude`
/// directories, and reusing `previous` where a file's stat is unchanged.
pub(crate) fn walk_tree(
    objects: &Objects,
    root: &Path,
    exclude: &[PathBuf],
    previous: Option<&TreeCache>,
    limits: Limits,
    key_of: impl Fn(&Path) -> Option<String>,
) -> io::Result<Walked> {
    let taken_ns = now_ns();
    let mut out = Walked::default();
    let exclude: Vec<PathBuf> = exclude.to_vec();
    let walker = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = entry.file_name();
            !(is_dir
                && (name == ".git"
                    || REGENERABLE_DIRS.iter().any(|d| name == *d)
                    || exclude.iter().any(|x| x == entry.path())))
        })
        .build();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let path = entry.path();
        let Some(key) = key_of(path) else { continue };
        if out.manifest.len() >= limits.max_files {
            out.truncated = true;
            break;
        }
        let Ok(meta) = fs::symlink_metadata(path) else {
            continue;
        };
        let stat = Stat::of(&meta);
        if let Some(prev) = previous
            && let Some((was, state)) = prev.entries.get(&key)
            && *was == stat
            && stat.mtime_ns < prev.taken_ns - RACY_NS
        {
            out.manifest.insert(key.clone(), state.clone());
            out.cache.entries.insert(key, (stat, state.clone()));
            continue;
        }
        if kind.is_file() && meta.len() > limits.max_file_bytes {
            out.skipped.push(key);
            continue;
        }
        match record(objects, path, &meta, limits.max_file_bytes) {
            Ok(Some(state)) => {
                out.read += 1;
                out.manifest.insert(key.clone(), state.clone());
                out.cache.entries.insert(key, (stat, state));
            }
            Ok(None) => {}
            // Gone or unreadable between listing and reading: not recorded.
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "checkpoint skipped a file")
            }
        }
    }
    out.cache.taken_ns = taken_ns;
    Ok(out)
}

impl TreeCache {
    /// The objects the cache refers to (retention keeps them).
    pub(crate) fn ids(&self) -> impl Iterator<Item = String> + '_ {
        self.entries.values().map(|(_, state)| state.id.clone())
    }
}
