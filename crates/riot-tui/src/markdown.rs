//! The model's Markdown as styled rows: headings, emphasis, inline code,
//! links, nested lists, quotes, fenced code (highlighted, see
//! [`crate::highlight`]), tables and rules. Every row fits the width.
//!
//! While a reply streams, [`stable_len`] says how much of it is made of
//! finished blocks: those rows go into the terminal's scrollback at once
//! and are never drawn again; only the block still growing is redrawn.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{self, hard_wrap, wrap};

/// `text` as rows of at most `width` columns.
pub fn render(text: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut r = Renderer::new(width, theme);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    r.flush();
    r.out
}

/// The length of the longest prefix of a streaming `text` that consists of
/// finished blocks: it ends after a blank line that is outside a code
/// fence and is followed by a line starting a new top-level block (not
/// indented, so not a list item's continuation). Rendering that prefix and
/// the rest apart gives the same rows as rendering the whole.
pub fn stable_len(text: &str) -> usize {
    let mut fence: Option<(char, usize)> = None;
    let mut stable = 0;
    let mut after_blank = false;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if !line.ends_with('\n') {
            // A line still being written decides nothing yet, except that
            // a block after a blank line has begun.
            if after_blank && fence.is_none() && starts_block(line) {
                stable = start;
            }
            break;
        }
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if let Some((ch, n)) = fence {
            let run = trimmed.chars().take_while(|&c| c == ch).count();
            if indent < 4 && run >= n && trimmed[run..].trim().is_empty() {
                fence = None;
            }
            after_blank = false;
            continue;
        }
        if line.trim().is_empty() {
            after_blank = true;
            continue;
        }
        if after_blank && starts_block(line) {
            stable = start;
        }
        after_blank = false;
        if indent < 4 {
            for ch in ['`', '~'] {
                let run = trimmed.chars().take_while(|&c| c == ch).count();
                if run >= 3 {
                    fence = Some((ch, run));
                }
            }
        }
    }
    stable
}

/// A line that starts a top-level block: not indented, not blank.
fn starts_block(line: &str) -> bool {
    line.chars().next().is_some_and(|c| !c.is_whitespace())
}

struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    head_rows: usize,
    in_head: bool,
}

struct Renderer {
    theme: Theme,
    width: usize,
    out: Vec<Line<'static>>,
    /// Inline style stack (emphasis, strong, links…).
    styles: Vec<Style>,
    /// The inline text of the current block, one entry per hard line.
    lines: Vec<Vec<Span<'static>>>,
    /// Next number of each open list (`None`: bullets).
    lists: Vec<Option<u64>>,
    /// The marker waiting for the first row of the current item.
    marker: Option<String>,
    quotes: usize,
    code: Option<(String, String)>,
    table: Option<Table>,
    heading: bool,
    /// A blank row goes before the next block.
    gap: bool,
}

