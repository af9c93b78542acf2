//! Scripted doubles for the loop's collaborators (feature `testing`).
//!
//! They obey the same contracts as the real implementations: the provider
//! that runs out of script returns a **non-retryable** error (a lenient
//! double once hid a 401 being retried ten times); the tool runner returns
//! exactly one result per call in call order on every path; the compactor
//! keeps tool pairing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use futures::stream::{BoxStream, StreamExt};
use riot_protocol::{
    AgentEvent, AssistantBlock, CompactionStrategy, ExecuteOptions, Message, MessageId,
    ModelCapabilities, ModelRequest, PermissionOutcome, PermissionRequestDetail, Provider,
    ProviderError, ProviderErrorKind, ProviderEvent, ProviderStream, RequestId, StopReason,
    StreamDelta, ToolCall, ToolCallResult, ToolResultContent, ToolResultUi, ToolRunEvent,
    ToolRunner, ToolSpec, ToolUseId, Usage, UserBlock,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::deps::{
    CompactError, CompactRequest, CompactTrigger, Compaction, Compactor, MessageQueue, StopHooks,
    StopVerdict, TranscriptSink,
};
use crate::interrupted::INTERRUPTED_RESULT;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One step of a scripted reply.
#[derive(Debug, Clone)]
pub enum ScriptItem {
    Event(ProviderEvent),
    Error(ProviderError),
    /// Never produces another event; ends only when the request is cancelled.
    Stall,
}

/// A provider that plays one script per request and records every request.
pub struct ScriptedProvider {
    scripts: Mutex<VecDeque<Vec<ScriptItem>>>,
    requests: Mutex<Vec<ModelRequest>>,
    capabilities: ModelCapabilities,
    on_stall: Option<StallHook>,
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("remaining", &lock(&self.scripts).len())
            .finish_non_exhaustive()
    }
}

/// Called when a scripted stream stalls or a scripted tool hangs, so a test
/// can play the person who presses stop when nothing happens.
pub type StallHook = Arc<dyn Fn() + Send + Sync>;

impl ScriptedProvider {
    /// Plays `scripts` in order, one per request.
    pub fn new(scripts: Vec<Vec<ScriptItem>>) -> Self {
        Self {
            scripts: Mutex::new(scripts.into()),
            requests: Mutex::new(Vec::new()),
            capabilities: ModelCapabilities {
                max_output_tokens: 32_000,
                ..ModelCapabilities::default()
            },
            on_stall: None,
        }
    }

    /// Calls `hook` whenever a script reaches a stall.
    pub fn with_stall_hook(mut self, hook: StallHook) -> Self {
        self.on_stall = Some(hook);
        self
    }

    /// Reports these capabilities for every model.
    pub fn with_capabilities(mut self, capabilities: ModelCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// Scripts not yet played.
    pub fn remaining(&self) -> usize {
        lock(&self.scripts).len()
    }
}

impl Provider for ScriptedProvider {
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ProviderStream {
        lock(&self.requests).push(request);
        let script = lock(&self.scripts).pop_front();
        let Some(script) = script else {
            let err = ProviderError::new(
                ProviderErrorKind::InvalidRequest,
                "scripted provider ran out of script",
            )
            .with_status(400);
            return futures::stream::iter([Err(err)]).boxed();
        };
        let on_stall = self.on_stall.clone();
        async_stream::stream! {
            for item in script {
                match item {
                    ScriptItem::Event(e) => yield Ok(e),
                    ScriptItem::Error(e) => {
                        yield Err(e);
                        return;
                    }
                    ScriptItem::Stall => {
                        if let Some(hook) = &on_stall {
                            hook();
                        }
                        cancel.cancelled().await;
                        yield Err(ProviderError::new(ProviderErrorKind::Cancelled, "cancelled"));
                        return;
                    }
                }
            }
        }
        .boxed()
    }

    fn capabilities(&self, _model: &str) -> ModelCapabilities {
        self.capabilities.clone()
    }
}

/// Builders for common replies.
pub mod reply {
    use super::*;

