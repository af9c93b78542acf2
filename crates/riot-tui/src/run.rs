//! The loop that ties [`App`] to a real terminal and a session: keys and
//! pastes from crossterm, the running turn's events, the gate's questions
//! and the session's status go into the app; its effects go to the
//! [`SessionHandle`]; finished rows go into the scrollback with
//! `insert_before`, and the live area is redrawn at most once per frame.

#![allow(clippy::disallowed_methods)] // a face: the real terminal and clock

use std::collections::HashMap;
use std::io::{BufWriter, Stdout, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event, EventStream, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{cursor, execute, terminal};
use futures::StreamExt;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Terminal, TerminalOptions, Viewport};
use riot_kernel::{KernelError, SessionHandle, Turn};
use riot_protocol::{
    AgentError, AgentEvent, CancelReason, ErrorKind, Message, PermissionOutcome, QuestionOutcome,
    SystemLevel, TerminalReason, TerminalUpdate, Typist, UserBlock,
};
use tokio::sync::{mpsc, oneshot};

use crate::app::{App, Config, Effect, Mcp};
use crate::attach::PastedImage;
use crate::gate::GateRequest;
use crate::menu::Entry;
use crate::theme::Theme;
use crate::view;

/// The shortest time between two frames of the live area.
pub const FRAME: Duration = Duration::from_millis(33);

/// Files offered for an `@` query.
const FILES_SHOWN: usize = 20;

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
    pub notifications: riot_kernel::config::notifications::NotificationSettings,
    /// The session's title as listed (a resumed session), for the
    /// terminal's title; a new session's is its first prompt.
    pub title: Option<String>,
}

/// Keeps the terminal's size as last handled, so ratatui never notices a
/// resize on its own in the middle of a frame, and answers where the
/// cursor is from what was drawn: ratatui asks on every resize, and asking
/// the terminal (a query answered on stdin) would race the event stream
/// that reads keys. Only the first position, before the stream exists, is
/// asked of the terminal.
struct Pinned<B: Backend> {
    inner: B,
    size: Size,
    cursor: Option<Position>,
}

impl<B: Backend> Pinned<B> {
    fn clamp(&self, p: Position) -> Position {
        Position::new(
            p.x.min(self.size.width.saturating_sub(1)),
            p.y.min(self.size.height.saturating_sub(1)),
        )
    }
}

