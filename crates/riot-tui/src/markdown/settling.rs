//! What of a streaming reply is settled: the finished blocks it starts
//! with, the rows that stay the same however it goes on and where
//! rendering resumes after them, and, in an unfinished block's inline
//! text, the delimiters a later one may still pair with and its pieces
//! cut at source offsets.

use std::ops::Range;

use ratatui::text::Line;

use super::{Leaf, Renderer};
use crate::theme::Theme;
use crate::wrap::Piece;

/// The rows of a streaming text from an offset, and how many of them are
/// settled.
#[derive(Debug, Clone)]
pub struct Settled {
    /// [`render_from`](super::render_from) the text and the offset.
    pub rows: Vec<Line<'static>>,
    /// How many of `rows`, from the first, stay the same however the text
    /// goes on.
    pub settled: usize,
    /// Where the rest begins: for any text that starts with this one,
    /// `render_from(longer, width, theme, resume)` is its rows after the
    /// settled ones.
    pub resume: usize,
}

/// How many rows of `text` from `skip` on are settled (see the
/// [`markdown`](super) module docs), and where rendering resumes after
/// them.
pub fn settle(text: &str, width: usize, theme: Theme, skip: usize) -> Settled {
    let rows = Renderer::run(text, width, theme, skip);
    let n = rows.len();
    // A blank row between blocks is as settled as the row after it: the
    // block that asked for it may still turn into one that does not.
    let mut fixed: Vec<bool> = rows.iter().map(|r| r.fixed).collect();
    for i in (0..n).rev() {
        if rows[i].gap {
            fixed[i] = fixed.get(i + 1).copied().unwrap_or(false);
        }
    }
    // The smallest offset of the rows from each one on.
    let mut lowest = vec![usize::MAX; n + 1];
    for i in (0..n).rev() {
        lowest[i] = lowest[i + 1].min(rows[i].at);
    }
    let mut settled = 0;
    let mut resume = skip;
    let mut highest: Option<usize> = None;
    for (i, row) in rows.iter().enumerate() {
        // Rendering can resume at a row that starts a word or a line, after
        // everything of the rows before it and before everything after.
        if let Some(h) = highest.filter(|&h| row.fresh && row.at > h && row.at <= lowest[i]) {
            settled = i;
            // Right after the settled text: what lies between (spaces,
            // delimiters) is rendered again, as the text then says.
            resume = h + 1;
        }
        if !fixed[i] {
            break;
        }
        highest = Some(highest.map_or(row.last, |h| h.max(row.last)));
    }
    Settled {
        rows: rows.into_iter().map(|row| row.line).collect(),
        settled,
        resume,
    }
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

impl Renderer<'_> {
    /// The offset before which the inline text of an unfinished block
    /// renders the same however the text goes on.
    pub(super) fn settled_text(&self, leaf: &Leaf) -> usize {
        let src = self.source;
        let mut limit = usize::MAX;
        // The last word may still grow, or end an entity or an escape.
        if !src.is_empty() && !src.ends_with([' ', '\t', '\n', '\r']) {
            limit = src.rfind([' ', '\t', '\n', '\r']).map_or(0, |i| i + 1);
        }
        // A line with a pipe may still become a table's header row, with a
        // delimiter row on the line after it.
        if src[self.last_line..self.open_line].contains('|') {
            limit = limit.min(self.last_line);
        } else if src[self.open_line..].contains('|') {
            limit = limit.min(self.open_line);
        }
        for range in &leaf.texts {
            if range.start >= limit {
                break;
            }
            if let Some(at) = opener(src, range.clone()) {
                limit = limit.min(at);
                break;
            }
        }
        // An emphasis or a link across the limit: its closing delimiter,
        // after it, may still stop closing it (`**a**` then `b`).
        while let Some(span) = leaf.spans.iter().find(|s| s.start < limit && s.end > limit) {
            limit = span.start;
        }
        limit
    }
}

/// The part of `pieces` from source offset `skip` on.
pub(super) fn from(pieces: &[Piece], skip: usize) -> Vec<Piece> {
    let mut out = Vec::new();
    for piece in pieces {
        if piece.at >= skip {
            out.push(piece.clone());
        } else if piece.linear
            && let Some(text) = piece.text.get(skip - piece.at..)
            && !text.is_empty()
        {
            out.push(Piece {
                text: text.to_owned(),
                style: piece.style,
                at: skip,
                end: piece.end,
                linear: true,
            });
        }
    }
    out
}

/// `pieces` without the spaces they start with.
pub(super) fn trim_start(pieces: &mut Vec<Piece>) {
    while let Some(first) = pieces.first_mut() {
        let trimmed = first.text.trim_start_matches([' ', '\t']);
        let cut = first.text.len() - trimmed.len();
        if trimmed.is_empty() {
            pieces.remove(0);
            continue;
        }
        if cut > 0 {
            first.text = trimmed.to_owned();
            if first.linear {
                first.at += cut;
            }
        }
        break;
    }
}

/// The part of `pieces` before source offset `limit`: a piece that is not
/// its source's text byte for byte (a code span, an entity) only when all
/// of its source is.
pub(super) fn until(pieces: &[Piece], limit: usize) -> Vec<Piece> {
    let mut out = Vec::new();
    for piece in pieces {
        if piece.at >= limit {
            break;
        }
        if piece.end > limit {
            if piece.linear
                && let Some(text) = piece.text.get(..limit - piece.at)
            {
                out.push(Piece {
                    text: text.to_owned(),
                    style: piece.style,
                    at: piece.at,
                    end: limit,
                    linear: true,
                });
            }
            break;
        }
        out.push(piece.clone());
    }
    out
}

/// The offset of the first delimiter in `range` of `src` (literal text)
/// that a later one could still pair with: a backtick (a code span), `[`
/// (a link), `<` before a letter or `/!?` (an autolink or a tag), a `*` or
/// `~` run before a non-space (emphasis, strikethrough), a `_` run before a
/// non-space and not inside a word. An escaped one cannot.
fn opener(src: &str, range: Range<usize>) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut i = range.start;
    while i < range.end.min(bytes.len()) {
        let b = bytes[i];
        if !matches!(b, b'`' | b'[' | b'<' | b'*' | b'~' | b'_') || escaped(bytes, i) {
            i += 1;
            continue;
        }
        let mut first = i;
        while first > 0 && bytes[first - 1] == b {
            first -= 1;
        }
        let mut end = i;
        while end < bytes.len() && bytes[end] == b {
            end += 1;
        }
        let next = src[end..].chars().next();
        let before = src[..first].chars().next_back();
        let opens = match b {
            b'`' | b'[' => true,
            b'<' => src[i + 1..]
                .chars()
                .next()
                .is_none_or(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?')),
            b'*' | b'~' => next.is_none_or(|c| !c.is_whitespace()),
            _ => {
                next.is_none_or(|c| !c.is_whitespace())
                    && !before.is_some_and(char::is_alphanumeric)
            }
        };
        if opens {
            return Some(i);
        }
        i = if b == b'<' { i + 1 } else { end.max(i + 1) };
    }
    None
}

/// Whether the byte at `i` is escaped by a backslash.
fn escaped(bytes: &[u8], i: usize) -> bool {
    bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}
