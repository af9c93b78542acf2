//! Word wrapping of styled lines to the terminal's width, so every line the
//! UI produces is exactly one row: the height of what goes into the
//! scrollback is known before it is drawn.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// The display width of `text` (wide characters count two columns;
/// control characters none).
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `line` wrapped to `width` columns at spaces (a word longer than a row
/// is cut). The first row starts with `first`, the others with `rest`.
pub fn wrap(
    line: &Line<'static>,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let width = width.max(2);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row = Row::start(first, width);
    // Words and the runs of spaces between them; a word may change style
    // part-way (`**bold**ly`) and is still kept whole.
    for token in tokens(line) {
        let w: usize = token.pieces.iter().map(|(t, _)| self::width(t)).sum();
        if token.blank {
            if row.used + w <= row.width {
                for (text, style) in &token.pieces {
                    row.push(text, *style);
                }
            } else {
                // Spaces at the end of a row are dropped.
                rows.push(row.finish_trimmed());
                row = Row::start(rest, width);
            }
            continue;
        }
        if row.used + w > row.width && row.has_text {
            rows.push(row.finish_trimmed());
            row = Row::start(rest, width);
        }
        if row.used + w <= row.width {
            for (text, style) in &token.pieces {
                row.push(text, *style);
            }
            continue;
        }
        // Longer than a whole row: cut it.
        for (text, style) in &token.pieces {
            for c in text.chars() {
                let cw = c.width().unwrap_or(0);
                if row.used + cw > row.width && row.has_text {
                    rows.push(row.finish_trimmed());
                    row = Row::start(rest, width);
                }
                let mut buf = [0u8; 4];
                row.push(c.encode_utf8(&mut buf), *style);
            }
        }
    }
    rows.push(row.finish_trimmed());
    rows
}

/// `line` cut into rows of `width` columns, character by character (code,
/// paths, command output: spaces matter).
pub fn hard_wrap(
    line: &Line<'static>,
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Line<'static>> {
    let width = width.max(2);
    let mut rows = Vec::new();
    let mut row = Row::start(first, width);
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let cw = c.width().unwrap_or(0);
            if row.used + cw > row.width && row.has_text {
                rows.push(row.finish());
                row = Row::start(rest, width);
            }
            let mut buf = [0u8; 4];
            row.push(c.encode_utf8(&mut buf), style);
        }
    }
    rows.push(row.finish());
    rows
}

/// `text` cut to `max` columns, with `…` when something was cut.
pub fn truncate(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > max {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

struct Row {
    spans: Vec<Span<'static>>,
    /// Spans of the prefix (never trimmed).
    prefix: usize,
    used: usize,
    width: usize,
    has_text: bool,
}

impl Row {
    fn start(prefix: &[Span<'static>], width: usize) -> Self {
        let used: usize = prefix.iter().map(Span::width).sum();
        Self {
            spans: prefix.to_vec(),
            prefix: prefix.len(),
            used,
            // A prefix wider than the row still leaves a column for text.
            width: width.max(used + 1),
            has_text: false,
        }
    }

    fn push(&mut self, text: &str, style: Style) {
        self.used += width(text);
        let joinable = self.has_text;
        self.has_text = true;
        match self.spans.last_mut() {
            Some(last) if joinable && last.style == style => {
                last.content.to_mut().push_str(text);
            }
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn finish(self) -> Line<'static> {
        Line::from(self.spans)
    }

    /// The row without the spaces it ends with (word wrapping).
    fn finish_trimmed(mut self) -> Line<'static> {
        let keep = self.prefix;
        while self.spans.len() > keep {
            let Some(last) = self.spans.last_mut() else {
                break;
            };
            let trimmed = last.content.trim_end_matches(' ').len();
            if trimmed == last.content.len() {
                break;
            }
            if trimmed == 0 {
                self.spans.pop();
                continue;
            }
            last.content.to_mut().truncate(trimmed);
            break;
        }
        Line::from(self.spans)
    }
}

/// A run of spaces, or a word (possibly in several styles).
struct Token {
    blank: bool,
    pieces: Vec<(String, Style)>,
}

/// The runs of spaces and the words of `line`, in order.
fn tokens(line: &Line<'static>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let c = if c == '\t' { ' ' } else { c };
            let blank = c == ' ';
            match out.last_mut() {
                Some(token) if token.blank == blank => match token.pieces.last_mut() {
                    Some((text, s)) if *s == style => text.push(c),
                    _ => token.pieces.push((c.to_string(), style)),
                },
                _ => out.push(Token {
                    blank,
                    pieces: vec![(c.to_string(), style)],
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn words_wrap_at_spaces_and_long_words_are_cut() {
        let line = Line::from("the quick brown fox jumps");
        assert_eq!(
            text(&wrap(&line, 10, &[], &[])),
            ["the quick", "brown fox", "jumps"]
        );
        let long = Line::from("abcdefghijkl xy");
        assert_eq!(text(&wrap(&long, 5, &[], &[])), ["abcde", "fghij", "kl xy"]);
    }

    #[test]
    fn prefixes_indent_the_first_and_following_rows() {
        let line = Line::from("one two three");
        let rows = wrap(&line, 9, &[Span::raw("• ")], &[Span::raw("  ")]);
        assert_eq!(text(&rows), ["• one two", "  three"]);
    }

    #[test]
    fn hard_wrap_keeps_spaces_and_wide_characters_fit() {
        let line = Line::from("ab  cd中中");
        assert_eq!(text(&hard_wrap(&line, 4, &[], &[])), ["ab  ", "cd中", "中"]);
        assert_eq!(truncate("hello world", 6), "hello…");
        assert_eq!(truncate("hi", 6), "hi");
    }
}
