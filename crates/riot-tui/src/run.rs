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
use ratatui::buffer::{Buffer, Cell};
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
    pub notifications: riot_config::notifications::NotificationSettings,
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
    /// Draws go nowhere: ratatui is told what the terminal shows after
    /// the loop moved it itself (see [`promote`]).
    mute: bool,
    /// What the live area shows, as last drawn: a few unchanged cells
    /// between two changed ones on a row are written again from it, which
    /// is shorter than moving the cursor over them.
    screen: Option<Buffer>,
    /// Whether the cursor shows, as last set.
    visible: Option<bool>,
}

impl<B: Backend> Pinned<B> {
    fn clamp(&self, p: Position) -> Position {
        Position::new(
            p.x.min(self.size.width.saturating_sub(1)),
            p.y.min(self.size.height.saturating_sub(1)),
        )
    }
}

impl<W: Write> Backend for Pinned<CrosstermBackend<W>> {
    type Error = std::io::Error;

    /// The changed cells, in order: the cursor moves only across a gap
    /// longer than a move, and a style is set only where it changes (and
    /// reset once at the end).
    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if self.mute {
            content.for_each(drop);
            return Ok(());
        }
        let out = &mut self.inner;
        let mut style = ratatui::style::Style::default();
        let mut at: Option<Position> = None;
        for (x, y, cell) in content {
            let gap = match at {
                Some(p) if p.y == y && p.x <= x => Some(x - p.x),
                _ => None,
            };
            let fill = gap.filter(|&gap| {
                gap == 0
                    || gap <= 6
                        && self.screen.as_ref().is_some_and(|screen| {
                            (x - gap..x).all(|gx| {
                                screen.area.contains(Position::new(gx, y))
                                    && screen[(gx, y)].symbol() == " "
                                    && cell_style(&screen[(gx, y)]) == style
                            })
                        })
            });
            match fill {
                Some(0) => {}
                Some(gap) => {
                    crossterm::queue!(out, crossterm::style::Print(" ".repeat(usize::from(gap))))?;
                }
                None => move_to(out, x, y)?,
            }
            let wanted = cell_style(cell);
            if wanted != style {
                set_style(out, style, wanted)?;
                style = wanted;
            }
            crossterm::queue!(out, crossterm::style::Print(cell.symbol()))?;
            let width = u16::try_from(crate::wrap::width(cell.symbol()).max(1)).unwrap_or(1);
            at = Some(Position::new(x.saturating_add(width), y));
        }
        if style != ratatui::style::Style::default() {
            crossterm::queue!(
                out,
                crossterm::style::SetAttribute(crossterm::style::Attribute::Reset)
            )?;
        }
        if let Some(p) = at {
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
        if self.visible != Some(false) {
            self.inner.hide_cursor()?;
            self.visible = Some(false);
        }
        Ok(())
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        if self.visible != Some(true) {
            self.inner.show_cursor()?;
            self.visible = Some(true);
        }
        Ok(())
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
        if self.cursor != Some(p) {
            self.inner.set_cursor_position(p)?;
            self.cursor = Some(p);
        }
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
        Backend::flush(&mut self.inner)
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
fn flush_rows(terminal: &mut Term, rows: Vec<Line<'static>>) -> std::io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    write_rows(terminal, rows)?;
    // Making room may have moved the live area down, its cells with it.
    let area = terminal.get_frame().area();
    let backend = terminal.backend_mut();
    if let Some(screen) = backend.screen.as_mut() {
        if screen.area.width == area.width && screen.area.height == area.height {
            screen.area = area;
        } else {
            backend.screen = None;
        }
    }
    Ok(())
}

/// The writing of [`flush_rows`], without keeping [`Pinned::screen`]
/// where the live area is.
fn write_rows(terminal: &mut Term, rows: Vec<Line<'static>>) -> std::io::Result<()> {
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
            move_to(&mut backend.inner, 0, y)?;
            write_row(&mut backend.inner, line)?;
            // Where the row's text ends: the draw after skips a cursor move
            // to where the cursor is.
            let end = u16::try_from(line.width()).unwrap_or(u16::MAX);
            backend.cursor = Some(backend.clamp(Position::new(end, y)));
        }
        Write::flush(&mut backend.inner)?;
    }
    Ok(())
}

/// The frame last drawn: its cells, and how many rows at its top are the
/// streaming reply's.
struct Shown {
    buffer: Buffer,
    text: usize,
    /// The reply's rows with the blank rows kept for them below.
    kept: usize,
}

