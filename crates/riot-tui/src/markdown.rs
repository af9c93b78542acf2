//! The model's Markdown as styled rows: headings, emphasis, inline code,
//! links, nested lists, quotes, fenced code (highlighted, see
//! [`crate::highlight`]), tables and rules. Every row fits the width.
//!
//! While a reply streams, its finished rows go into the terminal's
//! scrollback at once and are never drawn again; only what may still
//! change is redrawn. [`stable_len`] says how much of the reply is made of
//! finished top-level blocks, and [`settle`] how many rows of the block
//! still growing can no longer change — the wrapped rows of a paragraph but
//! its last, the lines of a code block but the one being written, the
//! items of a list but the last — and where rendering resumes after them
//! ([`render_from`]), so that a width change renders the rest at the new
//! width without drawing a row twice.
//!
//! A row is settled when no text that may follow can change it:
//!
//! - A block is finished once a whole line follows its last line: only the
//!   next line could still turn a paragraph into a setext heading or its
//!   last line into a table's header row.
//! - In a paragraph still growing, greedy wrapping closes a row only when
//!   the next word does not fit on it, so every row of the settled text but
//!   the last stays the same however the text goes on. The settled text
//!   ends before the last word (it may still grow, or end an entity or an
//!   escape), before a delimiter that a later one could still pair with (a
//!   backtick, `[`, `<`, and a `*`, `_` or `~` run that can open emphasis),
//!   and before a line with a pipe that the next line could make a table's
//!   header row.
//! - A code block's line is settled once it has its newline: highlighting
//!   reads a line with the lines before it only.
//! - A table waits for its end: its column widths depend on every row.
//!
//! Two ways the Markdown is drawn make that hold: a setext heading whose
//! text takes more than one row is drawn as a paragraph and a rule (the
//! underline may come after the paragraph's first rows are in the
//! scrollback; `---` under a paragraph is most often meant as a rule), and
//! a list item's paragraph is followed by a blank row only before another
//! paragraph, so that a list drawn tight stays the same when a later blank
//! line makes it loose.

use std::ops::Range;

use pulldown_cmark::{Options, Parser};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{self, Piece, wrap_pieces};

mod code;
mod events;
mod settling;
mod table;

use code::Code;
use events::Heading;
pub use settling::{Settled, settle, stable_len};
use settling::{from, trim_start, until};
use table::Table;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// `text` as rows of at most `width` columns.
pub fn render(text: &str, width: usize, theme: Theme) -> Vec<Line<'static>> {
    render_from(text, width, theme, 0)
}

/// The rows of `text` from byte `skip` on: what comes from the text before
/// it is left out. `skip` is a [`Settled::resume`] of a text that `text`
/// starts with (or 0).
pub fn render_from(text: &str, width: usize, theme: Theme, skip: usize) -> Vec<Line<'static>> {
    Renderer::run(text, width, theme, skip)
        .into_iter()
        .map(|row| row.line)
        .collect()
}

/// One row as rendered, with what settling needs to know of it.
struct Out {
    line: Line<'static>,
    /// The source offset it comes from: its first character's, a code
    /// line's start, a table's or a rule's start; a blank row between
    /// blocks has the offset of the block after it.
    at: usize,
    /// The source offset of its last character (`at` for a row of a code
    /// line, a table, a rule or a blank row).
    last: usize,
    /// It begins a word, a line or a block: rendering can resume here.
    fresh: bool,
    /// It stays the same however the text goes on.
    fixed: bool,
    /// A blank row between blocks.
    gap: bool,
}

/// One hard line of the current block's inline text.
struct Inline {
    pieces: Vec<Piece>,
    /// Where the line starts in the source.
    at: usize,
    /// Where the hard break that ends it is.
    brk: Option<usize>,
}

impl Inline {
    fn new(at: usize) -> Self {
        Self {
            pieces: Vec::new(),
            at,
            brk: None,
        }
    }

    /// The source offset of its first character.
    fn start(&self) -> usize {
        self.pieces.first().map_or(self.at, |p| p.at)
    }
}

