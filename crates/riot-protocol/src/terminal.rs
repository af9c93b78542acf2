//! The terminals capability (docs/design.md §6.7; user doc
//! `docs/terminals.md`): long-lived programs — a dev server, a watcher, a
//! REPL — in pseudo-terminals the agent and the person share.
//!
//! The Terminal tool reaches them only through [`Terminals`]; the real
//! implementation (riot-runtime's `PtyTerminals`) runs each in its own
//! process group and renders its screen with a terminal emulator, so a
//! read is text, never raw escape codes. Faces watch them through
//! [`Terminals::subscribe`] and type into them as [`Typist::Person`].

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Rows and columns of a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalSize {
    pub rows: u16,
    pub cols: u16,
}

impl TerminalSize {
    /// The smallest size a face may set: 5 rows of 20 columns.
    pub const MIN: TerminalSize = TerminalSize { rows: 5, cols: 20 };
    /// The largest: 200 rows of 500 columns.
    pub const MAX: TerminalSize = TerminalSize {
        rows: 200,
        cols: 500,
    };

    /// This size within [`Self::MIN`] and [`Self::MAX`].
    pub fn clamped(self) -> Self {
        Self {
            rows: self.rows.clamp(Self::MIN.rows, Self::MAX.rows),
            cols: self.cols.clamp(Self::MIN.cols, Self::MAX.cols),
        }
    }
}

impl Default for TerminalSize {
    /// 30 rows of 100 columns: room for a stack trace without a huge read.
    fn default() -> Self {
        Self {
            rows: 30,
            cols: 100,
        }
    }
}

/// What to start in a new terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalSpec {
    /// The name the agent and the person address it by.
    pub name: String,
    /// A command line, run by `bash -c` (never `-l` or `-i`).
    pub command: String,
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env_set: Vec<(String, String)>,
    /// Variables removed from it (model keys).
    pub env_remove: Vec<String>,
    pub size: TerminalSize,
    /// Start it outside the session's OS sandbox (a `dangerouslyDisableSandbox`
    /// open the person allowed).
    pub outside_sandbox: bool,
}

/// Who typed into a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typist {
    Agent,
    /// The person, from a face; the agent's next read says so.
    Person,
}

/// How a terminal's program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalExit {
    /// `None` when a signal ended it.
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// A terminal as a read sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TerminalView {
    pub name: String,
    pub command: String,
    /// The rendered screen: one line per row, trailing spaces and trailing
    /// empty rows removed.
    pub screen: String,
    /// Row and column of the cursor, from 0.
    pub cursor: (u16, u16),
    /// The program uses the alternate screen (an editor, `less`, a curses
    /// program): [`TerminalView::output`] is empty, the screen is the truth.
    pub full_screen: bool,
    /// The text the program printed since the last read, escape codes
    /// removed (the start cut when longer than the kept amount).
    pub output: String,
    /// Bytes of that text cut from its start.
    pub omitted_bytes: u64,
    /// What the person typed since the last read, keys written out
    /// (`<Enter>`, `<C-c>`).
    pub person_typed: Vec<String>,
    /// `Some` once the program has ended.
    pub exit: Option<TerminalExit>,
}

/// How a [`Terminals::wait`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitEnd {
    /// The pattern matched this text.
    Matched(String),
    TimedOut,
    /// The program ended without the pattern appearing.
    Exited,
    Cancelled,
}

/// One open terminal, for lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalInfo {
    pub name: String,
    pub command: String,
    pub running: bool,
    /// Its program runs outside the session's OS sandbox (opened with
    /// `dangerouslyDisableSandbox` while a sandbox is enforced): whatever
    /// is typed into it runs outside too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside_sandbox: bool,
}

/// What a terminal runs in its foreground now: the programs that what is
/// typed into it reaches ([`Terminals::foreground`]). A program the
/// terminal was opened with may have started another since (a shell runs
/// `python3`; `python3` runs a shell).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TerminalForeground {
    /// The processes of the pseudo-terminal's foreground process group,
    /// each by every name the system gives it: its command name
    /// (`/proc/PID/comm`) and its executable's file name. Never empty.
    Programs(Vec<String>),
    /// The system does not say which programs these are (no `/proc`):
    /// only the command the terminal was opened with is known.
    NotReported,
    /// It cannot be told now: no such terminal, its program has ended, or
    /// its foreground process group could not be read.
    #[default]
    Unknown,
}

/// What faces are told about terminals as it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalUpdate {
    Opened {
        name: String,
        command: String,
        size: TerminalSize,
    },
    /// The whole rendered screen (sent at most every few tens of
    /// milliseconds while it changes).
    Screen {
        name: String,
        /// Every row, trailing spaces removed.
        rows: Vec<String>,
        cursor_row: u16,
        cursor_col: u16,
        full_screen: bool,
        /// The rows that scrolled off the top of the (main) screen since
        /// the last screen, oldest first: a face keeps them as scrollback.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scrolled: Vec<String>,
    },
    /// The terminal has a new size (a face resized it); the next screen
    /// has its rows.
    Resized {
        name: String,
        size: TerminalSize,
    },
    Exited {
        name: String,
        exit: TerminalExit,
    },
    Closed {
        name: String,
    },
}

impl TerminalUpdate {
    /// The terminal it is about.
    pub fn name(&self) -> &str {
        match self {
            Self::Opened { name, .. }
            | Self::Screen { name, .. }
            | Self::Resized { name, .. }
            | Self::Exited { name, .. }
            | Self::Closed { name } => name,
        }
    }
}

