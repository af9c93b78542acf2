#![allow(clippy::disallowed_methods)] // the real terminals: pseudo-terminal children, reader threads, tokio's timer for waits

//! [`PtyTerminals`]: a session's terminals in pseudo-terminals
//! (portable-pty), each screen rendered by a terminal emulator (vt100) and
//! the new output kept as plain text (escape codes removed with vte).
//!
//! Each program is started by `bash -c` as a session leader (portable-pty
//! calls `setsid`), so its process group is its pid; a [`GroupGuard`] owns
//! that group — killed on close, on drop (the session ends) and, through
//! its watchdog, when riot itself is SIGKILLed. A terminal's command line
//! becomes a [`ProcessSpec`] ([`terminal_process`]) that the session's OS
//! sandbox rewrites before it starts ([`PtyTerminals::sandboxed`]), as it
//! rewrites the process runner's commands.

mod foreground;
mod screen;
mod spawn;

use std::io::Write;
use std::num::NonZeroU16;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use portable_pty::{ChildKiller, CommandBuilder, MasterPty, PtySize};
use riot_protocol::{
    ProcessSpec, TerminalError, TerminalExit, TerminalForeground, TerminalHost, TerminalInfo,
    TerminalSink, TerminalSize, TerminalSpec, TerminalUpdate, TerminalView, Terminals, Typist,
    WaitEnd,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::group::GroupGuard;
use crate::plain::PlainText;

use self::foreground::group_programs;
use self::screen::{Scrolled, screen_now, screen_rows, screen_update, take_view};

/// New output kept between reads (the start is cut beyond it).
pub const OUTPUT_KEEP_BYTES: usize = 64 * 1024;
/// Faces get at most one screen per this many milliseconds per terminal.
const SCREEN_EVERY_MS: u64 = 40;
/// `open` waits up to this long for the program's first output …
const OPEN_FIRST_OUTPUT_MS: u64 = 1_500;
/// … and then until it has been quiet this long.
const QUIET_MS: u64 = 150;

/// Makes [`PtyTerminals`], one set per session.
#[derive(Debug, Default, Clone, Copy)]
pub struct PtyTerminalHost;

impl TerminalHost for PtyTerminalHost {
    fn session_terminals(&self, sandbox: Option<SpecWrapper>) -> Arc<dyn Terminals> {
        Arc::new(match sandbox {
            Some(rewrite) => PtyTerminals::sandboxed(rewrite),
            None => PtyTerminals::default(),
        })
    }
}

/// A session's terminals. Dropping it kills every terminal's group.
#[derive(Default)]
pub struct PtyTerminals {
    terms: Mutex<Vec<Arc<Term>>>,
    sinks: Arc<Mutex<Vec<TerminalSink>>>,
    /// The session's OS sandbox, when enforced.
    wrapper: Option<SpecWrapper>,
}

impl std::fmt::Debug for PtyTerminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyTerminals")
            .field("terms", &*lock(&self.terms))
            .field("watchers", &lock(&self.sinks).len())
            .finish()
    }
}

/// What the reader and waiter threads share with the rest.
struct Core {
    name: String,
    state: Mutex<State>,
    /// Bumped on every change (output, exit).
    tick: watch::Sender<u64>,
}

struct State {
    screen: vt100::Parser<Scrolled>,
    plain: vte::Parser,
    text: PlainText,
    typed: Vec<String>,
    exit: Option<TerminalExit>,
}

