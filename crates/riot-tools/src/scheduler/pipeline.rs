//! One call through the pipeline of docs/design.md §6.3: lookup → cancelled?
//! → structural validation → `validate_input` → PreToolUse hooks →
//! permission (and the person) → cancelled? → `call` with progress →
//! result budget → PostToolUse hooks, with panics caught. Every path ends
//! in exactly one `ToolCallResult`.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::Either;
use riot_protocol::{
    AgentEvent, AllowedBy, CancelReason, CancelScope, DecisionReason, DynTool, HookDecisionKind,
    InterruptBehavior, PermissionGate, PermissionMode, PermissionPolicy, PermissionQuery,
    PermissionResult, PreparedCall, ToolCall, ToolCallResult, ToolContext, ToolEnv, ToolHooks,
    ToolOutcome, ToolResultContent, ToolResultUi, ToolRunEvent, UiPayload,
};

use super::SchedulerConfig;
use super::budget;
use super::permission::{Asker, NotAllowed, denied_text};
use super::schema_hint::schema_hint;

pub(crate) type Sender = futures::channel::mpsc::UnboundedSender<ToolRunEvent>;

/// Sends an event; a dropped receiver means nobody listens any more.
pub(crate) fn send(tx: &Sender, event: ToolRunEvent) {
    let _ = tx.unbounded_send(event);
}

/// A call after lookup and structural validation.
pub(crate) enum Prepared {
    Ready {
        tool: Arc<dyn DynTool>,
        call: Box<dyn PreparedCall>,
    },
    /// Unknown tool or bad input: the message for the model.
    Invalid { message: String },
}

/// A call cleared to run: the prepared call, the input it was prepared
/// from, and a PreToolUse hook's extra context for the model.
pub(super) struct Ready {
    call: Box<dyn PreparedCall>,
    input: serde_json::Value,
    context: Option<String>,
    /// Who let the call run: the OS sandbox keeps what a rewind cannot
    /// restore out of reach of what Riot allowed on its own.
    allowed_by: AllowedBy,
}

/// The failed call that stopped the rest of its message.
#[derive(Debug, Clone)]
pub(crate) struct Cascade {
    tool: String,
    describe: String,
}

/// Everything one `execute` needs, shared by its calls.
pub(crate) struct Run {
    pub tools: Vec<Arc<dyn DynTool>>,
    pub tool_names: Vec<String>,
    pub env: Arc<ToolEnv>,
    pub policy: Arc<dyn PermissionPolicy>,
    pub gate: Arc<dyn PermissionGate>,
    pub hooks: Arc<dyn ToolHooks>,
    pub config: SchedulerConfig,
    pub mode: PermissionMode,
}

/// How a call ended, for results and the cascade.
pub(super) enum Ending {
    Outcome(ToolOutcome),
    /// Refused before running (validation, permission): is_error, no cascade
    /// unless `cascades`.
    Refused {
        message: String,
        cascades: bool,
    },
    /// Cancelled while running.
    Cancelled,
    /// Cancelled while asking or right after: the call never started.
    CancelledBeforeStart,
}

impl From<NotAllowed> for Ending {
    fn from(not: NotAllowed) -> Self {
        match not {
            NotAllowed::Refused(message) => Ending::Refused {
                message,
                cascades: false,
            },
            NotAllowed::Cancelled => Ending::CancelledBeforeStart,
        }
    }
}

