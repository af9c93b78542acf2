//! # riot-runtime — the real world behind the capability traits
//!
//! The real implementations of `riot-protocol`'s capability traits:
//!
//! - [`RealFs`] — the file system, with atomic writes (a temporary file in
//!   the same directory, then a rename) that keep an existing file's mode.
//! - [`RealProcessRunner`] — subprocesses, each in its own process group
//!   (with `PR_SET_PDEATHSIG` on Linux), stdin `/dev/null`, head + tail
//!   capture, and the whole group killed on timeout, cancellation and drop;
//!   background jobs with capped output buffers.
//! - [`PipedChild`] — a long-lived child spoken to over its pipes (an MCP
//!   stdio server), owned the same way: its own process group, killed
//!   whole on drop.
//! - [`PtyTerminals`] — a session's terminals: programs in
//!   pseudo-terminals, each in its own process group (killed on close and
//!   when the session ends), the screen rendered by a terminal emulator.
//! - [`RealSandbox`] — the OS sandbox on Linux: bubblewrap with Landlock
//!   and seccomp applied inside by `riot __sandbox-exec`
//!   ([`sandbox::helper`]), or Landlock and seccomp alone; probed once,
//!   never assumed. [`SandboxedRunner`] wraps a runner so every command
//!   it starts runs sandboxed.
//! - [`SystemClock`] — wall-clock time and tokio sleeping.
//! - [`RandomIds`] — random ids with a readable prefix.
//! - [`HttpWeb`] — DNS and one HTTP(S) GET (reqwest, rustls with ring),
//!   connecting only to the addresses the caller checked.
//!
//! This is the only library crate allowed the raw non-deterministic std and
//! tokio APIs; each module that uses them says so at its top. It holds no
//! policy: what may run, and where, is decided before a call reaches here.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use riot_protocol::FileSystem;
//! use riot_runtime::RealFs;
//!
//! RealFs.write_atomic(std::path::Path::new("/tmp/riot-demo.txt"), b"hi\n").await?;
//! # Ok(())
//! # }
//! ```

mod background;
mod browser;
mod capture;
mod clock;
mod fs;
mod group;
mod ids;
mod piped;
mod plain;
mod process;
pub mod sandbox;
mod terminal;
mod web;

pub use browser::{ChromiumBrowser, ChromiumHost, find_chromium};
pub use clock::SystemClock;
pub use fs::RealFs;
pub use ids::RandomIds;
pub use piped::PipedChild;
pub use process::RealProcessRunner;
pub use sandbox::{Attach, RealSandbox, SandboxRewrite, SandboxedRunner};
pub use terminal::{
    OUTPUT_KEEP_BYTES, PtyTerminalHost, PtyTerminals, SpecWrapper, describe_input, pty_command,
    terminal_process,
};
pub use web::HttpWeb;
