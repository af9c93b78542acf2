//! The one tool stack (docs/design.md §6.3, §6.7, §9): the tool
//! environment, the permission chain with auto mode's classifier, the
//! hooks, the MCP hubs, the session-level tools and the scheduler
//! ([`SessionRunner`]), assembled in one place for every user — a session
//! ([`Kernel::open`]), its subagents (the Task tool, through the
//! [`StackBase`] kept here), and the inspection commands (`riot tools
//! list|call`, `riot permissions check`, in `crate::tools`). So what
//! `riot tools list` prints is what a session in that directory declares,
//! and `riot tools call` runs the hooks a session runs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use riot_mcp::McpHub;
use riot_protocol::{
    DynTool, FileStateStore, PermissionGate, PermissionPolicy, SessionId, ToolEnv,
};
use riot_providers::HttpProvider;
use riot_tools::SchedulerConfig;

use crate::classifier::{ModelClassifier, RecentRequests};
use crate::error::KernelError;
use crate::kernel::{Kernel, LoadedConfig};
use crate::plan::ModeCell;
use crate::runner::{McpSelection, SessionRunner, StackBase};
use crate::task::{AgentCatalog, SubagentModel, Subagents};
use crate::world::{Capabilities, SessionModel, user_home};
use riot_config::child_env::SettingsEnv;
use riot_extensions::hooks::HookRunner;
use riot_extensions::skills::SkillCatalog;
use riot_tools::tools::todo_write::TodoList;

/// The model a stack's classifier and subagents ask.
#[derive(Debug, Clone)]
pub struct ModelAccess {
    pub provider: Arc<HttpProvider>,
    /// The session's model, which `/model` switches.
    pub model: SessionModel,
    /// Counts the classifier's and subagents' requests as the session's
    /// side requests (`None` for the inspection commands).
    pub cost: Option<Arc<riot_providers::meter::CostMeter>>,
}

impl ModelAccess {
    /// `provider`, its requests counted by the session's cost meter.
    fn metered(
        &self,
        provider: Arc<dyn riot_protocol::Provider>,
    ) -> Arc<dyn riot_protocol::Provider> {
        match &self.cost {
            Some(meter) => Arc::new(riot_providers::meter::MeteredProvider::new(
                provider,
                Arc::clone(meter),
            )),
            None => provider,
        }
    }
}

/// What a tool stack is built for.
#[derive(Debug, Clone)]
pub struct StackOptions {
    pub cwd: PathBuf,
    /// The process environment.
    pub env: BTreeMap<String, String>,
    /// Who answers permission questions.
    pub gate: Arc<dyn PermissionGate>,
    /// Whose tools these are: the spill directory, the session id hooks
    /// are told, the parent of subagents' transcripts.
    pub owner: SessionId,
    /// A persisted file state to start from (a resumed session, `riot
    /// tools call --session`).
    pub file_state: Option<PathBuf>,
    /// `Err`: why there is no model (an inspection command without a
    /// configured endpoint): no classifier, and Task calls fail saying so.
    pub model: Result<ModelAccess, crate::error::NoModel>,
    /// The model's context window: MCP declarations over a tenth of it
    /// are deferred behind ToolSearch.
    pub context_window: u64,
    /// Whether to start the configured MCP servers.
    pub start_mcp: bool,
    /// MCP servers for this session only (an ACP client's `mcpServers`).
    pub session_mcp: Vec<riot_mcp::ServerConfig>,
    /// Checkpoints before calls that change files (a session's; none for
    /// the inspection commands).
    pub checkpoints: Option<Arc<crate::checkpoints::Checkpointer>>,
}

