//! What each of the parser's events does to the rows: the start and end
//! of every block and inline span, and the text, breaks and rules between.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Tag, TagEnd};
use ratatui::style::{Modifier, Style};

use super::code::Code;
use super::table::Table;
use super::{Inline, Renderer};

/// A heading being read, drawn at its end.
pub(super) struct Heading {
    style: Style,
    /// Where a setext heading's underline starts.
    underline: Option<usize>,
}

impl Renderer<'_> {
    /// Handles one event of the parser.
    pub(super) fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if self.code.is_none() && self.table.is_none() {
                    self.leaf.texts.push(self.at.clone());
                }
                self.text(&t);
            }
            Event::Code(t) => {
                let style = self.style().patch(self.theme.code());
                self.styles.push(style);
                self.text(&t);
                self.pop_style();
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::Html(t) => {
                if self.code.is_none() && self.table.is_none() {
                    self.leaf.html = true;
                }
                self.text(t.trim_end_matches('\n'));
            }
            Event::InlineHtml(t) => self.text(&t),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                if self.table.is_none() && self.code.is_none() {
                    if let Some(line) = self.lines.last_mut() {
                        line.brk = Some(self.at.start);
                        self.lines.push(Inline::new(self.at.end));
                    } else {
                        self.begin_inline(self.at.end);
                    }
                    self.leaf.end = self.leaf.end.max(self.at.end);
                }
            }
            Event::Rule => {
                self.flush();
                self.gap = true;
                let fixed = self.finished(self.at.end);
                self.rule(self.block_start(), fixed);
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " });
                self.task = true;
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let item_para = std::mem::take(&mut self.item_para);
        if matches!(
            tag,
            Tag::Paragraph | Tag::Heading { .. } | Tag::Item | Tag::HtmlBlock
        ) {
            self.block = Some(self.block_start());
        } else if !matches!(
            tag,
            Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. } | Tag::Image { .. }
        ) {
            self.block = None;
        }
        match tag {
            Tag::Paragraph => {
                if !std::mem::take(&mut self.task) {
                    self.flush();
                }
                if item_para {
                    self.gap = true;
                }
            }
            Tag::Heading { level, .. } => self.start_heading(level),
            Tag::BlockQuote(_) => {
                self.flush();
                self.gap = self.gap || self.rendered;
                self.gap(self.block_start());
                self.quotes += 1;
                self.containers.push(false);
                self.push_style(self.theme.dim().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.gap = self.gap || self.rendered;
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(Code {
                    lang,
                    pieces: Vec::new(),
                    at: self.block_start(),
                });
            }
            Tag::HtmlBlock => {
                // In a tight list an item's text and an HTML block after
                // it are not apart as paragraphs are: end the text here,
                // as in a loose list.
                if self.containers.last() == Some(&true) {
                    self.flush();
                }
                self.push_style(Style::new());
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.gap = self.gap || self.rendered;
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
                self.containers.push(true);
                let start = self.block_start();
                self.item = Some(self.item.map_or(start, |i| i.min(start)));
            }
            Tag::Table(_) => {
                self.flush();
                self.gap = self.gap || self.rendered;
                self.table = Some(Table {
                    rows: Vec::new(),
                    head_rows: 0,
                    in_head: false,
                    at: self.block_start(),
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
            Tag::Emphasis => self.inline_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.inline_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => {
                self.inline_style(Style::new().add_modifier(Modifier::CROSSED_OUT));
            }
            Tag::Link { .. } | Tag::Image { .. } => self.inline_style(self.theme.link()),
            _ => self.push_style(Style::new()),
        }
    }

    /// Opens a heading of `level`: its style waits for its end, where it
    /// is known whether it is drawn as a heading.
    fn start_heading(&mut self, level: HeadingLevel) {
        self.flush();
        let hashes = level as usize;
        let style = if hashes <= 2 {
            self.theme.heading().add_modifier(Modifier::UNDERLINED)
        } else {
            self.theme.heading()
        };
        // A setext heading spans two lines or more: its text and
        // the underline.
        let source = self.source.get(self.at.clone()).unwrap_or("");
        let underline = source
            .trim_end_matches(['\n', '\r'])
            .rfind('\n')
            .map(|i| self.at.start + i + 1);
        self.heading = Some(Heading { style, underline });
        // The heading's style is given to its text at its end,
        // when it is known to be drawn as a heading.
        self.push_style(Style::new());
    }

    /// The start of an inline span: its source is the block's too.
    fn inline_style(&mut self, patch: Style) {
        if self.code.is_none() && self.table.is_none() {
            self.leaf.end = self.leaf.end.max(self.at.end);
            self.leaf.spans.push(self.at.clone());
        }
        self.push_style(patch);
    }

    fn end(&mut self, tag: TagEnd) {
        if !matches!(
            tag,
            TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link
                | TagEnd::Image
        ) {
            self.block = None;
        }
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                if self.containers.last() == Some(&true) {
                    self.item_para = true;
                } else {
                    self.gap = true;
                }
            }
            TagEnd::Heading(_) => self.end_heading(),
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.quotes = self.quotes.saturating_sub(1);
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(code);
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
                self.item = None;
                self.containers.pop();
                // Items of a tight list follow each other without a gap.
                self.gap = false;
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let fixed = self.finished(self.at.end);
                    self.table_rows(table, fixed);
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
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Link
            | TagEnd::Image => {
                if self.code.is_none() && self.table.is_none() {
                    self.leaf.end = self.leaf.end.max(self.at.end);
                }
                self.pop_style();
            }
            _ => self.pop_style(),
        }
    }

    /// Closes a heading: draws its text as a heading, or, for a setext
    /// heading longer than a row, as a paragraph and a rule.
    fn end_heading(&mut self) {
        self.pop_style();
        let Some(heading) = self.heading.take() else {
            return;
        };
        let start = self.lines.first().map_or(self.at.start, Inline::start);
        let end = self
            .lines
            .iter()
            .filter_map(|line| line.pieces.last())
            .map(|piece| piece.end)
            .max()
            .unwrap_or(start);
        // A setext heading longer than a row may have had its first
        // rows drawn as a paragraph's before the underline came.
        let begun = start < self.skip && self.skip < end;
        let as_heading = heading.underline.is_none() || (!begun && self.inline_rows() <= 1);
        if as_heading {
            for line in &mut self.lines {
                for piece in &mut line.pieces {
                    piece.style = heading.style.patch(piece.style);
                }
            }
            self.gap = self.gap || self.rendered;
            self.flush();
            self.gap = true;
        } else {
            self.flush();
            self.gap = true;
            if let Some(at) = heading.underline {
                let fixed = self.source[at..].contains('\n');
                self.rule(at, fixed);
            }
        }
    }
}