/// The source of the inline text waiting in [`Renderer::lines`]: where it
/// ends and where its literal text is (a delimiter left unpaired shows up
/// there).
#[derive(Default)]
struct Leaf {
    /// Where its block starts: its first row comes from there, whatever
    /// block the text turns out to be (a paragraph's first line may still
    /// become a table's header row).
    start: usize,
    end: usize,
    texts: Vec<Range<usize>>,
    /// The source ranges of its emphasis, links and the like.
    spans: Vec<Range<usize>>,
    /// Lines of an HTML block are joined without a space between them: a
    /// word may go on on the next line.
    html: bool,
}

struct Renderer<'a> {
    source: &'a str,
    theme: Theme,
    width: usize,
    /// Rows from the source before this offset are left out.
    skip: usize,
    /// Where the source's last whole line starts, and where the line after
    /// it (still being written) starts.
    last_line: usize,
    open_line: usize,
    /// Hard breaks before this offset hold: the line after them is whole
    /// and stays in the paragraph (a line with a pipe may still become a
    /// table's header row and leave it).
    breaks: usize,
    out: Vec<Out>,
    /// Whether any row was rendered, left out or not.
    rendered: bool,
    /// The source range of the event being handled.
    at: Range<usize>,
    /// Where the block whose inline text comes next began, when it is
    /// open and nothing was drawn of it yet (a tight list item's text after
    /// a nested block has no block of its own: it starts at its text).
    block: Option<usize>,
    /// Where the list item whose first row is still to come began: its
    /// first rows come from there, whatever block its text turns out to be
    /// (a tight item's text, a paragraph, a setext heading, a code block).
    item: Option<usize>,
    /// Inline style stack (emphasis, strong, links…).
    styles: Vec<Style>,
    /// The inline text of the current block, one entry per hard line.
    lines: Vec<Inline>,
    leaf: Leaf,
    /// Next number of each open list (`None`: bullets).
    lists: Vec<Option<u64>>,
    /// The marker waiting for the first row of the current item.
    marker: Option<String>,
    quotes: usize,
    /// The open list items (`true`) and quotes, innermost last.
    containers: Vec<bool>,
    /// A list item's paragraph just ended: a blank row goes before a
    /// paragraph that follows in the item, and only before one.
    item_para: bool,
    /// The inline text waiting is a task list item's box only: the text
    /// after it goes on the same row, in a loose list's paragraph too.
    task: bool,
    code: Option<Code>,
    table: Option<Table>,
    heading: Option<Heading>,
    /// A blank row goes before the next block.
    gap: bool,
}

impl<'a> Renderer<'a> {
    fn run(source: &'a str, width: usize, theme: Theme, skip: usize) -> Vec<Out> {
        let open_line = source.rfind('\n').map_or(0, |i| i + 1);
        let last_line = match open_line.checked_sub(1) {
            Some(end) => source[..end].rfind('\n').map_or(0, |i| i + 1),
            None => 0,
        };
        let breaks = if source[last_line..open_line].contains('|') {
            match last_line.checked_sub(1) {
                Some(end) => source[..end].rfind('\n').map_or(0, |i| i + 1),
                None => 0,
            }
        } else {
            last_line
        };
        let mut r = Renderer {
            source,
            theme,
            width: width.max(8),
            skip,
            last_line,
            open_line,
            breaks,
            out: Vec::new(),
            rendered: false,
            at: 0..0,
            block: None,
            item: None,
            styles: vec![Style::new()],
            lines: Vec::new(),
            leaf: Leaf::default(),
            lists: Vec::new(),
            marker: None,
            quotes: 0,
            containers: Vec::new(),
            item_para: false,
            task: false,
            code: None,
            table: None,
            heading: None,
            gap: false,
        };
        for (event, range) in Parser::new_ext(source, options()).into_offset_iter() {
            r.at = range;
            r.event(event);
        }
        r.flush();
        r.out
    }

    /// Where the block of the event being handled starts: at its first
    /// character that is not indentation, where any block a line may turn
    /// out to be starts.
    fn block_start(&self) -> usize {
        let source = self.source.get(self.at.clone()).unwrap_or("");
        self.at.start + (source.len() - source.trim_start_matches([' ', '\t']).len())
    }

