//! Rewinding files to just before a user message, and undoing a rewind.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::log::{self, Change, Entry};
use crate::{CheckpointStore, FileState, same};

/// Whether a rewind puts files back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilesRewind {
    /// Files too; `force` also restores files the person changed since
    /// the agent (their version is recorded first).
    Yes { force: bool },
    /// The conversation only: files are left as they are (the rewind is
    /// still recorded, so it can be undone in order).
    No,
}

/// What a rewind (or its undo) did to the files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindReport {
    /// The log entry recording it.
    pub seq: u64,
    /// Files written back to an earlier version.
    pub restored: Vec<String>,
    /// Files the agent had created, removed.
    pub removed: Vec<String>,
    /// Files the person changed after the agent's last write: left as they
    /// are (restored only when forced, and then listed here too).
    pub conflicts: Vec<String>,
    /// With `force`: conflicts that were restored anyway.
    pub forced: Vec<String>,
    /// Things it could not do, one sentence each.
    pub notes: Vec<String>,
}

/// A recorded call, folded from its begin and end lines.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub seq: u64,
    pub message: u32,
    pub at_ms: u64,
    /// The file tools' targets as they were.
    pub files: BTreeMap<String, Option<FileState>>,
    /// A command's tree manifest object.
    pub tree: Option<String>,
    /// `None`: the end was never recorded.
    pub changes: Option<Vec<Change>>,
    /// Not taken back by a rewind.
    pub active: bool,
}

/// The last rewind of a session, when nothing was recorded after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undoable {
    /// The user message it rewound to.
    pub to: u32,
    /// Whether it rewound files.
    pub files: bool,
    /// Whether it rewound the conversation.
    pub conversation: bool,
}

/// The last rewind, if nothing was recorded after it.
#[derive(Debug, Clone)]
pub(crate) struct LastRewind {
    pub seq: u64,
    pub to: u32,
    pub files: bool,
    pub conversation: bool,
    pub withdrawn: Vec<u64>,
    pub changes: Vec<Change>,
}

/// A log, folded.
#[derive(Debug, Default)]
pub(crate) struct Folded {
    pub calls: Vec<Call>,
    pub last_rewind: Option<LastRewind>,
}

