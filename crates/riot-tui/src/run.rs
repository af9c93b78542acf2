//! The loop that ties [`App`] to a real terminal and a session: keys and
//! pastes from crossterm, the running turn's events, the gate's questions
//! and the session's status go into the app; its effects go to the
//! [`SessionHandle`]; finished rows go into the scrollback with
//! `insert_before`, and the live area is redrawn at most once per frame.

#![allow(clippy::disallowed_methods)] // a face: the real terminal and clock

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, Event, EventStream, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::{cursor, execute, terminal};
use futures::StreamExt;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use riot_kernel::{KernelError, SessionHandle, SessionStatus, Turn};
use riot_protocol::{
    AgentError, AgentEvent, CancelReason, ErrorKind, Message, PermissionOutcome, QuestionOutcome,
    SystemLevel, TerminalReason, TerminalUpdate, Typist, UserBlock,
};
use tokio::sync::{mpsc, oneshot, watch};

use crate::app::{App, Config, Effect, Mcp};
use crate::attach::PastedImage;
use crate::gate::GateRequest;
use crate::menu::Entry;
use crate::theme::Theme;
use crate::view;

mod backend;
mod scrollback;

use backend::{Pinned, Term};
use scrollback::{Shown, promote};

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

/// Images read from the paths a paste named, for the pasted text.
type ReadImages = (String, Vec<(String, PastedImage)>);

/// What the app's effects act on: the session, where their results come
/// back to the loop, the running turn and the questions waiting for the
/// person's answer.
struct Wiring<'a> {
    handle: &'a SessionHandle,
    host: &'a Arc<dyn Host>,
    images: &'a mpsc::UnboundedSender<ReadImages>,
    files: &'a mpsc::UnboundedSender<(String, Vec<String>)>,
    writes: &'a mpsc::UnboundedSender<(String, Vec<u8>)>,
    background: Option<&'a riot_kernel::background::BackgroundTasks>,
    turn: &'a mut Option<Turn>,
    waiting: &'a mut Waiting,
}

