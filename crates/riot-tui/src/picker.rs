//! `riot --resume` with no id: a list of the project's sessions, newest
//! first, to choose one from. The state ([`Picker`]) is pure — keys in, a
//! choice out — and [`draw`] renders it into any buffer; [`pick`] runs it
//! inline on the real terminal and leaves nothing drawn behind.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::theme::Theme;

/// At most this many sessions are on screen at once; the list scrolls.
pub const VISIBLE: usize = 10;

/// One session to choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What the person recognises it by (its title).
    pub title: String,
    /// When it was last used, in words ("today 14:02", "3 Nov").
    pub when: String,
    /// How many messages it holds.
    pub messages: u64,
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Keep showing the list.
    Continue,
    /// The person chose the session at this index.
    Chosen(usize),
    /// The person left without choosing.
    Cancelled,
}

/// The list and where the selection is.
#[derive(Debug, Clone)]
pub struct Picker {
    choices: Vec<Choice>,
    selected: usize,
    /// The first row shown.
    top: usize,
}

impl Picker {
    /// A picker over `choices` (newest first), the first one selected.
    pub fn new(choices: Vec<Choice>) -> Self {
        Self {
            choices,
            selected: 0,
            top: 0,
        }
    }

    /// The index selected now.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// Rows the picker needs: a title, the visible sessions, a hint.
    pub fn height(&self) -> u16 {
        // At most VISIBLE + 2, which fits a u16.
        u16::try_from(self.choices.len().min(VISIBLE) + 2).unwrap_or(u16::MAX)
    }

    /// Handles one key.
    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        if key.kind == KeyEventKind::Release {
            return Outcome::Continue;
        }
        let last = self.choices.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Cancelled,
            KeyCode::Char('c' | 'd') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return Outcome::Cancelled;
            }
            KeyCode::Enter if !self.choices.is_empty() => return Outcome::Chosen(self.selected),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(VISIBLE),
            KeyCode::PageDown => self.selected = (self.selected + VISIBLE).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            _ => {}
        }
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + VISIBLE {
            self.top = self.selected + 1 - VISIBLE;
        }
        Outcome::Continue
    }
}

/// Renders the picker into `area`.
pub fn draw(picker: &Picker, theme: Theme, area: Rect, buf: &mut Buffer) {
    let mut lines = vec![Line::from(Span::styled(
        "Resume a session in this directory",
        Style::new().add_modifier(Modifier::BOLD),
    ))];
    let width = usize::from(area.width);
    for (i, choice) in picker
        .choices
        .iter()
        .enumerate()
        .skip(picker.top)
        .take(VISIBLE)
    {
        let marker = if i == picker.selected { "› " } else { "  " };
        let tail = format!(
            "  {} · {} message{}",
            choice.when,
            choice.messages,
            if choice.messages == 1 { "" } else { "s" }
        );
        let room = width.saturating_sub(marker.chars().count() + tail.chars().count());
        let title = clip(&choice.title, room);
        let style = if i == picker.selected {
            theme.selected()
        } else {
            Style::new()
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{marker}{title}"), style),
            Span::styled(tail, theme.dim()),
        ]));
    }
    lines.push(Line::from(Span::styled(
        "↑↓ choose · enter resume · esc cancel",
        theme.dim(),
    )));
    for (row, line) in lines.into_iter().enumerate() {
        let Ok(row) = u16::try_from(row) else { break };
        if row >= area.height {
            break;
        }
        let line_area = Rect::new(area.x, area.y + row, area.width, 1);
        line.render(line_area, buf);
    }
}

/// `text` cut to `room` characters, with `…` when cut.
fn clip(text: &str, room: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= room {
        return one_line;
    }
    let mut out: String = one_line.chars().take(room.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Shows the picker inline under the cursor and returns the chosen index
/// (`None`: cancelled, or nothing to choose). The area is cleared after.
pub fn pick(choices: Vec<Choice>, theme: Theme) -> std::io::Result<Option<usize>> {
    use ratatui::backend::CrosstermBackend;
    use ratatui::{Terminal, TerminalOptions, Viewport};

    if choices.is_empty() {
        return Ok(None);
    }
    let mut picker = Picker::new(choices);
    crossterm::terminal::enable_raw_mode()?;
    let result = (|| {
        let backend = CrosstermBackend::new(std::io::stdout());
        let mut terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Inline(picker.height()),
            },
        )?;
        let outcome = loop {
            terminal.draw(|frame| {
                let area = frame.area();
                draw(&picker, theme, area, frame.buffer_mut());
            })?;
            if let Event::Key(key) = crossterm::event::read()? {
                match picker.key(key) {
                    Outcome::Continue => {}
                    Outcome::Chosen(i) => break Some(i),
                    Outcome::Cancelled => break None,
                }
            }
        };
        terminal.clear()?;
        Ok(outcome)
    })();
    let _ = crossterm::terminal::disable_raw_mode();
    result
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyEvent, KeyModifiers};
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn choices(n: usize) -> Vec<Choice> {
        (0..n)
            .map(|i| Choice {
                title: format!("session {i}"),
                when: "today 14:02".into(),
                messages: u64::try_from(i).unwrap(),
            })
            .collect()
    }

    fn text(buf: &Buffer) -> Vec<String> {
        let area = buf.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol().to_owned())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn arrows_move_the_selection_within_the_list_and_enter_chooses_it() {
        let mut p = Picker::new(choices(3));
        assert_eq!(p.key(key(KeyCode::Up)), Outcome::Continue);
        assert_eq!(p.selected(), 0);
        p.key(key(KeyCode::Down));
        p.key(key(KeyCode::Down));
        p.key(key(KeyCode::Down));
        assert_eq!(p.selected(), 2, "stops at the last");
        assert_eq!(p.key(key(KeyCode::Enter)), Outcome::Chosen(2));
        assert_eq!(p.key(key(KeyCode::Esc)), Outcome::Cancelled);
        assert_eq!(
            p.key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Outcome::Cancelled
        );
    }

    #[test]
    fn the_list_scrolls_to_keep_the_selection_on_screen() {
        let mut p = Picker::new(choices(25));
        for _ in 0..12 {
            p.key(key(KeyCode::Down));
        }
        assert_eq!(p.selected(), 12);
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, p.height()));
        draw(&p, Theme::plain(), buf.area, &mut buf);
        let rows = text(&buf);
        assert_eq!(rows[0], "Resume a session in this directory");
        assert_eq!(rows[1], "  session 3  today 14:02 · 3 messages");
        assert_eq!(rows[10], "› session 12  today 14:02 · 12 messages");
        assert_eq!(rows[11], "↑↓ choose · enter resume · esc cancel");
        p.key(key(KeyCode::Home));
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, p.height()));
        draw(&p, Theme::plain(), buf.area, &mut buf);
        assert_eq!(text(&buf)[1], "› session 0  today 14:02 · 0 messages");
        assert_eq!(text(&buf)[2], "  session 1  today 14:02 · 1 message");
    }

    #[test]
    fn a_long_title_is_cut_to_the_width_with_an_ellipsis() {
        let p = Picker::new(vec![Choice {
            title: "Fix the flaky test in the\nparser module and the lexer too".into(),
            when: "3 Nov".into(),
            messages: 4,
        }]);
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, p.height()));
        draw(&p, Theme::plain(), buf.area, &mut buf);
        assert_eq!(text(&buf)[1], "› Fix the flaky tes…  3 Nov · 4 messages");
    }
}
