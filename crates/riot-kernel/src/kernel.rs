//! The kernel: one per process, shared by its sessions. It holds the
//! injected capabilities, Riot's home, the MCP hubs of the projects it has
//! opened, and which sessions are open; it loads a project's layered
//! configuration and builds its permission chain. Everything else in the
//! crate builds on this module; it depends on none of them but the
//! configuration, hooks and trust it loads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use riot_protocol::{FileSystem, PermissionRule, RulePattern, SessionId};
use riot_store::SessionStore;

use crate::error::KernelError;
use crate::world::{Capabilities, user_home};
use riot_config::trust::Trust;
use riot_config::{self as config, Config, EnvLayer, FlagLayer};
use riot_extensions::memory;

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

/// Loaded configuration and what it was loaded from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    pub project_root: PathBuf,
    pub trusted: bool,
    /// Every layer's hooks (a project's only when trusted).
    pub hooks: riot_extensions::hooks::HookConfig,
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
    /// Where each opening of a session works, by how many work there: a
    /// worktree is not removed while another session works in it.
    open_cwds: Arc<riot_worktree::WorkingDirs>,
    /// Each open session's queue of messages (`crate::queue`), shared by
    /// every opening of it and kept while messages wait, so a client that
    /// reconnects (a reloaded page) finds what it queued.
    queues: Arc<Mutex<BTreeMap<SessionId, crate::queue::PendingMessages>>>,
    /// Starts each session's language servers (docs/diagnostics.md);
    /// `None`: edits get no language-server feedback.
    lsp: Option<Arc<dyn riot_protocol::LanguageServerHost>>,
    /// Makes each session's browser (docs/browser.md); `None`: the Browser
    /// tool is not declared.
    browsers: Option<Arc<dyn riot_protocol::BrowserHost>>,
    /// Runs Bash's foreground commands instead of the tools' runner (an
    /// ACP client's terminals); `None`: Riot runs them itself.
    command_host: Option<Arc<dyn riot_protocol::CommandHost>>,
}

/// Counts a session as open while it lives.
#[derive(Debug)]
pub(crate) struct OpenMark {
    id: SessionId,
    open: Arc<Mutex<BTreeMap<SessionId, usize>>>,
    cwd: PathBuf,
    open_cwds: Arc<riot_worktree::WorkingDirs>,
    queues: Arc<Mutex<BTreeMap<SessionId, crate::queue::PendingMessages>>>,
}

