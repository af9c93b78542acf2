//! `run_agent`: the loop of docs/design.md §5 as an explicit state machine.
//!
//! `Step` names where the loop is. Each step is one plain function of
//! `Machine` that may queue events and returns the next step; the stream
//! `run_agent` returns only drives it: it hands out the queued events and,
//! once none are left, runs the next step. So a step ends wherever someone
//! must see something before the loop goes on — a stop pressed on an event
//! is noticed by the step after it, a message queued on it is drained by
//! the next `Advance` — and a reply's deltas go out one at a time as they
//! arrive, one provider event per `Stream` step.
//!
//! The steps, in the order of §5:
//!
//! 1. `Begin`: per-turn guards reset, orphan tool uses answered, the prompt
//!    appended;
//! 2. `Prepare`: cancelled → `Abort`; a model a face chose
//!    ([`MessageQueue::model_switch`](crate::deps::MessageQueue::model_switch))
//!    is applied;
//!    `RequestStart`; proactive compaction planned (`Compact` runs it);
//! 3. `Request` builds and checks the request, `Stream` forwards the reply;
//!    a recoverable error is withheld;
//! 4. `Recover` decides retry (with a transition) or surface; `FallBack`
//!    moves to the fallback model after repeated overloads;
//! 5. `Reply` appends a finished reply; the loop goes on only if it holds
//!    `tool_use` blocks;
//! 6. no tool use → `StopHooks` (never after an API error, INV-6);
//! 7. `RunTools` hands the calls to the scheduler, `Tools` passes on its
//!    events and collects the results;
//! 8. `Advance`: results, queued messages, `max_turns`.
//!
//! `Abort` ends a stopped turn, `Finish` emits `Done`. The item type has no
//! `Result`: every error becomes a message for the model or a terminal
//! reason, and `Done` is always last (INV-4).

use std::collections::VecDeque;

use futures::future::{Either, select};
use futures::stream::{BoxStream, Stream, StreamExt};
use riot_protocol::invariants::{
    check_cache_breakpoints, check_no_system_messages, check_thinking_model, check_tool_pairing,
    enforce,
};
use riot_protocol::{
    AbortSource, AgentError, AgentEvent, AssistantBlock, AssistantMessage, CancelReason,
    CancelScope, CompactionStrategy, ErrorKind, ExecuteOptions, Message, MessageId, MessageOrigin,
    ModelRequest, ProviderError, ProviderErrorKind, ProviderEvent, ProviderStream, StopReason,
    StreamDelta, SystemLevel, SystemMessage, TerminalReason, ToolCall, ToolCallResult,
    ToolRunEvent, Transition, Usage, UserBlock, UserMessage,
};

use crate::context::{self, UsageAnchor};
use crate::deps::{
    AgentDeps, CompactError, CompactRequest, CompactTrigger, Compaction, StopVerdict,
};
use crate::done_guard::DoneGuard;
use crate::interrupted::interrupted_result;
use crate::invariants::{RecoveryWatch, check_results_match, check_stop_hook_entry};
use crate::recovery::{RecoveryDecision, RecoveryLimits, RetryPlan, attempt_recovery, describe};
use crate::request::{RetryContext, build_request};
use crate::state::{AgentState, RecoveryState};

/// Stop-hook retries per turn before the loop ends anyway.
pub const MAX_STOP_HOOK_RETRIES: u32 = 3;
/// Consecutive overload notices that switch to the fallback model.
pub const OVERLOADS_BEFORE_FALLBACK: u32 = 3;

const CONTINUE_PROMPT: &str = "Your previous reply was cut off by the output-token limit. Continue exactly where it stopped, without repeating anything.";

/// Runs one turn: `prompt` (if any) is appended, then the loop goes round
/// until the model stops asking for tools, a limit is hit, an error
/// surfaces, or `cancel` fires. Exactly one `Done`, always last.
pub fn run_agent<'a>(
    state: &'a mut AgentState,
    prompt: Option<Message>,
    deps: &'a AgentDeps,
    cancel: CancelScope,
) -> impl Stream<Item = AgentEvent> + Send + 'a {
    let machine = Machine::new(state, prompt, deps, cancel);
    DoneGuard::new(Box::pin(futures::stream::unfold(
        machine,
        Machine::next_event,
    )))
}

