//! # riot-acp — Riot as an Agent Client Protocol agent
//!
//! `riot acp` lets editors (Zed, JetBrains, Neovim plugins, any ACP client)
//! drive Riot's sessions over JSON-RPC on stdio (docs/design.md §2). This
//! crate maps the kernel API to ACP v1 with the official
//! `agent-client-protocol` SDK: `initialize`, `session/new`,
//! `session/load` (the transcript replayed as updates), `session/prompt`
//! (stop reasons from [`riot_protocol::TerminalReason::acp_stop_reason`]),
//! `session/cancel`, `session/set_mode` (Riot's permission modes),
//! `session/update` for chunks, tool calls and plans, and
//! `session/request_permission` for the sessions' questions.
//!
//! It is a separate crate, not a module of `riot-kernel`, so the SDK and
//! its schema types are compiled only by the faces that speak ACP and not
//! by every kernel build and test. [`WsServer`] carries the same agent over
//! a WebSocket for `riot serve` (token and `Origin` checks in `ws.rs`).
//! Riot's extensions (`_riot/shutdown`, `_riot/usage`, `_riot/compaction`)
//! are described in `ext.rs`, the message queue's in `queue.rs` and the
//! background agents' in `background.rs`.
//!
//! Invariant: nothing but protocol messages is written to stdout; logs go
//! through `tracing` to the face's log file.

mod agent;
pub mod background;
mod client_fs;
mod client_terminal;
mod error;
pub mod ext;
mod frames;
pub mod mapping;
pub mod methods;
pub mod queue;
mod rpc;
mod session_config;
mod stdio;
pub mod terminals;
mod ws;

pub use agent::{AcpConfig, Shutdown, serve_stdio};
pub use ws::{WebUi, WsServer};
