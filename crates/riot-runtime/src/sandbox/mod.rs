#![allow(clippy::disallowed_methods)] // the sandbox: probes the machine, makes its private temporary directory

//! [`RealSandbox`]: the OS sandbox on Linux (docs/sandbox.md). Commands
//! run under bubblewrap with Landlock and seccomp applied inside by Riot's
//! own helper ([`helper`]); where bubblewrap cannot run (not installed,
//! no user namespaces), under the helper alone. What is enforced is found
//! by running a command under each mechanism once ([`RealSandbox::status`]),
//! never assumed.

pub mod bwrap;
pub mod helper;
pub mod protect;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use riot_protocol::process::OutputCallback;
use riot_protocol::{
    BackgroundOutput, ProcessError, ProcessOutput, ProcessRunner, ProcessSpec, Sandbox,
    SandboxMechanism, SandboxPolicy, SandboxStatus, SandboxedSession,
};
use tokio_util::sync::CancellationToken;

use helper::HelperOptions;

/// The sandbox on this machine: the helper to run (the `riot` binary,
/// which answers [`helper::SUBCOMMAND`]) and `PATH` to find `bwrap` on.
#[derive(Debug)]
pub struct RealSandbox {
    helper: PathBuf,
    path_var: Option<OsString>,
    probe: OnceLock<Probe>,
}

/// What the one-time probe found.
#[derive(Debug)]
struct Probe {
    /// `bwrap` with the helper inside ran a command: its path and
    /// whether Landlock was enforced in there.
    bwrap: Result<(PathBuf, Landlock), Unavailable>,
    /// The helper alone ran a command with Landlock enforced.
    landlock: Result<Landlock, Unavailable>,
}

