//! The session's tool runner: the scheduler over the session's tools, run
//! in the mode of the session's [`ModeCell`], with MCP servers' tools added
//! as the servers become ready (ARCHITECTURE §6.7: built-ins, session tools,
//! then MCP tools sorted by server and name).
//!
//! The tool list changes only between model requests: the loop asks
//! [`ToolRunner::updated_specs`] before each one, and a new scheduler is
//! built when the set of MCP tools changed. A running batch keeps the
//! scheduler it started with.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use futures::stream::BoxStream;
use riot_mcp::McpHub;
use riot_protocol::{
    DynTool, ExecuteOptions, Message, MessageId, MessageOrigin, PermissionGate, PermissionPolicy,
    ToolCall, ToolEnv, ToolHooks, ToolRunEvent, ToolRunner, ToolSpec, UserBlock, UserMessage,
};
use riot_tools::{Scheduler, SchedulerConfig};

use crate::plan::ModeCell;

/// What a scheduler is built from, kept to rebuild it.
#[derive(Debug, Clone)]
pub struct SchedulerParts {
    pub env: Arc<ToolEnv>,
    pub policy: Arc<dyn PermissionPolicy>,
    pub gate: Arc<dyn PermissionGate>,
    pub hooks: Arc<dyn ToolHooks>,
    pub config: SchedulerConfig,
}

impl SchedulerParts {
    fn build(&self, tools: Vec<Arc<dyn DynTool>>) -> Arc<Scheduler> {
        Arc::new(
            Scheduler::new(
                tools,
                Arc::clone(&self.env),
                Arc::clone(&self.policy),
                Arc::clone(&self.gate),
                self.config,
            )
            .with_hooks(Arc::clone(&self.hooks)),
        )
    }
}

#[derive(Debug)]
struct Current {
    /// The MCP tool names the scheduler was built with, in order.
    mcp: Vec<String>,
    scheduler: Arc<Scheduler>,
    /// The MCP tool names last offered to the model.
    offered: Vec<String>,
}

struct Inner {
    base: Vec<Arc<dyn DynTool>>,
    parts: SchedulerParts,
    hubs: Vec<Arc<McpHub>>,
    mode: ModeCell,
    current: RwLock<Current>,
    /// The session's todo list, for the reminder; `None`: no reminder.
    todos: Option<crate::todo::TodoList>,
    /// Tool calls since the todo list was last written (or non-empty).
    calls_since_todos: AtomicUsize,
}

/// Tool calls without a todo list after which the model is reminded, once,
/// that the person would like to see its plan (ARCHITECTURE §6.7).
pub const TODO_REMINDER_AFTER_CALLS: usize = 10;

/// What the model is reminded of.
pub const TODO_REMINDER: &str = "Reminder from Riot: this task has taken many steps and there is no todo list. If several parts are left, write them with TodoWrite so the person can follow your progress; if the task is nearly done, ignore this.";

impl Inner {
    /// Counts `calls`; true once when a long run of calls has no todo list.
    fn todo_reminder_due(&self, calls: &[ToolCall]) -> bool {
        let Some(todos) = &self.todos else {
            return false;
        };
        if calls.iter().any(|c| c.name == "TodoWrite") || !todos.get().is_empty() {
            self.calls_since_todos.store(0, Ordering::SeqCst);
            return false;
        }
        // Once per stretch without a list: when the count crosses the mark.
        let before = self
            .calls_since_todos
            .fetch_add(calls.len(), Ordering::SeqCst);
        before < TODO_REMINDER_AFTER_CALLS && before + calls.len() >= TODO_REMINDER_AFTER_CALLS
    }

    /// The scheduler over the MCP tools ready now, rebuilt if they changed.
    fn refresh(&self) -> Arc<Scheduler> {
        let mcp = mcp_tools(&self.hubs);
        let names: Vec<String> = mcp.iter().map(|t| t.name().to_owned()).collect();
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if current.mcp != names {
            tracing::info!(tools = names.len(), "the MCP tools changed");
            current.scheduler = self
                .parts
                .build(self.base.iter().cloned().chain(mcp).collect());
            current.mcp = names;
        }
        Arc::clone(&current.scheduler)
    }
}

/// The session's [`ToolRunner`].
pub struct SessionRunner {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SessionRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRunner")
            .field(
                "base",
                &self.inner.base.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("hubs", &self.inner.hubs.len())
            .field("mode", &self.inner.mode.get())
            .finish_non_exhaustive()
    }
}

