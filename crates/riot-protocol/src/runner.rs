//! The seam between the agent loop (`riot-core`) and tool execution
//! (`riot-tools`' scheduler), and between the scheduler and the permission
//! chain (`riot-permissions`) and the person (a face). Traits here keep the
//! crates independent: the kernel wires the implementations together.

use async_trait::async_trait;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::cancel::CancelScope;
use crate::event::AgentEvent;
use crate::ids::{RequestId, ToolUseId};
use crate::message::{Message, ToolResultContent, ToolResultUi};
use crate::permission::{
    PermissionMode, PermissionOutcome, PermissionRequestDetail, PermissionResult, PermissionRule,
};
use crate::provider::ToolSpec;
use crate::tool::PermissionTarget;

/// One `tool_use` block to execute.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: ToolUseId,
    pub name: String,
    pub input: Value,
}

/// The result for one call; the loop wraps these, in call order, into one
/// user message of `tool_result` blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallResult {
    pub tool_use_id: ToolUseId,
    pub content: Vec<ToolResultContent>,
    pub is_error: bool,
    pub ui: Option<ToolResultUi>,
    /// Messages the tool asked to append after the results.
    pub side_messages: Vec<Message>,
}

/// What executing a batch of calls produces: events to forward as they
/// happen, and exactly one result per call, in call order.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRunEvent {
    Event(AgentEvent),
    Result(ToolCallResult),
}

/// Per-execution settings the loop hands the scheduler.
#[derive(Debug, Clone)]
pub struct ExecuteOptions {
    /// The user request's scope; the scheduler makes batch and tool children.
    pub cancel: CancelScope,
    pub mode: PermissionMode,
}

/// Executes tool calls (implemented by `riot-tools`' scheduler).
pub trait ToolRunner: Send + Sync + std::fmt::Debug {
    /// Tools in the exact order sent to the model.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The new tool list when it changed since the last call (tools that
    /// arrive while a session runs, such as an MCP server's once it is
    /// ready); `None` when it did not. The loop asks before every request.
    fn updated_specs(&self) -> Option<Vec<ToolSpec>> {
        None
    }

    /// Runs the calls of one assistant message. The stream yields exactly one
    /// `Result` per call, in call order, on every path (unknown tool, panic,
    /// cascade, cancellation), then ends.
    fn execute(
        &self,
        calls: Vec<ToolCall>,
        options: ExecuteOptions,
    ) -> BoxStream<'static, ToolRunEvent>;
}

/// What the permission chain needs to know about one call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionQuery {
    pub tool_name: String,
    pub input: Value,
    pub is_read_only: bool,
    pub target: PermissionTarget,
    /// The tool's own `check_permissions` verdict (often `Passthrough`).
    pub tool_verdict: PermissionResult,
    pub classifier_input: Option<String>,
    pub mode: PermissionMode,
    /// What a PreToolUse hook decided, if one did (docs/design.md §9.2: its
    /// deny and ask act before the rules' allow, its allow only at step 6).
    pub hook: Option<HookPermission>,
}

/// A PreToolUse hook's permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecisionKind {
    Allow,
    Ask,
    Deny,
}

/// A PreToolUse hook's decision, with the hook (its command) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPermission {
    pub decision: HookDecisionKind,
    pub hook: String,
    pub reason: String,
}

/// What the PreToolUse hooks said about one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookVerdict {
    /// A permission decision; `None` is "no opinion".
    pub permission: Option<HookPermission>,
    /// A replacement input (prepared and validated again).
    pub updated_input: Option<Value>,
    /// Text added to the call's result for the model.
    pub additional_context: Option<String>,
}

/// PreToolUse and PostToolUse hooks (docs/design.md §6.3 steps 5 and 9),
/// implemented by the kernel. The defaults have no opinion.
#[async_trait]
pub trait ToolHooks: Send + Sync + std::fmt::Debug {
    /// Runs before the permission decision.
    async fn pre_tool_use(&self, _call: &ToolCall) -> HookVerdict {
        HookVerdict::default()
    }

