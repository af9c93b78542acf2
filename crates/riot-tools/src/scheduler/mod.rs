//! The scheduler (docs/design.md §6.3, §7): runs the tool calls of one
//! assistant message through one pipeline, in batches, and yields exactly
//! one result per call, in call order, on every path.
//!
//! - Consecutive concurrency-safe calls form a parallel batch (at most
//!   `max_concurrency`, a cap of 0 is 1); every other call is a batch of
//!   one. Nothing is reordered.
//! - Results leave in call order (`FuturesOrdered`); progress and
//!   permission events interleave freely.
//! - Cascade: when a call whose tool cascades fails, its still-running
//!   batch siblings are cancelled (`CancelReason::SiblingFailure`) and the
//!   remaining calls are skipped before they start, each with a result
//!   saying why. Cancellations and permission denials do not cascade.
//! - An interrupt cancels what runs; the walk goes on and fills a result
//!   for every remaining call (never `break`).

mod budget;
mod lean;
mod permission;
mod pipeline;
mod schema_hint;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::stream::{BoxStream, FuturesOrdered, StreamExt};
use riot_protocol::invariants;
use riot_protocol::{
    DynTool, ExecuteOptions, NoToolHooks, PermissionGate, PermissionPolicy, PreparedCall,
    PromptContext, ToolCall, ToolEnv, ToolHooks, ToolRunEvent, ToolRunner, ToolSpec,
};

pub use budget::PREVIEW_CHARS;
pub use schema_hint::schema_hint;

use pipeline::{Cascade, Prepared, Run};

/// Scheduler settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Calls run at once in a parallel batch (docs/design.md §7: 10; 0 → 1).
    pub max_concurrency: usize,
    /// How long a permission question waits for an answer (§9.2: 60 s).
    pub permission_timeout_ms: u64,
    /// Declare tools for a small window (docs/windows.md): compact
    /// prompts (`PromptContext::compact`) and schemas without per-field
    /// descriptions.
    pub compact_declarations: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            max_concurrency: 10,
            permission_timeout_ms: 60_000,
            compact_declarations: false,
        }
    }
}

/// Runs tool calls; the `ToolRunner` the loop talks to.
pub struct Scheduler {
    tools: Vec<Arc<dyn DynTool>>,
    env: Arc<ToolEnv>,
    policy: Arc<dyn PermissionPolicy>,
    gate: Arc<dyn PermissionGate>,
    hooks: Arc<dyn ToolHooks>,
    config: SchedulerConfig,
    prompt_cx: PromptContext,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("tools", &self.prompt_cx.tool_names)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// A scheduler over `tools` (in the order sent to the model).
    pub fn new(
        tools: Vec<Arc<dyn DynTool>>,
        env: Arc<ToolEnv>,
        policy: Arc<dyn PermissionPolicy>,
        gate: Arc<dyn PermissionGate>,
        config: SchedulerConfig,
    ) -> Self {
        let prompt_cx = PromptContext {
            cwd: env.cwd.clone(),
            platform: std::env::consts::OS.to_owned(),
            tool_names: tools.iter().map(|t| t.name().to_owned()).collect(),
            compact: config.compact_declarations,
        };
        Self {
            tools,
            env,
            policy,
            gate,
            hooks: Arc::new(NoToolHooks),
            config,
            prompt_cx,
        }
    }

