//! Git worktrees for sessions (`riot --worktree`, docs/parallel.md): a
//! session may work in a checkout of its own, on a new branch, so several
//! agents change one project at the same time without touching each
//! other's files — or the person's.
//!
//! A worktree lives under Riot's home, never in the project:
//! `<home>/worktrees/<project key>/<name>`, on the branch `riot/<name>`,
//! made from the project's `HEAD`. Beside the worktrees, `.meta/<name>.json`
//! records what it was made from (the base commit), so [`Worktrees::finish`]
//! can tell a worktree that changed nothing — no uncommitted changes, the
//! branch still at its base — and remove it with its branch, and keep one
//! that did. Git runs through the injected [`ProcessRunner`], the files
//! through the injected `FileSystem`; nothing here touches the project's
//! own checkout beyond `git worktree` and `git branch`, which leave its
//! files (untracked ones included) alone.
//!
//! A worktree's files — its `.git` file included — are the agent's to
//! write, so Riot's own git commands trust none of them: each runs with
//! [`safe_config`] (no fsmonitor program, no hooks, no untracked cache, no
//! external diff, no filter or textconv program, no model keys),
//! and one that looks into a worktree names its git directory and work
//! tree explicitly (`--git-dir=<project>/.git/worktrees/… --work-tree=…`,
//! found from the main checkout, not from the worktree's `.git` file).
//! What a worktree holds is measured on its branch from the main
//! checkout, so a branch with commits is never deleted, whether or not
//! the directory is still there.
//!
//! [`Worktrees`] does the work; the kernel holds one and faces reach it
//! through `Kernel::worktrees`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use riot_protocol::{CaptureLimit, Clock, FileSystem, IdGen, ProcessRunner, ProcessSpec};
use riot_store::SessionWorktree;
use tokio_util::sync::CancellationToken;

mod changes;
mod create;
mod records;
mod removal;
mod safe_git;

pub use records::{Changes, Removed, Worktree, WorktreeEnd, WorktreeStatus};
use safe_git::GIT_TIMEOUT_MS;
pub use safe_git::{SAFE_CONFIG, safe_config};

/// Why a worktree could not be made, measured or removed. Its message is
/// the one sentence a person sees.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// What was asked cannot be done as asked: a bad name, a directory
    /// outside a git checkout, a session whose worktree was removed.
    #[error("{0}")]
    Input(String),
    /// Reading or writing a worktree's record failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, or the path.
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Git failed, or could not run.
    #[error("{0}")]
    Failed(String),
}

/// The prefix of every worktree's branch.
pub const BRANCH_PREFIX: &str = "riot/";

/// The directory under Riot's home that holds the worktrees.
const DIR: &str = "worktrees";
/// The directory, beside a project's worktrees, of their records.
const META_DIR: &str = ".meta";
/// The model keys Riot's own git never sees (a configured key variable
/// is also removed where the session's configuration is at hand).
const MODEL_KEYS: [&str; 3] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BRAVE_API_KEY"];

