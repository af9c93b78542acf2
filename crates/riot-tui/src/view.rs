//! The live area: the block of the reply still streaming, running tools,
//! a question or the composer (with its menu), and the status line. Drawn
//! top-down; when it does not fit, the streaming text gives up its oldest
//! rows first.

use ratatui::Frame;
use ratatui::layout::Position;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::app::{App, Asking, TermView};
use crate::menu::Kind;
use crate::preview;
use crate::wrap::{self, hard_wrap, truncate, wrap};

mod question;
mod status;

use question::question_rows;
pub use status::mode_label;
use status::status_line;

/// Entries of a menu shown at once.
pub const MENU_ROWS: usize = 6;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Draws `app`'s live area into `frame` and places the cursor.
pub fn draw(app: &App, frame: &mut Frame<'_>) {
    draw_counted(app, frame);
}

/// [`draw`], saying how many rows at the top of the frame are the
/// streaming reply's text (its rows not yet in the scrollback, from the
/// first), and how many with the blank rows kept for it below them: the
/// loop scrolls such rows into the scrollback once they settle instead of
/// writing them again.
pub fn draw_counted(app: &App, frame: &mut Frame<'_>) -> (usize, usize) {
    let area = frame.area();
    let width = usize::from(area.width);
    let height = usize::from(area.height);
    if let Some(term) = app
        .focus
        .as_ref()
        .and_then(|name| app.terminals.iter().find(|t| &t.name == name))
    {
        let (rows, cursor) = terminal_pane(app, term, width, height);
        Paragraph::new(rows).render(area, frame.buffer_mut());
        if let Some((row, col)) = cursor {
            frame.set_cursor_position(Position::new(
                area.x + u16::try_from(col.min(width.saturating_sub(1))).unwrap_or(0),
                area.y + u16::try_from(row).unwrap_or(0),
            ));
        }
        return (0, 0);
    }
    if let Some(Asking::Permission {
        detail,
        preview,
        view: Some(from),
        ..
    }) = app.asking.front()
    {
        let rows = preview_pane(app, detail, preview, *from, width, height);
        Paragraph::new(rows).render(area, frame.buffer_mut());
        return (0, 0);
    }
    let (mut top, text, kept) = live_rows(app, width);
    let (mut bottom, cursor) = bottom_rows(app, width, height);
    // The question or composer and the status line win; the streaming
    // text shows its newest rows in what is left.
    if bottom.len() > height {
        let cut = bottom.len() - height;
        bottom.drain(..cut);
    }
    let room = height - bottom.len();
    // The reply's rows are at the top when nothing of it is cut.
    let (mut text, mut kept) = (text, kept);
    if top.len() > room {
        top.drain(..top.len() - room);
        (text, kept) = (0, 0);
    }
    let top_len = top.len();
    let cursor = cursor.map(|(row, col)| (row + top_len, col));
    let mut rows = top;
    rows.extend(bottom);
    Paragraph::new(rows).render(area, frame.buffer_mut());
    if let Some((row, col)) = cursor
        && row < height
    {
        frame.set_cursor_position(Position::new(
            area.x + u16::try_from(col.min(width.saturating_sub(1))).unwrap_or(0),
            area.y + u16::try_from(row).unwrap_or(0),
        ));
    }
    (text, kept)
}

