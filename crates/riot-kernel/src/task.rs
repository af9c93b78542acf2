//! Task: subagents (docs/design.md §14). A Task call runs a child agent loop
//! with its own transcript (linked to the parent by `SessionMeta::parent`),
//! a subset of the tools, the parent's permission chain and gate, a turn
//! cap, and the parent call's cancellation. Its final text is the result.
//!
//! Agent types: the built-in `general-purpose` (every tool but Task and
//! ExitPlanMode) and `explore` (Read, Glob, Grep and read-only shell
//! commands), then `agents/*.md` files — the project's `.riot/agents/`
//! (also `.claude/agents/`, only when the project is trusted), then the
//! user's `<riot home>/agents/`; the first of a name wins. Front matter:
//! `name`, `description`, `tools`, `model`, `permission-mode`; the body is
//! the agent's instructions. An agent whose tools only read is read-only:
//! anything else it tries is refused, and several read-only Task calls in
//! one reply run in parallel. An unknown type is refused before it runs.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use futures::StreamExt;
use riot_core::{AgentDeps, AgentState, ContextManager, NoQueue, NoStopHooks, NoWorkingSet};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, DecisionReason, DynTool, FileSystem, InterruptBehavior,
    Message, MessageId, PermissionMode, PermissionPolicy, PermissionQuery, PermissionResult,
    PermissionRule, ProgressPayload, PromptContext, Provider, SessionId, SystemPrompt,
    TerminalReason, Tool, ToolContext, ToolOutcome, ToolRunner, ValidationError,
};
use riot_store::{SessionMeta, SessionStore};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::plan::ModeCell;
use crate::runner::{McpSelection, StackBase};
use crate::world::SessionModel;
use riot_extensions::extension_files::{self, Layout, Origin};
use riot_extensions::frontmatter::{self, ToolList};

/// Model requests a subagent may make before it is stopped.
pub const SUBAGENT_MAX_TURNS: u32 = 40;
/// Characters of a subagent's answer returned to the parent.
pub const MAX_ANSWER_CHARS: usize = 40_000;

/// The tools a read-only agent may be given.
const READ_ONLY_TOOLS: [&str; 3] = ["Read", "Glob", "Grep"];
/// `explore`'s tools: the read-only ones and the shell, whose commands the
/// read-only policy limits to those that change nothing.
const EXPLORE_TOOLS: [&str; 4] = ["Read", "Glob", "Grep", "Bash"];

/// One agent type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// `None`: every tool a subagent may have.
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    pub mode: Option<PermissionMode>,
    /// The agent's instructions (the file's body).
    pub instructions: String,
    pub origin: Origin,
}

impl AgentDefinition {
    /// Whether everything this agent can do only reads.
    pub fn is_read_only(&self) -> bool {
        self.name == "explore"
            || self
                .tools
                .as_ref()
                .is_some_and(|t| t.iter().all(|n| READ_ONLY_TOOLS.contains(&n.as_str())))
    }
}

fn builtin_agents() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: "general-purpose".into(),
            description: "Researches complex questions and carries out multi-step tasks on its own, with every tool. Use it for work that would fill your context with searching and reading.".into(),
            tools: None,
            model: None,
            mode: None,
            instructions: "You are a general-purpose agent working on a task given by another agent. Use the tools to do the task completely; search broadly when you do not know where something is.".into(),
            origin: Origin::Builtin,
        },
        AgentDefinition {
            name: "explore".into(),
            description: "Explores the codebase read-only: finds files, reads code and answers questions about it. Use it to search and read in parallel without changing anything.".into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|t| (*t).to_owned()).collect()),
            model: None,
            mode: None,
            instructions: "You are a read-only exploration agent. Find and read what the task needs with Glob, Grep, Read and read-only shell commands (ls, git log, …). You cannot change files or run commands that change anything; do not try.".into(),
            origin: Origin::Builtin,
        },
    ]
}

#[derive(Debug, Default, Deserialize)]
struct AgentFront {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolList>,
    model: Option<String>,
    #[serde(rename = "permission-mode", alias = "permissionMode")]
    permission_mode: Option<String>,
}

/// The agent types of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
}

