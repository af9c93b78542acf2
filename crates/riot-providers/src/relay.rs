//! Between the socket and the consumer of one streaming attempt: feeds
//! body reads through the SSE parser and the decoder, and decides what may
//! be handed out now.
//!
//! `Started` and `Usage` are held back until the first content event
//! (`Delta`, `Block`, `Stop`), so a failure before any content can still
//! be retried — or fall back to a non-streaming request — without a face
//! showing anything twice (docs/design.md §11: no retry after the first
//! event).

use bytes::Bytes;
use riot_protocol::{ProviderError, ProviderErrorKind, ProviderEvent};

use crate::decode::Decoder;
use crate::sse::{SseEvent, SseParser};

/// What one read of the body produced.
#[derive(Debug)]
pub enum Read {
    Bytes(Bytes),
    /// The body ended (cleanly or not: the decoder tells a cut).
    End,
    /// Nothing arrived within the idle window.
    Idle,
    Cancelled,
}

/// What the attempt does next.
#[derive(Debug, PartialEq)]
pub enum Next {
    Continue,
    /// Stop or an error was handed out: the request is over.
    Finished,
    /// Failed before anything was handed out: the retry policy decides.
    Failed(ProviderError),
    /// The watchdog fired before any content: fall back to one
    /// non-streaming request.
    StalledEarly,
}

/// One streaming attempt's decoding state.
pub struct Relay {
    decoder: Box<dyn Decoder>,
    parser: SseParser,
    sse: Vec<SseEvent>,
    held: Vec<ProviderEvent>,
    forwarded: bool,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("held", &self.held.len())
            .field("forwarded", &self.forwarded)
            .finish_non_exhaustive()
    }
}

impl Relay {
    /// A relay around a fresh decoder.
    pub fn new(decoder: Box<dyn Decoder>) -> Self {
        Self {
            decoder,
            parser: SseParser::new(),
            sse: Vec::new(),
            held: Vec::new(),
            forwarded: false,
        }
    }

    /// Whether the reply's final event was decoded.
    pub fn is_done(&self) -> bool {
        self.decoder.is_done()
    }

    /// Feeds one read: the items to hand out now, in order, and what next.
    pub fn feed(
        &mut self,
        read: Read,
        idle_ms: u64,
    ) -> (Vec<Result<ProviderEvent, ProviderError>>, Next) {
        let mut out = Vec::new();
        let mut failure = None;
        let mut ended = false;
        match read {
            Read::Cancelled => failure = Some(cancelled()),
            Read::Idle if self.forwarded => failure = Some(stalled(idle_ms)),
            Read::Idle => return (Vec::new(), Next::StalledEarly),
            Read::Bytes(bytes) => self.parser.push(&bytes, &mut self.sse),
            Read::End => {
                self.parser.finish(&mut self.sse);
                ended = true;
            }
        }
        if failure.is_none() {
            for event in self.sse.drain(..) {
                if let Err(e) = self.decoder.event(&event, &mut out) {
                    failure = Some(e);
                    break;
                }
                if self.decoder.is_done() {
                    break; // anything after the final event is ignored
                }
            }
            if failure.is_none() && ended && !self.decoder.is_done() {
                failure = self.decoder.end(&mut out).err();
            }
        }
        let mut emit = Vec::new();
        for event in out {
            if self.forwarded || is_content(&event) {
                if !self.forwarded {
                    self.forwarded = true;
                    emit.extend(self.held.drain(..).map(Ok));
                }
                emit.push(Ok(event));
            } else {
                self.held.push(event);
            }
        }
        let next = match failure {
            Some(e) if self.forwarded || e.kind == ProviderErrorKind::Cancelled => {
                emit.push(Err(e));
                Next::Finished
            }
            Some(e) => Next::Failed(e),
            None if self.decoder.is_done() || ended => {
                emit.extend(self.held.drain(..).map(Ok));
                Next::Finished
            }
            None => Next::Continue,
        };
        (emit, next)
    }
}

fn is_content(event: &ProviderEvent) -> bool {
    matches!(
        event,
        ProviderEvent::Delta(_) | ProviderEvent::Block(_) | ProviderEvent::Stop { .. }
    )
}

/// The error for a cancelled request.
pub fn cancelled() -> ProviderError {
    ProviderError::new(ProviderErrorKind::Cancelled, "the request was cancelled")
}

/// The error for a silent server.
pub fn stalled(ms: u64) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Stalled,
        format!("no data from the server for {} s", ms / 1000),
    )
}

#[cfg(test)]
mod tests {
    use riot_protocol::{StopReason, StreamDelta};

    use super::*;
    use crate::anthropic::decode::AnthropicDecoder;

    fn bytes(s: &str) -> Read {
        Read::Bytes(Bytes::from(s.to_owned()))
    }

    const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n";
    const DELTA: &str = "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n";

    #[test]
    fn started_is_held_until_content_and_a_failure_before_content_may_be_retried() {
        let mut relay = Relay::new(Box::new(AnthropicDecoder::new("m")));
        let (emit, next) = relay.feed(bytes(START), 90_000);
        assert!(emit.is_empty(), "held: {emit:?}");
        assert_eq!(next, Next::Continue);
        let (emit, next) = relay.feed(Read::End, 90_000);
        assert!(emit.is_empty());
        assert!(matches!(next, Next::Failed(ref e) if e.kind == ProviderErrorKind::StreamCut));
    }

    #[test]
    fn after_content_errors_are_handed_out_and_idle_means_stalled() {
        let mut relay = Relay::new(Box::new(AnthropicDecoder::new("m")));
        let _ = relay.feed(bytes(START), 90_000);
        let (emit, next) = relay.feed(bytes(DELTA), 90_000);
        assert_eq!(next, Next::Continue);
        assert!(matches!(emit[0], Ok(ProviderEvent::Started { .. })));
        assert!(matches!(emit[1], Ok(ProviderEvent::Usage(_))));
        assert_eq!(
            emit[2],
            Ok(ProviderEvent::Delta(StreamDelta::Text {
                text: "hi".into()
            }))
        );
        let (emit, next) = relay.feed(Read::Idle, 90_000);
        assert_eq!(next, Next::Finished);
        assert_eq!(emit.len(), 1);
        assert_eq!(
            emit[0].as_ref().map_err(|e| e.kind),
            Err(ProviderErrorKind::Stalled)
        );
    }

    #[test]
    fn idle_before_content_asks_for_the_fallback_and_a_refusal_flushes_what_was_held() {
        let mut relay = Relay::new(Box::new(AnthropicDecoder::new("m")));
        let _ = relay.feed(bytes(START), 90_000);
        assert_eq!(relay.feed(Read::Idle, 90_000).1, Next::StalledEarly);

        let mut relay = Relay::new(Box::new(AnthropicDecoder::new("m")));
        let _ = relay.feed(bytes(START), 90_000);
        let end = "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n";
        let (emit, next) = relay.feed(bytes(end), 90_000);
        assert_eq!(next, Next::Finished);
        assert!(matches!(emit[0], Ok(ProviderEvent::Started { .. })));
        assert_eq!(
            emit.last(),
            Some(&Ok(ProviderEvent::Stop {
                reason: StopReason::Refusal
            }))
        );
    }
}