impl Wiring<'_> {
    /// Does what one effect of the app asks.
    async fn apply(
        self,
        effect: Effect,
        app: &mut App,
        terminal: &mut Term,
    ) -> std::io::Result<()> {
        match effect {
            Effect::Prompt(text) => *self.turn = start(self.handle, app, &text, Vec::new()),
            Effect::PromptWithImages { text, images } => {
                *self.turn = start(self.handle, app, &text, images);
            }
            Effect::ReadImages { pasted, paths } => {
                let host = Arc::clone(self.host);
                let tx = self.images.clone();
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
                self.handle.queue(&text);
            }
            Effect::SendQueued => {
                let waiting = take_queued(self.handle);
                if waiting.is_empty() {
                    app.event(&AgentEvent::Done {
                        reason: TerminalReason::Completed,
                    });
                } else {
                    *self.turn = start(self.handle, app, &waiting.join("\n\n"), Vec::new());
                }
            }
            Effect::Cancel => {
                self.handle.cancel(CancelReason::User);
            }
            Effect::SetMode(mode) => {
                if let Err(e) = self.handle.set_mode(mode).await {
                    app.note(SystemLevel::Error, &e.to_string());
                }
            }
            Effect::Permission { key, outcome } => {
                if let Some(reply) = self.waiting.permissions.remove(&key) {
                    let _ = reply.send(outcome);
                }
            }
            Effect::Questions { key, outcome } => {
                if let Some(reply) = self.waiting.answers.remove(&key) {
                    let _ = reply.send(outcome);
                }
            }
            Effect::FindFiles(query) => {
                let host = Arc::clone(self.host);
                let tx = self.files.clone();
                tokio::spawn(async move {
                    let files = host.files(&query, FILES_SHOWN).await;
                    let _ = tx.send((query, files));
                });
            }
            Effect::TerminalWrite { name, input } => {
                let _ = self.writes.send((name, input));
            }
            Effect::RewindPoints => match self.handle.rewind_points().await {
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
            Effect::TerminalFit(name) => fit_terminal(self.handle, app, &name).await?,
            Effect::ModelChoices => {
                let listed = self.handle.listed_models().await;
                app.model_choices(
                    listed
                        .iter()
                        .map(|m| (m.id.clone(), m.display_name.clone()))
                        .collect(),
                );
            }
            Effect::StopTask(id) => {
                if let Some(tasks) = &self.background {
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
        Ok(())
    }
}

/// The loop: the app's effects go to the session, its finished rows into
/// the scrollback and the live area is drawn when a frame is due; then
/// whatever comes first — a key, the turn's event, the gate's question,
/// the session's status, a result of the host — goes into the app.
async fn drive(
    handle: &SessionHandle,
    questions: &mut mpsc::UnboundedReceiver<GateRequest>,
    host: Arc<dyn Host>,
    options: RunOptions,
    app: &mut App,
    terminal: &mut Term,
) -> std::io::Result<()> {
    let mut frames = Frames::new();
    let mut events = EventStream::new();
    let mut status = handle.watch();
    let mut turn: Option<Turn> = None;
    let mut waiting = Waiting::default();
    let (files_tx, mut files_rx) = mpsc::unbounded_channel::<(String, Vec<String>)>();
    let (images_tx, mut images_rx) = mpsc::unbounded_channel::<ReadImages>();
    let mut ticker = tokio::time::interval(FRAME);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut terminals_rx = watch_terminals(handle);
    let mut writer = Writer::spawn(handle);
    // A background agent's result starts a turn by itself while idle,
    // until the session refuses one.
    let mut auto_deliver = true;
    // Its background agents, read again each time one starts, makes a
    // tool call or ends.
    let background = handle.read(|s| s.background_tasks().clone()).await.ok();
    let (tasks_tx, mut tasks_rx) = mpsc::unbounded_channel::<()>();
    if let Some(tasks) = &background {
        tasks.watch(Arc::new(move |_| {
            let _ = tasks_tx.send(());
        }));
        app.background(tasks.list());
    }
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
                background: background.as_ref(),
                turn: &mut turn,
                waiting: &mut waiting,
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
            question = questions.recv() => {
                waiting.ask(question, app);
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
            Some(()) = tasks_rx.recv() => {
                if tasks_changed(&mut tasks_rx, background.as_ref(), app) {
                    frames.dirty = true;
                }
            }
            update = terminals_rx.recv() => {
                if let Some(update) = update {
                    app.terminal(&update);
                    frames.dirty = true;
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
        waiting.drop_abandoned();
    }
}

/// When the live area is drawn next, and what it showed last.
struct Frames {
    /// When the loop began: the app's clock.
    started: Instant,
    /// When the live area was last drawn (none: at once).
    last: Option<Instant>,
    /// Something changed since the last frame.
    dirty: bool,
    /// The frame last drawn, for rows that settle in it.
    shown: Option<Shown>,
    /// Ticks of [`FRAME`] since the loop began.
    ticks: u64,
}

impl Frames {
    /// Frames of a loop that begins now, the first one due.
    fn new() -> Self {
        Self {
            started: Instant::now(),
            last: None,
            dirty: true,
            shown: None,
            ticks: 0,
        }
    }

    /// What changes with time: the MCP servers' states, and while a turn
    /// runs the spinner and the elapsed time.
    fn tick(&mut self, app: &mut App, host: &dyn Host) {
        self.ticks += 1;
        // MCP servers' states about once a second.
        if self.ticks % 30 == 1 {
            app.mcp(host.mcp());
            self.dirty = true;
        }
        // The spinner and the elapsed time move while a turn runs.
        if app.busy() {
            self.dirty = true;
        }
    }

    /// Whether to draw now: something changed, and the last frame is at
    /// least [`FRAME`] old.
    fn due(&self) -> bool {
        let due = self.last.is_none_or(|t| t.elapsed() >= FRAME);
        self.dirty && due
    }

    /// Asks for a frame at once, not at the next one's time.
    fn redraw_now(&mut self) {
        self.last = None;
        self.dirty = true;
    }
}

/// Draws the live area, after moving what of the streaming reply can no
/// longer change into the scrollback; keeps what the frame shows.
fn draw_frame(terminal: &mut Term, app: &mut App, frames: &mut Frames) -> std::io::Result<()> {
    app.tick(u64::try_from(frames.started.elapsed().as_millis()).unwrap_or(u64::MAX));
    // What of the streaming reply can no longer change goes into
    // the scrollback before the frame, which then draws the rest.
    app.settle();
    let rows = app.take_scrollback();
    promote(terminal, &mut frames.shown, rows, app)?;
    app.set_height(terminal.get_frame().area().height);
    let mut counted = (0, 0);
    let buffer = terminal
        .draw(|frame| counted = view::draw_counted(app, frame))?
        .buffer
        .clone();
    terminal.backend_mut().screen = Some(buffer.clone());
    let (text, kept) = counted;
    frames.shown = Some(Shown { buffer, text, kept });
    frames.last = Some(Instant::now());
    frames.dirty = false;
    Ok(())
}

/// Takes one event of the terminal into the app: a key, a paste or a
/// resize. `false` when the terminal's events ended.
fn terminal_event(
    event: Option<std::io::Result<Event>>,
    app: &mut App,
    terminal: &mut Term,
    frames: &mut Frames,
) -> std::io::Result<bool> {
    match event {
        Some(Ok(Event::Key(key))) => {
            app.key(key);
            // A key is answered at once, not at the next frame.
            frames.last = None;
        }
        Some(Ok(Event::Paste(text))) => app.paste(&text),
        Some(Ok(Event::Resize(..))) => {
            let (cols, rows) = terminal::size()?;
            terminal.backend_mut().size = Size::new(cols, rows);
            terminal.resize(Rect::new(0, 0, cols, rows))?;
            app.resize(cols);
            frames.shown = None;
            terminal.backend_mut().screen = None;
            frames.last = None;
        }
        Some(Ok(_)) => {}
        Some(Err(e)) => return Err(e),
        None => return Ok(false),
    }
    frames.dirty = true;
    Ok(true)
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

/// The gate's questions waiting for the person's answer, by the key the
/// app knows them by.
#[derive(Default)]
struct Waiting {
    permissions: HashMap<u64, oneshot::Sender<PermissionOutcome>>,
    answers: HashMap<u64, oneshot::Sender<QuestionOutcome>>,
    next_key: u64,
}

impl Waiting {
    /// Puts a question of the gate to the app, keeping where its answer
    /// goes.
    fn ask(&mut self, question: Option<GateRequest>, app: &mut App) {
        match question {
            Some(GateRequest::Permission {
                request_id,
                detail,
                reply,
            }) => {
                self.next_key += 1;
                self.permissions.insert(self.next_key, reply);
                app.permission(self.next_key, request_id, detail);
            }
            Some(GateRequest::Questions { request, reply }) => {
                self.next_key += 1;
                self.answers.insert(self.next_key, reply);
                app.questions(self.next_key, request);
            }
            None => {}
        }
    }

    /// Drops the answer channels of questions the scheduler gave up on.
    fn drop_abandoned(&mut self) {
        self.permissions.retain(|_, reply| !reply.is_closed());
        self.answers.retain(|_, reply| !reply.is_closed());
    }
}

/// Shows the session's status as it changed: its model, permission mode
/// and thinking level.
fn show_status(status: &mut watch::Receiver<SessionStatus>, app: &mut App) {
    let s = status.borrow_and_update().clone();
    app.status(&s.model, s.mode);
    app.thinking_level(s.thinking);
}

/// Reads the background agents again after `changes` said they changed;
/// whether the app's list of them changed.
fn tasks_changed(
    changes: &mut mpsc::UnboundedReceiver<()>,
    background: Option<&riot_kernel::background::BackgroundTasks>,
    app: &mut App,
) -> bool {
    // Changes come in bursts (a task's calls): one read for
    // all that are waiting.
    while changes.try_recv().is_ok() {}
    background.is_some_and(|tasks| app.background(tasks.list()))
}

/// The session's terminals, as they change (the open ones first).
fn watch_terminals(handle: &SessionHandle) -> mpsc::UnboundedReceiver<TerminalUpdate> {
    let (terminals_tx, terminals_rx) = mpsc::unbounded_channel::<TerminalUpdate>();
    handle
        .terminals()
        .subscribe(Arc::new(move |update: &TerminalUpdate| {
            let _ = terminals_tx.send(update.clone());
        }));
    terminals_rx
}

/// The person's keys for the terminals, written in order by a task of
/// their own: a program that does not read its input must not stop the
/// UI. A write that fails comes back as a note.
struct Writer {
    /// The keys, with the name of the terminal they are for.
    writes: mpsc::UnboundedSender<(String, Vec<u8>)>,
    /// The writes that failed, as notes.
    failed: mpsc::UnboundedReceiver<String>,
    /// The task, stopped when the loop ends.
    _task: AbortOnDrop,
}

impl Writer {
    /// Starts the task writing to `handle`'s terminals.
    fn spawn(handle: &SessionHandle) -> Self {
        let (writes_tx, mut writes_rx) = mpsc::unbounded_channel::<(String, Vec<u8>)>();
        let (failed_tx, failed_rx) = mpsc::unbounded_channel::<String>();
        let terminals = Arc::clone(handle.terminals());
        let writer = tokio::spawn(async move {
            while let Some((name, input)) = writes_rx.recv().await {
                if let Err(e) = terminals.write(&name, &input, Typist::Person).await {
                    let _ = failed_tx.send(format!("Terminal {name}: {e}"));
                }
            }
        });
        Self {
            writes: writes_tx,
            failed: failed_rx,
            _task: AbortOnDrop(writer),
        }
    }
}

/// The text of each message queued while a turn ran, taken from the
/// session.
fn take_queued(handle: &SessionHandle) -> Vec<String> {
    handle
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
        .collect()
}

/// Resizes the terminal `name` to the screen's width and the pane's
/// height; the app hints how it went.
async fn fit_terminal(handle: &SessionHandle, app: &mut App, name: &str) -> std::io::Result<()> {
    // The pane's rows but its header and its keys line.
    let (cols, rows) = terminal::size()?;
    let size = riot_protocol::TerminalSize {
        rows: rows.saturating_sub(2),
        cols,
    };
    match handle.terminals().resize(name, size).await {
        Ok(set) => app.hint(format!(
            "{name} is now {}×{}: its program was told.",
            set.cols, set.rows
        )),
        Err(e) => app.hint(format!("{name} could not be resized: {e}")),
    }
    Ok(())
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
