//! Session assembly: configuration, credentials, provider, tools,
//! permission chain, system prompt and transcript joined into a
//! [`Session`] whose turns the faces run (docs/design.md §2, §11–§13).
//!
//! [`Kernel::open`] (in `open`) goes in steps, each its own function: the
//! configuration and the session it continues (`resume`), the endpoint
//! (`crate::provider`), the tool stack (`crate::stack`, shared with
//! subagents and the inspection commands), the system prompt, the
//! transcript, and the loop's first state.
//!
//! A turn runs in `turn`, the built-in slash commands in `commands`, and
//! rewind in `rewind`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_core::{AgentDeps, AgentState};
use riot_protocol::{
    AgentError, AgentEvent, ErrorKind, FileSystem, IdGen, Message, MessageId, PermissionMode,
    SessionId, TerminalReason,
};

use riot_config::FlagLayer;
// Where faces and older modules found these; they live lower down now.
pub use crate::error::KernelError;
use crate::kernel::OpenMark;
pub use crate::kernel::{Kernel, McpServerInfo};
use crate::world::SessionModel;

mod commands;
mod open;
mod rewind;
mod turn;

pub use turn::panic_to_done;

/// Which session to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeFrom {
    Id(SessionId),
    /// The most recent session in this directory.
    Latest,
}

/// How to open a session.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub cwd: PathBuf,
    /// The process environment.
    pub env: BTreeMap<String, String>,
    pub flags: FlagLayer,
    pub trust_project: bool,
    pub max_turns: Option<u32>,
    pub resume: Option<ResumeFrom>,
    /// Who answers the session's questions: a person through the face
    /// that takes [`SessionHandle::questions`](crate::SessionHandle::questions),
    /// or nobody (`riot exec`).
    pub asker: crate::questions::Asker,
    /// MCP servers for this session only (an ACP client's `mcpServers`).
    pub mcp_servers: Vec<riot_mcp::ServerConfig>,
}

/// An open session.
#[derive(Debug)]
pub struct Session {
    state: AgentState,
    deps: AgentDeps,
    notices: Vec<String>,
    /// The OS sandbox as faces show it.
    sandbox: String,
    file_state: Arc<riot_protocol::FileStateStore>,
    state_path: PathBuf,
    fs: Arc<dyn FileSystem>,
    pending: crate::queue::PendingMessages,
    hooks: Arc<riot_extensions::hooks::HookRunner>,
    /// SessionStart hooks' context, sent with the next prompt.
    start_context: Vec<String>,
    sink: Arc<crate::transcript::StoreSink>,
    /// Checkpoints and the transcript store, for rewind.
    rewinds: crate::checkpoints::Rewinds,
    todos: riot_tools::tools::todo_write::TodoList,
    skills: riot_extensions::skills::SkillCatalog,
    commands: riot_extensions::commands::CommandCatalog,
    cwd: PathBuf,
    /// The mode tool batches run in; `ExitPlanMode` changes it mid-turn.
    mode_cell: crate::plan::ModeCell,
    /// What the person asked lately, for auto mode's classifier.
    recent_requests: crate::classifier::RecentRequests,
    /// The session's model while a command's own model runs a turn.
    restore_model: Option<String>,
    /// Images sent with the next prompt (an ACP image block), attached
    /// after its text by [`turn`](Self::turn).
    next_images: Vec<riot_protocol::ImageSource>,
    /// The model, as subagents and the classifier see it.
    shared_model: SessionModel,
    /// The endpoint itself: what models it serves, what each can do.
    endpoint: Arc<riot_providers::HttpProvider>,
    /// The session's language servers, asked to shut down when it ends.
    language_servers: Option<Arc<dyn riot_protocol::LanguageServers>>,
    /// What the session has cost (every request, main and side).
    cost: Arc<riot_providers::meter::CostMeter>,
    /// The side usage a resumed session's meter started from: what
    /// earlier processes spent.
    side_at_open: riot_protocol::Usage,
    /// The session's terminals (the Terminal tool's; faces watch them).
    terminals: Arc<dyn riot_protocol::Terminals>,
    /// Its questions for the person while they wait (the session's gate).
    questions: Arc<crate::questions::Questions>,
    /// Stops the session's background tasks when it is dropped.
    background: crate::background::BackgroundGuard,
    /// Counts this session as open in the kernel until dropped.
    _open: OpenMark,
}

impl Session {
    /// The session's background tasks (faces reach them through the
    /// handle's task operations and updates).
    pub(crate) fn background_tasks(&self) -> &crate::background::BackgroundTasks {
        &self.background.0
    }

    /// The session's terminals (faces reach them through the handle's
    /// terminal operations and updates; docs/terminals.md).
    pub(crate) fn terminals(&self) -> &Arc<dyn riot_protocol::Terminals> {
        &self.terminals
    }

    /// Its questions for the person (the handle's stream and answers).
    pub(crate) fn questions(&self) -> &Arc<crate::questions::Questions> {
        &self.questions
    }

    /// The session id.
    pub fn id(&self) -> &SessionId {
        &self.state.session_id
    }

    /// One-line notices for the person (ignored project settings, memory
    /// files cut, bypass mode).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The OS sandbox as faces show it.
    pub fn sandbox(&self) -> &str {
        &self.sandbox
    }

    /// The history so far.
    pub fn messages(&self) -> &[Message] {
        &self.state.messages
    }

    /// The model in use.
    pub fn model(&self) -> &str {
        &self.state.model
    }

    /// How hard the model thinks before it answers.
    pub fn thinking(&self) -> riot_protocol::ThinkingLevel {
        riot_protocol::ThinkingLevel::of(self.state.thinking)
    }

