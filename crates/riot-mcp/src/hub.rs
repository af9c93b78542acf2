//! [`McpHub`]: the MCP connections of one kernel, shared by all its
//! sessions.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use riot_protocol::{ClockExt, DynTool};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::connection::{self, Shared};
use crate::options::HubOptions;
use crate::server::{Server, ServerStatus};
use crate::tool::McpTool;

/// What the hub can refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    #[error("there is no MCP server `{0}`")]
    UnknownServer(String),
    #[error("the MCP server `{0}` is disabled in its configuration")]
    Disabled(String),
    #[error("the MCP hub needs a Tokio runtime to start servers")]
    NoRuntime,
}

struct Running {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// The MCP servers of a kernel: connects each enabled server in the
/// background, keeps its status, and offers its tools as Riot tools.
///
/// Nothing here blocks on a server: [`McpHub::start`] returns at once and
/// tools appear in [`McpHub::tools`] as servers become ready. Every stdio
/// server runs in its own process group, killed on [`McpHub::shutdown`],
/// on [`McpHub::restart`] and when the hub is dropped.
pub struct McpHub {
    /// By name, so iteration is the order tools are offered in.
    servers: BTreeMap<String, Arc<Server>>,
    shared: Arc<Shared>,
    running: Mutex<BTreeMap<String, Running>>,
    changes: watch::Sender<u64>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

impl McpHub {
    /// A hub for `servers` (a later server replaces an earlier one of the
    /// same name). Nothing starts until [`McpHub::start`].
    pub fn new(servers: Vec<ServerConfig>, options: HubOptions) -> Arc<Self> {
        let (changes, _) = watch::channel(0);
        let servers = servers
            .into_iter()
            .map(|config| {
                let name = config.name.clone();
                (name, Arc::new(Server::new(config, changes.clone())))
            })
            .collect();
        Arc::new(Self {
            servers,
            shared: Arc::new(Shared::new(options)),
            running: Mutex::new(BTreeMap::new()),
            changes,
        })
    }

    fn running(&self) -> MutexGuard<'_, BTreeMap<String, Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts connecting every enabled server that is not running yet, in
    /// the background; returns at once.
    pub fn start(&self) -> Result<(), HubError> {
        for server in self.servers.values() {
            if !server.config.disabled && !self.running().contains_key(&server.name) {
                self.spawn(server)?;
            }
        }
        Ok(())
    }

    fn spawn(&self, server: &Arc<Server>) -> Result<(), HubError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| HubError::NoRuntime)?;
        let generation = server.begin();
        let stop = CancellationToken::new();
        let task = runtime.spawn(connection::run(
            Arc::clone(server),
            Arc::clone(&self.shared),
            generation,
            stop.clone(),
        ));
        self.running()
            .insert(server.name.clone(), Running { stop, task });
        Ok(())
    }

    /// Stops a server's connection, if one runs, and waits until its
    /// process group is gone.
    async fn stop(&self, server: &Server) {
        let running = self.running().remove(&server.name);
        if let Some(Running { stop, task }) = running {
            stop.cancel();
            if let Err(e) = task.await
                && e.is_panic()
            {
                tracing::error!(server = %server.name, "an MCP connection task panicked");
            }
        }
    }

    /// Stops the server `name` (killing its process group) and connects it
    /// again in the background.
    pub async fn restart(&self, name: &str) -> Result<(), HubError> {
        let server = self
            .servers
            .get(name)
            .ok_or_else(|| HubError::UnknownServer(name.to_owned()))?;
        if server.config.disabled {
            return Err(HubError::Disabled(name.to_owned()));
        }
        self.stop(server).await;
        self.spawn(server)
    }

    /// Stops every server and waits until their process groups are gone.
    /// Their status becomes `Failed` ("shut down"); disabled servers stay
    /// `Disabled`.
    pub async fn shutdown(&self) {
        for server in self.servers.values() {
            self.stop(server).await;
            if !server.config.disabled {
                server.retire("the MCP hub was shut down".into());
            }
        }
    }

    /// Every server's status, by name.
    pub fn statuses(&self) -> BTreeMap<String, ServerStatus> {
        self.servers
            .iter()
            .map(|(name, server)| (name.clone(), server.status()))
            .collect()
    }

    /// One server's status.
    pub fn status(&self, name: &str) -> Option<ServerStatus> {
        self.servers.get(name).map(|s| s.status())
    }

    /// The configurations the hub runs, by name.
    pub fn configs(&self) -> Vec<&ServerConfig> {
        self.servers.values().map(|s| &s.config).collect()
    }

    /// The process id (and process-group id) of a running stdio server.
    pub fn pid(&self, name: &str) -> Option<u32> {
        self.servers.get(name).and_then(|s| s.pid())
    }

    /// The tools of every ready server now, sorted by server then tool
    /// name (docs/design.md §6.7: MCP tools follow the built-ins in a stable
    /// order). A snapshot: take a new one after [`McpHub::changes`] fires.
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        self.servers
            .values()
            .flat_map(|server| {
                server.tools().into_iter().map(move |listed| {
                    Arc::new(McpTool::new(Arc::clone(server), listed)) as Arc<dyn DynTool>
                })
            })
            .collect()
    }

    /// Changes whenever a status or a tool list changes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Waits until no server is connecting, at most `timeout_ms` of the
    /// hub's clock. Returns whether they all settled. For tests and for
    /// commands that list servers; sessions never wait.
    pub async fn wait_settled(&self, timeout_ms: u64) -> bool {
        let mut changes = self.changes.subscribe();
        let settled = async {
            loop {
                if self.servers.values().all(|s| s.status().is_settled()) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        self.shared
            .options
            .clock
            .timeout(timeout_ms, settled)
            .await
            .is_ok()
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        // Dropping a connection task drops its child, which kills the
        // child's process group (riot-runtime's guard).
        for (_, running) in std::mem::take(&mut *self.running()) {
            running.stop.cancel();
            running.task.abort();
        }
    }
}
