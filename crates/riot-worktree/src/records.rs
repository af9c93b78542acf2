//! What the worktrees' work produces and reports: a worktree's record
//! ([`Worktree`]), what changed in it ([`Changes`]), and what became of it
//! ([`WorktreeEnd`], [`WorktreeStatus`], [`Removed`]).

use std::path::PathBuf;

use riot_store::SessionWorktree;
use serde::{Deserialize, Serialize};

/// A worktree made for a session, as recorded beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worktree {
    pub name: String,
    pub branch: String,
    /// The worktree's top directory.
    pub path: PathBuf,
    /// The main checkout's top directory.
    pub project: PathBuf,
    /// The commit it was made from.
    pub base: String,
    pub created_ms: u64,
    /// Where a session in it works: the same subdirectory of the worktree
    /// as the directory it was asked from was of the project.
    #[serde(skip)]
    pub cwd: PathBuf,
}

impl Worktree {
    /// What a session's transcript records of it.
    pub fn session_record(&self) -> SessionWorktree {
        SessionWorktree {
            name: self.name.clone(),
            branch: self.branch.clone(),
            path: self.path.clone(),
            project: self.project.clone(),
        }
    }
}

/// What became of a worktree when its session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorktreeEnd {
    /// Nothing changed: the worktree and its branch were removed.
    Removed,
    /// Something changed: kept, with what changed.
    Kept(Changes),
    /// Other open sessions still work in it (their number): kept for them.
    InUse(usize),
}

impl WorktreeEnd {
    /// The one line a face prints when the session ends.
    pub fn describe(&self, worktree: &Worktree) -> String {
        match self {
            WorktreeEnd::Removed => {
                format!("worktree {} removed: nothing changed in it", worktree.name)
            }
            WorktreeEnd::Kept(changes) => format!(
                "worktree {} kept at {} with {}; its branch is {} (`riot worktree remove {}` when done)",
                worktree.name,
                worktree.path.display(),
                changes.describe(),
                worktree.branch,
                worktree.name
            ),
            WorktreeEnd::InUse(n) => format!(
                "worktree {} kept at {}: {} still work{} in it",
                worktree.name,
                worktree.path.display(),
                plural(*n, "other session"),
                if *n == 1 { "s" } else { "" }
            ),
        }
    }
}

/// What a worktree holds beyond its base.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Files with uncommitted changes (untracked ones included).
    pub uncommitted: usize,
    /// Files and directories git ignores (a fresh worktree has none, so
    /// each was made in it since).
    pub ignored: usize,
    /// Commits on its branch that its base does not have.
    pub commits: usize,
    /// The branch no longer points at or past its base (reset elsewhere).
    pub moved: bool,
    /// Commits the worktree's `HEAD` has that its branch does not (it
    /// committed, then switched away or detached).
    pub elsewhere: usize,
    /// The branch no longer exists (deleted by hand).
    pub branch_gone: bool,
}

impl Changes {
    /// Whether anything changed.
    pub fn any(&self) -> bool {
        self.uncommitted > 0
            || self.ignored > 0
            || self.commits > 0
            || self.moved
            || self.elsewhere > 0
    }

    /// Whether its branch may be deleted: it exists and still points at
    /// the base commit.
    pub(crate) fn branch_at_base(&self) -> bool {
        !self.branch_gone && self.commits == 0 && !self.moved
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.uncommitted > 0 {
            parts.push(plural(self.uncommitted, "uncommitted change"));
        }
        if self.ignored > 0 {
            parts.push(plural(self.ignored, "new git-ignored file"));
        }
        if self.commits > 0 {
            parts.push(plural(self.commits, "commit"));
        }
        if self.moved {
            parts.push("its branch moved off its base".to_owned());
        }
        if self.elsewhere > 0 {
            parts.push(format!(
                "{} not on its branch",
                plural(self.elsewhere, "commit")
            ));
        }
        parts.join(" and ")
    }
}

/// `n` and `what`, in the plural unless `n` is 1.
pub(crate) fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// One worktree of a project, for `riot worktree list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeStatus {
    pub name: String,
    pub branch: String,
    pub path: PathBuf,
    pub base: String,
    pub created_ms: u64,
    /// Whether its directory is still there.
    pub present: bool,
    /// What changed in it (nothing when it is gone).
    pub changes: Changes,
}

/// What `riot worktree remove` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The branch was deleted too (it had no commits of its own); else
    /// it is kept so its commits are not lost.
    pub branch_deleted: bool,
    pub branch: String,
    pub commits: usize,
    /// The kept branch points elsewhere than the base, without commits of
    /// its own beyond it (reset or rebased).
    pub moved: bool,
    /// The branch was already gone.
    pub branch_gone: bool,
}
