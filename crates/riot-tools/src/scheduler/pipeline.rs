//! One call through the pipeline of docs/design.md §6.3: lookup → cancelled?
//! → structural validation → `validate_input` → PreToolUse hooks →
//! permission (and the person) → cancelled? → `call` with progress →
//! result budget → PostToolUse hooks, with panics caught. Every path ends
//! in exactly one `ToolCallResult`.

mod admission;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::Either;
use riot_protocol::{
    AgentEvent, AllowedBy, CancelReason, CancelScope, DynTool, InterruptBehavior, PermissionGate,
    PermissionMode, PermissionPolicy, PreparedCall, ToolCall, ToolCallResult, ToolContext, ToolEnv,
    ToolHooks, ToolOutcome, ToolResultContent, ToolResultUi, ToolRunEvent, UiPayload,
};

use super::SchedulerConfig;
use super::budget;
use super::permission::NotAllowed;
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

/// What every stage of one call needs: the call, its tool, its cancel
/// scope, its one-line description and where its events go.
struct OneCall<'a> {
    call: &'a ToolCall,
    tool: &'a Arc<dyn DynTool>,
    scope: &'a CancelScope,
    describe: &'a str,
    tx: &'a Sender,
}

/// How the stages up to the call's end left it: its ending, the call as
/// it ran (a PreToolUse hook may have replaced the input) and a
/// PreToolUse hook's extra context for the model.
struct Ran {
    ending: Ending,
    effective: ToolCall,
    hook_context: Option<String>,
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

/// Makes `one` the batch's cascade cause (the first failure wins) and
/// cancels the rest of its batch.
fn start_cascade(one: &OneCall<'_>, cascade: &Mutex<Option<Cascade>>, batch_scope: &CancelScope) {
    let mut cause = cascade.lock().unwrap_or_else(|e| e.into_inner());
    if cause.is_none() {
        *cause = Some(Cascade {
            tool: one.call.name.clone(),
            describe: one.describe.to_owned(),
        });
    }
    drop(cause);
    batch_scope.cancel(CancelReason::SiblingFailure);
}

impl Run {
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

