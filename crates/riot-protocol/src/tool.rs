//! The `Tool` trait (docs/design.md §6.1) and what a call returns (§6.2).
//!
//! A tool implements [`Tool`] with a typed `Input`. The scheduler works with
//! the object-safe [`DynTool`], implemented for every `Tool`, which parses
//! the model's JSON once into a [`PreparedCall`] that carries the typed input
//! through validation, permission and execution.
//!
//! Every method without a default must be written; every default is the
//! fail-closed choice, so forgetting one is safe: a tool is assumed to
//! write, to be unsafe to run in parallel and to need permission.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::devices::{Browser, NoBrowser, NoVision, Vision};
use crate::file_state::FileStateStore;
use crate::fs::FileSystem;
use crate::ids::{IdGen, ToolUseId};
use crate::message::{Message, ToolResultContent};
use crate::permission::{PermissionMode, PermissionResult};
use crate::process::ProcessRunner;
use crate::terminal::{NoTerminals, Terminals};
use crate::ui::{ProgressPayload, UiPayload};
use crate::web::{NoWeb, Web};

/// The default result budget in characters (docs/design.md §6.1).
pub const DEFAULT_RESULT_BUDGET: usize = 50_000;

/// A built-in or extension tool.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The typed input; structural validation is its `Deserialize` (with
    /// `#[serde(deny_unknown_fields)]`).
    type Input: DeserializeOwned + Send + Sync + 'static;

    /// The name the model calls (runtime names for MCP tools).
    fn name(&self) -> &str;

    /// JSON Schema of `Input` (from `schemars`).
    fn input_schema(&self) -> Value;

    /// The full model-facing description: what the tool does, how it differs
    /// from its neighbours, and a NEVER list.
    fn prompt(&self, cx: &PromptContext) -> String;

    /// One short line for people, e.g. "Read src/main.rs".
    fn describe(&self, input: &Self::Input) -> String;

    /// Runs the call. Errors are outcomes, not `Err`.
    async fn call(&self, input: Self::Input, ctx: &ToolContext) -> ToolOutcome;

    /// True only if the call can neither run arbitrary code nor change any
    /// state. Read-only calls are allowed in every mode, so a wrong `true`
    /// is a hole.
    fn is_read_only(&self, _input: &Self::Input) -> bool {
        false
    }

    /// Whether this call may run in a parallel batch.
    fn is_concurrency_safe(&self, _input: &Self::Input) -> bool {
        false
    }

    /// Only shell-like tools, whose calls have hidden dependencies, cancel
    /// their batch siblings when they fail.
    fn cascades_on_failure(&self) -> bool {
        false
    }

    /// One line for the auto-mode classifier; `None` means auto mode always
    /// asks a person about this tool.
    fn classifier_input(&self, _input: &Self::Input) -> Option<String> {
        None
    }

    /// Results over the budget are spilled to a file with a preview.
    fn result_budget(&self) -> ResultBudget {
        ResultBudget::Limit(DEFAULT_RESULT_BUDGET)
    }

    /// What the permission chain matches rules and safety checks against.
    /// `Opaque` gives rules nothing to match but the tool name.
    fn permission_target(&self, _input: &Self::Input, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Opaque
    }

    /// Tool-specific permission logic. An `Allow` here does not skip the
    /// safety checks; return a verdict only for real tool-specific logic.
    async fn check_permissions(
        &self,
        _input: &Self::Input,
        _ctx: &ToolContext,
    ) -> PermissionResult {
        PermissionResult::Passthrough
    }

    /// Semantic checks: does the file exist, was it read, do the arguments
    /// make sense together.
    async fn validate_input(
        &self,
        _input: &Self::Input,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        Ok(())
    }

    /// What the call will do, for the permission question about it
    /// (`PermissionRequestDetail::preview`): a file tool's diff against
    /// the file as it is now. Asked only when a question is; `None` (the
    /// default) when the input itself says what will happen.
    async fn preview(&self, _input: &Self::Input, _ctx: &ToolContext) -> Option<UiPayload> {
        None
    }

    /// What an interrupt does to a running call.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    /// A tool most sessions never need (Browser): only its name is listed,
    /// in ToolSearch's description, until the model loads it, like MCP
    /// tools that would fill the context window (docs/design.md §6.7).
    fn deferred(&self) -> bool {
        false
    }
}