/// Writes rows for the scrollback (see [`flush_rows`]), moving there by a
/// scroll those that the live area shows at its top already — the
/// streaming reply's rows that settled since the last frame — instead of
/// writing them again. Each such row is first drawn whole where it is (the
/// characters that came since the last frame), then the screen from its
/// top down to the live area's rows is scrolled up: down to the reply's
/// rows only when the live area keeps as many (what is below them stays
/// put), or all of it when the live area loses the rows (what is below
/// moves up with them). ratatui is then told what the screen shows, so
/// that the next frame writes only what differs.
fn promote(
    terminal: &mut Term,
    shown: &mut Option<Shown>,
    mut rows: Vec<Line<'static>>,
    app: &App,
) -> std::io::Result<()> {
    let Some(last) = shown.as_mut().filter(|_| !rows.is_empty()) else {
        return flush_rows(terminal, rows);
    };
    // A blank row between blocks that the live area does not show goes
    // first, the usual way.
    let area = terminal.get_frame().area();
    let top_blank = (area.left()..area.right()).all(|x| {
        last.buffer.area.contains(Position::new(x, area.y))
            && last.buffer[(x, area.y)] == Cell::default()
    });
    if rows.len() > 1 && rows[0].width() == 0 && last.text > 0 && !top_blank {
        let rest = rows.split_off(1);
        flush_rows(terminal, rows)?;
        rows = rest;
    }
    let area = terminal.get_frame().area();
    let screen = terminal.backend().size;
    if last.text == 0
        || last.buffer.area != area
        || area.top() == 0
        || area.bottom() != screen.height
    {
        return flush_rows(terminal, rows);
    }
    // The rows shown, each drawn so far as its text came.
    let mut drawn = last.buffer.clone();
    let mut shift = 0;
    while shift < rows.len().min(last.text) {
        let y = area.y + u16::try_from(shift).unwrap_or(u16::MAX);
        let mut row = Buffer::empty(Rect::new(area.x, y, area.width, 1));
        Paragraph::new(rows[shift].clone()).render(row.area, &mut row);
        if !begins(&last.buffer, &row) {
            break;
        }
        for x in area.left()..area.right() {
            drawn[(x, y)] = row[(x, y)].clone();
        }
        shift += 1;
    }
    if shift == 0 {
        return flush_rows(terminal, rows);
    }
    *terminal.current_buffer_mut() = drawn.clone();
    terminal.flush()?;
    terminal.swap_buffers();
    terminal.backend_mut().screen = Some(drawn.clone());
    let n = u16::try_from(shift).unwrap_or(u16::MAX);
    let kept = last.text - shift;
    // The rows of the reply the next frame shows, with the blank rows kept
    // for them.
    let live = app.live_rows(usize::from(area.width)).max(app.floor());
    let bottom = if live <= last.kept - shift {
        area.height
    } else {
        u16::try_from(last.kept).unwrap_or(u16::MAX)
    };
    terminal
        .backend_mut()
        .scroll_region_up(0..area.top() + bottom, n)?;
    // What the screen shows now.
    let mut moved = Buffer::empty(area);
    for y in 0..area.height {
        let from = if y + n < bottom {
            Some(y + n)
        } else if y < bottom {
            None
        } else {
            Some(y)
        };
        if let Some(from) = from {
            for x in area.left()..area.right() {
                moved[(x, area.y + y)] = drawn[(x, area.y + from)].clone();
            }
        }
    }
    terminal.backend_mut().mute = true;
    *terminal.current_buffer_mut() = moved.clone();
    let flushed = terminal.flush();
    terminal.swap_buffers();
    terminal.backend_mut().mute = false;
    terminal.backend_mut().screen = Some(moved.clone());
    flushed?;
    *last = Shown {
        buffer: moved,
        text: kept,
        kept: last.kept - shift,
    };
    flush_rows(terminal, rows.split_off(shift))
}

/// Whether each cell of the shown `buffer`'s row at `row`'s position is
/// `row`'s, or blank after the last drawn one: the row as drawn so far.
fn begins(buffer: &Buffer, row: &Buffer) -> bool {
    let y = row.area.y;
    let blank = Cell::default();
    let mut ended = false;
    for x in row.area.left()..row.area.right() {
        let shown = &buffer[(x, y)];
        if !ended && shown == &row[(x, y)] {
            continue;
        }
        if shown != &blank {
            return false;
        }
        ended = true;
    }
    true
}

/// Moves the cursor to column `x` of row `y` (from 0), leaving out the
/// column when it is the first: `ESC [ row H` is two bytes shorter than
/// `ESC [ row ; 1 H`, and most moves are to a row's start.
fn move_to(out: &mut impl Write, x: u16, y: u16) -> std::io::Result<()> {
    if x == 0 {
        write!(out, "\x1b[{}H", u32::from(y) + 1)
    } else {
        crossterm::queue!(out, cursor::MoveTo(x, y))
    }
}

