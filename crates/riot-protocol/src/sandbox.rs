//! The OS sandbox seam (docs/design.md §9.4, docs/sandbox.md): what a
//! sandboxed command may touch ([`SandboxPolicy`]), what this machine can
//! enforce ([`SandboxStatus`]), and the capability that enforces it
//! ([`Sandbox`]). The mechanism (bubblewrap, Landlock, seccomp) lives in
//! `riot-runtime`; the kernel builds the policy from the settings and the
//! permission chain reads the status, neither depending on the mechanism.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::process::{ProcessRunner, ProcessSpec};

/// Paths inside a writable place that stay read-only, relative to the
/// project: what would let a command run code outside the sandbox later
/// (git hooks and configuration, a worktree's own configuration, Riot's
/// and Claude Code's settings and hooks, MCP servers, the editor's tasks,
/// Cargo's configuration, direnv's `.envrc`). The sandbox also keeps
/// read-only what only exists in some checkouts: a worktree's `.git` file
/// and the pointer files of `.git/worktrees/*/`.
pub const PROTECTED_IN_PROJECT: [&str; 9] = [
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".riot",
    ".claude",
    ".mcp.json",
    ".vscode",
    ".cargo",
    ".envrc",
];

/// Shell startup files in the home directory, read-only even when the home
/// is writable (a project in the home, or `sandbox.writable`).
pub const SHELL_STARTUP_FILES: [&str; 10] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
];

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxPolicy {
    /// The project directory: writable, but for [`Self::read_only`].
    pub project: PathBuf,
    /// Other writable paths (`sandbox.writable`).
    pub writable: Vec<PathBuf>,
    /// Paths kept read-only inside the writable ones (existing ones only:
    /// a path that does not exist cannot be mounted over).
    pub read_only: Vec<PathBuf>,
    /// Paths whose contents are hidden (deny rules on reading them).
    pub hidden: Vec<PathBuf>,
    /// Whether the command may open network sockets.
    pub network: bool,
}

impl SandboxPolicy {
    /// The default policy for `project`: the project writable, its
    /// protected paths and the home's shell startup files read-only, no
    /// network.
    pub fn for_project(project: &Path, home: Option<&Path>) -> Self {
        let mut read_only: Vec<PathBuf> = PROTECTED_IN_PROJECT
            .iter()
            .map(|p| project.join(p))
            .collect();
        if let Some(home) = home {
            read_only.extend(SHELL_STARTUP_FILES.iter().map(|f| home.join(f)));
        }
        Self {
            project: project.to_path_buf(),
            writable: Vec::new(),
            read_only,
            hidden: Vec::new(),
            network: false,
        }
    }

    /// Every writable path: the project first, then `writable`.
    pub fn writable_paths(&self) -> Vec<PathBuf> {
        std::iter::once(self.project.clone())
            .chain(self.writable.iter().cloned())
            .collect()
    }
}

/// Which mechanism enforces the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMechanism {
    /// bubblewrap (mount, PID and network namespaces) with Landlock and
    /// seccomp applied inside.
    BubblewrapLandlockSeccomp,
    /// bubblewrap and seccomp, on a kernel without Landlock.
    BubblewrapSeccomp,
    /// Landlock and seccomp alone (no bubblewrap, or no user namespaces).
    LandlockSeccomp,
    /// Nothing is enforced.
    None,
}

impl SandboxMechanism {
    /// The name shown in `riot sandbox check` (the JSON tag).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMechanism::BubblewrapLandlockSeccomp => "bubblewrap-landlock-seccomp",
            SandboxMechanism::BubblewrapSeccomp => "bubblewrap-seccomp",
            SandboxMechanism::LandlockSeccomp => "landlock-seccomp",
            SandboxMechanism::None => "none",
        }
    }
}

/// What the sandbox enforces on this machine, for one policy. Honest by
/// construction: `enforced` is true only after a probe ran a command
/// under the mechanism named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxStatus {
    /// Whether commands really run sandboxed.
    pub enforced: bool,
    pub mechanism: SandboxMechanism,
    /// Whether sandboxed commands may use the network.
    pub network: bool,
    /// What they may write.
    pub writable: Vec<PathBuf>,
    /// Why it is not enforced, or what it cannot do here (one sentence
    /// with the fix); `None` when enforced in full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What this mechanism cannot protect (the Landlock-only differences).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
}

impl SandboxStatus {
    /// Nothing enforced, because `reason`.
    /// Without a sandbox nothing limits the network or the writes.
    pub fn not_enforced(reason: impl Into<String>) -> Self {
        Self {
            enforced: false,
            mechanism: SandboxMechanism::None,
            network: true,
            writable: Vec::new(),
            reason: Some(reason.into()),
            limits: Vec::new(),
        }
    }

    /// The one-line notice a session shows when the sandbox cannot be
    /// enforced; `None` when it is.
    pub fn notice(&self) -> Option<String> {
        if self.enforced {
            return None;
        }
        Some(format!(
            "The OS sandbox is not enforced, so commands run unsandboxed and are asked about as usual: {}",
            self.reason.as_deref().unwrap_or("no reason was given")
        ))
    }
}

/// Rewrites a process so that it starts inside the sandbox (a terminal's
/// program, which a pseudo-terminal starts rather than a process runner).
pub type SpecRewrite = Arc<dyn Fn(ProcessSpec) -> ProcessSpec + Send + Sync>;

/// A session's sandbox: its tools' process runner and its terminals'
/// rewrite, sharing one private temporary directory.
#[derive(Clone)]
pub struct SandboxedSession {
    /// Runs every command in the sandbox.
    pub proc: Arc<dyn ProcessRunner>,
    /// Puts a terminal's program in the same sandbox.
    pub terminal: SpecRewrite,
}

impl std::fmt::Debug for SandboxedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxedSession")
            .field("proc", &self.proc)
            .finish_non_exhaustive()
    }
}

/// The OS sandbox capability.
pub trait Sandbox: Send + Sync + std::fmt::Debug {
    /// What this machine enforces for `policy` (the probe runs once and
    /// is cached).
    fn status(&self, policy: &SandboxPolicy) -> SandboxStatus;

    /// The sandbox for one session: `inner` with every command it runs put
    /// in the sandbox, and the rewrite for its terminals; `None` when the
    /// sandbox cannot be enforced (then nothing is wrapped, and the status
    /// says why).
    fn session(
        &self,
        inner: Arc<dyn ProcessRunner>,
        policy: &SandboxPolicy,
    ) -> Option<SandboxedSession>;
}

/// No sandbox: the status says so and nothing is wrapped (tests, faces
/// and platforms without one).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSandbox;

impl Sandbox for NoSandbox {
    fn status(&self, _policy: &SandboxPolicy) -> SandboxStatus {
        SandboxStatus::not_enforced("this build of Riot has no OS sandbox here")
    }

    fn session(
        &self,
        _inner: Arc<dyn ProcessRunner>,
        _policy: &SandboxPolicy,
    ) -> Option<SandboxedSession> {
        None
    }
}
