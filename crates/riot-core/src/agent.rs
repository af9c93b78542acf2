//! `run_agent`: the loop of docs/design.md §5 as one async stream.
//!
//! 1. cancelled → fill orphans, keep or withdraw, `Done { Aborted }`;
//! 2. `RequestStart`, prepare context;
//! 3. stream the reply, forwarding deltas; recoverable errors are withheld;
//! 4. recovery decides retry (with a transition) or surface;
//! 5. continue only if the reply has `tool_use` blocks;
//! 6. no tool use → Stop hooks (never after an API error);
//! 7. execute tools through the scheduler;
//! 8. advance: results, queued messages, `max_turns`.
//!
//! The item type has no `Result`: every error becomes a message for the
//! model or a terminal reason, and `Done` is always last (INV-4).

use futures::future::{Either, select};
use futures::stream::{Stream, StreamExt};
use riot_protocol::invariants::{
    check_cache_breakpoints, check_no_system_messages, check_thinking_model, check_tool_pairing,
    enforce,
};
use riot_protocol::{
    AbortSource, AgentError, AgentEvent, AssistantBlock, AssistantMessage, CancelReason,
    CancelScope, ErrorKind, ExecuteOptions, Message, MessageId, MessageOrigin, ProviderError,
    ProviderErrorKind, ProviderEvent, StopReason, StreamDelta, SystemLevel, SystemMessage,
    TerminalReason, ToolCall, ToolRunEvent, Transition, Usage, UserBlock, UserMessage,
};

use crate::context::{self, UsageAnchor};
use crate::deps::{AgentDeps, CompactRequest, CompactTrigger, Compaction, StopVerdict};
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
    DoneGuard::new(Box::pin(turn(state, prompt, deps, cancel)))
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

