//! Git worktrees for sessions (`riot --worktree`, docs/parallel.md): a
//! session may work in a checkout of its own, on a new branch, so several
//! agents change one project at the same time without touching each
//! other's files — or the person's.
//!
//! A worktree lives under Riot's home, never in the project:
//! `<home>/worktrees/<project key>/<name>`, on the branch `riot/<name>`,
//! made from the project's `HEAD`. Beside the worktrees, `.meta/<name>.json`
//! records what it was made from (the base commit), so [`Kernel::finish_worktree`]
//! can tell a worktree that changed nothing — no uncommitted changes, the
//! branch still at its base — and remove it with its branch, and keep one
//! that did. Git runs through the injected [`ProcessRunner`], the files
//! through the injected `FileSystem`; nothing here touches the project's
//! own checkout beyond `git worktree` and `git branch`, which leave its
//! files (untracked ones included) alone.

use std::path::{Path, PathBuf};

use riot_protocol::{CaptureLimit, ProcessRunner, ProcessSpec};
use riot_store::SessionWorktree;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::KernelError;
use crate::kernel::Kernel;

/// The prefix of every worktree's branch.
pub const BRANCH_PREFIX: &str = "riot/";

/// The directory under Riot's home that holds the worktrees.
const DIR: &str = "worktrees";
/// The directory, beside a project's worktrees, of their records.
const META_DIR: &str = ".meta";
/// How long one git command may take.
const GIT_TIMEOUT_MS: u64 = 60_000;

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
        }
    }
}

/// What a worktree holds beyond its base.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Files with uncommitted changes (untracked ones included).
    pub uncommitted: usize,
    /// Commits on its branch that its base does not have.
    pub commits: usize,
    /// The branch no longer points at or past its base (reset elsewhere).
    pub moved: bool,
}

impl Changes {
    /// Whether anything changed.
    pub fn any(&self) -> bool {
        self.uncommitted > 0 || self.commits > 0 || self.moved
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.uncommitted > 0 {
            parts.push(plural(self.uncommitted, "uncommitted change"));
        }
        if self.commits > 0 {
            parts.push(plural(self.commits, "commit"));
        }
        if self.moved {
            parts.push("its branch moved off its base".to_owned());
        }
        parts.join(" and ")
    }
}

fn plural(n: usize, what: &str) -> String {
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
}

/// Checks a worktree name: it becomes a directory and a branch, so
/// letters, digits, `.`, `_` and `-`, not starting with `.` or `-`, at
/// most 64 characters.
pub fn check_name(name: &str) -> Result<(), KernelError> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['.', '-'])
        && !name.ends_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fine {
        Ok(())
    } else {
        Err(KernelError::Input(format!(
            "`{name}` cannot name a worktree: use 1–64 letters, digits, `.`, `_` or `-`, not starting with `.` or `-` (e.g. --worktree fix-login)"
        )))
    }
}

/// The directory name of a project's worktrees: its last path component
/// and a hash of the whole path, so two projects of one name stay apart.
pub fn project_key(project: &Path) -> String {
    let base: String = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // FNV-1a: stable across builds and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in project.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let base = base.trim_start_matches('.');
    let base = if base.is_empty() { "project" } else { base };
    format!("{base}-{:08x}", hash & 0xffff_ffff)
}

/// One git command's outcome.
struct GitOut {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Kernel {
    /// The directory of a project's worktrees.
    pub fn worktrees_dir(&self, project: &Path) -> PathBuf {
        self.home().join(DIR).join(project_key(project))
    }

    async fn git(&self, cwd: &Path, args: &[&str]) -> Result<GitOut, KernelError> {
        let spec = ProcessSpec {
            program: "git".into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            cwd: cwd.to_path_buf(),
            env_set: vec![
                ("GIT_TERMINAL_PROMPT".into(), "0".into()),
                ("GIT_PAGER".into(), "cat".into()),
                ("LC_ALL".into(), "C".into()),
            ],
            env_remove: Vec::new(),
            timeout_ms: Some(GIT_TIMEOUT_MS),
            capture: CaptureLimit {
                head_bytes: 256 * 1024,
                tail_bytes: 0,
            },
            stdin: None,
        };
        let proc: &dyn ProcessRunner = self.capabilities().proc.as_ref();
        let out = proc
            .run(spec, CancellationToken::new(), None)
            .await
            .map_err(|e| {
                KernelError::Failed(format!(
                    "git could not run ({e}); worktrees need git on the PATH"
                ))
            })?;
        Ok(GitOut {
            ok: out.exit_code == Some(0),
            stdout: out.stdout.head,
            stderr: out.stderr.head.trim().to_owned(),
        })
    }

