//! Session assembly: configuration, credentials, provider, tools,
//! permission chain, system prompt and transcript joined into a
//! [`Session`] whose turns the faces run (docs/design.md §2, §11–§13).
//!
//! [`Kernel::open`] (in `open`) goes in steps, each its own function: the
//! configuration and the session it continues (`resume`), the endpoint
//! (`crate::provider`), the tool stack (`crate::stack`, shared with
//! subagents and the inspection commands), the system prompt, the
//! transcript, and the loop's first state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::panic::AssertUnwindSafe;

use futures::{Stream, StreamExt};
use riot_core::{AgentDeps, AgentState};
use riot_protocol::{
    AgentError, AgentEvent, CancelScope, ErrorKind, FileSystem, IdGen, Message, MessageId,
    PermissionGate, PermissionMode, SessionId, TerminalReason,
};

use riot_config::FlagLayer;
// Where faces and older modules found these; they live lower down now.
pub use crate::error::KernelError;
use crate::kernel::OpenMark;
pub use crate::kernel::{Kernel, McpServerInfo};
use crate::world::SessionModel;

mod open;
mod rewind;

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
    /// Who answers permission questions (`riot exec`: nobody).
    pub gate: Arc<dyn PermissionGate>,
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
    cost: Arc<crate::cost::CostMeter>,
    /// The side usage a resumed session's meter started from: what
    /// earlier processes spent.
    side_at_open: riot_protocol::Usage,
    /// The session's terminals (the Terminal tool's; faces watch them).
    terminals: Arc<dyn riot_protocol::Terminals>,
    /// Stops the session's background tasks when it is dropped.
    background: crate::background::BackgroundGuard,
    /// Counts this session as open in the kernel until dropped.
    _open: OpenMark,
}

impl Session {
    /// The session's background tasks (faces list them and stop them).
    pub fn background_tasks(&self) -> &crate::background::BackgroundTasks {
        &self.background.0
    }

