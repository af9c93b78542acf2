//! Protected paths kept as they were, under every mechanism and whether
//! they exist or not (docs/sandbox.md). bubblewrap mounts an existing
//! protected path read-only, but cannot mount over one that does not
//! exist without creating it in the person's project, and Landlock cannot
//! make anything below a writable directory read-only. So each sandboxed
//! command's protected paths are recorded before it starts ([`Snapshot`])
//! and put back after it ends, and the command's output says what was put
//! back.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

/// Most bytes of file contents one snapshot keeps; past it a protected
/// tree is recorded only as far as it fits (and said so when restored).
const MAX_BYTES: u64 = 32 * 1024 * 1024;
/// Most entries one snapshot keeps.
const MAX_ENTRIES: usize = 20_000;

/// One path's state.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Missing,
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    Link(PathBuf),
    Dir {
        mode: u32,
        children: Vec<(OsString, Entry)>,
    },
    /// Something Riot does not record (a socket, a device, or past the
    /// snapshot's budget): left alone.
    Unrecorded,
}

/// The protected paths as they were before a command.
#[derive(Debug, Default)]
pub struct Snapshot {
    entries: Vec<(PathBuf, Entry)>,
}

struct Budget {
    bytes: u64,
    entries: usize,
}

impl Snapshot {
    /// Records `paths` as they are now. A path under another one is
    /// recorded once, with its ancestor.
    pub fn take(paths: &[PathBuf]) -> Self {
        let mut budget = Budget {
            bytes: MAX_BYTES,
            entries: MAX_ENTRIES,
        };
        let mut entries = Vec::new();
        for path in paths {
            if paths.iter().any(|p| p != path && path.starts_with(p)) {
                continue;
            }
            entries.push((path.clone(), read(path, &mut budget)));
        }
        Self { entries }
    }

    /// Puts back every path that differs from the snapshot; returns a line
    /// for each one, saying what the command had done to it.
    pub fn restore(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (path, before) in &self.entries {
            let mut budget = Budget {
                bytes: MAX_BYTES,
                entries: MAX_ENTRIES,
            };
            let now = read(path, &mut budget);
            if same(before, &now) {
                continue;
            }
            let what = match (before, &now) {
                (Entry::Missing, _) => "created",
                (_, Entry::Missing) => "removed",
                _ => "changed",
            };
            match put_back(path, before) {
                Ok(()) => said.push(format!("{} ({what} by the command)", path.display())),
                Err(e) => said.push(format!(
                    "{} ({what} by the command) could NOT be put back: {e}",
                    path.display()
                )),
            }
        }
        said
    }
}

/// Equal, but for parts the snapshot did not record.
fn same(before: &Entry, now: &Entry) -> bool {
    match (before, now) {
        (Entry::Unrecorded, _) => true,
        (
            Entry::Dir {
                mode: a,
                children: ca,
            },
            Entry::Dir {
                mode: b,
                children: cb,
            },
        ) => {
            a == b
                && ca.len() == cb.len()
                && ca
                    .iter()
                    .zip(cb)
                    .all(|((na, ea), (nb, eb))| na == nb && same(ea, eb))
        }
        _ => before == now,
    }
}

fn read(path: &Path, budget: &mut Budget) -> Entry {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Entry::Missing,
        Err(_) => return Entry::Unrecorded,
    };
    if budget.entries == 0 {
        return Entry::Unrecorded;
    }
    budget.entries -= 1;
    let mode = meta.permissions().mode() & 0o7777;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return fs::read_link(path).map_or(Entry::Unrecorded, Entry::Link);
    }
    if kind.is_file() {
        if meta.len() > budget.bytes {
            return Entry::Unrecorded;
        }
        return match fs::read(path) {
            Ok(bytes) => {
                budget.bytes = budget.bytes.saturating_sub(bytes.len() as u64);
                Entry::File { bytes, mode }
            }
            Err(_) => Entry::Unrecorded,
        };
    }
    if kind.is_dir() {
        let Ok(list) = fs::read_dir(path) else {
            return Entry::Unrecorded;
        };
        let mut names: Vec<OsString> = list.flatten().map(|e| e.file_name()).collect();
        names.sort();
        let children = names
            .into_iter()
            .map(|name| {
                let entry = read(&path.join(&name), budget);
                (name, entry)
            })
            .collect();
        return Entry::Dir { mode, children };
    }
    Entry::Unrecorded
}