/// One terminal; dropping it kills its process group.
struct Term {
    core: Arc<Core>,
    command: String,
    /// Started without the session's sandbox rewrite.
    outside_sandbox: bool,
    pid: Option<u32>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    /// Kept open for the terminal's life; asked for its foreground group.
    master: Mutex<Box<dyn MasterPty + Send>>,
    killer: Mutex<Box<dyn ChildKiller + Send + Sync>>,
    guard: GroupGuard,
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("name", &self.core.name)
            .field("command", &self.command)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Term {
    fn kill(&self) {
        self.guard.kill_now();
        let _ = lock(&self.killer).kill();
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        self.kill();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Rewrites the process a terminal starts (the OS sandbox puts itself in
/// front of the command, as it does for the process runner's).
pub type SpecWrapper = riot_protocol::SpecRewrite;

/// The process a terminal runs: `bash -c` with the command line, never
/// `-l` or `-i` (rc files make behaviour machine-specific), `TERM` set.
pub fn terminal_process(spec: &TerminalSpec) -> ProcessSpec {
    let mut env_set = vec![("TERM".to_owned(), "xterm-256color".to_owned())];
    env_set.extend(spec.env_set.iter().cloned());
    ProcessSpec {
        program: "bash".into(),
        args: vec!["-c".into(), spec.command.clone()],
        cwd: spec.cwd.clone(),
        env_set,
        env_remove: spec.env_remove.clone(),
        timeout_ms: None,
        capture: riot_protocol::CaptureLimit::default(),
        stdin: None,
        // A terminal's open and what is typed into it are asked about (or
        // the person chose bypass): `.git` stays writable, as for a
        // command the person allowed.
        undoable_only: false,
    }
}

/// A process as portable-pty starts it.
pub fn pty_command(process: &ProcessSpec) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(&process.program);
    cmd.args(&process.args);
    cmd.cwd(&process.cwd);
    for key in &process.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in &process.env_set {
        cmd.env(key, value);
    }
    cmd
}

impl PtyTerminals {
    /// Terminals whose programs start through `rewrite` (the session's OS
    /// sandbox), but for one opened with
    /// [`TerminalSpec::outside_sandbox`].
    pub fn sandboxed(rewrite: SpecWrapper) -> Self {
        Self {
            terms: Mutex::default(),
            sinks: Arc::default(),
            wrapper: Some(rewrite),
        }
    }

    fn find(&self, name: &str) -> Result<Arc<Term>, TerminalError> {
        let terms = lock(&self.terms);
        terms
            .iter()
            .find(|t| t.core.name == name)
            .cloned()
            .ok_or_else(|| TerminalError::Unknown {
                name: name.to_owned(),
                open: terms.iter().map(|t| t.core.name.clone()).collect(),
            })
    }

    fn emit(sinks: &Mutex<Vec<TerminalSink>>, update: &TerminalUpdate) {
        let sinks = lock(sinks).clone();
        for sink in sinks {
            sink(update);
        }
    }

    /// Sends the screen to the faces while it changes, throttled, until
    /// the program has ended.
    fn start_screens(&self, core: &Arc<Core>) {
        let core = Arc::clone(core);
        let sinks = Arc::clone(&self.sinks);
        let mut rx = core.tick.subscribe();
        tokio::spawn(async move {
            loop {
                if rx.changed().await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(SCREEN_EVERY_MS)).await;
                rx.borrow_and_update();
                let (update, exit) = {
                    let mut state = lock(&core.state);
                    (screen_update(&core.name, &mut state), state.exit)
                };
                Self::emit(&sinks, &update);
                if let Some(exit) = exit {
                    Self::emit(
                        &sinks,
                        &TerminalUpdate::Exited {
                            name: core.name.clone(),
                            exit,
                        },
                    );
                    break;
                }
            }
        });
    }
}

/// Waits until the output has been quiet for [`QUIET_MS`], having first
/// waited up to `first_ms` for any output at all; never longer than
/// `max_ms` in all.
async fn settle(core: &Core, first_ms: u64, max_ms: u64) {
    let mut rx = core.tick.subscribe();
    let _ = tokio::time::timeout(Duration::from_millis(max_ms), async {
        let first = tokio::time::timeout(Duration::from_millis(first_ms), rx.changed()).await;
        if !matches!(first, Ok(Ok(()))) {
            return;
        }
        while let Ok(Ok(())) =
            tokio::time::timeout(Duration::from_millis(QUIET_MS), rx.changed()).await
        {}
    })
    .await;
}

/// Input bytes written out for people: printable text as is, keys by name.
pub fn describe_input(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\r' | '\n' => out.push_str("<Enter>"),
            '\t' => out.push_str("<Tab>"),
            '\u{1b}' => out.push_str("<Esc>"),
            '\u{7f}' => out.push_str("<Backspace>"),
            c if (c as u32) < 0x20 => {
                out.push_str("<C-");
                out.push(char::from(b'a' + (c as u8) - 1));
                out.push('>');
            }
            c => out.push(c),
        }
    }
    out
}