    /// The session's terminals: faces watch them and type into them
    /// (docs/terminals.md).
    pub fn terminals(&self) -> &Arc<dyn riot_protocol::Terminals> {
        &self.terminals
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
    pub fn pending(&self) -> crate::queue::PendingMessages {
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
    pub fn cost_meter(&self) -> Arc<crate::cost::CostMeter> {
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

    /// Runs one turn for `prompt`. Exactly one `Done`, always last — also
    /// when the loop panics: the panic becomes this session's
    /// `Done { Error }` instead of taking the process down (docs/design.md §2).
    /// The next turn answers any tool use the panic left unanswered.
    ///
    /// A prompt naming a slash command runs it: a built-in acts on the
    /// session (its output is an `Info` system message), a command file
    /// becomes the prompt. `@path` mentions attach the files' text.
    ///
    /// UserPromptSubmit hooks run first: a block ends the turn with the
    /// reason shown to the person (the prompt is not sent); their context,
    /// and that of SessionStart hooks, follows the prompt.
    pub fn turn<'a>(
        &'a mut self,
        prompt: &str,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        let prompt = prompt.to_owned();
        let inner = async_stream::stream! {
            if let Some(previous) = self.restore_model.take() {
                self.set_model(&previous);
            }
            let mut text = prompt.clone();
            let mut model_for_turn = None;
            if let Some(invocation) = riot_extensions::commands::parse_invocation(&prompt) {
                let command = self.commands.get(invocation.name).cloned();
                let args = invocation.args.to_owned();
                match command {
                    None => {
                        let name = invocation.name.to_owned();
                        for event in failed(
                            self.deps.ids.as_ref(),
                            ErrorKind::Usage,
                            format!("Unknown command /{name}. Type /help to list the commands; to send text that starts with a slash, begin it with a word."),
                        ) {
                            yield event;
                        }
                        return;
                    }
                    Some(command) if command.origin == riot_extensions::extension_files::Origin::Builtin => {
                        for event in self.builtin(&command.name, &args).await {
                            yield event;
                        }
                        return;
                    }
                    Some(command) => match self.command_prompt(&command, &args).await {
                        Ok(expanded) => {
                            text = expanded;
                            model_for_turn = command.model.clone();
                        }
                        Err(message) => {
                            for event in failed(self.deps.ids.as_ref(), ErrorKind::Usage, message) {
                                yield event;
                            }
                            return;
                        }
                    },
                }
            }
            let mut extra = std::mem::take(&mut self.start_context);
            match self.hooks.user_prompt_submit(&text).await {
                riot_extensions::hooks::PromptVerdict::Block { reason } => {
                    self.start_context = extra;
                    yield AgentEvent::Message {
                        message: self.system_message(
                            riot_protocol::SystemLevel::Warning,
                            format!("A UserPromptSubmit hook blocked this prompt: {reason}"),
                        ),
                    };
                    yield AgentEvent::Done { reason: TerminalReason::StopHookPrevented };
                    return;
                }
                riot_extensions::hooks::PromptVerdict::Context(context) => {
                    self.recent_requests.push(&text);
                    extra.extend(context);
                }
            }
            // Typing of the person's into a terminal the model has not
            // read since: said now, or the model may never learn of it.
            for (name, typed) in self.terminals().take_person_typed() {
                extra.push(format!(
                    "The person typed into terminal `{name}` since you last read it: {typed}. Read it with the Terminal tool to see what it shows now."
                ));
            }
            let mut attachments =
                riot_extensions::commands::attach_mentions(self.fs.as_ref(), &self.cwd, &text).await;
            for (n, image) in std::mem::take(&mut self.next_images).into_iter().enumerate() {
                let name = format!("image {}", n + 1);
                attachments.extend(riot_extensions::commands::attach_image_data(&name, image).await);
            }
            let mut message =
                Message::user_text(MessageId::generate(self.deps.ids.as_ref()), text);
            if let Message::User(user) = &mut message {
                user.content.extend(attachments);
                user.content
                    .extend(extra.into_iter().map(|text| riot_protocol::UserBlock::Text { text }));
            }
            // What Riot queued while no turn ran (a background task's
            // result) goes with this prompt, after the person's words.
            let riots = self.pending.deliver_riots();
            if let Message::User(user) = &mut message {
                for queued in &riots {
                    if let Message::User(queued) = queued {
                        user.content.extend(queued.content.iter().cloned());
                    }
                }
            }
            if let Some(model) = &model_for_turn {
                // Restored after the turn, or — if the turn panicked — at
                // the start of the next one.
                self.restore_model = Some(self.state.model.clone());
                self.set_model(model);
            }
            let run = self.run_message(message, riots, cancel);
            let mut run = std::pin::pin!(run);
            while let Some(event) = run.next().await {
                yield event;
            }
        };
        panic_to_done(inner)
    }

    /// A turn that gives the model what Riot queued while no turn ran (a
    /// background task's result), when no prompt of the person's would
    /// carry it: one message of Riot's with each waiting message's text,
    /// in order. No UserPromptSubmit hook runs (the person wrote nothing).
    /// With nothing waiting it ends at once, `Completed`, without a
    /// request.
    pub fn deliver_turn<'a>(
        &'a mut self,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        let inner = async_stream::stream! {
            if let Some(previous) = self.restore_model.take() {
                self.set_model(&previous);
            }
            let riots = self.pending.deliver_riots();
            if riots.is_empty() {
                yield AgentEvent::Done { reason: TerminalReason::Completed };
                return;
            }
            let content = riots
                .iter()
                .filter_map(|m| match m {
                    Message::User(u) => Some(u.content.iter().cloned()),
                    _ => None,
                })
                .flatten()
                .collect();
            let message = Message::User(riot_protocol::UserMessage {
                id: MessageId::generate(self.deps.ids.as_ref()),
                content,
                origin: riot_protocol::MessageOrigin::Context,
            });
            let run = self.run_message(message, riots, cancel);
            let mut run = std::pin::pin!(run);
            while let Some(event) = run.next().await {
                yield event;
            }
        };
        panic_to_done(inner)
    }

