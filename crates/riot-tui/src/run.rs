//! The loop that ties [`App`] to a real terminal and a session: keys and
//! pastes from crossterm, the running turn's events, the session's questions
//! and the session's status go into the app; its effects go to the
//! [`SessionHandle`]; finished rows go into the scrollback with
//! `insert_before`, and the live area is redrawn at most once per frame.

#![allow(clippy::disallowed_methods)] // a face: the real terminal and clock

use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, EventStream, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{cursor, execute, terminal};
use futures::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Size;
use ratatui::{Terminal, TerminalOptions, Viewport};
use riot_kernel::{KernelError, QuestionAsked, SessionHandle, SessionStatus, SessionUpdate, Turn};
use riot_protocol::{
    AgentError, AgentEvent, ErrorKind, Message, SystemLevel, TerminalReason, UserBlock,
};
use tokio::sync::{mpsc, watch};

use crate::app::{App, Config, Mcp};
use crate::attach::PastedImage;
use crate::menu::Entry;
use crate::theme::Theme;

mod backend;
mod frames;
mod scrollback;
mod terminals;
mod wiring;

use backend::{Pinned, Term};
use frames::{Frames, draw_frame, terminal_event};
use scrollback::promote;
use terminals::{Writer, watch_updates};
use wiring::{ReadImages, Wiring};

/// The shortest time between two frames of the live area.
pub const FRAME: Duration = Duration::from_millis(33);

/// MCP servers by state (the status line).
pub type McpSummary = Mcp;

/// What the UI needs from the face beyond the session: the project's
/// files for `@`, image files pasted as paths, the MCP servers' states.
#[async_trait::async_trait]
pub trait Host: Send + Sync {
    /// Up to `limit` project files best matching `query`, best first.
    async fn files(&self, query: &str, limit: usize) -> Vec<String>;

    /// The image file at `path` as pasted (absolute, `~/…` or relative to
    /// the project), read and checked to be an image. A host that cannot
    /// read files says [`PastedImage::NotAFile`], and the paste stays text.
    async fn image(&self, path: &str) -> PastedImage {
        let _ = path;
        PastedImage::NotAFile
    }

    /// The MCP servers of the session's project, by state.
    fn mcp(&self) -> McpSummary {
        McpSummary::default()
    }
}

/// How the UI starts.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub theme: Theme,
    /// Sent as the first message.
    pub prompt: Option<String>,
    /// Show the session's history first (a resumed session).
    pub show_history: bool,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// The `notifications` setting: whether the bell rings and the
    /// terminal's title follows the session.
    pub notifications: riot_config::notifications::NotificationSettings,
    /// The session's title as listed (a resumed session), for the
    /// terminal's title; a new session's is its first prompt.
    pub title: Option<String>,
}

/// Raw mode and bracketed paste while the UI runs; restored on drop, also
/// when the loop fails or panics.
struct RawMode;