/// A session's tools, ready to run.
#[derive(Debug)]
pub struct ToolStack {
    /// The scheduler the loop talks to.
    pub runner: Arc<SessionRunner>,
    /// What every runner of the session shares (subagents' too).
    pub base: StackBase,
    pub file_state: Arc<FileStateStore>,
    /// The mode tool batches run in; `ExitPlanMode` sets it.
    pub mode: ModeCell,
    pub todos: TodoList,
    pub skills: SkillCatalog,
    pub hooks: Arc<HookRunner>,
    /// What the person asked lately, for the classifier.
    pub recent_requests: RecentRequests,
    /// Auto mode's classifier; `None` without a model.
    pub classifier: Option<Arc<ModelClassifier>>,
    pub subagents: Arc<Subagents>,
    /// Notices for the person: skills, agents, MCP configuration.
    pub notices: Vec<String>,
    /// The OS sandbox as faces show it ([`SessionSandbox::label`]).
    ///
    /// [`SessionSandbox::label`]: crate::sandbox::SessionSandbox::label
    pub sandbox: String,
    /// How long an MCP server may take to start.
    pub mcp_startup_timeout_ms: u64,
    /// The session's language servers (docs/diagnostics.md); `None` when
    /// the face gave the kernel none or the settings turn them off.
    pub language_servers: Option<Arc<dyn riot_protocol::LanguageServers>>,
    /// Tools the provider runs itself ([`crate::web::provider_search`]).
    pub server_tools: Vec<riot_protocol::ServerTool>,
}

impl ToolStack {
    /// Waits until every MCP server has settled (ready or failed), at
    /// most a little beyond the startup timeout.
    pub async fn mcp_settled(&self) {
        for hub in &self.base.hubs {
            hub.wait_settled(self.mcp_startup_timeout_ms + 1_000).await;
        }
    }

    /// Stops the MCP servers (a one-shot command is done with them).
    pub async fn shutdown_mcp(&self) {
        for hub in &self.base.hubs {
            hub.shutdown().await;
        }
    }
}

/// The tools of a session in the order sent to the model: the built-in
/// list (append-only; without Terminal when `env` has no terminals), then the session-level tools the kernel adds
/// (docs/design.md §6.7): Task, TodoWrite, Skill, AskUser, ExitPlanMode,
/// then the web tools (`crate::web::web_tools`: WebFetch with a network),
/// then TaskOutput (background tasks, `crate::background`).
pub fn session_tools(
    env: &ToolEnv,
    todos: &TodoList,
    skills: &SkillCatalog,
    gate: &Arc<dyn PermissionGate>,
    mode: &ModeCell,
    subagents: Arc<Subagents>,
    web: Vec<Arc<dyn DynTool>>,
) -> Vec<Arc<dyn DynTool>> {
    let mut tools = riot_tools::declared(env);
    let background = subagents.background.clone();
    tools.push(Arc::new(crate::task::Task { subagents }));
    tools.push(Arc::new(riot_tools::tools::todo_write::TodoWrite {
        list: todos.clone(),
    }));
    tools.push(Arc::new(riot_extensions::skills::SkillTool {
        catalog: skills.clone(),
    }));
    tools.push(Arc::new(crate::ask::AskUser { gate: gate.clone() }));
    tools.push(Arc::new(crate::plan::ExitPlanMode {
        gate: gate.clone(),
        mode: mode.clone(),
    }));
    tools.extend(web);
    tools.push(Arc::new(crate::background::TaskOutput {
        tasks: background,
    }));
    tools
}

