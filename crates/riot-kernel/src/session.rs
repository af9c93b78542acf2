//! Session assembly: configuration, credentials, provider, tools,
//! permission chain, system prompt and transcript joined into a
//! [`Session`] whose turns the faces run (docs/design.md §2, §11–§13).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use std::panic::AssertUnwindSafe;

use futures::{Stream, StreamExt};
use riot_core::{AgentDeps, AgentState, ContextManager, TranscriptSink};
use riot_protocol::{
    AgentError, AgentEvent, CancelScope, Clock, ErrorKind, FileSystem, IdGen, Message, MessageId,
    PermissionGate, PermissionMode, PermissionRule, ProcessRunner, RulePattern, SessionId,
    TerminalReason, ToolEnv, ToolRunner,
};
use riot_store::{SessionMeta, SessionStore};
use riot_tools::SchedulerConfig;

use crate::config::{self, Config, ConfigError, EnvLayer, FlagLayer, Layer, SettingsFile};
use crate::memory;
use crate::prompt::{self, SessionFacts};
use crate::trust::Trust;

/// The world the kernel works in, injected by the face.
#[derive(Debug, Clone)]
pub struct Capabilities {
    pub fs: Arc<dyn FileSystem>,
    pub proc: Arc<dyn ProcessRunner>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    /// Seeds the retry jitter (a well-mixed random value from the face).
    pub seed: u64,
}

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

/// The session's current model, shared with what asks a model on its
/// behalf (subagents, auto mode's classifier), so `/model` reaches them.
#[derive(Debug, Clone)]
pub struct SessionModel(Arc<Mutex<String>>);

impl SessionModel {
    /// A cell holding `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self(Arc::new(Mutex::new(model.into())))
    }

    /// The model now.
    pub fn get(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Switches it.
    pub fn set(&self, model: &str) {
        model.clone_into(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// One MCP server of a kernel, for faces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerInfo {
    pub project: PathBuf,
    pub name: String,
    /// `user`, `project` or `session`.
    pub scope: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    pub status: riot_mcp::ServerStatus,
}

/// A kernel error, classified for exit codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// Bad input or configuration: exit 2 with this one-line fix.
    #[error("{0}")]
    Usage(String),
    /// Something failed at run time: exit 1.
    #[error("{0}")]
    Failed(String),
    /// A prompt came while a turn was running in the session.
    #[error("a prompt is already running in this session; cancel it or wait for its end")]
    Busy,
    /// The session was closed.
    #[error("the session is closed")]
    Closed,
}

impl From<ConfigError> for KernelError {
    fn from(e: ConfigError) -> Self {
        KernelError::Usage(e.to_string())
    }
}

/// Loaded configuration and what it was loaded from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub project_root: PathBuf,
    pub trusted: bool,
    /// Every layer's hooks (a project's only when trusted).
    pub hooks: crate::hooks::HookConfig,
}

/// The kernel: one per process, shared by its sessions.
#[derive(Debug, Clone)]
pub struct Kernel {
    caps: Capabilities,
    home: PathBuf,
    /// One MCP hub per project root, shared by its sessions.
    mcp: Arc<Mutex<BTreeMap<PathBuf, Arc<riot_mcp::McpHub>>>>,
    /// How many times each session is open in this process (several
    /// clients of one `riot serve` may open the same one).
    open: Arc<Mutex<BTreeMap<SessionId, usize>>>,
}

/// Counts a session as open while it lives.
#[derive(Debug)]
struct OpenMark {
    id: SessionId,
    open: Arc<Mutex<BTreeMap<SessionId, usize>>>,
}

impl Drop for OpenMark {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.id);
            }
        }
    }
}

impl Kernel {
    /// A kernel whose configuration and sessions live in `home`.
    pub fn new(caps: Capabilities, home: PathBuf) -> Self {
        Self {
            caps,
            home,
            mcp: Arc::default(),
            open: Arc::default(),
        }
    }