fn turn<'a>(
    state: &'a mut AgentState,
    prompt: Option<Message>,
    deps: &'a AgentDeps,
    cancel: CancelScope,
) -> impl Stream<Item = AgentEvent> + Send + 'a {
    async_stream::stream! {
        // A new turn: per-turn guards start fresh; the compaction breaker's
        // streak survives (it resets only when a compaction succeeds).
        state.turn = 0;
        state.transition = None;
        state.recovery = RecoveryState {
            compaction_failures: state.recovery.compaction_failures,
            epoch: state.recovery.epoch,
            ..RecoveryState::default()
        };
        let mut watch = RecoveryWatch::new(&state.recovery);

        // A history cut by a crash may end in unanswered tool uses.
        if let Some(repair) = orphan_results(&state.messages, deps) {
            append(state, deps, repair.clone());
            yield AgentEvent::Message { message: repair };
        }

        state.turn_prompt = None;
        if let Some(prompt) = prompt {
            state.turn_prompt = Some(prompt.id().clone());
            append(state, deps, prompt.clone());
            yield AgentEvent::Message { message: prompt };
        }
        let mut produced_message = false;
        let mut retry = RetryContext::default();
        state.advance_turn();
        watch.reset(&state.recovery);

        loop {
            if cancel.is_cancelled() {
                for event in abort(state, deps, &cancel, Reply::default(), produced_message) {
                    yield event;
                }
                return;
            }

            let after = state.transition.take();
            yield AgentEvent::RequestStart { turn: state.turn, model: state.model.clone(), after };

            // Proactive compaction (not right after a reactive one).
            if after != Some(Transition::ReactiveCompactRetry) {
                let request = compact_request(state, deps, CompactTrigger::Proactive);
                if let Some(strategy) = deps.compactor.plan(&state.messages, &request) {
                    yield AgentEvent::Compacting { strategy };
                    match deps.compactor.compact(&state.messages, &request, strategy).await {
                        Ok(compaction) => {
                            for event in apply_compaction(state, deps, compaction) {
                                yield event;
                            }
                        }
                        Err(e) => {
                            // Not fatal: the request may still fit; an
                            // overflow then takes the reactive path.
                            state.recovery.compaction_failures += 1;
                            tracing::warn!(error = %e, "proactive compaction failed");
                        }
                    }
                }
                watch.check(&state.recovery);
            }

            // Tools that became available since the last request (an MCP
            // server finished starting) are offered from this one on.
            if let Some(specs) = deps.tools.updated_specs() {
                state.tools = specs;
            }
            let request = build_request(state, &retry);
            // INV-1/INV-2, INV-7, INV-9, INV-8 before each provider request.
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
            let sent_max_tokens = request.max_tokens;
            state.last_request_ms = Some(deps.clock.now_ms());

            // Stream the reply.
            let mut reply = Reply::default();
            let mut stream = deps.provider.stream(request, cancel.token().clone());
            let end = loop {
                let next = match select(Box::pin(cancel.cancelled()), stream.next()).await {
                    Either::Left(((), _)) => break ReplyEnd::Cancelled,
                    Either::Right((next, _)) => next,
                };
                match next {
                    None => {
                        break if reply.stop_reason.is_some() {
                            ReplyEnd::Finished
                        } else {
                            ReplyEnd::Failed(ProviderError::new(
                                ProviderErrorKind::StreamCut,
                                "the reply ended before the model finished",
                            ))
                        };
                    }
                    // A stop the stream noticed before this loop did
                    // (the two race on a multi-threaded runtime) is still
                    // a stop, not a model error.
                    Some(Err(_)) if cancel.is_cancelled() => break ReplyEnd::Cancelled,
                    Some(Err(error)) => break ReplyEnd::Failed(error),
                    Some(Ok(event)) => match event {
                        ProviderEvent::Started { .. } => {}
                        ProviderEvent::Delta(delta) => {
                            state.recovery.overload_streak = 0;
                            if let StreamDelta::Text { text } = &delta {
                                reply.partial_text.push_str(text);
                            }
                            yield AgentEvent::Delta { delta };
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
                        ProviderEvent::Retrying { attempt, delay_ms, kind, reason } => {
                            if kind == ProviderErrorKind::Overloaded {
                                state.recovery.overload_streak += 1;
                            } else {
                                state.recovery.overload_streak = 0;
                            }
                            yield AgentEvent::Retrying { attempt, delay_ms, reason };
                            if state.recovery.overload_streak >= OVERLOADS_BEFORE_FALLBACK
                                && state.fallback_model.as_deref().is_some_and(|m| m != state.model)
                                && !state.recovery.fell_back
                            {
                                break ReplyEnd::SwitchToFallback;
                            }
                        }
                    },
                }
            };
            drop(stream);

            if reply.saw_usage {
                state.last_usage = Some(reply.usage);
                state.total_usage.add(&reply.usage);
                yield AgentEvent::Usage { model: state.model.clone(), usage: reply.usage };
            }

            // Anthropic reports the output limit as a normal stop; treat it
            // like Chat Completions' `length` unless the reply asked for
            // tools (decided by tool_use blocks only, §5.5).
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

            match end {
                ReplyEnd::Cancelled => {
                    for event in abort(state, deps, &cancel, reply, produced_message) {
                        yield event;
                    }
                    return;
                }
                ReplyEnd::SwitchToFallback => {
                    let Some(fallback) = state.fallback_model.clone() else { continue };
                    let from = std::mem::replace(&mut state.model, fallback.clone());
                    state.recovery.fell_back = true;
                    state.recovery.overload_streak = 0;
                    deps.transcript.model_changed(&fallback);
                    let note = system_note(
                        deps,
                        SystemLevel::Warning,
                        format!("{from} is overloaded; switched to the fallback model {fallback}."),
                    );
                    append(state, deps, note.clone());
                    yield AgentEvent::Message { message: note };
                    state.transition = Some(Transition::FallbackModel);
                    watch.check(&state.recovery);
                    continue;
                }
                ReplyEnd::Failed(error) => {
                    let decision = if error.is_recoverable_by_loop() {
                        let limits = RecoveryLimits {
                            current_max_tokens: sent_max_tokens,
                            model_max_tokens: deps.provider.capabilities(&state.model).max_output_tokens,
                        };
                        attempt_recovery(&error, &state.recovery, limits)
                    } else {
                        RecoveryDecision::Surface(AgentError {
                            kind: error.error_kind(),
                            message: describe(&error),
                        })
                    };
                    match decision {
                        RecoveryDecision::Surface(error) => {
                            for event in surface(state, deps, error) {
                                yield event;
                            }
                            return;
                        }
                        RecoveryDecision::Retry(plan) => {
                            match plan {
                                RetryPlan::ReactiveCompact => {
                                    state.recovery.reactive_compact_attempted = true;
                                    let request = compact_request(state, deps, CompactTrigger::Reactive);
                                    let compacted = match deps.compactor.plan(&state.messages, &request) {
                                        Some(strategy) => {
                                            yield AgentEvent::Compacting { strategy };
                                            deps.compactor.compact(&state.messages, &request, strategy).await
                                        }
                                        None => Err(crate::deps::CompactError("nothing could be compacted".into())),
                                    };
                                    match compacted {
                                        Ok(compaction) => {
                                            for event in apply_compaction(state, deps, compaction) {
                                                yield event;
                                            }
                                        }
                                        Err(e) => {
                                            state.recovery.compaction_failures += 1;
                                            let error = AgentError {
                                                kind: ErrorKind::ContextOverflow,
                                                message: format!(
                                                    "The conversation is too long for the model and {e}. Start a new session or run /compact with a focus."
                                                ),
                                            };
                                            for event in surface(state, deps, error) {
                                                yield event;
                                            }
                                            return;
                                        }
                                    }
                                }
                                RetryPlan::EscalateOutputLimit { max_tokens } => {
                                    state.recovery.output_limit_hits += 1;
                                    retry.max_tokens = Some(max_tokens);
                                }
                                RetryPlan::ContinueAfterOutputLimit => {
                                    state.recovery.output_limit_hits += 1;
                                    state.recovery.continuations += 1;
                                    let partial = reply.into_partial_blocks();
                                    if !partial.is_empty() {
                                        let message = assistant(deps, state, partial, Some(StopReason::MaxTokens), false);
                                        produced_message = true;
                                        append(state, deps, message.clone());
                                        yield AgentEvent::Message { message };
                                    }
                                    let nudge = Message::User(UserMessage {
                                        id: MessageId::generate(deps.ids.as_ref()),
                                        content: vec![UserBlock::Text { text: CONTINUE_PROMPT.to_owned() }],
                                        origin: MessageOrigin::Continuation,
                                    });
                                    append(state, deps, nudge.clone());
                                    yield AgentEvent::Message { message: nudge };
                                }
                            }
                            state.transition = Some(plan.transition());
                            watch.check(&state.recovery);
                            continue;
                        }
                    }
                }
                ReplyEnd::Finished => {}
            }

            // A finished reply.
            let stop_reason = reply.stop_reason;
            let reply_usage = reply.saw_usage.then_some(reply.usage);
            let message = assistant(deps, state, reply.blocks, stop_reason, false);
            produced_message = true;
            append(state, deps, message.clone());
            if let Some(usage) = reply_usage {
                state.usage_anchor = Some(UsageAnchor::after_reply(state.messages.len(), &usage));
            }
            yield AgentEvent::Message { message: message.clone() };

            let calls: Vec<ToolCall> = message
                .as_assistant()
                .map(|a| {
                    a.tool_uses()
                        .map(|t| ToolCall { id: t.id.clone(), name: t.name.to_owned(), input: t.input.clone() })
                        .collect()
                })
                .unwrap_or_default();

            if calls.is_empty() {
                if stop_reason == Some(StopReason::Refusal) {
                    yield AgentEvent::Done { reason: TerminalReason::Refusal };
                    return;
                }
                // INV-6: this path is reached only by a finished reply.
                check_stop_hook_entry(false);
                match deps.hooks.on_stop(&state.messages).await {
                    StopVerdict::Allow => {
                        yield AgentEvent::Done { reason: TerminalReason::Completed };
                        return;
                    }
                    StopVerdict::Prevent { reason } => {
                        let note = system_note(deps, SystemLevel::Info, format!("A Stop hook ended the turn: {reason}"));
                        append(state, deps, note.clone());
                        yield AgentEvent::Message { message: note };
                        yield AgentEvent::Done { reason: TerminalReason::StopHookPrevented };
                        return;
                    }
                    StopVerdict::Continue { reason } => {
                        if state.recovery.stop_hook_retries >= MAX_STOP_HOOK_RETRIES {
                            let note = system_note(
                                deps,
                                SystemLevel::Warning,
                                format!("A Stop hook asked to continue {MAX_STOP_HOOK_RETRIES} times; ending the turn. Last reason: {reason}"),
                            );
                            append(state, deps, note.clone());
                            yield AgentEvent::Message { message: note };
                            yield AgentEvent::Done { reason: TerminalReason::Completed };
                            return;
                        }
                        state.recovery.stop_hook_retries += 1;
                        let feedback = Message::User(UserMessage {
                            id: MessageId::generate(deps.ids.as_ref()),
                            content: vec![UserBlock::Text { text: reason }],
                            origin: MessageOrigin::Hook,
                        });
                        append(state, deps, feedback.clone());
                        yield AgentEvent::Message { message: feedback };
                        state.advance_turn();
                        watch.reset(&state.recovery);
                        retry = RetryContext::default();
                        state.transition = Some(Transition::StopHookRetry);
                        continue;
                    }
                }
            }

            // Execute the tools; exactly one result per call, in call order.
            let options = ExecuteOptions { cancel: cancel.child(), mode: state.mode };
            let mut results = Vec::with_capacity(calls.len());
            let mut run = deps.tools.execute(calls.clone(), options);
            while let Some(event) = run.next().await {
                match event {
                    ToolRunEvent::Event(event) => yield event,
                    ToolRunEvent::Result(result) => results.push(result),
                }
            }
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
            let results_message = Message::User(UserMessage {
                id: MessageId::generate(deps.ids.as_ref()),
                content,
                origin: MessageOrigin::ToolResults,
            });
            append(state, deps, results_message.clone());
            yield AgentEvent::Message { message: results_message };
            for side in side_messages {
                append(state, deps, side.clone());
                yield AgentEvent::Message { message: side };
            }

            if cancel.is_cancelled() {
                for event in abort(state, deps, &cancel, Reply::default(), true) {
                    yield event;
                }
                return;
            }

            // Queued messages go after the results, never between a
            // tool_use and its result.
            for queued in deps.queue.drain() {
                append(state, deps, queued.clone());
                yield AgentEvent::Message { message: queued };
            }

            if state.turn >= state.max_turns {
                yield AgentEvent::Done { reason: TerminalReason::MaxTurns };
                return;
            }
            state.advance_turn();
            watch.reset(&state.recovery);
            retry = RetryContext::default();
            state.transition = Some(Transition::NextTurn);
        }
    }
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
) -> Result<Vec<AgentEvent>, crate::deps::CompactError> {
    let mut request = compact_request(state, deps, CompactTrigger::Proactive);
    request.focus = Some(focus.unwrap_or_default());
    let strategy = riot_protocol::CompactionStrategy::Summary;
    let mut events = vec![AgentEvent::Compacting { strategy }];
    match deps
        .compactor
        .compact(&state.messages, &request, strategy)
        .await
    {
        Ok(compaction) => {
            events.extend(apply_compaction(state, deps, compaction));
            Ok(events)
        }
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
        session_key: state.cache_key.clone(),
        focus: None,
    }
}

