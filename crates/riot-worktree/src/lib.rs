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
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

mod safe_git;

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
    fn branch_at_base(&self) -> bool {
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
    /// The kept branch points elsewhere than the base, without commits of
    /// its own beyond it (reset or rebased).
    pub moved: bool,
    /// The branch was already gone.
    pub branch_gone: bool,
}

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
    async fn branch_changes(&self, worktree: &Worktree) -> Result<Changes, WorktreeError> {
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
    async fn remove_checkout(
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