impl<B: Backend> Backend for Pinned<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let mut last = None;
        self.inner.draw(content.inspect(|(x, y, cell)| {
            let width = u16::try_from(crate::wrap::width(cell.symbol())).unwrap_or(1);
            last = Some(Position::new(x.saturating_add(width), *y));
        }))?;
        if let Some(p) = last {
            self.cursor = Some(self.clamp(p));
        }
        Ok(())
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.inner.append_lines(n)?;
        if let Some(p) = self.cursor {
            self.cursor = Some(self.clamp(Position::new(p.x, p.y.saturating_add(n))));
        }
        Ok(())
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        match self.cursor {
            Some(p) => Ok(self.clamp(p)),
            None => {
                let p = self.inner.get_cursor_position()?;
                self.cursor = Some(p);
                Ok(p)
            }
        }
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        let p = position.into();
        self.inner.set_cursor_position(p)?;
        self.cursor = Some(p);
        Ok(())
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }

    // Setting a scrolling region moves the cursor home.
    fn scroll_region_up(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> Result<(), Self::Error> {
        self.inner.scroll_region_up(region, line_count)?;
        self.cursor = Some(Position::ORIGIN);
        Ok(())
    }

    fn scroll_region_down(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> Result<(), Self::Error> {
        self.inner.scroll_region_down(region, line_count)?;
        self.cursor = Some(Position::ORIGIN);
        Ok(())
    }
}

type Term = Terminal<Pinned<CrosstermBackend<BufWriter<Stdout>>>>;

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

/// Writes the app's finished rows above the live area, into the
/// terminal's scrollback. ratatui's `insert_before` makes the room (with
/// scrolling regions, so the live area is not repainted); the rows are
/// then written as text runs, one cursor move per row — ratatui's cell
/// diff would jump over every space with a cursor move of its own.
fn flush_rows(terminal: &mut Term, app: &mut App) -> std::io::Result<()> {
    let rows = app.take_scrollback();
    if rows.is_empty() {
        return Ok(());
    }
    let screen = terminal.backend().size.height;
    let live = terminal.get_frame().area().height;
    if live >= screen {
        // The live area is the whole screen: let ratatui pass the rows
        // through its top row.
        for chunk in rows.chunks(200) {
            let lines: Vec<Line<'static>> = chunk.to_vec();
            let height = u16::try_from(lines.len()).unwrap_or(u16::MAX);
            terminal.insert_before(height, |buf| {
                Paragraph::new(lines).render(buf.area, buf);
            })?;
        }
        return Ok(());
    }
    // At most the rows above the live area at a time, so the room made
    // is all on screen.
    let room = usize::from(screen - live);
    for chunk in rows.chunks(room) {
        let n = u16::try_from(chunk.len()).unwrap_or(u16::MAX);
        terminal.insert_before(n, |_| {})?;
        let first = terminal.get_frame().area().y.saturating_sub(n);
        let backend = terminal.backend_mut();
        for (i, line) in chunk.iter().enumerate() {
            let y = first + u16::try_from(i).unwrap_or(0);
            crossterm::queue!(backend.inner, cursor::MoveTo(0, y))?;
            write_row(&mut backend.inner, line)?;
            backend.cursor = Some(Position::new(0, y));
        }
        Write::flush(&mut backend.inner)?;
    }
    Ok(())
}

/// One row as styled text runs.
fn write_row(out: &mut impl Write, line: &Line<'_>) -> std::io::Result<()> {
    use crossterm::style::{Print, PrintStyledContent, StyledContent};
    use ratatui::backend::IntoCrossterm;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        if style == ratatui::style::Style::default() {
            crossterm::queue!(out, Print(span.content.as_ref()))?;
        } else {
            let content = StyledContent::new(style.into_crossterm(), span.content.as_ref());
            crossterm::queue!(out, PrintStyledContent(content))?;
        }
    }
    Ok(())
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
    mut questions: mpsc::UnboundedReceiver<GateRequest>,
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

async fn drive(
    handle: &SessionHandle,
    questions: &mut mpsc::UnboundedReceiver<GateRequest>,
    host: Arc<dyn Host>,
    options: RunOptions,
    app: &mut App,
    terminal: &mut Term,
) -> std::io::Result<()> {
    let started = Instant::now();
    let mut events = EventStream::new();
    let mut status = handle.watch();
    let mut turn: Option<Turn> = None;
    let mut permissions: HashMap<u64, oneshot::Sender<PermissionOutcome>> = HashMap::new();
    let mut answers: HashMap<u64, oneshot::Sender<QuestionOutcome>> = HashMap::new();
    let mut next_key = 0u64;
    let (files_tx, mut files_rx) = mpsc::unbounded_channel::<(String, Vec<String>)>();
    type ReadImages = (String, Vec<(String, PastedImage)>);
    let (images_tx, mut images_rx) = mpsc::unbounded_channel::<ReadImages>();
    let mut ticker = tokio::time::interval(FRAME);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_frame: Option<Instant> = None;
    let mut dirty = true;
    let mut ticks: u64 = 0;
    // The session's terminals, as they change (the open ones first).
    let (terminals_tx, mut terminals_rx) = mpsc::unbounded_channel::<TerminalUpdate>();
    handle
        .terminals()
        .subscribe(Arc::new(move |update: &TerminalUpdate| {
            let _ = terminals_tx.send(update.clone());
        }));
    // The person's keys for the terminals, written in order by a task of
    // their own: a program that does not read its input must not stop the
    // UI. A write that fails comes back as a note.
    let (writes_tx, mut writes_rx) = mpsc::unbounded_channel::<(String, Vec<u8>)>();
    let (failed_tx, mut failed_rx) = mpsc::unbounded_channel::<String>();
    let terminals = Arc::clone(handle.terminals());
    let writer = tokio::spawn(async move {
        while let Some((name, input)) = writes_rx.recv().await {
            if let Err(e) = terminals.write(&name, &input, Typist::Person).await {
                let _ = failed_tx.send(format!("Terminal {name}: {e}"));
            }
        }
    });
    let _writer = AbortOnDrop(writer);
    // A background agent's result starts a turn by itself while idle,
    // until the session refuses one.
    let mut auto_deliver = true;
    // Its background agents, read about twice a second.
    let background = handle.read(|s| s.background_tasks().clone()).await.ok();
    if let Some(prompt) = options.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
        app.submit_text(prompt);
    }
    loop {
        for effect in app.take_effects() {
            match effect {
                Effect::Prompt(text) => turn = start(handle, app, &text, Vec::new()),
                Effect::PromptWithImages { text, images } => {
                    turn = start(handle, app, &text, images);
                }
                Effect::ReadImages { pasted, paths } => {
                    let host = Arc::clone(&host);
                    let tx = images_tx.clone();
                    tokio::spawn(async move {
                        let mut results = Vec::with_capacity(paths.len());
                        for path in paths {
                            let image = host.image(&path).await;
                            results.push((path, image));
                        }
                        let _ = tx.send((pasted, results));
                    });
                }
                Effect::Queue(text) => {
                    handle.queue(&text);
                }
                Effect::SendQueued => {
                    let waiting: Vec<String> = handle
                        .pending()
                        .take_all()
                        .iter()
                        .filter_map(|m| match m {
                            Message::User(u) => u.content.iter().find_map(|b| match b {
                                UserBlock::Text { text } => Some(text.clone()),
                                _ => None,
                            }),
                            _ => None,
                        })
                        .collect();
                    if waiting.is_empty() {
                        app.event(&AgentEvent::Done {
                            reason: TerminalReason::Completed,
                        });
                    } else {
                        turn = start(handle, app, &waiting.join("\n\n"), Vec::new());
                    }
                }
                Effect::Cancel => {
                    handle.cancel(CancelReason::User);
                }
                Effect::SetMode(mode) => {
                    if let Err(e) = handle.set_mode(mode).await {
                        app.note(SystemLevel::Error, &e.to_string());
                    }
                }
                Effect::Permission { key, outcome } => {
                    if let Some(reply) = permissions.remove(&key) {
                        let _ = reply.send(outcome);
                    }
                }
                Effect::Questions { key, outcome } => {
                    if let Some(reply) = answers.remove(&key) {
                        let _ = reply.send(outcome);
                    }
                }
                Effect::FindFiles(query) => {
                    let host = Arc::clone(&host);
                    let tx = files_tx.clone();
                    tokio::spawn(async move {
                        let files = host.files(&query, FILES_SHOWN).await;
                        let _ = tx.send((query, files));
                    });
                }
                Effect::TerminalWrite { name, input } => {
                    let _ = writes_tx.send((name, input));
                }
                Effect::RewindPoints => match handle.rewind_points().await {
                    Ok(points) => app.rewind_points(
                        points
                            .into_iter()
                            .map(|p| crate::app::RewindChoice {
                                number: p.number,
                                text: p.text,
                                files: p.files,
                                in_history: p.in_history,
                            })
                            .collect(),
                    ),
                    Err(e) => app.note(SystemLevel::Warning, &format!("/rewind: {e}")),
                },
                Effect::StopTask(id) => {
                    if let Some(tasks) = &background {
                        tasks.stop(&id);
                        app.background(tasks.list());
                    }
                }
                Effect::Bell => {
                    let out = &mut terminal.backend_mut().inner;
                    out.write_all(b"\x07")?;
                    Write::flush(out)?;
                }
                Effect::Title(title) => {
                    let out = &mut terminal.backend_mut().inner;
                    // OSC 0 (icon name and window title), ended by ST.
                    write!(out, "\x1b]0;{title}\x1b\\")?;
                    Write::flush(out)?;
                }
                Effect::Exit => {}
            }
        }
        flush_rows(terminal, app)?;
        if app.exiting() {
            return Ok(());
        }
        let due = last_frame.is_none_or(|t| t.elapsed() >= FRAME);
        if dirty && due {
            app.tick(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
            app.set_height(terminal.get_frame().area().height);
            terminal.draw(|frame| view::draw(app, frame))?;
            last_frame = Some(Instant::now());
            dirty = false;
        }
        tokio::select! {
            biased;
            event = events.next() => {
                match event {
                    Some(Ok(Event::Key(key))) => {
                        app.key(key);
                        // A key is answered at once, not at the next frame.
                        last_frame = None;
                    }
                    Some(Ok(Event::Paste(text))) => app.paste(&text),
                    Some(Ok(Event::Resize(..))) => {
                        let (cols, rows) = terminal::size()?;
                        terminal.backend_mut().size = Size::new(cols, rows);
                        terminal.resize(Rect::new(0, 0, cols, rows))?;
                        app.resize(cols);
                        last_frame = None;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e),
                    None => return Ok(()),
                }
                dirty = true;
            }
            () = riots_waiting(handle), if auto_deliver && turn.is_none() && !app.busy() => {
                // A background agent ended while no turn ran: the model
                // hears of it now, as Claude Code's does, not only with
                // the person's next prompt.
                match handle.deliver() {
                    Ok(Some(started)) => {
                        app.delivery_started();
                        turn = Some(started);
                    }
                    Ok(None) | Err(KernelError::Busy) => {}
                    Err(e) => {
                        // Said once: the session cannot start turns now.
                        auto_deliver = false;
                        app.note(SystemLevel::Error, &e.to_string());
                    }
                }
                last_frame = None;
                dirty = true;
            }
            event = next_event(&mut turn) => {
                match event {
                    Some(event) => {
                        let done = matches!(event, AgentEvent::Done { .. });
                        app.event(&event);
                        if done {
                            turn = None;
                            app.cost(handle.cost().usd);
                        }
                    }
                    // The turn ended without `Done` (the session closed).
                    None => {
                        turn = None;
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
                dirty = true;
            }
            question = questions.recv() => {
                match question {
                    Some(GateRequest::Permission { request_id, detail, reply }) => {
                        next_key += 1;
                        permissions.insert(next_key, reply);
                        app.permission(next_key, request_id, detail);
                    }
                    Some(GateRequest::Questions { request, reply }) => {
                        next_key += 1;
                        answers.insert(next_key, reply);
                        app.questions(next_key, request);
                    }
                    None => {}
                }
                last_frame = None;
                dirty = true;
            }
            changed = status.changed() => {
                if changed.is_ok() {
                    let s = status.borrow_and_update().clone();
                    app.status(&s.model, s.mode);
                    dirty = true;
                }
            }
            read = images_rx.recv() => {
                if let Some((pasted, results)) = read {
                    app.images_read(&pasted, results);
                    last_frame = None;
                    dirty = true;
                }
            }
            update = terminals_rx.recv() => {
                if let Some(update) = update {
                    app.terminal(&update);
                    dirty = true;
                }
            }
            failed = failed_rx.recv() => {
                if let Some(text) = failed {
                    app.note(SystemLevel::Warning, &text);
                    dirty = true;
                }
            }
            found = files_rx.recv() => {
                if let Some((query, files)) = found {
                    app.files_found(&query, files);
                    dirty = true;
                }
            }
            _ = ticker.tick() => {
                ticks += 1;
                // MCP servers' states about once a second.
                if ticks % 30 == 1 {
                    app.mcp(host.mcp());
                    dirty = true;
                }
                if ticks % 15 == 1
                    && let Some(tasks) = &background
                    && app.background(tasks.list())
                {
                    dirty = true;
                }
                // The spinner and the elapsed time move while a turn runs.
                if app.busy() {
                    dirty = true;
                }
            }
        }
        // Drop the answer channels of questions the scheduler gave up on.
        permissions.retain(|_, reply| !reply.is_closed());
        answers.retain(|_, reply| !reply.is_closed());
    }
}

/// Stops a spawned task when the loop ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts a turn for `text` with `images` after it; a turn that is
/// already running gets the text queued instead (and the images are
/// said to be left out).
fn start(
    handle: &SessionHandle,
    app: &mut App,
    text: &str,
    images: Vec<riot_protocol::ImageSource>,
) -> Option<Turn> {
    let attached = images.len();
    match handle.prompt_with_images(text, images) {
        Ok(turn) => Some(turn),
        Err(KernelError::Busy) => {
            handle.queue(text);
            if attached > 0 {
                app.note(
                    SystemLevel::Warning,
                    "A turn was still running: the message was queued without its images; paste them again.",
                );
            }
            None
        }
        Err(e) => {
            app.event(&AgentEvent::Done {
                reason: TerminalReason::Error {
                    error: AgentError {
                        kind: ErrorKind::Other,
                        message: e.to_string(),
                    },
                },
            });
            None
        }
    }
}
