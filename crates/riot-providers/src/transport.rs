//! The HTTP transport: one reqwest client (rustls on *ring*, connection
//! reuse), the retry loop, the idle watchdog with its non-streaming
//! fallback, and cancellation. All waiting goes through the injected
//! [`Clock`](riot_protocol::Clock).

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;
use futures::future::{Either, select};
use riot_protocol::{
    ClockExt, ModelCapabilities, ModelRequest, Provider, ProviderError, ProviderErrorKind,
    ProviderEvent, ProviderStream,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::classify::{classify_http, classify_stream_error, retry_after_ms};
use crate::config::{ConfigError, ProviderConfig, ProviderKind};
use crate::decode::Decoder;
use crate::models::capabilities_for;
use crate::redact::Redactor;
use crate::relay::{Next, Read, Relay, cancelled, stalled};
use crate::retry::{Decision, RetryState, wait_too_long};
use crate::{anthropic, chat, responses};

/// Anthropic's API version header.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// The longest a non-streaming fallback may take.
const FALLBACK_TIMEOUT_MS: u64 = 600_000;

/// A model endpoint over HTTP, for any of the three wire formats.
///
/// Stream semantics:
/// - `Started` and `Usage` are held back until the first content event
///   (`Delta`, `Block`, `Stop`), so a failure before any content can be
///   retried without a face showing anything twice; after content has
///   been forwarded no error is retried (docs/design.md §11).
/// - `Retrying { attempt, .. }` names the attempt about to be made (2 for
///   the first retry) and is emitted before the wait.
/// - The idle watchdog also covers waiting for the response headers.
///   Tests that go through real sockets should use
///   `riot_testkit::TestClock`: `FixedClock` completes the watchdog's
///   sleep at once and would fire it while bytes are still on the way.
/// - A `Retry-After` longer than the policy's `max_wait_ms` is not waited
///   for: the error is handed out at once, naming the wait asked for and
///   when it ends.
/// - Every error and `Retrying` reason is redacted of the configured key
///   on its way out (servers echo keys in error bodies).
/// - A refused key (401/403) is not retried; the error says the key was
///   refused and where it came from ([`ProviderConfig::key_origin`]).
#[derive(Clone)]
pub struct HttpProvider {
    inner: Arc<Inner>,
}

struct Inner {
    config: ProviderConfig,
    endpoint: String,
    /// Where the endpoint lists its models.
    models_url: String,
    /// OpenAI's own endpoint (vs. a compatible server).
    openai_host: bool,
    client: reqwest::Client,
    /// Removes the configured key from what leaves the provider.
    redactor: Redactor,
}

impl std::fmt::Debug for HttpProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is deliberately absent.
        f.debug_struct("HttpProvider")
            .field("kind", &self.inner.config.kind)
            .field("endpoint", &self.inner.endpoint)
            .finish_non_exhaustive()
    }
}

/// Whether a URL's host is a loopback address (no key needed).
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Pages of a model listing read at most.
pub const MAX_LISTING_PAGES: usize = 5;