impl AgentCatalog {
    /// The built-in types only.
    pub fn builtin() -> Self {
        Self {
            agents: builtin_agents(),
        }
    }

    /// The built-ins, then the project's files (only when `trusted`), then
    /// the user's; notices for the person.
    pub async fn discover(
        fs: &dyn FileSystem,
        home: &Path,
        project_root: &Path,
        trusted: bool,
    ) -> (Self, Vec<String>) {
        let mut catalog = Self::builtin();
        let mut notices = Vec::new();
        let found = extension_files::find(
            fs,
            home,
            project_root,
            trusted,
            "agents",
            "agent definition",
            Layout::Markdown { max_depth: 1 },
        )
        .await;
        notices.extend(found.notice);
        for place in found.places {
            catalog
                .load(fs, place.entries, place.origin, &mut notices)
                .await;
        }
        (catalog, notices)
    }

    async fn load(
        &mut self,
        fs: &dyn FileSystem,
        files: Vec<PathBuf>,
        origin: Origin,
        notices: &mut Vec<String>,
    ) {
        for file in files {
            let Some(text) = extension_files::read_text(fs, &file, "agent", notices).await else {
                continue;
            };
            match parse_agent(&text, &file, origin) {
                Ok(agent) => {
                    if let Some(existing) = self.get(&agent.name) {
                        if existing.origin == Origin::Builtin {
                            notices.push(format!(
                                "agent {} skipped: `{}` is built in",
                                file.display(),
                                agent.name
                            ));
                        }
                        continue;
                    }
                    self.agents.push(agent);
                }
                Err(reason) => notices.push(format!("agent {}: {reason}; skipped", file.display())),
            }
        }
    }

    /// Every agent type, built-ins first.
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// The type called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }
}

fn parse_agent(text: &str, file: &Path, origin: Origin) -> Result<AgentDefinition, String> {
    let (front, body) = frontmatter::parse::<AgentFront>(text).map_err(|e| e.to_string())?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = front.name.unwrap_or(stem).trim().to_owned();
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(format!(
            "line {}: the name `{name}` must be 1–64 lowercase letters, digits or hyphens",
            frontmatter::line_of(text, "name")
        ));
    }
    let description = front.description.unwrap_or_default().trim().to_owned();
    if description.is_empty() {
        return Err(format!(
            "line {}: a `description` is required: it is how the model picks the agent",
            frontmatter::line_of(text, "description")
        ));
    }
    let mode = match front.permission_mode.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(m) => match m.parse::<PermissionMode>() {
            // A file may narrow what its agent does, never widen it past
            // asking: bypass and unattended are the person's to choose.
            Ok(PermissionMode::Bypass | PermissionMode::Unattended) => {
                return Err(format!(
                    "line {}: `permission-mode: {m}` cannot be set by an agent file",
                    frontmatter::line_of(text, "permission-mode")
                ));
            }
            Ok(mode) => Some(mode),
            Err(e) => {
                return Err(format!(
                    "line {}: {e}",
                    frontmatter::line_of(text, "permission-mode")
                ));
            }
        },
    };
    Ok(AgentDefinition {
        name,
        description,
        tools: front.tools.map(|t| t.0).filter(|t| !t.is_empty()),
        model: front.model.filter(|m| !m.trim().is_empty()),
        mode,
        instructions: body.trim().to_owned(),
        origin,
    })
}

/// Refuses every call that is not read-only, for read-only agents; the
/// rest goes to the session's chain.
#[derive(Debug)]
struct ReadOnlyPolicy {
    inner: Arc<dyn PermissionPolicy>,
    agent: String,
}

#[async_trait]
impl PermissionPolicy for ReadOnlyPolicy {
    async fn decide(&self, query: &PermissionQuery) -> PermissionResult {
        if !query.is_read_only {
            let detail = format!("the `{}` agent only reads", self.agent);
            return PermissionResult::Deny {
                message: format!(
                    "The `{}` agent is read-only: it cannot run {} with this input. Report what should change instead of changing it.",
                    self.agent, query.tool_name
                ),
                reason: DecisionReason::Mode {
                    detail,
                    mode: query.mode,
                },
            };
        }
        self.inner.decide(query).await
    }