/// What the permission chain looks at for a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionTarget {
    /// Nothing beyond the tool name.
    Opaque,
    /// A file-system path, absolute (resolved against the project).
    Path { path: PathBuf, access: PathAccess },
    /// A shell command.
    Command { command: String },
    /// A URL to fetch.
    Url { url: String },
}

/// Whether a path is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    Read,
    Write,
}

/// A result size limit in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultBudget {
    Limit(usize),
    /// Read-type tools (else Read → spill file → Read loops) and tools that
    /// truncate themselves.
    Unlimited,
}

/// What an interrupt does to a running call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptBehavior {
    /// Cancel it.
    Cancel,
    /// Let it finish: it must not be torn mid-write.
    Block,
}

/// A semantic validation failure, worded as an imperative correction for
/// the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    pub message: String,
    /// A stable machine-readable reason (`not_read`, `changed_since_read`)
    /// for faces and tests.
    pub code: Option<&'static str>,
}

impl ValidationError {
    /// The input is rejected; `message` tells the model what to do instead.
    pub fn rejected(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: None,
        }
    }

    /// Attaches a stable reason code.
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }
}

/// What a call produced. Not a `Result`: inside a tool `?` is fine, the
/// boundary converts errors to `Failed`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    Ok {
        /// What the model reads.
        model_content: Vec<ToolResultContent>,
        /// What people see (independent of `model_content`).
        ui_payload: Option<UiPayload>,
        /// Messages to append after the tool results.
        side_messages: Vec<Message>,
    },
    Failed {
        /// An imperative correction, never a debug dump.
        error_for_model: String,
        ui_payload: Option<UiPayload>,
    },
    Cancelled,
}

impl ToolOutcome {
    /// A successful text result.
    pub fn text(text: impl Into<String>, ui_payload: Option<UiPayload>) -> Self {
        ToolOutcome::Ok {
            model_content: vec![ToolResultContent::text(text)],
            ui_payload,
            side_messages: Vec::new(),
        }
    }

    /// A failed result.
    pub fn failed(error_for_model: impl Into<String>) -> Self {
        ToolOutcome::Failed {
            error_for_model: error_for_model.into(),
            ui_payload: None,
        }
    }

    /// Whether the call failed (a cancellation is not a failure).
    pub fn is_failed(&self) -> bool {
        matches!(self, ToolOutcome::Failed { .. })
    }
}

/// What a tool may know when writing its prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptContext {
    pub cwd: PathBuf,
    /// e.g. `linux`.
    pub platform: String,
    /// Names of every tool declared in this session, in order.
    pub tool_names: Vec<String>,
    /// A small context window (docs/windows.md): tools that are declared
    /// up front write a compact prompt — what the tool is for, its fields
    /// and the rules a model breaks most — instead of the full one.
    pub compact: bool,
}

impl PromptContext {
    /// Whether a neighbouring tool is declared (prompts only mention tools
    /// the model can call).
    pub fn has_tool(&self, name: &str) -> bool {
        self.tool_names.iter().any(|t| t == name)
    }
}

/// Receives a running tool's progress.
pub type ProgressSink = Arc<dyn Fn(ProgressPayload) + Send + Sync>;