#[async_trait]
impl Terminals for PtyTerminals {
    fn available(&self) -> bool {
        true
    }

    async fn open(&self, spec: TerminalSpec) -> Result<TerminalView, TerminalError> {
        if lock(&self.terms).iter().any(|t| t.core.name == spec.name) {
            return Err(TerminalError::NameTaken(spec.name));
        }
        let term = self.spawn_term(&spec)?;
        {
            let mut terms = lock(&self.terms);
            if terms.iter().any(|t| t.core.name == spec.name) {
                return Err(TerminalError::NameTaken(spec.name));
            }
            terms.push(Arc::clone(&term));
        }
        Self::emit(
            &self.sinks,
            &TerminalUpdate::Opened {
                name: spec.name.clone(),
                command: spec.command.clone(),
                size: spec.size,
            },
        );
        self.start_screens(&term.core);
        settle(&term.core, OPEN_FIRST_OUTPUT_MS, OPEN_FIRST_OUTPUT_MS * 2).await;
        Ok(take_view(&term.core, &term.command))
    }

    async fn write(&self, name: &str, input: &[u8], by: Typist) -> Result<(), TerminalError> {
        let term = self.find(name)?;
        if lock(&term.core.state).exit.is_some() {
            return Err(TerminalError::InputClosed);
        }
        if by == Typist::Person {
            lock(&term.core.state).typed.push(describe_input(input));
        }
        let writer = Arc::clone(&term.writer);
        let bytes = input.to_vec();
        // A program that stops reading fills the pty's buffer: write off the
        // async threads.
        tokio::task::spawn_blocking(move || {
            let mut w = lock(&writer);
            w.write_all(&bytes)?;
            w.flush()
        })
        .await
        .map_err(|e| TerminalError::Io(e.to_string()))?
        .map_err(|e| TerminalError::Io(e.to_string()))?;
        Ok(())
    }

