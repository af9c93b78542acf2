//! [`Kernel::open`] and its steps: the session it continues, the
//! endpoint and what hangs on the session's identity, the tool stack, the
//! slash commands, the system prompt, the transcript, the loop's first
//! state and its dependencies.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_core::{AgentDeps, AgentState, ContextManager, TranscriptSink};
use riot_protocol::{ModelCapabilities, PermissionMode, SessionId, SystemPrompt};
use riot_store::{LoadedSession, SessionMeta, SessionStore};

use riot_config::Config;
use riot_extensions::commands::CommandCatalog;
use riot_extensions::memory;

use super::{OpenOptions, ResumeFrom, Session};
use crate::error::KernelError;
use crate::kernel::{Kernel, LoadedConfig};
use crate::prompt::{self, SessionFacts};
use crate::provider::Endpoint;
use crate::stack::{ModelAccess, StackOptions, ToolStack};
use crate::world::SessionModel;

/// What a session's parts share: its endpoint and model, its cost meter,
/// its identity and its checkpoints.
struct Basics {
    provider: Arc<riot_providers::HttpProvider>,
    endpoint: Endpoint,
    capabilities: ModelCapabilities,
    cost: Arc<riot_providers::meter::CostMeter>,
    session_id: SessionId,
    shared_model: SessionModel,
    /// Where the session's file state is persisted.
    state_path: PathBuf,
    rewinds: crate::checkpoints::Rewinds,
}

impl Kernel {
    /// Opens a new or resumed session.
    pub async fn open(&self, options: OpenOptions) -> Result<Session, KernelError> {
        let loaded = self
            .load_config(
                &options.cwd,
                &options.env,
                &options.flags,
                options.trust_project,
            )
            .await?;
        // Settings ignored whatever the trust (a project choosing bypass,
        // unattended or auto), then those waiting for trust.
        let mut notices: Vec<String> = loaded.config.warnings.clone();
        notices.extend(loaded.config.trust_notice());
        let store = self.store();
        let resumed = resume(&store, &options)?;
        let basics = self
            .session_basics(&loaded, &options, resumed.as_ref())
            .await?;

        // Every question of the session goes out on one stream, whose
        // answers come back through the handle.
        let questions = Arc::new(crate::questions::Questions::new(options.asker));
        let mut stack = self
            .session_stack(&loaded, &options, &basics, &questions, resumed.is_some())
            .await?;
        notices.append(&mut stack.notices);
        let commands = self.discover_commands(&loaded, &mut notices).await;

        let now = self.capabilities().clock.now_ms();
        let system = self
            .session_system_prompt(resumed.as_ref(), &options, &stack, now, &mut notices)
            .await;
        let _ = stack.subagents.session_section.set(system.session.clone());
        let worktree = match &resumed {
            None => self.worktrees().of(&options.cwd).await,
            Some(_) => None,
        };
        let sink = self.transcript_sink(
            store,
            resumed.as_ref(),
            &basics.session_id,
            &options.cwd,
            &basics.endpoint,
            &system,
            now,
            worktree,
        )?;

        let resumed_model = resumed.as_ref().map(|r| r.model.clone());
        let state = first_state(
            &loaded.config,
            &options,
            &stack,
            &basics.capabilities,
            basics.session_id.clone(),
            basics.endpoint.model.clone(),
            system,
            resumed,
        );
        basics.cost.record_to(sink.clone());
        sink.count_prompts(basics.rewinds.checkpoints.prompt.clone());
        if resumed_model.is_some_and(|m| m != state.model) {
            sink.model_changed(&state.model);
        }
        notices.extend(mode_notice(state.mode));
        // SessionStart hooks: what they print goes with the first prompt.
        let source = if state.messages.is_empty() {
            "startup"
        } else {
            "resume"
        };
        let start_context = stack.hooks.session_start(source).await;

        let caps = self.capabilities();
        // Shared with the session's other openings, and kept for the next
        // while messages wait (a reloaded page finds them).
        // Counted open before its queue is taken, so a last other opening
        // closing meanwhile cannot drop the queue this one then holds.
        let open = self.mark_open(&basics.session_id, &options.cwd);
        let pending = self.queue_for(&basics.session_id, Arc::clone(&caps.ids));
        // Background tasks' results reach the conversation through it.
        stack.subagents.background.attach(pending.clone());
        let background = crate::background::BackgroundGuard(stack.subagents.background.clone());
        let deps = self
            .agent_deps(&loaded.config, &basics, &stack, &sink, &pending)
            .await;
        Ok(Session {
            state,
            deps,
            notices,
            sandbox: stack.sandbox,
            file_state: stack.file_state,
            state_path: basics.state_path,
            fs: Arc::clone(&caps.fs),
            pending,
            hooks: stack.hooks,
            start_context,
            sink,
            rewinds: basics.rewinds,
            todos: stack.todos,
            skills: stack.skills,
            commands,
            cwd: options.cwd.clone(),
            mode_cell: stack.mode,
            recent_requests: stack.recent_requests,
            restore_model: None,
            next_images: Vec::new(),
            shared_model: basics.shared_model,
            endpoint: basics.provider,
            language_servers: stack.language_servers,
            side_at_open: basics.cost.total().side_usage,
            cost: basics.cost,
            terminals: Arc::clone(&stack.base.terminals),
            questions,
            background,
            _open: open,
        })
    }

