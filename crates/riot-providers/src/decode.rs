//! What every wire decoder shares: the [`Decoder`] trait the transport
//! drives, and tool-argument handling (accumulated as a string, parsed
//! once at block end — docs/design.md §11).

use riot_protocol::{ProviderError, ProviderErrorKind, ProviderEvent, StopReason};
use serde_json::Value;

use crate::sse::SseEvent;

/// Turns the SSE events of one reply into [`ProviderEvent`]s.
pub trait Decoder: Send {
    /// Decodes one event. An `Err` (an error event, a malformed payload,
    /// an output limit) ends the stream.
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), ProviderError>;

    /// Whether the reply's final event arrived; the transport stops reading.
    fn is_done(&self) -> bool;

    /// The body ended. Without the final event this flushes what is
    /// complete (finished text) and returns a `StreamCut` error.
    fn end(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError>;
}

/// Parses a tool call's accumulated argument text; empty means `{}`.
pub fn parse_tool_input(name: &str, json: &str) -> Result<Value, ProviderError> {
    if json.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(json).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::Malformed,
            format!("the arguments of tool call `{name}` are not valid JSON ({e})"),
        )
    })
}

/// Parses one SSE data payload as JSON.
pub fn parse_json(data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        let mut shown: String = data.chars().take(200).collect();
        if shown.len() < data.len() {
            shown.push('…');
        }
        ProviderError::new(
            ProviderErrorKind::Malformed,
            format!("the server sent an event that is not JSON ({e}): {shown}"),
        )
    })
}

/// An event's type: the payload's `type`, else the SSE `event:` name.
/// Data-only frames carry the type in the payload, so it is preferred.
pub fn event_kind<'a>(payload: &'a Value, event: &'a SseEvent) -> &'a str {
    match payload.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None => event.event.as_deref().unwrap_or(""),
    }
}

/// The error for a body that ended before the reply's final event.
pub fn stream_cut() -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::StreamCut,
        "the connection closed before the reply was complete",
    )
}

/// The error for a reply that hit the output-token limit.
pub fn output_limit() -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::OutputLimit,
        "the reply hit the output-token limit",
    )
}

/// Ends a reply: `Stop`, or the output-limit error for a truncated one
/// (docs/design.md §11: an output limit is an error, not a normal end).
pub fn finish(reason: StopReason, out: &mut Vec<ProviderEvent>) -> Result<(), ProviderError> {
    if reason == StopReason::MaxTokens {
        return Err(output_limit());
    }
    out.push(ProviderEvent::Stop { reason });
    Ok(())
}

/// Reads a `u64` at a JSON path, 0 when absent.
pub fn u64_at(value: &Value, path: &[&str]) -> u64 {
    let mut v = value;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return 0,
        }
    }
    v.as_u64().unwrap_or(0)
}

/// Reads a string field, `""` when absent.
pub fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Runs a whole body, chunk by chunk, through a fresh [`SseParser`](crate::sse::SseParser) and
/// `decoder`: the events, then the error that ended the stream (if any).
/// The transport does the same incrementally; tests and the benchmark use
/// this.
pub fn decode_chunks<'a>(
    decoder: &mut dyn Decoder,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<ProviderEvent>, Option<ProviderError>) {
    let mut parser = crate::sse::SseParser::new();
    let mut out = Vec::new();
    let mut sse = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut sse);
        for event in sse.drain(..) {
            if let Err(e) = decoder.event(&event, &mut out) {
                return (out, Some(e));
            }
            if decoder.is_done() {
                return (out, None);
            }
        }
    }
    parser.finish(&mut sse);
    for event in sse.drain(..) {
        if let Err(e) = decoder.event(&event, &mut out) {
            return (out, Some(e));
        }
        if decoder.is_done() {
            return (out, None);
        }
    }
    let end = decoder.end(&mut out).err();
    (out, end)
}