/// Where the loop is; each variant is run by the `Machine` method of the
/// same name.
enum Step {
    /// A new turn: reset the per-turn guards, answer orphan tool uses, append
    /// the prompt.
    Begin(Option<Message>),
    /// The top of an iteration: stop if cancelled, apply a model a face
    /// chose, announce the request, plan proactive compaction.
    Prepare,
    /// Run a compaction already announced with `Compacting`.
    Compact {
        request: Box<CompactRequest>,
        strategy: CompactionStrategy,
    },
    /// Build and check the request, open the reply stream.
    Request,
    /// Take one event of the streaming reply.
    Stream(Box<InFlight>),
    /// Repeated overloads: move to the fallback model.
    FallBack,
    /// A reply failed: retry with a transition, or surface the error.
    Recover(Box<Failure>),
    /// A reply finished: append it; tools, Stop hooks or the end follow.
    Reply(Reply),
    /// The model asked for no tools: the Stop hooks decide.
    StopHooks,
    /// Hand the calls of the last reply to the scheduler.
    RunTools(Vec<ToolCall>),
    /// Take one event of the running tool batch.
    Tools(Box<ToolBatch>),
    /// After the results: stop if cancelled, hand over queued messages,
    /// check `max_turns`, go round.
    Advance,
    /// The turn was stopped: keep what was produced (or withdraw the prompt).
    Abort(Reply),
    /// Emit `Done`.
    Finish(TerminalReason),
    /// `Done` was emitted; the stream ends once the queue is empty.
    Ended,
}

/// A model request whose reply is streaming.
struct InFlight {
    stream: ProviderStream,
    reply: Reply,
    /// `max_tokens` of the request (the escalation baseline).
    sent_max_tokens: u32,
}

/// A reply that ended in an error the loop may recover from.
struct Failure {
    error: ProviderError,
    /// What arrived before the error (kept by a continuation).
    reply: Reply,
    sent_max_tokens: u32,
}

/// A tool batch the scheduler is running.
struct ToolBatch {
    run: BoxStream<'static, ToolRunEvent>,
    calls: Vec<ToolCall>,
    results: Vec<ToolCallResult>,
}

/// How one streamed reply ended.
enum ReplyEnd {
    Finished,
    Failed(ProviderError),
    Cancelled,
    /// Overloaded repeatedly and a fallback model exists.
    SwitchToFallback,
}

/// What arrived of one reply.
#[derive(Default)]
struct Reply {
    blocks: Vec<AssistantBlock>,
    /// Text deltas not yet part of a finished block.
    partial_text: String,
    usage: Usage,
    saw_usage: bool,
    stop_reason: Option<StopReason>,
}

impl Reply {
    fn has_tool_use(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| matches!(b, AssistantBlock::ToolUse { .. }))
    }

    /// The finished blocks plus any partial text, for a stopped reply.
    fn into_partial_blocks(self) -> Vec<AssistantBlock> {
        let mut blocks = self.blocks;
        if !self.partial_text.is_empty() {
            blocks.push(AssistantBlock::Text {
                text: self.partial_text,
            });
        }
        blocks
    }
}

/// One turn in progress: the state it works on, the step it is at and the
/// events it has queued but not yet handed out.
struct Machine<'a> {
    state: &'a mut AgentState,
    deps: &'a AgentDeps,
    cancel: CancelScope,
    step: Step,
    /// Events the last step queued, handed out before the next step runs.
    pending: VecDeque<AgentEvent>,
    /// INV-5 within the current iteration.
    watch: RecoveryWatch,
    /// What the next request changes (a raised output limit).
    retry: RetryContext,
    /// Whether this turn appended a message the model produced (a stop
    /// before that withdraws the prompt).
    produced_message: bool,
    /// Whether the last model request ended in an API error (or was given
    /// up for the fallback model): the fact INV-6 checks at Stop-hook entry.
    last_request_failed: bool,
}

impl<'a> Machine<'a> {
    /// A turn not started yet: nothing changes until the stream is polled.
    fn new(
        state: &'a mut AgentState,
        prompt: Option<Message>,
        deps: &'a AgentDeps,
        cancel: CancelScope,
    ) -> Self {
        let watch = RecoveryWatch::new(&state.recovery);
        Self {
            state,
            deps,
            cancel,
            step: Step::Begin(prompt),
            pending: VecDeque::new(),
            watch,
            retry: RetryContext::default(),
            produced_message: false,
            last_request_failed: false,
        }
    }