/// Why one sandbox mechanism (bubblewrap, or Landlock alone) cannot be
/// used on this machine.
#[derive(Debug, thiserror::Error)]
enum Unavailable {
    /// The probe had nowhere to run.
    #[error("no temporary directory could be made for the probe")]
    NoProbeDir(#[source] Arc<std::io::Error>),
    /// The helper (the `riot` binary) could not be started.
    #[error("the sandbox helper {} could not run: {source}", helper.display())]
    Helper {
        helper: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The helper ran, but the kernel enforces no Landlock.
    #[error(
        "this kernel does not enforce Landlock (Linux 5.13 or later with Landlock enabled is needed)"
    )]
    NoLandlock,
    /// The helper failed to apply Landlock.
    #[error("Landlock could not be applied: {0}")]
    Landlock(#[source] ProbeFailed),
    /// No `bwrap` on `PATH`.
    #[error("bubblewrap is not installed (no `bwrap` on PATH; install the bubblewrap package)")]
    NoBwrap,
    /// The probe's directories could not be made.
    #[error("the probe could not prepare: {0}")]
    Prepare(#[source] std::io::Error),
    /// `bwrap` could not be started.
    #[error("bubblewrap ({}) could not run: {source}", bwrap.display())]
    BwrapSpawn {
        bwrap: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `bwrap` said it could not make its namespaces.
    #[error("bubblewrap cannot make its namespaces here (user namespaces may be off): {0}")]
    Namespaces(#[source] ProbeFailed),
    /// `bwrap` failed to run the probe for another reason.
    #[error("bubblewrap could not run a command: {0}")]
    Bwrap(#[source] ProbeFailed),
}

/// How the probe command failed under a mechanism.
#[derive(Debug, thiserror::Error)]
enum ProbeFailed {
    /// It failed and printed nothing on stderr.
    #[error("the probe exited with {0}")]
    Exited(std::process::ExitStatus),
    /// It failed; the last line it printed on stderr.
    #[error("{0}")]
    Said(String),
    /// It succeeded but its report line was not one the probe knows.
    #[error("the probe said {0:?}")]
    Report(String),
}

/// Why commands cannot be sandboxed here at all.
#[derive(Debug, thiserror::Error)]
enum NoSandbox<'a> {
    /// Not Linux.
    #[error("the OS sandbox is built for Linux only so far")]
    NotLinux,
    /// Neither mechanism works; why not, each.
    #[error("{bwrap}, and {landlock}")]
    Neither {
        bwrap: &'a Unavailable,
        landlock: &'a Unavailable,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landlock {
    Full,
    Partial,
    None,
}

/// Which way a [`SandboxRewrite`] wraps commands.
#[derive(Debug, Clone)]
enum Mode {
    Bubblewrap(PathBuf),
    LandlockOnly,
}

/// What the probe runs in the sandbox (by absolute path: `PATH` may be
/// anything).
const PROBE_COMMAND: [&str; 3] = ["/bin/sh", "-c", ":"];

static NEXT_DIR: AtomicU64 = AtomicU64::new(1);

impl RealSandbox {
    /// A sandbox whose helper is `helper` (normally the running `riot`),
    /// finding `bwrap` on this process's `PATH`.
    pub fn new(helper: impl Into<PathBuf>) -> Self {
        Self::with_path(helper, std::env::var_os("PATH"))
    }

    /// The same, finding `bwrap` on `path_var`.
    pub fn with_path(helper: impl Into<PathBuf>, path_var: Option<OsString>) -> Self {
        Self {
            helper: helper.into(),
            path_var,
            probe: OnceLock::new(),
        }
    }

    fn probe(&self) -> &Probe {
        self.probe.get_or_init(|| {
            let dir = match PrivateDir::create("riot-sandbox-probe") {
                Ok(dir) => dir,
                Err(e) => {
                    let e = Arc::new(e);
                    return Probe {
                        bwrap: Err(Unavailable::NoProbeDir(Arc::clone(&e))),
                        landlock: Err(Unavailable::NoProbeDir(e)),
                    };
                }
            };
            Probe {
                bwrap: self.probe_bwrap(dir.path()),
                landlock: self.probe_landlock(dir.path()),
            }
        })
    }

    fn probe_landlock(&self, dir: &Path) -> Result<Landlock, Unavailable> {
        let options = HelperOptions {
            write: vec![dir.to_path_buf()],
            network: false,
            hold_group: true,
            require_landlock: true,
            report: true,
            ..HelperOptions::default()
        };
        let output = std::process::Command::new(&self.helper)
            .args(options.to_args(PROBE_COMMAND.map(str::to_owned)))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|source| Unavailable::Helper {
                helper: self.helper.clone(),
                source,
            })?;
        match report(&output) {
            Ok(Landlock::None) => Err(Unavailable::NoLandlock),
            Ok(level) => Ok(level),
            Err(why) => Err(Unavailable::Landlock(why)),
        }
    }

    fn probe_bwrap(&self, dir: &Path) -> Result<(PathBuf, Landlock), Unavailable> {
        let bwrap = bwrap::find_bwrap(self.path_var.as_deref()).ok_or(Unavailable::NoBwrap)?;
        let project = dir.join("project");
        let tmp = dir.join("tmp");
        for d in [&project, &tmp] {
            std::fs::create_dir_all(d).map_err(Unavailable::Prepare)?;
        }
        let policy = SandboxPolicy::for_project(&project, None);
        let mut args = bwrap::bwrap_command(
            &policy,
            &tmp,
            &project,
            &self.helper,
            bwrap::GitAccess::Commit,
        );
        let options = HelperOptions {
            write: vec![project.clone(), PathBuf::from(bwrap::SANDBOX_TMP)],
            network: false,
            report: true,
            ..HelperOptions::default()
        };
        args.extend(options.to_args(PROBE_COMMAND.map(str::to_owned)));
        let output = std::process::Command::new(&bwrap)
            .args(&args)
            .current_dir(&project)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|source| Unavailable::BwrapSpawn {
                bwrap: bwrap.clone(),
                source,
            })?;
        let level = report(&output).map_err(bwrap_failure)?;
        Ok((bwrap, level))
    }

    fn mode(&self) -> Result<(Mode, SandboxMechanism, Vec<String>, Option<String>), NoSandbox<'_>> {
        if !cfg!(target_os = "linux") {
            return Err(NoSandbox::NotLinux);
        }
        let probe = self.probe();
        match (&probe.bwrap, &probe.landlock) {
            (Ok((path, level)), _) => {
                let mut limits = vec![UNIX_SOCKETS.to_owned(), MISSING_PATHS.to_owned()];
                let mechanism = if *level == Landlock::None {
                    limits.push("Landlock is not enforced by this kernel; bubblewrap's read-only mounts hold the file system".into());
                    SandboxMechanism::BubblewrapSeccomp
                } else {
                    SandboxMechanism::BubblewrapLandlockSeccomp
                };
                Ok((Mode::Bubblewrap(path.clone()), mechanism, limits, None))
            }
            (Err(no_bwrap), Ok(level)) => {
                let mut limits = vec![
                    "`.git`, `.riot`, `.claude` and `.mcp.json` inside the project stay writable while a command runs: Landlock can only grant access, so nothing below a writable directory can be made read-only; the protected paths are put back as they were when the command ends, but `.git` is not, so commands are asked about as without a sandbox (install bubblewrap to run them unasked); in a git worktree its `.git` file and its directory in the main repository are writable too".to_owned(),
                    "paths denied to reading in the settings stay readable to commands; the permission rules still refuse commands that name them".to_owned(),
                    "no PID namespace: `setsid` and `setpgid` are refused, so everything a command starts stays in the process group Riot stops".to_owned(),
                    "`/dev/pts` is closed to commands, so they cannot reach your terminals; they cannot make pseudo-terminals either (`script`, `expect`, pexpect-based tests fail; install bubblewrap for them)".to_owned(),
                    UNIX_SOCKETS.to_owned(),
                ];
                if *level == Landlock::Partial {
                    limits.push("this kernel's Landlock is older than Riot's rules: some file operations (renames across directories, truncation, device ioctls) are not restricted".into());
                }
                Ok((
                    Mode::LandlockOnly,
                    SandboxMechanism::LandlockSeccomp,
                    limits,
                    Some(format!(
                        "{no_bwrap}, so Landlock and seccomp alone enforce the sandbox"
                    )),
                ))
            }
            (Err(bwrap), Err(landlock)) => Err(NoSandbox::Neither { bwrap, landlock }),
        }
    }
}

const UNIX_SOCKETS: &str = "Unix-domain sockets (a Docker or SSH agent socket) are not filtered";
const MISSING_PATHS: &str = "a protected path (`.riot`, `.claude`, `.mcp.json`, `.vscode`, `.cargo`, `.envrc`, `.git/hooks`, `.git/config`, `.git/config.worktree`, a worktree's `commondir`, `gitdir` and `config.worktree`) is a read-only mount only if it exists when the command starts; one a command creates or changes anyway is put back as it was when the command ends";

/// Why bubblewrap's probe failed, from what it printed: user namespaces
/// are blamed only when bubblewrap says it could not make them.
fn bwrap_failure(why: ProbeFailed) -> Unavailable {
    let lower = why.to_string().to_ascii_lowercase();
    if ["namespace", "uid map", "uid_map", "setgroups"]
        .iter()
        .any(|w| lower.contains(w))
    {
        Unavailable::Namespaces(why)
    } else {
        Unavailable::Bwrap(why)
    }
}

/// The probe command's report line (`landlock=…`) and success.
fn report(output: &std::process::Output) -> Result<Landlock, ProbeFailed> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.trim();
        return Err(if why.is_empty() {
            ProbeFailed::Exited(output.status)
        } else {
            ProbeFailed::Said(why.lines().last().unwrap_or(why).to_owned())
        });
    }
    match stdout.trim() {
        "landlock=full" => Ok(Landlock::Full),
        "landlock=partial" => Ok(Landlock::Partial),
        "landlock=none" => Ok(Landlock::None),
        other => Err(ProbeFailed::Report(other.to_owned())),
    }
}