/// Receives [`TerminalUpdate`]s.
pub type TerminalSink = Arc<dyn Fn(&TerminalUpdate) + Send + Sync>;

/// Why a terminal operation failed; each message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TerminalError {
    #[error("terminals are not available in this session")]
    Unavailable,
    #[error("no terminal named `{name}`; open terminals: {}", list_or_none(.open))]
    Unknown { name: String, open: Vec<String> },
    #[error("a terminal named `{0}` is already open; pick another name, or close it first")]
    NameTaken(String),
    #[error("could not start the terminal: {0}")]
    Spawn(String),
    #[error("`{0}` is not a valid regular expression")]
    BadPattern(String),
    #[error("the terminal's program has ended; its input is closed (read it, then close it)")]
    InputClosed,
    #[error("terminal I/O failed: {0}")]
    Io(String),
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A session's terminals. Every terminal is killed with its process group
/// when closed and when the value is dropped (the session ends).
#[async_trait]
pub trait Terminals: Send + Sync + std::fmt::Debug {
    /// Whether terminals can be opened at all (the Terminal tool is
    /// declared only then).
    fn available(&self) -> bool;

    /// Starts `spec.command`; returns the first view once the program has
    /// had a moment to draw.
    async fn open(&self, spec: TerminalSpec) -> Result<TerminalView, TerminalError>;

    /// Types `input` (bytes, control keys included).
    async fn write(&self, name: &str, input: &[u8], by: Typist) -> Result<(), TerminalError>;

    /// Returns once the terminal's output has been quiet for a moment
    /// (or after at most `max_ms`): what a write's answer needs to appear.
    async fn settle(&self, name: &str, max_ms: u64) -> Result<(), TerminalError>;

    /// The screen, and what was printed and typed by the person since the
    /// last read (which this read consumes).
    async fn read(&self, name: &str) -> Result<TerminalView, TerminalError>;

    /// Waits until `pattern` (a regular expression) matches the output not
    /// yet read — or the screen, for a full-screen program — then reads.
    async fn wait(
        &self,
        name: &str,
        pattern: &str,
        timeout_ms: u64,
        cancel: CancellationToken,
    ) -> Result<(WaitEnd, TerminalView), TerminalError>;

    /// Gives terminal `name` a new size (clamped to [`TerminalSize::MIN`]
    /// and [`TerminalSize::MAX`]); its program is told (SIGWINCH). Returns
    /// the size set.
    async fn resize(&self, name: &str, size: TerminalSize) -> Result<TerminalSize, TerminalError> {
        let _ = (name, size);
        Err(TerminalError::Unavailable)
    }

    /// Kills the program and its whole process group; the last view.
    async fn close(&self, name: &str) -> Result<TerminalView, TerminalError>;

    /// The open terminals, in opening order.
    fn list(&self) -> Vec<TerminalInfo>;

    /// What terminal `name` runs in its foreground now — what typed input
    /// would reach — for judging a write before it is made. Without a
    /// way to tell, [`TerminalForeground::Unknown`].
    fn foreground(&self, _name: &str) -> TerminalForeground {
        TerminalForeground::Unknown
    }

    /// What the person typed into each terminal since the agent last read
    /// it, as `(name, keys written out)`, consuming it: the session tells
    /// the model with the person's next prompt, so it learns of the typing
    /// even if it never reads that terminal again.
    fn take_person_typed(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Calls `sink` with every update from now on (faces).
    fn subscribe(&self, sink: TerminalSink);

    /// Kills every terminal (the session ends).
    fn close_all(&self);
}

/// No terminals: the Terminal tool is not declared.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTerminals;

#[async_trait]
impl Terminals for NoTerminals {
    fn available(&self) -> bool {
        false
    }

    async fn open(&self, _spec: TerminalSpec) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }

    async fn write(&self, _name: &str, _input: &[u8], _by: Typist) -> Result<(), TerminalError> {
        Err(TerminalError::Unavailable)
    }

    async fn settle(&self, _name: &str, _max_ms: u64) -> Result<(), TerminalError> {
        Err(TerminalError::Unavailable)
    }

    async fn read(&self, _name: &str) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }

    async fn wait(
        &self,
        _name: &str,
        _pattern: &str,
        _timeout_ms: u64,
        _cancel: CancellationToken,
    ) -> Result<(WaitEnd, TerminalView), TerminalError> {
        Err(TerminalError::Unavailable)
    }

    async fn close(&self, _name: &str) -> Result<TerminalView, TerminalError> {
        Err(TerminalError::Unavailable)
    }

    fn list(&self) -> Vec<TerminalInfo> {
        Vec::new()
    }

    fn subscribe(&self, _sink: TerminalSink) {}

    fn close_all(&self) {}
}

/// Makes a session's [`Terminals`] (the kernel asks once per session).
pub trait TerminalHost: Send + Sync + std::fmt::Debug {
    /// The terminals of a session whose OS sandbox, when enforced, puts
    /// each program in it with `sandbox` (a terminal opened with
    /// [`TerminalSpec::outside_sandbox`] is not rewritten).
    fn session_terminals(&self, sandbox: Option<crate::SpecRewrite>) -> Arc<dyn Terminals>;
}

impl TerminalHost for NoTerminals {
    fn session_terminals(&self, _sandbox: Option<crate::SpecRewrite>) -> Arc<dyn Terminals> {
        Arc::new(NoTerminals)
    }
}
