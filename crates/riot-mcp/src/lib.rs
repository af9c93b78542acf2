//! # riot-mcp — MCP servers as Riot tools
//!
//! Connects to [Model Context Protocol](https://modelcontextprotocol.io)
//! servers with the official Rust SDK (`rmcp`) and offers their tools to
//! Riot's scheduler as ordinary [`riot_protocol::DynTool`]s, so they go
//! through the same validation, permission chain, result budgets and UI as
//! the built-in tools (docs/design.md §6.7, §13).
//!
//! - [`config`] — the `mcpServers` JSON shape: parsing with per-server
//!   errors, the user's `<riot home>/mcp.json` and the project's
//!   `.mcp.json` (read only once the project is trusted; a project server
//!   replaces a user server of the same name), `${VAR}` expansion, adding
//!   and removing servers in the user file.
//! - [`McpHub`] — one per kernel, shared by its sessions: starts every
//!   enabled server in the background (stdio children in their own
//!   process group; streamable HTTP on one shared client) with a startup
//!   timeout, keeps a [`ServerStatus`] per server, restarts, follows
//!   `notifications/tools/list_changed`, and kills every process group on
//!   shutdown, restart and drop.
//! - [`McpTool`] — one server tool named `mcp__<server>__<tool>`
//!   ([`naming`]); results map to text, images and notes; `isError` is a
//!   failed result; cancellation sends `notifications/cancelled`. A
//!   server's `readOnlyHint` allows parallel batches but never skips a
//!   permission question: rules such as `mcp__github__*` decide.
//!
//! It does not decide what may run (the permission chain does), read the
//! process environment (the face hands it over) or know about sessions.
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! use riot_mcp::{HubOptions, McpHub, ServerConfig, Transport};
//!
//! let everything = ServerConfig::session(
//!     "everything",
//!     Transport::Stdio {
//!         command: "npx".into(),
//!         args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
//!         env: Default::default(),
//!         cwd: None,
//!     },
//! );
//! let options = HubOptions::new(Arc::new(riot_runtime::SystemClock), "/my/project");
//! let hub = McpHub::new(vec![everything], options);
//! hub.start().expect("inside a Tokio runtime");
//! // Later, without waiting for anyone:
//! let tools = hub.tools(); // e.g. mcp__everything__echo, once ready
//! # let _ = tools;
//! hub.shutdown().await;
//! # }
//! ```

mod client;
pub mod config;
mod connection;
mod hub;
pub mod naming;
mod options;
mod result;
mod server;
mod tool;

pub use config::{ConfigError, ConfigScope, McpConfig, ServerConfig, Transport};
pub use hub::{HubError, McpHub};
pub use options::{DEFAULT_STARTUP_TIMEOUT_MS, HubOptions};
pub use server::ServerStatus;
pub use tool::McpTool;