    /// PreToolUse and PostToolUse hooks (docs/design.md §6.3 steps 5 and 9);
    /// without them no hook runs.
    #[must_use]
    pub fn with_hooks(mut self, hooks: Arc<dyn ToolHooks>) -> Self {
        self.hooks = hooks;
        self
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[Arc<dyn DynTool>] {
        &self.tools
    }

    /// The context tools' prompts are written for.
    pub fn prompt_context(&self) -> &PromptContext {
        &self.prompt_cx
    }

    fn run(&self, options: &ExecuteOptions) -> Arc<Run> {
        Arc::new(Run {
            tools: self.tools.clone(),
            tool_names: self.prompt_cx.tool_names.clone(),
            env: Arc::clone(&self.env),
            policy: Arc::clone(&self.policy),
            gate: Arc::clone(&self.gate),
            hooks: Arc::clone(&self.hooks),
            config: self.config,
            mode: options.mode,
        })
    }
}

impl ToolRunner for Scheduler {
    /// Riot's own tools are declared lean; an MCP tool's schema is the
    /// server's.
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| {
                let schema = t.input_schema();
                ToolSpec {
                    name: t.name().to_owned(),
                    description: t.prompt(&self.prompt_cx),
                    input_schema: if t.name().starts_with("mcp__") {
                        schema
                    } else {
                        lean::lean(schema, self.config.compact_declarations)
                    },
                }
            })
            .collect()
    }

    fn execute(
        &self,
        calls: Vec<ToolCall>,
        options: ExecuteOptions,
    ) -> BoxStream<'static, ToolRunEvent> {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        let run = self.run(&options);
        let driver = async move { walk(run, calls, options, tx).await };
        // The driver only sends; the stream ends when it is done and the
        // last sender (its own, and those of progress sinks) is dropped.
        let driver = driver
            .into_stream()
            .filter_map(|()| futures::future::ready(None));
        futures::stream::select(rx, driver).boxed()
    }
}

/// Whether a prepared call may join a parallel batch; a predicate that
/// panics makes the call unsafe (docs/design.md §7).
fn concurrency_safe(prepared: &Prepared) -> bool {
    match prepared {
        Prepared::Ready { call, .. } => {
            let call: &dyn PreparedCall = call.as_ref();
            std::panic::catch_unwind(AssertUnwindSafe(|| call.is_concurrency_safe()))
                .unwrap_or(false)
        }
        Prepared::Invalid { .. } => false,
    }
}

/// Splits prepared calls into batches, keeping their order.
fn batches(prepared: Vec<(ToolCall, Prepared)>, cap: usize) -> Vec<Vec<(ToolCall, Prepared)>> {
    let cap = cap.max(1);
    let mut out: Vec<Vec<(ToolCall, Prepared)>> = Vec::new();
    let mut open_parallel = false;
    for item in prepared {
        let safe = concurrency_safe(&item.1);
        match out.last_mut() {
            Some(last) if safe && open_parallel && last.len() < cap => last.push(item),
            _ => {
                out.push(vec![item]);
                open_parallel = safe;
            }
        }
    }
    out
}

async fn walk(run: Arc<Run>, calls: Vec<ToolCall>, options: ExecuteOptions, tx: pipeline::Sender) {
    let prepared: Vec<(ToolCall, Prepared)> = calls
        .into_iter()
        .map(|call| {
            let p = run.prepare(&call);
            (call, p)
        })
        .collect();
    let mut skipped_by: Option<Cascade> = None;
    let mut aggregate = budget::MessageBudget::new(budget::MESSAGE_BUDGET_CHARS);
    for batch in batches(prepared, run.config.max_concurrency) {
        if let Some(cause) = &skipped_by {
            for (call, prepared) in batch {
                let result = run.skipped(&call, &prepared, cause);
                pipeline::send(&tx, ToolRunEvent::Result(result));
            }
            continue;
        }
        // INV-3 (docs/testing.md L2): a parallel batch holds only safe calls.
        let safe: Vec<bool> = batch.iter().map(|(_, p)| concurrency_safe(p)).collect();
        invariants::enforce(invariants::check_parallel_batch(&safe));
        let batch_scope = options.cancel.child();
        let cascade: Arc<Mutex<Option<Cascade>>> = Arc::new(Mutex::new(None));
        let mut running: FuturesOrdered<_> = batch
            .into_iter()
            .map(|(call, prepared)| {
                let run = Arc::clone(&run);
                let tool_scope = batch_scope.child();
                let batch_scope = batch_scope.clone();
                let cascade = Arc::clone(&cascade);
                let tx = tx.clone();
                async move {
                    run.run_one(call, prepared, tool_scope, batch_scope, cascade, tx)
                        .await
                }
            })
            .collect();
        while let Some(result) = running.next().await {
            let result = aggregate.admit(&run.env, result).await;
            pipeline::send(&tx, ToolRunEvent::Result(result));
        }
        let cause = cascade.lock().unwrap_or_else(|e| e.into_inner()).take();
        if cause.is_some() {
            skipped_by = cause;
        }
    }
    // Every result is out: end the stream even if a tool kept a clone of
    // its progress sink (buffered events are still delivered).
    tx.close_channel();
}

#[cfg(test)]
mod tests;
