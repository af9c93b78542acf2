//! What both transports let through to the SDK: one message (a stdin line
//! or a WebSocket text frame) that is valid UTF-8 and valid JSON, at most
//! [`MAX_MESSAGE_BYTES`] long. Anything else is answered here, by the
//! transport, with a JSON-RPC parse error (`id: null`, `-32700`) that
//! quotes at most [`EXCERPT_CHARS`] characters of it, and the connection
//! goes on with the next message.
//!
//! The SDK's own parse error carries the whole offending line as its
//! `data`, so a multi-megabyte mistake would come back in full; it never
//! sees a line that is not JSON. Valid JSON that is not a JSON-RPC message
//! is still the SDK's to answer (an invalid request, which quotes nothing).

use serde_json::json;

/// The longest message a transport holds in memory. A longer stdin line
/// is read through and discarded; a longer WebSocket message ends the
/// connection (the frame cannot be skipped).
pub(crate) const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// The most characters of a refused message an error quotes.
pub(crate) const EXCERPT_CHARS: usize = 100;

/// Bytes enough for [`EXCERPT_CHARS`] characters: a transport keeps this
/// much of a message it discards.
pub(crate) const HEAD_BYTES: usize = EXCERPT_CHARS * 4;

/// Why a message was refused: the reason its parse error gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// A stdin line or text frame that is not UTF-8.
    #[error("the message is not valid UTF-8")]
    NotUtf8,
    /// UTF-8 that is not JSON: serde's category of the mistake and where
    /// it is (never serde's message, which can quote the input).
    #[error("the message is not valid JSON ({category} at line {line}, column {column})")]
    NotJson {
        /// What kind of mistake (`syntax error`, `it ends early`, …).
        category: &'static str,
        /// Its line, from 1.
        line: usize,
        /// Its column, from 1.
        column: usize,
    },
    /// Over [`MAX_MESSAGE_BYTES`].
    #[error(
        "the message is longer than the {} MiB limit and was discarded",
        MAX_MESSAGE_BYTES / (1024 * 1024)
    )]
    TooLong,
    /// A binary WebSocket frame.
    #[error("the message is a binary frame; ACP messages travel in text frames")]
    Binary,
}

/// A message a transport refuses: why, with what of it the parse error
/// quotes (its first bytes) and its whole length.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{refusal}")]
pub(crate) struct Refused {
    refusal: Refusal,
    /// At most [`HEAD_BYTES`] of the message.
    head: Vec<u8>,
    /// The message's whole length in bytes.
    length: usize,
}

impl Refused {
    /// `refusal` of a message of `length` bytes that starts with `head`.
    pub(crate) fn new(refusal: Refusal, head: &[u8], length: usize) -> Self {
        Self {
            refusal,
            head: head[..head.len().min(HEAD_BYTES)].to_vec(),
            length,
        }
    }

    /// The parse-error response to send back ([`parse_error`]).
    pub(crate) fn response(&self) -> String {
        parse_error(&self.refusal, Some((&self.head, self.length)))
    }
}

/// One message as a transport received it: its text for the SDK, or why
/// it is refused (whose [`Refused::response`] is sent back instead).
pub(crate) fn screen(bytes: Vec<u8>) -> Result<String, Refused> {
    match String::from_utf8(bytes) {
        Ok(text) => screen_text(text),
        Err(e) => {
            let bytes = e.as_bytes();
            Err(Refused::new(Refusal::NotUtf8, bytes, bytes.len()))
        }
    }
}

/// [`screen`] for a message already known to be UTF-8.
pub(crate) fn screen_text(text: String) -> Result<String, Refused> {
    // Parsed as the SDK parses it, so whatever passes here is JSON to it.
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(_) => Ok(text),
        Err(e) => {
            // Only the category and position: serde's own messages can
            // quote the input.
            let category = match e.classify() {
                serde_json::error::Category::Eof => "it ends early",
                serde_json::error::Category::Syntax => "syntax error",
                serde_json::error::Category::Data => "invalid data",
                serde_json::error::Category::Io => "read error",
            };
            let refusal = Refusal::NotJson {
                category,
                line: e.line(),
                column: e.column(),
            };
            Err(Refused::new(refusal, text.as_bytes(), text.len()))
        }
    }
}

