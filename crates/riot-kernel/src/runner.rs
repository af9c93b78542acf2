//! The session's tool runner: the scheduler over the session's tools, run
//! in the mode of the session's [`ModeCell`], with MCP servers' tools added
//! as the servers become ready (docs/design.md §6.7: built-ins, session tools,
//! then MCP tools sorted by server and name).
//!
//! The tool list changes only between model requests: the loop asks
//! [`ToolRunner::updated_specs`] before each one, and a new scheduler is
//! built when the set of MCP tools changed. A running batch keeps the
//! scheduler it started with.
//!
//! [`StackBase`] is what every runner of one session shares — the
//! session's own and its subagents': the capabilities, the permission
//! chain, the gate, the hooks and the MCP hubs. `crate::stack` builds it
//! once; every runner is made from it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use futures::stream::BoxStream;
use riot_mcp::McpHub;
use riot_protocol::{
    DynTool, ExecuteOptions, Message, MessageId, MessageOrigin, PermissionGate, PermissionPolicy,
    SessionId, ToolCall, ToolEnv, ToolHooks, ToolRunEvent, ToolRunner, ToolSpec, UserBlock,
    UserMessage,
};
use riot_tools::{Scheduler, SchedulerConfig};

use crate::plan::ModeCell;
use crate::world::Capabilities;
use riot_tools::tools::tool_search::{Deferred, ToolSearch};

/// What every tool runner of one session is made from: the session's and
/// its subagents' (which differ only in their tools, tool environment,
/// policy wrapper and mode).
#[derive(Debug, Clone)]
pub struct StackBase {
    pub caps: Capabilities,
    /// The session's terminals, shared by its subagents; killed when the
    /// session ends.
    pub terminals: Arc<dyn riot_protocol::Terminals>,
    /// The session's browser, shared by its subagents; its process group
    /// is killed when the last holder drops it (the session's end).
    pub browser: Arc<dyn riot_protocol::Browser>,
    /// `<riot home>/spill`: each runner's owner spills under its own id.
    pub spill_root: PathBuf,
    pub cwd: PathBuf,
    /// Variables removed from every tool's environment (the model keys).
    pub scrubbed_env: Vec<String>,
    /// The person's home, for `~/` in tool paths.
    pub user_home: Option<PathBuf>,
    pub policy: Arc<dyn PermissionPolicy>,
    pub gate: Arc<dyn PermissionGate>,
    pub hooks: Arc<dyn ToolHooks>,
    pub hubs: Vec<Arc<McpHub>>,
    /// Which tools are declared up front, sized to the model's window.
    pub declarations: Declarations,
    pub config: SchedulerConfig,
    /// The `diagnostics.checks` setting, for every tool environment.
    pub diagnostic_checks: Vec<riot_protocol::DiagnosticCheck>,
    /// The tools' process runner inside the OS sandbox, when it is
    /// enforced (hooks and MCP servers use `caps.proc`, outside it).
    pub sandboxed_proc: Option<Arc<dyn riot_protocol::ProcessRunner>>,
    /// Where Bash's foreground commands run instead (the editor's
    /// terminals), if anywhere.
    pub command_host: Option<Arc<dyn riot_protocol::CommandHost>>,
}

impl StackBase {
    /// A fresh tool environment for `owner` (a session or a subagent):
    /// its own spill directory and file state.
    pub fn tool_env(&self, owner: &SessionId) -> ToolEnv {
        let mut env = ToolEnv::new(
            self.cwd.clone(),
            self.spill_root.join(owner.as_str()),
            Arc::clone(&self.caps.fs),
            Arc::clone(self.sandboxed_proc.as_ref().unwrap_or(&self.caps.proc)),
            Arc::clone(&self.caps.clock),
            Arc::clone(&self.caps.ids),
        );
        if self.sandboxed_proc.is_some() {
            env.unsandboxed_proc = Some(Arc::clone(&self.caps.proc));
        }
        env.command_host = self.command_host.clone();
        env.scrubbed_env = self.scrubbed_env.clone();
        env.web = Arc::clone(&self.caps.web);
        env.terminals = Arc::clone(&self.terminals);
        env.browser = Arc::clone(&self.browser);
        env.home = self.user_home.clone();
        env.diagnostic_checks = self.diagnostic_checks.clone();
        env
    }

    /// A runner over `tools` (in order) and the MCP tools `mcp` selects,
    /// in `env`, decided by `policy`, in `mode`'s mode; with `todos`, it
    /// reminds the model to keep a todo list.
    pub fn runner(
        &self,
        tools: Vec<Arc<dyn DynTool>>,
        env: Arc<ToolEnv>,
        policy: Arc<dyn PermissionPolicy>,
        mode: ModeCell,
        todos: Option<riot_tools::tools::todo_write::TodoList>,
        mcp: McpSelection,
    ) -> SessionRunner {
        SessionRunner::new(
            tools,
            SchedulerParts {
                env,
                policy,
                gate: Arc::clone(&self.gate),
                hooks: Arc::clone(&self.hooks),
                config: self.config,
            },
            self.hubs.clone(),
            mode,
            todos,
            self.declarations,
            mcp,
        )
    }
}