impl SessionRunner {
    /// A runner over `base` (built-ins and session tools, in order) and
    /// the ready tools of `hubs`.
    pub fn new(
        base: Vec<Arc<dyn DynTool>>,
        parts: SchedulerParts,
        hubs: Vec<Arc<McpHub>>,
        mode: ModeCell,
        todos: Option<crate::todo::TodoList>,
    ) -> Self {
        let mcp = mcp_tools(&hubs);
        let names: Vec<String> = mcp.iter().map(|t| t.name().to_owned()).collect();
        let scheduler = parts.build(base.iter().cloned().chain(mcp).collect());
        Self {
            inner: Arc::new(Inner {
                base,
                parts,
                hubs,
                mode,
                current: RwLock::new(Current {
                    offered: names.clone(),
                    mcp: names,
                    scheduler,
                }),
                todos,
                calls_since_todos: AtomicUsize::new(0),
            }),
        }
    }
}

/// The ready MCP tools of every hub, sorted by name (server, then tool),
/// a name offered once.
fn mcp_tools(hubs: &[Arc<McpHub>]) -> Vec<Arc<dyn DynTool>> {
    let mut tools: Vec<Arc<dyn DynTool>> = hubs.iter().flat_map(|h| h.tools()).collect();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    tools.dedup_by(|a, b| a.name() == b.name());
    tools
}

/// The server an MCP tool name belongs to (`mcp__<server>__<tool>`).
fn server_of(tool: &str) -> Option<&str> {
    tool.strip_prefix("mcp__")?.split("__").next()
}

/// Waits until `server` of `hub` has finished starting (ready or failed);
/// at once when the hub has no such server.
async fn settled(hub: &McpHub, server: &str) {
    let mut changes = hub.changes();
    loop {
        match hub.status(server) {
            Some(status) if !status.is_settled() => {}
            _ => return,
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}

impl ToolRunner for SessionRunner {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.refresh().specs()
    }

    fn updated_specs(&self) -> Option<Vec<ToolSpec>> {
        if self.inner.hubs.is_empty() {
            return None;
        }
        let scheduler = self.inner.refresh();
        let mut current = self
            .inner
            .current
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if current.offered == current.mcp {
            return None;
        }
        current.offered = current.mcp.clone();
        Some(scheduler.specs())
    }

    /// A call to a server that is still starting waits for it (at most its
    /// startup timeout) instead of failing as an unknown tool: a resumed
    /// conversation knows the names before the server is back.
    fn execute(
        &self,
        calls: Vec<ToolCall>,
        options: ExecuteOptions,
    ) -> BoxStream<'static, ToolRunEvent> {
        let inner = Arc::clone(&self.inner);
        let options = ExecuteOptions {
            mode: inner.mode.get(),
            ..options
        };
        let servers: Vec<String> = calls
            .iter()
            .filter_map(|c| server_of(&c.name).map(str::to_owned))
            .collect();
        let remind = inner.todo_reminder_due(&calls);
        Box::pin(async_stream::stream! {
            if !servers.is_empty() {
                let waits = inner
                    .hubs
                    .iter()
                    .flat_map(|hub| servers.iter().map(move |s| settled(hub, s)));
                let all = std::pin::pin!(futures::future::join_all(waits));
                let cancelled = std::pin::pin!(options.cancel.cancelled());
                futures::future::select(all, cancelled).await;
            }
            let scheduler = inner.refresh();
            let mut run = scheduler.execute(calls, options);
            // The last result is held back so the reminder can follow it.
            let mut held = None;
            while let Some(event) = futures::StreamExt::next(&mut run).await {
                match event {
                    ToolRunEvent::Result(result) => {
                        if let Some(previous) = held.replace(result) {
                            yield ToolRunEvent::Result(previous);
                        }
                    }
                    other => yield other,
                }
            }
            if let Some(mut last) = held {
                if remind {
                    last.side_messages.push(Message::User(UserMessage {
                        id: MessageId::generate(inner.parts.env.ids.as_ref()),
                        content: vec![UserBlock::Text {
                            text: TODO_REMINDER.to_owned(),
                        }],
                        origin: MessageOrigin::Context,
                    }));
                }
                yield ToolRunEvent::Result(last);
            }
        })
    }
}
