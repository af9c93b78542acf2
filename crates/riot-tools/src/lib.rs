//! # riot-tools — built-in tools and the scheduler
//!
//! The built-in tools (Read, Write, Edit, Glob, Grep, Bash, BashOutput,
//! KillShell, NotebookEdit, Terminal) with [`tools::builtin`] in append-only
//! order ([`tools::declared`]: without the ones whose capability is missing), and the
//! [`scheduler::Scheduler`] that runs tool calls (docs/design.md §6–§7): one
//! pipeline of lookup, validation, permission, execution and result budget,
//! parallel batches of concurrency-safe calls, results in call order, the
//! Bash cascade, and exactly one result per call on every path.
//!
//! What this crate does not do: decide permissions (it asks a
//! [`riot_protocol::PermissionPolicy`]), talk to a person (a
//! [`riot_protocol::PermissionGate`]), or touch the world directly (every
//! file, process and clock goes through the capabilities in
//! [`riot_protocol::ToolEnv`]). It talks to the loop only through
//! `riot-protocol` types.
//!
//! ```
//! let names: Vec<String> = riot_tools::tools::builtin()
//!     .iter()
//!     .map(|t| t.name().to_owned())
//!     .collect();
//! assert_eq!(names[..3], ["Read", "Write", "Edit"]);
//! ```

mod diff;
pub mod edit_feedback;
mod encoding;
mod freshness;
pub mod project_files;
pub mod scheduler;
pub mod tools;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use scheduler::{Scheduler, SchedulerConfig};
pub use tools::{builtin, declared};
