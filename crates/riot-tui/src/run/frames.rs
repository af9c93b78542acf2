//! When the live area is drawn ([`Frames`]), the drawing of a frame, and
//! the terminal's events (keys, pastes, resizes) into the app.

use std::time::Instant;

use crossterm::event::Event;
use crossterm::terminal;
use ratatui::layout::{Rect, Size};

use super::backend::Term;
use super::scrollback::{Shown, promote};
use super::{FRAME, Host};
use crate::app::App;
use crate::view;

/// When the live area is drawn next, and what it showed last.
pub(super) struct Frames {
    /// When the loop began: the app's clock.
    started: Instant,
    /// When the live area was last drawn (none: at once).
    last: Option<Instant>,
    /// Something changed since the last frame.
    pub(super) dirty: bool,
    /// The frame last drawn, for rows that settle in it.
    pub(super) shown: Option<Shown>,
    /// Ticks of [`FRAME`] since the loop began.
    ticks: u64,
}

impl Frames {
    /// Frames of a loop that begins now, the first one due.
    pub(super) fn new() -> Self {
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
    pub(super) fn tick(&mut self, app: &mut App, host: &dyn Host) {
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
    pub(super) fn due(&self) -> bool {
        let due = self.last.is_none_or(|t| t.elapsed() >= FRAME);
        self.dirty && due
    }

    /// Asks for a frame at once, not at the next one's time.
    pub(super) fn redraw_now(&mut self) {
        self.last = None;
        self.dirty = true;
    }
}

/// Draws the live area, after moving what of the streaming reply can no
/// longer change into the scrollback; keeps what the frame shows.
pub(super) fn draw_frame(
    terminal: &mut Term,
    app: &mut App,
    frames: &mut Frames,
) -> std::io::Result<()> {
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
pub(super) fn terminal_event(
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