impl Folded {
    pub(crate) fn of(entries: &[Entry]) -> Self {
        let mut out = Folded::default();
        for entry in entries {
            match entry {
                Entry::Begin {
                    seq,
                    at_ms,
                    message,
                    files,
                    tree,
                    ..
                } => {
                    out.last_rewind = None;
                    out.calls.push(Call {
                        seq: *seq,
                        message: *message,
                        at_ms: *at_ms,
                        files: files.clone(),
                        tree: tree.clone(),
                        changes: None,
                        active: true,
                    });
                }
                Entry::End { seq, changes, .. } => {
                    if let Some(call) = out.calls.iter_mut().find(|c| c.seq == *seq) {
                        call.changes = Some(changes.clone());
                    }
                }
                Entry::Rewind {
                    seq,
                    to,
                    files,
                    conversation,
                    withdrawn,
                    changes,
                    ..
                } => {
                    for call in &mut out.calls {
                        if withdrawn.contains(&call.seq) {
                            call.active = false;
                        }
                    }
                    out.last_rewind = Some(LastRewind {
                        seq: *seq,
                        to: *to,
                        files: *files,
                        conversation: *conversation,
                        withdrawn: withdrawn.clone(),
                        changes: changes.clone(),
                    });
                }
                Entry::Undo { of, .. } => {
                    if let Some(last) = out.last_rewind.take()
                        && last.seq == *of
                    {
                        for call in &mut out.calls {
                            if last.withdrawn.contains(&call.seq) {
                                call.active = true;
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// One path's plan: the state to put back and the agent's last version
/// (`None` outside: unknown — the call's end was never recorded).
struct Plan {
    target: Option<FileState>,
    agent_last: Option<Option<FileState>>,
}

impl CheckpointStore {
    /// Rewinds `session`'s files to just before user message `to`: every
    /// file changed by calls of turns `to` and later goes back to its
    /// state before the first of them. `conversation` records whether the
    /// conversation was rewound too (for [`CheckpointStore::undoable`]).
    pub fn rewind(
        &self,
        session: &str,
        to: u32,
        files: FilesRewind,
        conversation: bool,
        at_ms: u64,
    ) -> io::Result<RewindReport> {
        let log_path = self.log_path(session);
        let folded = Folded::of(&log::read(&log_path)?);
        let taken: Vec<&crate::rewind::Call> = folded
            .calls
            .iter()
            .filter(|c| c.active && c.message >= to)
            .collect();
        let seq = self.next_seq(session)?;
        let mut report = RewindReport {
            seq,
            ..RewindReport::default()
        };
        let FilesRewind::Yes { force } = files else {
            log::append(
                &log_path,
                &Entry::Rewind {
                    seq,
                    at_ms,
                    to,
                    files: false,
                    conversation,
                    withdrawn: Vec::new(),
                    changes: Vec::new(),
                    conflicts: Vec::new(),
                },
            )?;
            return Ok(report);
        };
        let mut plans: BTreeMap<String, Plan> = BTreeMap::new();
        for call in &taken {
            match &call.changes {
                Some(changes) => {
                    for change in changes {
                        let plan = plans.entry(change.path.clone()).or_insert(Plan {
                            target: change.before.clone(),
                            agent_last: None,
                        });
                        plan.agent_last = Some(change.after.clone());
                    }
                }
                None => self.plan_unfinished(call, &mut plans, &mut report)?,
            }
        }
        let mut changes = Vec::new();
        let mut conflicts = Vec::new();
        for (key, plan) in &plans {
            let path = self.path_of(key);
            let current =
                match crate::walk::read_one(&self.objects, &path, self.settings.max_file_bytes) {
                    Ok(current) => current,
                    Err(e) => {
                        report.conflicts.push(key.clone());
                        conflicts.push(key.clone());
                        report.notes.push(format!(
                            "{key} was left as it is: it could not be read ({e})."
                        ));
                        continue;
                    }
                };
            if same(current.as_ref(), plan.target.as_ref()) {
                continue;
            }
            let person_changed = match &plan.agent_last {
                Some(last) => !same(current.as_ref(), last.as_ref()),
                None => false,
            };
            if person_changed {
                report.conflicts.push(key.clone());
                conflicts.push(key.clone());
                if !force {
                    continue;
                }
                report.forced.push(key.clone());
            }
            changes.push(Change {
                path: key.clone(),
                before: current,
                after: plan.target.clone(),
            });
        }
        // Recorded (the person's versions included) before anything is
        // written, so an interrupted rewind can still be undone.
        log::append(
            &log_path,
            &Entry::Rewind {
                seq,
                at_ms,
                to,
                files: true,
                conversation,
                withdrawn: taken.iter().map(|c| c.seq).collect(),
                changes: changes.clone(),
                conflicts,
            },
        )?;
        self.apply(&changes, &mut report)?;
        Ok(report)
    }

    /// A call whose end was never recorded: its file targets count as the
    /// agent's whatever they hold; for a command, files of the tree that
    /// differ now are put back, but files that appeared are left (nothing
    /// says the command made them).
    fn plan_unfinished(
        &self,
        call: &Call,
        plans: &mut BTreeMap<String, Plan>,
        report: &mut RewindReport,
    ) -> io::Result<()> {
        for (key, before) in &call.files {
            plans.entry(key.clone()).or_insert(Plan {
                target: before.clone(),
                agent_last: None,
            });
        }
        let Some(tree) = &call.tree else {
            return Ok(());
        };
        let manifest: BTreeMap<String, FileState> = match self.objects.get(tree) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(io::Error::other)?,
            Err(e) => {
                report.notes.push(format!(
                    "A command's checkpoint could not be read ({e}); the files it changed were left as they are."
                ));
                return Ok(());
            }
        };
        for (key, before) in manifest {
            let path = self.path_of(&key);
            let now = crate::walk::read_one(&self.objects, &path, self.settings.max_file_bytes)
                .ok()
                .flatten();
            if !same(now.as_ref(), Some(&before)) {
                plans.entry(key).or_insert(Plan {
                    target: Some(before),
                    agent_last: None,
                });
            }
        }
        report.notes.push(
            "A command was interrupted before its end was recorded: files it changed are put back, files it may have created are left.".to_owned(),
        );
        Ok(())
    }

    /// Writes each change's `after` state.
    fn apply(&self, changes: &[Change], report: &mut RewindReport) -> io::Result<()> {
        for change in changes {
            let path = self.path_of(&change.path);
            match &change.after {
                None => {
                    match fs::remove_file(&path) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound => {
                            report
                                .notes
                                .push(format!("{} could not be removed ({e}).", change.path));
                            continue;
                        }
                        _ => {}
                    }
                    report.removed.push(change.path.clone());
                }
                Some(state) => match self.write_state(&path, state) {
                    Ok(()) => report.restored.push(change.path.clone()),
                    Err(e) => report
                        .notes
                        .push(format!("{} could not be restored ({e}).", change.path)),
                },
            }
        }
        Ok(())
    }

    fn write_state(&self, path: &Path, state: &FileState) -> io::Result<()> {
        let bytes = self.objects.get(&state.id)?;
        let parent = path.parent().unwrap_or(Path::new("/"));
        fs::create_dir_all(parent)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = parent.join(format!(".{name}.riot-rewind-{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        if state.link {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&bytes), &tmp)?;
        } else {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(&bytes)?;
            file.set_permissions(fs::Permissions::from_mode(if state.mode == 0 {
                0o644
            } else {
                state.mode
            }))?;
        }
        match fs::rename(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// The last rewind of `session` when nothing was recorded after it.
    pub fn undoable(&self, session: &str) -> io::Result<Option<Undoable>> {
        let folded = Folded::of(&log::read(&self.log_path(session))?);
        Ok(folded.last_rewind.map(|r| Undoable {
            to: r.to,
            files: r.files,
            conversation: r.conversation,
        }))
    }

    /// Undoes the last rewind of `session`: the files it wrote get back
    /// what it found, unless the person changed them since (a conflict,
    /// unless `force`). Fails when no rewind is the last thing recorded.
    pub fn undo(&self, session: &str, force: bool, at_ms: u64) -> io::Result<RewindReport> {
        let log_path = self.log_path(session);
        let folded = Folded::of(&log::read(&log_path)?);
        let Some(last) = folded.last_rewind else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "there is no rewind to undo: nothing was rewound, or the session went on after it",
            ));
        };
        let seq = self.next_seq(session)?;
        let mut report = RewindReport {
            seq,
            ..RewindReport::default()
        };
        let mut changes = Vec::new();
        let mut conflicts = Vec::new();
        for change in &last.changes {
            let path = self.path_of(&change.path);
            let current =
                crate::walk::read_one(&self.objects, &path, self.settings.max_file_bytes).ok();
            let Some(current) = current else {
                report.conflicts.push(change.path.clone());
                conflicts.push(change.path.clone());
                continue;
            };
            if same(current.as_ref(), change.before.as_ref()) {
                continue;
            }
            if !same(current.as_ref(), change.after.as_ref()) {
                report.conflicts.push(change.path.clone());
                conflicts.push(change.path.clone());
                if !force {
                    continue;
                }
                report.forced.push(change.path.clone());
            }
            changes.push(Change {
                path: change.path.clone(),
                before: current,
                after: change.before.clone(),
            });
        }
        log::append(
            &log_path,
            &Entry::Undo {
                seq,
                at_ms,
                of: last.seq,
                changes: changes.clone(),
                conflicts,
            },
        )?;
        self.apply(&changes, &mut report)?;
        Ok(report)
    }
}