    /// The driver: the next queued event, running steps until one queues
    /// something; `None` once `Done` was handed out.
    async fn next_event(mut self) -> Option<(AgentEvent, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((event, self));
            }
            if matches!(self.step, Step::Ended) {
                return None;
            }
            self.step().await;
        }
    }

    /// Runs the current step and moves to the one it returns.
    async fn step(&mut self) {
        self.step = match std::mem::replace(&mut self.step, Step::Ended) {
            Step::Begin(prompt) => self.begin(prompt),
            Step::Prepare => self.prepare(),
            Step::Compact { request, strategy } => self.compact(*request, strategy).await,
            Step::Request => self.request(),
            Step::Stream(flight) => self.stream(flight).await,
            Step::FallBack => self.fall_back(),
            Step::Recover(failure) => self.recover(*failure),
            Step::Reply(reply) => self.reply(reply),
            Step::StopHooks => self.stop_hooks().await,
            Step::RunTools(calls) => self.run_tools(calls),
            Step::Tools(batch) => self.tools(batch).await,
            Step::Advance => self.advance(),
            Step::Abort(reply) => self.abort(reply),
            Step::Finish(reason) => self.finish(reason),
            Step::Ended => Step::Ended,
        };
    }

    fn emit(&mut self, event: AgentEvent) {
        self.pending.push_back(event);
    }

    /// Appends `message` to the history and the transcript, and shows it.
    fn post(&mut self, message: Message) {
        append(self.state, self.deps, message.clone());
        self.emit(AgentEvent::Message { message });
    }

    fn note(&mut self, level: SystemLevel, text: String) {
        let note = system_note(self.deps, level, text);
        self.post(note);
    }

    fn begin(&mut self, prompt: Option<Message>) -> Step {
        // Per-turn guards start fresh; the compaction breaker's streak
        // survives (it resets only when a compaction succeeds).
        self.state.turn = 0;
        self.state.transition = None;
        self.state.recovery = RecoveryState {
            compaction_failures: self.state.recovery.compaction_failures,
            epoch: self.state.recovery.epoch,
            ..RecoveryState::default()
        };
        self.watch.reset(&self.state.recovery);

        // A history cut by a crash may end in unanswered tool uses.
        if let Some(repair) = orphan_results(&self.state.messages, self.deps) {
            self.post(repair);
        }

        self.state.turn_prompt = None;
        if let Some(prompt) = prompt {
            self.state.turn_prompt = Some(prompt.id().clone());
            self.post(prompt);
        }
        self.state.advance_turn();
        self.watch.reset(&self.state.recovery);
        Step::Prepare
    }

    fn prepare(&mut self) -> Step {
        if self.cancel.is_cancelled() {
            return Step::Abort(Reply::default());
        }
        self.apply_model_switch();
        let after = self.state.transition.take();
        self.emit(AgentEvent::RequestStart {
            turn: self.state.turn,
            model: self.state.model.clone(),
            after,
        });

        // Proactive compaction, but not right after a reactive one.
        if after == Some(Transition::ReactiveCompactRetry) {
            return Step::Request;
        }
        let request = compact_request(self.state, self.deps, CompactTrigger::Proactive);
        match self.deps.compactor.plan(&self.state.messages, &request) {
            Some(strategy) => {
                self.emit(AgentEvent::Compacting { strategy });
                Step::Compact {
                    request: Box::new(request),
                    strategy,
                }
            }
            None => {
                self.watch.check(&self.state.recovery);
                Step::Request
            }
        }
    }

    /// A model a face chose while the turn runs takes effect here, before
    /// the request is announced, so `RequestStart`, compaction and the
    /// request itself all see it.
    fn apply_model_switch(&mut self) {
        let Some(model) = self.deps.queue.model_switch() else {
            return;
        };
        if model == self.state.model {
            return;
        }
        let capabilities = self.deps.provider.capabilities(&model);
        let model_max = context::output_ceiling(&capabilities);
        self.state.max_tokens = context::request_max_tokens(&capabilities);
        // A limit raised by recovery was the old model's maximum.
        self.retry.max_tokens = self.retry.max_tokens.map(|t| t.min(model_max));
        self.deps.transcript.model_changed(&model);
        self.state.model = model;
    }

    async fn compact(&mut self, request: CompactRequest, strategy: CompactionStrategy) -> Step {
        let result = self
            .deps
            .compactor
            .compact(&self.state.messages, &request, strategy)
            .await;
        match (request.trigger, result) {
            (_, Ok(compaction)) => {
                let event = apply_compaction(self.state, self.deps, compaction);
                self.emit(event);
            }
            (CompactTrigger::Proactive, Err(e)) => {
                // Not fatal: the request may still fit; an overflow then
                // takes the reactive path.
                self.state.recovery.compaction_failures += 1;
                tracing::warn!(error = %e, "proactive compaction failed");
            }
            (CompactTrigger::Reactive, Err(e)) => return self.reactive_compaction_failed(&e),
        }
        match request.trigger {
            CompactTrigger::Proactive => {
                self.watch.check(&self.state.recovery);
                Step::Request
            }
            CompactTrigger::Reactive => self.retry_with(RetryPlan::ReactiveCompact),
        }
    }

    fn request(&mut self) -> Step {
        // Tools that became available since the last request (an MCP server
        // finished starting) are offered from this one on.
        if let Some(specs) = self.deps.tools.updated_specs() {
            self.state.tools = specs;
        }
        let request = build_request(self.state, &self.retry);
        check_request(&request);
        let sent_max_tokens = request.max_tokens;
        self.state.last_request_ms = Some(self.deps.clock.now_ms());
        let stream = self
            .deps
            .provider
            .stream(request, self.cancel.token().clone());
        Step::Stream(Box::new(InFlight {
            stream,
            reply: Reply::default(),
            sent_max_tokens,
        }))
    }

    async fn stream(&mut self, mut flight: Box<InFlight>) -> Step {
        let next = match select(Box::pin(self.cancel.cancelled()), flight.stream.next()).await {
            Either::Left(((), _)) => None,
            Either::Right((next, _)) => Some(next),
        };
        let end = match next {
            None => ReplyEnd::Cancelled,
            Some(None) if flight.reply.stop_reason.is_some() => ReplyEnd::Finished,
            Some(None) => ReplyEnd::Failed(ProviderError::new(
                ProviderErrorKind::StreamCut,
                "the reply ended before the model finished",
            )),
            // A stop the stream noticed before the loop did (the two race
            // on a multi-threaded runtime) is still a stop, not a model
            // error.
            Some(Some(Err(_))) if self.cancel.is_cancelled() => ReplyEnd::Cancelled,
            Some(Some(Err(error))) => ReplyEnd::Failed(error),
            Some(Some(Ok(event))) => match self.take_event(&mut flight.reply, event) {
                Some(end) => end,
                None => return Step::Stream(flight),
            },
        };
        self.settle(*flight, end)
    }

    /// Folds one provider event into the reply, forwarding deltas and retry
    /// notices; `Some` when the reply must end here.
    fn take_event(&mut self, reply: &mut Reply, event: ProviderEvent) -> Option<ReplyEnd> {
        let recovery = &mut self.state.recovery;
        match event {
            ProviderEvent::Started { .. } => {}
            ProviderEvent::Delta(delta) => {
                recovery.overload_streak = 0;
                if let StreamDelta::Text { text } = &delta {
                    reply.partial_text.push_str(text);
                }
                self.emit(AgentEvent::Delta { delta });
            }
            ProviderEvent::Block(block) => {
                if matches!(block, AssistantBlock::Text { .. }) {
                    reply.partial_text.clear();
                }
                reply.blocks.push(block);
            }
            ProviderEvent::Usage(usage) => {
                reply.usage.merge_cumulative(&usage);
                reply.saw_usage = true;
            }
            ProviderEvent::Stop { reason } => reply.stop_reason = Some(reason),
            ProviderEvent::Retrying {
                attempt,
                delay_ms,
                kind,
                reason,
            } => {
                if kind == ProviderErrorKind::Overloaded {
                    recovery.overload_streak += 1;
                } else {
                    recovery.overload_streak = 0;
                }
                let switch = recovery.overload_streak >= OVERLOADS_BEFORE_FALLBACK
                    && !recovery.fell_back
                    && self
                        .state
                        .fallback_model
                        .as_deref()
                        .is_some_and(|m| m != self.state.model);
                self.emit(AgentEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                });
                if switch {
                    return Some(ReplyEnd::SwitchToFallback);
                }
            }
        }
        None
    }

    /// The reply stream ended: records its usage and whether it failed, and
    /// routes to what its end calls for.
    fn settle(&mut self, flight: InFlight, end: ReplyEnd) -> Step {
        let InFlight {
            stream,
            reply,
            sent_max_tokens,
        } = flight;
        drop(stream);

        if reply.saw_usage {
            self.state.last_usage = Some(reply.usage);
            self.state.total_usage.add(&reply.usage);
            self.emit(AgentEvent::Usage {
                model: self.state.model.clone(),
                usage: reply.usage,
            });
        }

        // Anthropic reports the output limit as a normal stop; treat it like
        // Chat Completions' `length` unless the reply asked for tools
        // (decided by tool_use blocks only, §5.5).
        let end = match end {
            ReplyEnd::Finished
                if reply.stop_reason == Some(StopReason::MaxTokens) && !reply.has_tool_use() =>
            {
                ReplyEnd::Failed(ProviderError::new(
                    ProviderErrorKind::OutputLimit,
                    "the reply hit the output-token limit",
                ))
            }
            other => other,
        };
        self.last_request_failed = matches!(end, ReplyEnd::Failed(_) | ReplyEnd::SwitchToFallback);

        match end {
            ReplyEnd::Cancelled => Step::Abort(reply),
            ReplyEnd::SwitchToFallback => Step::FallBack,
            ReplyEnd::Failed(error) => Step::Recover(Box::new(Failure {
                error,
                reply,
                sent_max_tokens,
            })),
            ReplyEnd::Finished => Step::Reply(reply),
        }
    }

    fn fall_back(&mut self) -> Step {
        let Some(fallback) = self.state.fallback_model.clone() else {
            return Step::Prepare;
        };
        let from = std::mem::replace(&mut self.state.model, fallback.clone());
        self.state.recovery.fell_back = true;
        self.state.recovery.overload_streak = 0;
        self.deps.transcript.model_changed(&fallback);
        self.note(
            SystemLevel::Warning,
            format!("{from} is overloaded; switched to the fallback model {fallback}."),
        );
        self.state.transition = Some(Transition::FallbackModel);
        self.watch.check(&self.state.recovery);
        Step::Prepare
    }

    fn recover(&mut self, failure: Failure) -> Step {
        let Failure {
            error,
            reply,
            sent_max_tokens,
        } = failure;
        let decision = if error.is_recoverable_by_loop() {
            let limits = RecoveryLimits {
                current_max_tokens: sent_max_tokens,
                // Never past a quarter of the window (context::output_ceiling).
                model_max_tokens: context::output_ceiling(
                    &self.deps.provider.capabilities(&self.state.model),
                ),
            };
            attempt_recovery(&error, &self.state.recovery, limits)
        } else {
            RecoveryDecision::Surface(AgentError {
                kind: error.error_kind(),
                message: describe(&error),
            })
        };
        let plan = match decision {
            RecoveryDecision::Surface(error) => return self.surface(error),
            RecoveryDecision::Retry(plan) => plan,
        };
        match plan {
            RetryPlan::ReactiveCompact => {
                self.state.recovery.reactive_compact_attempted = true;
                let request = compact_request(self.state, self.deps, CompactTrigger::Reactive);
                return match self.deps.compactor.plan(&self.state.messages, &request) {
                    Some(strategy) => {
                        self.emit(AgentEvent::Compacting { strategy });
                        Step::Compact {
                            request: Box::new(request),
                            strategy,
                        }
                    }
                    None => self.reactive_compaction_failed(&CompactError(
                        "nothing could be compacted".into(),
                    )),
                };
            }
            RetryPlan::EscalateOutputLimit { max_tokens } => {
                self.state.recovery.output_limit_hits += 1;
                self.retry.max_tokens = Some(max_tokens);
            }
            RetryPlan::ContinueAfterOutputLimit => {
                self.state.recovery.output_limit_hits += 1;
                self.state.recovery.continuations += 1;
                let partial = reply.into_partial_blocks();
                if !partial.is_empty() {
                    let message = assistant(
                        self.deps,
                        self.state,
                        partial,
                        Some(StopReason::MaxTokens),
                        false,
                    );
                    self.produced_message = true;
                    self.post(message);
                }
                self.post(Message::User(UserMessage {
                    id: MessageId::generate(self.deps.ids.as_ref()),
                    content: vec![UserBlock::Text {
                        text: CONTINUE_PROMPT.to_owned(),
                    }],
                    origin: MessageOrigin::Continuation,
                }));
            }
        }
        self.retry_with(plan)
    }

    /// Goes round again after a recovery `plan` was carried out.
    fn retry_with(&mut self, plan: RetryPlan) -> Step {
        self.state.transition = Some(plan.transition());
        self.watch.check(&self.state.recovery);
        Step::Prepare
    }

    fn reactive_compaction_failed(&mut self, e: &CompactError) -> Step {
        self.state.recovery.compaction_failures += 1;
        self.surface(AgentError {
            kind: ErrorKind::ContextOverflow,
            message: format!(
                "The conversation is too long for the model and {e}. Start a new session or run /compact with a focus."
            ),
        })
    }

    fn reply(&mut self, reply: Reply) -> Step {
        let stop_reason = reply.stop_reason;
        let reply_usage = reply.saw_usage.then_some(reply.usage);
        let message = assistant(self.deps, self.state, reply.blocks, stop_reason, false);
        self.produced_message = true;
        let calls: Vec<ToolCall> = message
            .as_assistant()
            .map(|a| {
                a.tool_uses()
                    .map(|t| ToolCall {
                        id: t.id.clone(),
                        name: t.name.to_owned(),
                        input: t.input.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        append(self.state, self.deps, message.clone());
        if let Some(usage) = reply_usage {
            self.state.usage_anchor =
                Some(UsageAnchor::after_reply(self.state.messages.len(), &usage));
        }
        self.emit(AgentEvent::Message { message });

        if !calls.is_empty() {
            Step::RunTools(calls)
        } else if stop_reason == Some(StopReason::PauseTurn) {
            // The provider paused its own long tool work (its web
            // search): the reply goes back as it is and the model goes on.
            self.next_iteration(Transition::NextTurn)
        } else if stop_reason == Some(StopReason::Refusal) {
            Step::Finish(TerminalReason::Refusal)
        } else {
            Step::StopHooks
        }
    }

    async fn stop_hooks(&mut self) -> Step {
        // INV-6: only a finished reply leads here.
        check_stop_hook_entry(self.last_request_failed);
        match self.deps.hooks.on_stop(&self.state.messages).await {
            StopVerdict::Allow => Step::Finish(TerminalReason::Completed),
            StopVerdict::Prevent { reason } => {
                self.note(
                    SystemLevel::Info,
                    format!("A Stop hook ended the turn: {reason}"),
                );
                Step::Finish(TerminalReason::StopHookPrevented)
            }
            StopVerdict::Continue { reason } => {
                if self.state.recovery.stop_hook_retries >= MAX_STOP_HOOK_RETRIES {
                    self.note(
                        SystemLevel::Warning,
                        format!(
                            "A Stop hook asked to continue {MAX_STOP_HOOK_RETRIES} times; ending the turn. Last reason: {reason}"
                        ),
                    );
                    return Step::Finish(TerminalReason::Completed);
                }
                self.state.recovery.stop_hook_retries += 1;
                self.post(Message::User(UserMessage {
                    id: MessageId::generate(self.deps.ids.as_ref()),
                    content: vec![UserBlock::Text { text: reason }],
                    origin: MessageOrigin::Hook,
                }));
                self.next_iteration(Transition::StopHookRetry)
            }
        }
    }

    /// Moves to the next iteration of the turn (the guards of §5 reset).
    fn next_iteration(&mut self, transition: Transition) -> Step {
        self.state.advance_turn();
        self.watch.reset(&self.state.recovery);
        self.retry = RetryContext::default();
        self.state.transition = Some(transition);
        Step::Prepare
    }

    fn run_tools(&mut self, calls: Vec<ToolCall>) -> Step {
        let options = ExecuteOptions {
            cancel: self.cancel.child(),
            mode: self.state.mode,
        };
        let run = self.deps.tools.execute(calls.clone(), options);
        Step::Tools(Box::new(ToolBatch {
            run,
            results: Vec::with_capacity(calls.len()),
            calls,
        }))
    }

    async fn tools(&mut self, mut batch: Box<ToolBatch>) -> Step {
        match batch.run.next().await {
            Some(ToolRunEvent::Event(event)) => {
                self.emit(event);
                Step::Tools(batch)
            }
            Some(ToolRunEvent::Result(result)) => {
                batch.results.push(result);
                Step::Tools(batch)
            }
            None => self.results(*batch),
        }
    }

    /// The batch ended: exactly one result per call, in call order, then
    /// the messages the tools added.
    fn results(&mut self, batch: ToolBatch) -> Step {
        let ToolBatch {
            run,
            calls,
            results,
        } = batch;
        drop(run);
        let results = check_results_match(&calls, results);
        let mut content = Vec::with_capacity(results.len());
        let mut side_messages = Vec::new();
        for result in results {
            content.push(UserBlock::ToolResult {
                tool_use_id: result.tool_use_id,
                content: result.content,
                is_error: result.is_error,
                ui: result.ui,
            });
            side_messages.extend(result.side_messages);
        }
        self.post(Message::User(UserMessage {
            id: MessageId::generate(self.deps.ids.as_ref()),
            content,
            origin: MessageOrigin::ToolResults,
        }));
        for side in side_messages {
            self.post(side);
        }
        Step::Advance
    }

    fn advance(&mut self) -> Step {
        if self.cancel.is_cancelled() {
            return Step::Abort(Reply::default());
        }
        // Queued messages go after the results, never between a tool_use
        // and its result.
        for queued in self.deps.queue.drain() {
            self.post(queued);
        }
        if self.state.turn >= self.state.max_turns {
            return Step::Finish(TerminalReason::MaxTurns);
        }
        self.next_iteration(Transition::NextTurn)
    }

    /// Ends a stopped turn: keeps a partial answer (marked interrupted, its
    /// finished tool uses answered), or withdraws the prompt when nothing
    /// was produced, then `Done { Aborted }` (docs/design.md §5 [rule]).
    fn abort(&mut self, reply: Reply) -> Step {
        let has_text = !reply.partial_text.is_empty()
            || reply.blocks.iter().any(|b| {
                matches!(
                    b,
                    AssistantBlock::Text { .. } | AssistantBlock::ToolUse { .. }
                )
            });
        if has_text {
            let partial = assistant(
                self.deps,
                self.state,
                reply.into_partial_blocks(),
                None,
                true,
            );
            self.post(partial);
            self.produced_message = true;
            if let Some(results) = orphan_results(&self.state.messages, self.deps) {
                self.post(results);
            }
        }
        if !self.produced_message
            && let Some(prompt_id) = self.state.turn_prompt.take()
        {
            self.state.messages.retain(|m| m.id() != &prompt_id);
            self.deps.transcript.withdrawn(&prompt_id);
            self.emit(AgentEvent::PromptWithdrawn {
                message_id: prompt_id,
            });
        }
        let by = match self.cancel.reason() {
            Some(CancelReason::UserInterjection) => AbortSource::UserInterjection,
            Some(CancelReason::Shutdown) => AbortSource::Shutdown,
            Some(CancelReason::User | CancelReason::SiblingFailure) | None => AbortSource::User,
        };
        Step::Finish(TerminalReason::Aborted { by })
    }

    /// Surfaces an error: a note for people, then `Done { Error }`.
    fn surface(&mut self, error: AgentError) -> Step {
        self.note(SystemLevel::Error, error.message.clone());
        Step::Finish(TerminalReason::Error { error })
    }

    fn finish(&mut self, reason: TerminalReason) -> Step {
        self.emit(AgentEvent::Done { reason });
        Step::Ended
    }
}

/// INV-1/INV-2, INV-7, INV-9 and INV-8 on a request about to be sent.
fn check_request(request: &ModelRequest) {
    enforce(check_tool_pairing(&request.messages));
    enforce(check_no_system_messages(&request.messages));
    enforce(check_thinking_model(&request.messages, &request.model));
    let section_breakpoints = 1 + usize::from(!request.system.session.is_empty());
    let tool_breakpoint = usize::from(!request.tools.is_empty());
    let message_breakpoints = usize::from(request.cache.message_breakpoint);
    enforce(check_cache_breakpoints(
        message_breakpoints,
        section_breakpoints + tool_breakpoint + message_breakpoints,
    ));
}

/// Appends to the history and the transcript.
fn append(state: &mut AgentState, deps: &AgentDeps, message: Message) {
    deps.transcript.message(&message);
    state.messages.push(message);
}

fn assistant(
    deps: &AgentDeps,
    state: &AgentState,
    content: Vec<AssistantBlock>,
    stop_reason: Option<StopReason>,
    interrupted: bool,
) -> Message {
    Message::Assistant(AssistantMessage {
        id: MessageId::generate(deps.ids.as_ref()),
        content,
        model: state.model.clone(),
        stop_reason,
        interrupted,
    })
}

fn system_note(deps: &AgentDeps, level: SystemLevel, text: String) -> Message {
    Message::System(SystemMessage {
        id: MessageId::generate(deps.ids.as_ref()),
        text,
        level,
    })
}

/// Compacts now, between turns (`/compact [focus]`): a summary focused on
/// `focus` when given. Returns the events to show (`Compacting`,
/// `Compacted`); pairing is checked as after any compaction.
pub async fn compact_now(
    state: &mut AgentState,
    deps: &AgentDeps,
    focus: Option<String>,
) -> Result<Vec<AgentEvent>, CompactError> {
    let mut request = compact_request(state, deps, CompactTrigger::Proactive);
    request.focus = Some(focus.unwrap_or_default());
    let strategy = CompactionStrategy::Summary;
    let compacting = AgentEvent::Compacting { strategy };
    match deps
        .compactor
        .compact(&state.messages, &request, strategy)
        .await
    {
        Ok(compaction) => Ok(vec![compacting, apply_compaction(state, deps, compaction)]),
        Err(e) => {
            state.recovery.compaction_failures += 1;
            Err(e)
        }
    }
}

fn compact_request(
    state: &AgentState,
    deps: &AgentDeps,
    trigger: CompactTrigger,
) -> CompactRequest {
    CompactRequest {
        trigger,
        model: state.model.clone(),
        capabilities: deps.provider.capabilities(&state.model),
        estimate: context::estimate(
            &state.system,
            &state.tools,
            &state.messages,
            state.usage_anchor,
        ),
        now_ms: deps.clock.now_ms(),
        last_request_ms: state.last_request_ms,
        system: state.system.clone(),
        tools: state.tools.clone(),
        server_tools: state.server_tools.clone(),
        session_key: state.cache_key.clone(),
        focus: None,
    }
}

/// Installs a compacted history; pairing is checked right after (INV-1).
/// Returns the `Compacted` event.
fn apply_compaction(
    state: &mut AgentState,
    deps: &AgentDeps,
    compaction: Compaction,
) -> AgentEvent {
    enforce(check_tool_pairing(&compaction.messages));
    state.recovery.compaction_failures = 0;
    deps.transcript
        .compacted(&compaction.messages, compaction.strategy);
    state.messages = compaction.messages;
    state.usage_anchor = None;
    AgentEvent::Compacted {
        before: compaction.before_tokens,
        after: compaction.after_tokens,
        strategy: compaction.strategy,
    }
}

/// Results for tool uses at the end of the history that have none.
fn orphan_results(messages: &[Message], deps: &AgentDeps) -> Option<Message> {
    let last = messages
        .iter()
        .rev()
        .find(|m| !matches!(m, Message::System(_)))?;
    let assistant = last.as_assistant()?;
    let content: Vec<UserBlock> = assistant
        .tool_uses()
        .map(|t| interrupted_result(t.id.clone()))
        .collect();
    (!content.is_empty()).then(|| {
        Message::User(UserMessage {
            id: MessageId::generate(deps.ids.as_ref()),
            content,
            origin: MessageOrigin::ToolResults,
        })
    })
}

#[cfg(test)]
mod tests;