impl Kernel {
    /// Builds the tool stack of a session in `loaded`'s project.
    pub async fn tool_stack(
        &self,
        loaded: &LoadedConfig,
        options: StackOptions,
    ) -> Result<ToolStack, KernelError> {
        let config = &loaded.config;
        let caps = &self.stack_caps(config, &options);
        let mut notices = Vec::new();
        let scrubbed = self.scrubbed_env(config);

        let recent_requests = RecentRequests::new();
        let classifier = stack_classifier(&options, &recent_requests, caps);
        let confinement =
            self.confinement(config, &options, caps, classifier.as_ref(), &mut notices);
        let (skills, agents) = self.stack_catalogs(loaded, &options, &mut notices).await;
        let hooks = Arc::new(HookRunner::new(
            loaded.hooks.clone(),
            Arc::clone(&caps.proc),
            options.cwd.clone(),
            scrubbed.clone(),
            options.owner.to_string(),
        ));
        let (hubs, mcp_startup_timeout_ms) =
            self.stack_hubs(loaded, &options, &mut notices).await?;
        // Language servers (docs/diagnostics.md): asked after each edit
        // through the hooks every runner of the session shares.
        let language_servers = self.language_servers(config, &options.cwd, &options.env, &scrubbed);
        let tool_hooks = tool_hooks(&hooks, language_servers.as_ref(), &options);
        let declarations = declarations(&options);
        let base = StackBase {
            caps: caps.clone(),
            terminals: caps
                .terminals
                .session_terminals(confinement.sandboxed_terminal),
            browser: self.session_browser(config),
            spill_root: self.home().join("spill"),
            cwd: options.cwd.clone(),
            scrubbed_env: scrubbed,
            user_home: user_home(&options.env),
            policy: Arc::clone(&confinement.policy),
            gate: Arc::clone(&options.gate),
            hooks: tool_hooks,
            hubs,
            declarations,
            config: SchedulerConfig {
                compact_declarations: declarations.small,
                ..SchedulerConfig::default()
            },
            diagnostic_checks: crate::lsp::diagnostic_checks(config),
            sandboxed_proc: confinement.sandboxed_proc,
            command_host: self.command_host().cloned(),
        };

        let tool_env = base.tool_env(&options.owner);
        if let Some(path) = &options.file_state {
            crate::file_state::load_file_state(caps.fs.as_ref(), path, &tool_env.file_state).await;
        }
        let file_state = Arc::clone(&tool_env.file_state);
        // Checkpoints around calls that change files, subagents' included
        // (docs/rewind.md).
        let base = crate::checkpoints::wrap_hooks(base, options.checkpoints.clone());

        // One set, shared with the subagents (and so its cache).
        let web_tools = stack_web_tools(config, &options, caps);
        let subagents = Arc::new(self.stack_subagents(
            agents,
            options.model,
            &base,
            &skills,
            &options.owner,
            web_tools.clone(),
        ));

        let mode = ModeCell::new(config.mode());
        let todos = TodoList::default();
        let runner = Arc::new(base.runner(
            session_tools(
                &tool_env,
                &todos,
                &skills,
                &options.gate,
                &mode,
                Arc::clone(&subagents),
                web_tools,
            ),
            Arc::new(tool_env),
            confinement.policy,
            mode.clone(),
            Some(todos.clone()),
            McpSelection::All,
        ));
        Ok(ToolStack {
            runner,
            base,
            file_state,
            mode,
            todos,
            skills,
            hooks,
            recent_requests,
            classifier,
            subagents,
            notices,
            sandbox: confinement.sandbox_label,
            mcp_startup_timeout_ms,
            language_servers,
            server_tools: crate::web::provider_search(
                config,
                &options.env,
                caps.web.as_ref(),
                declarations.small,
            ),
        })
    }

    /// The kernel's capabilities with the settings' `env` on every
    /// command the tools and hooks run.
    fn stack_caps(&self, config: &riot_config::Config, options: &StackOptions) -> Capabilities {
        // The settings' `env` reaches every command the tools and hooks run.
        Capabilities {
            proc: SettingsEnv::wrap(
                Arc::clone(&self.capabilities().proc),
                config.tool_env(&options.env),
            ),
            ..self.capabilities().clone()
        }
    }