/// Which MCP tools a runner offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpSelection {
    /// Every ready tool, deferred behind ToolSearch when they are many.
    All,
    /// Only these names (an agent's tool list): never deferred.
    Named(Vec<String>),
}

impl McpSelection {
    fn keeps(&self, name: &str) -> bool {
        match self {
            McpSelection::All => true,
            McpSelection::Named(names) => names.iter().any(|n| n == name),
        }
    }
}

/// What a scheduler is built from, kept to rebuild it.
#[derive(Debug, Clone)]
struct SchedulerParts {
    env: Arc<ToolEnv>,
    policy: Arc<dyn PermissionPolicy>,
    gate: Arc<dyn PermissionGate>,
    hooks: Arc<dyn ToolHooks>,
    config: SchedulerConfig,
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
    /// The scheduler, and the MCP tool names it was built with (in order);
    /// `None` until the first refresh.
    built: Option<(Vec<String>, Arc<Scheduler>)>,
    /// The tools last offered to the model.
    offered: Vec<ToolSpec>,
}

struct Inner {
    base: Vec<Arc<dyn DynTool>>,
    parts: SchedulerParts,
    hubs: Vec<Arc<McpHub>>,
    mode: ModeCell,
    current: RwLock<Current>,
    /// The session's todo list, for the reminder; `None`: no reminder.
    todos: Option<riot_tools::tools::todo_write::TodoList>,
    /// Tool calls since the todo list was last written (or non-empty).
    calls_since_todos: AtomicUsize,
    /// Tools held back behind ToolSearch, and the ones loaded.
    deferred: Deferred,
    /// Which tools are declared up front.
    declarations: Declarations,
    /// Which MCP tools are offered.
    selection: McpSelection,
}

/// Tool calls without a todo list after which the model is reminded, once,
/// that the person would like to see its plan (docs/design.md §6.7).
pub const TODO_REMINDER_AFTER_CALLS: usize = 10;

/// What the model is reminded of.
pub const TODO_REMINDER: &str = "Reminder from Riot: this task has taken many steps and there is no todo list. If several parts are left, write them with TodoWrite so the person can follow your progress; if the task is nearly done, ignore this.";

/// The share of the context window MCP tool declarations may take before
/// they are deferred behind ToolSearch: a tenth, at four characters a token.
pub fn defer_threshold_chars(context_window: u64) -> usize {
    usize::try_from(context_window / 10 * 4).unwrap_or(usize::MAX)
}

/// Windows of this many tokens or fewer are small (docs/windows.md): only
/// [`CORE_TOOLS`] are declared up front, with compact prompts, and the
/// whole first request stays within a quarter of the window.
pub use riot_core::context::SMALL_WINDOW;

/// The tools a small window declares up front; every other tool is
/// reachable through ToolSearch.
pub const CORE_TOOLS: &[&str] = &["Read", "Edit", "Write", "Bash", "Grep", "Glob"];

/// Built-in tools held back behind ToolSearch in every window: large
/// declarations that most tasks never call (docs/windows.md says why each).
pub const RARE_TOOLS: &[&str] = &[
    "Terminal",
    "NotebookEdit",
    "Diagnostics",
    "WebFetch",
    "WebSearch",
    "TaskOutput",
    "BashOutput",
    "KillShell",
];

/// Which tools a session declares up front, and how, for its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declarations {
    /// MCP declarations larger than this (characters) are deferred.
    pub defer_mcp_above_chars: usize,
    /// A small window: only the core tools, compactly.
    pub small: bool,
}

impl Declarations {
    /// The declarations for a model with `context_window` tokens.
    pub fn for_window(context_window: u64) -> Self {
        let small = context_window <= SMALL_WINDOW;
        Self {
            // In a small window every MCP tool waits for a search.
            defer_mcp_above_chars: if small {
                0
            } else {
                defer_threshold_chars(context_window)
            },
            small,
        }
    }

    /// Whether a built-in or session tool waits behind ToolSearch.
    fn holds_back(&self, tool: &dyn DynTool) -> bool {
        let name = tool.name();
        tool.deferred()
            || if self.small {
                !CORE_TOOLS.contains(&name)
            } else {
                RARE_TOOLS.contains(&name)
            }
    }
}