    fn remember(&self, rule: PermissionRule) {
        self.inner.remember(rule);
    }

    fn answered_by_person(&self) {
        self.inner.answered_by_person();
    }
}

/// The model subagents ask: the session's provider, and its model
/// followed at each start (`/model` switches it).
#[derive(Debug, Clone)]
pub struct SubagentModel {
    pub provider: Arc<dyn Provider>,
    pub model: SessionModel,
}

/// Everything a subagent is assembled from, shared by a session's Task
/// tool. Its tools run on a runner made from the session's [`StackBase`]:
/// the same chain, gate, hooks and MCP hubs as the session's.
pub struct Subagents {
    pub catalog: AgentCatalog,
    /// `Err`: why there is no model to run one (the inspection commands
    /// without a configured endpoint); a Task call then fails saying so.
    pub model: Result<SubagentModel, String>,
    pub stack: StackBase,
    /// Riot's home: children's transcripts go to its `sessions/`.
    pub home: PathBuf,
    pub skills: riot_extensions::skills::SkillCatalog,
    pub parent: SessionId,
    /// The parent's environment and memory section, set once the parent's
    /// system prompt is known.
    pub session_section: OnceLock<String>,
    /// The session's web tools (WebFetch, WebSearch), which a subagent
    /// may have too.
    pub web_tools: Vec<Arc<dyn DynTool>>,
    /// The session's background tasks (`run_in_background`).
    pub background: crate::background::BackgroundTasks,
}

impl std::fmt::Debug for Subagents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subagents")
            .field("agents", &self.catalog.agents().len())
            .field("model", &self.model.as_ref().map(|m| m.model.get()))
            .field("parent", &self.parent)
            .finish_non_exhaustive()
    }
}

impl Subagents {
    /// The tools of an agent: its list, from what a subagent may have
    /// (the built-ins, Skill, AskUser and the web tools, then MCP tools —
    /// all of them, or those the list names).
    fn tools_for(
        &self,
        agent: &AgentDefinition,
        stack: &StackBase,
    ) -> (Vec<Arc<dyn DynTool>>, McpSelection) {
        let mut all: Vec<Arc<dyn DynTool>> = riot_tools::builtin()
            .into_iter()
            .filter(|t| t.name() != "Terminal" || self.stack.terminals.available())
            .filter(|t| t.name() != "Browser" || self.stack.browser.available())
            .collect();
        all.push(Arc::new(riot_extensions::skills::SkillTool {
            catalog: self.skills.clone(),
        }));
        all.push(Arc::new(crate::ask::AskUser {
            gate: Arc::clone(&stack.gate),
        }));
        all.extend(self.web_tools.iter().cloned());
        match &agent.tools {
            None => (all, McpSelection::All),
            Some(names) => (
                all.into_iter()
                    .filter(|t| names.iter().any(|n| n == t.name()))
                    .collect(),
                McpSelection::Named(names.clone()),
            ),
        }
    }

    fn system_prompt(&self, agent: &AgentDefinition) -> SystemPrompt {
        SystemPrompt {
            stable: format!(
                "You are a subagent of Riot, a coding agent: another agent gave you the task in the first message, and your final message is all it will see of your work.\n\n\
{}\n\n\
# How to finish\n\n\
- Do the whole task, then answer with what you found or did: exact file paths, line numbers and names, and what is still uncertain. Be complete but concise; do not repeat the task.\n\
- You cannot ask the other agent anything; make reasonable assumptions and state them.\n\
- Never claim to have done what you did not do.",
                agent.instructions
            ),
            session: self.session_section.get().cloned().unwrap_or_default(),
        }
    }

