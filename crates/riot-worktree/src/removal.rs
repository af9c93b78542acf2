//! Ending worktrees: at a session's end when nothing changed in one, and
//! `riot worktree remove`, which keeps a branch with commits of its own.

use std::path::Path;

use crate::records::{Removed, Worktree, WorktreeEnd, plural};
use crate::{WorktreeError, Worktrees, check_name};

impl Worktrees {
    /// At a session's end: removes the worktree and its branch when
    /// nothing changed in it and no other open session works in it,
    /// keeps it otherwise.
    pub async fn finish(&self, worktree: &Worktree) -> Result<WorktreeEnd, WorktreeError> {
        // Sessions name their directory canonically or as given: count both.
        let mut others = self.working.count_in(&worktree.path);
        if let Ok(real) = self.fs.canonicalize(&worktree.path).await
            && real != worktree.path
        {
            others += self.working.count_in(&real);
        }
        if others > 0 {
            return Ok(WorktreeEnd::InUse(others));
        }
        let changes = self.changes(worktree).await?;
        if changes.any() {
            return Ok(WorktreeEnd::Kept(changes));
        }
        self.remove_checkout(worktree, false, changes.branch_at_base())
            .await?;
        Ok(WorktreeEnd::Removed)
    }

    /// `git worktree remove`, the branch when asked, and the record.
    pub(crate) async fn remove_checkout(
        &self,
        worktree: &Worktree,
        force: bool,
        delete_branch: bool,
    ) -> Result<(), WorktreeError> {
        let path = worktree.path.to_string_lossy().into_owned();
        let mut args = vec!["worktree", "remove"];
        if force {
            args.push("--force");
        }
        args.push(&path);
        if self.fs.metadata(&worktree.path).await.is_ok() {
            // Its `.git` file back as git made it, whatever was written
            // there since, so git checks and removes the right worktree.
            let admin = self.admin_dir(worktree).await?;
            let link = format!("gitdir: {}\n", admin.display());
            self.fs
                .write_atomic(&worktree.path.join(".git"), link.as_bytes())
                .await
                .map_err(|source| WorktreeError::Io {
                    what: format!("restoring {}", worktree.path.join(".git").display()),
                    source,
                })?;
            self.git_ok(&worktree.project, &args, "git worktree remove")
                .await?;
        } else {
            // Deleted by hand: let git forget it.
            let _ = self.git(&worktree.project, &["worktree", "prune"]).await;
        }
        if delete_branch {
            self.git_ok(
                &worktree.project,
                &["branch", "-D", &worktree.branch],
                "git branch -D",
            )
            .await?;
        }
        let meta = self.meta_path(&worktree.project, &worktree.name);
        match self.fs.remove_file(&meta).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(WorktreeError::Io {
                what: format!("removing {}", meta.display()),
                source,
            }),
        }
    }

    /// `riot worktree remove`: refuses uncommitted changes unless
    /// `force`; deletes the branch only when it has no commits of its
    /// own (else it stays, so the commits are not lost).
    pub async fn remove(
        &self,
        dir: &Path,
        name: &str,
        force: bool,
    ) -> Result<Removed, WorktreeError> {
        check_name(name)?;
        let project = self.main_checkout(dir).await?;
        let Some(worktree) = self.read_record(&project, name).await else {
            return Err(WorktreeError::Input(format!(
                "there is no worktree `{name}` of {}; `riot worktree list` shows them",
                project.display()
            )));
        };
        // A worktree git no longer knows: its error says what to do.
        if self.fs.metadata(&worktree.path).await.is_ok() {
            self.admin_dir(&worktree).await?;
        }
        let changes = match self.changes(&worktree).await {
            Ok(changes) => changes,
            // A broken worktree (git cannot look into it): --force still
            // removes it; its branch is measured from the main checkout.
            Err(_) if force => self.branch_changes(&worktree).await?,
            Err(e) => {
                return Err(WorktreeError::Failed(format!(
                    "{e}; `riot worktree remove {name} --force` removes it anyway"
                )));
            }
        };
        let loose = changes.uncommitted + changes.ignored;
        if loose > 0 && !force {
            let mut what = Vec::new();
            if changes.uncommitted > 0 {
                what.push(plural(changes.uncommitted, "uncommitted change"));
            }
            if changes.ignored > 0 {
                what.push(plural(changes.ignored, "new git-ignored file"));
            }
            return Err(WorktreeError::Input(format!(
                "worktree {name} has {}; commit or discard them, or remove it anyway with --force",
                what.join(" and ")
            )));
        }
        if changes.elsewhere > 0 && !force {
            return Err(WorktreeError::Input(format!(
                "worktree {name} has {} on its HEAD that its branch {} does not have; put them on a branch (`git branch NAME` in the worktree), or remove it anyway with --force",
                plural(changes.elsewhere, "commit"),
                worktree.branch
            )));
        }
        let delete_branch = changes.branch_at_base();
        self.remove_checkout(&worktree, force, delete_branch)
            .await?;
        Ok(Removed {
            branch_deleted: delete_branch,
            branch: worktree.branch,
            commits: changes.commits,
            moved: changes.moved,
            branch_gone: changes.branch_gone,
        })
    }
}