impl Renderer {
    fn new(width: usize, theme: Theme) -> Self {
        Self {
            theme,
            width: width.max(8),
            out: Vec::new(),
            styles: vec![Style::new()],
            lines: Vec::new(),
            lists: Vec::new(),
            marker: None,
            quotes: 0,
            code: None,
            table: None,
            heading: false,
            gap: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.styles.push(style);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    /// The prefix of the rows of the current block: quote bars and list
    /// indentation.
    fn prefix(&self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for _ in 0..self.quotes {
            spans.push(Span::styled("│ ", self.theme.dim()));
        }
        // List items indent their text two columns per level; the first
        // row of an item carries its marker instead.
        let levels = self.lists.len();
        let indent = if self.marker.is_some() {
            levels.saturating_sub(1) * 2
        } else {
            levels * 2
        };
        if indent > 0 {
            spans.push(Span::raw(" ".repeat(indent)));
        }
        spans
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = self.code.as_mut() {
            code.push_str(text);
            return;
        }
        let style = self.style();
        let span = Span::styled(text.to_owned(), style);
        if let Some(table) = self.table.as_mut() {
            if let Some(row) = table.rows.last_mut()
                && let Some(cell) = row.last_mut()
            {
                cell.push(span);
            }
            return;
        }
        if self.lines.is_empty() {
            self.lines.push(Vec::new());
        }
        if let Some(line) = self.lines.last_mut() {
            line.push(span);
        }
    }

    fn gap(&mut self) {
        if self.gap && !self.out.is_empty() {
            let mut prefix = Vec::new();
            for _ in 0..self.quotes {
                prefix.push(Span::styled("│", self.theme.dim()));
            }
            self.out.push(Line::from(prefix));
        }
        self.gap = false;
    }

    /// Writes the current block's inline text as wrapped rows.
    fn flush(&mut self) {
        if self.lines.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.lines);
        self.gap();
        for line in lines {
            let base = self.prefix();
            let (first, rest) = match self.marker.take() {
                Some(marker) => {
                    let pad = " ".repeat(wrap::width(&marker));
                    let mut first = base.clone();
                    first.push(Span::styled(marker, self.theme.dim()));
                    let mut rest = base;
                    rest.push(Span::raw(pad));
                    (first, rest)
                }
                None => (base.clone(), base),
            };
            let rows = wrap(&Line::from(line), self.width, &first, &rest);
            self.out.extend(rows);
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => {
                let style = self.style().patch(self.theme.code());
                self.styles.push(style);
                self.text(&t);
                self.pop_style();
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => self.text(t.trim_end_matches('\n')),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                if self.table.is_none() && self.code.is_none() {
                    self.lines.push(Vec::new());
                }
            }
            Event::Rule => {
                self.flush();
                self.gap = true;
                self.gap();
                let width = self.width.saturating_sub(wrap::width(
                    &self
                        .prefix()
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect::<String>(),
                ));
                let mut spans = self.prefix();
                spans.push(Span::styled("─".repeat(width.min(40)), self.theme.dim()));
                self.out.push(Line::from(spans));
                self.gap = true;
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush(),
            Tag::Heading { level, .. } => {
                self.flush();
                self.gap = self.gap || !self.out.is_empty();
                self.heading = true;
                let hashes = level as usize;
                let style = if hashes <= 2 {
                    self.theme.heading().add_modifier(Modifier::UNDERLINED)
                } else {
                    self.theme.heading()
                };
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap = self.gap || !self.out.is_empty();
                self.gap();
                self.quotes += 1;
                self.push_style(self.theme.dim().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.gap = self.gap || !self.out.is_empty();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap = self.gap || !self.out.is_empty();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_owned(),
                };
                self.marker = Some(marker);
            }
            Tag::Table(_) => {
                self.flush();
                self.gap = self.gap || !self.out.is_empty();
                self.table = Some(Table {
                    rows: Vec::new(),
                    head_rows: 0,
                    in_head: false,
                });
            }
            Tag::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = true;
                    t.rows.push(Vec::new());
                }
                self.push_style(Style::new().add_modifier(Modifier::BOLD));
            }
            Tag::TableRow => {
                if let Some(t) = self.table.as_mut() {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(t) = self.table.as_mut()
                    && let Some(row) = t.rows.last_mut()
                {
                    row.push(Vec::new());
                }
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Link { .. } => self.push_style(self.theme.link()),
            Tag::Image { .. } => self.push_style(self.theme.link()),
            _ => self.push_style(Style::new()),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.pop_style();
                self.heading = false;
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.quotes = self.quotes.saturating_sub(1);
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(&lang, &code);
                }
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.gap = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.marker = None;
                // Items of a tight list follow each other without a gap.
                self.gap = false;
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_rows(table);
                }
                self.gap = true;
            }
            TagEnd::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = false;
                    t.head_rows = t.rows.len();
                }
                self.pop_style();
            }
            TagEnd::TableRow | TagEnd::TableCell => {}
            _ => self.pop_style(),
        }
    }

    fn code_block(&mut self, lang: &str, code: &str) {
        self.gap();
        let code = code.strip_suffix('\n').unwrap_or(code);
        let highlighted = if self.theme.highlights() {
            crate::highlight::highlight(code, lang)
        } else {
            None
        };
        let lines = highlighted.unwrap_or_else(|| {
            code.split('\n')
                .map(|l| Line::from(Span::styled(l.to_owned(), self.theme.code_block())))
                .collect()
        });
        let mut base = self.prefix();
        if let Some(marker) = self.marker.take() {
            base.push(Span::raw(" ".repeat(wrap::width(&marker))));
        }
        base.push(Span::raw("  "));
        for line in lines {
            self.out.extend(hard_wrap(&line, self.width, &base, &base));
        }
    }

    fn table_rows(&mut self, table: Table) {
        self.gap();
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let cell_text = |cell: &Vec<Span<'static>>| -> String {
            cell.iter().map(|s| s.content.as_ref()).collect::<String>()
        };
        let mut widths = vec![1usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(wrap::width(cell_text(cell).trim()));
            }
        }
        // Shrink the widest columns until the table fits.
        let base = self.prefix();
        let base_width: usize = base.iter().map(Span::width).sum();
        let avail = self
            .width
            .saturating_sub(base_width + 3 * cols + 1)
            .max(cols);
        while widths.iter().sum::<usize>() > avail {
            let Some((i, _)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
                break;
            };
            if widths[i] <= 3 {
                break;
            }
            widths[i] -= 1;
        }
        let dim = self.theme.dim();
        let rule = |left: &str, mid: &str, right: &str| {
            let mut spans = base.clone();
            let mut s = left.to_owned();
            for (i, w) in widths.iter().enumerate() {
                s.push_str(&"─".repeat(w + 2));
                s.push_str(if i + 1 == cols { right } else { mid });
            }
            spans.push(Span::styled(s, dim));
            Line::from(spans)
        };
        self.out.push(rule("┌", "┬", "┐"));
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = base.clone();
            spans.push(Span::styled("│", dim));
            for (i, w) in widths.iter().enumerate() {
                let text = row.get(i).map(cell_text).unwrap_or_default();
                let text = wrap::truncate(text.trim(), *w);
                let pad = w.saturating_sub(wrap::width(&text));
                let style = row
                    .get(i)
                    .and_then(|c| c.first())
                    .map(|s| s.style)
                    .unwrap_or_default();
                spans.push(Span::raw(" "));
                spans.push(Span::styled(text, style));
                spans.push(Span::raw(" ".repeat(pad + 1)));
                spans.push(Span::styled("│", dim));
            }
            self.out.push(Line::from(spans));
            if r + 1 == table.head_rows {
                self.out.push(rule("├", "┼", "┤"));
            }
        }
        self.out.push(rule("└", "┴", "┘"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, width: usize) -> Vec<String> {
        render(text, width, Theme::plain())
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_are_separated_by_one_blank_row() {
        assert_eq!(
            plain(
                "# Title\n\nSome *text* here.\n\n- a\n- b\n  - c\n\n1. one\n2. two\n",
                40
            ),
            [
                "Title",
                "",
                "Some text here.",
                "",
                "• a",
                "• b",
                "  • c",
                "",
                "1. one",
                "2. two"
            ]
        );
    }

    #[test]
    fn code_and_tables_keep_their_shape() {
        assert_eq!(
            plain("```\nlet x = 1;\n  y\n```\n", 40),
            ["  let x = 1;", "    y"]
        );
        assert_eq!(
            plain("| a | bb |\n|---|---|\n| 1 | 2 |\n", 40),
            [
                "┌───┬────┐",
                "│ a │ bb │",
                "├───┼────┤",
                "│ 1 │ 2  │",
                "└───┴────┘"
            ]
        );
    }

    #[test]
    fn list_items_wrap_under_their_text() {
        assert_eq!(
            plain("- one two three four\n", 12),
            ["• one two", "  three four"]
        );
    }

    #[test]
    fn the_stable_prefix_ends_before_a_new_top_level_block() {
        assert_eq!(stable_len("para one\n\npara two"), 10);
        assert_eq!(stable_len("para one\n\n"), 0, "the next block is unknown");
        assert_eq!(stable_len("- a\n\n  more of a\n"), 0, "a continuation");
        assert_eq!(stable_len("```\ncode\n\nmore\n"), 0, "inside a fence");
        assert_eq!(stable_len("```\ncode\n```\n\nafter\n"), 14);
        let text = "a\n\nb\n\nc";
        let cut = stable_len(text);
        assert_eq!(&text[..cut], "a\n\nb\n\n");
    }
}
