//! Retention: session logs older than `max_age_days` go, then the oldest
//! logs until what the rest refer to fits `max_bytes`; objects nothing
//! refers to any more are removed (unless written in the last hour — a
//! session of another process may be about to refer to them).

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::log::{self, Entry};
use crate::{CheckpointStore, FileState};

/// What a prune removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    /// Session logs removed (their ids).
    pub sessions: Vec<String>,
    pub objects: usize,
    pub bytes: u64,
}

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// Objects younger than this are never removed (seconds).
const GRACE_S: u64 = 60 * 60;

struct SessionLog {
    id: String,
    path: PathBuf,
    last_ms: u64,
    refs: HashSet<String>,
}

fn add(refs: &mut HashSet<String>, state: Option<&FileState>) {
    if let Some(state) = state {
        refs.insert(state.id.clone());
    }
}

impl CheckpointStore {
    fn refs_of(&self, entries: &[Entry]) -> HashSet<String> {
        let mut refs = HashSet::new();
        for entry in entries {
            match entry {
                Entry::Begin { files, tree, .. } => {
                    for state in files.values() {
                        add(&mut refs, state.as_ref());
                    }
                    if let Some(tree) = tree {
                        refs.insert(tree.clone());
                        if let Ok(bytes) = self.objects.get(tree)
                            && let Ok(manifest) =
                                serde_json::from_slice::<BTreeMap<String, FileState>>(&bytes)
                        {
                            refs.extend(manifest.into_values().map(|s| s.id));
                        }
                    }
                }
                Entry::End { changes, .. }
                | Entry::Rewind { changes, .. }
                | Entry::Undo { changes, .. } => {
                    for change in changes {
                        add(&mut refs, change.before.as_ref());
                        add(&mut refs, change.after.as_ref());
                    }
                }
            }
        }
        refs
    }

    /// Applies the retention settings at `now_ms`.
    pub fn prune(&self, now_ms: u64) -> io::Result<PruneReport> {
        let mut report = PruneReport::default();
        let mut logs: Vec<SessionLog> = Vec::new();
        let sessions = self.dir.join("sessions");
        match fs::read_dir(&sessions) {
            Ok(dir) => {
                for item in dir {
                    let path = item?.path();
                    let Some(id) = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_suffix(".jsonl"))
                        .map(str::to_owned)
                    else {
                        continue;
                    };
                    let entries = log::read(&path)?;
                    let last_ms = entries.iter().map(Entry::at_ms).max().unwrap_or(0);
                    logs.push(SessionLog {
                        refs: self.refs_of(&entries),
                        id,
                        path,
                        last_ms,
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        // Newest first; the newest log is always kept.
        logs.sort_by_key(|log| std::cmp::Reverse(log.last_ms));
        let max_age_ms = self.settings.max_age_days.saturating_mul(DAY_MS);
        let objects = self.objects.all()?;
        let sizes: HashMap<&str, u64> = objects
            .iter()
            .map(|(id, len, _)| (id.as_str(), *len))
            .collect();
        let mut kept: Vec<SessionLog> = Vec::new();
        let mut kept_refs: HashSet<String> = HashSet::new();
        let mut kept_bytes = 0u64;
        for (index, log) in logs.into_iter().enumerate() {
            let too_old = now_ms.saturating_sub(log.last_ms) > max_age_ms;
            let extra: u64 = log
                .refs
                .iter()
                .filter(|id| !kept_refs.contains(*id))
                .filter_map(|id| sizes.get(id.as_str()))
                .sum();
            let too_big = kept_bytes.saturating_add(extra) > self.settings.max_bytes;
            if index > 0 && (too_old || too_big) {
                fs::remove_file(&log.path)?;
                report.sessions.push(log.id);
                continue;
            }
            kept_bytes += extra;
            kept_refs.extend(log.refs.iter().cloned());
            kept.push(log);
        }
        // The walk cache refers to objects too.
        if let Ok(bytes) = fs::read(self.cache_path())
            && let Ok(cache) = serde_json::from_slice::<crate::walk::TreeCache>(&bytes)
        {
            kept_refs.extend(cache.ids());
        }
        let now_s = now_ms / 1000;
        for (id, len, mtime) in &objects {
            if kept_refs.contains(id) || now_s.saturating_sub(*mtime) < GRACE_S {
                continue;
            }
            self.objects.remove(id)?;
            report.objects += 1;
            report.bytes += len;
        }
        Ok(report)
    }
}