    /// Runs after the result budget; the text is appended to the result.
    async fn post_tool_use(&self, _call: &ToolCall, _result: &ToolCallResult) -> Option<String> {
        None
    }

    /// Runs when a call that is not read-only has been allowed, just
    /// before it runs, with what the permission chain judged (`target`):
    /// the kernel records a checkpoint here (docs/rewind.md). A call
    /// [`ToolHooks::before_change`] saw is later passed to
    /// [`ToolHooks::after_change`], however it ended.
    async fn before_change(&self, _call: &ToolCall, _target: &PermissionTarget) {}

    /// The call [`ToolHooks::before_change`] saw has ended (ran, failed,
    /// was cancelled or panicked).
    async fn after_change(&self, _call: &ToolCall) {}
}

/// No tool hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoToolHooks;

impl ToolHooks for NoToolHooks {}

/// The decision chain (implemented by `riot-permissions`).
#[async_trait]
pub trait PermissionPolicy: Send + Sync + std::fmt::Debug {
    /// Allow, Ask or Deny — never `Passthrough`.
    async fn decide(&self, query: &PermissionQuery) -> PermissionResult;

    /// Remembers a rule the person chose with "always" (session source), so
    /// the same question is not asked again.
    fn remember(&self, rule: PermissionRule);

    /// The person answered a question (any answer): auto mode's run of
    /// classifier denials starts over (docs/design.md §9.5).
    fn answered_by_person(&self) {}

    /// The rule "always" may offer for a question this policy asked
    /// (`asked` is its Ask), or `None` when no rule would stick — a safety
    /// finding, an ask rule or a hook would ask again — so only "once" is
    /// offered. A face shows what this allows and nothing more; the
    /// default offers nothing.
    fn suggest_rule(&self, query: &PermissionQuery, asked: &PermissionResult) -> Option<String> {
        let _ = (query, asked);
        None
    }
}

/// Asks the person (implemented by each face; `riot exec` answers nobody).
#[async_trait]
pub trait PermissionGate: Send + Sync + std::fmt::Debug {
    /// Whether anyone can answer at all. When false, an Ask is a Deny
    /// without a question (docs/design.md §9.2).
    fn can_answer(&self) -> bool;

    /// Asks and waits for the answer. The caller enforces the timeout and
    /// cancellation (both become denials) and emits `PermissionResolved`.
    async fn ask(
        &self,
        request_id: RequestId,
        detail: PermissionRequestDetail,
    ) -> PermissionOutcome;

    /// Asks structured questions (AskUser, plan approval) and waits for the
    /// answers; the caller cancels the wait by dropping the future. The
    /// default is a face nobody answers: the model proceeds on its own
    /// judgement.
    async fn ask_user(&self, _request: QuestionRequest) -> QuestionOutcome {
        QuestionOutcome::NoOneToAsk
    }
}

/// Questions for the person from one tool call (docs/interfaces.md: AskUser).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionRequest {
    pub tool_use_id: ToolUseId,
    pub tool_name: String,
    /// Markdown shown with the questions (a plan to approve).
    pub context: Option<String>,
    pub questions: Vec<Question>,
}

/// One question: multiple choice when it has options, else free text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub question: String,
    /// A very short label for the question (a chip, a tab title).
    pub header: Option<String>,
    pub options: Vec<QuestionOption>,
    pub multi_select: bool,
}

/// One choice of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionOption {
    pub label: String,
    pub description: Option<String>,
}

/// How a set of questions ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuestionOutcome {
    /// One entry per question, in order: the chosen labels, or the typed
    /// text for a free-text question. An empty entry was left unanswered.
    Answered(Vec<Vec<String>>),
    /// The person saw the questions and chose not to answer.
    Declined,
    /// Nobody can answer in this face (`riot exec`), or this face cannot
    /// show this kind of question.
    NoOneToAsk,
}