/// Installs a compacted history; pairing is checked right after (INV-1).
fn apply_compaction(
    state: &mut AgentState,
    deps: &AgentDeps,
    compaction: Compaction,
) -> Vec<AgentEvent> {
    enforce(check_tool_pairing(&compaction.messages));
    state.recovery.compaction_failures = 0;
    deps.transcript
        .compacted(&compaction.messages, compaction.strategy);
    state.messages = compaction.messages;
    state.usage_anchor = None;
    vec![AgentEvent::Compacted {
        before: compaction.before_tokens,
        after: compaction.after_tokens,
        strategy: compaction.strategy,
    }]
}

/// Surfaces an error: a note for people, then `Done { Error }`.
fn surface(state: &mut AgentState, deps: &AgentDeps, error: AgentError) -> Vec<AgentEvent> {
    let note = system_note(deps, SystemLevel::Error, error.message.clone());
    append(state, deps, note.clone());
    vec![
        AgentEvent::Message { message: note },
        AgentEvent::Done {
            reason: TerminalReason::Error { error },
        },
    ]
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

/// Ends a stopped turn: keeps a partial answer (marked interrupted, its
/// finished tool uses answered), or withdraws the prompt when nothing was
/// produced, then `Done { Aborted }` (docs/design.md §5 [rule]).
fn abort(
    state: &mut AgentState,
    deps: &AgentDeps,
    cancel: &CancelScope,
    reply: Reply,
    produced_message: bool,
) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let has_text = !reply.partial_text.is_empty()
        || reply.blocks.iter().any(|b| {
            matches!(
                b,
                AssistantBlock::Text { .. } | AssistantBlock::ToolUse { .. }
            )
        });
    let mut produced = produced_message;
    if has_text {
        let partial = assistant(deps, state, reply.into_partial_blocks(), None, true);
        append(state, deps, partial.clone());
        events.push(AgentEvent::Message { message: partial });
        produced = true;
        if let Some(results) = orphan_results(&state.messages, deps) {
            append(state, deps, results.clone());
            events.push(AgentEvent::Message { message: results });
        }
    }
    if !produced && let Some(prompt_id) = state.turn_prompt.take() {
        state.messages.retain(|m| m.id() != &prompt_id);
        deps.transcript.withdrawn(&prompt_id);
        events.push(AgentEvent::PromptWithdrawn {
            message_id: prompt_id,
        });
    }
    let by = match cancel.reason() {
        Some(CancelReason::UserInterjection) => AbortSource::UserInterjection,
        Some(CancelReason::Shutdown) => AbortSource::Shutdown,
        Some(CancelReason::User | CancelReason::SiblingFailure) | None => AbortSource::User,
    };
    events.push(AgentEvent::Done {
        reason: TerminalReason::Aborted { by },
    });
    events
}
