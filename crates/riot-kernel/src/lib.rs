//! # riot-kernel — the one API every face drives
//!
//! Configuration layering ([`config`]), credentials, project trust, memory
//! files and the system prompt, and the session manager that joins the
//! loop (`riot-core`), the tools and scheduler (`riot-tools`), the
//! permission chain (`riot-permissions`), the providers
//! (`riot-providers`) and the transcripts (`riot-store`) into sessions
//! (docs/design.md §2, §11–§13). Faces (`riot exec`, `riot acp`, the TUI)
//! depend on this crate and never reach into `riot-core`.
//!
//! It is a deterministic crate: files, processes, time and randomness come
//! in through the capability traits of `riot-protocol`.

pub mod ask;
pub mod background;
pub mod checkpoints;
pub mod classifier;
pub mod commands;
pub mod config;
pub mod cost;
pub mod credentials;
pub mod error;
pub mod extension_files;
pub mod file_state;
pub mod frontmatter;
pub mod gate;
pub mod handle;
pub mod hooks;
pub mod kernel;
pub mod lsp;
pub mod memory;
pub mod model_settings;
pub mod plan;
pub mod prompt;
mod provider;
pub mod queue;
pub mod runner;
pub mod sandbox;
pub mod session;
pub mod skills;
pub mod stack;
pub mod task;
pub mod todo;
pub mod tools;
pub mod toolsearch;
mod transcript;
pub mod trust;
pub mod ui_support;
pub mod vision;
pub mod web;
pub mod working_set;
pub mod worktree;
pub mod world;

pub use error::KernelError;
pub use gate::NobodyAnswers;
pub use handle::{SessionHandle, SessionStatus, Turn};
pub use kernel::{Kernel, McpServerInfo};
pub use session::{OpenOptions, ResumeFrom, Session};
pub use world::Capabilities;