    /// Runs git and wants it to succeed; `doing` names the step for the
    /// error.
    async fn git_ok(&self, cwd: &Path, args: &[&str], doing: &str) -> Result<String, KernelError> {
        let out = self.git(cwd, args).await?;
        if out.ok {
            Ok(out.stdout)
        } else {
            Err(KernelError::Failed(format!(
                "{doing} failed: {}",
                first_line(&out.stderr)
            )))
        }
    }

    /// The main checkout's top directory of the repository `dir` is in.
    pub async fn main_checkout(&self, dir: &Path) -> Result<PathBuf, KernelError> {
        let out = self
            .git(
                dir,
                &["rev-parse", "--path-format=absolute", "--git-common-dir"],
            )
            .await?;
        if !out.ok {
            return Err(KernelError::Input(format!(
                "{} is not in a git repository; worktrees need one (run `git init` and commit first, or drop --worktree)",
                dir.display()
            )));
        }
        let common = PathBuf::from(out.stdout.trim());
        // The common directory of a non-bare repository is `<top>/.git`.
        match common.parent() {
            Some(top) if common.file_name().is_some_and(|n| n == ".git") => Ok(top.to_path_buf()),
            _ => Err(KernelError::Input(format!(
                "{} is in a bare git repository or one with a separate git directory; worktrees need an ordinary checkout",
                dir.display()
            ))),
        }
    }

    fn meta_path(&self, project: &Path, name: &str) -> PathBuf {
        self.worktrees_dir(project)
            .join(META_DIR)
            .join(format!("{name}.json"))
    }