/// Session-wide capabilities and state every call shares.
#[derive(Debug)]
pub struct ToolEnv {
    /// The project directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Where over-budget results and other session files are written.
    pub spill_dir: PathBuf,
    pub fs: Arc<dyn FileSystem>,
    /// Runs commands; in the OS sandbox when it is enforced.
    pub proc: Arc<dyn ProcessRunner>,
    /// The same runner outside the sandbox, for a Bash call the person
    /// allowed to leave it (`dangerouslyDisableSandbox`); `None` when
    /// `proc` is not sandboxed.
    pub unsandboxed_proc: Option<Arc<dyn ProcessRunner>>,
    /// Where Bash runs its foreground commands instead of `proc` (the
    /// editor's terminals, when an ACP client offers them); the command is
    /// first rewritten by the runner it would have used
    /// ([`ProcessRunner::prepare`]), so the sandbox still holds. `None`:
    /// Riot runs them itself.
    pub command_host: Option<Arc<dyn crate::process::CommandHost>>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    pub web: Arc<dyn Web>,
    pub browser: Arc<dyn Browser>,
    /// The session's terminals (`NoTerminals`: the Terminal tool is not
    /// declared).
    pub terminals: Arc<dyn Terminals>,
    pub vision: Arc<dyn Vision>,
    /// What this session has read (read-before-write).
    pub file_state: Arc<FileStateStore>,
    /// Variables removed from subprocess environments (model API keys).
    pub scrubbed_env: Vec<String>,
    /// The person's home directory: a model-supplied path starting with
    /// `~/` (or a lone `~`) names a place in it. `None`: `~` is not
    /// expanded.
    pub home: Option<PathBuf>,
    /// The `diagnostics.checks` setting: the checkers Diagnostics runs
    /// instead of the ones it detects; empty means detect.
    pub diagnostic_checks: Vec<crate::diagnostics::DiagnosticCheck>,
}

impl ToolEnv {
    /// `path` with a leading `~/` (or a lone `~`) replaced by the home
    /// directory; `None` when it has no such start or the home is unknown.
    /// `~user/` forms are not expanded.
    pub fn expand_home(&self, path: &str) -> Option<PathBuf> {
        let home = self.home.as_ref()?;
        if path == "~" {
            return Some(home.clone());
        }
        let rest = path.strip_prefix("~/")?;
        Some(home.join(rest.trim_start_matches('/')))
    }
}

impl ToolEnv {
    /// An environment with the given core capabilities and no web, browser,
    /// terminal or vision.
    pub fn new(
        cwd: PathBuf,
        spill_dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        proc: Arc<dyn ProcessRunner>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
    ) -> Self {
        Self {
            cwd,
            spill_dir,
            fs,
            proc,
            unsandboxed_proc: None,
            command_host: None,
            clock,
            ids,
            web: Arc::new(NoWeb),
            browser: Arc::new(NoBrowser),
            terminals: Arc::new(NoTerminals),
            vision: Arc::new(NoVision),
            file_state: Arc::new(FileStateStore::default()),
            scrubbed_env: Vec::new(),
            home: None,
            diagnostic_checks: Vec::new(),
        }
    }
}

/// Who let a call run. The OS sandbox keeps what a rewind cannot restore
/// out of reach of the calls Riot allowed on its own (docs/sandbox.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllowedBy {
    /// Riot's own judgement, nobody asked: a read-only call, or a command
    /// the enforced sandbox let run. The fail-closed default.
    #[default]
    Riot,
    /// The person: an answered question, their rule or hook, a mode they
    /// chose (bypass), or the auto-mode classifier they turned on.
    Person,
}

impl AllowedBy {
    /// Who allowed a call the permission chain answered `Allow` with
    /// `reason` (no question asked).
    pub fn of(reason: &crate::DecisionReason) -> Self {
        use crate::{DecisionReason as R, PermissionMode as M};
        match reason {
            R::Rule { .. } | R::Hook { .. } | R::User { .. } | R::Classifier { .. } => Self::Person,
            R::Mode {
                mode: M::Bypass | M::Unattended,
                ..
            } => Self::Person,
            R::Mode { .. }
            | R::Sandbox { .. }
            | R::Safety { .. }
            | R::Unverifiable { .. }
            | R::Consent { .. }
            | R::NoAnswer { .. } => Self::Riot,
        }
    }
}

/// Everything one call may use.
#[derive(Clone)]
pub struct ToolContext {
    pub env: Arc<ToolEnv>,
    pub tool_use_id: ToolUseId,
    pub mode: PermissionMode,
    /// Who let this call run (set by the scheduler once the permission
    /// chain and the person have answered).
    pub allowed_by: AllowedBy,
    /// Cancelled on interrupt, sibling failure or shutdown.
    pub cancel: CancellationToken,
    pub progress: Option<ProgressSink>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("tool_use_id", &self.tool_use_id)
            .field("mode", &self.mode)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// Reports progress if anyone listens.
    pub fn report(&self, payload: ProgressPayload) {
        if let Some(sink) = &self.progress {
            sink(payload);
        }
    }

