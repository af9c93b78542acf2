//! # riot-checkpoint — what rewind restores
//!
//! Before a tool call that can change files runs, the kernel records here
//! the state of what it may change: the exact target files of Write, Edit
//! and NotebookEdit; the project tree (ignored files included, but not
//! `.git`, the build folders in [`REGENERABLE_DIRS`] or files over a size
//! limit) before Bash and MCP tools not judged
//! read-only. After the call, the same paths are read again and the
//! differences are the call's changes. A rewind to just before user
//! message N puts back every file the agent changed in the turns from N
//! on — a file it created is removed, a file it changed gets its earlier
//! bytes — and touches nothing else. A file the person changed after the
//! agent's last write is a conflict: left as it is unless forced, and then
//! the person's version is recorded first.
//!
//! Storage is `<riot home>/checkpoints/<project key>/`, never the
//! project's `.git`: `objects/` holds every recorded file version once,
//! named by the SHA-256 of its bytes (deduplicated across calls and
//! sessions of the project); `sessions/<id>.jsonl` is each session's log,
//! each line synced before the call it guards runs, so a checkpoint
//! survives the process being killed; `tree-cache.json` keeps the last
//! walk's stats, so a file whose size, times and inode are unchanged is
//! not read again — the second checkpoint of a large tree costs a walk.
//!
//! Why not gitoxide: `gix-odb` with its object and hash crates, the
//! least that gives a loose object store, adds about two minutes to a
//! clean build on a two-core machine (86 s of CPU at the workspace's
//! `opt-level = 2`), where this store needs 200 lines over the `sha2` the
//! workspace already builds. Objects are stored uncompressed.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! # let home = dir.path().join("home");
//! # let project = dir.path().join("project");
//! # std::fs::create_dir_all(&project).unwrap();
//! use riot_checkpoint::{CheckpointStore, FilesRewind, Scope, Settings};
//!
//! let store = CheckpointStore::open(&home, &project, Settings::default());
//! let target = project.join("new.txt");
//! let begun = store.begin("s1", 1, "Write", Scope::Files(vec![target.clone()]), 10).unwrap();
//! std::fs::write(&target, "made by the agent").unwrap();
//! store.finish(begun, 11).unwrap();
//!
//! let report = store.rewind("s1", 1, FilesRewind::Yes { force: false }, true, 12).unwrap();
//! assert_eq!(report.removed, vec!["new.txt".to_owned()]);
//! assert!(!target.exists());
//! ```

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

mod log;
mod objects;
mod prune;
mod rewind;
mod walk;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

pub use log::Change;
pub use prune::PruneReport;
pub use rewind::{FilesRewind, RewindReport, Undoable};

use log::Entry;
use objects::Objects;
pub use walk::REGENERABLE_DIRS;
use walk::{Limits, TreeCache};

/// One recorded version of a file: the object holding its bytes (a
/// symbolic link's target for a link), its length and permission bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub id: String,
    pub len: u64,
    #[serde(default)]
    pub mode: u32,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub link: bool,
}

impl FileState {
    /// The same bytes (and kind): what conflict detection compares.
    pub fn same_content(&self, other: &FileState) -> bool {
        self.id == other.id && self.link == other.link
    }
}

/// Whether two optional states hold the same content.
pub(crate) fn same(a: Option<&FileState>, b: Option<&FileState>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_content(b),
        _ => false,
    }
}

/// The `checkpoints` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Files larger than this are not recorded (and not restored).
    pub max_file_bytes: u64,
    /// A tree walk records at most this many files.
    pub max_files: usize,
    /// Session logs untouched for longer are pruned.
    pub max_age_days: u64,
    /// The project's store is pruned, oldest session first, to this size.
    pub max_bytes: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_file_bytes: 10 * 1024 * 1024,
            max_files: 100_000,
            max_age_days: 30,
            max_bytes: 2 * 1024 * 1024 * 1024,
        }
    }
}

/// What a call may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// These files (absolute paths).
    Files(Vec<PathBuf>),
    /// The project tree.
    Tree,
}

/// A checkpoint recorded before a call; hand it to
/// [`CheckpointStore::finish`] when the call has ended.
#[derive(Debug)]
pub struct Begun {
    session: String,
    seq: u64,
    before: Before,
    skipped: usize,
}

#[derive(Debug)]
enum Before {
    Files(BTreeMap<String, Option<FileState>>),
    Tree(BTreeMap<String, FileState>),
}

impl Begun {
    /// Files the walk left out for their size (tree checkpoints).
    pub fn skipped(&self) -> usize {
        self.skipped
    }
}