    async fn read_record(&self, project: &Path, name: &str) -> Option<Worktree> {
        let bytes = self
            .capabilities()
            .fs
            .read(&self.meta_path(project, name))
            .await
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Makes (or, when one of that name exists, reopens) the worktree
    /// `name` of the project `dir` is in; `None` picks a name. A session
    /// then opens in [`Worktree::cwd`].
    pub async fn create_worktree(
        &self,
        dir: &Path,
        name: Option<&str>,
    ) -> Result<Worktree, KernelError> {
        let name = match name {
            Some(n) => n.to_owned(),
            None => {
                let id = self
                    .capabilities()
                    .ids
                    .next_id(riot_protocol::IdKind::Session);
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
            && self
                .capabilities()
                .fs
                .metadata(&existing.path)
                .await
                .is_ok()
        {
            existing.cwd = join(&existing.path, &relative);
            return Ok(existing);
        }
        let branch = format!("{BRANCH_PREFIX}{name}");
        let check = self
            .git(&project, &["check-ref-format", "--branch", &branch])
            .await?;
        if !check.ok {
            return Err(KernelError::Input(format!(
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
            return Err(KernelError::Input(format!(
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
            return Err(KernelError::Input(format!(
                "the branch {branch} already exists; pick another worktree name, or delete the branch (`git branch -D {branch}`)"
            )));
        }
        let path = self.worktrees_dir(&project).join(&name);
        if self.capabilities().fs.metadata(&path).await.is_ok() {
            return Err(KernelError::Input(format!(
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
            created_ms: self.capabilities().clock.now_ms(),
        };
        let meta = self.meta_path(&project, &name);
        let fs = &self.capabilities().fs;
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
            return Err(KernelError::Io {
                what: format!("writing {}", meta.display()),
                source,
            });
        }
        Ok(worktree)
    }

    /// What changed in a worktree since it was made.
    pub async fn worktree_changes(&self, worktree: &Worktree) -> Result<Changes, KernelError> {
        let status = self
            .git_ok(
                &worktree.path,
                &["status", "--porcelain", "--untracked-files=all"],
                "git status",
            )
            .await?;
        let uncommitted = status.lines().filter(|l| !l.trim().is_empty()).count();
        let head = self
            .git_ok(&worktree.path, &["rev-parse", "HEAD"], "git rev-parse")
            .await?;
        let head = head.trim();
        let mut changes = Changes {
            uncommitted,
            ..Changes::default()
        };
        if head != worktree.base {
            let range = format!("{}..HEAD", worktree.base);
            let count = self
                .git(&worktree.path, &["rev-list", "--count", &range])
                .await?;
            changes.commits = count.stdout.trim().parse().unwrap_or(0);
            let ahead = self
                .git(
                    &worktree.path,
                    &["merge-base", "--is-ancestor", &worktree.base, "HEAD"],
                )
                .await?;
            changes.moved = !ahead.ok || changes.commits == 0;
        }
        Ok(changes)
    }

    /// At a session's end: removes the worktree and its branch when
    /// nothing changed in it, keeps it otherwise.
    pub async fn finish_worktree(&self, worktree: &Worktree) -> Result<WorktreeEnd, KernelError> {
        let changes = self.worktree_changes(worktree).await?;
        if changes.any() {
            return Ok(WorktreeEnd::Kept(changes));
        }
        self.remove_checkout(worktree, false, true).await?;
        Ok(WorktreeEnd::Removed)
    }

    /// `git worktree remove`, the branch when asked, and the record.
    async fn remove_checkout(
        &self,
        worktree: &Worktree,
        force: bool,
        delete_branch: bool,
    ) -> Result<(), KernelError> {
        let path = worktree.path.to_string_lossy().into_owned();
        let mut args = vec!["worktree", "remove"];
        if force {
            args.push("--force");
        }
        args.push(&path);
        if self
            .capabilities()
            .fs
            .metadata(&worktree.path)
            .await
            .is_ok()
        {
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
        match self.capabilities().fs.remove_file(&meta).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(KernelError::Io {
                what: format!("removing {}", meta.display()),
                source,
            }),
        }
    }

    /// The worktrees Riot made for the project `dir` is in, by name.
    pub async fn worktrees(&self, dir: &Path) -> Result<Vec<WorktreeStatus>, KernelError> {
        let project = self.main_checkout(dir).await?;
        let meta_dir = self.worktrees_dir(&project).join(META_DIR);
        let fs = &self.capabilities().fs;
        let entries = match fs.read_dir(&meta_dir).await {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(KernelError::Io {
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
            let changes = if present {
                self.worktree_changes(&worktree).await.unwrap_or_default()
            } else {
                Changes::default()
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

    /// `riot worktree remove`: refuses uncommitted changes unless
    /// `force`; deletes the branch only when it has no commits of its
    /// own (else it stays, so the commits are not lost).
    pub async fn remove_worktree(
        &self,
        dir: &Path,
        name: &str,
        force: bool,
    ) -> Result<Removed, KernelError> {
        check_name(name)?;
        let project = self.main_checkout(dir).await?;
        let Some(worktree) = self.read_record(&project, name).await else {
            return Err(KernelError::Input(format!(
                "there is no worktree `{name}` of {}; `riot worktree list` shows them",
                project.display()
            )));
        };
        let present = self
            .capabilities()
            .fs
            .metadata(&worktree.path)
            .await
            .is_ok();
        let changes = if present {
            self.worktree_changes(&worktree).await?
        } else {
            Changes::default()
        };
        if changes.uncommitted > 0 && !force {
            return Err(KernelError::Input(format!(
                "worktree {name} has {}; commit or discard them, or remove it anyway with --force",
                plural(changes.uncommitted, "uncommitted change")
            )));
        }
        let keep_branch = changes.commits > 0 || changes.moved;
        self.remove_checkout(&worktree, force, !keep_branch).await?;
        Ok(Removed {
            branch_deleted: !keep_branch,
            branch: worktree.branch,
            commits: changes.commits,
        })
    }

    /// The worktree a session in `cwd` works in, when `cwd` is in one of
    /// Riot's: what its transcript records.
    pub async fn worktree_of(&self, cwd: &Path) -> Option<SessionWorktree> {
        let relative = cwd.strip_prefix(self.home().join(DIR)).ok()?;
        let mut parts = relative.components();
        let key = parts.next()?.as_os_str().to_str()?.to_owned();
        let name = parts.next()?.as_os_str().to_str()?.to_owned();
        let meta = self
            .home()
            .join(DIR)
            .join(&key)
            .join(META_DIR)
            .join(format!("{name}.json"));
        let bytes = self.capabilities().fs.read(&meta).await.ok()?;
        let worktree: Worktree = serde_json::from_slice(&bytes).ok()?;
        Some(worktree.session_record())
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

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_a_directory_and_a_branch_are_refused() {
        for good in ["w1", "fix-login", "a.b_c", "W2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-x",
            ".x",
            "a/b",
            "a..b",
            "x.lock",
            "a b",
            "ä",
            "x.",
            &"a".repeat(65),
        ] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains("cannot name a worktree"), "{bad}: {err}");
        }
    }

    #[test]
    fn project_keys_keep_two_projects_of_one_name_apart() {
        let a = project_key(Path::new("/work/app"));
        let b = project_key(Path::new("/home/x/app"));
        assert!(a.starts_with("app-") && b.starts_with("app-"), "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(a, project_key(Path::new("/work/app")));
        assert!(project_key(Path::new("/work/my app")).starts_with("my_app-"));
    }
}