    /// The OS sandbox and the permission chain a stack's tools run under;
    /// the sandbox's notice goes to `notices`.
    fn confinement(
        &self,
        config: &riot_config::Config,
        options: &StackOptions,
        caps: &Capabilities,
        classifier: Option<&Arc<ModelClassifier>>,
        notices: &mut Vec<String>,
    ) -> Confinement {
        // The OS sandbox around the tools' commands (not the hooks': they
        // are the person's own). Commands are allowed unasked only when
        // it really wraps them.
        let sandbox = self.session_sandbox(config, &options.cwd, &options.env);
        notices.extend(sandbox.notice());
        let sandbox_label = sandbox.label();
        // Its terminals' programs go in the same sandbox.
        let sandboxed = if sandbox.enforced() {
            caps.sandbox
                .session(Arc::clone(&caps.proc), &sandbox.policy)
        } else {
            None
        };
        let (sandboxed_proc, sandboxed_terminal) = match sandboxed {
            Some(session) => (Some(session.proc), Some(session.terminal)),
            None => (None, None),
        };
        let mut policy = self.policy(config, &options.cwd, &options.env);
        if sandboxed_proc.is_some() {
            // Under either mechanism the protected paths stay as they were
            // (bubblewrap's read-only mounts, and each command's are put
            // back after it), so a word only known when the command runs
            // is no question of its own.
            policy = policy.with_protecting_sandbox();
        }
        if sandboxed_proc.is_some() && sandbox.allows_unasked() {
            policy = policy.with_enforced_sandbox(sandbox.status.mechanism.as_str());
        }
        if let Some(classifier) = classifier {
            policy = policy.with_classifier(classifier.clone());
        }
        Confinement {
            policy: Arc::new(policy),
            sandbox_label,
            sandboxed_proc,
            sandboxed_terminal,
        }
    }