    /// The endpoint, the cost meter, the id, the shared model and the
    /// checkpoints of the session `options` open (`resumed`, if any).
    async fn session_basics(
        &self,
        loaded: &LoadedConfig,
        options: &OpenOptions,
        resumed: Option<&LoadedSession>,
    ) -> Result<Basics, KernelError> {
        // Provider and model: a resumed session keeps its own unless a flag
        // or the environment says otherwise.
        let (provider, endpoint) = self.provider(&loaded.config, &options.env, resumed).await?;
        let capabilities =
            riot_protocol::Provider::capabilities(provider.as_ref(), &endpoint.model);
        // What the session costs: a resumed one goes on from its transcript.
        let cost = Arc::new(riot_providers::meter::CostMeter::new(
            provider.clone(),
            crate::cost::starting_cost(resumed),
        ));
        // Identity of the session: resumed ones keep theirs.
        let session_id = resumed.map_or_else(
            || SessionId::generate(self.capabilities().ids.as_ref()),
            |r| r.meta.id.clone(),
        );
        let shared_model = SessionModel::new(endpoint.model.clone());
        let state_path = crate::file_state::file_state_path(self.home(), &session_id);
        // Checkpoints before calls that change files (docs/rewind.md).
        let rewinds = crate::checkpoints::Rewinds::open(
            self,
            loaded,
            &options.cwd,
            &options.env,
            &session_id,
            resumed,
        );
        Ok(Basics {
            provider,
            endpoint,
            capabilities,
            cost,
            session_id,
            shared_model,
            state_path,
            rewinds,
        })
    }

    /// The session's tool stack, its subagents and classifier on the
    /// session's model; a resumed session's starts from its saved file
    /// state.
    async fn session_stack(
        &self,
        loaded: &LoadedConfig,
        options: &OpenOptions,
        basics: &Basics,
        questions: &Arc<crate::questions::Questions>,
        resuming: bool,
    ) -> Result<ToolStack, KernelError> {
        self.tool_stack(
            loaded,
            StackOptions {
                cwd: options.cwd.clone(),
                env: options.env.clone(),
                gate: Arc::clone(questions) as Arc<dyn riot_protocol::PermissionGate>,
                owner: basics.session_id.clone(),
                file_state: resuming.then(|| basics.state_path.clone()),
                model: Ok(ModelAccess {
                    provider: Arc::clone(&basics.provider),
                    model: basics.shared_model.clone(),
                    cost: Some(Arc::clone(&basics.cost)),
                }),
                context_window: basics.capabilities.context_window,
                start_mcp: true,
                session_mcp: options.mcp_servers.clone(),
                checkpoints: Some(Arc::clone(&basics.rewinds.checkpoints)),
            },
        )
        .await
    }

