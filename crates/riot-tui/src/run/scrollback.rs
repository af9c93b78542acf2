//! The app's finished rows into the terminal's scrollback, above the live
//! area: written as text runs, or moved there by a scroll when the live
//! area shows them at its top already.

use std::io::Write;

use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use super::backend::{Term, move_to, write_row};
use crate::app::App;

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

/// The writing of [`flush_rows`], without keeping
/// [`Pinned::screen`](super::backend::Pinned::screen)
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
pub(super) struct Shown {
    pub(super) buffer: Buffer,
    pub(super) text: usize,
    /// The reply's rows with the blank rows kept for them below.
    pub(super) kept: usize,
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
pub(super) fn promote(
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
