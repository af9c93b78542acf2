//! Making a worktree for a session: its name, its branch from the
//! project's `HEAD`, `git worktree add`, and its record beside it.

use std::path::{Path, PathBuf};

use crate::records::Worktree;
use crate::{BRANCH_PREFIX, WorktreeError, Worktrees, check_name, first_line};

impl Worktrees {
    /// Makes (or, when one of that name exists, reopens) the worktree
    /// `name` of the project `dir` is in; `None` picks a name. A session
    /// then opens in [`Worktree::cwd`].
    pub async fn create(&self, dir: &Path, name: Option<&str>) -> Result<Worktree, WorktreeError> {
        let name = match name {
            Some(n) => n.to_owned(),
            None => {
                let id = self.ids.next_id(riot_protocol::IdKind::Session);
                let tail: String = id
                    .chars()
                    .rev()
                    .filter(char::is_ascii_alphanumeric)
                    .take(8)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                format!("wt-{}", tail.to_ascii_lowercase())
            }
        };
        check_name(&name)?;
        let project = self.main_checkout(dir).await?;
        let relative = dir
            .strip_prefix(&project)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if let Some(mut existing) = self.read_record(&project, &name).await
            && self.fs.metadata(&existing.path).await.is_ok()
        {
            existing.cwd = join(&existing.path, &relative);
            return Ok(existing);
        }
        let branch = format!("{BRANCH_PREFIX}{name}");
        let check = self
            .git(&project, &["check-ref-format", "--branch", &branch])
            .await?;
        if !check.ok {
            return Err(WorktreeError::Input(format!(
                "`{name}` cannot name a git branch ({}); pick another worktree name",
                first_line(&check.stderr)
            )));
        }
        let base = self
            .git(
                &project,
                &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            )
            .await?;
        if !base.ok {
            return Err(WorktreeError::Input(format!(
                "the repository at {} has no commit yet; commit once before using --worktree",
                project.display()
            )));
        }
        let base = base.stdout.trim().to_owned();
        let exists = self
            .git(
                &project,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{branch}"),
                ],
            )
            .await?;
        if exists.ok {
            return Err(WorktreeError::Input(format!(
                "the branch {branch} already exists; pick another worktree name, or delete the branch (`git branch -D {branch}`)"
            )));
        }
        let path = self.dir(&project).join(&name);
        if self.fs.metadata(&path).await.is_ok() {
            return Err(WorktreeError::Input(format!(
                "{} already exists; pick another worktree name",
                path.display()
            )));
        }
        let path_text = path.to_string_lossy().into_owned();
        self.git_ok(
            &project,
            &[
                "worktree", "add", "--quiet", "-b", &branch, &path_text, &base,
            ],
            "git worktree add",
        )
        .await?;
        let worktree = Worktree {
            cwd: join(&path, &relative),
            name: name.clone(),
            branch,
            path,
            project: project.clone(),
            base,
            created_ms: self.clock.now_ms(),
        };
        let meta = self.meta_path(&project, &name);
        let fs = &self.fs;
        let written = async {
            if let Some(parent) = meta.parent() {
                fs.create_dir_all(parent).await?;
            }
            let json = serde_json::to_vec_pretty(&worktree).map_err(std::io::Error::other)?;
            fs.write_atomic(&meta, &json).await
        }
        .await;
        if let Err(source) = written {
            // Without its record it could never be told apart: undo.
            let _ = self.remove_checkout(&worktree, true, true).await;
            return Err(WorktreeError::Io {
                what: format!("writing {}", meta.display()),
                source,
            });
        }
        Ok(worktree)
    }
}

/// `dir` joined with `relative`, without a trailing `/` when it is empty.
fn join(dir: &Path, relative: &Path) -> PathBuf {
    if relative.as_os_str().is_empty() {
        dir.to_path_buf()
    } else {
        dir.join(relative)
    }
}