    /// Whether a session is open in this process (by any client).
    pub fn is_open(&self, id: &SessionId) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
    }

    fn mark_open(&self, id: &SessionId) -> OpenMark {
        *self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id.clone())
            .or_default() += 1;
        OpenMark {
            id: id.clone(),
            open: Arc::clone(&self.open),
        }
    }

    /// The injected capabilities.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// Riot's home directory.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The model key variables removed from every tool environment: both
    /// defaults and the configured one (docs/design.md §6.6).
    pub fn scrubbed_env(&self, config: &Config) -> Vec<String> {
        let mut scrubbed = vec!["ANTHROPIC_API_KEY".to_owned(), "OPENAI_API_KEY".to_owned()];
        if let Some(var) = &config.api_key_env
            && !scrubbed.contains(&var.value)
        {
            scrubbed.push(var.value.clone());
        }
        scrubbed
    }

    /// The transcript store.
    pub fn store(&self) -> SessionStore {
        SessionStore::new(self.home.join("sessions"))
    }

    /// Reads and layers the configuration for a project directory.
    pub async fn load_config(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        flags: &FlagLayer,
        trust_project: bool,
    ) -> Result<LoadedConfig, KernelError> {
        let fs = self.caps.fs.as_ref();
        let project_root = memory::project_root(fs, cwd).await;
        let trust = Trust::new(&self.home);
        if trust_project {
            trust.trust(fs, &project_root).await.map_err(|e| {
                KernelError::Failed(format!(
                    "could not record trust in {}: {e}",
                    self.home.join("trusted.json").display()
                ))
            })?;
        }
        let trusted = trust.is_trusted(fs, &project_root).await;
        let mut files: Vec<SettingsFile> = Vec::new();
        for (path, layer) in [
            (self.home.join("settings.json"), Layer::User),
            (project_root.join(".riot/settings.json"), Layer::Project),
            (project_root.join(".riot/settings.local.json"), Layer::Local),
        ] {
            match fs.read(&path).await {
                Ok(bytes) => {
                    let text = String::from_utf8(bytes).map_err(|_| {
                        KernelError::Usage(format!("{}: not UTF-8 text", path.display()))
                    })?;
                    files.push(config::parse_settings(&path, layer, &text)?);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(KernelError::Usage(format!(
                        "{}: cannot read: {e}",
                        path.display()
                    )));
                }
            }
        }
        let env_layer = EnvLayer { vars: env.clone() };
        let mut config = config::layer(&files, &env_layer, flags, trusted)?;
        let hooks = crate::hooks::load(
            fs,
            &self.home,
            &project_root,
            &files,
            trusted,
            &mut config.ignored_untrusted,
        )
        .await?;
        Ok(LoadedConfig {
            config,
            project_root,
            trusted,
            hooks,
        })
    }

    /// The permission chain for a project: configured rules, the person's
    /// home for `~`, Riot's home for its own protected files.
    pub(crate) fn policy(
        &self,
        config: &Config,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> riot_permissions::Policy {
        let rules: Vec<PermissionRule> = config
            .rules
            .iter()
            .filter_map(|r| {
                RulePattern::parse(&r.rule)
                    .ok()
                    .map(|pattern| PermissionRule {
                        pattern,
                        behavior: r.behavior,
                        source: r.source,
                    })
            })
            .collect();
        riot_permissions::Policy::new(cwd.to_path_buf(), user_home(env))
            .with_rules(rules)
            .with_file_system(Arc::clone(&self.caps.fs))
            .with_riot_home(self.home.clone())
    }

    /// The MCP hub of a project, started at its first session and shared
    /// by the later ones with the same servers (docs/design.md §6.7). When a
    /// session's servers differ — the configuration changed, or the
    /// project was trusted since — it gets a new hub, which later sessions
    /// share; sessions on the old one keep it until they end.
    fn mcp_hub(
        &self,
        project_root: &Path,
        servers: Vec<riot_mcp::ServerConfig>,
        env: &BTreeMap<String, String>,
        scrubbed: &[String],
    ) -> Result<Arc<riot_mcp::McpHub>, KernelError> {
        let mut hubs = self.mcp.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(project_root)
            && hub.configs().into_iter().eq(servers.iter())
        {
            return Ok(Arc::clone(hub));
        }
        let hub = riot_mcp::McpHub::new(servers, self.mcp_options(project_root, env, scrubbed));
        hub.start()
            .map_err(|e| KernelError::Failed(e.to_string()))?;
        hubs.insert(project_root.to_path_buf(), Arc::clone(&hub));
        Ok(hub)
    }

    fn mcp_options(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        scrubbed: &[String],
    ) -> riot_mcp::HubOptions {
        let mut options = riot_mcp::HubOptions::new(Arc::clone(&self.caps.clock), cwd)
            .with_env(env.clone())
            .with_env_remove(scrubbed.to_vec());
        if let Some(ms) = env
            .get("RIOT_MCP_STARTUP_TIMEOUT_MS")
            .and_then(|v| v.parse().ok())
        {
            options = options.with_startup_timeout_ms(ms);
        }
        options
    }

    /// The MCP servers of every project this kernel has opened: project
    /// root, server, how it is reached, and its status.
    pub fn mcp_servers(&self) -> Vec<McpServerInfo> {
        let hubs = self.mcp.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (project, hub) in hubs.iter() {
            let statuses = hub.statuses();
            for config in hub.configs() {
                out.push(McpServerInfo {
                    project: project.clone(),
                    name: config.name.clone(),
                    scope: config.scope.to_string(),
                    transport: config.transport.kind(),
                    status: statuses
                        .get(&config.name)
                        .cloned()
                        .unwrap_or(riot_mcp::ServerStatus::Connecting),
                });
            }
        }
        out
    }

    /// Restarts the MCP server `name` of `project` (of any project when
    /// `None` and the name is unique).
    pub async fn restart_mcp_server(
        &self,
        project: Option<&Path>,
        name: &str,
    ) -> Result<(), KernelError> {
        let hub = {
            let hubs = self.mcp.lock().unwrap_or_else(|e| e.into_inner());
            let mut found: Vec<Arc<riot_mcp::McpHub>> = hubs
                .iter()
                .filter(|(p, h)| {
                    project.is_none_or(|want| want == p.as_path()) && h.status(name).is_some()
                })
                .map(|(_, h)| Arc::clone(h))
                .collect();
            match found.len() {
                1 => found.remove(0),
                0 => {
                    return Err(KernelError::Usage(format!(
                        "no MCP server `{name}` from mcp.json or .mcp.json is running (servers an editor handed over restart with their session); `_riot/mcp_servers` lists them"
                    )));
                }
                _ => {
                    return Err(KernelError::Usage(format!(
                        "several projects have an MCP server `{name}`; name the project"
                    )));
                }
            }
        };
        hub.restart(name)
            .await
            .map_err(|e| KernelError::Usage(e.to_string()))
    }

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
        let config = &loaded.config;

        // Which session: resumed ones keep their id, history and prompt.
        let store = self.store();
        let resumed = match &options.resume {
            None => None,
            Some(ResumeFrom::Id(id)) => Some(
                store
                    .load(id)
                    .map_err(|e| KernelError::Usage(e.to_string()))?,
            ),
            Some(ResumeFrom::Latest) => {
                let latest = store
                    .latest_in(&options.cwd)
                    .map_err(|e| KernelError::Failed(e.to_string()))?
                    .ok_or_else(|| {
                        KernelError::Usage(format!(
                            "no earlier session in {}; run without --continue to start one",
                            options.cwd.display()
                        ))
                    })?;
                Some(
                    store
                        .load(&latest.id)
                        .map_err(|e| KernelError::Usage(e.to_string()))?,
                )
            }
        };

        // Provider and model: a resumed session keeps its own unless a flag
        // or the environment says otherwise.
        let (provider, endpoint) = self
            .provider(config, &options.env, resumed.as_ref())
            .await?;
        let model = endpoint.model.clone();
        let capabilities = riot_protocol::Provider::capabilities(provider.as_ref(), &model);

        // Identity of the session.
        let session_id = resumed.as_ref().map_or_else(
            || SessionId::generate(self.caps.ids.as_ref()),
            |r| r.meta.id.clone(),
        );

        // Tools and the permission chain.
        let scrubbed = self.scrubbed_env(config);
        let mut tool_env = ToolEnv::new(
            options.cwd.clone(),
            self.home.join("spill").join(session_id.as_str()),
            Arc::clone(&self.caps.fs),
            Arc::clone(&self.caps.proc),
            Arc::clone(&self.caps.clock),
            Arc::clone(&self.caps.ids),
        );
        tool_env.scrubbed_env = scrubbed.clone();
        tool_env.home = user_home(&options.env);
        let state_path = crate::tools::file_state_path(&self.home, &session_id);
        if resumed.is_some() {
            crate::tools::load_file_state(self.caps.fs.as_ref(), &state_path, &tool_env.file_state)
                .await;
        }
        let file_state = Arc::clone(&tool_env.file_state);
        // Auto mode's classifier: a background request on the session's
        // provider and model (docs/design.md §9.5); the chain calls it only
        // in auto mode.
        let recent_requests = crate::classifier::RecentRequests::new();
        let shared_model = SessionModel::new(model.clone());
        let classifier = Arc::new(
            crate::classifier::ModelClassifier::new(
                Arc::new(provider.for_background()),
                model.clone(),
                options.cwd.clone(),
                recent_requests.clone(),
                Arc::clone(&self.caps.clock),
            )
            .following(shared_model.clone()),
        );
        let policy = self
            .policy(config, &options.cwd, &options.env)
            .with_classifier(classifier.clone());
        let todos = crate::todo::TodoList::default();
        let skills = crate::skills::SkillCatalog::discover(
            self.caps.fs.as_ref(),
            &self.home,
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(skills.notices);
        let skills = skills.catalog;
        let (commands, command_notices) = crate::commands::CommandCatalog::discover(
            self.caps.fs.as_ref(),
            &self.home,
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(command_notices);
        let mode_cell = crate::plan::ModeCell::new(config.mode());
        let (agents, agent_notices) = crate::task::AgentCatalog::discover(
            self.caps.fs.as_ref(),
            &self.home,
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(agent_notices);
        let hooks = Arc::new(crate::hooks::HookRunner::new(
            loaded.hooks.clone(),
            Arc::clone(&self.caps.proc),
            options.cwd.clone(),
            scrubbed.clone(),
            session_id.to_string(),
        ));
        // MCP servers start in the background; their tools join when ready.
        let mcp = riot_mcp::config::load(
            self.caps.fs.as_ref(),
            &self.home,
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(mcp.trust_notice());
        notices.extend(mcp.errors.iter().map(|e| format!("MCP: {e}")));
        notices.extend(mcp.warnings.iter().map(|w| format!("MCP: {w}")));
        let mut hubs = Vec::new();
        if mcp.servers.iter().any(|s| !s.disabled) {
            hubs.push(self.mcp_hub(&loaded.project_root, mcp.servers, &options.env, &scrubbed)?);
        }
        if !options.mcp_servers.is_empty() {
            let hub = riot_mcp::McpHub::new(
                options.mcp_servers.clone(),
                self.mcp_options(&options.cwd, &options.env, &scrubbed),
            );
            hub.start()
                .map_err(|e| KernelError::Failed(e.to_string()))?;
            hubs.push(hub);
        }
        let policy: Arc<dyn riot_protocol::PermissionPolicy> = Arc::new(policy);
        let subagents = Arc::new(crate::task::Subagents {
            catalog: agents,
            provider: provider.clone(),
            model: shared_model.clone(),
            caps: self.caps.clone(),
            home: self.home.clone(),
            cwd: options.cwd.clone(),
            scrubbed_env: scrubbed.clone(),
            user_home: user_home(&options.env),
            policy: Arc::clone(&policy),
            gate: options.gate.clone(),
            hooks: hooks.clone(),
            skills: skills.clone(),
            hubs: hubs.clone(),
            parent: session_id.clone(),
            session_section: std::sync::OnceLock::new(),
        });
        let runner = Arc::new(crate::runner::SessionRunner::new(
            session_tools(
                &todos,
                &skills,
                &options.gate,
                &mode_cell,
                Some(Arc::clone(&subagents)),
            ),
            crate::runner::SchedulerParts {
                env: Arc::new(tool_env),
                policy,
                gate: options.gate.clone(),
                hooks: hooks.clone(),
                config: SchedulerConfig::default(),
            },
            hubs,
            mode_cell.clone(),
            Some(todos.clone()),
            options
                .env
                .get("RIOT_TOOL_SEARCH_CHARS")
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| {
                    crate::runner::defer_threshold_chars(capabilities.context_window)
                }),
        ));

        // The system prompt: snapshotted at start, reused byte for byte.
        let now = self.caps.clock.now_ms();
        let system = match resumed.as_ref().and_then(|r| r.meta.system.clone()) {
            Some(system) => system,
            None => {
                let memory = memory::load(self.caps.fs.as_ref(), &self.home, &options.cwd).await;
                notices.extend(memory.notices.iter().cloned());
                let facts = SessionFacts {
                    date: prompt::date_of(now),
                    cwd: options.cwd.display().to_string(),
                    platform: std::env::consts::OS.to_owned(),
                    git: prompt::git_summary(self.caps.proc.as_ref(), &options.cwd, &scrubbed)
                        .await,
                    memory,
                };
                prompt::system_prompt(&facts)
            }
        };
        let _ = subagents.session_section.set(system.session.clone());

        // The transcript: a new session's file is created with its first
        // prompt, so one that never gets a prompt leaves nothing behind.
        let clock = Arc::clone(&self.caps.clock);
        let sink = Arc::new(match &resumed {
            Some(r) => crate::transcript::StoreSink::open(
                store
                    .append_to(&r.meta.id)
                    .map_err(|e| KernelError::Failed(e.to_string()))?,
                clock,
            ),
            None => {
                let mut meta =
                    SessionMeta::new(session_id.clone(), options.cwd.clone(), model.clone(), now);
                meta.system = Some(system.clone());
                meta.provider = Some(endpoint.kind.name().to_owned());
                meta.base_url = Some(endpoint.base_url.clone());
                crate::transcript::StoreSink::pending(store, meta, clock)
            }
        });
        if resumed.as_ref().is_some_and(|r| r.model != model) {
            sink.model_changed(&model);
        }

        let mut state = AgentState::new(session_id.clone(), model, system);
        state.tools = runner.specs();
        state.mode = config.mode();
        state.fallback_model = config.fallback_model.as_ref().map(|f| f.value.clone());
        state.cache_key = Some(session_id.to_string());
        state.max_tokens = capabilities.max_output_tokens.min(DEFAULT_MAX_TOKENS);
        if let Some(n) = options.max_turns {
            state.max_turns = n;
        }
        if let Some(r) = resumed {
            state.messages = r.messages;
        }
        if state.mode == PermissionMode::Bypass || state.mode == PermissionMode::Unattended {
            notices.push(format!(
                "Permission mode is {}: Riot will not ask before most actions.",
                state.mode
            ));
        }

        // SessionStart hooks: what they print goes with the first prompt.
        let source = if state.messages.is_empty() {
            "startup"
        } else {
            "resume"
        };
        let start_context = hooks.session_start(source).await;

        let pending = crate::queue::PendingMessages::new(Arc::clone(&self.caps.ids));
        let context = Arc::new(ContextManager::new(
            provider.clone(),
            Arc::new(crate::working_set::RecentFiles {
                fs: Arc::clone(&self.caps.fs),
                files: Arc::clone(&file_state),
                todos: Some(todos.clone()),
            }),
        ));
        let deps = AgentDeps {
            provider,
            tools: runner,
            compactor: Arc::new(crate::hooks::HookedCompactor {
                inner: context.clone(),
                hooks: hooks.clone(),
            }),
            transcript: sink.clone(),
            hooks: hooks.clone(),
            queue: Arc::new(pending.clone()),
            clock: Arc::clone(&self.caps.clock),
            ids: Arc::clone(&self.caps.ids),
        };
        Ok(Session {
            state,
            deps,
            context,
            notices,
            file_state,
            state_path,
            fs: Arc::clone(&self.caps.fs),
            pending,
            hooks,
            start_context,
            sink,
            todos,
            skills,
            commands,
            cwd: options.cwd.clone(),
            mode_cell,
            recent_requests,
            classifier,
            restore_model: None,
            shared_model,
            _open: self.mark_open(&session_id),
        })
    }
}

/// The person's home directory, for `~` in rules and tool paths.
pub(crate) fn user_home(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The tools of a session in the order sent to the model: the built-in
/// list (append-only), then the session-level tools the kernel adds
/// (docs/design.md §6.7).
pub fn session_tools(
    todos: &crate::todo::TodoList,
    skills: &crate::skills::SkillCatalog,
    gate: &Arc<dyn PermissionGate>,
    mode: &crate::plan::ModeCell,
    subagents: Option<Arc<crate::task::Subagents>>,
) -> Vec<Arc<dyn riot_protocol::DynTool>> {
    let mut tools = riot_tools::builtin();
    if let Some(subagents) = subagents {
        tools.push(Arc::new(crate::task::Task { subagents }));
    }
    tools.push(Arc::new(crate::todo::TodoWrite {
        list: todos.clone(),
    }));
    tools.push(Arc::new(crate::skills::SkillTool {
        catalog: skills.clone(),
    }));
    tools.push(Arc::new(crate::ask::AskUser { gate: gate.clone() }));
    tools.push(Arc::new(crate::plan::ExitPlanMode {
        gate: gate.clone(),
        mode: mode.clone(),
    }));
    tools
}

/// Output-token limit of a normal request; the loop escalates to the
/// model's maximum when a reply hits it.
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// An open session.
#[derive(Debug)]
pub struct Session {
    state: AgentState,
    deps: AgentDeps,
    context: Arc<ContextManager>,
    notices: Vec<String>,
    file_state: Arc<riot_protocol::FileStateStore>,
    state_path: PathBuf,
    fs: Arc<dyn FileSystem>,
    pending: crate::queue::PendingMessages,
    hooks: Arc<crate::hooks::HookRunner>,
    /// SessionStart hooks' context, sent with the next prompt.
    start_context: Vec<String>,
    sink: Arc<crate::transcript::StoreSink>,
    todos: crate::todo::TodoList,
    skills: crate::skills::SkillCatalog,
    commands: crate::commands::CommandCatalog,
    cwd: PathBuf,
    /// The mode tool batches run in; `ExitPlanMode` changes it mid-turn.
    mode_cell: crate::plan::ModeCell,
    /// What the person asked lately, for auto mode's classifier.
    recent_requests: crate::classifier::RecentRequests,
    classifier: Arc<crate::classifier::ModelClassifier>,
    /// The session's model while a command's own model runs a turn.
    restore_model: Option<String>,
    /// The model, as subagents and the classifier see it.
    shared_model: SessionModel,
    /// Counts this session as open in the kernel until dropped.
    _open: OpenMark,
}

impl Session {
    /// The session id.
    pub fn id(&self) -> &SessionId {
        &self.state.session_id
    }

    /// One-line notices for the person (ignored project settings, memory
    /// files cut, bypass mode).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The history so far.
    pub fn messages(&self) -> &[Message] {
        &self.state.messages
    }

    /// The model in use.
    pub fn model(&self) -> &str {
        &self.state.model
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
    pub fn commands(&self) -> &[crate::commands::Command] {
        self.commands.commands()
    }

    /// The skills the model can load.
    pub fn skills(&self) -> &crate::skills::SkillCatalog {
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
        self.state.max_tokens = capabilities.max_output_tokens.min(DEFAULT_MAX_TOKENS);
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
        riot_core::compact_now(&mut self.state, &self.deps, focus)
            .await
            .map_err(|e| KernelError::Failed(e.to_string()))
    }

    /// Persists what this session has read, so a resumed session and
    /// `riot tools call --session ID` keep read-before-write knowledge.
    pub async fn save_file_state(&self) -> std::io::Result<()> {
        crate::tools::save_file_state(self.fs.as_ref(), &self.state_path, &self.file_state).await
    }

    /// Usage of side requests (compaction summaries, auto mode's
    /// classifier) in this process.
    pub fn side_usage(&self) -> riot_protocol::Usage {
        let mut usage = self.context.side_usage();
        usage.add(&self.classifier.side_usage());
        usage
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
            if let Some(invocation) = crate::commands::parse_invocation(&prompt) {
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
                    Some(command) if command.origin == crate::extension_files::Origin::Builtin => {
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
                crate::hooks::PromptVerdict::Block { reason } => {
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
                crate::hooks::PromptVerdict::Context(context) => {
                    self.recent_requests.push(&text);
                    extra.extend(context);
                }
            }
            let attachments =
                crate::commands::attach_mentions(self.fs.as_ref(), &self.cwd, &text).await;
            let mut message =
                Message::user_text(MessageId::generate(self.deps.ids.as_ref()), text);
            if let Message::User(user) = &mut message {
                user.content.extend(attachments);
                user.content
                    .extend(extra.into_iter().map(|text| riot_protocol::UserBlock::Text { text }));
            }
            if let Some(model) = &model_for_turn {
                // Restored after the turn, or — if the turn panicked — at
                // the start of the next one.
                self.restore_model = Some(self.state.model.clone());
                self.set_model(model);
            }
            {
                let run = riot_core::run_agent(&mut self.state, Some(message), &self.deps, cancel);
                let mut run = std::pin::pin!(run);
                while let Some(event) = run.next().await {
                    yield event;
                }
            }
            if let Some(previous) = self.restore_model.take() {
                self.set_model(&previous);
            }
            // A plan approved during the turn chose the mode from now on.
            let mode = self.mode_cell.get();
            if mode != self.state.mode {
                self.set_mode(mode);
            }
        };
        panic_to_done(inner)
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
        command: &crate::commands::Command,
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
        let (_, body) = crate::frontmatter::parse::<serde_json::Value>(&text)
            .map_err(|e| format!("/{}: {}: {e}", command.name, file.display()))?;
        Ok(crate::commands::expand(body, args))
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
