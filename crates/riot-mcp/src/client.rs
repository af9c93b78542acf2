//! Riot's side of an MCP connection: what it tells servers about itself
//! and what it does with their notifications.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;

use crate::server::ProgressRoutes;

/// The client handler of one connection.
pub(crate) struct RiotClient {
    server: String,
    progress: Arc<ProgressRoutes>,
    /// Signalled on `notifications/tools/list_changed`; the connection task
    /// lists the tools again (not here: a handler must not wait on the
    /// connection it is called from).
    pub tools_changed: Arc<Notify>,
}

impl RiotClient {
    pub fn new(server: &str, progress: Arc<ProgressRoutes>) -> Self {
        Self {
            server: server.to_owned(),
            progress,
            tools_changed: Arc::new(Notify::new()),
        }
    }
}

impl ClientHandler for RiotClient {
    fn get_info(&self) -> ClientConfig {
        // No roots, sampling or elicitation: Riot only calls tools. The
        // `initialize` handshake is what deployed servers speak.
        let mut info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("riot", env!("CARGO_PKG_VERSION")),
        );
        info.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        info
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.report(&params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP tool list changed");
        self.tools_changed.notify_one();
    }
}
