//! Measuring a worktree: what its branch, its files and its `HEAD` hold
//! beyond the commit it was made from, and the list of a project's
//! worktrees with what changed in each.

use std::path::Path;

use crate::records::{Changes, Worktree, WorktreeStatus};
use crate::{META_DIR, WorktreeError, Worktrees, first_line};

impl Worktrees {
    /// A commit id, when `rev` names one in the main checkout.
    async fn commit_of(&self, project: &Path, rev: &str) -> Result<Option<String>, WorktreeError> {
        let spec = format!("{rev}^{{commit}}");
        let out = self
            .git(project, &["rev-parse", "--verify", "--quiet", &spec])
            .await?;
        Ok(out.ok.then(|| out.stdout.trim().to_owned()))
    }

    /// How many commits `to` has that `from` does not, in the main checkout.
    async fn count(&self, project: &Path, from: &str, to: &str) -> Result<usize, WorktreeError> {
        let range = format!("{from}..{to}");
        let out = self
            .git_ok(project, &["rev-list", "--count", &range], "git rev-list")
            .await?;
        Ok(out.trim().parse().unwrap_or(0))
    }

    /// What the worktree's branch holds beyond its base, measured in the
    /// main checkout: it does not matter where the worktree's `HEAD` is,
    /// nor whether its directory is still there.
    pub(crate) async fn branch_changes(
        &self,
        worktree: &Worktree,
    ) -> Result<Changes, WorktreeError> {
        let project = &worktree.project;
        let mut changes = Changes::default();
        let branch = format!("refs/heads/{}", worktree.branch);
        match self.commit_of(project, &branch).await? {
            None => changes.branch_gone = true,
            Some(tip) if tip == worktree.base => {}
            Some(tip) => {
                changes.commits = self.count(project, &worktree.base, &tip).await?;
                let ahead = self
                    .git(
                        project,
                        &["merge-base", "--is-ancestor", &worktree.base, &tip],
                    )
                    .await?;
                changes.moved = !ahead.ok || changes.commits == 0;
            }
        }
        Ok(changes)
    }

    /// What changed in a worktree since it was made: its branch (from
    /// the main checkout), and, when its directory is there, its files
    /// and its `HEAD`.
    pub async fn changes(&self, worktree: &Worktree) -> Result<Changes, WorktreeError> {
        let mut changes = self.branch_changes(worktree).await?;
        if self.fs.metadata(&worktree.path).await.is_err() {
            return Ok(changes);
        }
        let admin = self.admin_dir(worktree).await?;
        let status = self
            .git_in(
                worktree,
                &admin,
                &[
                    "status",
                    "--porcelain",
                    "--untracked-files=all",
                    "--ignored=matching",
                ],
            )
            .await?;
        if !status.ok {
            return Err(WorktreeError::Failed(format!(
                "git status failed: {}",
                first_line(&status.stderr)
            )));
        }
        for line in status.stdout.lines().filter(|l| !l.trim().is_empty()) {
            if line.starts_with("!! ") {
                changes.ignored += 1;
            } else {
                changes.uncommitted += 1;
            }
        }
        // Commits on the worktree's `HEAD` that its branch lacks.
        let head = self
            .git_in(
                worktree,
                &admin,
                &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            )
            .await?;
        let head = head.stdout.trim();
        if head.is_empty() || head == worktree.base {
            return Ok(changes);
        }
        let branch = format!("refs/heads/{}", worktree.branch);
        let from = if changes.branch_gone {
            worktree.base.as_str()
        } else {
            branch.as_str()
        };
        changes.elsewhere = self.count(&worktree.project, from, head).await?;
        Ok(changes)
    }

    /// The worktrees Riot made for the project `dir` is in, by name.
    pub async fn list(&self, dir: &Path) -> Result<Vec<WorktreeStatus>, WorktreeError> {
        let project = self.main_checkout(dir).await?;
        let meta_dir = self.dir(&project).join(META_DIR);
        let fs = &self.fs;
        let entries = match fs.read_dir(&meta_dir).await {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(WorktreeError::Io {
                    what: format!("reading {}", meta_dir.display()),
                    source,
                });
            }
        };
        let mut names: Vec<String> = entries
            .iter()
            .filter_map(|e| {
                e.path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".json")
                    .map(str::to_owned)
            })
            .collect();
        names.sort();
        let mut list = Vec::new();
        for name in names {
            let Some(worktree) = self.read_record(&project, &name).await else {
                continue;
            };
            let present = fs.metadata(&worktree.path).await.is_ok();
            let changes = match self.changes(&worktree).await {
                Ok(changes) => changes,
                Err(_) => self.branch_changes(&worktree).await.unwrap_or_default(),
            };
            list.push(WorktreeStatus {
                name: worktree.name,
                branch: worktree.branch,
                path: worktree.path,
                base: worktree.base,
                created_ms: worktree.created_ms,
                present,
                changes,
            });
        }
        Ok(list)
    }
}
