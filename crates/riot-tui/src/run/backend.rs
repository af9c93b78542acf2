//! The terminal backend the loop draws through ([`Pinned`]), and the
//! writing of styled rows as text runs: a style is set only where it
//! changes, in as few parameters as it takes.

use std::io::{BufWriter, Stdout, Write};

use crossterm::cursor;
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Size};
use ratatui::text::Line;

/// Keeps the terminal's size as last handled, so ratatui never notices a
/// resize on its own in the middle of a frame, and answers where the
/// cursor is from what was drawn: ratatui asks on every resize, and asking
/// the terminal (a query answered on stdin) would race the event stream
/// that reads keys. Only the first position, before the stream exists, is
/// asked of the terminal.
pub(super) struct Pinned<B: Backend> {
    pub(super) inner: B,
    pub(super) size: Size,
    pub(super) cursor: Option<Position>,
    /// Draws go nowhere: ratatui is told what the terminal shows after
    /// the loop moved it itself (see [`promote`](super::scrollback::promote)).
    pub(super) mute: bool,
    /// What the live area shows, as last drawn: a few unchanged cells
    /// between two changed ones on a row are written again from it, which
    /// is shorter than moving the cursor over them.
    pub(super) screen: Option<Buffer>,
    /// Whether the cursor shows, as last set.
    pub(super) visible: Option<bool>,
}

impl<B: Backend> Pinned<B> {
    pub(super) fn clamp(&self, p: Position) -> Position {
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

pub(super) type Term = Terminal<Pinned<CrosstermBackend<BufWriter<Stdout>>>>;

/// Moves the cursor to column `x` of row `y` (from 0), leaving out the
/// column when it is the first: `ESC [ row H` is two bytes shorter than
/// `ESC [ row ; 1 H`, and most moves are to a row's start.
pub(super) fn move_to(out: &mut impl Write, x: u16, y: u16) -> std::io::Result<()> {
    if x == 0 {
        write!(out, "\x1b[{}H", u32::from(y) + 1)
    } else {
        crossterm::queue!(out, cursor::MoveTo(x, y))
    }
}

/// One row as styled text runs: a style is set only where it changes
/// (spaces keep the one before when it would not show on them), and reset
/// once at the end.
pub(super) fn write_row(out: &mut impl Write, line: &Line<'_>) -> std::io::Result<()> {
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
