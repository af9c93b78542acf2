//! INV-4: `Done` exactly once and last. A guard wrapping the loop's stream
//! checks every item and the end of the stream (and, on drop, a stream that
//! ended without `Done`).

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::stream::Stream;
use riot_protocol::AgentEvent;
use riot_protocol::invariants::{Violation, enforce};

/// Wraps the loop's stream and enforces INV-4.
#[derive(Debug)]
pub struct DoneGuard<S> {
    inner: S,
    done_seen: bool,
    ended: bool,
}

impl<S> DoneGuard<S> {
    /// Guards `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            done_seen: false,
            ended: false,
        }
    }
}

fn inv4(detail: &str) -> Result<(), Violation> {
    Err(Violation {
        id: "INV-4",
        detail: detail.to_owned(),
    })
}

impl<S: Stream<Item = AgentEvent> + Unpin> Stream for DoneGuard<S> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(event)) => {
                if this.done_seen {
                    enforce(inv4("an event followed Done"));
                }
                if matches!(event, AgentEvent::Done { .. }) {
                    this.done_seen = true;
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                this.ended = true;
                if !this.done_seen {
                    enforce(inv4("the stream ended without Done"));
                }
                Poll::Ready(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use futures::executor::block_on;
    use riot_protocol::TerminalReason;

    use super::*;

    fn done() -> AgentEvent {
        AgentEvent::Done {
            reason: TerminalReason::Completed,
        }
    }

    #[test]
    fn done_once_and_last_passes() {
        let events = vec![
            AgentEvent::Compacting {
                strategy: riot_protocol::CompactionStrategy::Summary,
            },
            done(),
        ];
        let out: Vec<_> = block_on(DoneGuard::new(futures::stream::iter(events.clone())).collect());
        assert_eq!(out, events);
    }

    #[test]
    #[should_panic(expected = "INV-4: the stream ended without Done")]
    fn a_stream_without_done_panics_in_debug() {
        let _: Vec<_> = block_on(DoneGuard::new(futures::stream::iter(Vec::new())).collect());
    }

    #[test]
    #[should_panic(expected = "INV-4: an event followed Done")]
    fn two_dones_panic_in_debug() {
        let _: Vec<_> =
            block_on(DoneGuard::new(futures::stream::iter(vec![done(), done()])).collect());
    }
}