    /// Whether a block whose source ends at `end` is finished: a whole
    /// line follows its last line.
    fn finished(&self, end: usize) -> bool {
        end <= self.last_line
    }

    fn push(&mut self, mut row: Out) {
        self.rendered = true;
        if let Some(item) = self.item {
            row.at = row.at.min(item);
            if !row.gap {
                self.item = None;
            }
        }
        if row.at >= self.skip {
            self.out.push(row);
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
        let piece = Piece {
            text: text.to_owned(),
            style: self.style(),
            at: self.at.start,
            end: self.at.end,
            linear: self.source.get(self.at.clone()) == Some(text),
        };
        if let Some(code) = self.code.as_mut() {
            code.pieces.push(piece);
            return;
        }
        if let Some(table) = self.table.as_mut() {
            if let Some(row) = table.rows.last_mut()
                && let Some(cell) = row.last_mut()
            {
                cell.push(Span::styled(piece.text, piece.style));
            }
            return;
        }
        if self.lines.is_empty() {
            self.begin_inline(self.at.start);
        }
        self.leaf.end = self.leaf.end.max(self.at.end);
        if let Some(line) = self.lines.last_mut() {
            line.pieces.push(piece);
        }
    }

    /// Starts the inline text of a block with a line from source offset
    /// `at`.
    fn begin_inline(&mut self, at: usize) {
        self.lines.push(Inline::new(at));
        self.leaf.start = self.block.take().unwrap_or(at);
    }

    /// A blank row before the block starting at `at`, when one is due.
    fn gap(&mut self, at: usize) {
        if self.gap && self.rendered {
            let mut prefix = Vec::new();
            for _ in 0..self.quotes {
                prefix.push(Span::styled("│", self.theme.dim()));
            }
            self.push(Out {
                line: Line::from(prefix),
                at,
                last: at,
                fresh: true,
                fixed: true,
                gap: true,
            });
        }
        self.gap = false;
    }

    /// The rows' prefixes of the first line of the current block and of
    /// the rows after, taking the marker waiting for it.
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let base = self.prefix();
        match self.marker.take() {
            Some(marker) => {
                let pad = " ".repeat(wrap::width(&marker));
                let mut first = base.clone();
                first.push(Span::styled(marker, self.theme.dim()));
                let mut rest = base;
                rest.push(Span::raw(pad));
                (first, rest)
            }
            None => (base.clone(), base),
        }
    }

