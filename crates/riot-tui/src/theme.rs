//! The styles of the terminal UI. With `NO_COLOR` set (any non-empty
//! value, <https://no-color.org>) no colour is used at all; bold, dim,
//! italic and reverse still mark structure.

use ratatui::style::{Color, Modifier, Style};

/// The styles every view draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours may be used.
    pub color: bool,
}

impl Theme {
    /// Colours unless `no_color` (the value of `NO_COLOR`) is set and not
    /// empty.
    pub fn from_no_color(no_color: Option<&str>) -> Self {
        Self {
            color: no_color.is_none_or(str::is_empty),
        }
    }

    /// A theme without colour (snapshot tests, `NO_COLOR`).
    pub const fn plain() -> Self {
        Self { color: false }
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }

    /// Secondary text: hints, the status line, tool details.
    pub fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    /// A heading of the model's reply.
    pub fn heading(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    /// `inline code`.
    pub fn code(self) -> Style {
        self.fg(Color::Cyan)
    }

    /// A link's text.
    pub fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }

    /// The person's own messages.
    pub fn user(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// The bullet of a tool line.
    pub fn tool(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::BOLD)
    }

    /// Added diff lines.
    pub fn added(self) -> Style {
        self.fg(Color::Green)
    }

    /// Removed diff lines.
    pub fn removed(self) -> Style {
        self.fg(Color::Red)
    }

    /// Errors and failed calls.
    pub fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    /// Warnings.
    pub fn warning(self) -> Style {
        self.fg(Color::Yellow)
    }

    /// A question to the person (permission, AskUser).
    pub fn question(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// The selected entry of a menu or picker.
    pub fn selected(self) -> Style {
        if self.color {
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// The model's folded thinking.
    pub fn thinking(self) -> Style {
        self.dim().add_modifier(Modifier::ITALIC)
    }

    /// The spinner and the working indicator.
    pub fn spinner(self) -> Style {
        self.fg(Color::Magenta)
    }

    /// A code block's text when it is not highlighted.
    pub fn code_block(self) -> Style {
        self.fg(Color::Gray)
    }

    /// Whether code blocks are highlighted (only with colour).
    pub fn highlights(self) -> bool {
        self.color
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_turns_colour_off_only_when_set_and_not_empty() {
        assert!(Theme::from_no_color(None).color);
        assert!(Theme::from_no_color(Some("")).color);
        assert!(!Theme::from_no_color(Some("1")).color);
        assert_eq!(Theme::plain().error().fg, None);
    }
}
