//! Process capability (docs/design.md §3, §6.6): tools run subprocesses only
//! through a [`ProcessRunner`]. The real runner in `riot-runtime` puts every
//! child in its own process group and kills the group on timeout, cancel and
//! shutdown.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::ui::OutputStream;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSpec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env_set: Vec<(String, String)>,
    /// Variables removed from the inherited environment (model keys).
    pub env_remove: Vec<String>,
    /// Kill the process group after this long; `None` waits forever.
    pub timeout_ms: Option<u64>,
    /// How much output is kept per stream.
    pub capture: CaptureLimit,
    /// Bytes written to the child's stdin, which is then closed; `None`
    /// gives the child `/dev/null` (hooks read their event here).
    pub stdin: Option<Vec<u8>>,
    /// Riot allowed this command without asking anyone (a read-only
    /// command, the sandbox's auto-allow): inside the OS sandbox it may
    /// change only what a rewind can restore, so the project's `.git` is
    /// read-only to it (docs/sandbox.md). Runners without a sandbox
    /// ignore it.
    pub undoable_only: bool,
}

/// Output kept per stream: the first `head_bytes` and the last
/// `tail_bytes`; what lies between is counted, not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureLimit {
    pub head_bytes: usize,
    pub tail_bytes: usize,
}

impl Default for CaptureLimit {
    fn default() -> Self {
        Self {
            head_bytes: 64 * 1024,
            tail_bytes: 64 * 1024,
        }
    }
}

/// One stream's captured output (decoded lossily: process output is shown,
/// never written back to a file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    pub head: String,
    pub tail: String,
    /// Bytes the process wrote in total.
    pub total_bytes: u64,
    /// Bytes between head and tail that were not kept.
    pub omitted_bytes: u64,
    /// The beginning was dropped before Riot saw the output (an editor's
    /// terminal keeps only its last bytes), by an amount nobody reported:
    /// `total_bytes` counts only what was kept, and `head` says so.
    pub beginning_cut: bool,
}

impl CapturedOutput {
    /// Whether anything was cut.
    pub fn truncated(&self) -> bool {
        self.omitted_bytes > 0 || self.beginning_cut
    }
}

/// How a process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessOutput {
    /// Exit code, `None` when killed by a signal.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub timed_out: bool,
    pub cancelled: bool,
}

/// Receives output as it arrives (for `Progress` events).
pub type OutputCallback = Arc<dyn Fn(OutputStream, &[u8]) + Send + Sync>;

/// A process could not be started or supervised.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no background job `{0}`")]
    UnknownJob(String),
    #[error("running processes is not available here")]
    Unavailable,
    #[error("process supervision failed: {0}")]
    Io(#[from] std::io::Error),
    /// The command was started but how it ended could not be read (the
    /// [`CommandHost`] running it stopped answering): it may have run.
    #[error("{0}")]
    ResultLost(String),
}

/// New output of a background job since the last read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackgroundOutput {
    pub stdout: String,
    pub stderr: String,
    /// `None` while running.
    pub exit_code: Option<i32>,
    pub running: bool,
    /// Output dropped because it was not read in time.
    pub dropped_bytes: u64,
}

/// Runs subprocesses.
#[async_trait]
pub trait ProcessRunner: Send + Sync + std::fmt::Debug {
    /// Runs to completion, timeout or cancellation (which kill the process
    /// group and still return the output so far).
    async fn run(
        &self,
        spec: ProcessSpec,
        cancel: CancellationToken,
        on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError>;

    /// Starts a background job and returns its id.
    async fn spawn_background(&self, spec: ProcessSpec) -> Result<String, ProcessError>;

    /// New output of a background job.
    async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError>;

    /// Kills a background job's process group.
    async fn kill_background(&self, id: &str) -> Result<(), ProcessError>;

    /// `spec` as this runner would start it: a sandboxed runner's rewrite
    /// (bubblewrap or the helper in front of the command), the spec itself
    /// for a plain runner. What a [`CommandHost`] is handed, so a command
    /// run elsewhere stays in the sandbox. No default: a runner that
    /// wraps another must pass its own change (the settings' `env`, the
    /// sandbox) on, or the command would run without it.
    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec;
}

/// Runs a tool call's foreground command somewhere other than Riot's own
/// runner: riot-acp's host runs it in the editor's terminal (ACP
/// `terminal/create`) so the person sees it where they work. The spec is
/// already [`ProcessRunner::prepare`]d; the host honours its timeout and
/// the cancellation like [`ProcessRunner::run`], and returns what the
/// command printed (stdout and stderr together, as a terminal shows them)
/// in [`ProcessOutput::stdout`]. Once the command started, a failure to
/// learn how it ended is [`ProcessError::ResultLost`], never a failure to
/// start it.
#[async_trait]
pub trait CommandHost: Send + Sync + std::fmt::Debug {
    /// Runs `spec` for the tool call `tool_use_id` to completion, timeout
    /// or cancellation.
    async fn run(
        &self,
        tool_use_id: &str,
        spec: ProcessSpec,
        cancel: CancellationToken,
    ) -> Result<ProcessOutput, ProcessError>;
}