    /// Text deltas (split at `|`) then the finished text block.
    pub fn text(model: &str, text: &str) -> Vec<ScriptItem> {
        let mut items = vec![ScriptItem::Event(ProviderEvent::Started {
            model: model.to_owned(),
        })];
        for piece in text.split('|') {
            items.push(ScriptItem::Event(ProviderEvent::Delta(StreamDelta::Text {
                text: piece.to_owned(),
            })));
        }
        items.push(ScriptItem::Event(ProviderEvent::Block(
            AssistantBlock::Text {
                text: text.replace('|', ""),
            },
        )));
        items
    }

    /// A finished tool call.
    pub fn tool_use(id: &str, name: &str, input: Value) -> Vec<ScriptItem> {
        vec![
            ScriptItem::Event(ProviderEvent::Delta(StreamDelta::ToolInput {
                tool_use_id: ToolUseId::new(id),
                name: name.to_owned(),
                partial_json: input.to_string(),
            })),
            ScriptItem::Event(ProviderEvent::Block(AssistantBlock::ToolUse {
                id: ToolUseId::new(id),
                name: name.to_owned(),
                input,
            })),
        ]
    }

    /// Usage then the stop event.
    pub fn stop(reason: StopReason, input_tokens: u64, output_tokens: u64) -> Vec<ScriptItem> {
        vec![
            ScriptItem::Event(ProviderEvent::Usage(Usage {
                input_tokens,
                output_tokens,
                ..Usage::default()
            })),
            ScriptItem::Event(ProviderEvent::Stop { reason }),
        ]
    }
}

/// How a scripted tool behaves.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolBehavior {
    /// Succeeds with this text.
    Ok(String),
    /// Fails with this text (is_error).
    Fail(String),
    /// Panics; the scheduler's capture turns it into a failed result.
    Panic,
    /// Runs until cancelled.
    Hang,
    /// Asks the person; `allow` is their answer. Allowed calls then succeed
    /// with `result`.
    Ask { allow: bool, result: String },
    /// Reports progress lines, then succeeds.
    Progress { lines: Vec<String>, result: String },
}

/// A tool runner that plays behaviours by tool name and keeps the runner
/// contract: one result per call, in call order, on every path.
pub struct ScriptedTools {
    specs: Vec<ToolSpec>,
    behaviors: BTreeMap<String, ToolBehavior>,
    calls: Mutex<Vec<ToolCall>>,
    on_hang: Option<StallHook>,
}

impl std::fmt::Debug for ScriptedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedTools")
            .field("behaviors", &self.behaviors)
            .finish_non_exhaustive()
    }
}

impl ScriptedTools {
    /// Tools named after the keys of `behaviors`, declared in key order.
    pub fn new(behaviors: BTreeMap<String, ToolBehavior>) -> Self {
        let specs = behaviors
            .keys()
            .map(|name| ToolSpec {
                name: name.clone(),
                description: format!("Scripted {name}."),
                input_schema: json!({"type": "object"}),
            })
            .collect();
        Self {
            specs,
            behaviors,
            calls: Mutex::new(Vec::new()),
            on_hang: None,
        }
    }

    /// Calls `hook` whenever a scripted tool starts hanging.
    pub fn with_hang_hook(mut self, hook: StallHook) -> Self {
        self.on_hang = Some(hook);
        self
    }

    /// Every call received, in order.
    pub fn calls(&self) -> Vec<ToolCall> {
        lock(&self.calls).clone()
    }
}

fn result(id: &ToolUseId, text: &str, is_error: bool, describe: &str) -> ToolRunEvent {
    ToolRunEvent::Result(ToolCallResult {
        tool_use_id: id.clone(),
        content: vec![ToolResultContent::text(text)],
        is_error,
        ui: Some(ToolResultUi {
            describe: describe.to_owned(),
            payload: None,
            duration_ms: 0,
        }),
        side_messages: Vec::new(),
    })
}