impl Sandbox for RealSandbox {
    fn status(&self, policy: &SandboxPolicy) -> SandboxStatus {
        match self.mode() {
            Ok((_, mechanism, limits, reason)) => SandboxStatus {
                enforced: true,
                mechanism,
                network: policy.network,
                writable: policy
                    .writable_paths()
                    .into_iter()
                    .chain(bwrap::git_layout(&policy.project).writable_outside(&policy.project))
                    .collect(),
                reason,
                limits,
            },
            Err(why) => SandboxStatus::not_enforced(why.to_string()),
        }
    }

    fn session(
        &self,
        inner: Arc<dyn ProcessRunner>,
        policy: &SandboxPolicy,
    ) -> Option<SandboxedSession> {
        let (mode, ..) = self.mode().ok()?;
        let tmp = match PrivateDir::create("riot-sandbox-tmp") {
            Ok(dir) => dir,
            Err(e) => {
                tracing::warn!(error = %e, "no private temporary directory: commands run unsandboxed");
                return None;
            }
        };
        let rewrite = Arc::new(SandboxRewrite {
            mode,
            helper: self.helper.clone(),
            policy: policy.clone(),
            tmp,
        });
        let terminal = Arc::clone(&rewrite);
        Some(SandboxedSession {
            proc: Arc::new(SandboxedRunner {
                inner,
                rewrite,
                background: std::sync::Mutex::default(),
            }),
            terminal: Arc::new(move |spec| terminal.apply(spec, Attach::Terminal)),
        })
    }
}