/// Removes whatever is at `path` (a link itself, never its target).
fn remove(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn put_back(path: &Path, before: &Entry) -> io::Result<()> {
    match before {
        Entry::Unrecorded => Ok(()),
        Entry::Missing => remove(path),
        Entry::Link(target) => {
            remove(path)?;
            symlink(target, path)
        }
        Entry::File { bytes, mode } => {
            remove(path)?;
            fs::write(path, bytes)?;
            fs::set_permissions(path, fs::Permissions::from_mode(*mode))
        }
        Entry::Dir { mode, children } => {
            let is_dir = fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
            if !is_dir {
                remove(path)?;
                fs::create_dir(path)?;
            }
            // Owner access while filling it in; its own mode last.
            fs::set_permissions(path, fs::Permissions::from_mode(0o700))?;
            let keep: Vec<&OsString> = children.iter().map(|(n, _)| n).collect();
            for entry in fs::read_dir(path)?.flatten() {
                if !keep.contains(&&entry.file_name()) {
                    remove(&entry.path())?;
                }
            }
            for (name, child) in children {
                let child_path = path.join(name);
                let mut budget = Budget {
                    bytes: MAX_BYTES,
                    entries: MAX_ENTRIES,
                };
                if !same(child, &read(&child_path, &mut budget)) {
                    put_back(&child_path, child)?;
                }
            }
            fs::set_permissions(path, fs::Permissions::from_mode(*mode))
        }
    }
}

/// The note a command's output ends with when protected paths were put
/// back; `None` when none changed.
pub fn note(restored: &[String]) -> Option<String> {
    if restored.is_empty() {
        return None;
    }
    Some(format!(
        "riot: the command changed protected paths, which Riot put back as they were: {}. Commands cannot change git's hooks and configuration, `.riot`, `.claude` or `.mcp.json`; ask the person to make such a change.\n",
        restored.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path) {
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::write(root.join(".git/config"), "[core]\n").unwrap();
        fs::write(root.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(
            root.join(".git/hooks/pre-commit.sample"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }

    fn paths(root: &Path) -> Vec<PathBuf> {
        [".git/hooks", ".git/config", ".riot", ".mcp.json"]
            .iter()
            .map(|p| root.join(p))
            .collect()
    }

    #[test]
    fn changed_created_and_removed_protected_paths_are_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let snapshot = Snapshot::take(&paths(root));
        fs::write(root.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        fs::write(root.join(".git/hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        fs::remove_file(root.join(".git/hooks/pre-commit.sample")).unwrap();
        fs::create_dir_all(root.join(".riot")).unwrap();
        fs::write(root.join(".riot/settings.json"), "{}").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join(".mcp.json")).unwrap();

        let said = snapshot.restore();
        assert_eq!(
            said,
            [
                format!(
                    "{} (changed by the command)",
                    root.join(".git/hooks").display()
                ),
                format!(
                    "{} (changed by the command)",
                    root.join(".git/config").display()
                ),
                format!("{} (created by the command)", root.join(".riot").display()),
                format!(
                    "{} (created by the command)",
                    root.join(".mcp.json").display()
                ),
            ]
        );
        assert_eq!(
            fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(!root.join(".git/hooks/pre-commit").exists());
        let sample = root.join(".git/hooks/pre-commit.sample");
        assert_eq!(fs::read_to_string(&sample).unwrap(), "#!/bin/sh\n");
        assert_eq!(
            fs::metadata(&sample).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert!(fs::symlink_metadata(root.join(".riot")).is_err());
        assert!(fs::symlink_metadata(root.join(".mcp.json")).is_err());
        // Nothing changed since: nothing to say.
        assert_eq!(snapshot.restore(), Vec::<String>::new());
    }

    #[test]
    fn a_protected_directory_swapped_for_a_link_is_put_back_without_touching_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        tree(&root);
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep"), "mine").unwrap();
        let snapshot = Snapshot::take(&paths(&root));
        fs::remove_dir_all(root.join(".git/hooks")).unwrap();
        symlink(&outside, root.join(".git/hooks")).unwrap();
        assert_eq!(snapshot.restore().len(), 1);
        assert!(root.join(".git/hooks").is_dir());
        assert!(
            !fs::symlink_metadata(root.join(".git/hooks"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "mine");
    }

    #[test]
    fn a_path_inside_another_is_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        tree(root);
        let snapshot = Snapshot::take(&[root.join(".git"), root.join(".git/config")]);
        assert_eq!(snapshot.entries.len(), 1);
    }
}