/// Checks a worktree name: it becomes a directory and a branch, so
/// letters, digits, `.`, `_` and `-`, not starting with `.` or `-`, at
/// most 64 characters.
pub fn check_name(name: &str) -> Result<(), WorktreeError> {
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
        Err(WorktreeError::Input(format!(
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

/// Where the open sessions of a process work, by how many work there: a
/// worktree is not removed while a session works in it.
#[derive(Debug, Default)]
pub struct WorkingDirs(Mutex<BTreeMap<PathBuf, usize>>);

impl WorkingDirs {
    /// A session starts working in `dir`.
    pub fn enter(&self, dir: &Path) {
        *self.lock().entry(dir.to_path_buf()).or_default() += 1;
    }

    /// A session that entered `dir` ends.
    pub fn leave(&self, dir: &Path) {
        let mut dirs = self.lock();
        if let Some(count) = dirs.get_mut(dir) {
            *count -= 1;
            if *count == 0 {
                dirs.remove(dir);
            }
        }
    }

    /// How many sessions work in `dir` or below it.
    pub fn count_in(&self, dir: &Path) -> usize {
        self.lock()
            .iter()
            .filter(|(cwd, _)| cwd.starts_with(dir))
            .map(|(_, n)| n)
            .sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Riot's worktrees under its home, and the world they are made in.
#[derive(Debug, Clone)]
pub struct Worktrees {
    fs: Arc<dyn FileSystem>,
    proc: Arc<dyn ProcessRunner>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    home: PathBuf,
    working: Arc<WorkingDirs>,
}

impl Worktrees {
    /// The worktrees under Riot's home `home`, made with these
    /// capabilities; `working` says where this process's sessions work.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        proc: Arc<dyn ProcessRunner>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
        home: PathBuf,
        working: Arc<WorkingDirs>,
    ) -> Self {
        Self {
            fs,
            proc,
            clock,
            ids,
            home,
            working,
        }
    }

    /// The directory of a project's worktrees.
    pub fn dir(&self, project: &Path) -> PathBuf {
        self.home.join(DIR).join(project_key(project))
    }

    async fn git(&self, cwd: &Path, args: &[&str]) -> Result<GitOut, WorktreeError> {
        let proc: &dyn ProcessRunner = self.proc.as_ref();
        let spec = ProcessSpec {
            program: "git".into(),
            args: safe_config(proc, cwd, &[], MODEL_KEYS.map(str::to_owned).as_slice())
                .await
                .into_iter()
                .chain(args.iter().map(|a| (*a).to_owned()))
                .collect(),
            cwd: cwd.to_path_buf(),
            env_set: vec![
                ("GIT_TERMINAL_PROMPT".into(), "0".into()),
                ("GIT_PAGER".into(), "cat".into()),
                ("LC_ALL".into(), "C".into()),
            ],
            env_remove: MODEL_KEYS.map(str::to_owned).to_vec(),
            timeout_ms: Some(GIT_TIMEOUT_MS),
            capture: CaptureLimit {
                head_bytes: 256 * 1024,
                tail_bytes: 0,
            },
            stdin: None,
            undoable_only: false,
        };
        let out = proc
            .run(spec, CancellationToken::new(), None)
            .await
            .map_err(|e| {
                WorktreeError::Failed(format!(
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
    async fn git_ok(
        &self,
        cwd: &Path,
        args: &[&str],
        doing: &str,
    ) -> Result<String, WorktreeError> {
        let out = self.git(cwd, args).await?;
        if out.ok {
            Ok(out.stdout)
        } else {
            Err(WorktreeError::Failed(format!(
                "{doing} failed: {}",
                first_line(&out.stderr)
            )))
        }
    }

    /// The main checkout's top directory of the repository `dir` is in.
    pub async fn main_checkout(&self, dir: &Path) -> Result<PathBuf, WorktreeError> {
        // In one of Riot's worktrees, its record says (its `.git` file is
        // the agent's to write).
        if let Some(worktree) = self.record_at(dir).await {
            return Ok(worktree.project);
        }
        let out = self
            .git(
                dir,
                &["rev-parse", "--path-format=absolute", "--git-common-dir"],
            )
            .await?;
        if !out.ok {
            return Err(WorktreeError::Input(format!(
                "{} is not in a git repository; worktrees need one (run `git init` and commit first, or drop --worktree)",
                dir.display()
            )));
        }
        let common = PathBuf::from(out.stdout.trim());
        // The common directory of a non-bare repository is `<top>/.git`.
        match common.parent() {
            Some(top) if common.file_name().is_some_and(|n| n == ".git") => Ok(top.to_path_buf()),
            _ => Err(WorktreeError::Input(format!(
                "{} is in a bare git repository or one with a separate git directory; worktrees need an ordinary checkout",
                dir.display()
            ))),
        }
    }

    fn meta_path(&self, project: &Path, name: &str) -> PathBuf {
        self.dir(project)
            .join(META_DIR)
            .join(format!("{name}.json"))
    }

    async fn read_record(&self, project: &Path, name: &str) -> Option<Worktree> {
        let bytes = self.fs.read(&self.meta_path(project, name)).await.ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The worktree's own git directory, `<project>/.git/worktrees/<id>`:
    /// the one whose `gitdir` file names the worktree's path. Found from
    /// the main checkout, never from the worktree's `.git` file.
    async fn admin_dir(&self, worktree: &Worktree) -> Result<PathBuf, WorktreeError> {
        let fs = &self.fs;
        let admin = worktree.project.join(".git").join("worktrees");
        let mut wanted = vec![worktree.path.join(".git")];
        if let Ok(real) = fs.canonicalize(&worktree.path).await {
            wanted.push(real.join(".git"));
        }
        let gone = || {
            WorktreeError::Failed(format!(
                "git no longer knows the worktree {} at {} (nothing in {} names it); delete that directory, then `riot worktree remove {}` forgets it",
                worktree.name,
                worktree.path.display(),
                admin.display(),
                worktree.name
            ))
        };
        let mut entries = fs.read_dir(&admin).await.map_err(|_| gone())?;
        // Its usual id first: the worktree's directory name.
        entries.sort_by_key(|e| e.path.file_name() != Some(std::ffi::OsStr::new(&worktree.name)));
        for entry in entries {
            let Ok(bytes) = fs.read(&entry.path.join("gitdir")).await else {
                continue;
            };
            let named = PathBuf::from(String::from_utf8_lossy(&bytes).trim());
            if wanted.contains(&named) {
                return Ok(entry.path);
            }
        }
        Err(gone())
    }

    /// Runs git on the worktree with its git directory and work tree
    /// named explicitly.
    async fn git_in(
        &self,
        worktree: &Worktree,
        admin: &Path,
        args: &[&str],
    ) -> Result<GitOut, WorktreeError> {
        let git_dir = format!("--git-dir={}", admin.display());
        let work_tree = format!("--work-tree={}", worktree.path.display());
        let mut all = vec![git_dir.as_str(), work_tree.as_str()];
        all.extend_from_slice(args);
        self.git(&worktree.project, &all).await
    }

    /// The worktree a session in `cwd` works in, when `cwd` is in one of
    /// Riot's: what its transcript records.
    pub async fn of(&self, cwd: &Path) -> Option<SessionWorktree> {
        Some(self.record_at(cwd).await?.session_record())
    }

    /// What git needs before its command to look into the Riot worktree
    /// `dir` is in without trusting its `.git` file: `--git-dir` and
    /// `--work-tree` from Riot's record; nothing outside Riot's worktrees.
    pub async fn git_args(&self, dir: &Path) -> Vec<String> {
        let Some(worktree) = self.record_at(dir).await else {
            return Vec::new();
        };
        match self.admin_dir(&worktree).await {
            Ok(admin) => vec![
                format!("--git-dir={}", admin.display()),
                format!("--work-tree={}", worktree.path.display()),
            ],
            Err(_) => Vec::new(),
        }
    }

    /// The record of the Riot worktree `dir` is in (its top or below).
    async fn record_at(&self, dir: &Path) -> Option<Worktree> {
        let root = self.home.join(DIR);
        let relative = match dir.strip_prefix(&root) {
            Ok(relative) => relative.to_path_buf(),
            // The home as given, `dir` canonical (or the other way round).
            Err(_) => {
                let fs = &self.fs;
                let real_root = fs.canonicalize(&root).await.ok()?;
                let real_dir = fs
                    .canonicalize(dir)
                    .await
                    .unwrap_or_else(|_| dir.to_path_buf());
                real_dir.strip_prefix(&real_root).ok()?.to_path_buf()
            }
        };
        let mut parts = relative.components();
        let key = parts.next()?.as_os_str().to_str()?.to_owned();
        let name = parts.next()?.as_os_str().to_str()?.to_owned();
        let meta = self
            .home
            .join(DIR)
            .join(&key)
            .join(META_DIR)
            .join(format!("{name}.json"));
        let bytes = self.fs.read(&meta).await.ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The worktree a saved session worked in (`recorded`, its transcript's
    /// record), to reopen it there in `cwd`; an error saying so when the
    /// worktree was removed.
    pub async fn reopen(
        &self,
        recorded: &SessionWorktree,
        cwd: &Path,
    ) -> Result<Worktree, WorktreeError> {
        let present = match self.read_record(&recorded.project, &recorded.name).await {
            Some(w) if w.path == recorded.path => {
                let there = self.fs.metadata(&w.path).await.is_ok();
                there.then_some(w)
            }
            _ => None,
        };
        match present {
            Some(mut worktree) => {
                worktree.cwd = cwd.to_path_buf();
                Ok(worktree)
            }
            None => Err(WorktreeError::Input(removed_sentence(
                &recorded.name,
                &recorded.branch,
            ))),
        }
    }
}

/// Why a session whose worktree was removed cannot be opened, and what to
/// do instead.
fn removed_sentence(name: &str, branch: &str) -> String {
    format!(
        "the worktree {name} of this session was removed, so the session cannot be reopened where it worked; start a new session (its branch {branch}, if kept, holds what it committed)"
    )
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
    fn a_directory_counts_the_sessions_in_it_and_below_until_they_leave() {
        let dirs = WorkingDirs::default();
        dirs.enter(Path::new("/w/a"));
        dirs.enter(Path::new("/w/a/src"));
        dirs.enter(Path::new("/w/ab"));
        assert_eq!(
            dirs.count_in(Path::new("/w/a")),
            2,
            "/w/ab is not below /w/a"
        );
        dirs.leave(Path::new("/w/a/src"));
        assert_eq!(dirs.count_in(Path::new("/w/a")), 1);
        dirs.leave(Path::new("/w/a"));
        dirs.leave(Path::new("/w/a"));
        assert_eq!(
            dirs.count_in(Path::new("/w/a")),
            0,
            "a second leave is not counted"
        );
        assert_eq!(dirs.count_in(Path::new("/w")), 1);
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
