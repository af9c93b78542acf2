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
//!
//! The agent types are found in `agent_types`; a subagent's loop is
//! assembled and followed in `child`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use riot_protocol::{
    DecisionReason, DynTool, InterruptBehavior, PermissionResult, ProgressPayload, PromptContext,
    Provider, SessionId, Tool, ToolContext, ToolOutcome, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::runner::StackBase;
use crate::world::SessionModel;

mod agent_types;
mod child;

pub use agent_types::{AgentCatalog, AgentDefinition};

/// Model requests a subagent may make before it is stopped.
pub const SUBAGENT_MAX_TURNS: u32 = 40;
/// Characters of a subagent's answer returned to the parent.
pub const MAX_ANSWER_CHARS: usize = 40_000;

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
    pub model: Result<SubagentModel, crate::error::NoModel>,
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
