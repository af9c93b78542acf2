#![allow(clippy::disallowed_methods)] // test fixtures: set up and inspect files in a temp dir directly

//! Test doubles for tools and the scheduler, public behind the `testing`
//! feature so other crates' tests use the same ones (docs/design.md §6.7).
//!
//! - [`NullProc`]: a process runner that runs nothing; [`NullFs`]: a file
//!   system with nothing in it; [`null_env`]: both, with a fixed clock.
//! - [`FixedClock`]: time that moves only when slept on (`sleep_ms`
//!   advances it without sleeping).
//! - [`TempProject`]: a temp directory with a real file system, real
//!   processes, a fixed clock and sequential ids, and [`TempProject::ctx`]
//!   for a [`ToolContext`] over it.
//! - [`ScriptedPolicy`] and [`ScriptedGate`]: a permission chain and a
//!   person that answer from a script and record what they were asked.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
pub use riot_protocol::FixedClock;
/// No terminals: the Terminal tool is not declared ([`crate::declared`]).
pub use riot_protocol::NoTerminals;
use riot_protocol::process::OutputCallback;
use riot_protocol::{
    BackgroundOutput, DecisionReason, IdGen, PermissionGate, PermissionMode, PermissionOutcome,
    PermissionPolicy, PermissionQuery, PermissionRequestDetail, PermissionResult, PermissionRule,
    ProcessError, ProcessOutput, ProcessRunner, ProcessSpec, RequestId, SequentialIds, ToolContext,
    ToolEnv, ToolUseId,
};
use tokio_util::sync::CancellationToken;

/// A process runner for tools that run no processes: every call is
/// `Unavailable`.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullProc;

#[async_trait]
impl ProcessRunner for NullProc {
    async fn run(
        &self,
        _spec: ProcessSpec,
        _cancel: CancellationToken,
        _on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        Err(ProcessError::Unavailable)
    }

    async fn spawn_background(&self, _spec: ProcessSpec) -> Result<String, ProcessError> {
        Err(ProcessError::Unavailable)
    }

    async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError> {
        Err(ProcessError::UnknownJob(id.to_owned()))
    }

    async fn kill_background(&self, id: &str) -> Result<(), ProcessError> {
        Err(ProcessError::UnknownJob(id.to_owned()))
    }

    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec {
        spec
    }
}

/// A file system with nothing in it, for tools that touch no files: reads
/// are `NotFound`, writes are refused.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullFs;

fn no_fs<T>() -> std::io::Result<T> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "no file system in this test",
    ))
}

#[async_trait]
impl riot_protocol::FileSystem for NullFs {
    async fn read(&self, _path: &Path) -> std::io::Result<Vec<u8>> {
        no_fs()
    }
    async fn metadata(&self, _path: &Path) -> std::io::Result<riot_protocol::FileMeta> {
        no_fs()
    }
    async fn symlink_metadata(&self, _path: &Path) -> std::io::Result<riot_protocol::FileMeta> {
        no_fs()
    }
    async fn write_atomic(&self, _path: &Path, _contents: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "no file system in this test",
        ))
    }
    async fn create_dir_all(&self, _path: &Path) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "no file system in this test",
        ))
    }
    async fn remove_file(&self, _path: &Path) -> std::io::Result<()> {
        no_fs()
    }
    async fn canonicalize(&self, _path: &Path) -> std::io::Result<PathBuf> {
        no_fs()
    }
    async fn read_dir(&self, _path: &Path) -> std::io::Result<Vec<riot_protocol::DirEntry>> {
        no_fs()
    }
}

/// An environment of null capabilities (docs/design.md §6.7): [`NullFs`],
/// [`NullProc`], a [`FixedClock`], sequential ids, no web, browser,
/// terminal or vision. For tools that do not touch the world.
pub fn null_env(clock: FixedClock) -> ToolEnv {
    ToolEnv::new(
        PathBuf::from("/project"),
        PathBuf::from("/project/.riot-spill"),
        Arc::new(NullFs),
        Arc::new(NullProc),
        Arc::new(clock),
        Arc::new(SequentialIds::default()),
    )
}

/// A context for one call over `env`, in default mode, not cancelled.
pub fn context(env: Arc<ToolEnv>) -> ToolContext {
    ToolContext {
        env,
        tool_use_id: ToolUseId::new("toolu_test"),
        mode: PermissionMode::Default,
        allowed_by: riot_protocol::AllowedBy::Riot,
        cancel: CancellationToken::new(),
        progress: None,
    }
}

/// A temp directory as the project, with real file system and processes,
/// a [`FixedClock`] and [`SequentialIds`]. Removed when dropped.
#[derive(Debug)]
pub struct TempProject {
    dir: tempfile::TempDir,
    pub env: Arc<ToolEnv>,
    pub clock: FixedClock,
}

