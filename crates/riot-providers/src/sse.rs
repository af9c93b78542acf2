//! A byte-level Server-Sent Events parser (docs/design.md §11).
//!
//! It takes raw bytes as they come off the socket, in chunks of any size.
//! Lines are cut on bytes (`\n`, `\r\n` or a lone `\r`) and only complete
//! lines are decoded as UTF-8, so a character split across two chunks is
//! reassembled here, never mangled. The parser remembers how far it has
//! scanned, so a long line arriving one byte at a time costs linear, not
//! quadratic, time.

/// One dispatched event: its `event:` type (if any) and its `data:` lines
/// joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental SSE parser. Feed it with [`SseParser::push`], then call
/// [`SseParser::finish`] when the body ends.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// First byte not yet consumed as part of a complete line.
    start: usize,
    /// Bytes before this index (and after `start`) hold no line terminator.
    scanned: usize,
    event: Option<String>,
    data: String,
    has_data: bool,
    /// A field line was seen since the last dispatch (an event is open).
    open: bool,
    bom_checked: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; complete events are appended to `out` in order.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        // Drop the consumed prefix once it is at least as large as what is
        // left, so copying stays amortised linear.
        if self.start > 0 && self.start >= self.buf.len() - self.start {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
        if !self.bom_checked {
            if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                return;
            }
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.start = 3;
                self.scanned = 3;
            }
            self.bom_checked = true;
        }
        self.scan_lines(false, out);
    }

    /// The body ended. As the SSE spec says, an event without its closing
    /// blank line is not dispatched: its data may be cut short. Returns
    /// whether such a partial event (or partial line) was left over.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> bool {
        self.scan_lines(true, out);
        let partial_line = self.start < self.buf.len();
        self.start = self.buf.len();
        self.scanned = self.start;
        let open = self.open || self.has_data || partial_line;
        self.event = None;
        self.data.clear();
        self.has_data = false;
        self.open = false;
        open
    }

    fn scan_lines(&mut self, at_end: bool, out: &mut Vec<SseEvent>) {
        loop {
            let rest = &self.buf[self.scanned..];
            let Some(offset) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.scanned = self.buf.len();
                return;
            };
            let end = self.scanned + offset;
            let next = if self.buf[end] == b'\r' {
                match self.buf.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    // A `\r` at the end of what arrived: it may be half of
                    // a `\r\n`, so wait for the next byte.
                    None if !at_end => {
                        self.scanned = end;
                        return;
                    }
                    None => end + 1,
                }
            } else {
                end + 1
            };
            let line = std::mem::take(&mut self.buf);
            self.line(&line[self.start..end], out);
            self.buf = line;
            self.start = next;
            self.scanned = next;
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        self.open = true;
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // `id`, `retry` and unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        self.open = false;
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(bytes: &[u8], size: usize) -> (Vec<SseEvent>, bool) {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in bytes.chunks(size) {
            parser.push(chunk, &mut out);
        }
        let leftover = parser.finish(&mut out);
        (out, leftover)
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn events_comments_crlf_and_multiline_data_in_every_chunking() {
        let stream = "\u{FEFF}: keep-alive\r\nevent: message_start\r\ndata: {\"a\":\"你好🙂\"}\r\n\r\n\
                      data: line1\ndata:line2\n\n\
                      event: ping\rdata: x\r\r\
                      id: 7\nretry: 10\n\n\
                      data: [DONE]\n\n";
        let expected = vec![
            ev(Some("message_start"), "{\"a\":\"你好🙂\"}"),
            ev(None, "line1\nline2"),
            ev(Some("ping"), "x"),
            ev(None, "[DONE]"),
        ];
        for size in [1, 2, 3, 5, 7, 13, 4096] {
            let (events, leftover) = parse_in_chunks(stream.as_bytes(), size);
            assert_eq!(events, expected, "chunk size {size}");
            assert!(!leftover, "chunk size {size}");
        }
    }

    #[test]
    fn a_final_event_without_blank_line_is_dropped_and_reported() {
        for stream in [&b"data: a\n\ndata: {\"b\":"[..], b"data: a\n\ndata: b\n"] {
            let (events, leftover) = parse_in_chunks(stream, 3);
            assert_eq!(events, vec![ev(None, "a")]);
            assert!(leftover);
        }
    }

    #[test]
    fn a_stream_cut_inside_an_event_without_data_reports_leftover() {
        let (events, leftover) = parse_in_chunks(b"data: a\n\nevent: message_st", 4);
        assert_eq!(events, vec![ev(None, "a")]);
        assert!(leftover, "an open event with no data is reported as cut");
    }

    #[test]
    fn one_long_line_fed_byte_by_byte_is_reassembled() {
        let payload = "é".repeat(20_000);
        let stream = format!("data: {payload}\n\n");
        let (events, _) = parse_in_chunks(stream.as_bytes(), 1);
        assert_eq!(events, vec![ev(None, &payload)]);
    }
}