    async fn resize(&self, name: &str, size: TerminalSize) -> Result<TerminalSize, TerminalError> {
        let size = size.clamped();
        let term = self.find(name)?;
        lock(&term.master)
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| TerminalError::Io(e.to_string()))?;
        if let (Some(rows), Some(cols)) = (NonZeroU16::new(size.rows), NonZeroU16::new(size.cols)) {
            lock(&term.core.state).screen.set_size(rows, cols);
        }
        Self::emit(
            &self.sinks,
            &TerminalUpdate::Resized {
                name: name.to_owned(),
                size,
            },
        );
        // The screen at its new size goes out like any change.
        term.core.tick.send_modify(|t| *t += 1);
        Ok(size)
    }

    async fn settle(&self, name: &str, max_ms: u64) -> Result<(), TerminalError> {
        let term = self.find(name)?;
        settle(&term.core, max_ms.min(QUIET_MS * 4), max_ms).await;
        Ok(())
    }

    async fn read(&self, name: &str) -> Result<TerminalView, TerminalError> {
        let term = self.find(name)?;
        Ok(take_view(&term.core, &term.command))
    }

    async fn wait(
        &self,
        name: &str,
        pattern: &str,
        timeout_ms: u64,
        cancel: CancellationToken,
    ) -> Result<(WaitEnd, TerminalView), TerminalError> {
        let re = regex::RegexBuilder::new(pattern)
            .multi_line(true)
            .size_limit(1 << 20)
            .build()
            .map_err(|_| TerminalError::BadPattern(pattern.to_owned()))?;
        let term = self.find(name)?;
        let mut rx = term.core.tick.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
        let end = loop {
            rx.borrow_and_update();
            {
                let state = lock(&term.core.state);
                let screen = state.screen.screen();
                let haystack = if screen.alternate_screen() {
                    screen_rows(screen).join("\n")
                } else {
                    state.text.text.clone()
                };
                if let Some(m) = re.find(&haystack) {
                    break WaitEnd::Matched(m.as_str().to_owned());
                }
                if state.exit.is_some() {
                    break WaitEnd::Exited;
                }
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        break WaitEnd::Exited;
                    }
                }
                () = tokio::time::sleep_until(deadline) => break WaitEnd::TimedOut,
                () = cancel.cancelled() => break WaitEnd::Cancelled,
            }
        };
        Ok((end, take_view(&term.core, &term.command)))
    }

    async fn close(&self, name: &str) -> Result<TerminalView, TerminalError> {
        let term = self.find(name)?;
        lock(&self.terms).retain(|t| !Arc::ptr_eq(t, &term));
        term.kill();
        // The waiter thread records the exit once the kernel reaps it.
        let mut rx = term.core.tick.subscribe();
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while lock(&term.core.state).exit.is_none() {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        let view = take_view(&term.core, &term.command);
        Self::emit(
            &self.sinks,
            &TerminalUpdate::Closed {
                name: name.to_owned(),
            },
        );
        Ok(view)
    }

    fn list(&self) -> Vec<TerminalInfo> {
        lock(&self.terms)
            .iter()
            .map(|t| TerminalInfo {
                name: t.core.name.clone(),
                command: t.command.clone(),
                running: lock(&t.core.state).exit.is_none(),
                outside_sandbox: t.outside_sandbox,
            })
            .collect()
    }

    /// The pseudo-terminal's foreground process group (`tcgetpgrp` on its
    /// master, which also sees through the sandbox's PID namespace) and
    /// the names `/proc` gives its processes.
    fn foreground(&self, name: &str) -> TerminalForeground {
        let Ok(term) = self.find(name) else {
            return TerminalForeground::Unknown;
        };
        if lock(&term.core.state).exit.is_some() {
            return TerminalForeground::Unknown;
        }
        let proc = Path::new("/proc");
        if !proc.join("self/stat").exists() {
            return TerminalForeground::NotReported;
        }
        match lock(&term.master).process_group_leader() {
            Some(group) => group_programs(proc, group),
            None => TerminalForeground::Unknown,
        }
    }

    fn take_person_typed(&self) -> Vec<(String, String)> {
        lock(&self.terms)
            .iter()
            .filter_map(|term| {
                let typed = std::mem::take(&mut lock(&term.core.state).typed);
                (!typed.is_empty()).then(|| (term.core.name.clone(), typed.concat()))
            })
            .collect()
    }

    fn subscribe(&self, sink: TerminalSink) {
        // A new watcher sees what is already open.
        for term in lock(&self.terms).iter() {
            sink(&TerminalUpdate::Opened {
                name: term.core.name.clone(),
                command: term.command.clone(),
                size: {
                    let state = lock(&term.core.state);
                    let (rows, cols) = state.screen.screen().size();
                    TerminalSize {
                        rows: rows.get(),
                        cols: cols.get(),
                    }
                },
            });
            sink(&screen_now(&term.core.name, &lock(&term.core.state)));
        }
        lock(&self.sinks).push(sink);
    }

    fn close_all(&self) {
        let terms = std::mem::take(&mut *lock(&self.terms));
        for term in &terms {
            term.kill();
            Self::emit(
                &self.sinks,
                &TerminalUpdate::Closed {
                    name: term.core.name.clone(),
                },
            );
        }
    }
}

impl Drop for PtyTerminals {
    fn drop(&mut self) {
        for term in lock(&self.terms).iter() {
            term.kill();
        }
    }
}

#[cfg(test)]
#[path = "terminal_tests.rs"]
mod tests;