/// The terminal pane: a header naming the terminal, its command and
/// whether it runs; as much of its screen as fits, ending at the cursor or
/// the last row written; the keys. The cursor's row and column when it is
/// on screen and the program runs.
fn terminal_pane(
    app: &App,
    term: &TermView,
    width: usize,
    height: usize,
) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
    let theme = app.theme;
    let index = app
        .terminals
        .iter()
        .position(|t| t.name == term.name)
        .map_or(0, |i| i + 1);
    let state_style = if term.exit.is_some() {
        theme.warning()
    } else {
        theme.dim()
    };
    let header = Line::from(vec![
        Span::styled(
            format!("▣ {} ", term.name),
            ratatui::style::Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("({index}/{}) ", app.terminals.len()), theme.dim()),
        Span::styled(term.state(), state_style),
        Span::styled(
            truncate(
                &format!(" · $ {}", term.command.lines().next().unwrap_or("")),
                width.saturating_sub(term.name.len() + 24),
            ),
            theme.code(),
        ),
    ]);
    let room = height.saturating_sub(2).max(1);
    let cursor_row = usize::from(term.cursor.0);
    let last_written = term
        .rows
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .unwrap_or(0);
    let end = cursor_row.max(last_written) + 1;
    let start = end.saturating_sub(room);
    let mut rows = vec![header];
    for i in start..end {
        let text = term.rows.get(i).map_or("", String::as_str);
        rows.push(Line::from(Span::raw(truncate(text, width))));
    }
    while rows.len() < height.saturating_sub(1) {
        rows.push(Line::default());
    }
    let keys = if term.exit.is_some() {
        "the program has ended · ctrl+t next terminal / conversation".to_owned()
    } else {
        format!(
            "keys go to {} · ctrl+f fit · ctrl+t next / conversation",
            term.name
        )
    };
    rows.push(match &app.hint {
        Some(hint) => Line::from(Span::styled(truncate(hint, width), theme.warning())),
        None => Line::from(Span::styled(truncate(&keys, width), theme.dim())),
    });
    rows.truncate(height);
    let cursor = (term.exit.is_none() && cursor_row >= start && cursor_row < end)
        .then(|| (1 + cursor_row - start, usize::from(term.cursor.1)))
        .filter(|(row, _)| *row + 1 < height);
    (rows, cursor)
}

/// A question's whole preview in place of the live area, from row `from`
/// (kept so the last page is full): a title saying which rows show, the
/// rows, the keys.
fn preview_pane(
    app: &App,
    detail: &riot_protocol::PermissionRequestDetail,
    shown: &preview::Preview,
    from: usize,
    width: usize,
    height: usize,
) -> Vec<Line<'static>> {
    let theme = app.theme;
    let bar = Span::styled("│ ", theme.question());
    let all = preview::view_rows(shown, width, &[bar]);
    let room = height.saturating_sub(2).max(1);
    let from = from.min(all.len().saturating_sub(room));
    let to = (from + room).min(all.len());
    let mut rows = vec![Line::from(Span::styled(
        truncate(
            &format!(
                "╭ {} · rows {}–{to} of {}",
                detail.describe,
                (from + 1).min(to),
                all.len()
            ),
            width,
        ),
        theme.question(),
    ))];
    rows.extend(all.into_iter().skip(from).take(room));
    while rows.len() < height.saturating_sub(1) {
        rows.push(Line::default());
    }
    rows.push(Line::from(Span::styled(
        truncate(
            "╰ ↑↓ pgup pgdn home end scroll · esc or q back to the question",
            width,
        ),
        theme.dim(),
    )));
    rows.truncate(height);
    rows
}

/// The background agents' list, in place of the composer.
fn tasks_rows(app: &App, selected: usize, width: usize) -> Vec<Line<'static>> {
    let theme = app.theme;
    let mut rows = vec![Line::from(Span::styled(
        "╭ Background agents",
        theme.question(),
    ))];
    let bar = || Span::styled("│ ", theme.question());
    if app.tasks.is_empty() {
        rows.push(Line::from(vec![
            bar(),
            Span::styled(
                "None in this session (the model starts one with Task's run_in_background).",
                theme.dim(),
            ),
        ]));
    }
    let start = selected.saturating_sub(MENU_ROWS - 1);
    for (i, task) in app.tasks.iter().enumerate().skip(start).take(MENU_ROWS) {
        let chosen = i == selected;
        let style = if chosen {
            theme.selected()
        } else {
            ratatui::style::Style::new()
        };
        let state = task.state.word();
        let calls = crate::wrap::plural(task.calls as u64, "call", "calls");
        let doing = task
            .last
            .as_deref()
            .filter(|_| task.state == riot_kernel::background::TaskState::Running)
            .map(|l| format!(" · {l}"))
            .unwrap_or_default();
        let line = format!(
            "{}{} {} — {} · {state} · {calls}{doing}",
            if chosen { "› " } else { "  " },
            task.id,
            task.agent,
            task.description
        );
        rows.push(Line::from(vec![
            bar(),
            Span::styled(truncate(&line, width.saturating_sub(2)), style),
        ]));
    }
    rows.push(Line::from(Span::styled(
        "╰ ↑↓ move · x stop · esc close",
        theme.dim(),
    )));
    rows
}