/// The parse-error response (one line of JSON) for a refused message, given
/// its first bytes and its whole length when they are known (no bytes and
/// a length: only the length is known).
pub(crate) fn parse_error(refusal: &Refusal, seen: Option<(&[u8], usize)>) -> String {
    let reason = refusal.to_string();
    tracing::warn!(
        reason = %reason,
        length = seen.map(|(_, length)| length),
        "riot acp: refused an incoming message"
    );
    let (message, data) = match seen {
        // Only the length is known (a frame refused by its header).
        Some((head, length)) if head.is_empty() && length > 0 => (
            format!("Parse error: {reason}; {length} bytes"),
            json!({"reason": reason, "length": length}),
        ),
        Some((head, length)) => (
            format!(
                "Parse error: {reason}; {length} bytes: \"{}\"",
                excerpt(head, length)
            ),
            json!({"reason": reason, "length": length}),
        ),
        None => (format!("Parse error: {reason}"), json!({"reason": reason})),
    };
    json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": message, "data": data},
    })
    .to_string()
}

/// The first [`EXCERPT_CHARS`] characters of a message of `length` bytes
/// that starts with `head` (bytes that are not UTF-8 shown as U+FFFD),
/// with `…` when there is more.
fn excerpt(head: &[u8], length: usize) -> String {
    let head = &head[..head.len().min(HEAD_BYTES)];
    let text = String::from_utf8_lossy(head);
    let mut chars = text.chars();
    let mut shown: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() || head.len() < length {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(response: &str) -> serde_json::Value {
        let value: serde_json::Value = serde_json::from_str(response).unwrap();
        assert_eq!(value["jsonrpc"], "2.0");
        assert_eq!(value["id"], serde_json::Value::Null);
        assert_eq!(value["error"]["code"], -32700);
        value["error"].clone()
    }

    #[test]
    fn json_passes_and_the_rest_is_a_short_parse_error() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#;
        assert_eq!(screen(line.as_bytes().to_vec()), Ok(line.to_owned()));
        // Valid JSON that is not JSON-RPC is the SDK's to answer.
        assert_eq!(screen(b"17".to_vec()), Ok("17".to_owned()));

        let refused = error(&screen(b"\xff\xfe".to_vec()).unwrap_err().response());
        assert_eq!(
            refused["message"],
            "Parse error: the message is not valid UTF-8; 2 bytes: \"\u{fffd}\u{fffd}\""
        );
        assert_eq!(refused["data"]["length"], 2);

        let refused = error(&screen(b"{nope".to_vec()).unwrap_err().response());
        assert_eq!(
            refused["message"],
            "Parse error: the message is not valid JSON (syntax error at line 1, column 2); 5 bytes: \"{nope\""
        );
    }

    #[test]
    fn a_long_message_is_quoted_by_its_first_hundred_characters() {
        // Multi-byte characters: the cut falls on a character boundary.
        let junk = "é".repeat(3_000_000);
        let response = screen(junk.clone().into_bytes()).unwrap_err().response();
        assert!(response.len() < 1024, "{} bytes", response.len());
        let message = error(&response)["message"].as_str().unwrap().to_owned();
        let quoted = format!("6000000 bytes: \"{}…\"", "é".repeat(EXCERPT_CHARS));
        assert!(message.ends_with(&quoted), "{message}");

        // Exactly the limit: nothing left out, no ellipsis.
        assert_eq!(excerpt("a".repeat(100).as_bytes(), 100), "a".repeat(100));
        assert_eq!(
            excerpt("a".repeat(101).as_bytes(), 101),
            format!("{}…", "a".repeat(100))
        );
        // A head cut short of the message's length says there is more.
        assert_eq!(excerpt(b"abc", 9_000_000), "abc…");
    }

    #[test]
    fn a_refusal_without_the_bytes_quotes_nothing() {
        let refused = error(&parse_error(&Refusal::NotUtf8, None));
        assert_eq!(
            refused["message"],
            "Parse error: the message is not valid UTF-8"
        );
        assert_eq!(
            refused["data"],
            json!({"reason": "the message is not valid UTF-8"})
        );
        let refused = error(&parse_error(&Refusal::TooLong, Some((&[], 9_000_000))));
        assert_eq!(
            refused["message"],
            "Parse error: the message is longer than the 8 MiB limit and was discarded; 9000000 bytes"
        );
        let refused = error(&parse_error(&Refusal::TooLong, Some((b"xyz", 9_000_000))));
        assert_eq!(
            refused["message"],
            "Parse error: the message is longer than the 8 MiB limit and was discarded; 9000000 bytes: \"xyz…\""
        );
    }
}
