//! One configured server's live state, shared by the hub, its connection
//! task and the tools it lists.
//!
//! Every change goes through a generation check: a connection task that
//! lost a restart race can never overwrite its successor's state.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use riot_protocol::ProgressPayload;
use riot_protocol::tool::ProgressSink;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleClient};
use tokio::sync::watch;

use crate::config::ServerConfig;
use crate::naming;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    /// Starting up (spawning, `initialize`, listing tools). Enabled servers
    /// are in this state from the hub's creation until they settle.
    Connecting,
    /// Connected; its tools are offered.
    Ready { tools: usize },
    /// Not connected, and why (worded for the person).
    Failed { reason: String },
    /// `"disabled": true` in its configuration.
    Disabled,
}

impl ServerStatus {
    /// Whether it has left [`ServerStatus::Connecting`].
    pub fn is_settled(&self) -> bool {
        !matches!(self, ServerStatus::Connecting)
    }
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerStatus::Connecting => f.write_str("connecting"),
            ServerStatus::Ready { tools: 1 } => f.write_str("ready (1 tool)"),
            ServerStatus::Ready { tools } => write!(f, "ready ({tools} tools)"),
            ServerStatus::Failed { reason } => write!(f, "failed: {reason}"),
            ServerStatus::Disabled => f.write_str("disabled"),
        }
    }
}

/// A tool as the server listed it, with its Riot name.
#[derive(Debug, Clone)]
pub(crate) struct ListedTool {
    pub name: String,
    pub tool: Arc<rmcp::model::Tool>,
}

struct State {
    status: ServerStatus,
    generation: u64,
    peer: Option<Peer<RoleClient>>,
    tools: Vec<ListedTool>,
    pid: Option<u32>,
}

pub(crate) struct Server {
    pub name: String,
    pub config: ServerConfig,
    state: Mutex<State>,
    pub progress: Arc<ProgressRoutes>,
    /// Bumped on every change of any server of the hub.
    changes: watch::Sender<u64>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Server {
    pub fn new(config: ServerConfig, changes: watch::Sender<u64>) -> Self {
        let status = if config.disabled {
            ServerStatus::Disabled
        } else {
            ServerStatus::Connecting
        };
        Self {
            name: config.name.clone(),
            config,
            state: Mutex::new(State {
                status,
                generation: 0,
                peer: None,
                tools: Vec::new(),
                pid: None,
            }),
            progress: Arc::new(ProgressRoutes::default()),
            changes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Applies `f` if `generation` is still current; reports the change.
    fn update(&self, generation: u64, f: impl FnOnce(&mut State)) -> bool {
        {
            let mut state = self.lock();
            if state.generation != generation {
                return false;
            }
            f(&mut state);
        }
        self.changed();
        true
    }

    /// A new connection attempt: its generation, status Connecting.
    pub fn begin(&self) -> u64 {
        let generation = {
            let mut state = self.lock();
            state.generation += 1;
            state.status = ServerStatus::Connecting;
            state.peer = None;
            state.tools.clear();
            state.pid = None;
            state.generation
        };
        self.changed();
        generation
    }

    /// Ends every connection generation: status Failed with `reason`.
    pub fn retire(&self, reason: String) {
        {
            let mut state = self.lock();
            state.generation += 1;
            state.status = ServerStatus::Failed { reason };
            state.peer = None;
            state.tools.clear();
            state.pid = None;
        }
        self.changed();
    }

    pub fn set_pid(&self, generation: u64, pid: Option<u32>) {
        self.update(generation, |s| s.pid = pid);
    }

    pub fn ready(&self, generation: u64, peer: Peer<RoleClient>, tools: Vec<rmcp::model::Tool>) {
        let tools = self.listed(tools);
        self.update(generation, |s| {
            s.status = ServerStatus::Ready { tools: tools.len() };
            s.peer = Some(peer);
            s.tools = tools;
        });
    }

    /// A refreshed tool list (`notifications/tools/list_changed`).
    pub fn set_tools(&self, generation: u64, tools: Vec<rmcp::model::Tool>) {
        let tools = self.listed(tools);
        self.update(generation, |s| {
            if matches!(s.status, ServerStatus::Ready { .. }) {
                s.status = ServerStatus::Ready { tools: tools.len() };
                s.tools = tools;
            }
        });
    }

    pub fn fail(&self, generation: u64, reason: String) {
        tracing::warn!(server = %self.name, %reason, "MCP server failed");
        self.update(generation, |s| {
            s.status = ServerStatus::Failed { reason };
            s.peer = None;
            s.tools.clear();
            s.pid = None;
        });
    }

    /// Sorted by Riot name; a name listed twice keeps its first tool.
    fn listed(&self, tools: Vec<rmcp::model::Tool>) -> Vec<ListedTool> {
        let mut listed: Vec<ListedTool> = tools
            .into_iter()
            .map(|tool| ListedTool {
                name: naming::tool_name(&self.name, &tool.name),
                tool: Arc::new(tool),
            })
            .collect();
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        listed.dedup_by(|later, first| later.name == first.name);
        listed
    }

    pub fn status(&self) -> ServerStatus {
        self.lock().status.clone()
    }

    pub fn pid(&self) -> Option<u32> {
        self.lock().pid
    }

    pub fn tools(&self) -> Vec<ListedTool> {
        self.lock().tools.clone()
    }

    /// The connection to call through, or why there is none.
    pub fn peer(&self) -> Result<(Peer<RoleClient>, u64), ServerStatus> {
        let state = self.lock();
        match &state.peer {
            Some(peer) => Ok((peer.clone(), state.generation)),
            None => Err(state.status.clone()),
        }
    }

    /// Completes when connection `generation` is no longer ready (it
    /// failed, was restarted or shut down), with the status then.
    pub async fn lost(&self, generation: u64) -> ServerStatus {
        let mut changes = self.changes.subscribe();
        loop {
            {
                let state = self.lock();
                let ready = matches!(state.status, ServerStatus::Ready { .. });
                if state.generation != generation || !ready {
                    return state.status.clone();
                }
            }
            if changes.changed().await.is_err() {
                return ServerStatus::Failed {
                    reason: "the MCP hub is gone".into(),
                };
            }
        }
    }
}

/// Progress notifications routed to the call that asked for them.
///
/// Best effort: rmcp hands each notification to a task of its own, so a
/// report the server sends right before its result can arrive after the
/// call has returned and its route is gone; it is then dropped.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    sinks: Mutex<HashMap<ProgressToken, ProgressSink>>,
}

impl ProgressRoutes {
    fn lock(&self) -> MutexGuard<'_, HashMap<ProgressToken, ProgressSink>> {
        self.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Routes `token` to `sink` until the returned guard is dropped.
    pub fn register(self: &Arc<Self>, token: ProgressToken, sink: ProgressSink) -> ProgressRoute {
        self.lock().insert(token.clone(), sink);
        ProgressRoute {
            routes: Arc::clone(self),
            token,
        }
    }

    pub fn report(&self, params: &ProgressNotificationParam) {
        let sink = self.lock().get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink(ProgressPayload::Status {
                text: progress_text(params),
            });
        }
    }
}

/// Unregisters a progress route when dropped.
pub(crate) struct ProgressRoute {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

/// `3/5` or `3/5: indexing`; numbers as the server sent them.
pub(crate) fn progress_text(params: &ProgressNotificationParam) -> String {
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        }
    };
    let mut text = number(params.progress);
    if let Some(total) = params.total {
        text = format!("{text}/{}", number(total));
    }
    match params.message.as_deref() {
        Some(message) if !message.is_empty() => format!("{text}: {message}"),
        _ => text,
    }
}
