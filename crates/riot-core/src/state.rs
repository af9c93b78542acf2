//! The state one session's loop works on, and the recovery counters whose
//! reset rules are part of the design (docs/design.md §5).

use crate::context::UsageAnchor;
use riot_protocol::{
    Message, MessageId, PermissionMode, ServerTool, SessionId, SystemPrompt, ThinkingConfig,
    ToolSpec, Transition, Usage,
};

/// Everything the loop needs to build the next request and decide what to
/// do. Owned by the kernel between turns; borrowed by `run_agent` during one.
#[derive(Debug, Clone)]
pub struct AgentState {
    pub session_id: SessionId,
    /// The conversation, including `System` notes (never sent to a model).
    pub messages: Vec<Message>,
    pub model: String,
    /// Used after three consecutive overloads.
    pub fallback_model: Option<String>,
    pub system: SystemPrompt,
    /// Tools as declared to the model, snapshotted when the session starts
    /// (byte-stable prompt prefix, docs/design.md §11).
    pub tools: Vec<ToolSpec>,
    /// Tools the provider runs itself, declared after `tools` where the
    /// model has them (docs/web.md: the provider's web search).
    pub server_tools: Vec<ServerTool>,
    pub thinking: Option<ThinkingConfig>,
    /// Output-token limit of a normal request.
    pub max_tokens: u32,
    /// Stop after this many iterations whose reply asked for tools.
    pub max_turns: u32,
    pub mode: PermissionMode,
    /// Per-session cache key for providers that use one.
    pub cache_key: Option<String>,
    /// Iterations (model requests) in the current turn; 1-based once started.
    pub turn: u32,
    /// Why the loop goes round again; set on every `continue`.
    pub transition: Option<Transition>,
    pub recovery: RecoveryState,
    /// Usage of the most recent request.
    pub last_usage: Option<Usage>,
    /// Where that usage applies in `messages` (the token estimate's anchor);
    /// cleared when compaction replaces the history.
    pub usage_anchor: Option<UsageAnchor>,
    /// Unix ms of the last model request (the cache-cold rule).
    pub last_request_ms: Option<u64>,
    /// Sum over the main loop's requests in this session.
    pub total_usage: Usage,
    /// The prompt of the running turn (withdrawn if stopped before any
    /// message was produced).
    pub turn_prompt: Option<MessageId>,
}

impl AgentState {
    /// A fresh session.
    pub fn new(session_id: SessionId, model: impl Into<String>, system: SystemPrompt) -> Self {
        Self {
            session_id,
            messages: Vec::new(),
            model: model.into(),
            fallback_model: None,
            system,
            tools: Vec::new(),
            server_tools: Vec::new(),
            thinking: None,
            max_tokens: 8_192,
            max_turns: 100,
            mode: PermissionMode::Default,
            cache_key: None,
            turn: 0,
            transition: None,
            recovery: RecoveryState::default(),
            last_usage: None,
            usage_anchor: None,
            last_request_ms: None,
            total_usage: Usage::default(),
            turn_prompt: None,
        }
    }

    /// Moves to the next iteration. The only place the per-iteration
    /// recovery guards reset (docs/design.md §5, a rule).
    pub fn advance_turn(&mut self) {
        self.turn += 1;
        self.recovery.reactive_compact_attempted = false;
        self.recovery.output_limit_hits = 0;
        self.recovery.epoch += 1;
    }
}

/// Recovery guards. `reactive_compact_attempted` and `output_limit_hits`
/// reset only in [`AgentState::advance_turn`]; `compaction_failures` resets
/// only when a compaction succeeds; `stop_hook_retries` and
/// `overload_streak` live for one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryState {
    /// A reactive compaction was tried in this iteration.
    pub reactive_compact_attempted: bool,
    /// Output-limit hits in this iteration (1st → escalate, then continue).
    pub output_limit_hits: u32,
    /// Continuation prompts sent in this turn after output-limit hits.
    pub continuations: u32,
    /// Consecutive failed compactions; trips the breaker at 3.
    pub compaction_failures: u32,
    /// Stop-hook retries in this turn.
    pub stop_hook_retries: u32,
    /// Consecutive overload notices from the provider.
    pub overload_streak: u32,
    /// Whether this turn already switched to the fallback model.
    pub fell_back: bool,
    /// Bumped by `advance_turn`; INV-5 compares counters within one epoch.
    pub epoch: u64,
}