impl ToolRunner for ScriptedTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn execute(
        &self,
        calls: Vec<ToolCall>,
        options: ExecuteOptions,
    ) -> BoxStream<'static, ToolRunEvent> {
        lock(&self.calls).extend(calls.iter().cloned());
        let behaviors = self.behaviors.clone();
        let on_hang = self.on_hang.clone();
        let available: Vec<String> = self.specs.iter().map(|s| s.name.clone()).collect();
        async_stream::stream! {
            for call in calls {
                let describe = format!("{} {}", call.name, call.input);
                if options.cancel.is_cancelled() {
                    yield result(&call.id, INTERRUPTED_RESULT, true, &describe);
                    continue;
                }
                let Some(behavior) = behaviors.get(&call.name).cloned() else {
                    let text = format!(
                        "Unknown tool `{}`. Available tools: {}.",
                        call.name,
                        available.join(", ")
                    );
                    yield result(&call.id, &text, true, &describe);
                    continue;
                };
                let started = ToolRunEvent::Event(AgentEvent::ToolStarted {
                    tool_use_id: call.id.clone(),
                    name: call.name.clone(),
                    describe: describe.clone(),
                });
                match behavior {
                    ToolBehavior::Ok(text) => {
                        yield started;
                        yield result(&call.id, &text, false, &describe);
                    }
                    ToolBehavior::Fail(text) => {
                        yield started;
                        yield result(&call.id, &text, true, &describe);
                    }
                    ToolBehavior::Panic => {
                        yield started;
                        yield result(&call.id, &format!("{} failed: the tool crashed. This is a bug in the tool, not in your input; try another approach.", call.name), true, &describe);
                    }
                    ToolBehavior::Hang => {
                        yield started;
                        if let Some(hook) = &on_hang {
                            hook();
                        }
                        options.cancel.cancelled().await;
                        yield result(&call.id, INTERRUPTED_RESULT, true, &describe);
                    }
                    ToolBehavior::Progress { lines, result: text } => {
                        yield started;
                        for line in lines {
                            yield ToolRunEvent::Event(AgentEvent::Progress {
                                tool_use_id: call.id.clone(),
                                payload: riot_protocol::ProgressPayload::Status { text: line },
                            });
                        }
                        yield result(&call.id, &text, false, &describe);
                    }
                    ToolBehavior::Ask { allow, result: text } => {
                        let request_id = RequestId::new(format!("req_{}", call.id));
                        yield ToolRunEvent::Event(AgentEvent::PermissionRequest {
                            request_id: request_id.clone(),
                            detail: Box::new(PermissionRequestDetail {
                                tool_use_id: call.id.clone(),
                                tool_name: call.name.clone(),
                                describe: describe.clone(),
                                input: call.input.clone(),
                                path: None,
                                command: None,
                                reason: riot_protocol::DecisionReason::Consent {
                                    detail: "changes files".into(),
                                },
                                message: format!("Allow {}?", call.name),
                                suggested_rule: None,
                                preview: None,
                            }),
                        });
                        let outcome = if allow {
                            PermissionOutcome::AllowOnce
                        } else {
                            PermissionOutcome::RejectOnce { feedback: None }
                        };
                        yield ToolRunEvent::Event(AgentEvent::PermissionResolved {
                            request_id,
                            outcome,
                        });
                        if allow {
                            yield started;
                            yield result(&call.id, &text, false, &describe);
                        } else {
                            let denied = format!("The user denied this {} call. Do not retry it; ask what they want instead or take another approach.", call.name);
                            yield result(&call.id, &denied, true, &describe);
                        }
                    }
                }
            }
        }
        .boxed()
    }
}

/// A compactor that replaces the content of every tool result but the last
/// `keep` with a placeholder (pairing kept), or fails on demand.
#[derive(Debug, Default)]
pub struct FakeCompactor {
    /// Compact proactively on every request.
    pub proactive: bool,
    /// Fail the next N reactive compactions.
    pub failures: Mutex<u32>,
    pub keep: usize,
    /// Triggers seen, in order.
    pub seen: Mutex<Vec<CompactTrigger>>,
}

/// The placeholder for a cleared tool result.
pub const CLEARED: &str = "[tool result cleared to save context]";

#[async_trait]
impl Compactor for FakeCompactor {
    fn plan(&self, _messages: &[Message], request: &CompactRequest) -> Option<CompactionStrategy> {
        lock(&self.seen).push(request.trigger);
        (request.trigger == CompactTrigger::Reactive || self.proactive)
            .then_some(CompactionStrategy::ClearToolResults)
    }