/// What one turn changed, for a rewind picker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnChanges {
    /// The 1-based user message the turn answered.
    pub message: u32,
    /// Calls that recorded a checkpoint.
    pub calls: usize,
    /// Calls whose end was never recorded (the process was killed).
    pub unfinished: usize,
    /// The paths they changed (project-relative, or absolute outside it).
    pub files: Vec<String>,
    pub first_at_ms: u64,
}

/// A project's checkpoint store.
#[derive(Debug)]
pub struct CheckpointStore {
    dir: PathBuf,
    project: PathBuf,
    exclude: Vec<PathBuf>,
    settings: Settings,
    objects: Objects,
    /// The last tree walk, loaded from `tree-cache.json` on first use.
    cache: Mutex<Option<TreeCache>>,
    /// Next sequence number per session log.
    seqs: Mutex<HashMap<String, u64>>,
}

/// `<riot home>/checkpoints/<project key>`: the project directory's last
/// name and a hash of its whole path.
pub fn project_dir(riot_home: &Path, project: &Path) -> PathBuf {
    let name: String = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let hash = objects::id_of(project.as_os_str().as_encoded_bytes());
    riot_home
        .join("checkpoints")
        .join(format!("{name}-{}", &hash[..16]))
}

impl CheckpointStore {
    /// The store of `project` under `riot_home` (created on first write).
    /// A tree walk never enters `riot_home` when it lies in the project.
    pub fn open(riot_home: &Path, project: &Path, settings: Settings) -> Self {
        let dir = project_dir(riot_home, project);
        Self {
            objects: Objects::new(dir.join("objects")),
            dir,
            project: project.to_path_buf(),
            exclude: vec![riot_home.to_path_buf()],
            settings,
            cache: Mutex::new(None),
            seqs: Mutex::new(HashMap::new()),
        }
    }

    /// Where this project's checkpoints are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The project root paths are relative to.
    pub fn project(&self) -> &Path {
        &self.project
    }

    fn log_path(&self, session: &str) -> PathBuf {
        let safe: String = session
            .chars()
            .map(|c| if c == '/' || c == '\\' { '_' } else { c })
            .collect();
        self.dir.join("sessions").join(format!("{safe}.jsonl"))
    }