    /// The context a call runs in, allowed by Riot until permission says
    /// otherwise, its progress sent on as events.
    fn tool_context(&self, call: &ToolCall, scope: &CancelScope, tx: &Sender) -> ToolContext {
        let progress_tx = tx.clone();
        let progress_id = call.id.clone();
        ToolContext {
            env: Arc::clone(&self.env),
            tool_use_id: call.id.clone(),
            mode: self.mode,
            allowed_by: AllowedBy::Riot,
            cancel: scope.token().clone(),
            progress: Some(Arc::new(move |payload| {
                send(
                    &progress_tx,
                    ToolRunEvent::Event(AgentEvent::Progress {
                        tool_use_id: progress_id.clone(),
                        payload,
                    }),
                );
            })),
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
        let one = OneCall {
            call: &call,
            tool: &tool,
            scope: &tool_scope,
            describe: &describe,
            tx: &tx,
        };
        let ctx = self.tool_context(&call, &tool_scope, &tx);
        let started_ms = self.env.clock.now_ms();
        let ran = self.admit_and_run(&one, prepared, &ctx).await;
        let duration_ms = self.env.clock.now_ms().saturating_sub(started_ms);
        let cascades = tool.cascades_on_failure();
        let ran_to_an_outcome = matches!(
            ran.ending,
            Ending::Outcome(ToolOutcome::Ok { .. } | ToolOutcome::Failed { .. })
        );
        let (result, failed_for_cascade) = self
            .result_of(&one, ran.ending, &cascade, duration_ms)
            .await;
        // Step 9: only a call that ran to an outcome has PostToolUse hooks.
        let result = if ran_to_an_outcome {
            self.after_call(&ran.effective, result, ran.hook_context, &tool_scope)
                .await
        } else {
            result
        };
        if failed_for_cascade && cascades && !tool_scope.is_cancelled() {
            start_cascade(&one, &cascade, &batch_scope);
        }
        result
    }

    /// Steps 4–8: clears the call (panics caught) and, when it may run,
    /// runs it, announcing a call that may change files before and after.
    async fn admit_and_run(
        &self,
        one: &OneCall<'_>,
        prepared: Box<dyn PreparedCall>,
        ctx: &ToolContext,
    ) -> Ran {
        let before = AssertUnwindSafe(self.before_call(one, prepared, ctx))
            .catch_unwind()
            .await;
        // The call as it runs: a PreToolUse hook may have replaced the input.
        let mut effective = one.call.clone();
        let mut hook_context: Option<String> = None;
        let ending = match before {
            Err(panic) => Ending::Outcome(ToolOutcome::failed(format!(
                "{} failed with an internal error before running ({}). This is a bug in Riot, not in your input; try another approach.",
                one.call.name,
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
                let ending = self.execute_call(one, ready.call, &ctx).await;
                if changes {
                    self.hooks.after_change(&effective).await;
                }
                ending
            }
        };
        Ran {
            ending,
            effective,
            hook_context,
        }
    }

    /// The result an ending gives (empty and over-budget output handled),
    /// and whether it is a failure that may cascade.
    async fn result_of(
        &self,
        one: &OneCall<'_>,
        ending: Ending,
        cascade: &Mutex<Option<Cascade>>,
        duration_ms: u64,
    ) -> (ToolCallResult, bool) {
        let OneCall {
            call,
            tool,
            scope,
            describe,
            ..
        } = *one;
        match ending {
            Ending::CancelledBeforeStart => (
                text_result(
                    call,
                    self.cancelled_text(scope, cascade, false),
                    true,
                    self.ui(describe, None, duration_ms),
                ),
                false,
            ),
            Ending::Refused {
                message,
                cascades: c,
            } => (
                text_result(call, message, true, self.ui(describe, None, duration_ms)),
                c,
            ),
            Ending::Cancelled | Ending::Outcome(ToolOutcome::Cancelled) => (
                text_result(
                    call,
                    self.cancelled_text(scope, cascade, true),
                    true,
                    self.ui(describe, None, duration_ms),
                ),
                false,
            ),
            Ending::Outcome(ToolOutcome::Ok {
                model_content,
                ui_payload,
                side_messages,
            }) => {
                let content = self.finish_content(call, tool, model_content).await;
                (
                    ToolCallResult {
                        tool_use_id: call.id.clone(),
                        content,
                        is_error: false,
                        ui: self.ui(describe, ui_payload, duration_ms),
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
                    .finish_content(call, tool, vec![ToolResultContent::text(error_for_model)])
                    .await;
                (
                    ToolCallResult {
                        tool_use_id: call.id.clone(),
                        content,
                        is_error: true,
                        ui: self.ui(describe, ui_payload, duration_ms),
                        side_messages: Vec::new(),
                    },
                    true,
                )
            }
        }
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
    async fn execute_call(
        &self,
        one: &OneCall<'_>,
        prepared: Box<dyn PreparedCall>,
        ctx: &ToolContext,
    ) -> Ending {
        send(
            one.tx,
            ToolRunEvent::Event(AgentEvent::ToolStarted {
                tool_use_id: one.call.id.clone(),
                name: one.call.name.clone(),
                describe: one.describe.to_owned(),
            }),
        );
        let running = AssertUnwindSafe(prepared.call(ctx)).catch_unwind();
        let caught = match one.tool.interrupt_behavior() {
            InterruptBehavior::Block => running.await,
            InterruptBehavior::Cancel => {
                match futures::future::select(Box::pin(running), Box::pin(one.scope.cancelled()))
                    .await
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
                one.call.name,
                panic_message(panic.as_ref())
            ))),
        }
    }
}