/// A directory of Riot's own under the system's temporary directory
/// (mode 0700), removed with everything in it when dropped.
#[derive(Debug)]
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn create(prefix: &str) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        loop {
            let n = NEXT_DIR.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{prefix}-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a sandboxed process is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// Pipes (the process runner's commands): the command gets a new
    /// session, with no controlling terminal to type into or read.
    Pipes,
    /// A pseudo-terminal (a Terminal tool's program): the command keeps it
    /// as its controlling terminal and, under bubblewrap, becomes its
    /// foreground job, so Ctrl+C reaches the program.
    Terminal,
}

/// How one session's commands are put in the sandbox: the mechanism, the
/// helper, the policy and the private temporary directory (removed when
/// the last user drops it), shared by the session's process runner and
/// its terminals.
#[derive(Debug)]
pub struct SandboxRewrite {
    mode: Mode,
    helper: PathBuf,
    policy: SandboxPolicy,
    tmp: PrivateDir,
}

impl SandboxRewrite {
    /// `spec` as it runs in the sandbox: bubblewrap (or the helper alone)
    /// in front of the command, `TMPDIR` the private temporary directory.
    pub fn apply(&self, mut spec: ProcessSpec, attach: Attach) -> ProcessSpec {
        let command = std::iter::once(spec.program.clone()).chain(spec.args.iter().cloned());
        let git = if spec.undoable_only {
            bwrap::GitAccess::ReadOnly
        } else {
            bwrap::GitAccess::Commit
        };
        let mut write = self.policy.writable_paths();
        // A worktree's commits go to its main repository's objects and
        // refs (a command the person allowed: what Riot allows on its own
        // leaves git's state alone).
        if git == bwrap::GitAccess::Commit {
            write.extend(
                bwrap::git_layout(&self.policy.project).writable_outside(&self.policy.project),
            );
        }
        let tmp_inside = match &self.mode {
            Mode::Bubblewrap(_) => PathBuf::from(bwrap::SANDBOX_TMP),
            Mode::LandlockOnly => self.tmp.path().to_path_buf(),
        };
        write.push(tmp_inside.clone());
        match &self.mode {
            Mode::Bubblewrap(bwrap) => {
                let options = HelperOptions {
                    write,
                    network: self.policy.network,
                    new_session: attach == Attach::Pipes,
                    foreground: attach == Attach::Terminal,
                    ..HelperOptions::default()
                };
                let mut args = bwrap::bwrap_command(
                    &self.policy,
                    self.tmp.path(),
                    &spec.cwd,
                    &self.helper,
                    git,
                );
                args.extend(options.to_args(command));
                spec.program = bwrap.to_string_lossy().into_owned();
                spec.args = args;
            }
            Mode::LandlockOnly => {
                // No PID namespace: the command stays in the group (or, in
                // a terminal, the session) Riot kills, and seccomp keeps
                // it there. A Bash command gives up riot's controlling
                // terminal, which is the person's.
                let options = HelperOptions {
                    write,
                    network: self.policy.network,
                    hold_group: true,
                    require_landlock: true,
                    drop_tty: attach == Attach::Pipes,
                    ..HelperOptions::default()
                };
                spec.args = options.to_args(command);
                spec.program = self.helper.to_string_lossy().into_owned();
            }
        }
        for name in ["TMPDIR", "TMP", "TEMP"] {
            spec.env_set.retain(|(k, _)| k != name);
            spec.env_set
                .push((name.to_owned(), tmp_inside.to_string_lossy().into_owned()));
        }
        spec
    }
}