    /// A path's key: relative to the project inside it, else absolute.
    pub(crate) fn key_of(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.project).ok();
        let shown = match rel {
            Some(rel) if rel.as_os_str().is_empty() => return None,
            Some(rel) => rel,
            None => path,
        };
        if shown
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        {
            return None;
        }
        shown.to_str().map(str::to_owned)
    }

    /// The absolute path of a key.
    pub fn path_of(&self, key: &str) -> PathBuf {
        if Path::new(key).is_absolute() {
            PathBuf::from(key)
        } else {
            self.project.join(key)
        }
    }

    fn next_seq(&self, session: &str) -> io::Result<u64> {
        let mut seqs = self.seqs.lock().unwrap_or_else(|e| e.into_inner());
        let next = match seqs.get(session) {
            Some(next) => *next,
            None => log::read(&self.log_path(session))?
                .iter()
                .map(|e| e.seq() + 1)
                .max()
                .unwrap_or(1),
        };
        seqs.insert(session.to_owned(), next + 1);
        Ok(next)
    }

    fn limits(&self) -> Limits {
        Limits {
            max_file_bytes: self.settings.max_file_bytes,
            max_files: self.settings.max_files,
        }
    }

    fn cache_path(&self) -> PathBuf {
        self.dir.join("tree-cache.json")
    }

    /// Walks the project, reusing (and then replacing) the last walk's cache.
    fn walk(&self) -> io::Result<walk::Walked> {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.is_none() {
            *cache = fs::read(self.cache_path())
                .ok()
                .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        }
        let mut walked = walk::walk_tree(
            &self.objects,
            &self.project,
            &self.exclude,
            cache.as_ref(),
            self.limits(),
            |p| self.key_of(p),
        )?;
        let fresh = std::mem::take(&mut walked.cache);
        if walked.read > 0 || cache.is_none() {
            let bytes = serde_json::to_vec(&fresh).map_err(io::Error::other)?;
            let tmp = self.dir.join(format!(".tree-cache-{}", std::process::id()));
            fs::create_dir_all(&self.dir)?;
            fs::write(&tmp, bytes)?;
            fs::rename(&tmp, self.cache_path())?;
        }
        *cache = Some(fresh);
        Ok(walked)
    }

    fn read_files(&self, keys: &[String]) -> io::Result<BTreeMap<String, Option<FileState>>> {
        let mut out = BTreeMap::new();
        for key in keys {
            let state = match walk::read_one(
                &self.objects,
                &self.path_of(key),
                self.settings.max_file_bytes,
            ) {
                Ok(state) => state,
                Err(e) if e.kind() == io::ErrorKind::FileTooLarge => continue,
                Err(e) => return Err(e),
            };
            out.insert(key.clone(), state);
        }
        Ok(out)
    }

    /// Records what `scope` covers before a call of `tool` in the turn of
    /// user message `message` runs; the log line is on the disk when this
    /// returns.
    pub fn begin(
        &self,
        session: &str,
        message: u32,
        tool: &str,
        scope: Scope,
        at_ms: u64,
    ) -> io::Result<Begun> {
        let seq = self.next_seq(session)?;
        let (entry, before, skipped) = match scope {
            Scope::Files(paths) => {
                let keys: Vec<String> = paths.iter().filter_map(|p| self.key_of(p)).collect();
                let files = self.read_files(&keys)?;
                let skipped = keys.len() - files.len();
                (
                    Entry::Begin {
                        seq,
                        at_ms,
                        message,
                        tool: tool.to_owned(),
                        files: files.clone(),
                        tree: None,
                        skipped: keys
                            .into_iter()
                            .filter(|k| !files.contains_key(k))
                            .collect(),
                        truncated: false,
                    },
                    Before::Files(files),
                    skipped,
                )
            }
            Scope::Tree => {
                let walked = self.walk()?;
                let manifest = serde_json::to_vec(&walked.manifest).map_err(io::Error::other)?;
                let tree = self.objects.put(&manifest)?;
                let skipped = walked.skipped.len();
                (
                    Entry::Begin {
                        seq,
                        at_ms,
                        message,
                        tool: tool.to_owned(),
                        files: BTreeMap::new(),
                        tree: Some(tree),
                        skipped: walked.skipped,
                        truncated: walked.truncated,
                    },
                    Before::Tree(walked.manifest),
                    skipped,
                )
            }
        };
        log::append(&self.log_path(session), &entry)?;
        Ok(Begun {
            session: session.to_owned(),
            seq,
            before,
            skipped,
        })
    }

    /// Records what the call of `begun` changed.
    pub fn finish(&self, begun: Begun, at_ms: u64) -> io::Result<Vec<Change>> {
        let changes = match begun.before {
            Before::Files(before) => {
                let keys: Vec<String> = before.keys().cloned().collect();
                let after = self.read_files(&keys)?;
                diff_files(&before, &after)
            }
            Before::Tree(before) => {
                let after = self.walk()?;
                let mut changes = Vec::new();
                for (key, was) in &before {
                    let now = after.manifest.get(key);
                    if !same(Some(was), now) {
                        changes.push(Change {
                            path: key.clone(),
                            before: Some(was.clone()),
                            after: now.cloned(),
                        });
                    }
                }
                for (key, now) in &after.manifest {
                    if !before.contains_key(key) {
                        changes.push(Change {
                            path: key.clone(),
                            before: None,
                            after: Some(now.clone()),
                        });
                    }
                }
                changes.sort_by(|a, b| a.path.cmp(&b.path));
                changes
            }
        };
        log::append(
            &self.log_path(&begun.session),
            &Entry::End {
                seq: begun.seq,
                at_ms,
                changes: changes.clone(),
            },
        )?;
        Ok(changes)
    }

    /// What each turn of `session` changed, by user message, oldest first
    /// (calls a rewind took back are left out).
    pub fn turns(&self, session: &str) -> io::Result<Vec<TurnChanges>> {
        let folded = rewind::Folded::of(&log::read(&self.log_path(session))?);
        let mut by_message: BTreeMap<u32, TurnChanges> = BTreeMap::new();
        for call in folded.calls.iter().filter(|c| c.active) {
            let turn = by_message
                .entry(call.message)
                .or_insert_with(|| TurnChanges {
                    message: call.message,
                    calls: 0,
                    unfinished: 0,
                    files: Vec::new(),
                    first_at_ms: call.at_ms,
                });
            turn.calls += 1;
            match &call.changes {
                Some(changes) => turn.files.extend(changes.iter().map(|c| c.path.clone())),
                None => {
                    turn.unfinished += 1;
                    turn.files.extend(call.files.keys().cloned());
                }
            }
        }
        Ok(by_message
            .into_values()
            .map(|mut t| {
                t.files.sort();
                t.files.dedup();
                t
            })
            .collect())
    }
}

fn diff_files(
    before: &BTreeMap<String, Option<FileState>>,
    after: &BTreeMap<String, Option<FileState>>,
) -> Vec<Change> {
    before
        .iter()
        .filter_map(|(key, was)| {
            let now = after.get(key).cloned().flatten();
            (!same(was.as_ref(), now.as_ref())).then(|| Change {
                path: key.clone(),
                before: was.clone(),
                after: now,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