    /// Writes the current block's inline text as wrapped rows.
    fn flush(&mut self) {
        self.task = false;
        if self.lines.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.lines);
        let leaf = std::mem::take(&mut self.leaf);
        let finished = self.finished(leaf.end);
        // The text before this offset renders the same however the text
        // goes on.
        let settled = if finished {
            usize::MAX
        } else if leaf.html {
            0
        } else {
            self.settled_text(&leaf)
        };
        let block = leaf
            .start
            .min(lines.first().map_or(leaf.start, Inline::start));
        self.gap(block);
        for (l, line) in lines.into_iter().enumerate() {
            let (first, rest) = self.prefixes();
            let mut pieces = from(&line.pieces, self.skip);
            let begun = line.start() < self.skip;
            if begun {
                // The item's first row was among those left out.
                self.item = None;
                // A row after a line's first never starts with spaces:
                // wrapping drops them at the end of the row before.
                trim_start(&mut pieces);
            }
            if begun && pieces.is_empty() {
                // All of it is in the scrollback already.
                self.rendered = true;
                continue;
            }
            // A line begun in the scrollback goes on under its text.
            let first = if begun { rest.clone() } else { first };
            let rows = wrap_pieces(&pieces, self.width, &first, &rest);
            // A hard break holds once the line after it is whole: a fence
            // or a list there would end the paragraph instead, and leave
            // a trailing backslash as it is.
            let fixed = if finished || line.brk.is_some_and(|b| b < settled && b < self.breaks) {
                rows.len()
            } else {
                let before = until(&pieces, settled);
                if before.is_empty() {
                    0
                } else {
                    wrap_pieces(&before, self.width, &first, &rest)
                        .len()
                        .saturating_sub(1)
                }
            };
            for (i, row) in rows.into_iter().enumerate() {
                // The block's first row comes from where the block starts.
                let at = if l == 0 && i == 0 && !begun {
                    block
                } else {
                    row.at.or(row.after).unwrap_or(line.at)
                };
                self.push(Out {
                    line: row.line,
                    at,
                    last: row.last.unwrap_or(at),
                    // A row without text is a place to resume at only as
                    // an empty line.
                    fresh: row.fresh || (row.at.is_none() && row.after.is_none()),
                    fixed: i < fixed,
                    gap: false,
                });
            }
        }
    }

    /// The number of rows the inline text waiting takes, its marker
    /// included.
    fn inline_rows(&self) -> usize {
        let base = self.prefix();
        let mut first = base.clone();
        let mut rest = base;
        if let Some(marker) = &self.marker {
            first.push(Span::raw(marker.clone()));
            rest.push(Span::raw(" ".repeat(wrap::width(marker))));
        }
        self.lines
            .iter()
            .map(|line| wrap_pieces(&line.pieces, self.width, &first, &rest).len())
            .sum()
    }

    /// A rule from source offset `at`, after a blank row.
    fn rule(&mut self, at: usize, fixed: bool) {
        self.gap(at);
        let width = self.width.saturating_sub(wrap::width(
            &self
                .prefix()
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>(),
        ));
        let mut spans = self.prefix();
        spans.push(Span::styled("─".repeat(width.min(40)), self.theme.dim()));
        self.push(Out {
            line: Line::from(spans),
            at,
            last: at,
            fresh: true,
            fixed,
            gap: false,
        });
        self.gap = true;
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
    /// A small deterministic random source (xorshift), for generated
    /// Markdown.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % n as u64).unwrap()
        }
    }

    /// Pieces of Markdown that make blocks and spans, and break them.
    const FRAGMENTS: &[&str] = &[
        "alpha",
        "be",
        "gamma",
        "delta",
        "x",
        "ab",
        "wordlongerthanarowiswrappedbycut",
        "中文字",
        "alpha",
        "be",
        "gamma",
        "delta",
        " ",
        " ",
        " ",
        " ",
        "  ",
        " ",
        " ",
        " ",
        "\n",
        "\n",
        "\n\n",
        "*",
        "**",
        "_",
        "`",
        "``",
        "[",
        "]",
        "](u)",
        "<",
        ">",
        "<b>",
        "&amp;",
        "&",
        "\\",
        "\\*",
        "~~",
        "|",
        "!",
        "#",
        "- ",
        "* ",
        "1. ",
        "2) ",
        "    ",
        "> ",
        "# ",
        "## ",
        "```\n",
        "```rust\n",
        "~~~\n",
        "---",
        "===",
        "***",
        "| a | b |\n|---|---|\n",
        "- [ ] ",
        "  - ",
        "\n- ",
        "\n- ",
        "\n1. ",
        "\n```rust\n",
        "\n```\n",
        "\n> ",
        "\n  ",
        "\n---\n",
        "\n===\n",
        "*it*",
        "**bold**",
        "`code`",
        "[a](b)",
        "<http://a.b>",
        "a_b",
        "_c_",
    ];

    fn document(rng: &mut Rng, len: usize) -> String {
        let mut doc = String::new();
        while doc.len() < len {
            doc.push_str(FRAGMENTS[rng.below(FRAGMENTS.len())]);
        }
        doc
    }

    /// The scrollback a streamed `doc` leaves when it arrives cut at `cuts`
    /// (increasing byte offsets): finished blocks go at once, as the app
    /// does; with `settling`, so do the settled rows of the block still
    /// growing, once after each piece. `widths` gives the width after each
    /// piece. At each step the rows from the resume offset must be the rows
    /// after the settled ones.
    fn stream(
        doc: &str,
        cuts: &[usize],
        widths: &[usize],
        theme: Theme,
        settling: bool,
    ) -> Vec<Line<'static>> {
        let mut out: Vec<Line<'static>> = Vec::new();
        let mut wrote = false;
        let mut emit = |rows: Vec<Line<'static>>, continuing: bool| {
            if rows.is_empty() {
                return;
            }
            if !continuing {
                if wrote {
                    out.push(Line::default());
                }
                wrote = true;
            }
            out.extend(rows);
        };
        let (mut committed, mut skip) = (0, 0);
        let mut width = widths[0];
        for (i, &cut) in cuts.iter().enumerate() {
            width = widths[i.min(widths.len() - 1)];
            let text = &doc[..cut];
            let rest = &text[committed..];
            let stable = stable_len(rest);
            if stable > 0 {
                let chunk = &rest[..stable];
                if !chunk.trim().is_empty() {
                    emit(render_from(chunk, width, theme, skip), skip > 0);
                }
                committed += stable;
                skip = 0;
            }
            let rest = &text[committed..];
            if settling && !rest.trim().is_empty() {
                let s = settle(rest, width, theme, skip);
                let rows = s.rows[..s.settled].to_vec();
                let live = s.rows[s.settled..].to_vec();
                if !rows.is_empty() {
                    emit(rows, skip > 0);
                    skip = s.resume;
                }
                assert_eq!(
                    render_from(rest, width, theme, skip),
                    live,
                    "resuming at {skip} of {rest:?}"
                );
            }
        }
        let rest = &doc[committed..];
        if !rest.trim().is_empty() {
            emit(render_from(rest, width, theme, skip), skip > 0);
        }
        out
    }

    /// Increasing cut points of `doc` on character boundaries, the last at
    /// its end.
    fn cuts(rng: &mut Rng, doc: &str, most: usize) -> Vec<usize> {
        let mut cuts = Vec::new();
        let mut at = 0;
        while at < doc.len() {
            at += 1 + rng.below(most);
            while at < doc.len() && !doc.is_char_boundary(at) {
                at += 1;
            }
            cuts.push(at.min(doc.len()));
        }
        cuts
    }

    fn text_of(rows: &[Line<'static>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn settled_rows_and_the_rest_make_the_same_rows_as_rendering_at_the_end() {
        // Generated documents mixing every construct and its broken
        // halves, at narrow widths, streamed in pieces of random sizes.
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for round in 0..600 {
            let len = 40 + rng.below(260);
            let doc = document(&mut rng, len);
            let width = 8 + rng.below(40);
            let theme = if round % 3 == 0 {
                Theme::from_no_color(None)
            } else {
                Theme::plain()
            };
            let most = 1 + rng.below(12);
            let cuts = cuts(&mut rng, &doc, most);
            let before = stream(&doc, &cuts, &[width], theme, false);
            let after = stream(&doc, &cuts, &[width], theme, true);
            assert_eq!(
                text_of(&after),
                text_of(&before),
                "{doc:?} at width {width}"
            );
            assert_eq!(after, before, "{doc:?} at width {width} (styles)");
        }
    }

    #[test]
    fn every_cut_of_each_shape_settles_to_the_same_rows() {
        let paragraph = "Greedy wrapping closes a row only when the next word does not fit, \
            so every row but the last is **settled** as soon as a word starts the next one; \
            `code spans`, [links](https://example.com) and *emphasis* wait for their end."
            .to_owned();
        let mut code = String::from("Some code:\n\n```rust\n");
        for i in 0..12 {
            code.push_str(&format!(
                "fn f{i}() -> usize {{ {i} }} // a comment that wraps at the width\n"
            ));
        }
        code.push_str("```\n\nAfter.");
        let mut list = String::new();
        for i in 0..12 {
            list.push_str(&format!(
                "- item {i} with words enough to wrap across the row\n"
            ));
            if i % 4 == 3 {
                list.push_str("  - a nested item\n");
            }
        }
        let table = "| a | b |\n|---|---|\n| one | two |\n| three | four |\n\nafter".to_owned();
        let setext = "A heading long enough to take two rows\n---\n\nShort\n===\n".to_owned();
        for doc in [paragraph, code, list, table, setext] {
            for width in [12, 30, 80] {
                for theme in [Theme::plain(), Theme::from_no_color(None)] {
                    let every: Vec<usize> = (1..=doc.len())
                        .filter(|&i| doc.is_char_boundary(i))
                        .collect();
                    let before = stream(&doc, &every, &[width], theme, false);
                    let after = stream(&doc, &every, &[width], theme, true);
                    assert_eq!(after, before, "{doc:?} at width {width}");
                }
            }
        }
    }

    #[test]
    fn a_long_paragraph_settles_all_but_its_last_row() {
        let text = "word ".repeat(200);
        let s = settle(&text, 40, Theme::plain(), 0);
        assert_eq!(s.rows.len(), 25);
        assert_eq!(s.settled, 24);
        // Resuming renders only the last row.
        assert_eq!(
            text_of(&render_from(&text, 40, Theme::plain(), s.resume)),
            text_of(&s.rows[24..])
        );
        // An open code span holds back the rows from it on.
        let open = format!("{}`{}", "word ".repeat(40), "word ".repeat(40));
        let s = settle(&open, 40, Theme::plain(), 0);
        assert_eq!(s.settled, 4, "{:?}", text_of(&s.rows));
    }

    #[test]
    fn the_lines_of_a_code_block_settle_once_they_have_their_newline() {
        let text = "```\none\ntwo\nthr";
        let s = settle(text, 40, Theme::plain(), 0);
        assert_eq!(text_of(&s.rows), ["  one", "  two", "  thr"]);
        assert_eq!(s.settled, 2);
        assert_eq!(
            text_of(&render_from(text, 40, Theme::plain(), s.resume)),
            ["  thr"]
        );
    }

    #[test]
    fn list_items_settle_when_a_whole_line_follows_them() {
        let text = "- one\n- two\n- thr";
        let s = settle(text, 40, Theme::plain(), 0);
        assert_eq!(text_of(&s.rows), ["• one", "• two", "• thr"]);
        assert_eq!(s.settled, 1, "the next line may still make two a heading");
        // A table waits for its end.
        let table = "| a | b |\n|---|---|\n| 1 | 2 |\n";
        assert_eq!(settle(table, 40, Theme::plain(), 0).settled, 0);
    }

    #[test]
    fn a_width_change_renders_the_rest_at_the_new_width_without_losing_a_word() {
        let mut rng = Rng(0x0dd_ba11);
        for _ in 0..200 {
            let mut doc = String::new();
            while doc.len() < 300 {
                doc.push_str(
                    [
                        "alpha ",
                        "be ",
                        "gamma ",
                        "\n\n",
                        "\n- ",
                        "\n```\ncode line\n```\n",
                        "x",
                        "**b** ",
                    ][rng.below(8)],
                );
            }
            let cuts = cuts(&mut rng, &doc, 10);
            let widths: Vec<usize> = (0..cuts.len())
                .map(|i| if i < cuts.len() / 2 { 30 } else { 17 })
                .collect();
            let rows = stream(&doc, &cuts, &widths, Theme::plain(), true);
            let letters = |rows: &[Line<'static>]| -> String {
                text_of(rows)
                    .concat()
                    .chars()
                    .filter(|c| !c.is_whitespace() && !matches!(c, '•' | '─'))
                    .collect()
            };
            assert_eq!(
                letters(&rows),
                letters(&render(&doc, 17, Theme::plain())),
                "{doc:?}"
            );
        }
    }

    #[test]
    fn a_setext_heading_longer_than_a_row_is_drawn_as_a_paragraph_and_a_rule() {
        assert_eq!(plain("Title\n---\n", 40), ["Title"], "a heading in one row");
        assert_eq!(
            plain("one two three four\n---\n", 10),
            ["one two", "three four", "", "──────────"]
        );
    }

    #[test]
    fn a_list_draws_the_same_tight_or_loose() {
        assert_eq!(
            plain("- a\n  - b\n- c\n", 40),
            plain("- a\n\n  - b\n- c\n", 40)
        );
        assert_eq!(plain("- a\n  - b\n", 40), ["• a", "  • b"]);
    }
}
