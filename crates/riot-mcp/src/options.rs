//! [`HubOptions`]: how a hub runs its servers — shared by the hub and each
//! connection task, so neither module needs the other's types for them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use riot_protocol::Clock;

/// How long a server may take to start (spawn or connect, `initialize`,
/// list its tools) before it is marked failed (docs/design.md §13).
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;

/// How the hub runs its servers.
#[derive(Clone)]
pub struct HubOptions {
    /// See [`DEFAULT_STARTUP_TIMEOUT_MS`].
    pub startup_timeout_ms: u64,
    /// Times the startup; the real clock outside tests.
    pub clock: Arc<dyn Clock>,
    /// The project directory: stdio servers run here unless their `cwd`
    /// says otherwise (relative `cwd`s are resolved against it).
    pub cwd: PathBuf,
    /// What `${VAR}` expands to (the face's environment).
    pub env: BTreeMap<String, String>,
    /// Variables stdio servers do not inherit (the model API keys), unless
    /// their `env` sets them.
    pub env_remove: Vec<String>,
    /// Variables set for every stdio server, under its own `env` (the
    /// settings' `env`).
    pub env_set: Vec<(String, String)>,
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The environment holds secrets: names only.
        f.debug_struct("HubOptions")
            .field("startup_timeout_ms", &self.startup_timeout_ms)
            .field("cwd", &self.cwd)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("env_remove", &self.env_remove)
            .field(
                "env_set",
                &self.env_set.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl HubOptions {
    /// Options with the default startup timeout, no `${VAR}` values and
    /// nothing removed from the environment.
    pub fn new(clock: Arc<dyn Clock>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            startup_timeout_ms: DEFAULT_STARTUP_TIMEOUT_MS,
            clock,
            cwd: cwd.into(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            env_set: Vec::new(),
        }
    }

    #[must_use]
    pub fn with_startup_timeout_ms(mut self, ms: u64) -> Self {
        self.startup_timeout_ms = ms;
        self
    }

    #[must_use]
    pub fn with_env(mut self, env: BTreeMap<String, String>) -> Self {
        self.env = env;
        self
    }

    #[must_use]
    pub fn with_env_remove(mut self, names: Vec<String>) -> Self {
        self.env_remove = names;
        self
    }

    /// Variables every stdio server gets unless its own `env` sets them.
    #[must_use]
    pub fn with_env_set(mut self, vars: Vec<(String, String)>) -> Self {
        self.env_set = vars;
        self
    }
}
