//! Fenced and indented code blocks: highlighted lines, hard-wrapped to
//! the width, each source line's rows from that line.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{Out, Renderer};
use crate::wrap::{self, Piece, hard_wrap};

pub(super) struct Code {
    pub(super) lang: String,
    pub(super) pieces: Vec<Piece>,
    /// Where the block starts in the source.
    pub(super) at: usize,
}

impl Renderer<'_> {
    pub(super) fn code_block(&mut self, code: Code) {
        let text: String = code.pieces.iter().map(|p| p.text.as_str()).collect();
        // Where each line starts in the source.
        let mut starts = Vec::new();
        let mut line_start = true;
        for piece in &code.pieces {
            for (i, c) in piece.text.char_indices() {
                if line_start {
                    starts.push(piece.offset(i));
                }
                line_start = c == '\n';
            }
        }
        let body = text.strip_suffix('\n').unwrap_or(&text);
        // The lines with their newline: the one being written may still
        // change.
        let whole = text.matches('\n').count();
        // Each line is highlighted with its newline, the last one too, so
        // that it is coloured the same before and after more lines come.
        // A highlighted block's plain runs are in the terminal's default
        // colour: its kinds' colours already set it apart from prose, and
        // a row that starts and ends in the default colour costs no
        // sequence to enter or leave.
        let highlighted = if self.theme.highlights() {
            crate::highlight::highlight(&text, &code.lang, Style::default())
        } else {
            None
        };
        let lines = highlighted.unwrap_or_else(|| {
            body.split('\n')
                .map(|l| Line::from(Span::styled(l.to_owned(), self.theme.code_block())))
                .collect()
        });
        self.gap(code.at);
        let mut base = self.prefix();
        if let Some(marker) = self.marker.take() {
            base.push(Span::raw(" ".repeat(wrap::width(&marker))));
        }
        base.push(Span::raw("  "));
        for (j, line) in lines.iter().enumerate() {
            let at = starts.get(j).copied().unwrap_or(code.at).max(code.at);
            for (k, row) in hard_wrap(line, self.width, &base, &base)
                .into_iter()
                .enumerate()
            {
                self.push(Out {
                    line: row,
                    at,
                    last: at,
                    fresh: k == 0,
                    fixed: j < whole,
                    gap: false,
                });
            }
        }
    }
}
