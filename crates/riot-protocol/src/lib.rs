//! # riot-protocol — the contract every Riot crate compiles against
//!
//! This crate holds the types that cross crate and process boundaries:
//! typed ids ([`ids`]), conversation [`message`]s, model prices and a
//! session's running [`cost`], the session [`event`]
//! stream, the provider-neutral model interface ([`provider`]), the
//! [`tool`] trait with its outcomes and context, [`permission`] types, the
//! [`runner`] seams between loop, scheduler, permission chain and person,
//! the [`cancel`]lation tree,
//! structured UI payloads ([`ui`]), and the capability traits through which
//! the deterministic crates touch the world ([`fs`], [`process`], [`clock`],
//! [`web`], [`devices`], [`terminal`], the language servers of
//! [`diagnostics`]). [`invariants`] holds the checks more than one crate
//! needs.
//!
//! It deliberately contains no behaviour beyond small helpers on its own
//! types: no agent loop, no HTTP, no file access. It depends on no workspace
//! crate (docs/design.md §3).
//!
//! Wire types derive `JsonSchema`; `cargo run -p riot-protocol --bin
//! gen-schema` writes `schemas/*.json`, from which the UI's TypeScript types
//! are generated.
//!
//! ```
//! use riot_protocol::{AgentEvent, TerminalReason};
//!
//! let done = AgentEvent::Done { reason: TerminalReason::Completed };
//! let json = serde_json::to_string(&done).unwrap();
//! assert_eq!(json, r#"{"type":"done","reason":{"type":"completed"}}"#);
//! ```

pub mod cancel;
pub mod clock;
pub mod cost;
pub mod devices;
pub mod diagnostics;
pub mod event;
pub mod file_state;
pub mod fs;
pub mod ids;
pub mod invariants;
pub mod message;
pub mod permission;
pub mod process;
pub mod provider;
pub mod runner;
pub mod sandbox;
pub mod schema;
pub mod terminal;
pub mod tool;
pub mod ui;
pub mod web;

pub use cancel::{CancelReason, CancelScope};
pub use clock::{Clock, ClockExt, Elapsed, FixedClock, civil_from_days, days_from_civil};
pub use cost::{LongPromptPrice, Price, SessionCost, format_usd};
pub use devices::{
    Browser, BrowserAction, BrowserError, BrowserHost, BrowserOptions, BrowserResult,
    BrowserTarget, NoBrowser, NoBrowserHost, NoVision, Unavailable, Vision,
};
pub use diagnostics::{
    CheckError, CheckFormat, ChecksSettingError, Diagnostic, DiagnosticCheck, EditDiagnostics,
    LanguageServerHost, LanguageServers, LspServerSetting, LspSettingError, LspSettings, Severity,
};
pub use event::{
    AbortSource, AgentError, AgentEvent, CompactionStrategy, ErrorKind, StreamDelta,
    TerminalReason, Transition, Usage,
};
pub use file_state::{FileState, FileStateStore, FileView};
pub use fs::{DirEntry, FileKind, FileMeta, FileSystem};
pub use ids::{AgentId, IdGen, IdKind, MessageId, RequestId, SequentialIds, SessionId, ToolUseId};
pub use message::{
    AssistantBlock, AssistantMessage, ImageSource, Message, MessageOrigin, SearchShown, StopReason,
    SystemLevel, SystemMessage, ToolResultContent, ToolResultUi, UserBlock, UserMessage,
};
pub use permission::{
    DecisionReason, PermissionAnswer, PermissionMode, PermissionOutcome, PermissionRequestDetail,
    PermissionResult, PermissionRule, RuleBehavior, RulePattern, RuleSource,
};
pub use process::{
    BackgroundOutput, CaptureLimit, CapturedOutput, CommandHost, ProcessError, ProcessOutput,
    ProcessRunner, ProcessSpec,
};
pub use provider::{
    CacheHints, CachingStyle, MAX_RETRY_WAIT_MS, ModelCapabilities, ModelRequest, Provider,
    ProviderError, ProviderErrorKind, ProviderEvent, ProviderStream, ReasoningReplay, ServerTool,
    SystemPrompt, ThinkingConfig, ThinkingLevel, ToolSpec,
};
pub use runner::{
    ExecuteOptions, HookDecisionKind, HookPermission, HookVerdict, NoToolHooks, PermissionGate,
    PermissionPolicy, PermissionQuery, Question, QuestionOption, QuestionOutcome, QuestionRequest,
    ToolCall, ToolCallResult, ToolHooks, ToolRunEvent, ToolRunner,
};
pub use sandbox::{
    NoSandbox, Sandbox, SandboxMechanism, SandboxPolicy, SandboxStatus, SandboxedSession,
    SpecRewrite,
};
pub use terminal::{
    NoTerminals, TerminalError, TerminalExit, TerminalForeground, TerminalHost, TerminalInfo,
    TerminalSink, TerminalSize, TerminalSpec, TerminalUpdate, TerminalView, Terminals, Typist,
    WaitEnd,
};
pub use tool::{
    AllowedBy, DynTool, InterruptBehavior, PathAccess, PermissionTarget, PreparedCall,
    PromptContext, ResultBudget, Tool, ToolContext, ToolEnv, ToolOutcome, ValidationError,
};
pub use ui::{
    DiffHunk, DiffLine, DiffLineKind, NotebookCell, OutputStream, ProgressPayload, SearchMatch,
    Todo, TodoStatus, UiPayload, WebResult,
};
pub use web::{
    AddressClass, NoWeb, Web, WebError, WebRequest, WebResponse, classify_address, classify_all,
};