fn spec_chars(spec: &ToolSpec) -> usize {
    spec.name.len() + spec.description.len() + spec.input_schema.to_string().len()
}

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

    /// The scheduler over the MCP tools ready now, rebuilt if they changed
    /// (and, with MCP servers, ToolSearch, offered only while deferring).
    fn refresh(&self) -> Arc<Scheduler> {
        let mut mcp = mcp_tools(&self.hubs);
        mcp.retain(|t| self.selection.keeps(t.name()));
        let names: Vec<String> = mcp.iter().map(|t| t.name().to_owned()).collect();
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if let Some((built, scheduler)) = &current.built
            && *built == names
        {
            return Arc::clone(scheduler);
        }
        tracing::info!(tools = names.len(), "the MCP tools changed");
        let mut tools = self.base.clone();
        // Built-in tools that ask to be deferred (Browser) and those the
        // window leaves out are held back; MCP tools only when their
        // declarations are large.
        let held: Vec<String> = tools
            .iter()
            .filter(|t| self.declarations.holds_back(t.as_ref()))
            .map(|t| t.name().to_owned())
            .collect();
        let searchable =
            (!self.hubs.is_empty() || !held.is_empty()) && self.selection == McpSelection::All;
        if searchable {
            tools.push(Arc::new(ToolSearch {
                deferred: self.deferred.clone(),
            }));
        }
        tools.extend(mcp);
        let scheduler = self.parts.build(tools);
        // What is deferred is decided on the declarations themselves.
        let (mut specs, mcp_specs): (Vec<ToolSpec>, Vec<ToolSpec>) = scheduler
            .specs()
            .into_iter()
            .filter(|s| s.name.starts_with("mcp__") || held.contains(&s.name))
            .partition(|s| held.contains(&s.name));
        let size: usize = mcp_specs.iter().map(spec_chars).sum();
        if size > self.declarations.defer_mcp_above_chars {
            specs.extend(mcp_specs);
        }
        self.deferred
            .set(if searchable { specs } else { Vec::new() });
        // ToolSearch renders its description (the deferred names) from
        // the shared state whenever specs are taken.
        current.built = Some((names, Arc::clone(&scheduler)));
        scheduler
    }

    /// What the model is offered from `scheduler`: everything, or — while
    /// deferring — the built-in and session tools, ToolSearch, and the
    /// deferred tools loaded so far in the order they were loaded.
    fn offered(&self, scheduler: &Scheduler) -> Vec<ToolSpec> {
        let specs = scheduler.specs();
        if !self.deferred.active() {
            return specs
                .into_iter()
                .filter(|s| s.name != "ToolSearch")
                .collect();
        }
        let held = self.deferred.names();
        let (held, mut offered): (Vec<ToolSpec>, Vec<ToolSpec>) =
            specs.into_iter().partition(|s| held.contains(&s.name));
        for name in self.deferred.loaded() {
            if let Some(spec) = held.iter().find(|s| s.name == name) {
                offered.push(spec.clone());
            }
        }
        offered
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
    /// the ready tools of `hubs`, deferred behind ToolSearch as
    /// `declarations` says; of those, the ones `mcp`
    /// selects. Made through [`StackBase::runner`].
    fn new(
        base: Vec<Arc<dyn DynTool>>,
        parts: SchedulerParts,
        hubs: Vec<Arc<McpHub>>,
        mode: ModeCell,
        todos: Option<riot_tools::tools::todo_write::TodoList>,
        declarations: Declarations,
        mcp: McpSelection,
    ) -> Self {
        let inner = Arc::new(Inner {
            base,
            parts,
            hubs,
            mode,
            current: RwLock::new(Current {
                built: None,
                offered: Vec::new(),
            }),
            todos,
            calls_since_todos: AtomicUsize::new(0),
            deferred: Deferred::default(),
            declarations,
            selection: mcp,
        });
        let scheduler = inner.refresh();
        let offered = inner.offered(&scheduler);
        inner
            .current
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .offered = offered;
        Self { inner }
    }
}

impl SessionRunner {
    /// Every tool the runner can run now, in order: the base tools, then
    /// the ready MCP tools (deferred ones included).
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.inner.refresh().tools().to_vec()
    }

    /// The tool environment calls run in.
    pub fn env(&self) -> &Arc<ToolEnv> {
        &self.inner.parts.env
    }

    /// The mode the next batch runs in.
    pub fn mode(&self) -> riot_protocol::PermissionMode {
        self.inner.mode.get()
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
        let scheduler = self.inner.refresh();
        self.inner.offered(&scheduler)
    }

    fn updated_specs(&self) -> Option<Vec<ToolSpec>> {
        // Without MCP servers the list changes only when a deferred
        // built-in (Browser) is loaded.
        if self.inner.hubs.is_empty() && !self.inner.deferred.active() {
            return None;
        }
        let scheduler = self.inner.refresh();
        let offered = self.inner.offered(&scheduler);
        let mut current = self
            .inner
            .current
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if current.offered == offered {
            return None;
        }
        current.offered = offered.clone();
        Some(offered)
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
        let mut servers: Vec<String> = calls
            .iter()
            .filter_map(|c| server_of(&c.name).map(str::to_owned))
            .collect();
        // A search should see every server's tools: wait for all of them.
        if calls.iter().any(|c| c.name == "ToolSearch") {
            servers.extend(inner.hubs.iter().flat_map(|h| h.statuses().into_keys()));
        }
        let remind = inner.todo_reminder_due(&calls);
        inner
            .deferred
            .load_called(calls.iter().map(|c| c.name.as_str()));
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