impl Drop for OpenMark {
    fn drop(&mut self) {
        self.open_cwds.leave(&self.cwd);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.id);
                // Nobody has it open: its queue goes unless messages wait.
                let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
                if queues.get(&self.id).is_some_and(|q| q.list().is_empty()) {
                    queues.remove(&self.id);
                }
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
            open_cwds: Arc::default(),
            queues: Arc::default(),
            lsp: None,
            browsers: None,
            command_host: None,
        }
    }

    /// The same kernel whose sessions each get a browser from `host`
    /// (riot-cli hands in riot-runtime's Chromium host).
    #[must_use]
    pub fn with_browsers(mut self, host: Arc<dyn riot_protocol::BrowserHost>) -> Self {
        self.browsers = Some(host);
        self
    }

    /// What makes the sessions' browsers, if anything.
    pub fn browser_host(&self) -> Option<&Arc<dyn riot_protocol::BrowserHost>> {
        self.browsers.as_ref()
    }

    /// The same kernel whose sessions start language servers through
    /// `host` (riot-cli hands in riot-lsp's).
    #[must_use]
    pub fn with_language_servers(
        mut self,
        host: Arc<dyn riot_protocol::LanguageServerHost>,
    ) -> Self {
        self.lsp = Some(host);
        self
    }

    /// What starts the sessions' language servers, if anything.
    pub fn language_server_host(&self) -> Option<&Arc<dyn riot_protocol::LanguageServerHost>> {
        self.lsp.as_ref()
    }

    /// Whether a session is open in this process (by any client).
    pub fn is_open(&self, id: &SessionId) -> bool {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
    }

    pub(crate) fn mark_open(&self, id: &SessionId, cwd: &Path) -> OpenMark {
        *self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id.clone())
            .or_default() += 1;
        self.open_cwds.enter(cwd);
        OpenMark {
            id: id.clone(),
            open: Arc::clone(&self.open),
            cwd: cwd.to_path_buf(),
            open_cwds: Arc::clone(&self.open_cwds),
            queues: Arc::clone(&self.queues),
        }
    }

    /// The queue of session `id`: the one its other openings in this
    /// process share, or a new one (each opening has its own model
    /// switch).
    pub(crate) fn queue_for(
        &self,
        id: &SessionId,
        ids: Arc<dyn riot_protocol::IdGen>,
    ) -> crate::queue::PendingMessages {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(id.clone())
            .or_insert_with(|| crate::queue::PendingMessages::new(ids))
            .sharing()
    }

    /// The same kernel (its open sessions, MCP hubs and home) whose
    /// sessions use `fs` as their file system: an ACP face hands in the
    /// editor's (riot-acp's `ClientFs`) for the sessions of one client.
    #[must_use]
    pub fn with_file_system(&self, fs: Arc<dyn FileSystem>) -> Self {
        let mut kernel = self.clone();
        kernel.caps.fs = fs;
        kernel
    }

    /// The same kernel whose sessions run Bash's foreground commands
    /// through `host`: an ACP face hands in the editor's terminals
    /// (riot-acp's `EditorTerminals`) for the sessions of one client.
    #[must_use]
    pub fn with_command_host(&self, host: Arc<dyn riot_protocol::CommandHost>) -> Self {
        let mut kernel = self.clone();
        kernel.command_host = Some(host);
        kernel
    }

    /// What runs Bash's foreground commands instead of Riot, if anything.
    pub fn command_host(&self) -> Option<&Arc<dyn riot_protocol::CommandHost>> {
        self.command_host.as_ref()
    }

    /// Riot's git worktrees (`riot --worktree`), made with this kernel's
    /// capabilities.
    pub fn worktrees(&self) -> riot_worktree::Worktrees {
        riot_worktree::Worktrees::new(
            self.caps.fs.clone(),
            self.caps.proc.clone(),
            self.caps.clock.clone(),
            self.caps.ids.clone(),
            self.home.clone(),
            Arc::clone(&self.open_cwds),
        )
    }

    /// The worktree a saved session worked in, to reopen it there: `None`
    /// when it worked in no worktree (or is not saved); an error saying so
    /// when its worktree was removed. Its `cwd` is where the session
    /// worked.
    pub async fn session_worktree(
        &self,
        id: &SessionId,
    ) -> Result<Option<riot_worktree::Worktree>, KernelError> {
        let Ok(loaded) = self.store().load(id) else {
            return Ok(None);
        };
        let Some(recorded) = loaded.meta.worktree else {
            return Ok(None);
        };
        Ok(Some(
            self.worktrees().reopen(&recorded, &loaded.meta.cwd).await?,
        ))
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
        // BRAVE_API_KEY: WebSearch's key (docs/web.md), not the commands'.
        let mut scrubbed = vec![
            "ANTHROPIC_API_KEY".to_owned(),
            "OPENAI_API_KEY".to_owned(),
            "BRAVE_API_KEY".to_owned(),
        ];
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
            trust
                .trust(fs, &project_root)
                .await
                .map_err(KernelError::io(format!(
                    "could not record trust in {}",
                    self.home.join("trusted.json").display()
                )))?;
        }
        let trusted = trust.is_trusted(fs, &project_root).await;
        // Claude Code's and Riot's user files, then their project files.
        let claude = config::claude_dir(env);
        let files = config::read_settings(fs, &self.home, claude.as_deref(), &project_root).await?;
        let env_layer = EnvLayer { vars: env.clone() };
        let mut config = config::layer(&files, &env_layer, flags, trusted)?;
        let hooks = riot_extensions::hooks::load(
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
            .with_additional_dirs(config.additional_dirs())
            .with_file_system(Arc::clone(&self.caps.fs))
            .with_riot_home(self.home.clone())
    }

    /// The MCP hub of a project, started at its first session and shared
    /// by the later ones with the same servers (docs/design.md §6.7). When a
    /// session's servers differ — the configuration changed, or the
    /// project was trusted since — it gets a new hub, which later sessions
    /// share; sessions on the old one keep it until they end.
    pub(crate) fn mcp_hub(
        &self,
        project_root: &Path,
        servers: Vec<riot_mcp::ServerConfig>,
        env: &BTreeMap<String, String>,
        scrubbed: &[String],
        settings_env: &[(String, String)],
    ) -> Result<Arc<riot_mcp::McpHub>, KernelError> {
        let mut hubs = self.mcp.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(project_root)
            && hub.configs().into_iter().eq(servers.iter())
        {
            return Ok(Arc::clone(hub));
        }
        let hub = riot_mcp::McpHub::new(
            servers,
            self.mcp_options(project_root, env, scrubbed, settings_env),
        );
        hub.start()?;
        hubs.insert(project_root.to_path_buf(), Arc::clone(&hub));
        Ok(hub)
    }

    /// `settings_env`: the settings' `env` ([`Config::tool_env`]), set for
    /// stdio servers and seen by `${VAR}` in their configuration.
    pub(crate) fn mcp_options(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        scrubbed: &[String],
        settings_env: &[(String, String)],
    ) -> riot_mcp::HubOptions {
        let mut expand = env.clone();
        expand.extend(settings_env.iter().cloned());
        let mut options = riot_mcp::HubOptions::new(Arc::clone(&self.caps.clock), cwd)
            .with_env(expand)
            .with_env_remove(scrubbed.to_vec())
            .with_env_set(settings_env.to_vec());
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
                    return Err(KernelError::Input(format!(
                        "no MCP server `{name}` from mcp.json or .mcp.json is running (servers an editor handed over restart with their session); `_riot/mcp_servers` lists them"
                    )));
                }
                _ => {
                    return Err(KernelError::Input(format!(
                        "several projects have an MCP server `{name}`; name the project"
                    )));
                }
            }
        };
        Ok(hub.restart(name).await?)
    }
}