    async fn compact(
        &self,
        messages: &[Message],
        request: &CompactRequest,
        strategy: CompactionStrategy,
    ) -> Result<Compaction, CompactError> {
        {
            let mut failures = lock(&self.failures);
            if request.trigger == CompactTrigger::Reactive && *failures > 0 {
                *failures -= 1;
                return Err(CompactError("the summary request failed".into()));
            }
        }
        let total = messages
            .iter()
            .filter_map(Message::as_user)
            .flat_map(|u| u.tool_results())
            .count();
        let mut seen = 0;
        let out: Vec<Message> = messages
            .iter()
            .map(|m| match m {
                Message::User(u) => {
                    let mut u = u.clone();
                    for block in &mut u.content {
                        if let UserBlock::ToolResult { content, .. } = block {
                            seen += 1;
                            if seen + self.keep <= total {
                                *content = vec![ToolResultContent::text(CLEARED)];
                            }
                        }
                    }
                    Message::User(u)
                }
                other => other.clone(),
            })
            .collect();
        Ok(Compaction {
            messages: out,
            before_tokens: 1000,
            after_tokens: 400,
            strategy,
        })
    }
}

/// What a transcript sink was told, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum TranscriptRecord {
    Message(Message),
    Withdrawn(MessageId),
    Compacted(Vec<Message>, CompactionStrategy),
    ModelChanged(String),
}

/// Records every transcript call.
#[derive(Debug, Default)]
pub struct RecordingTranscript {
    records: Mutex<Vec<TranscriptRecord>>,
}

impl RecordingTranscript {
    pub fn records(&self) -> Vec<TranscriptRecord> {
        lock(&self.records).clone()
    }

    /// The history a resume would rebuild from these records.
    pub fn replay(&self) -> Vec<Message> {
        let mut history: Vec<Message> = Vec::new();
        for record in self.records() {
            match record {
                TranscriptRecord::Message(m) => history.push(m),
                TranscriptRecord::Withdrawn(id) => history.retain(|m| m.id() != &id),
                TranscriptRecord::Compacted(messages, _) => history = messages,
                TranscriptRecord::ModelChanged(_) => {}
            }
        }
        history
    }
}

impl TranscriptSink for RecordingTranscript {
    fn message(&self, message: &Message) {
        lock(&self.records).push(TranscriptRecord::Message(message.clone()));
    }
    fn withdrawn(&self, message_id: &MessageId) {
        lock(&self.records).push(TranscriptRecord::Withdrawn(message_id.clone()));
    }
    fn compacted(&self, messages: &[Message], strategy: CompactionStrategy) {
        lock(&self.records).push(TranscriptRecord::Compacted(messages.to_vec(), strategy));
    }
    fn model_changed(&self, model: &str) {
        lock(&self.records).push(TranscriptRecord::ModelChanged(model.to_owned()));
    }
}

/// Stop hooks that answer from a script (then `Allow`) and count calls.
#[derive(Debug, Default)]
pub struct ScriptedStopHooks {
    verdicts: Mutex<VecDeque<StopVerdict>>,
    calls: Mutex<u32>,
}

impl ScriptedStopHooks {
    pub fn new(verdicts: Vec<StopVerdict>) -> Self {
        Self {
            verdicts: Mutex::new(verdicts.into()),
            calls: Mutex::new(0),
        }
    }

    /// How many times the hooks ran.
    pub fn calls(&self) -> u32 {
        *lock(&self.calls)
    }
}

#[async_trait]
impl StopHooks for ScriptedStopHooks {
    async fn on_stop(&self, _messages: &[Message]) -> StopVerdict {
        *lock(&self.calls) += 1;
        lock(&self.verdicts)
            .pop_front()
            .unwrap_or(StopVerdict::Allow)
    }
}

/// A queue the test fills while the turn runs.
#[derive(Debug, Default, Clone)]
pub struct VecQueue {
    inner: Arc<Mutex<Vec<Message>>>,
    model: Arc<Mutex<Option<String>>>,
}

impl VecQueue {
    pub fn push(&self, message: Message) {
        lock(&self.inner).push(message);
    }

    /// Chooses `model` for the loop's next request (handed out once, as a
    /// face's choice is).
    pub fn choose_model(&self, model: &str) {
        *lock(&self.model) = Some(model.to_owned());
    }
}

impl MessageQueue for VecQueue {
    fn drain(&self) -> Vec<Message> {
        std::mem::take(&mut *lock(&self.inner))
    }

    fn model_switch(&self) -> Option<String> {
        lock(&self.model).take()
    }
}
