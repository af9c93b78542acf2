//! `riot worktree list|remove` (riot-worktree's `Worktrees` lists and
//! removes them through the injected process runner). A session's own
//! worktree, `--worktree`, is opening.rs's.

use riot_kernel::{Kernel, KernelError};
use serde_json::json;

use crate::cli::SharedOptions;
use crate::out::{errln, outln};
use crate::world::WorldError;

fn setup(shared: &SharedOptions) -> Result<(Kernel, std::path::PathBuf), WorldError> {
    let project = crate::opening::project(shared)?;
    Ok((project.kernel, project.cwd))
}

/// `riot worktree list [--json]`.
pub async fn list(shared: &SharedOptions, json_out: bool) -> i32 {
    let (kernel, cwd) = match setup(shared) {
        Ok(k) => k,
        Err(e) => {
            errln!("riot worktree list: {e}");
            return e.exit_code();
        }
    };
    let worktrees = match kernel
        .worktrees()
        .list(&cwd)
        .await
        .map_err(KernelError::from)
    {
        Ok(w) => w,
        Err(e) => {
            errln!("riot worktree list: {e}");
            return e.exit_code();
        }
    };
    if json_out {
        let rows: Vec<_> = worktrees
            .iter()
            .map(|w| {
                json!({"name": w.name, "branch": w.branch, "path": w.path, "base": w.base,
                       "created_ms": w.created_ms, "present": w.present,
                       "uncommitted": w.changes.uncommitted, "ignored": w.changes.ignored,
                       "commits": w.changes.commits})
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows));
    } else if worktrees.is_empty() {
        outln!("No worktrees for this project.");
    } else {
        for w in worktrees {
            let state = if !w.present {
                "missing (`riot worktree remove` forgets it)".to_owned()
            } else if w.changes.any() {
                format!(
                    "{} uncommitted, {} ignored, {} commits",
                    w.changes.uncommitted, w.changes.ignored, w.changes.commits
                )
            } else {
                "unchanged".to_owned()
            };
            outln!("{}  {}  {}  {}", w.name, w.branch, w.path.display(), state);
        }
    }
    0
}

/// `riot worktree remove NAME [--force]`.
pub async fn remove(shared: &SharedOptions, name: &str, force: bool) -> i32 {
    let (kernel, cwd) = match setup(shared) {
        Ok(k) => k,
        Err(e) => {
            errln!("riot worktree remove: {e}");
            return e.exit_code();
        }
    };
    match kernel
        .worktrees()
        .remove(&cwd, name, force)
        .await
        .map_err(KernelError::from)
    {
        Ok(removed) => {
            if removed.branch_deleted {
                outln!("Removed worktree {name} and its branch {}.", removed.branch);
            } else if removed.branch_gone {
                outln!(
                    "Removed worktree {name}; its branch {} was already gone.",
                    removed.branch
                );
            } else if removed.moved {
                outln!(
                    "Removed worktree {name}; its branch {} is kept: it no longer points at the commit the worktree was made from (`git branch -D {}` deletes it).",
                    removed.branch,
                    removed.branch
                );
            } else {
                outln!(
                    "Removed worktree {name}; its branch {} is kept with its {} commit{} (`git branch -D {}` deletes it).",
                    removed.branch,
                    removed.commits,
                    if removed.commits == 1 { "" } else { "s" },
                    removed.branch
                );
            }
            0
        }
        Err(e) => {
            errln!("riot worktree remove: {e}");
            e.exit_code()
        }
    }
}