    /// Resolves a model-supplied path: absolute as given, `~/…` in the
    /// home directory ([`ToolEnv::expand_home`]), anything else against
    /// the project directory.
    pub fn resolve(&self, path: &str) -> PathBuf {
        if let Some(expanded) = self.env.expand_home(path) {
            return expanded;
        }
        let p = std::path::Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.env.cwd.join(p)
        }
    }
}

/// The object-safe face of a [`Tool`], used by registries and the scheduler.
pub trait DynTool: Send + Sync + 'static {
    fn name(&self) -> &str;
    fn input_schema(&self) -> Value;
    fn prompt(&self, cx: &PromptContext) -> String;
    fn cascades_on_failure(&self) -> bool;
    fn result_budget(&self) -> ResultBudget;
    fn interrupt_behavior(&self) -> InterruptBehavior;
    fn deferred(&self) -> bool;

    /// Parses the model's JSON once. A structural error is returned as the
    /// serde error so the scheduler can translate it into guidance.
    fn prepare(self: Arc<Self>, input: Value) -> Result<Box<dyn PreparedCall>, serde_json::Error>;
}

/// A call whose input parsed; carries it through the pipeline.
#[async_trait]
pub trait PreparedCall: Send + Sync {
    fn describe(&self) -> String;
    fn is_read_only(&self) -> bool;
    fn is_concurrency_safe(&self) -> bool;
    fn classifier_input(&self) -> Option<String>;
    fn permission_target(&self, ctx: &ToolContext) -> PermissionTarget;
    async fn validate_input(&self, ctx: &ToolContext) -> Result<(), ValidationError>;
    async fn check_permissions(&self, ctx: &ToolContext) -> PermissionResult;
    /// See [`Tool::preview`].
    async fn preview(&self, ctx: &ToolContext) -> Option<UiPayload>;
    async fn call(self: Box<Self>, ctx: &ToolContext) -> ToolOutcome;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        Tool::name(self)
    }

    fn input_schema(&self) -> Value {
        Tool::input_schema(self)
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        Tool::prompt(self, cx)
    }

    fn cascades_on_failure(&self) -> bool {
        Tool::cascades_on_failure(self)
    }

    fn deferred(&self) -> bool {
        Tool::deferred(self)
    }

    fn result_budget(&self) -> ResultBudget {
        Tool::result_budget(self)
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        Tool::interrupt_behavior(self)
    }

    fn prepare(self: Arc<Self>, input: Value) -> Result<Box<dyn PreparedCall>, serde_json::Error> {
        let input: T::Input = serde_json::from_value(input)?;
        Ok(Box::new(Prepared { tool: self, input }))
    }
}

struct Prepared<T: Tool> {
    tool: Arc<T>,
    input: T::Input,
}

#[async_trait]
impl<T: Tool> PreparedCall for Prepared<T> {
    fn describe(&self) -> String {
        self.tool.describe(&self.input)
    }

    fn is_read_only(&self) -> bool {
        self.tool.is_read_only(&self.input)
    }

    fn is_concurrency_safe(&self) -> bool {
        self.tool.is_concurrency_safe(&self.input)
    }

    fn classifier_input(&self) -> Option<String> {
        self.tool.classifier_input(&self.input)
    }

    fn permission_target(&self, ctx: &ToolContext) -> PermissionTarget {
        self.tool.permission_target(&self.input, ctx)
    }

    async fn validate_input(&self, ctx: &ToolContext) -> Result<(), ValidationError> {
        self.tool.validate_input(&self.input, ctx).await
    }

    async fn check_permissions(&self, ctx: &ToolContext) -> PermissionResult {
        self.tool.check_permissions(&self.input, ctx).await
    }

    async fn preview(&self, ctx: &ToolContext) -> Option<UiPayload> {
        self.tool.preview(&self.input, ctx).await
    }

    async fn call(self: Box<Self>, ctx: &ToolContext) -> ToolOutcome {
        let Prepared { tool, input } = *self;
        tool.call(input, ctx).await
    }
}