    /// Runs one subagent to its end, its tools on `stack` (the session's,
    /// or for a background agent the same with nobody to ask).
    async fn run(
        &self,
        agent: &AgentDefinition,
        prompt: String,
        ctx: &ToolContext,
        stack: &StackBase,
    ) -> ToolOutcome {
        let subagent_model = match &self.model {
            Ok(m) => m,
            Err(why) => {
                return ToolOutcome::failed(format!(
                    "The subagent could not start: there is no model to run it ({why})"
                ));
            }
        };
        let ids = Arc::clone(&self.stack.caps.ids);
        let child = SessionId::generate(ids.as_ref());
        let model = agent
            .model
            .clone()
            .unwrap_or_else(|| subagent_model.model.get());
        // An agent's own mode applies only where the session lets the
        // model act: it never moves a plan or dont-ask session.
        let mode = match (ctx.mode, agent.mode) {
            (PermissionMode::Plan | PermissionMode::DontAsk, _) | (_, None) => ctx.mode,
            (_, Some(mode)) => mode,
        };
        let child_loop = ChildLoop {
            agent,
            child: &child,
            model,
            mode,
            provider: &subagent_model.provider,
            stack,
        };
        let (mut state, deps) = match self.child_loop(child_loop) {
            Ok(parts) => parts,
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "The subagent could not start: its transcript could not be created ({e})."
                ));
            }
        };
        let message = Message::user_text(MessageId::generate(ids.as_ref()), prompt);
        let ended = follow_child(agent, &mut state, message, &deps, ctx).await;
        ended.outcome(agent, &child)
    }

    /// The child's loop state and dependencies: its tools on a runner
    /// made from `stack` under the agent's policy and mode, and its
    /// transcript, created now; `Err` when it could not be.
    fn child_loop(
        &self,
        parts: ChildLoop<'_>,
    ) -> Result<(AgentState, AgentDeps), riot_store::StoreError> {
        let ChildLoop {
            agent,
            child,
            model,
            mode,
            provider,
            stack,
        } = parts;
        let ids = Arc::clone(&self.stack.caps.ids);
        let clock = Arc::clone(&self.stack.caps.clock);
        let policy: Arc<dyn PermissionPolicy> = if agent.is_read_only() {
            Arc::new(ReadOnlyPolicy {
                inner: Arc::clone(&self.stack.policy),
                agent: agent.name.clone(),
            })
        } else {
            Arc::clone(&self.stack.policy)
        };
        let (tools, mcp) = self.tools_for(agent, stack);
        let runner: Arc<dyn ToolRunner> = Arc::new(stack.runner(
            tools,
            Arc::new(self.stack.tool_env(child)),
            policy,
            ModeCell::new(mode),
            None,
            mcp,
        ));
        let system = self.system_prompt(agent);
        let mut meta = SessionMeta::new(
            child.clone(),
            self.stack.cwd.clone(),
            model.clone(),
            clock.now_ms(),
        );
        meta.parent = Some(self.parent.clone());
        meta.system = Some(system.clone());
        let writer = SessionStore::new(self.home.join("sessions")).create(&meta)?;
        let deps = AgentDeps {
            provider: Arc::clone(provider),
            tools: Arc::clone(&runner),
            compactor: Arc::new(ContextManager::new(
                Arc::clone(provider),
                Arc::new(NoWorkingSet),
            )),
            transcript: Arc::new(crate::transcript::StoreSink::open(
                writer,
                Arc::clone(&clock),
            )),
            hooks: Arc::new(NoStopHooks),
            queue: Arc::new(NoQueue),
            clock: Arc::clone(&clock),
            ids: Arc::clone(&ids),
        };
        let capabilities = provider.capabilities(&model);
        let mut state = AgentState::new(child.clone(), model, system);
        state.tools = runner.specs();
        state.mode = mode;
        state.max_turns = SUBAGENT_MAX_TURNS;
        state.cache_key = Some(child.to_string());
        state.max_tokens = riot_core::context::request_max_tokens(&capabilities);
        Ok((state, deps))
    }
}

/// What a subagent's loop is made of, besides the session's [`Subagents`].
struct ChildLoop<'a> {
    agent: &'a AgentDefinition,
    /// The child session's id.
    child: &'a SessionId,
    model: String,
    mode: PermissionMode,
    provider: &'a Arc<dyn Provider>,
    /// Where its tools run.
    stack: &'a StackBase,
}

/// How a subagent's loop went: its last answer, its tool calls, its end.
struct ChildEnd {
    answer: String,
    calls: usize,
    end: Option<TerminalReason>,
}

