//! What the loop is given (docs/design.md §1.5: everything non-deterministic
//! is injected). The kernel wires real implementations; tests wire the
//! scripted doubles of `crate::testing` (feature `testing`).

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{
    Clock, CompactionStrategy, IdGen, Message, MessageId, ModelCapabilities, Provider,
    SystemPrompt, ToolRunner, ToolSpec,
};

/// The loop's collaborators.
#[derive(Debug, Clone)]
pub struct AgentDeps {
    pub provider: Arc<dyn Provider>,
    /// The scheduler; it owns the permission chain and the gate.
    pub tools: Arc<dyn ToolRunner>,
    pub compactor: Arc<dyn Compactor>,
    pub transcript: Arc<dyn TranscriptSink>,
    pub hooks: Arc<dyn StopHooks>,
    pub queue: Arc<dyn MessageQueue>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
}

/// Why context is being compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactTrigger {
    /// Before a request, because the estimate passed the threshold.
    Proactive,
    /// After the provider said the context overflowed.
    Reactive,
}

/// What the compactor needs besides the history.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactRequest {
    pub trigger: CompactTrigger,
    pub model: String,
    pub capabilities: ModelCapabilities,
    /// Estimated tokens of the next request (docs/design.md §10).
    pub estimate: u64,
    /// Unix ms now, by the injected clock.
    pub now_ms: u64,
    /// Unix ms of the last model request (the cache-cold rule).
    pub last_request_ms: Option<u64>,
    /// The session's system prompt and tools, so a summary request shares
    /// the cached prefix of normal requests.
    pub system: SystemPrompt,
    pub tools: Vec<ToolSpec>,
    pub server_tools: Vec<riot_protocol::ServerTool>,
    pub session_key: Option<String>,
    /// What a manual `/compact` should focus on.
    pub focus: Option<String>,
}

/// A compacted history.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Replaces the whole history. Must keep tool pairing (INV-1, checked
    /// by the loop right after).
    pub messages: Vec<Message>,
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub strategy: CompactionStrategy,
}

/// Compaction failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("compaction failed: {0}")]
pub struct CompactError(pub String);

/// Reduces context (docs/design.md §10). Before every request the loop asks
/// for a plan (cheap, no I/O; `None` when nothing needs doing); after an
/// overflow it asks with the reactive trigger, where `None` means nothing
/// can be done. Then it announces `Compacting` and runs the plan.
#[async_trait]
pub trait Compactor: Send + Sync + std::fmt::Debug {
    fn plan(&self, messages: &[Message], request: &CompactRequest) -> Option<CompactionStrategy>;

    async fn compact(
        &self,
        messages: &[Message],
        request: &CompactRequest,
        strategy: CompactionStrategy,
    ) -> Result<Compaction, CompactError>;
}

/// A compactor that never compacts (an overflow then surfaces instead of
/// looping).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCompaction;

#[async_trait]
impl Compactor for NoCompaction {
    fn plan(&self, _messages: &[Message], _request: &CompactRequest) -> Option<CompactionStrategy> {
        None
    }

    async fn compact(
        &self,
        _messages: &[Message],
        _request: &CompactRequest,
        _strategy: CompactionStrategy,
    ) -> Result<Compaction, CompactError> {
        Err(CompactError("compaction is not configured".into()))
    }
}

/// Where the loop records what must survive a crash (docs/design.md §12).
/// Implementations append to the transcript and flush at each call.
pub trait TranscriptSink: Send + Sync + std::fmt::Debug {
    /// A finished message was appended to the history.
    fn message(&self, message: &Message);
    /// The prompt was withdrawn; resume must not bring it back.
    fn withdrawn(&self, message_id: &MessageId);
    /// The history was replaced by a compacted one.
    fn compacted(&self, messages: &[Message], strategy: CompactionStrategy);
    /// The model changed during a turn (fallback, or a model a face chose).
    fn model_changed(&self, model: &str);
}

/// A sink that keeps nothing (one-off runs, tests that do not look).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTranscript;

impl TranscriptSink for NoTranscript {
    fn message(&self, _message: &Message) {}
    fn withdrawn(&self, _message_id: &MessageId) {}
    fn compacted(&self, _messages: &[Message], _strategy: CompactionStrategy) {}
    fn model_changed(&self, _model: &str) {}
}

/// A Stop hook's answer when the model wants to end the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopVerdict {
    /// End the turn.
    Allow,
    /// Do not end yet: the reason goes to the model and the loop goes round.
    Continue { reason: String },
    /// End the turn now, reported as `stop_hook_prevented`.
    Prevent { reason: String },
}

/// Stop hooks (docs/design.md §5.6). Never called after an API error (INV-6).
#[async_trait]
pub trait StopHooks: Send + Sync + std::fmt::Debug {
    async fn on_stop(&self, messages: &[Message]) -> StopVerdict;
}

/// No stop hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStopHooks;

#[async_trait]
impl StopHooks for NoStopHooks {
    async fn on_stop(&self, _messages: &[Message]) -> StopVerdict {
        StopVerdict::Allow
    }
}

/// Messages the person sent while the turn runs (docs/design.md §5). The loop
/// drains them after tool results, never between a `tool_use` and its
/// result. Until drained, faces may edit or remove them.
pub trait MessageQueue: Send + Sync + std::fmt::Debug {
    fn drain(&self) -> Vec<Message>;

    /// A model a face chose while the turn runs; the loop applies it
    /// before its next model request. The loop asks before every request
    /// (the turn's first included) and ignores a choice equal to the current
    /// model; hand each choice out once, or one still returned after a
    /// fallback would switch the turn back. Applying it sets the model and
    /// its output limit (the model's maximum, at most
    /// [`DEFAULT_MAX_TOKENS`](crate::DEFAULT_MAX_TOKENS)) and tells the
    /// transcript ([`TranscriptSink::model_changed`]).
    fn model_switch(&self) -> Option<String> {
        None
    }
}

/// An empty queue.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoQueue;

impl MessageQueue for NoQueue {
    fn drain(&self) -> Vec<Message> {
        Vec::new()
    }
}
