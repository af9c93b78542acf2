//! Read's one pass over a text file, in bounded memory (docs/design.md §6.4).
//!
//! The file comes through [`FileSystem::read_range`] a chunk at a time,
//! never whole. The pass checks the text as [`decode`](crate::encoding::decode)
//! does (a NUL byte anywhere → binary; strict UTF-8), hashes every byte for
//! the file state, counts the lines, and keeps only the lines asked for, up
//! to an output cap. What it holds at once is one chunk, one line's first
//! [`MAX_LINE_CHARS`] characters and the output, whatever the file's size.

use std::io;
use std::path::Path;

use riot_protocol::FileSystem;
use tokio_util::sync::CancellationToken;

use crate::encoding::{BOM, NotText};
use crate::tools::read_limits::MAX_LINE_CHARS;

/// Bytes asked of the file system at a time.
pub(crate) const CHUNK_BYTES: usize = 256 * 1024;

/// The lines wanted: `start..=end` (1-based), shown in at most `max_chars`
/// characters. The first line is always shown (a line is cut at
/// [`MAX_LINE_CHARS`]); the lines after the one that would not fit are not.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub start: u64,
    pub end: u64,
    pub max_chars: usize,
}

/// What the pass found.
#[derive(Debug)]
pub(crate) struct Scanned {
    /// [`riot_protocol::file_state::content_hash`] of the whole file.
    pub hash: u64,
    /// Lines in the file.
    pub total: u64,
    /// The shown lines, `cat -n` style, joined by `\n`.
    pub text: String,
    /// The last line shown; `None` when none was (the window starts past
    /// the end).
    pub last_shown: Option<u64>,
    /// The window was cut at `max_chars`: lines it asked for are not shown.
    pub capped: bool,
}

/// Why the pass gave up.
#[derive(Debug)]
pub(crate) enum ScanError {
    Io(io::Error),
    NotText(NotText),
    Cancelled,
}

/// Formats one line `cat -n` style (docs/interfaces.md: six columns, a tab): `kept`
/// is the line's start, `chars` its length.
fn numbered(n: u64, kept: &str, chars: usize) -> String {
    if chars > MAX_LINE_CHARS {
        let shown: String = kept.chars().take(MAX_LINE_CHARS).collect();
        format!("{n:>6}\t{shown}… [line cut: {chars} characters, first {MAX_LINE_CHARS} shown]")
    } else {
        format!("{n:>6}\t{kept}")
    }
}

/// Splits text into lines and keeps the window's.
#[derive(Debug)]
struct Lines {
    window: Window,
    /// The current line's number.
    number: u64,
    /// Bytes of the current line were seen (a last line without `\n`).
    open: bool,
    /// The current line's first `MAX_LINE_CHARS + 1` characters (room for
    /// a `\r` that is not content), inside the window only.
    kept: String,
    kept_chars: usize,
    /// The current line's characters, inside the window only.
    chars: usize,
    /// The current line so far ends with `\r`.
    last_cr: bool,
    out: String,
    out_chars: usize,
    last_shown: Option<u64>,
    capped: bool,
}

impl Lines {
    fn new(window: Window) -> Self {
        Self {
            window,
            number: 1,
            open: false,
            kept: String::new(),
            kept_chars: 0,
            chars: 0,
            last_cr: false,
            out: String::new(),
            out_chars: 0,
            last_shown: None,
            capped: false,
        }
    }

    fn collecting(&self) -> bool {
        !self.capped && self.number >= self.window.start && self.number <= self.window.end
    }

    /// Nothing more will be shown: only lines are counted.
    fn done(&self) -> bool {
        self.capped || self.number > self.window.end
    }

    fn feed(&mut self, mut rest: &str) {
        while !rest.is_empty() {
            if self.done() {
                let newlines = rest.bytes().filter(|b| *b == b'\n').count();
                self.number += newlines as u64;
                self.open = !rest.ends_with('\n');
                return;
            }
            match rest.find('\n') {
                Some(i) => {
                    self.part(&rest[..i]);
                    self.end_line();
                    rest = &rest[i + 1..];
                }
                None => {
                    self.part(rest);
                    return;
                }
            }
        }
    }