impl TempProject {
    /// A fresh project; panics only if no temp dir can be made.
    #[allow(clippy::expect_used)] // test fixture: no temp dir means no test
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("create a temp dir");
        // Canonical, so paths the tools resolve compare equal.
        let root = std::fs::canonicalize(dir.path()).expect("canonicalize the temp dir");
        Self::with_root(dir, root, Vec::new(), None)
    }

    /// A project whose person's home directory (for `~/` paths) is `home`.
    #[allow(clippy::expect_used)] // test fixture
    pub fn with_home(home: &Path) -> Self {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonicalize the temp dir");
        Self::with_root(dir, root, Vec::new(), Some(home.to_path_buf()))
    }

    /// A project whose subprocess environment drops `scrubbed`.
    #[allow(clippy::expect_used)] // test fixture
    pub fn with_scrubbed_env(scrubbed: Vec<String>) -> Self {
        let dir = tempfile::tempdir().expect("create a temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonicalize the temp dir");
        Self::with_root(dir, root, scrubbed, None)
    }

    fn with_root(
        dir: tempfile::TempDir,
        root: PathBuf,
        scrubbed: Vec<String>,
        home: Option<PathBuf>,
    ) -> Self {
        let clock = FixedClock::new();
        let ids: Arc<dyn IdGen> = Arc::new(SequentialIds::default());
        let mut env = ToolEnv::new(
            root.clone(),
            root.join(".riot-spill"),
            Arc::new(riot_runtime::RealFs),
            Arc::new(riot_runtime::RealProcessRunner::new()),
            Arc::new(clock.clone()),
            ids,
        );
        env.scrubbed_env = scrubbed;
        env.home = home;
        Self {
            dir,
            env: Arc::new(env),
            clock,
        }
    }

    /// The project directory (canonical).
    pub fn root(&self) -> &Path {
        &self.env.cwd
    }

    /// The temp dir handle (kept so the directory lives as long as this).
    pub fn temp_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` under the project.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Writes a file directly (as the person or another program would).
    #[allow(clippy::expect_used)] // test fixture
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&path, bytes).expect("write fixture file");
    }

    /// A file's bytes as they are on disk.
    #[allow(clippy::expect_used)] // test fixture
    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).expect("read fixture file")
    }

    /// A context for one call in this project.
    pub fn ctx(&self) -> ToolContext {
        context(Arc::clone(&self.env))
    }
}

impl Default for TempProject {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A permission chain answering from a script: per tool name, else the
/// default (Allow). Records every query and every remembered rule.
#[derive(Debug)]
pub struct ScriptedPolicy {
    default: PermissionResult,
    per_tool: Mutex<Vec<(String, PermissionResult)>>,
    pub queries: Mutex<Vec<PermissionQuery>>,
    pub remembered: Mutex<Vec<PermissionRule>>,
    /// The rule "always" may offer for every question (none by default).
    offer: Option<String>,
}

impl ScriptedPolicy {
    /// Allows everything.
    pub fn allow_all() -> Self {
        Self::with_default(PermissionResult::Allow {
            reason: DecisionReason::Mode {
                detail: "test policy allows everything".into(),
                mode: PermissionMode::Bypass,
            },
            updated_input: None,
        })
    }

    /// Answers `default` unless a tool has its own answer.
    pub fn with_default(default: PermissionResult) -> Self {
        Self {
            default,
            per_tool: Mutex::new(Vec::new()),
            queries: Mutex::new(Vec::new()),
            remembered: Mutex::new(Vec::new()),
            offer: None,
        }
    }

    /// Offers `rule` as the "always" rule of every question.
    pub fn offering(mut self, rule: &str) -> Self {
        self.offer = Some(rule.to_owned());
        self
    }

    /// Answers `result` for every call of `tool`.
    pub fn set(self, tool: &str, result: PermissionResult) -> Self {
        lock(&self.per_tool).push((tool.to_owned(), result));
        self
    }

    /// An Ask with a consent reason.
    pub fn ask(message: &str) -> PermissionResult {
        PermissionResult::Ask {
            reason: DecisionReason::Consent {
                detail: message.to_owned(),
            },
            message: message.to_owned(),
        }
    }

    /// A Deny with a mode reason.
    pub fn deny(message: &str) -> PermissionResult {
        PermissionResult::Deny {
            reason: DecisionReason::Mode {
                detail: message.to_owned(),
                mode: PermissionMode::Plan,
            },
            message: message.to_owned(),
        }
    }

    pub fn remembered(&self) -> Vec<PermissionRule> {
        lock(&self.remembered).clone()
    }

    pub fn queries(&self) -> Vec<PermissionQuery> {
        lock(&self.queries).clone()
    }
}

#[async_trait]
impl PermissionPolicy for ScriptedPolicy {
    async fn decide(&self, query: &PermissionQuery) -> PermissionResult {
        lock(&self.queries).push(query.clone());
        lock(&self.per_tool)
            .iter()
            .rev()
            .find(|(tool, _)| *tool == query.tool_name)
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| self.default.clone())
    }

    fn remember(&self, rule: PermissionRule) {
        lock(&self.remembered).push(rule);
    }

    fn suggest_rule(&self, _query: &PermissionQuery, _asked: &PermissionResult) -> Option<String> {
        self.offer.clone()
    }
}

/// What a [`ScriptedGate`] does when asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateAnswer {
    Answer(PermissionOutcome),
    /// Never answers (to test the timeout and cancellation).
    Silence,
}

/// A person answering permission questions from a script (then AllowOnce),
/// or nobody at all ([`ScriptedGate::nobody`]).
#[derive(Debug)]
pub struct ScriptedGate {
    can_answer: bool,
    /// Cancelled when a question is asked (the person presses stop while
    /// the dialog is open).
    cancel_on_ask: Mutex<Option<riot_protocol::CancelScope>>,
    answers: Mutex<VecDeque<GateAnswer>>,
    pub asked: Mutex<Vec<(RequestId, PermissionRequestDetail)>>,
}

impl ScriptedGate {
    /// Answers in order, then AllowOnce.
    pub fn answering(answers: Vec<GateAnswer>) -> Self {
        Self {
            can_answer: true,
            cancel_on_ask: Mutex::new(None),
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// Nobody can answer (like `riot exec`).
    pub fn nobody() -> Self {
        Self {
            can_answer: false,
            cancel_on_ask: Mutex::new(None),
            answers: Mutex::new(VecDeque::new()),
            asked: Mutex::new(Vec::new()),
        }
    }

    /// Cancels `scope` whenever a question is asked, before answering.
    pub fn cancelling_on_ask(self, scope: riot_protocol::CancelScope) -> Self {
        *lock(&self.cancel_on_ask) = Some(scope);
        self
    }

    pub fn asked(&self) -> Vec<(RequestId, PermissionRequestDetail)> {
        lock(&self.asked).clone()
    }
}

#[async_trait]
impl PermissionGate for ScriptedGate {
    fn can_answer(&self) -> bool {
        self.can_answer
    }

    async fn ask(
        &self,
        request_id: RequestId,
        detail: PermissionRequestDetail,
    ) -> PermissionOutcome {
        lock(&self.asked).push((request_id, detail));
        if let Some(scope) = lock(&self.cancel_on_ask).as_ref() {
            scope.cancel(riot_protocol::CancelReason::User);
        }
        let next = lock(&self.answers).pop_front();
        match next {
            Some(GateAnswer::Answer(outcome)) => outcome,
            None => PermissionOutcome::AllowOnce,
            Some(GateAnswer::Silence) => futures::future::pending().await,
        }
    }
}

/// The text a model would read from an outcome: the joined text blocks of
/// `Ok` (a document counted as its text), the error of `Failed`,
/// `"<cancelled>"` for `Cancelled`.
pub fn text_of(outcome: &riot_protocol::ToolOutcome) -> String {
    match outcome {
        riot_protocol::ToolOutcome::Ok { model_content, .. } => model_content
            .iter()
            .filter_map(|c| match c {
                riot_protocol::ToolResultContent::Text { text }
                | riot_protocol::ToolResultContent::Document { text, .. } => Some(text.as_str()),
                riot_protocol::ToolResultContent::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        riot_protocol::ToolOutcome::Failed {
            error_for_model, ..
        } => error_for_model.clone(),
        riot_protocol::ToolOutcome::Cancelled => "<cancelled>".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riot_protocol::Clock;

    #[tokio::test]
    async fn null_capabilities_do_nothing_and_the_clock_does_not_wait() {
        let clock = FixedClock::at(1_000);
        let env = null_env(clock.clone());
        let spec = ProcessSpec {
            program: "true".into(),
            args: vec![],
            cwd: env.cwd.clone(),
            env_set: vec![],
            env_remove: vec![],
            timeout_ms: None,
            capture: riot_protocol::CaptureLimit::default(),
            stdin: None,
            undoable_only: false,
        };
        assert!(matches!(
            env.proc.run(spec, CancellationToken::new(), None).await,
            Err(ProcessError::Unavailable)
        ));
        assert!(env.fs.read(Path::new("/project/a")).await.is_err());
        env.clock.sleep_ms(5_000).await;
        assert_eq!(clock.now_ms(), 6_000);
    }
}