    /// The skills and agent types of `loaded`'s project, Riot's home and
    /// the person's; their notices go to `notices`.
    async fn stack_catalogs(
        &self,
        loaded: &LoadedConfig,
        options: &StackOptions,
        notices: &mut Vec<String>,
    ) -> (SkillCatalog, AgentCatalog) {
        let fs = self.capabilities().fs.as_ref();
        let skills = SkillCatalog::discover(
            fs,
            self.home(),
            user_home(&options.env).as_deref(),
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(skills.notices);
        let (agents, agent_notices) =
            AgentCatalog::discover(fs, self.home(), &loaded.project_root, loaded.trusted).await;
        notices.extend(agent_notices);
        (skills.catalog, agents)
    }

    /// What the stack's Task tool runs subagents with: the agent types,
    /// the session's model, its tools' base, skills and web tools.
    fn stack_subagents(
        &self,
        agents: AgentCatalog,
        model: Result<ModelAccess, crate::error::NoModel>,
        base: &StackBase,
        skills: &SkillCatalog,
        owner: &SessionId,
        web_tools: Vec<Arc<dyn DynTool>>,
    ) -> Subagents {
        Subagents {
            catalog: agents,
            model: model.map(|access| SubagentModel {
                provider: access.metered(access.provider.clone()),
                model: access.model,
            }),
            stack: base.clone(),
            home: self.home().to_path_buf(),
            skills: skills.clone(),
            parent: owner.clone(),
            session_section: OnceLock::new(),
            web_tools,
            background: crate::background::BackgroundTasks::default(),
        }
    }

    /// The session's browser (docs/browser.md): from the kernel's browser
    /// host with the `browser` setting, or none.
    fn session_browser(&self, config: &riot_config::Config) -> Arc<dyn riot_protocol::Browser> {
        let options = config
            .browser
            .as_ref()
            .and_then(|s| riot_config::browser_options(&s.value).ok())
            .unwrap_or_default();
        match self.browser_host() {
            Some(host) => host.session_browser(&options),
            None => Arc::new(riot_protocol::NoBrowser),
        }
    }

    /// The MCP hubs of a stack: the project's configured servers (shared
    /// with the project's other sessions), then the session's own; and the
    /// startup timeout. They start in the background; their tools join
    /// when ready.
    async fn stack_hubs(
        &self,
        loaded: &LoadedConfig,
        options: &StackOptions,
        notices: &mut Vec<String>,
    ) -> Result<(Vec<Arc<McpHub>>, u64), KernelError> {
        let scrubbed = self.scrubbed_env(&loaded.config);
        let settings_env = loaded.config.tool_env(&options.env);
        let hub_options = self.mcp_options(&options.cwd, &options.env, &scrubbed, &settings_env);
        let timeout = hub_options.startup_timeout_ms;
        let mut hubs = Vec::new();
        if !options.start_mcp {
            return Ok((hubs, timeout));
        }
        let mcp = riot_mcp::config::load(
            self.capabilities().fs.as_ref(),
            self.home(),
            &loaded.project_root,
            loaded.trusted,
        )
        .await;
        notices.extend(mcp.trust_notice());
        notices.extend(mcp.errors.iter().map(|e| format!("MCP: {e}")));
        notices.extend(mcp.warnings.iter().map(|w| format!("MCP: {w}")));
        if mcp.servers.iter().any(|s| !s.disabled) {
            hubs.push(self.mcp_hub(
                &loaded.project_root,
                mcp.servers,
                &options.env,
                &scrubbed,
                &settings_env,
            )?);
        }
        if !options.session_mcp.is_empty() {
            let hub = McpHub::new(options.session_mcp.clone(), hub_options);
            hub.start()?;
            hubs.push(hub);
        }
        Ok((hubs, timeout))
    }
}

/// The OS sandbox and the permission chain a stack's tools run under.
struct Confinement {
    policy: Arc<dyn PermissionPolicy>,
    /// The OS sandbox as faces show it.
    sandbox_label: String,
    /// Runs the tools' commands in the sandbox, when it is enforced.
    sandboxed_proc: Option<Arc<dyn riot_protocol::ProcessRunner>>,
    /// Puts the terminals' programs in the same sandbox.
    sandboxed_terminal: Option<riot_protocol::SpecRewrite>,
}

/// Auto mode's classifier: a background request on the session's
/// provider and model (docs/design.md §9.5); the chain calls it only in
/// auto mode. `None` without a model.
fn stack_classifier(
    options: &StackOptions,
    recent_requests: &RecentRequests,
    caps: &Capabilities,
) -> Option<Arc<ModelClassifier>> {
    options.model.as_ref().ok().map(|access| {
        Arc::new(
            ModelClassifier::new(
                access.metered(Arc::new(access.provider.for_background())),
                access.model.get(),
                options.cwd.clone(),
                recent_requests.clone(),
                Arc::clone(&caps.clock),
            )
            .following(access.model.clone()),
        )
    })
}

/// The hooks around every tool call: the person's, and with language
/// servers their diagnostics after each edit.
fn tool_hooks(
    hooks: &Arc<HookRunner>,
    language_servers: Option<&Arc<dyn riot_protocol::LanguageServers>>,
    options: &StackOptions,
) -> Arc<dyn riot_protocol::ToolHooks> {
    match language_servers {
        Some(servers) => Arc::new(riot_tools::edit_feedback::LspHooks::new(
            hooks.clone(),
            Arc::clone(servers),
            options.cwd.clone(),
            user_home(&options.env),
        )),
        None => hooks.clone(),
    }
}

/// How the stack's tools are declared for the model's context window
/// (`RIOT_TOOL_SEARCH_CHARS` sets when MCP declarations are deferred).
fn declarations(options: &StackOptions) -> crate::runner::Declarations {
    let mut declarations = crate::runner::Declarations::for_window(options.context_window);
    if let Some(chars) = options
        .env
        .get("RIOT_TOOL_SEARCH_CHARS")
        .and_then(|v| v.parse().ok())
    {
        declarations.defer_mcp_above_chars = chars;
    }
    declarations
}

/// The web tools of a stack (`crate::web::web_tools`), WebFetch's
/// `prompt` answered by the small model.
fn stack_web_tools(
    config: &riot_config::Config,
    options: &StackOptions,
    caps: &Capabilities,
) -> Vec<Arc<dyn DynTool>> {
    // WebFetch's `prompt`: the `small_model` setting, else the
    // session's model, on the session's provider for background
    // requests, counted as side requests.
    let small_model = options.model.as_ref().ok().map(|access| {
        Arc::new(crate::web::SmallModel {
            provider: access.metered(Arc::new(access.provider.for_background())),
            model: match &config.small_model {
                Some(name) => crate::web::SmallModelName::Fixed(name.value.clone()),
                None => crate::web::SmallModelName::Session(access.model.clone()),
            },
        }) as Arc<dyn riot_tools::tools::PageQuestion>
    });
    crate::web::web_tools(
        &caps.web,
        small_model,
        crate::web::search_backend(config, &options.env).ok(),
    )
}