impl HttpProvider {
    /// A provider from its configuration. Fails fast on a missing key
    /// (unless the host is loopback) and an unusable base URL.
    pub fn new(config: ProviderConfig) -> Result<Self, ConfigError> {
        let configured = config
            .base_url
            .clone()
            .unwrap_or_else(|| config.kind.default_base_url().to_owned());
        // Idempotent: the kernel normalizes first and says so in
        // `riot config show`; direct users of the transport get it too.
        let base = config.kind.normalize_base_url(&configured).url;
        let endpoint = format!("{base}{}", config.kind.path());
        let models_url = match config.kind {
            ProviderKind::Anthropic => format!("{base}/v1/models"),
            ProviderKind::OpenAiChat | ProviderKind::OpenAiResponses => format!("{base}/models"),
        };
        let url = reqwest::Url::parse(&endpoint)
            .map_err(|_| ConfigError::InvalidBaseUrl(base.clone()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError::InvalidBaseUrl(base));
        }
        let has_key = config
            .api_key
            .as_ref()
            .is_some_and(|k| !k.expose().is_empty());
        if !has_key && !is_loopback(&url) {
            return Err(ConfigError::MissingKey {
                base_url: base,
                key_env: config.kind.default_key_env(),
            });
        }
        let openai_host = url.host_str().is_some_and(|h| h == "api.openai.com");
        // ring, never aws-lc (one C toolchain less); ignore "already
        // installed" — any installed provider will do.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| ConfigError::Client(e.to_string()))?;
        let redactor = Redactor::new(config.api_key.as_ref().map(|k| k.expose()));
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                endpoint,
                models_url,
                openai_host,
                client,
                redactor,
            }),
        })
    }

    /// The same endpoint for background requests (titles, summaries, the
    /// classifier): they give up on overload instead of retrying. Shares
    /// this provider's connection pool.
    pub fn for_background(&self) -> Self {
        let mut config = self.inner.config.clone();
        config.background = true;
        Self {
            inner: Arc::new(Inner {
                config,
                endpoint: self.inner.endpoint.clone(),
                models_url: self.inner.models_url.clone(),
                openai_host: self.inner.openai_host,
                client: self.inner.client.clone(),
                redactor: self.inner.redactor.clone(),
            }),
        }
    }

    /// The full request URL.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint
    }

    /// The models the endpoint serves (`GET /v1/models` on Anthropic,
    /// `GET /models` on OpenAI-compatible servers), following Anthropic's
    /// pages up to [`MAX_LISTING_PAGES`], within `timeout_ms` in all.
    pub async fn list_models(
        &self,
        timeout_ms: u64,
    ) -> Result<Vec<crate::ListedModel>, ProviderError> {
        let inner = &self.inner;
        let fetch = async {
            let mut models = Vec::new();
            let mut after: Option<String> = None;
            for _ in 0..MAX_LISTING_PAGES {
                let mut url = reqwest::Url::parse(&inner.models_url).map_err(|e| {
                    ProviderError::new(ProviderErrorKind::InvalidRequest, e.to_string())
                })?;
                if inner.config.kind == ProviderKind::Anthropic {
                    url.query_pairs_mut().append_pair("limit", "1000");
                    if let Some(after) = &after {
                        url.query_pairs_mut().append_pair("after_id", after);
                    }
                }
                let request =
                    inner.authorize(inner.client.get(url).header("accept", "application/json"));
                let response = request.send().await.map_err(|e| network(&e))?;
                let status = response.status().as_u16();
                let text = response.text().await.map_err(|e| network(&e))?;
                if !(200..300).contains(&status) {
                    return Err(inner
                        .redactor
                        .error(crate::classify::classify_http(status, &text, None)));
                }
                let body: Value = serde_json::from_str(&text).map_err(|e| {
                    ProviderError::new(
                        ProviderErrorKind::InvalidRequest,
                        format!("the model list is not JSON: {e}"),
                    )
                })?;
                let (page, next) =
                    crate::listing::parse(inner.config.kind, &body, inner.openai_host);
                models.extend(page);
                match next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            Ok(models)
        };
        match inner.config.clock.timeout(timeout_ms, fetch).await {
            Ok(result) => result,
            Err(_) => Err(stalled(timeout_ms)),
        }
    }

    /// The wire JSON for `request` (what [`Provider::stream`] sends).
    pub fn build_body(&self, request: &ModelRequest) -> Value {
        let caps = self.capabilities(&request.model);
        match self.inner.config.kind {
            ProviderKind::Anthropic => anthropic::request::build(request, &caps),
            ProviderKind::OpenAiChat => {
                chat::request::build(request, &caps, self.inner.openai_host)
            }
            ProviderKind::OpenAiResponses => responses::request::build(request, &caps),
        }
    }
}

impl Inner {
    fn decoder(&self, model: &str) -> Box<dyn Decoder> {
        match self.config.kind {
            ProviderKind::Anthropic => Box::new(anthropic::decode::AnthropicDecoder::new(model)),
            ProviderKind::OpenAiChat => Box::new(chat::decode::ChatDecoder::new(model)),
            ProviderKind::OpenAiResponses => {
                Box::new(responses::decode::ResponsesDecoder::new(model))
            }
        }
    }

    fn decode_complete(
        &self,
        body: &Value,
        model: &str,
    ) -> Result<Vec<ProviderEvent>, ProviderError> {
        match self.config.kind {
            ProviderKind::Anthropic => anthropic::decode::decode_complete(body, model),
            ProviderKind::OpenAiChat => chat::decode::decode_complete(body, model),
            ProviderKind::OpenAiResponses => responses::decode::decode_complete(body, model),
        }
    }

    /// The key and version headers every request carries.
    fn authorize(&self, mut req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(key) = &self.config.api_key {
            req = match self.config.kind {
                ProviderKind::Anthropic => req.header("x-api-key", key.expose()),
                _ => req.bearer_auth(key.expose()),
            };
        }
        if self.config.kind == ProviderKind::Anthropic {
            req = req.header("anthropic-version", ANTHROPIC_VERSION);
        }
        req
    }

