//! Collects one file's hits from `grep-searcher`.

use std::io;
use std::path::PathBuf;

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

/// One shown line: a match or context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub number: u64,
    pub text: String,
    pub is_match: bool,
}

/// What one file produced.
#[derive(Debug, Clone)]
pub(crate) struct FileHits {
    pub path: PathBuf,
    /// Matching lines (rg -c semantics).
    pub count: u64,
    pub lines: Vec<Line>,
}

pub(crate) struct HitSink {
    keep_lines: bool,
    pub count: u64,
    lines: Vec<Line>,
}

impl HitSink {
    pub(crate) fn new(keep_lines: bool) -> Self {
        Self {
            keep_lines,
            count: 0,
            lines: Vec::new(),
        }
    }

    pub(crate) fn finish(self, path: PathBuf) -> FileHits {
        FileHits {
            path,
            count: self.count,
            lines: self.lines,
        }
    }

    fn push(&mut self, first: Option<u64>, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        let mut number = first.unwrap_or(0);
        for line in text.split_inclusive('\n') {
            let line = line.strip_suffix('\n').unwrap_or(line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            // Context lines may repeat across overlapping windows; keep one.
            if self.lines.last().is_some_and(|l| l.number >= number) {
                number += 1;
                continue;
            }
            self.lines.push(Line {
                number,
                text: line.to_owned(),
                is_match,
            });
            number += 1;
        }
    }
}

impl Sink for HitSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += mat.lines().count().max(1) as u64;
        if self.keep_lines {
            self.push(mat.line_number(), mat.bytes(), true);
        }
        Ok(true)
    }

    fn context(&mut self, _searcher: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.keep_lines {
            self.push(ctx.line_number(), ctx.bytes(), false);
        }
        Ok(true)
    }
}