    /// Sets how hard the model thinks, from the next request on (a model
    /// that cannot think is sent nothing; see the wire builders).
    pub fn set_thinking(&mut self, level: riot_protocol::ThinkingLevel) {
        self.state.thinking = level.config();
    }

    /// Asks the language servers to shut down and exit (the session
    /// ends); each gets a moment before its process group is killed.
    pub async fn shutdown_language_servers(&self) {
        if let Some(servers) = &self.language_servers {
            servers.shutdown().await;
        }
    }

    /// The endpoint the session's requests go to.
    pub fn endpoint(&self) -> &Arc<riot_providers::HttpProvider> {
        &self.endpoint
    }

    /// The current model's context window in tokens.
    pub fn context_window(&self) -> u64 {
        self.deps
            .provider
            .capabilities(&self.state.model)
            .context_window
    }

    /// The names of the tools offered to the model, in the order sent
    /// (an MCP server's tools join once it is ready).
    pub fn tool_names(&self) -> Vec<String> {
        self.state.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// The project directory.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The cell tool batches read their mode from (a mid-turn switch).
    pub(crate) fn mode_cell(&self) -> crate::plan::ModeCell {
        self.mode_cell.clone()
    }

    /// The switch that changes a running turn's model.
    pub(crate) fn model_switch(&self) -> crate::queue::ModelSwitch {
        self.pending.model_switch(self.shared_model.clone())
    }

    /// The permission mode the next turn runs in.
    pub fn mode(&self) -> PermissionMode {
        self.mode_cell.get()
    }

    /// Switches the permission mode between turns (ACP `session/set_mode`,
    /// a UI's mode picker); it applies from the next model request on.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        if self.state.mode != mode {
            self.sink.mode_changed(mode);
        }
        self.state.mode = mode;
        self.mode_cell.set(mode);
    }

    /// The slash commands a person can type: built-ins, then files.
    pub fn commands(&self) -> &[riot_extensions::commands::Command] {
        self.commands.commands()
    }

    /// The skills the model can load.
    pub fn skills(&self) -> &riot_extensions::skills::SkillCatalog {
        &self.skills
    }

    /// Switches the model for the next turns (`/model`), on the same
    /// provider.
    pub fn set_model(&mut self, model: &str) {
        if self.state.model == model {
            return;
        }
        self.state.model = model.to_owned();
        self.shared_model.set(model);
        let capabilities = self.deps.provider.capabilities(model);
        self.state.max_tokens = riot_core::context::request_max_tokens(&capabilities);
        self.deps.transcript.model_changed(model);
    }

    /// Starts over (`/clear`): the history, the todo list and what was read
    /// are forgotten; the system prompt and the settings stay. A resumed
    /// session starts from here too.
    pub fn clear(&mut self) {
        self.state.messages.clear();
        self.state.last_usage = None;
        self.state.usage_anchor = None;
        self.state.turn_prompt = None;
        self.start_context.clear();
        self.todos.clear();
        self.recent_requests.clear();
        for (path, _) in self.file_state.snapshot() {
            self.file_state.remove(&path);
        }
        self.sink.cleared();
    }

    /// The queue of messages sent while a turn runs. Clone the handle
    /// before starting a turn; messages pushed during it are delivered
    /// after the pending tool results.
    pub(crate) fn pending(&self) -> crate::queue::PendingMessages {
        self.pending.clone()
    }

    /// Compacts the conversation now (`/compact [focus]`), between turns.
    pub async fn compact(&mut self, focus: Option<String>) -> Result<Vec<AgentEvent>, KernelError> {
        Ok(riot_core::compact_now(&mut self.state, &self.deps, focus).await?)
    }

    /// Persists what this session has read, so a resumed session and
    /// `riot tools call --session ID` keep read-before-write knowledge.
    pub async fn save_file_state(&self) -> std::io::Result<()> {
        crate::file_state::save_file_state(self.fs.as_ref(), &self.state_path, &self.file_state)
            .await
    }

    /// What the session has cost so far: every model request, main and
    /// side, in this process and the earlier ones that wrote its
    /// transcript (`usd` is `None` when a model had no price).
    pub fn cost(&self) -> riot_protocol::SessionCost {
        self.cost.total()
    }

    /// The session's cost meter, to read the cost without the session (a
    /// handle, during a turn).
    pub fn cost_meter(&self) -> Arc<riot_providers::meter::CostMeter> {
        Arc::clone(&self.cost)
    }

    /// Usage of the side requests made in this process — every one the
    /// cost meter counts: compaction summaries, auto mode's classifier,
    /// subagents, image descriptions, WebFetch's answers.
    pub fn side_usage(&self) -> riot_protocol::Usage {
        self.cost.total().side_usage.since(&self.side_at_open)
    }

    /// Images to send with the next [`turn`](Self::turn)'s prompt,
    /// prepared as Read prepares an image (downscaled, first GIF frame).
    pub fn attach_images(&mut self, images: Vec<riot_protocol::ImageSource>) {
        self.next_images = images;
    }

    fn system_message(&self, level: riot_protocol::SystemLevel, text: String) -> Message {
        Message::System(riot_protocol::SystemMessage {
            id: MessageId::generate(self.deps.ids.as_ref()),
            text,
            level,
        })
    }
}

/// The end of a command that failed: the message for the person, then
/// `Done { Error }` carrying it.
fn failed(ids: &dyn IdGen, kind: ErrorKind, message: String) -> Vec<AgentEvent> {
    vec![
        AgentEvent::Message {
            message: Message::System(riot_protocol::SystemMessage {
                id: MessageId::generate(ids),
                text: message.clone(),
                level: riot_protocol::SystemLevel::Error,
            }),
        },
        AgentEvent::Done {
            reason: TerminalReason::Error {
                error: AgentError { kind, message },
            },
        },
    ]
}