fn text_result(
    id: &ToolCall,
    text: String,
    is_error: bool,
    ui: Option<ToolResultUi>,
) -> ToolCallResult {
    ToolCallResult {
        tool_use_id: id.id.clone(),
        content: vec![ToolResultContent::text(text)],
        is_error,
        ui,
        side_messages: Vec::new(),
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

fn is_empty(content: &[ToolResultContent]) -> bool {
    content
        .iter()
        .all(|c| matches!(c, ToolResultContent::Text { text } if text.trim().is_empty()))
}

impl Run {
    /// Step 6: what asking the person needs.
    fn asker(&self) -> Asker<'_> {
        Asker {
            env: &self.env,
            policy: self.policy.as_ref(),
            gate: self.gate.as_ref(),
            timeout_ms: self.config.permission_timeout_ms,
        }
    }

    /// Lookup and structural validation (steps 1 and 3).
    pub(crate) fn prepare(&self, call: &ToolCall) -> Prepared {
        let Some(tool) = self.tools.iter().find(|t| t.name() == call.name) else {
            return Prepared::Invalid {
                message: format!(
                    "There is no tool named `{}`. Use one of the available tools: {}.",
                    call.name,
                    self.tool_names.join(", ")
                ),
            };
        };
        let tool = Arc::clone(tool);
        let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| {
            Arc::clone(&tool).prepare(call.input.clone())
        }));
        match parsed {
            Ok(Ok(prepared)) => Prepared::Ready {
                tool,
                call: prepared,
            },
            Ok(Err(e)) => Prepared::Invalid {
                message: schema_hint(&call.name, &e),
            },
            Err(_) => Prepared::Invalid {
                message: format!(
                    "The input to {} could not be read. Check it against the schema and call again.",
                    call.name
                ),
            },
        }
    }

    fn describe_of(&self, call: &ToolCall, prepared: &Prepared) -> String {
        match prepared {
            Prepared::Ready { call: p, .. } => {
                let p: &dyn PreparedCall = p.as_ref();
                std::panic::catch_unwind(AssertUnwindSafe(|| p.describe()))
                    .unwrap_or_else(|_| call.name.clone())
            }
            Prepared::Invalid { .. } => call.name.clone(),
        }
    }

    fn ui(
        &self,
        describe: &str,
        payload: Option<UiPayload>,
        duration_ms: u64,
    ) -> Option<ToolResultUi> {
        Some(ToolResultUi {
            describe: describe.to_owned(),
            payload,
            duration_ms,
        })
    }

    /// The result of a call skipped because an earlier call cascaded.
    pub(crate) fn skipped(
        &self,
        call: &ToolCall,
        prepared: &Prepared,
        cause: &Cascade,
    ) -> ToolCallResult {
        let describe = self.describe_of(call, prepared);
        text_result(
            call,
            format!(
                "Not run: an earlier {} call ({}) failed, so the remaining tool calls of this message were skipped before they started (they may have depended on it). Look at that failure, then make this call again if it is still needed.",
                cause.tool, cause.describe
            ),
            true,
            self.ui(&describe, None, 0),
        )
    }

    fn cancelled_text(
        &self,
        scope: &CancelScope,
        cascade: &Mutex<Option<Cascade>>,
        started: bool,
    ) -> String {
        let when = if started {
            "while it was running"
        } else {
            "before it started"
        };
        match scope.reason() {
            Some(CancelReason::SiblingFailure) => {
                let cause = cascade.lock().unwrap_or_else(|e| e.into_inner()).clone();
                match cause {
                    Some(c) => format!(
                        "Cancelled {when}: a {} call in the same batch ({}) failed, and a failing {} stops the calls that may depend on it. Look at that failure, then make this call again if it is still needed.",
                        c.tool, c.describe, c.tool
                    ),
                    None => format!("Cancelled {when}: another call in the same batch failed."),
                }
            }
            Some(CancelReason::UserInterjection) => {
                format!("Interrupted {when}: the user sent a new message.")
            }
            Some(CancelReason::Shutdown) => format!("Cancelled {when}: Riot is shutting down."),
            Some(CancelReason::User) | None => format!("Interrupted by the user {when}."),
        }
    }

    /// Runs one call through the whole pipeline.
    pub(crate) async fn run_one(
        self: Arc<Self>,
        call: ToolCall,
        prepared: Prepared,
        tool_scope: CancelScope,
        batch_scope: CancelScope,
        cascade: Arc<Mutex<Option<Cascade>>>,
        tx: Sender,
    ) -> ToolCallResult {
        let describe = self.describe_of(&call, &prepared);
        // Step 2: cancelled already → a cancelled result.
        if tool_scope.is_cancelled() {
            return text_result(
                &call,
                self.cancelled_text(&tool_scope, &cascade, false),
                true,
                self.ui(&describe, None, 0),
            );
        }
        let (tool, prepared) = match prepared {
            Prepared::Ready { tool, call } => (tool, call),
            Prepared::Invalid { message } => {
                return text_result(&call, message, true, self.ui(&describe, None, 0));
            }
        };
        let progress_tx = tx.clone();
        let progress_id = call.id.clone();
        let ctx = ToolContext {
            env: Arc::clone(&self.env),
            tool_use_id: call.id.clone(),
            mode: self.mode,
            allowed_by: AllowedBy::Riot,
            cancel: tool_scope.token().clone(),
            progress: Some(Arc::new(move |payload| {
                send(
                    &progress_tx,
                    ToolRunEvent::Event(AgentEvent::Progress {
                        tool_use_id: progress_id.clone(),
                        payload,
                    }),
                );
            })),
        };
        let started_ms = self.env.clock.now_ms();
        let before = AssertUnwindSafe(self.before_call(
            &call,
            &tool,
            prepared,
            &ctx,
            &tool_scope,
            &describe,
            &tx,
        ))
        .catch_unwind()
        .await;
        // The call as it runs: a PreToolUse hook may have replaced the input.
        let mut effective = call.clone();
        let mut hook_context: Option<String> = None;
        let ending = match before {
            Err(panic) => Ending::Outcome(ToolOutcome::failed(format!(
                "{} failed with an internal error before running ({}). This is a bug in Riot, not in your input; try another approach.",
                call.name,
                panic_message(panic.as_ref())
            ))),
            Ok(Err(ending)) => ending,
            Ok(Ok(ready)) => {
                effective.input = ready.input;
                hook_context = ready.context;
                let ctx = ToolContext {
                    allowed_by: ready.allowed_by,
                    ..ctx.clone()
                };
                // Checkpoints (docs/rewind.md): a call that may change
                // files is announced before it runs and after it ends.
                let changes = !ready.call.is_read_only();
                if changes {
                    let target = ready.call.permission_target(&ctx);
                    self.hooks.before_change(&effective, &target).await;
                }
                let ending = self
                    .execute_call(&call, &tool, ready.call, &ctx, &tool_scope, &describe, &tx)
                    .await;
                if changes {
                    self.hooks.after_change(&effective).await;
                }
                ending
            }
        };
        let duration_ms = self.env.clock.now_ms().saturating_sub(started_ms);
        let cascades = tool.cascades_on_failure();
        let ran_to_an_outcome = matches!(
            ending,
            Ending::Outcome(ToolOutcome::Ok { .. } | ToolOutcome::Failed { .. })
        );
        let (result, failed_for_cascade) = match ending {
            Ending::CancelledBeforeStart => (
                text_result(
                    &call,
                    self.cancelled_text(&tool_scope, &cascade, false),
                    true,
                    self.ui(&describe, None, duration_ms),
                ),
                false,
            ),
            Ending::Refused {
                message,
                cascades: c,
            } => (
                text_result(&call, message, true, self.ui(&describe, None, duration_ms)),
                c,
            ),
            Ending::Cancelled | Ending::Outcome(ToolOutcome::Cancelled) => (
                text_result(
                    &call,
                    self.cancelled_text(&tool_scope, &cascade, true),
                    true,
                    self.ui(&describe, None, duration_ms),
                ),
                false,
            ),
            Ending::Outcome(ToolOutcome::Ok {
                model_content,
                ui_payload,
                side_messages,
            }) => {
                let content = self.finish_content(&call, &tool, model_content).await;
                (
                    ToolCallResult {
                        tool_use_id: call.id.clone(),
                        content,
                        is_error: false,
                        ui: self.ui(&describe, ui_payload, duration_ms),
                        side_messages,
                    },
                    false,
                )
            }
            Ending::Outcome(ToolOutcome::Failed {
                error_for_model,
                ui_payload,
            }) => {
                let content = self
                    .finish_content(&call, &tool, vec![ToolResultContent::text(error_for_model)])
                    .await;
                (
                    ToolCallResult {
                        tool_use_id: call.id.clone(),
                        content,
                        is_error: true,
                        ui: self.ui(&describe, ui_payload, duration_ms),
                        side_messages: Vec::new(),
                    },
                    true,
                )
            }
        };
        // Step 9: only a call that ran to an outcome has PostToolUse hooks.
        let result = if ran_to_an_outcome {
            self.after_call(&effective, result, hook_context, &tool_scope)
                .await
        } else {
            result
        };
        if failed_for_cascade && cascades && !tool_scope.is_cancelled() {
            let mut cause = cascade.lock().unwrap_or_else(|e| e.into_inner());
            if cause.is_none() {
                *cause = Some(Cascade {
                    tool: call.name.clone(),
                    describe: describe.clone(),
                });
            }
            drop(cause);
            batch_scope.cancel(CancelReason::SiblingFailure);
        }
        result
    }

    /// Empty output becomes a statement; over-budget output is spilled.
    async fn finish_content(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn DynTool>,
        content: Vec<ToolResultContent>,
    ) -> Vec<ToolResultContent> {
        if is_empty(&content) {
            return vec![ToolResultContent::text(format!(
                "({} completed with no output)",
                call.name
            ))];
        }
        budget::apply(&self.env, &call.id, tool.result_budget(), content).await
    }

    /// Steps 4–6: semantic validation, PreToolUse hooks and permission.
    /// `Ok` carries the call to run (possibly re-prepared with an input a
    /// hook or the permission layer changed).
    #[allow(clippy::too_many_arguments)]
    async fn before_call(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn DynTool>,
        prepared: Box<dyn PreparedCall>,
        ctx: &ToolContext,
        scope: &CancelScope,
        describe: &str,
        tx: &Sender,
    ) -> Result<Ready, Ending> {
        let cascades = tool.cascades_on_failure();
        let refused = |message| Ending::Refused { message, cascades };
        prepared
            .validate_input(ctx)
            .await
            .map_err(|e| refused(e.message))?;
        // Step 5: PreToolUse hooks. A replaced input is parsed and checked
        // again, and the permission decision judges the new input.
        // An interrupt does not wait for a slow hook (dropping it kills it).
        let verdict = match futures::future::select(
            Box::pin(self.hooks.pre_tool_use(call)),
            Box::pin(scope.cancelled()),
        )
        .await
        {
            Either::Left((verdict, _)) => verdict,
            Either::Right(((), _)) => return Err(Ending::CancelledBeforeStart),
        };
        let mut input = call.input.clone();
        let prepared = match verdict.updated_input {
            Some(updated) if updated != call.input => {
                let re = Arc::clone(tool)
                    .prepare(updated.clone())
                    .map_err(|e| refused(schema_hint(&call.name, &e)))?;
                re.validate_input(ctx)
                    .await
                    .map_err(|e| refused(e.message))?;
                input = updated;
                re
            }
            _ => prepared,
        };
        let hook = verdict.permission;
        if let Some(h) = &hook
            && h.decision == HookDecisionKind::Deny
        {
            // A hook's deny is final whatever the policy (§9.2).
            let reason = DecisionReason::Hook {
                detail: h.reason.clone(),
                hook: h.hook.clone(),
            };
            return Err(Ending::Refused {
                message: denied_text(
                    &call.name,
                    describe,
                    &format!("a PreToolUse hook blocked it: {}", h.reason),
                    &reason,
                ),
                cascades: false,
            });
        }
        let tool_verdict = prepared.check_permissions(ctx).await;
        let target = prepared.permission_target(ctx);
        let query = PermissionQuery {
            tool_name: call.name.clone(),
            input: input.clone(),
            is_read_only: prepared.is_read_only(),
            target: target.clone(),
            tool_verdict,
            classifier_input: prepared.classifier_input(),
            mode: self.mode,
            hook: hook.clone(),
        };
        let mut decision = self.policy.decide(&query).await;
        if let Some(h) = &hook
            && h.decision == HookDecisionKind::Ask
            && matches!(decision, PermissionResult::Allow { .. })
        {
            // A hook's ask is never waved through, whatever the policy.
            decision = PermissionResult::Ask {
                reason: DecisionReason::Hook {
                    detail: h.reason.clone(),
                    hook: h.hook.clone(),
                },
                message: format!("A PreToolUse hook asks before {describe}: {}", h.reason),
            };
        }
        let emit = |event| send(tx, ToolRunEvent::Event(event));
        let allowed_by = match &decision {
            PermissionResult::Allow { reason, .. } => AllowedBy::of(reason),
            _ => AllowedBy::Person,
        };
        let prepared = match decision {
            PermissionResult::Allow {
                updated_input: None,
                ..
            } => prepared,
            PermissionResult::Allow {
                updated_input: Some(updated),
                ..
            } => {
                // The person changed the input: parse and check it again.
                input = updated.clone();
                let re = Arc::clone(tool)
                    .prepare(updated)
                    .map_err(|e| refused(schema_hint(&call.name, &e)))?;
                re.validate_input(ctx)
                    .await
                    .map_err(|e| refused(e.message))?;
                re
            }
            PermissionResult::Deny { reason, message } => {
                return Err(Ending::Refused {
                    message: denied_text(&call.name, describe, &message, &reason),
                    cascades: false,
                });
            }
            PermissionResult::Ask { reason, message } => {
                // "Always" is offered only when the chain says a rule
                // would stick.
                let asked = PermissionResult::Ask {
                    reason: reason.clone(),
                    message: message.clone(),
                };
                let rule = self.policy.suggest_rule(&query, &asked);
                let preview = prepared.preview(ctx).await;
                self.asker()
                    .ask(
                        call, &target, reason, message, rule, preview, scope, describe, &emit,
                    )
                    .await?;
                prepared
            }
            PermissionResult::Passthrough => {
                // The chain must not answer Passthrough; fail closed by asking.
                let reason = DecisionReason::Consent {
                    detail: "the permission chain gave no verdict".into(),
                };
                let preview = prepared.preview(ctx).await;
                self.asker()
                    .ask(
                        call,
                        &target,
                        reason,
                        format!("Allow {describe}?"),
                        None,
                        preview,
                        scope,
                        describe,
                        &emit,
                    )
                    .await?;
                prepared
            }
        };
        // Step 6, end: the question may have taken minutes.
        if scope.is_cancelled() {
            return Err(Ending::CancelledBeforeStart);
        }
        Ok(Ready {
            call: prepared,
            input,
            context: verdict.additional_context,
            allowed_by,
        })
    }

    /// Step 9: PostToolUse hooks; what they say is appended to the result
    /// (after the budget, so it is never spilled), with a PreToolUse
    /// hook's extra context.
    async fn after_call(
        &self,
        call: &ToolCall,
        mut result: ToolCallResult,
        pre_context: Option<String>,
        scope: &CancelScope,
    ) -> ToolCallResult {
        let post = match futures::future::select(
            Box::pin(self.hooks.post_tool_use(call, &result)),
            Box::pin(scope.cancelled()),
        )
        .await
        {
            Either::Left((post, _)) => post,
            Either::Right(((), _)) => None,
        };
        for text in [pre_context, post].into_iter().flatten() {
            if !text.trim().is_empty() {
                result.content.push(ToolResultContent::text(text));
            }
        }
        result
    }

    /// Step 7 and 10: emits ToolStarted, runs the call with panics caught,
    /// and lets an interrupt cancel it unless the tool blocks.
    #[allow(clippy::too_many_arguments)]
    async fn execute_call(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn DynTool>,
        prepared: Box<dyn PreparedCall>,
        ctx: &ToolContext,
        scope: &CancelScope,
        describe: &str,
        tx: &Sender,
    ) -> Ending {
        send(
            tx,
            ToolRunEvent::Event(AgentEvent::ToolStarted {
                tool_use_id: call.id.clone(),
                name: call.name.clone(),
                describe: describe.to_owned(),
            }),
        );
        let running = AssertUnwindSafe(prepared.call(ctx)).catch_unwind();
        let caught = match tool.interrupt_behavior() {
            InterruptBehavior::Block => running.await,
            InterruptBehavior::Cancel => {
                match futures::future::select(Box::pin(running), Box::pin(scope.cancelled())).await
                {
                    Either::Left((caught, _)) => caught,
                    Either::Right(((), _)) => return Ending::Cancelled,
                }
            }
        };
        match caught {
            Ok(outcome) => Ending::Outcome(outcome),
            Err(panic) => Ending::Outcome(ToolOutcome::failed(format!(
                "{} crashed with an internal error ({}). This is a bug in Riot, not in your input; try another approach or tell the person.",
                call.name,
                panic_message(panic.as_ref())
            ))),
        }
    }
}
