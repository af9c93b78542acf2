//! Strict text decoding and line-ending facts (docs/design.md §6.4: encoding
//! fidelity). Files are never decoded lossily: what Edit writes back must
//! be byte for byte what was there, apart from the edit.

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &str = "\u{feff}";

/// A file's bytes as text, with its BOM split off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub bom: bool,
    /// The text after the BOM.
    pub text: String,
}

impl Decoded {
    /// The exact bytes this text came from.
    pub(crate) fn to_bytes(&self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.bom {
            out.extend_from_slice(BOM.as_bytes());
        }
        out.extend_from_slice(text.as_bytes());
        out
    }
}

/// Why a file cannot be treated as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotText {
    /// Contains a NUL byte at this offset.
    Binary { offset: usize },
    /// Not valid UTF-8 from this byte offset.
    InvalidUtf8 { offset: usize },
}

impl NotText {
    /// An imperative explanation for the model.
    pub(crate) fn explain(&self, path: &str) -> String {
        match self {
            NotText::Binary { offset } => format!(
                "{path} is a binary file (it contains a NUL byte at offset {offset}); it cannot be read or edited as text. Use Bash with a tool made for this format if you need to inspect it."
            ),
            NotText::InvalidUtf8 { offset } => format!(
                "{path} is not valid UTF-8 (invalid byte sequence at byte offset {offset}); Riot only reads and edits UTF-8 text and will not convert it lossily. Leave this file alone, or convert it with a dedicated tool via Bash if the person asks for it."
            ),
        }
    }
}

/// Decodes strictly: NUL → binary, invalid UTF-8 → refused.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded, NotText> {
    if let Some(offset) = memchr_nul(bytes) {
        return Err(NotText::Binary { offset });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| NotText::InvalidUtf8 {
        offset: e.valid_up_to(),
    })?;
    Ok(match text.strip_prefix(BOM) {
        Some(rest) => Decoded {
            bom: true,
            text: rest.to_owned(),
        },
        None => Decoded {
            bom: false,
            text: text.to_owned(),
        },
    })
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == 0)
}

/// Which line endings a text uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEndings {
    /// No line break at all.
    None,
    Lf,
    Crlf,
    Mixed,
}

pub(crate) fn line_endings(text: &str) -> LineEndings {
    let mut lf = 0usize;
    let mut crlf = 0usize;
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' {
            if i > 0 && bytes[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
    }
    match (lf, crlf) {
        (0, 0) => LineEndings::None,
        (_, 0) => LineEndings::Lf,
        (0, _) => LineEndings::Crlf,
        _ => LineEndings::Mixed,
    }
}

/// Every bare `\n` becomes `\r\n` (existing `\r\n` are kept).
pub(crate) fn lf_to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut prev = '\0';
    for c in text.chars() {
        if c == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Every `\r\n` becomes `\n`.
pub(crate) fn crlf_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, byte: usize) -> u64 {
    let end = byte.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count() as u64
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_splits_the_bom_and_round_trips_bytes() {
        let bytes = b"\xef\xbb\xbfa\r\nb\n";
        let d = decode(bytes).unwrap();
        assert!(d.bom);
        assert_eq!(d.text, "a\r\nb\n");
        assert_eq!(d.to_bytes(&d.text), bytes.to_vec());
    }

    #[test]
    fn decode_refuses_nul_and_invalid_utf8_with_the_offset() {
        assert_eq!(decode(b"ab\0c"), Err(NotText::Binary { offset: 2 }));
        assert_eq!(
            decode(b"ok\xff\xfe"),
            Err(NotText::InvalidUtf8 { offset: 2 })
        );
    }

    #[test]
    fn line_endings_are_classified() {
        assert_eq!(line_endings("a"), LineEndings::None);
        assert_eq!(line_endings("a\nb\n"), LineEndings::Lf);
        assert_eq!(line_endings("a\r\nb\r\n"), LineEndings::Crlf);
        assert_eq!(line_endings("a\r\nb\n"), LineEndings::Mixed);
        assert_eq!(lf_to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