/// One row as styled text runs: a style is set only where it changes
/// (spaces keep the one before when it would not show on them), and reset
/// once at the end.
fn write_row(out: &mut impl Write, line: &Line<'_>) -> std::io::Result<()> {
    use crossterm::style::Print;
    let mut current = ratatui::style::Style::default();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        let blank = span.content.chars().all(|c| c == ' ');
        let wanted = if blank
            && style.bg == current.bg
            && !shows_on_spaces(style)
            && !shows_on_spaces(current)
        {
            current
        } else {
            style
        };
        if modifiers(wanted) != modifiers(current)
            || wanted.fg != current.fg
            || wanted.bg != current.bg
        {
            set_style(out, current, wanted)?;
            current = wanted;
        }
        crossterm::queue!(out, Print(span.content.as_ref()))?;
    }
    if current != ratatui::style::Style::default() {
        crossterm::queue!(
            out,
            crossterm::style::SetAttribute(crossterm::style::Attribute::Reset)
        )?;
    }
    Ok(())
}

/// A cell's style.
fn cell_style(cell: &Cell) -> ratatui::style::Style {
    let style = cell.style();
    ratatui::style::Style {
        fg: style.fg.filter(|c| *c != ratatui::style::Color::Reset),
        bg: style.bg.filter(|c| *c != ratatui::style::Color::Reset),
        add_modifier: modifiers(style),
        sub_modifier: ratatui::style::Modifier::empty(),
        ..ratatui::style::Style::default()
    }
}

/// The modifiers a style turns on.
fn modifiers(style: ratatui::style::Style) -> ratatui::style::Modifier {
    style.add_modifier - style.sub_modifier
}

/// Whether a style shows on spaces (a background, an underline, a line
/// through, reversed colours).
fn shows_on_spaces(style: ratatui::style::Style) -> bool {
    use ratatui::style::Modifier;
    style.bg.is_some()
        || modifiers(style)
            .intersects(Modifier::UNDERLINED | Modifier::REVERSED | Modifier::CROSSED_OUT)
}

/// Switches the terminal from style `from` to style `to` in one SGR
/// sequence of as few parameters as it takes: a reset only when a
/// modifier goes off, and the terminal's sixteen colours by their short
/// codes (`35`, not `38;5;5`).
fn set_style(
    out: &mut impl Write,
    from: ratatui::style::Style,
    to: ratatui::style::Style,
) -> std::io::Result<()> {
    let sgr = sgr(from, to);
    if sgr.is_empty() {
        return Ok(());
    }
    write!(out, "\x1b[{sgr}m")
}

/// The parameters of the SGR sequence that turns style `from` into `to`,
/// `;`-separated (empty when there is nothing to change).
fn sgr(from: ratatui::style::Style, to: ratatui::style::Style) -> String {
    use ratatui::style::Modifier;
    let (had, has) = (modifiers(from), modifiers(to));
    let (mut fg, mut bg, mut on) = (from.fg, from.bg, had);
    let mut params: Vec<String> = Vec::new();
    if !has.contains(had) {
        params.push("0".to_owned());
        (fg, bg, on) = (None, None, Modifier::empty());
    }
    for (modifier, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::SLOW_BLINK, "5"),
        (Modifier::RAPID_BLINK, "6"),
        (Modifier::REVERSED, "7"),
        (Modifier::HIDDEN, "8"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if has.contains(modifier) && !on.contains(modifier) {
            params.push(code.to_owned());
        }
    }
    if to.fg != fg {
        params.push(sgr_color(to.fg, 30));
    }
    if to.bg != bg {
        params.push(sgr_color(to.bg, 40));
    }
    params.join(";")
}