/// The streaming reply's unfinished block, thinking, and running tools;
/// how many rows from the first are the reply's (0 when thinking shows
/// above them), and how many with the blank rows kept for it while it
/// streams ([`App::floor`]).
fn live_rows(app: &App, width: usize) -> (Vec<Line<'static>>, usize, usize) {
    let theme = app.theme;
    let mut rows = Vec::new();
    if !app.thinking.is_empty() {
        let last = app.thinking.lines().last().unwrap_or("").trim();
        rows.push(Line::from(vec![
            Span::styled("✻ Thinking… ", theme.thinking()),
            Span::styled(truncate(last, width.saturating_sub(13)), theme.dim()),
        ]));
    }
    let rest = &app.text[app.committed..];
    let thinking = rows.len();
    if !rest.trim().is_empty() {
        rows.extend(app.live_text(width));
    }
    let text = if thinking == 0 { rows.len() } else { 0 };
    if app.busy && !rest.trim().is_empty() {
        while rows.len() < thinking + app.floor {
            rows.push(Line::default());
        }
    }
    let kept = if thinking == 0 { rows.len() } else { 0 };
    for (i, r) in app.running.iter().enumerate() {
        let spin = SPINNER[usize::try_from(app.now / 100).unwrap_or(0) % SPINNER.len()];
        let _ = i;
        rows.extend(wrap(
            &Line::from(Span::raw(r.describe.clone())),
            width,
            &[Span::styled(format!("{spin} "), theme.spinner())],
            &[Span::raw("  ")],
        ));
        for line in &r.output {
            let mut cut = hard_wrap(
                &Line::from(Span::styled(line.clone(), theme.dim())),
                width,
                &[Span::styled("  │ ", theme.dim())],
                &[],
            );
            cut.truncate(1);
            rows.extend(cut);
        }
    }
    (rows, text, kept)
}

/// The question or composer, the menu, hints and the status line in
/// `height` rows at most; the cursor's row and column in them.
fn bottom_rows(
    app: &App,
    width: usize,
    height: usize,
) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
    let theme = app.theme;
    let mut rows = Vec::new();
    let mut cursor = None;
    if let Some(asking) = app.asking.front() {
        // The hint and the status line stay below the question.
        let room = height.saturating_sub(1 + usize::from(app.hint.is_some()));
        rows.extend(question_rows(app, asking, width, room));
    } else if let Some(selected) = app.tasks_open {
        rows.extend(tasks_rows(app, selected, width));
    } else {
        for q in &app.queued {
            rows.push(Line::from(vec![
                Span::styled("  ⧗ queued: ", theme.dim()),
                Span::raw(truncate(
                    q.lines().next().unwrap_or(""),
                    width.saturating_sub(14),
                )),
            ]));
        }
        rows.push(Line::from(Span::styled("─".repeat(width), theme.dim())));
        let (lines, (crow, ccol)) = app.composer.layout(width.saturating_sub(2));
        cursor = Some((rows.len() + crow, ccol + 2));
        for (i, line) in lines.into_iter().enumerate() {
            let lead = if i == 0 { "› " } else { "  " };
            rows.push(Line::from(vec![
                Span::styled(lead, theme.user()),
                Span::raw(line),
            ]));
        }
        rows.push(Line::from(Span::styled("─".repeat(width), theme.dim())));
        if let Some(menu) = &app.menu {
            let start = menu.selected.saturating_sub(MENU_ROWS - 1);
            for (i, entry) in menu.entries.iter().enumerate().skip(start).take(MENU_ROWS) {
                let name = match menu.kind {
                    Kind::Commands => format!("/{}", entry.name),
                    Kind::Files => entry.name.clone(),
                };
                let style = if i == menu.selected {
                    theme.selected()
                } else {
                    ratatui::style::Style::new()
                };
                let mark = if i == menu.selected { "› " } else { "  " };
                let name_w = 24.min(width / 2);
                let name = truncate(&name, name_w);
                let pad = name_w.saturating_sub(wrap::width(&name));
                let desc = truncate(
                    entry.description.lines().next().unwrap_or(""),
                    width.saturating_sub(name_w + 5),
                );
                rows.push(Line::from(vec![
                    Span::styled(mark, style),
                    Span::styled(name, style),
                    Span::raw(" ".repeat(pad + 2)),
                    Span::styled(desc, theme.dim()),
                ]));
            }
        }
    }
    if let Some(hint) = &app.hint {
        rows.push(Line::from(Span::styled(hint.clone(), theme.warning())));
    }
    rows.push(status_line(app, width));
    (rows, cursor)
}