    /// The loop on `message` (with Riot's queued `riots` in it), its cost
    /// metered; then what every turn does at its end.
    fn run_message<'a>(
        &'a mut self,
        message: Message,
        riots: Vec<Message>,
        cancel: CancelScope,
    ) -> impl Stream<Item = AgentEvent> + Send + 'a {
        async_stream::stream! {
            let prompt_id = message.id().clone();
            {
                let run = riot_core::run_agent(&mut self.state, Some(message), &self.deps, cancel);
                let mut run = std::pin::pin!(run);
                while let Some(event) = run.next().await {
                    self.cost.observe(&event);
                    yield event;
                }
            }
            self.requeue_if_withdrawn(&prompt_id, riots);
            self.after_turn();
        }
    }

    /// A turn stopped before anything came back withdraws its prompt;
    /// Riot's messages that went with it wait again, held: the person
    /// stopped that turn, so they go with the next prompt (or a face's
    /// explicit delivery) rather than waking the session at once.
    fn requeue_if_withdrawn(&self, prompt_id: &MessageId, riots: Vec<Message>) {
        if riots.is_empty() || self.state.messages.iter().any(|m| m.id() == prompt_id) {
            return;
        }
        for queued in riots {
            if let Message::User(queued) = queued {
                for block in queued.content {
                    if let riot_protocol::UserBlock::Text { text } = block {
                        self.pending.push_held(&text, queued.origin);
                    }
                }
            }
        }
    }

    /// What every turn does at its end: a command's model gives way to the
    /// session's, and a plan approved during the turn sets the mode from
    /// now on.
    fn after_turn(&mut self) {
        if let Some(previous) = self.restore_model.take() {
            self.set_model(&previous);
        }
        let mode = self.mode_cell.get();
        if mode != self.state.mode {
            self.set_mode(mode);
        }
    }

    fn system_message(&self, level: riot_protocol::SystemLevel, text: String) -> Message {
        Message::System(riot_protocol::SystemMessage {
            id: MessageId::generate(self.deps.ids.as_ref()),
            text,
            level,
        })
    }

    /// A built-in command's events, `Done` last.
    async fn builtin(&mut self, name: &str, args: &str) -> Vec<AgentEvent> {
        let info = |session: &Self, text: String| AgentEvent::Message {
            message: session.system_message(riot_protocol::SystemLevel::Info, text),
        };
        let done = AgentEvent::Done {
            reason: TerminalReason::Completed,
        };
        let ids = Arc::clone(&self.deps.ids);
        let ids = ids.as_ref();
        match name {
            "help" => vec![info(self, self.commands.help(&self.skills)), done],
            "cost" => vec![info(self, crate::cost::describe(&self.cost.total())), done],
            "clear" => {
                self.clear();
                vec![
                    info(self, "Cleared: the conversation starts over.".into()),
                    done,
                ]
            }
            "compact" => {
                let focus = (!args.is_empty()).then(|| args.to_owned());
                match self.compact(focus).await {
                    Ok(mut events) => {
                        events.push(done);
                        events
                    }
                    Err(e) => failed(ids, ErrorKind::Other, format!("Could not compact: {e}")),
                }
            }
            "model" => {
                if args.is_empty() {
                    let fallback = self
                        .state
                        .fallback_model
                        .as_deref()
                        .map(|f| format!(" (fallback: {f})"))
                        .unwrap_or_default();
                    vec![
                        info(self, format!("Model: {}{fallback}", self.state.model)),
                        done,
                    ]
                } else if args.split_whitespace().count() > 1 {
                    failed(
                        ids,
                        ErrorKind::Usage,
                        format!("/model takes one model name, got `{args}`"),
                    )
                } else {
                    self.set_model(args);
                    vec![
                        info(self, format!("Model: {args} from the next request on.")),
                        done,
                    ]
                }
            }
            "thinking" => {
                let model = self.state.model.clone();
                let can_think = self.deps.provider.capabilities(&model).thinking;
                if args.is_empty() {
                    let level = self.thinking();
                    let note = if can_think {
                        String::new()
                    } else {
                        format!(" ({model} cannot think)")
                    };
                    return vec![
                        info(self, format!("Thinking: {}{note}", level.as_str())),
                        done,
                    ];
                }
                match riot_protocol::ThinkingLevel::parse(args) {
                    None => failed(
                        ids,
                        ErrorKind::Usage,
                        format!("/thinking takes off, low, medium or high, not `{args}`"),
                    ),
                    Some(_) if !can_think => failed(
                        ids,
                        ErrorKind::Usage,
                        format!("{model} cannot think; switch to a model that can first"),
                    ),
                    Some(level) => {
                        self.set_thinking(level);
                        vec![
                            info(
                                self,
                                format!("Thinking: {} from the next request on.", level.as_str()),
                            ),
                            done,
                        ]
                    }
                }
            }
            "mode" => {
                if args.is_empty() {
                    return vec![
                        info(self, format!("Permission mode: {}", self.state.mode)),
                        done,
                    ];
                }
                match args.parse::<PermissionMode>() {
                    // Unattended lets safety findings through: it is set in
                    // settings with `unattended_confirmed`, never typed.
                    Ok(PermissionMode::Unattended) => failed(
                        ids,
                        ErrorKind::Usage,
                        "unattended mode can only be set in settings, with \"unattended_confirmed\": true beside it".into(),
                    ),
                    Ok(mode) => {
                        self.set_mode(mode);
                        vec![
                            info(
                                self,
                                format!("Permission mode: {mode} from the next request on."),
                            ),
                            done,
                        ]
                    }
                    Err(e) => failed(ids, ErrorKind::Usage, e.to_string()),
                }
            }
            "rewind" | "undo" => self.rewind_command(name, args).await,
            other => failed(
                ids,
                ErrorKind::Internal,
                format!("the built-in command /{other} has no implementation"),
            ),
        }
    }

    /// A command file's prompt for `args`, read now so an edit applies
    /// without restarting.
    async fn command_prompt(
        &self,
        command: &riot_extensions::commands::Command,
        args: &str,
    ) -> Result<String, String> {
        let Some(file) = &command.file else {
            return Err(format!("/{} has no file", command.name));
        };
        let bytes = self.fs.read(file).await.map_err(|e| {
            format!(
                "/{} could not be read from {}: {e}",
                command.name,
                file.display()
            )
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("/{}: {} is not UTF-8 text", command.name, file.display()))?;
        let (_, body) = riot_extensions::frontmatter::parse::<serde_json::Value>(&text)
            .map_err(|e| format!("/{}: {}: {e}", command.name, file.display()))?;
        Ok(riot_extensions::commands::expand(body, args))
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

/// Turns a panic inside a turn's stream into that turn's final
/// `Done { Error }`.
pub fn panic_to_done<'a>(
    inner: impl Stream<Item = AgentEvent> + Send + 'a,
) -> impl Stream<Item = AgentEvent> + Send + 'a {
    async_stream::stream! {
        let mut guarded = std::pin::pin!(AssertUnwindSafe(inner).catch_unwind());
        while let Some(item) = guarded.next().await {
            match item {
                Ok(event) => yield event,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| panic.downcast_ref::<&str>().copied())
                        .unwrap_or("unknown panic");
                    tracing::error!(panic = what, "the agent loop panicked");
                    yield AgentEvent::Done {
                        reason: TerminalReason::Error {
                            error: AgentError {
                                kind: ErrorKind::Internal,
                                message: format!("Riot hit an internal error and stopped this turn: {what}. The session is saved; you can resume it."),
                            },
                        },
                    };
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use riot_protocol::{AgentEvent, CompactionStrategy, ErrorKind, TerminalReason};

    use super::panic_to_done;

    #[tokio::test]
    async fn a_panic_in_the_loop_becomes_the_turns_done_error() {
        let inner = futures::stream::iter(0..3).map(|i| {
            if i == 2 {
                panic!("broken invariant");
            }
            AgentEvent::Compacting {
                strategy: CompactionStrategy::Summary,
            }
        });
        let events: Vec<AgentEvent> = panic_to_done(inner).collect().await;
        assert_eq!(events.len(), 3);
        let AgentEvent::Done {
            reason: TerminalReason::Error { error },
        } = &events[2]
        else {
            panic!("expected Done(Error), got {:?}", events[2]);
        };
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(
            error.message.contains("broken invariant"),
            "{}",
            error.message
        );
    }
}