/// A process runner whose every command runs in the sandbox: the spec is
/// rewritten ([`SandboxRewrite::apply`]) to start bubblewrap (or the
/// helper alone) in front of it. Output capture, timeouts, cancellation
/// and group killing stay the inner runner's. The protected paths are
/// recorded before each command and put back after it ([`protect`]).
#[derive(Debug)]
pub struct SandboxedRunner {
    inner: Arc<dyn ProcessRunner>,
    rewrite: Arc<SandboxRewrite>,
    /// The protected paths as a background command found them, put back
    /// when it is seen to end or is killed.
    background: std::sync::Mutex<std::collections::HashMap<String, protect::Snapshot>>,
}

impl SandboxedRunner {
    /// `spec` as this runner starts it in the sandbox.
    pub fn apply(&self, spec: ProcessSpec) -> ProcessSpec {
        self.rewrite.apply(spec, Attach::Pipes)
    }

    /// The protected paths as they are now.
    fn snapshot(&self) -> protect::Snapshot {
        let policy = &self.rewrite.policy;
        let mut paths = policy.read_only.clone();
        paths.extend(bwrap::git_layout(&policy.project).read_only);
        protect::Snapshot::take(&paths)
    }

    fn restore_background(&self, id: &str) -> Option<String> {
        let snapshot = self
            .background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)?;
        protect::note(&snapshot.restore())
    }
}

#[async_trait]
impl ProcessRunner for SandboxedRunner {
    async fn run(
        &self,
        spec: ProcessSpec,
        cancel: CancellationToken,
        on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        let snapshot = self.snapshot();
        let result = self.inner.run(self.apply(spec), cancel, on_output).await;
        let note = protect::note(&snapshot.restore());
        result.map(|mut out| {
            if let Some(note) = note {
                out.stderr.tail.push_str(&note);
                out.stderr.total_bytes += note.len() as u64;
            }
            out
        })
    }

    async fn spawn_background(&self, spec: ProcessSpec) -> Result<String, ProcessError> {
        let snapshot = self.snapshot();
        let id = self.inner.spawn_background(self.apply(spec)).await?;
        self.background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), snapshot);
        Ok(id)
    }

    async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError> {
        let mut out = self.inner.read_background(id).await?;
        if !out.running
            && let Some(note) = self.restore_background(id)
        {
            out.stderr.push_str(&note);
        }
        Ok(out)
    }

    async fn kill_background(&self, id: &str) -> Result<(), ProcessError> {
        let killed = self.inner.kill_background(id).await;
        if let Some(note) = self.restore_background(id) {
            tracing::warn!(id, "{}", note.trim_end());
        }
        killed
    }

    /// The same rewrite `run` applies: a command handed to another host
    /// (the editor's terminal) starts inside the sandbox too. (The
    /// protected paths are not put back after it: the host, not this
    /// runner, sees it end.)
    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec {
        self.inner.prepare(self.apply(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_namespaces_are_blamed_only_when_bubblewrap_says_so() {
        let namespaces = bwrap_failure(ProbeFailed::Said(
            "bwrap: setting up uid map: Permission denied".into(),
        ));
        assert!(matches!(namespaces, Unavailable::Namespaces(_)));
        assert_eq!(
            namespaces.to_string(),
            "bubblewrap cannot make its namespaces here (user namespaces may be off): bwrap: setting up uid map: Permission denied"
        );
        let other = bwrap_failure(ProbeFailed::Report("landlock=maybe".into()));
        assert_eq!(
            other.to_string(),
            "bubblewrap could not run a command: the probe said \"landlock=maybe\""
        );
    }

    #[test]
    fn without_either_mechanism_both_reasons_are_given() {
        let why = NoSandbox::Neither {
            bwrap: &Unavailable::NoBwrap,
            landlock: &Unavailable::Landlock(ProbeFailed::Said("no ruleset".into())),
        };
        assert_eq!(
            why.to_string(),
            "bubblewrap is not installed (no `bwrap` on PATH; install the bubblewrap package), and Landlock could not be applied: no ruleset"
        );
    }
}
