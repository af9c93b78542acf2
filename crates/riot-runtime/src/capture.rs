//! Head + tail capture of one output stream (docs/design.md §6.6: errors are
//! at the end, so the tail is kept as well as the head).

use std::collections::VecDeque;

use riot_protocol::{CaptureLimit, CapturedOutput};

use crate::plain::plain_text;

/// Keeps the first `head_bytes` and the last `tail_bytes` of a stream and
/// counts the rest.
#[derive(Debug)]
pub(crate) struct Capture {
    limit: CaptureLimit,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    pub(crate) fn new(limit: CaptureLimit) -> Self {
        Self {
            limit,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.limit.head_bytes.saturating_sub(self.head.len());
        let into_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..into_head]);
        bytes = &bytes[into_head..];
        if bytes.is_empty() || self.limit.tail_bytes == 0 {
            return;
        }
        if bytes.len() >= self.limit.tail_bytes {
            self.tail.clear();
            self.tail
                .extend(&bytes[bytes.len() - self.limit.tail_bytes..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.limit.tail_bytes);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    pub(crate) fn finish(self) -> CapturedOutput {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        // What the model reads is what a screen would show: colours and
        // progress redraws are dropped (the head and the tail each on
        // their own).
        CapturedOutput {
            head: plain_text(&decode_head(&self.head)),
            tail: plain_text(&decode_tail(&tail)),
            total_bytes: self.total,
            omitted_bytes: self.total.saturating_sub(kept),
            beginning_cut: false,
        }
    }
}

/// Lossy decoding, but a multi-byte character cut by the head limit is
/// dropped rather than shown as a replacement character.
fn decode_head(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The tail may start in the middle of a character: skip continuation bytes.
fn decode_tail(bytes: &[u8]) -> String {
    let start = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_the_middle() {
        let mut c = Capture::new(CaptureLimit {
            head_bytes: 4,
            tail_bytes: 3,
        });
        c.push(b"abcdef");
        c.push(b"ghij");
        let out = c.finish();
        assert_eq!(out.head, "abcd");
        assert_eq!(out.tail, "hij");
        assert_eq!(out.total_bytes, 10);
        assert_eq!(out.omitted_bytes, 3);
    }

    #[test]
    fn short_output_is_kept_whole_without_duplication() {
        let mut c = Capture::new(CaptureLimit::default());
        c.push(b"hello\n");
        let out = c.finish();
        assert_eq!((out.head.as_str(), out.tail.as_str()), ("hello\n", ""));
        assert!(!out.truncated());
    }

    #[test]
    fn a_cut_multibyte_character_is_not_garbled() {
        let mut c = Capture::new(CaptureLimit {
            head_bytes: 2,
            tail_bytes: 2,
        });
        c.push("é中".as_bytes()); // 2 + 3 bytes
        let out = c.finish();
        assert_eq!(out.head, "é");
        assert_eq!(
            out.tail, "",
            "the two trailing bytes of 中 are not a character"
        );
        assert_eq!(out.omitted_bytes, 1);
    }
}
