//! The meter of what a session costs: every model request priced through
//! its provider's model table (the settings' `models` → `price` included)
//! and summed per session — the main loop's requests, fed in from its
//! `AgentEvent::Usage` events ([`CostMeter::observe`]), and the side
//! requests (compaction summaries, auto mode's classifier, subagents),
//! counted as their streams end by the [`MeteredProvider`] they go
//! through. A request whose model has no price makes the session's figure
//! unknown (`None`) from then on, never zero.
//!
//! Each request is also written to the transcript ([`CostLog`]) with the
//! session's total so far, so a listing reads the total from the last such
//! record and a resumed session goes on from it.

use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use futures::Stream;
use riot_protocol::{
    AgentEvent, ModelCapabilities, ModelRequest, Provider, ProviderEvent, ProviderStream,
    SessionCost, Usage,
};
use tokio_util::sync::CancellationToken;

/// One priced request, as the transcript records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PricedRequest<'a> {
    pub model: &'a str,
    pub usage: &'a Usage,
    /// A side request (not the main loop's).
    pub side: bool,
    /// What this request cost; `None` when its model has no price.
    pub cost_usd: Option<f64>,
    /// The session's cost with this request.
    pub total: &'a SessionCost,
}

/// Where priced requests are recorded (the session's transcript).
pub trait CostLog: Send + Sync + std::fmt::Debug {
    fn request(&self, request: PricedRequest<'_>);
}

/// A session's running cost. Shared: the session feeds it the main loop's
/// events, the [`MeteredProvider`]s feed it side requests, and faces read
/// it ([`CostMeter::total`]) at any time, also during a turn.
#[derive(Debug)]
pub struct CostMeter {
    /// Whose `capabilities(model).price` prices a request.
    prices: Arc<dyn Provider>,
    total: Mutex<SessionCost>,
    log: OnceLock<Arc<dyn CostLog>>,
}

impl CostMeter {
    /// A meter pricing through `prices` (the session's provider, which
    /// knows the model table and the settings' overrides), starting from
    /// `start` (a resumed session's total, or [`SessionCost::default`]).
    pub fn new(prices: Arc<dyn Provider>, start: SessionCost) -> Self {
        Self {
            prices,
            total: Mutex::new(start),
            log: OnceLock::new(),
        }
    }

    /// From now on, every request is also recorded in `log`.
    pub fn record_to(&self, log: Arc<dyn CostLog>) {
        if self.log.set(log).is_err() {
            tracing::warn!("the cost meter already records to a transcript");
        }
    }

    /// Counts one request of `model`; returns its own cost (`None`: the
    /// model has no price).
    pub fn record(&self, model: &str, usage: &Usage, side: bool) -> Option<f64> {
        let price = self.prices.capabilities(model).price;
        let (cost, total) = {
            let mut total = self.total.lock().unwrap_or_else(|e| e.into_inner());
            let cost = total.add(model, usage, side, price.as_ref());
            (cost, total.clone())
        };
        if let Some(log) = self.log.get() {
            log.request(PricedRequest {
                model,
                usage,
                side,
                cost_usd: cost,
                total: &total,
            });
        }
        cost
    }

    /// Takes one of the main loop's events: a `Usage` event is one request.
    pub fn observe(&self, event: &AgentEvent) {
        if let AgentEvent::Usage { model, usage } = event {
            self.record(model, usage, false);
        }
    }

    /// The session's cost so far.
    pub fn total(&self) -> SessionCost {
        self.total.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A provider whose every request is counted as a side request of a
/// session when its reply ends (or is dropped), with the usage it
/// reported. Compaction, the classifier and subagents ask through it.
#[derive(Debug, Clone)]
pub struct MeteredProvider {
    inner: Arc<dyn Provider>,
    meter: Arc<CostMeter>,
}

impl MeteredProvider {
    /// `inner`'s requests, counted by `meter`.
    pub fn new(inner: Arc<dyn Provider>, meter: Arc<CostMeter>) -> Self {
        Self { inner, meter }
    }
}

impl Provider for MeteredProvider {
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ProviderStream {
        let model = request.model.clone();
        Box::pin(MeteredStream {
            inner: self.inner.stream(request, cancel),
            model,
            usage: Usage::default(),
            saw_usage: false,
            counted: false,
            meter: Arc::clone(&self.meter),
        })
    }

    fn capabilities(&self, model: &str) -> ModelCapabilities {
        self.inner.capabilities(model)
    }
}

/// A reply passed through unchanged, its usage counted once at the end.
struct MeteredStream {
    inner: ProviderStream,
    model: String,
    /// Cumulative for the request, as the loop merges it.
    usage: Usage,
    saw_usage: bool,
    counted: bool,
    meter: Arc<CostMeter>,
}

impl MeteredStream {
    fn count(&mut self) {
        if self.saw_usage && !self.counted {
            self.counted = true;
            self.meter.record(&self.model, &self.usage, true);
        }
    }
}

impl Stream for MeteredStream {
    type Item = <ProviderStream as Stream>::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(ProviderEvent::Usage(u)))) => {
                self.usage.merge_cumulative(u);
                self.saw_usage = true;
            }
            Poll::Ready(None) => self.count(),
            _ => {}
        }
        polled
    }
}

