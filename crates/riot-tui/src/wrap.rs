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
    let pieces: Vec<Piece> = line
        .spans
        .iter()
        .map(|span| Piece {
            text: span.content.to_string(),
            style: line.style.patch(span.style),
            at: 0,
            end: 0,
            linear: false,
        })
        .collect();
    wrap_pieces(&pieces, width, first, rest)
        .into_iter()
        .map(|row| row.line)
        .collect()
}

/// A run of text in one style, with where it came from in the source it
/// was rendered from: the byte range `at..end`. When `linear` its text is
/// that source's text, byte for byte, so each of its characters has an
/// offset of its own; otherwise (an entity, a code span, a soft break) all
/// of them share `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub text: String,
    pub style: Style,
    pub at: usize,
    pub end: usize,
    pub linear: bool,
}

impl Piece {
    /// The source offset of the character at byte `i` of the text.
    pub fn offset(&self, i: usize) -> usize {
        if self.linear { self.at + i } else { self.at }
    }

    /// The source offset of its last byte; for a piece that is not its
    /// source byte for byte, of the last byte of that source.
    fn last(&self) -> usize {
        if self.linear {
            (self.at + self.text.len()).saturating_sub(1).max(self.at)
        } else {
            self.end.saturating_sub(1).max(self.at)
        }
    }

    /// A piece of the same kind holding `c`, from source offset `at`.
    fn cut(&self, c: char, at: usize) -> Piece {
        Piece {
            text: c.to_string(),
            style: self.style,
            at,
            end: self.end,
            linear: self.linear,
        }
    }
}

/// One row of [`wrap_pieces`], with the source offsets of its first and
/// last characters (`None` for a row without text) and whether the first
/// begins a word or a run of spaces rather than continuing a word cut at
/// the end of the row before.
#[derive(Debug, Clone)]
pub struct Wrapped {
    pub line: Line<'static>,
    pub at: Option<usize>,
    pub last: Option<usize>,
    pub fresh: bool,
    /// The source offset of the spaces dropped at the end of the row
    /// before (a row without text after them comes from there).
    pub after: Option<usize>,
}

/// [`wrap`] of styled pieces, each row saying where in the source it
/// starts. Greedy: a row is closed only when the next word does not fit
/// on it, so the rows of a text but its last are also the first rows of
/// any longer text that starts with it.
pub fn wrap_pieces(
    pieces: &[Piece],
    width: usize,
    first: &[Span<'static>],
    rest: &[Span<'static>],
) -> Vec<Wrapped> {
    let width = width.max(2);
    let mut rows: Vec<Wrapped> = Vec::new();
    let mut row = Row::start(first, width);
    // Words and the runs of spaces between them; a word may change style
    // part-way (`**bold**ly`) and is still kept whole.
    for token in tokens(pieces) {
        let w: usize = token.pieces.iter().map(|p| self::width(&p.text)).sum();
        if token.blank {
            if row.used + w <= row.width {
                for p in &token.pieces {
                    row.push(&p.text, p.style, (p.at, p.last()), true);
                }
            } else {
                // Spaces at the end of a row are dropped.
                rows.push(row.finish_trimmed());
                row = Row::start(rest, width);
                row.after = token.pieces.last().map(Piece::last);
            }
            continue;
        }
        if row.used + w > row.width && row.has_text {
            rows.push(row.finish_trimmed());
            row = Row::start(rest, width);
        }
        if row.used + w <= row.width {
            for p in &token.pieces {
                row.push(&p.text, p.style, (p.at, p.last()), true);
            }
            continue;
        }
        // Longer than a whole row: cut it.
        let mut starts = true;
        for p in &token.pieces {
            for (i, c) in p.text.char_indices() {
                let cw = c.width().unwrap_or(0);
                if row.used + cw > row.width && row.has_text {
                    rows.push(row.finish_trimmed());
                    row = Row::start(rest, width);
                }
                let mut buf = [0u8; 4];
                let at = p.offset(i);
                let last = if p.linear {
                    at + c.len_utf8() - 1
                } else {
                    p.last()
                };
                row.push(c.encode_utf8(&mut buf), p.style, (at, last), starts);
                starts = false;
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
                rows.push(row.finish().line);
                row = Row::start(rest, width);
            }
            let mut buf = [0u8; 4];
            row.push(c.encode_utf8(&mut buf), style, (0, 0), true);
        }
    }
    rows.push(row.finish().line);
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
    /// The source offsets of the first and last characters, and whether
    /// the first begins a token.
    at: Option<usize>,
    last: Option<usize>,
    fresh: bool,
    /// The source offset of the spaces dropped before the row.
    after: Option<usize>,
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
            at: None,
            last: None,
            fresh: false,
            after: None,
        }
    }

    /// Adds `text`, from the source offsets `at` (the first and the last
    /// character's); `fresh` when it begins a token.
    fn push(&mut self, text: &str, style: Style, at: (usize, usize), fresh: bool) {
        self.used += width(text);
        let joinable = self.has_text;
        if !self.has_text {
            self.at = Some(at.0);
            // Spaces dropped before it from the same place in the source
            // (a code span's) are not behind it.
            self.fresh = fresh && self.after.is_none_or(|a| at.0 > a);
        }
        self.last = Some(self.last.map_or(at.1, |l| l.max(at.1)));
        self.has_text = true;
        match self.spans.last_mut() {
            Some(last) if joinable && last.style == style => {
                last.content.to_mut().push_str(text);
            }
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn finish(self) -> Wrapped {
        Wrapped {
            line: Line::from(self.spans),
            at: self.at,
            last: self.last,
            fresh: self.fresh,
            after: self.after,
        }
    }

    /// The row without the spaces it ends with (word wrapping).
    fn finish_trimmed(mut self) -> Wrapped {
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
        self.finish()
    }
}

/// A run of spaces, or a word (possibly in several styles): parts of the
/// pieces it is made of.
struct Token {
    blank: bool,
    pieces: Vec<Piece>,
}

/// The runs of spaces and the words of `pieces`, in order.
fn tokens(pieces: &[Piece]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for piece in pieces {
        for (i, c) in piece.text.char_indices() {
            let at = piece.offset(i);
            let c = if c == '\t' { ' ' } else { c };
            let blank = c == ' ';
            match out.last_mut() {
                // Runs never join two pieces, so that the offset of each
                // character stays known (rows join them again).
                Some(token) if token.blank == blank => match token.pieces.last_mut() {
                    Some(last) if i > 0 => last.text.push(c),
                    _ => token.pieces.push(piece.cut(c, at)),
                },
                _ => out.push(Token {
                    blank,
                    pieces: vec![piece.cut(c, at)],
                }),
            }
        }
    }
    out
}

/// `1 call`, `3 calls`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
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
