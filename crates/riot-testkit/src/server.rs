//! The in-process mock model server (axum on loopback, port 0).

#![allow(clippy::disallowed_methods)] // test support: a real pause before a scripted cut

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::script::{Reply, RoleRule, Script, Wire, frame, generated_events, generated_json};
use crate::validate::{check_alternation, check_window, error_body, validate};

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` if it was not JSON).
    pub body: Value,
    /// The status the server answered with.
    pub status: u16,
    /// The index of the script's `when` rule that answered it, or `None`
    /// when a scripted reply (or a rejection) did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
    /// The client's address: the same value means the same connection
    /// (keep-alive reuse).
    pub peer: SocketAddr,
}

impl RecordedRequest {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug)]
struct Shared {
    script: Script,
    replies: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    /// Model listings asked for, kept apart from the model requests.
    listings: Vec<RecordedRequest>,
    /// Every request body (as JSON text) as it arrived, before any answer:
    /// what a held rule ([`crate::When::hold_until`]) waits to see.
    arrived: Vec<String>,
}

#[derive(Debug, Clone)]
struct AppState {
    shared: Arc<Mutex<Shared>>,
    shutdown: watch::Receiver<bool>,
    /// Bumped on every arrival, waking held requests to look again.
    arrivals: Arc<watch::Sender<u64>>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A test that panicked while holding the lock still lets others read.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running mock server. Call [`MockServer::shutdown`] at the end of a
/// test (dropping it also stops it, without waiting).
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    wire: Wire,
    shared: Arc<Mutex<Shared>>,
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server for `script` on `127.0.0.1:port` (0 = any free port).
    pub async fn start_on(script: Script, port: u16) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let wire = script.wire;
        let shared = Arc::new(Mutex::new(Shared {
            replies: script.replies.iter().cloned().collect(),
            script,
            requests: Vec::new(),
            listings: Vec::new(),
            arrived: Vec::new(),
        }));
        let (stop, shutdown) = watch::channel(false);
        let state = AppState {
            shared: Arc::clone(&shared),
            shutdown: shutdown.clone(),
            arrivals: Arc::new(watch::channel(0).0),
        };
        let app = Router::new().fallback(handle).with_state(state);
        let mut signal = shutdown;
        let task = tokio::spawn(async move {
            let app = app.into_make_service_with_connect_info::<SocketAddr>();
            // A stream's events are small writes: without TCP_NODELAY each
            // waits for the client's acknowledgement of the one before,
            // and every turn took 40 ms more than a provider's would.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = signal.wait_for(|stopped| *stopped).await;
            });
            let _ = serve.await;
        });
        Ok(Self {
            addr,
            wire,
            shared,
            stop,
            task: Some(task),
        })
    }

    /// Starts a server on any free loopback port.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        Self::start_on(script, 0).await
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The base URL to configure a provider with (docs/interfaces.md: Anthropic's
    /// base has no `/v1`, OpenAI-style bases do).
    pub fn base_url(&self) -> String {
        match self.wire {
            Wire::Anthropic => format!("http://{}", self.addr),
            Wire::Openai | Wire::OpenaiResponses => format!("http://{}/v1", self.addr),
        }
    }

    /// Every request answered so far, in the order they were answered:
    /// arrival order, but for a request a held rule kept waiting.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// How many requests (all but model listings) have arrived, answered
    /// or still held.
    pub fn arrivals(&self) -> usize {
        lock(&self.shared).arrived.len()
    }

    /// The model listings (`GET` of the models path) received so far.
    pub fn model_listings(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).listings.clone()
    }

    /// Appends replies to the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared).replies.push_back(reply);
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.shared).replies.len()
    }

    /// Stops the server: stalled replies end, connections close, and the
    /// call returns when the server task has finished.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// `GET` here returns every recorded request as a JSON array (for tests
/// in other languages driving `riot-mock-model`).
pub const REQUESTS_PATH: &str = "/_mock/requests";

fn expected_path(wire: Wire, path: &str) -> bool {
    match wire {
        Wire::Anthropic => path == "/v1/messages",
        Wire::Openai => path == "/v1/chat/completions" || path == "/chat/completions",
        Wire::OpenaiResponses => path == "/v1/responses" || path == "/responses",
    }
}

fn models_path(wire: Wire, path: &str) -> bool {
    match wire {
        Wire::Anthropic => path == "/v1/models",
        Wire::Openai | Wire::OpenaiResponses => path == "/v1/models" || path == "/models",
    }
}

/// The answer to a model listing, as each API shapes it; Anthropic's
/// needs its version header, as its other requests do.
fn listing(script: &Script, headers: &[(String, String)]) -> (u16, Value) {
    let Some(models) = &script.models else {
        return (
            404,
            json!({"error": {"message": "no route: this mock lists no models"}}),
        );
    };
    match script.wire {
        Wire::Anthropic => {
            if !headers.iter().any(|(k, _)| k == "anthropic-version") {
                return (
                    400,
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version: header is required"}}),
                );
            }
            let data: Vec<Value> = models
                .iter()
                .map(|id| {
                    json!({"type": "model", "id": id, "display_name": display_name(id), "created_at": "2025-01-01T00:00:00Z"})
                })
                .collect();
            (
                200,
                json!({"data": data, "has_more": false, "first_id": models.first(), "last_id": models.last()}),
            )
        }
        Wire::Openai | Wire::OpenaiResponses => {
            let data: Vec<Value> = models
                .iter()
                .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "mock"}))
                .collect();
            (200, json!({"object": "list", "data": data}))
        }
    }
}

/// `claude-opus-4-1` → `Claude Opus 4 1`: a name for people, as the real
/// listing has one.
fn display_name(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn json_response(status: u16, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

async fn handle(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let path = uri.path().to_owned();
    if method == Method::GET && path == REQUESTS_PATH {
        let requests = lock(&state.shared).requests.clone();
        return json_response(200, &json!(requests));
    }
    if method == Method::GET && models_path(lock(&state.shared).script.wire, &path) {
        let mut shared = lock(&state.shared);
        let (status, answer) = listing(&shared.script, &headers);
        shared.listings.push(RecordedRequest {
            method: method.to_string(),
            path,
            headers,
            body: Value::Null,
            status,
            rule: None,
            peer,
        });
        return json_response(status, &answer);
    }
    hold(&state, &parsed).await;
    {
        let mut shared = lock(&state.shared);
        let script = shared.script.clone();
        let (response, status, rule) = respond(
            &mut shared.replies,
            &script,
            Incoming {
                method: &method,
                path: &path,
                headers: &headers,
                body: &parsed,
                body_bytes: body.len(),
            },
            &state.shutdown,
        );
        shared.requests.push(RecordedRequest {
            method: method.to_string(),
            path,
            headers,
            body: parsed,
            status,
            rule,
            peer,
        });
        response
    }
}

/// Notes the request's arrival, then, when the rule that will answer it is
/// held, waits until a request it waits for has arrived (or the server
/// stops).
async fn hold(state: &AppState, body: &Value) {
    let until = {
        let mut shared = lock(&state.shared);
        shared.arrived.push(body.to_string());
        let wire = shared.script.wire;
        shared
            .script
            .when
            .iter()
            .find(|w| w.matches(wire, body))
            .and_then(|w| w.hold_until.clone())
    };
    state.arrivals.send_modify(|n| *n += 1);
    let Some(until) = until else { return };
    let mut arrivals = state.arrivals.subscribe();
    let mut shutdown = state.shutdown.clone();
    let seen = |_: &u64| {
        lock(&state.shared)
            .arrived
            .iter()
            .any(|b| b.contains(until.as_str()))
    };
    tokio::select! {
        _ = arrivals.wait_for(seen) => {}
        _ = shutdown.wait_for(|stopped| *stopped) => {}
    }
}

/// What arrived.
struct Incoming<'a> {
    method: &'a Method,
    path: &'a str,
    headers: &'a [(String, String)],
    body: &'a Value,
    body_bytes: usize,
}

/// The answer, its status, and the `when` rule that gave it.
fn respond(
    replies: &mut VecDeque<Reply>,
    script: &Script,
    incoming: Incoming<'_>,
    shutdown: &watch::Receiver<bool>,
) -> (Response, u16, Option<usize>) {
    let Incoming {
        method,
        path,
        headers,
        body,
        body_bytes,
    } = incoming;
    let wire = script.wire;
    if method != Method::POST || !expected_path(wire, path) {
        let body = error_body(
            wire,
            &format!("mock model server: no route for {method} {path}"),
        );
        return (json_response(404, &body), 404, None);
    }
    if body.is_null() {
        let body = error_body(
            wire,
            "There was an error parsing the body of your request: not JSON",
        );
        return (json_response(400, &body), 400, None);
    }
    if wire == Wire::Anthropic && !headers.iter().any(|(k, _)| k == "anthropic-version") {
        let body = error_body(wire, "anthropic-version: header is required");
        return (json_response(400, &body), 400, None);
    }
    let alternation = match script.roles {
        RoleRule::Merge => Ok(()),
        RoleRule::Alternate => check_alternation(wire, body),
    };
    let window = match script.context_window {
        Some(tokens) => check_window(wire, body, body_bytes, tokens),
        None => Ok(()),
    };
    if let Err(rejection) = validate(wire, script.reasoning, body)
        .and(alternation)
        .and(window)
    {
        return (
            json_response(rejection.status, &rejection.body),
            rejection.status,
            None,
        );
    }
    // A `when` rule answers out of turn and leaves the script where it is.
    let rule = script.when.iter().position(|w| w.matches(wire, body));
    let reply = match rule {
        Some(i) => script.when[i].reply.clone(),
        None => {
            let Some(reply) = replies.pop_front() else {
                // Running out of script is a test bug: answer with a
                // non-retryable error so it is surfaced, never retried
                // (docs/testing.md L4).
                let body = error_body(
                    wire,
                    "mock model server: the script has no reply left for this request",
                );
                return (json_response(400, &body), 400, None);
            };
            reply
        }
    };
    let (response, status) = reply_response(script, reply, body, body_bytes, shutdown);
    (response, status, rule)
}

/// A reply as bytes on the wire.
fn reply_response(
    script: &Script,
    reply: Reply,
    body: &Value,
    body_bytes: usize,
    shutdown: &watch::Receiver<bool>,
) -> (Response, u16) {
    let wire = script.wire;
    let input_tokens = script.usage.input_tokens(body_bytes);
    let streaming = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = script.model.as_str();
    let chunk = script.chunk_size.max(1);
    match reply {
        Reply::Text(text) if streaming => (
            sse(
                frame(
                    wire,
                    &generated_events(wire, model, &text, None, input_tokens),
                ),
                chunk,
                End::Finish,
                shutdown,
            ),
            200,
        ),
        Reply::Text(text) => (
            json_response(200, &generated_json(wire, model, &text, None, input_tokens)),
            200,
        ),
        Reply::ToolCall {
            id,
            name,
            arguments,
            text,
        } => {
            let call = Some((id.as_str(), name.as_str(), arguments.as_str()));
            if streaming {
                (
                    sse(
                        frame(
                            wire,
                            &generated_events(wire, model, &text, call, input_tokens),
                        ),
                        chunk,
                        End::Finish,
                        shutdown,
                    ),
                    200,
                )
            } else {
                (
                    json_response(200, &generated_json(wire, model, &text, call, input_tokens)),
                    200,
                )
            }
        }
        Reply::Events(events) => (sse(frame(wire, &events), chunk, End::Finish, shutdown), 200),
        Reply::Sse(raw) => (sse(raw, chunk, End::Finish, shutdown), 200),
        Reply::Json(value) => (json_response(200, &value), 200),
        Reply::Error {
            status,
            body,
            headers,
        } => {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            for (k, v) in headers {
                if let (Ok(k), Ok(v)) = (
                    axum::http::HeaderName::from_bytes(k.as_bytes()),
                    axum::http::HeaderValue::from_str(&v),
                ) {
                    response.headers_mut().insert(k, v);
                }
            }
            (response, status)
        }
        Reply::Stall(prefix) => (sse(prefix, chunk, End::Stall, shutdown), 200),
        Reply::Cut(prefix) => (sse(prefix, chunk, End::Cut, shutdown), 200),
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Finish,
    Stall,
    Cut,
}

/// An SSE response written `chunk` bytes at a time (each chunk its own
/// write, so multi-byte characters really are split on the wire).
fn sse(body: String, chunk: usize, end: End, shutdown: &watch::Receiver<bool>) -> Response {
    let bytes = Bytes::from(body.into_bytes());
    let shutdown = shutdown.clone();
    let stream = futures::stream::unfold((0usize, false), move |(at, finished)| {
        let bytes = bytes.clone();
        let mut shutdown_rx = shutdown.clone();
        async move {
            if finished {
                return None;
            }
            if at < bytes.len() {
                let next = (at + chunk).min(bytes.len());
                tokio::task::yield_now().await;
                return Some((
                    Ok::<Bytes, std::io::Error>(bytes.slice(at..next)),
                    (next, false),
                ));
            }
            match end {
                End::Finish => None,
                End::Cut => {
                    // Let what was sent reach the socket before the cut;
                    // hyper drops unflushed bytes when a body fails.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    Some((
                        Err(std::io::Error::other("mock: connection cut mid-stream")),
                        (at, true),
                    ))
                }
                End::Stall => {
                    let _ = shutdown_rx.wait_for(|stopped| *stopped).await;
                    Some((
                        Err(std::io::Error::other(
                            "mock: server shut down during a stall",
                        )),
                        (at, true),
                    ))
                }
            }
        }
    });
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("text/event-stream"),
    );
    response
}