impl Drop for MeteredStream {
    /// A reply dropped before its end (an error ended it, the caller
    /// stopped reading) still cost what it reported.
    fn drop(&mut self) {
        self.count();
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use riot_protocol::{Price, ProviderError, ProviderErrorKind, StopReason};

    use super::*;

    /// Prices `priced-*` models; replies with scripted events.
    #[derive(Debug)]
    struct Script(Vec<Result<ProviderEvent, ProviderError>>);

    impl Provider for Script {
        fn stream(&self, _request: ModelRequest, _cancel: CancellationToken) -> ProviderStream {
            Box::pin(futures::stream::iter(self.0.clone()))
        }
        fn capabilities(&self, model: &str) -> ModelCapabilities {
            ModelCapabilities {
                price: model
                    .starts_with("priced")
                    .then_some(Price::new(2.0, 10.0, 2.5, 0.2)),
                ..ModelCapabilities::default()
            }
        }
    }

    /// A logged request: model, side, its cost, the total after it.
    type Logged = (String, bool, Option<f64>, Option<f64>);

    #[derive(Debug, Default)]
    struct Log(Mutex<Vec<Logged>>);

    impl CostLog for Log {
        fn request(&self, r: PricedRequest<'_>) {
            self.0
                .lock()
                .unwrap()
                .push((r.model.to_owned(), r.side, r.cost_usd, r.total.usd));
        }
    }

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            web_searches: 0,
        }
    }

    fn request(model: &str) -> ModelRequest {
        ModelRequest {
            server_tools: Vec::new(),
            model: model.into(),
            system: riot_protocol::SystemPrompt::default(),
            messages: Vec::new(),
            tools: Vec::new(),
            max_tokens: 10,
            thinking: None,
            cache: riot_protocol::CacheHints::default(),
            stream: true,
        }
    }

    #[tokio::test]
    async fn a_side_request_is_counted_once_with_its_last_cumulative_usage() {
        let provider: Arc<dyn Provider> = Arc::new(Script(vec![
            Ok(ProviderEvent::Usage(usage(1_000, 1, 4_000, 0))),
            Ok(ProviderEvent::Usage(usage(0, 500, 0, 0))),
            Ok(ProviderEvent::Stop {
                reason: StopReason::EndTurn,
            }),
        ]));
        let meter = Arc::new(CostMeter::new(provider.clone(), SessionCost::default()));
        let log = Arc::new(Log::default());
        meter.record_to(log.clone());
        let metered = MeteredProvider::new(provider, meter.clone());
        let events: Vec<_> = metered
            .stream(request("priced-small"), CancellationToken::new())
            .collect()
            .await;
        assert_eq!(events.len(), 3, "the reply passes through unchanged");
        // 1,000 × 2 + 500 × 10 + 4,000 × 0.2 = 7,800 per million.
        let expected = 0.0078;
        let total = meter.total();
        assert!((total.usd.unwrap() - expected).abs() < 1e-12, "{total:?}");
        assert_eq!(total.side_usage, usage(1_000, 500, 4_000, 0));
        assert_eq!(total.usage, Usage::default());
        assert_eq!(total.requests, 1);
        let logged = log.0.lock().unwrap().clone();
        assert_eq!(logged.len(), 1);
        assert_eq!((logged[0].0.as_str(), logged[0].1), ("priced-small", true));
    }

    #[tokio::test]
    async fn a_failed_or_dropped_reply_still_counts_what_it_reported() {
        let provider: Arc<dyn Provider> = Arc::new(Script(vec![
            Ok(ProviderEvent::Usage(usage(100, 0, 0, 0))),
            Err(ProviderError::new(ProviderErrorKind::StreamCut, "cut")),
        ]));
        let meter = Arc::new(CostMeter::new(provider.clone(), SessionCost::default()));
        let metered = MeteredProvider::new(provider, meter.clone());
        let mut stream = metered.stream(request("priced-x"), CancellationToken::new());
        assert!(matches!(
            stream.next().await,
            Some(Ok(ProviderEvent::Usage(_)))
        ));
        assert_eq!(meter.total().requests, 0, "not counted before the end");
        drop(stream);
        assert_eq!(meter.total().requests, 1);
        assert_eq!(meter.total().side_usage.input_tokens, 100);

        // A reply that reported no usage is not a request to count.
        let silent: Arc<dyn Provider> = Arc::new(Script(vec![Err(ProviderError::new(
            ProviderErrorKind::Network,
            "refused",
        ))]));
        let meter = Arc::new(CostMeter::new(silent.clone(), SessionCost::default()));
        let _: Vec<_> = MeteredProvider::new(silent, meter.clone())
            .stream(request("priced-x"), CancellationToken::new())
            .collect()
            .await;
        assert_eq!(meter.total(), SessionCost::default());
    }

    #[test]
    fn main_requests_come_from_usage_events_and_an_unpriced_one_makes_the_total_unknown() {
        let provider: Arc<dyn Provider> = Arc::new(Script(Vec::new()));
        let meter = CostMeter::new(provider, SessionCost::default());
        let log = Arc::new(Log::default());
        meter.record_to(log.clone());
        meter.observe(&AgentEvent::Usage {
            model: "priced-a".into(),
            usage: usage(1_000_000, 0, 0, 0),
        });
        meter.observe(&AgentEvent::Done {
            reason: riot_protocol::TerminalReason::Completed,
        });
        assert_eq!(meter.total().usd, Some(2.0));
        meter.observe(&AgentEvent::Usage {
            model: "local".into(),
            usage: usage(10, 10, 0, 0),
        });
        let total = meter.total();
        assert_eq!(total.usd, None);
        assert_eq!(total.requests, 2);
        assert_eq!(total.usage, usage(1_000_010, 10, 0, 0));
        assert_eq!(
            log.0.lock().unwrap().clone(),
            vec![
                ("priced-a".to_owned(), false, Some(2.0), Some(2.0)),
                ("local".to_owned(), false, None, None),
            ]
        );
    }
}
