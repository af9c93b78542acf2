//! Tables: boxed, the widest columns shrunk until the table fits, drawn
//! whole once the table ends.

use ratatui::text::{Line, Span};

use super::{Out, Renderer};
use crate::wrap;

pub(super) struct Table {
    pub(super) rows: Vec<Vec<Vec<Span<'static>>>>,
    pub(super) head_rows: usize,
    pub(super) in_head: bool,
    pub(super) at: usize,
}

impl Renderer<'_> {
    pub(super) fn table_rows(&mut self, table: Table, fixed: bool) {
        self.gap(table.at);
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
        let mut lines = vec![rule("┌", "┬", "┐")];
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
            lines.push(Line::from(spans));
            if r + 1 == table.head_rows {
                lines.push(rule("├", "┼", "┤"));
            }
        }
        lines.push(rule("└", "┴", "┘"));
        // A table is drawn whole: rendering resumes only before it.
        for line in lines {
            self.push(Out {
                line,
                at: table.at,
                last: table.at,
                fresh: false,
                fixed,
                gap: false,
            });
        }
    }
}