impl RawMode {
    fn enter() -> std::io::Result<Self> {
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        // Terminals that speak the kitty keyboard protocol then report
        // Shift+Enter; the others ignore the request.
        execute!(
            out,
            EnableBracketedPaste,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = execute!(
            out,
            PopKeyboardEnhancementFlags,
            DisableBracketedPaste,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// The height of the live area for a terminal of `rows` rows.
pub fn live_height(rows: u16) -> u16 {
    (rows / 2).clamp(10, 18).min(rows.saturating_sub(1).max(1))
}

/// The `/` menu's entries: the session's commands, then its skills (which
/// the model loads; picking one asks for it in words).
fn menu_entries(handle: &SessionHandle) -> Vec<Entry> {
    let mut entries: Vec<Entry> = handle
        .commands()
        .iter()
        .map(|c| Entry {
            name: c.name.clone(),
            description: match &c.argument_hint {
                Some(hint) => format!("{hint}  {}", c.description),
                None => c.description.clone(),
            },
            takes_arguments: c.argument_hint.is_some(),
        })
        .collect();
    entries.extend(handle.skills().skills().iter().map(|s| Entry {
        name: s.name.clone(),
        description:
            format!("skill: {}", s.description.split_whitespace().collect::<Vec<_>>().join(" ")),
        takes_arguments: true,
    }));
    entries
}

/// Earlier prompts of the session, for Up.
fn prompts_of(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User(u) if u.origin == riot_protocol::MessageOrigin::Person => {
                u.content.iter().find_map(|b| match b {
                    UserBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
            }
            _ => None,
        })
        .collect()
}

async fn next_event(turn: &mut Option<Turn>) -> Option<AgentEvent> {
    match turn {
        Some(t) => t.next().await,
        None => std::future::pending().await,
    }
}

/// Resolves when something of Riot's (a background agent's result) waits
/// for the model; never while nothing can come.
async fn riots_waiting(handle: &SessionHandle) {
    if !handle.background_result().await {
        std::future::pending::<()>().await;
    }
}

/// How a run of the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Messages in the session's history when it closed (none: nothing
    /// was saved).
    pub messages: usize,
}

/// Runs the terminal UI on `handle` until the person leaves, then closes
/// the session. The caller prints what follows (the resume command) on
/// the row where the live area was.
pub async fn run(
    handle: SessionHandle,
    host: Arc<dyn Host>,
    options: RunOptions,
) -> std::io::Result<Summary> {
    let messages = handle.messages().await.unwrap_or_default();
    let status = handle.status();
    let (cols, rows) = terminal::size()?;
    let mut app = App::new(Config {
        theme: options.theme,
        width: cols,
        model: status.model.clone(),
        mode: status.mode,
        commands: menu_entries(&handle),
        history: prompts_of(&messages),
        context_window: options.context_window,
        sandbox: Some(handle.sandbox().to_owned()),
        notifications: options.notifications,
    });
    let raw = RawMode::enter()?;
    if options.notifications.title {
        // Keep the terminal's own title, to put it back on exit (xterm's
        // title stack; terminals without one ignore it).
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x1b[22;0t");
        let _ = out.flush();
    }
    let title = options.notifications.title;
    let backend = Pinned {
        inner: CrosstermBackend::new(BufWriter::with_capacity(64 * 1024, std::io::stdout())),
        size: Size::new(cols, rows),
        cursor: None,
        mute: false,
        screen: None,
        visible: None,
    };
    let mut terminal = Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Inline(live_height(rows)),
        },
    )?;
    if options.show_history {
        app.history(&messages);
    }
    if let Some(title) = &options.title {
        app.set_session_title(title);
    }
    for notice in handle.notices() {
        app.note(SystemLevel::Warning, notice);
    }
    // The UI answers the session's questions; a session whose questions
    // another face took (or nobody answers) has none to show.
    let mut questions = handle.questions();
    let result = drive(
        &handle,
        &mut questions,
        host,
        options,
        &mut app,
        &mut terminal,
    )
    .await;
    // Leave the conversation on screen and the cursor where the live area
    // began, for what the caller prints.
    let top = terminal.get_frame().area().y;
    let out = terminal.backend_mut();
    let _ = execute!(
        out.inner,
        cursor::MoveTo(0, top),
        terminal::Clear(terminal::ClearType::FromCursorDown),
        cursor::Show
    );
    if title {
        let _ = out.inner.write_all(b"\x1b[23;0t");
    }
    let _ = Write::flush(&mut out.inner);
    drop(raw);
    let messages = handle.messages().await.map_or(0, |m| m.len());
    handle.close().await;
    result.map(|()| Summary { messages })
}

/// The loop: the app's effects go to the session, its finished rows into
/// the scrollback and the live area is drawn when a frame is due; then
/// whatever comes first — a key, the turn's event, the session's question,
/// the session's status, a result of the host — goes into the app.
async fn drive(
    handle: &SessionHandle,
    questions: &mut Option<mpsc::UnboundedReceiver<QuestionAsked>>,
    host: Arc<dyn Host>,
    options: RunOptions,
    app: &mut App,
    terminal: &mut Term,
) -> std::io::Result<()> {
    let mut frames = Frames::new();
    let mut events = EventStream::new();
    let mut status = handle.watch();
    let mut turn: Option<Turn> = None;
    let (files_tx, mut files_rx) = mpsc::unbounded_channel::<(String, Vec<String>)>();
    let (images_tx, mut images_rx) = mpsc::unbounded_channel::<ReadImages>();
    let mut ticker = tokio::time::interval(FRAME);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut updates_rx = watch_updates(handle);
    let mut writer = Writer::spawn(handle);
    // A background agent's result starts a turn by itself while idle,
    // until the session refuses one.
    let mut auto_deliver = true;
    app.background(handle.tasks());
    if let Some(prompt) = options.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
        app.submit_text(prompt);
    }
    loop {
        for effect in app.take_effects() {
            Wiring {
                handle,
                host: &host,
                images: &images_tx,
                files: &files_tx,
                writes: &writer.writes,
                turn: &mut turn,
            }
            .apply(effect, app, terminal)
            .await?;
        }
        let rows = app.take_scrollback();
        promote(terminal, &mut frames.shown, rows, app)?;
        if app.exiting() {
            return Ok(());
        }
        if frames.due() {
            draw_frame(terminal, app, &mut frames)?;
        }
        tokio::select! {
            biased;
            event = events.next() => {
                if !terminal_event(event, app, terminal, &mut frames)? {
                    return Ok(());
                }
            }
            () = riots_waiting(handle), if auto_deliver && turn.is_none() && !app.busy() => {
                // A background agent ended while no turn ran: the model
                // hears of it now, as Claude Code's does, not only with
                // the person's next prompt.
                auto_deliver = deliver_waiting(handle, app, &mut turn);
                frames.redraw_now();
            }
            event = next_event(&mut turn) => {
                turn_event(event, handle, app, &mut turn);
                frames.dirty = true;
            }
            question = next_question(questions) => {
                match question {
                    Some(asked) => wiring::ask(asked, app),
                    None => *questions = None,
                }
                frames.redraw_now();
            }
            changed = status.changed() => {
                if changed.is_ok() {
                    show_status(&mut status, app);
                    frames.dirty = true;
                }
            }
            read = images_rx.recv() => {
                if let Some((pasted, results)) = read {
                    app.images_read(&pasted, results);
                    frames.redraw_now();
                }
            }
            Some(update) = updates_rx.recv() => {
                match update {
                    SessionUpdate::Terminal(update) => {
                        app.terminal(&update);
                        frames.dirty = true;
                    }
                    // A background agent started, made a call or ended.
                    SessionUpdate::Task(_) => {
                        if app.background(handle.tasks()) {
                            frames.dirty = true;
                        }
                    }
                    SessionUpdate::Queue(_) => {}
                }
            }
            failed = writer.failed.recv() => {
                if let Some(text) = failed {
                    app.note(SystemLevel::Warning, &text);
                    frames.dirty = true;
                }
            }
            found = files_rx.recv() => {
                if let Some((query, files)) = found {
                    app.files_found(&query, files);
                    frames.dirty = true;
                }
            }
            _ = ticker.tick() => frames.tick(app, host.as_ref()),
        }
    }
}

/// The session's next question; never, once there are no more.
async fn next_question(
    questions: &mut Option<mpsc::UnboundedReceiver<QuestionAsked>>,
) -> Option<QuestionAsked> {
    match questions {
        Some(stream) => stream.recv().await,
        None => std::future::pending().await,
    }
}

/// Starts a turn for what of Riot's waits for the model (a background
/// agent's result). `false` when the session cannot start turns now
/// (said once, as a note).
fn deliver_waiting(handle: &SessionHandle, app: &mut App, turn: &mut Option<Turn>) -> bool {
    match handle.deliver() {
        Ok(Some(started)) => {
            app.delivery_started();
            *turn = Some(started);
        }
        Ok(None) | Err(KernelError::Busy) => {}
        Err(e) => {
            // Said once: the session cannot start turns now.
            app.note(SystemLevel::Error, &e.to_string());
            return false;
        }
    }
    true
}

/// Takes one event of the running turn into the app; the turn is over at
/// its `Done`, or when it ends without one.
fn turn_event(
    event: Option<AgentEvent>,
    handle: &SessionHandle,
    app: &mut App,
    turn: &mut Option<Turn>,
) {
    match event {
        Some(event) => {
            let done = matches!(event, AgentEvent::Done { .. });
            app.event(&event);
            if done {
                *turn = None;
                app.cost(handle.cost().usd);
            }
        }
        // The turn ended without `Done` (the session closed).
        None => {
            *turn = None;
            app.event(&AgentEvent::Done {
                reason: TerminalReason::Error {
                    error: AgentError {
                        kind: ErrorKind::Internal,
                        message: "The session stopped.".into(),
                    },
                },
            });
        }
    }
}

/// Shows the session's status as it changed: its model, permission mode
/// and thinking level.
fn show_status(status: &mut watch::Receiver<SessionStatus>, app: &mut App) {
    let s = status.borrow_and_update().clone();
    app.status(&s.model, s.mode);
    app.thinking_level(s.thinking);
}