/// Runs the child's loop on `message` to its end, reporting its tool
/// calls as the parent call's progress and stopping it when the parent
/// call is cancelled.
async fn follow_child(
    agent: &AgentDefinition,
    state: &mut AgentState,
    message: Message,
    deps: &AgentDeps,
    ctx: &ToolContext,
) -> ChildEnd {
    let scope = CancelScope::new();
    let mut answer = String::new();
    let mut calls = 0usize;
    let mut end = None;
    {
        let run = riot_core::run_agent(state, Some(message), deps, scope.clone());
        let mut run = std::pin::pin!(run);
        let mut stop_sent = false;
        loop {
            let event = if stop_sent {
                run.next().await
            } else {
                let next = run.next();
                let cancelled = std::pin::pin!(ctx.cancel.cancelled());
                match futures::future::select(next, cancelled).await {
                    futures::future::Either::Left((event, _)) => event,
                    futures::future::Either::Right(((), _)) => {
                        // Stopped: the child winds down, its calls paired.
                        scope.cancel(CancelReason::User);
                        stop_sent = true;
                        continue;
                    }
                }
            };
            let Some(event) = event else { break };
            match event {
                AgentEvent::ToolStarted { describe, .. } => {
                    calls += 1;
                    ctx.report(ProgressPayload::Status {
                        text: format!("{}: {describe}", agent.name),
                    });
                }
                AgentEvent::Message {
                    message: Message::Assistant(a),
                } => {
                    let text = a.text();
                    if !text.trim().is_empty() {
                        answer = text;
                    }
                }
                AgentEvent::Done { reason } => end = Some(reason),
                _ => {}
            }
        }
    }
    ChildEnd { answer, calls, end }
}

impl ChildEnd {
    /// The Task call's result: the answer (capped) with a footer naming
    /// the child session, or why there is none.
    fn outcome(self, agent: &AgentDefinition, child: &SessionId) -> ToolOutcome {
        let Self { answer, calls, end } = self;
        let footer = format!(
            "\n\n(subagent `{}`, session {child}, {calls} tool call{})",
            agent.name,
            if calls == 1 { "" } else { "s" }
        );
        let answer = cap(answer.trim());
        match end {
            Some(TerminalReason::Completed | TerminalReason::StopHookPrevented) => {
                let answer = if answer.is_empty() {
                    "(the subagent finished without an answer)".to_owned()
                } else {
                    answer
                };
                ToolOutcome::text(format!("{answer}{footer}"), None)
            }
            Some(TerminalReason::MaxTurns) => ToolOutcome::text(
                format!(
                    "{answer}\n\n[The subagent was stopped after {SUBAGENT_MAX_TURNS} model requests; its work may be incomplete.]{footer}"
                ),
                None,
            ),
            Some(TerminalReason::Aborted { .. }) => ToolOutcome::Cancelled,
            Some(TerminalReason::Refusal) => {
                ToolOutcome::failed(format!("The subagent's model refused the task.{footer}"))
            }
            Some(TerminalReason::Error { error }) => {
                ToolOutcome::failed(format!("The subagent failed: {}{footer}", error.message))
            }
            None => ToolOutcome::failed(format!("The subagent ended without an answer.{footer}")),
        }
    }
}

fn cap(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_ANSWER_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_ANSWER_CHARS).collect();
    format!("{cut}\n[cut: the first {MAX_ANSWER_CHARS} of {total} characters]")
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// Three to five words saying what the subagent does.
    pub description: String,
    /// The whole task: the subagent sees nothing else of the conversation.
    pub prompt: String,
    /// The agent type, from the list in this tool's description.
    pub subagent_type: String,
    /// Run it in the background: you get its task id at once and keep
    /// working; its result arrives as a message when it ends (TaskOutput
    /// reads its progress). It cannot ask the person anything: what would
    /// need approval is denied.
    #[serde(default)]
    pub run_in_background: bool,
}

/// The Task tool.
#[derive(Debug, Clone)]
pub struct Task {
    pub subagents: Arc<Subagents>,
}

impl Task {
    fn agent(&self, name: &str) -> Option<&AgentDefinition> {
        self.subagents.catalog.get(name)
    }
}