    /// A piece of the current line (no `\n` in it).
    fn part(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        self.open = true;
        if !self.collecting() {
            return;
        }
        self.last_cr = s.ends_with('\r');
        let room = (MAX_LINE_CHARS + 1).saturating_sub(self.kept_chars);
        if room > 0 {
            let end = s.char_indices().nth(room).map_or(s.len(), |(i, _)| i);
            self.kept.push_str(&s[..end]);
            self.kept_chars += s[..end].chars().count();
        }
        self.chars += s.chars().count();
    }

    fn end_line(&mut self) {
        if self.collecting() {
            let mut chars = self.chars;
            let mut kept = std::mem::take(&mut self.kept);
            // A `\r` before the `\n` is the line ending, not content.
            if self.last_cr {
                if self.kept_chars == chars {
                    kept.pop();
                }
                chars -= 1;
            }
            let line = numbered(self.number, &kept, chars);
            let line_chars = line.chars().count();
            let sep = usize::from(self.last_shown.is_some());
            if self.last_shown.is_some()
                && self.out_chars + sep + line_chars > self.window.max_chars
            {
                self.capped = true;
            } else {
                if sep == 1 {
                    self.out.push('\n');
                }
                self.out.push_str(&line);
                self.out_chars += sep + line_chars;
                self.last_shown = Some(self.number);
            }
        }
        self.kept.clear();
        self.kept_chars = 0;
        self.chars = 0;
        self.last_cr = false;
        self.open = false;
        self.number += 1;
    }

    /// The line count, once the file has ended.
    fn finish(&mut self) -> u64 {
        if self.open {
            self.end_line();
        }
        self.number - 1
    }
}

fn offset_usize(offset: u64) -> usize {
    usize::try_from(offset).unwrap_or(usize::MAX)
}

/// Reads `path` through once and keeps `window`'s lines.
pub(crate) async fn scan(
    fs: &dyn FileSystem,
    path: &Path,
    window: Window,
    cancel: &CancellationToken,
) -> Result<Scanned, ScanError> {
    let mut hash = riot_protocol::file_state::ContentHasher::new();
    let mut lines = Lines::new(window);
    // Bytes read so far.
    let mut offset: u64 = 0;
    // The start of a character cut by the end of the last chunk.
    let mut carry: Vec<u8> = Vec::new();
    let mut invalid_utf8: Option<u64> = None;
    let mut at_start = true;
    loop {
        if cancel.is_cancelled() {
            return Err(ScanError::Cancelled);
        }
        let chunk = fs
            .read_range(path, offset, CHUNK_BYTES)
            .await
            .map_err(ScanError::Io)?;
        if chunk.is_empty() {
            break;
        }
        // A NUL anywhere makes it binary, before any UTF-8 verdict.
        if let Some(i) = chunk.iter().position(|b| *b == 0) {
            return Err(ScanError::NotText(NotText::Binary {
                offset: offset_usize(offset + i as u64),
            }));
        }
        hash.update(&chunk);
        let chunk_len = chunk.len() as u64;
        if invalid_utf8.is_some() {
            offset += chunk_len;
            continue;
        }
        let buf_start = offset - carry.len() as u64;
        let buf = if carry.is_empty() {
            chunk
        } else {
            let mut b = std::mem::take(&mut carry);
            b.extend_from_slice(&chunk);
            b
        };
        offset += chunk_len;
        let (valid, rest) = match std::str::from_utf8(&buf) {
            Ok(text) => (text, None),
            Err(e) => {
                let up_to = e.valid_up_to();
                let valid = std::str::from_utf8(&buf[..up_to]).unwrap_or_default();
                if e.error_len().is_some() {
                    invalid_utf8 = Some(buf_start + up_to as u64);
                    (valid, None)
                } else {
                    (valid, Some(up_to))
                }
            }
        };
        if invalid_utf8.is_some() {
            continue;
        }
        let mut text = valid;
        if at_start && !text.is_empty() {
            at_start = false;
            text = text.strip_prefix(BOM).unwrap_or(text);
        }
        lines.feed(text);
        if let Some(up_to) = rest {
            carry = buf[up_to..].to_vec();
        }
    }
    if invalid_utf8.is_none() && !carry.is_empty() {
        invalid_utf8 = Some(offset - carry.len() as u64);
    }
    if let Some(at) = invalid_utf8 {
        return Err(ScanError::NotText(NotText::InvalidUtf8 {
            offset: offset_usize(at),
        }));
    }
    let total = lines.finish();
    Ok(Scanned {
        hash: hash.finish(),
        total,
        text: lines.out,
        last_shown: lines.last_shown,
        capped: lines.capped,
    })
}