    fn post(&self, body: &Value, stream: bool) -> reqwest::RequestBuilder {
        let req = self
            .client
            .post(&self.endpoint)
            .header("content-type", "application/json")
            .header(
                "accept",
                if stream {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            );
        self.authorize(req).body(body.to_string())
    }

    /// Sends and waits for the response headers (watched by the idle
    /// window); a non-success status is classified here.
    async fn send(
        &self,
        body: &Value,
        stream: bool,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, ProviderError> {
        let sending = self.post(body, stream).send();
        let timed = self
            .config
            .clock
            .timeout(self.config.idle_timeout_ms, sending);
        let response = match or_cancel(cancel, timed).await {
            None => return Err(cancelled()),
            Some(Err(_)) => return Err(stalled(self.config.idle_timeout_ms)),
            Some(Ok(Err(e))) => return Err(network(&e)),
            Some(Ok(Ok(r))) => r,
        };
        let status = response.status().as_u16();
        if response.status().is_success() {
            return Ok(response);
        }
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let retry_after = retry_after_ms(
            header("retry-after-ms").as_deref(),
            header("retry-after").as_deref(),
            self.config.clock.now_ms(),
        );
        let text = match or_cancel(cancel, response.text()).await {
            None => return Err(cancelled()),
            Some(t) => t.unwrap_or_default(),
        };
        Err(classify_http(status, &text, retry_after))
    }
}

/// How one attempt ended.
enum Attempt {
    /// Stop or an error already handed out: the request is over.
    Finished,
    /// Failed before anything was forwarded: may be retried.
    Failed(ProviderError),
    /// The watchdog fired before any content: fall back to one
    /// non-streaming request.
    StalledEarly,
}

impl Provider for HttpProvider {
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ProviderStream {
        let inner = Arc::clone(&self.inner);
        let body = self.build_body(&request);
        let provider = self.clone();
        let redactor = self.inner.redactor.clone();
        let refusal = Refusal {
            key_sent: self.inner.config.api_key.is_some(),
            key_origin: self.inner.config.key_origin.clone(),
            key_env: self.inner.config.kind.default_key_env(),
        };
        let stream = async_stream::stream! {
            let config = &inner.config;
            let mut retry = RetryState::default();
            loop {
                let attempt = match inner.send(&body, request.stream, &cancel).await {
                    Err(e) => Attempt::Failed(e),
                    // A JSON body where a stream was asked for: some
                    // compatible servers answer errors (or whole replies)
                    // this way with status 200.
                    Ok(response) if !request.stream || is_json(&response) => {
                        match read_complete(&inner, response, &request.model, &cancel).await {
                            Ok(events) => {
                                for e in events { yield Ok(e); }
                                Attempt::Finished
                            }
                            Err(e) => Attempt::Failed(e),
                        }
                    }
                    // A web page is not a model endpoint: fail fast with a
                    // hint instead of retrying a "cut" stream ten times.
                    Ok(response) if content_type(&response).starts_with("text/html") => {
                        Attempt::Failed(ProviderError::new(
                            ProviderErrorKind::Malformed,
                            format!("{} answered with a web page, not an event stream: check the base URL", inner.endpoint),
                        ))
                    }
                    Ok(response) => {
                        let mut response = Some(response);
                        let mut relay = Relay::new(inner.decoder(&request.model));
                        loop {
                            let next = async {
                                match response.as_mut() {
                                    Some(r) => r.chunk().await,
                                    None => Ok(None),
                                }
                            };
                            let read = match or_cancel(&cancel, config.clock.timeout(config.idle_timeout_ms, next)).await {
                                None => Read::Cancelled,
                                Some(Err(_)) => Read::Idle,
                                Some(Ok(Ok(Some(bytes)))) => Read::Bytes(bytes),
                                // A read error after the headers is a cut
                                // body; the decoder tells whether it was.
                                Some(Ok(Ok(None) | Err(_))) => Read::End,
                            };
                            let ended = matches!(read, Read::End);
                            let (emit, next) = relay.feed(read, config.idle_timeout_ms);
                            // The reply is complete: read the body's end in
                            // the background so the connection goes back to
                            // the pool — before the final events are handed
                            // out, as a consumer may drop the stream at Stop.
                            if relay.is_done() && !ended && let Some(r) = response.take() {
                                drain_in_background(r, Arc::clone(&config.clock), config.idle_timeout_ms);
                            }
                            for item in emit {
                                yield item;
                            }
                            match next {
                                Next::Continue => {}
                                Next::Finished => break Attempt::Finished,
                                Next::Failed(e) => break Attempt::Failed(e),
                                Next::StalledEarly => break Attempt::StalledEarly,
                            }
                        }
                    }
                };
                match attempt {
                    Attempt::Finished => return,
                    Attempt::StalledEarly => {
                        tracing::warn!(endpoint = %inner.endpoint, "stream stalled before any content; falling back to a non-streaming request");
                        let mut fallback = request.clone();
                        fallback.stream = false;
                        let body = provider.build_body(&fallback);
                        let result = match inner.send(&body, false, &cancel).await {
                            Ok(response) => read_complete(&inner, response, &request.model, &cancel).await,
                            Err(e) => Err(e),
                        };
                        match result {
                            Ok(events) => for e in events { yield Ok(e); },
                            Err(e) => yield Err(e),
                        }
                        return;
                    }
                    Attempt::Failed(error) => {
                        if error.kind == ProviderErrorKind::Cancelled {
                            yield Err(error);
                            return;
                        }
                        match retry.decide(&config.retry, &error, config.background, config.jitter.as_ref()) {
                            Decision::GiveUp => { yield Err(error); return; }
                            Decision::WaitTooLong { wait_ms } => {
                                let now = config.clock.now_ms();
                                yield Err(wait_too_long(error, wait_ms, config.retry.max_wait_ms, now));
                                return;
                            }
                            Decision::Retry { delay_ms } => {
                                yield Ok(ProviderEvent::Retrying {
                                    attempt: retry.failures + 1,
                                    delay_ms,
                                    kind: error.kind,
                                    reason: error.message.clone(),
                                });
                                if or_cancel(&cancel, config.clock.sleep_ms(delay_ms)).await.is_none() {
                                    yield Err(cancelled());
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        };
        // The one way out: nothing leaves unredacted, and a refused key is
        // said to be one.
        Box::pin(stream.map(move |item| redactor.item(item).map_err(|e| refusal.explain(e))))
    }

    fn capabilities(&self, model: &str) -> ModelCapabilities {
        let mut caps = capabilities_for(model, &self.inner.config.model_overrides);
        // Chat Completions has no server-side tools to declare.
        if self.inner.config.kind == ProviderKind::OpenAiChat {
            caps.web_search = false;
        }
        caps
    }
}

/// What a person needs to hear about a refused key: which key (where it
/// came from, never its value).
struct Refusal {
    key_sent: bool,
    key_origin: Option<String>,
    key_env: &'static str,
}

impl Refusal {
    /// An `Auth` error (401/403) reworded to say the key was refused and
    /// where it came from, the server's words kept; others unchanged.
    fn explain(&self, mut error: ProviderError) -> ProviderError {
        if error.kind != ProviderErrorKind::Auth {
            return error;
        }
        let server = error.message.trim_end_matches(['.', ' ']);
        error.message = match (self.key_sent, &self.key_origin) {
            (true, Some(origin)) => {
                format!("the endpoint refused the API key from {origin} ({server})")
            }
            (true, None) => format!("the endpoint refused the API key ({server})"),
            (false, _) => format!(
                "the endpoint wants an API key and none was sent ({server}); set ${}",
                self.key_env
            ),
        };
        error
    }
}

/// Reads and decodes a non-streaming reply.
async fn read_complete(
    inner: &Inner,
    response: reqwest::Response,
    model: &str,
    cancel: &CancellationToken,
) -> Result<Vec<ProviderEvent>, ProviderError> {
    let read = inner
        .config
        .clock
        .timeout(FALLBACK_TIMEOUT_MS, response.bytes());
    let bytes = match or_cancel(cancel, read).await {
        None => return Err(cancelled()),
        Some(Err(_)) => return Err(stalled(FALLBACK_TIMEOUT_MS)),
        Some(Ok(Err(e))) => return Err(network(&e)),
        Some(Ok(Ok(b))) => b,
    };
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ProviderError::new(
            ProviderErrorKind::Malformed,
            format!("the reply is not JSON ({e})"),
        )
    })?;
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        return Err(classify_stream_error(error));
    }
    inner.decode_complete(&body, model)
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn is_json(response: &reqwest::Response) -> bool {
    content_type(response).starts_with("application/json")
}

/// Reads what is left of a finished reply (normally just the chunked
/// terminator) so keep-alive can reuse the connection; gives up after the
/// idle window.
fn drain_in_background(
    mut response: reqwest::Response,
    clock: Arc<dyn riot_protocol::Clock>,
    idle_ms: u64,
) {
    tokio::spawn(async move {
        let drain = async move { while let Ok(Some(_)) = response.chunk().await {} };
        let _ = clock.timeout(idle_ms, drain).await;
    });
}

async fn or_cancel<F: Future>(cancel: &CancellationToken, fut: F) -> Option<F::Output> {
    let fut = std::pin::pin!(fut);
    let cancelled = std::pin::pin!(cancel.cancelled());
    match select(fut, cancelled).await {
        Either::Left((out, _)) => Some(out),
        Either::Right(_) => None,
    }
}

fn network(e: &reqwest::Error) -> ProviderError {
    // Never include the request (headers hold the key); the URL is fine.
    let (kind, what) = if e.is_connect() {
        (ProviderErrorKind::Unreachable, "could not connect")
    } else if e.is_timeout() {
        (ProviderErrorKind::Network, "the connection timed out")
    } else {
        (ProviderErrorKind::Network, "the connection failed")
    };
    let mut err = ProviderError::new(kind, format!("{what}: {e}"));
    err.detail = Some(riot_protocol::provider::ErrorDetail(format!("{e:?}")));
    err
}