    /// The slash commands of `loaded`'s project and Riot's home; their
    /// notices go to `notices`.
    async fn discover_commands(
        &self,
        loaded: &LoadedConfig,
        notices: &mut Vec<String>,
    ) -> CommandCatalog {
        let (commands, command_notices) = CommandCatalog::discover(
            self.capabilities().fs.as_ref(),
            self.home(),
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(command_notices);
        commands
    }

    /// The session's system prompt: a resumed session's own, else a new
    /// one with the flags' instructions.
    async fn session_system_prompt(
        &self,
        resumed: Option<&LoadedSession>,
        options: &OpenOptions,
        stack: &ToolStack,
        now: u64,
        notices: &mut Vec<String>,
    ) -> SystemPrompt {
        match resumed.and_then(|r| r.meta.system.clone()) {
            Some(system) => system,
            // `--system-prompt` / `--append-system-prompt`, for new
            // sessions only: a resumed one keeps its prompt byte for byte.
            None => prompt::with_instructions(
                self.system_prompt(&options.cwd, &stack.base.scrubbed_env, now, notices)
                    .await,
                options.flags.system_prompt.as_deref(),
                options.flags.append_system_prompt.as_deref(),
            ),
        }
    }

    /// A new session's system prompt: the stable instructions, then the
    /// date, directory, platform, git summary and memory files, read now
    /// and reused byte for byte for the session's life.
    async fn system_prompt(
        &self,
        cwd: &Path,
        scrubbed_env: &[String],
        now: u64,
        notices: &mut Vec<String>,
    ) -> SystemPrompt {
        let caps = self.capabilities();
        let memory = memory::load(caps.fs.as_ref(), self.home(), cwd).await;
        notices.extend(memory.notices.iter().cloned());
        let facts = SessionFacts {
            date: prompt::date_of(now),
            cwd: cwd.display().to_string(),
            platform: std::env::consts::OS.to_owned(),
            git: prompt::git_summary(
                caps.proc.as_ref(),
                cwd,
                &self.worktrees().git_args(cwd).await,
                scrubbed_env,
            )
            .await,
            memory,
        };
        prompt::system_prompt(&facts)
    }

    /// The session's transcript: a resumed one appends to its file; a new
    /// one's file is created with its first prompt, so a session that
    /// never gets a prompt leaves nothing behind.
    #[allow(clippy::too_many_arguments)] // the facts a new transcript's head records
    fn transcript_sink(
        &self,
        store: SessionStore,
        resumed: Option<&LoadedSession>,
        session_id: &SessionId,
        cwd: &Path,
        endpoint: &Endpoint,
        system: &SystemPrompt,
        now: u64,
        worktree: Option<riot_store::SessionWorktree>,
    ) -> Result<Arc<crate::transcript::StoreSink>, KernelError> {
        let clock = Arc::clone(&self.capabilities().clock);
        Ok(Arc::new(match resumed {
            Some(r) => crate::transcript::StoreSink::open(store.append_to(&r.meta.id)?, clock),
            None => {
                let mut meta = SessionMeta::new(
                    session_id.clone(),
                    cwd.to_path_buf(),
                    endpoint.model.clone(),
                    now,
                );
                meta.system = Some(system.clone());
                meta.provider = Some(endpoint.kind.name().to_owned());
                meta.base_url = Some(endpoint.base_url.clone());
                meta.worktree = worktree;
                crate::transcript::StoreSink::pending(store, meta, clock)
            }
        }))
    }

    /// What the session's loop runs on: the provider (describing images
    /// for a model that cannot see), the stack's tools and hooks,
    /// compaction, the transcript and the queue.
    async fn agent_deps(
        &self,
        config: &Config,
        basics: &Basics,
        stack: &ToolStack,
        sink: &Arc<crate::transcript::StoreSink>,
        pending: &crate::queue::PendingMessages,
    ) -> AgentDeps {
        let caps = self.capabilities();
        let provider = &basics.provider;
        let context = Arc::new(ContextManager::new(
            // Summaries are side requests.
            Arc::new(riot_providers::meter::MeteredProvider::new(
                provider.clone(),
                Arc::clone(&basics.cost),
            )),
            Arc::new(crate::working_set::RecentFiles {
                fs: Arc::clone(&caps.fs),
                files: Arc::clone(&stack.file_state),
                todos: Some(stack.todos.clone()),
            }),
        ));
        // A model that cannot see has images described by the small model
        // when that one can (side requests, like the summaries).
        let describer = config
            .small_model
            .as_ref()
            .map(|name| crate::vision::Describer {
                provider: Arc::new(riot_providers::meter::MeteredProvider::new(
                    Arc::new(provider.for_background()),
                    Arc::clone(&basics.cost),
                )),
                model: name.value.clone(),
            });
        let saved_descriptions = self
            .store()
            .files_of(&basics.session_id)
            .ok()
            .map(|dir| crate::vision::SavedDescriptions::in_dir(Arc::clone(&caps.fs), &dir));
        AgentDeps {
            provider: crate::vision::DescribingProvider::wrap(
                provider.clone(),
                describer,
                saved_descriptions,
            )
            .await,
            tools: stack.runner.clone(),
            compactor: Arc::new(riot_extensions::hooks::HookedCompactor {
                inner: context,
                hooks: stack.hooks.clone(),
            }),
            transcript: sink.clone(),
            hooks: stack.hooks.clone(),
            queue: Arc::new(pending.clone()),
            clock: Arc::clone(&caps.clock),
            ids: Arc::clone(&caps.ids),
        }
    }
}

/// The notice for a mode in which Riot will not ask before most actions;
/// `None` for the others.
fn mode_notice(mode: PermissionMode) -> Option<String> {
    (mode == PermissionMode::Bypass || mode == PermissionMode::Unattended)
        .then(|| format!("Permission mode is {mode}: Riot will not ask before most actions."))
}

/// The session `options` continue, if any: resumed sessions keep their
/// id, history and system prompt.
fn resume(
    store: &SessionStore,
    options: &OpenOptions,
) -> Result<Option<LoadedSession>, KernelError> {
    let id = match &options.resume {
        None => return Ok(None),
        Some(ResumeFrom::Id(id)) => id.clone(),
        Some(ResumeFrom::Latest) => {
            store
                .latest_in(&options.cwd)?
                .ok_or_else(|| {
                    KernelError::Input(format!(
                        "no earlier session in {}; run without --continue to start one",
                        options.cwd.display()
                    ))
                })?
                .id
        }
    };
    Ok(Some(store.load(&id)?))
}

/// The loop's state before the first turn: the stack's tools, the
/// configured mode and fallback, the model's output limit, and a resumed
/// session's history.
#[allow(clippy::too_many_arguments)] // one state from the parts open gathered
fn first_state(
    config: &Config,
    options: &OpenOptions,
    stack: &ToolStack,
    capabilities: &ModelCapabilities,
    session_id: SessionId,
    model: String,
    system: SystemPrompt,
    resumed: Option<LoadedSession>,
) -> AgentState {
    let mut state = AgentState::new(session_id.clone(), model, system);
    state.tools = riot_protocol::ToolRunner::specs(stack.runner.as_ref());
    state.server_tools = stack.server_tools.clone();
    state.mode = config.mode();
    state.fallback_model = config.fallback_model.as_ref().map(|f| f.value.clone());
    state.cache_key = Some(session_id.to_string());
    state.max_tokens = riot_core::context::request_max_tokens(capabilities);
    if let Some(n) = options.max_turns {
        state.max_turns = n;
    }
    if let Some(r) = resumed {
        state.messages = r.messages;
    }
    state
}
