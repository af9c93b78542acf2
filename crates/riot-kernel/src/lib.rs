//! # riot-kernel — the one API every face drives
//!
//! The session manager: it joins the loop (`riot-core`), the tools and
//! scheduler (`riot-tools`), the permission chain (`riot-permissions`),
//! the providers (`riot-providers`), the transcripts (`riot-store`), the
//! settings (`riot-config`) and what the person added from files
//! (`riot-extensions`) into sessions, and assembles each session's system
//! prompt. Faces (`riot exec`, `riot acp`, the TUI) depend on this crate
//! and never reach into `riot-core`.
//!
//! It is a deterministic crate: files, processes, time and randomness come
//! in through the capability traits of `riot-protocol`.

pub mod ask;
pub mod background;
pub mod checkpoints;
pub mod classifier;
pub mod cost;
pub mod error;
pub mod file_state;
pub mod gate;
pub mod handle;
pub mod kernel;
pub mod lsp;
pub mod model_settings;
pub mod plan;
pub mod prompt;
mod provider;
pub mod questions;
pub mod queue;
pub mod runner;
pub mod sandbox;
pub mod session;
pub mod stack;
pub mod task;
pub mod tools;
mod transcript;
pub mod ui_support;
pub mod vision;
pub mod web;
pub mod working_set;
pub mod world;

pub use error::KernelError;
pub use gate::NobodyAnswers;
pub use handle::{SessionHandle, SessionStatus, SessionUpdate, Stopper, Turn, UpdateSink};
pub use kernel::{Kernel, McpServerInfo};
pub use questions::{Answer, Asker, Question, QuestionAsked, QuestionId};
pub use session::{OpenOptions, ResumeFrom, Session};
pub use world::Capabilities;