/// A colour's SGR parameter; `base` is 30 for the foreground and 40 for
/// the background. `None` is the terminal's default colour.
fn sgr_color(color: Option<ratatui::style::Color>, base: u8) -> String {
    use ratatui::style::Color;
    let short = |offset: u8| (base + offset).to_string();
    match color {
        None | Some(Color::Reset) => short(9),
        Some(Color::Black) => short(0),
        Some(Color::Red) => short(1),
        Some(Color::Green) => short(2),
        Some(Color::Yellow) => short(3),
        Some(Color::Blue) => short(4),
        Some(Color::Magenta) => short(5),
        Some(Color::Cyan) => short(6),
        Some(Color::Gray) => short(7),
        Some(Color::DarkGray) => short(60),
        Some(Color::LightRed) => short(61),
        Some(Color::LightGreen) => short(62),
        Some(Color::LightYellow) => short(63),
        Some(Color::LightBlue) => short(64),
        Some(Color::LightMagenta) => short(65),
        Some(Color::LightCyan) => short(66),
        Some(Color::White) => short(67),
        Some(Color::Indexed(n)) => format!("{};5;{n}", base + 8),
        Some(Color::Rgb(r, g, b)) => format!("{};2;{r};{g};{b}", base + 8),
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
    permissions: &'a mut HashMap<u64, oneshot::Sender<PermissionOutcome>>,
    answers: &'a mut HashMap<u64, oneshot::Sender<QuestionOutcome>>,
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
                let waiting: Vec<String> = self
                    .handle
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
                if let Some(reply) = self.permissions.remove(&key) {
                    let _ = reply.send(outcome);
                }
            }
            Effect::Questions { key, outcome } => {
                if let Some(reply) = self.answers.remove(&key) {
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
            Effect::TerminalFit(name) => {
                // The pane's rows but its header and its keys line.
                let (cols, rows) = terminal::size()?;
                let size = riot_protocol::TerminalSize {
                    rows: rows.saturating_sub(2),
                    cols,
                };
                match self.handle.terminals().resize(&name, size).await {
                    Ok(set) => app.hint(format!(
                        "{name} is now {}×{}: its program was told.",
                        set.cols, set.rows
                    )),
                    Err(e) => app.hint(format!("{name} could not be resized: {e}")),
                }
            }
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
    let (images_tx, mut images_rx) = mpsc::unbounded_channel::<ReadImages>();
    let mut ticker = tokio::time::interval(FRAME);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut last_frame: Option<Instant> = None;
    let mut dirty = true;
    let mut ticks: u64 = 0;
    // The frame last drawn, for rows that settle in it.
    let mut shown: Option<Shown> = None;
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
                writes: &writes_tx,
                background: background.as_ref(),
                turn: &mut turn,
                permissions: &mut permissions,
                answers: &mut answers,
            }
            .apply(effect, app, terminal)
            .await?;
        }
        let rows = app.take_scrollback();
        promote(terminal, &mut shown, rows, app)?;
        if app.exiting() {
            return Ok(());
        }
        let due = last_frame.is_none_or(|t| t.elapsed() >= FRAME);
        if dirty && due {
            app.tick(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
            // What of the streaming reply can no longer change goes into
            // the scrollback before the frame, which then draws the rest.
            app.settle();
            let rows = app.take_scrollback();
            promote(terminal, &mut shown, rows, app)?;
            app.set_height(terminal.get_frame().area().height);
            let mut counted = (0, 0);
            let buffer = terminal
                .draw(|frame| counted = view::draw_counted(app, frame))?
                .buffer
                .clone();
            terminal.backend_mut().screen = Some(buffer.clone());
            let (text, kept) = counted;
            shown = Some(Shown { buffer, text, kept });
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
                        shown = None;
                        terminal.backend_mut().screen = None;
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
                    app.thinking_level(s.thinking);
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
            Some(()) = tasks_rx.recv() => {
                // Changes come in bursts (a task's calls): one read for
                // all that are waiting.
                while tasks_rx.try_recv().is_ok() {}
                if let Some(tasks) = &background
                    && app.background(tasks.list())
                {
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

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Modifier, Style};

    use super::sgr;

    #[test]
    fn a_style_change_is_one_sequence_with_the_short_codes_of_the_sixteen_colours() {
        let plain = Style::new();
        assert_eq!(sgr(plain, plain), "");
        assert_eq!(sgr(plain, plain.fg(Color::Magenta)), "35");
        assert_eq!(sgr(plain.fg(Color::Magenta), plain), "39");
        assert_eq!(
            sgr(plain, plain.fg(Color::DarkGray).bg(Color::White)),
            "90;107"
        );
        assert_eq!(sgr(plain, plain.fg(Color::Indexed(208))), "38;5;208");
        assert_eq!(sgr(plain, plain.bg(Color::Rgb(1, 2, 3))), "48;2;1;2;3");
        let bold_red = plain.fg(Color::Red).add_modifier(Modifier::BOLD);
        assert_eq!(sgr(plain, bold_red), "1;31");
        // A modifier going off resets everything, and what stays is set again.
        assert_eq!(
            sgr(
                bold_red,
                plain.fg(Color::Red).add_modifier(Modifier::ITALIC)
            ),
            "0;3;31"
        );
        // A modifier added keeps the colour as it is.
        assert_eq!(sgr(plain.fg(Color::Red), bold_red), "1");
    }
}