#[async_trait]
impl Tool for Task {
    type Input = TaskInput;

    fn name(&self) -> &str {
        "Task"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(TaskInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        let list = self
            .subagents
            .catalog
            .agents()
            .iter()
            .map(|a| {
                let tools = match &a.tools {
                    None => "all tools".to_owned(),
                    Some(t) => t.join(", "),
                };
                format!(
                    "- {}: {} (tools: {tools})",
                    a.name,
                    a.description
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        format!(
            "Starts a subagent: another agent that works on one task on its own, with its own context, and returns only its final answer. Use it to explore or research in parallel, or to keep long searches out of your context.\n\n\
Agent types:\n{list}\n\n\
Write the `prompt` as a complete brief: the goal, what you already know, where to look, and exactly what to return — the subagent sees nothing else. To run several at once, put several Task calls in one reply (read-only agents run in parallel).\n\n\
How it differs from the other tools: the work happens in a separate conversation; you get its conclusion, not its steps. Check what matters before you rely on it.\n\n\
NEVER:\n- use it for a single search or read you can do directly;\n- give a subagent a task that needs the person's decisions;\n- start a writing subagent and change the same files yourself at the same time."
        )
    }

    fn describe(&self, input: &TaskInput) -> String {
        format!("Task ({}): {}", input.subagent_type, input.description)
    }

    /// Read-only agent types only read; everything else may write. An
    /// unknown type counts as writing.
    fn is_read_only(&self, input: &TaskInput) -> bool {
        self.agent(&input.subagent_type)
            .is_some_and(AgentDefinition::is_read_only)
    }

    fn is_concurrency_safe(&self, input: &TaskInput) -> bool {
        self.is_read_only(input)
    }

    /// A stop reaches the child through the call's cancellation, and the
    /// child winds down with its calls paired: never dropped mid-run.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Starting an agent changes nothing by itself: each of its calls
    /// goes through the permission chain and may ask.
    async fn check_permissions(&self, input: &TaskInput, ctx: &ToolContext) -> PermissionResult {
        if self.agent(&input.subagent_type).is_some() {
            PermissionResult::Allow {
                reason: DecisionReason::Mode {
                    detail: "starting a subagent needs no question: each of its calls is checked"
                        .into(),
                    mode: ctx.mode,
                },
                updated_input: None,
            }
        } else {
            PermissionResult::Passthrough
        }
    }

    async fn validate_input(
        &self,
        input: &TaskInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if self.agent(&input.subagent_type).is_none() {
            let names: Vec<&str> = self
                .subagents
                .catalog
                .agents()
                .iter()
                .map(|a| a.name.as_str())
                .collect();
            return Err(ValidationError::rejected(format!(
                "There is no agent type `{}`. Use one of: {}.",
                input.subagent_type,
                names.join(", ")
            )));
        }
        if input.prompt.trim().is_empty() {
            return Err(ValidationError::rejected(
                "The prompt is empty; write the whole task for the subagent.",
            ));
        }
        Ok(())
    }

    async fn call(&self, input: TaskInput, ctx: &ToolContext) -> ToolOutcome {
        let Some(agent) = self.agent(&input.subagent_type).cloned() else {
            return ToolOutcome::failed(format!(
                "There is no agent type `{}`.",
                input.subagent_type
            ));
        };
        if input.run_in_background {
            return start_background(
                Arc::clone(&self.subagents),
                agent,
                input.description,
                input.prompt,
                ctx,
            );
        }
        self.subagents
            .run(&agent, input.prompt, ctx, &self.subagents.stack)
            .await
    }
}

/// Starts a background subagent on its own task and answers at once with
/// its id; its end is recorded in the session's background tasks, which
/// queue its result for the parent (`crate::background`).
fn start_background(
    subagents: Arc<Subagents>,
    agent: AgentDefinition,
    description: String,
    prompt: String,
    ctx: &ToolContext,
) -> ToolOutcome {
    let tasks = subagents.background.clone();
    let Some((id, cancel)) = tasks.start(&agent.name, &description) else {
        return ToolOutcome::failed("The session is ending: no background task can start now.");
    };
    // Nobody answers a background agent: what would be asked is denied,
    // with the reason, and it never waits for a person.
    let mut stack = subagents.stack.clone();
    stack.gate = Arc::new(crate::gate::NobodyAnswers);
    let progress_tasks = tasks.clone();
    let progress_id = id.clone();
    let progress: riot_protocol::tool::ProgressSink = Arc::new(move |payload| {
        if let ProgressPayload::Status { text } = payload {
            progress_tasks.progress(&progress_id, &text);
        }
    });
    let child_ctx = ToolContext {
        env: Arc::clone(&ctx.env),
        tool_use_id: ctx.tool_use_id.clone(),
        mode: ctx.mode,
        allowed_by: ctx.allowed_by,
        cancel,
        progress: Some(progress),
    };
    let task_id = id.clone();
    let name = agent.name.clone();
    tokio::spawn(async move {
        // Ends the task even if the run panics or is dropped unfinished, so
        // nothing waits for it forever (`riot exec` waits for every one).
        let _ends = EndsOnce {
            tasks: tasks.clone(),
            id: task_id.clone(),
        };
        let outcome = subagents.run(&agent, prompt, &child_ctx, &stack).await;
        let (state, text) = match outcome {
            ToolOutcome::Ok { model_content, .. } => (
                crate::background::TaskState::Completed,
                model_content
                    .iter()
                    .filter_map(|c| match c {
                        riot_protocol::ToolResultContent::Text { text }
                        | riot_protocol::ToolResultContent::Document { text, .. } => {
                            Some(text.as_str())
                        }
                        riot_protocol::ToolResultContent::Image { .. } => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            ToolOutcome::Failed {
                error_for_model, ..
            } => (crate::background::TaskState::Failed, error_for_model),
            ToolOutcome::Cancelled => (
                crate::background::TaskState::Stopped,
                "The background task was stopped before it finished.".to_owned(),
            ),
        };
        tasks.finish(&task_id, state, text);
    });
    ToolOutcome::text(
        format!(
            "Started the `{name}` agent in the background as task {id}. Keep working: its result will arrive as a message when it ends (TaskOutput with task_id \"{id}\" shows its progress). It cannot ask the person anything."
        ),
        None,
    )
}

/// Marks a background task failed when dropped before it ended (a panic
/// in its run); after a normal end it does nothing (a task ends once).
struct EndsOnce {
    tasks: crate::background::BackgroundTasks,
    id: String,
}

impl Drop for EndsOnce {
    fn drop(&mut self) {
        self.tasks.finish(
            &self.id,
            crate::background::TaskState::Failed,
            "The background task stopped without a result: it failed inside Riot.".to_owned(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_files_parse_and_are_checked() {
        let file = Path::new("/a/reviewer.md");
        let agent = parse_agent(
            "---\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: small\npermission-mode: plan\n---\nReview carefully.\n",
            file,
            Origin::User,
        )
        .unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(
            agent.tools.as_deref(),
            Some(&["Read".to_owned(), "Grep".to_owned()][..])
        );
        assert_eq!(agent.model.as_deref(), Some("small"));
        assert_eq!(agent.mode, Some(PermissionMode::Plan));
        assert_eq!(agent.instructions, "Review carefully.");
        assert!(agent.is_read_only());

        let err = parse_agent(
            "---\ndescription: d\npermission-mode: bypass\n---\n",
            file,
            Origin::Project,
        )
        .unwrap_err();
        assert!(
            err.starts_with("line 3: `permission-mode: bypass` cannot be set"),
            "{err}"
        );
        let err = parse_agent("---\nname: x\n---\n", file, Origin::User).unwrap_err();
        assert!(err.contains("a `description` is required"), "{err}");
        let writer = parse_agent(
            "---\ndescription: d\ntools: [Read, Write]\n---\n",
            file,
            Origin::User,
        )
        .unwrap();
        assert!(!writer.is_read_only());
    }

    #[test]
    fn explore_is_read_only_and_general_purpose_is_not() {
        let catalog = AgentCatalog::builtin();
        assert!(catalog.get("explore").unwrap().is_read_only());
        assert!(!catalog.get("general-purpose").unwrap().is_read_only());
    }
}
