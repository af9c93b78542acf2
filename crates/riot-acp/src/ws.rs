//! `riot serve`'s transport: ACP over a WebSocket on loopback
//! (docs/design.md §2, docs/interfaces.md `riot serve`). One JSON-RPC message per
//! text frame; each connection is served by the same agent as `riot acp`,
//! with the frames bridged to its line transport. A frame that is not an
//! ACP message (binary, not JSON) gets a short parse error and the
//! connection goes on; a text frame that is not UTF-8, or a message over
//! [`MAX_MESSAGE_BYTES`], gets one too, then the connection closes (1007,
//! 1009): the WebSocket library cannot read past either.
//!
//! A local web page must never be able to drive the agent, so a WebSocket
//! upgrade at `/acp` needs both
//! - the random token (`?token=` or `Authorization: Bearer`), compared in
//!   constant time — otherwise 401; and
//! - no `Origin` (a non-browser client), or exactly `http://<Host>` where
//!   `Host` is a loopback name (or the `--host` the server was bound to)
//!   with the server's port — otherwise 403. A page of another site, or a
//!   DNS-rebound name, fails that test.
//!
//! `GET /` (the web UI's page) also needs the token. The UI's other static
//! files ([`WebUi`]: `--ui-dir`, or the copy built into `riot`) are served
//! without it: they are public code, and a foreign page cannot read them
//! (no CORS headers). Files whose names carry a content hash (Vite's
//! `assets/name-HASH.ext`) may be cached for good; nothing else is cached.

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Lines;
use axum::Router;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::channel::{mpsc, oneshot};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;

use crate::agent::{AcpConfig, Shutdown, serve_on};
use crate::frames::{self, MAX_MESSAGE_BYTES, Refusal};

/// Where the web UI's files come from.
#[derive(Debug, Clone)]
pub enum WebUi {
    /// A directory of the built UI (`--ui-dir`), read at each request.
    Dir(PathBuf),
    /// The UI built into the binary: a file's contents by its path
    /// relative to the UI's root (`index.html`, `assets/index-HASH.js`).
    Embedded(fn(&str) -> Option<&'static [u8]>),
    /// No UI: `GET /` shows a page with this sentence (why, and what to do).
    Missing(String),
}

/// The page `GET /` shows when there is no web UI: `why` and what to do.
fn missing_page(why: &str) -> String {
    let why = why
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<!doctype html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Riot</title></head>
<body style=\"font-family: sans-serif; max-width: 40em; margin: 3em auto\">
<h1>Riot is running</h1>
<p>{why}.</p>
<p>ACP clients can connect to the WebSocket at <code>/acp</code> with the same token.</p>
</body></html>
"
    )
}

/// What every connection shares.
#[derive(Debug)]
struct Shared {
    config: AcpConfig,
    token: String,
    ui: WebUi,
    port: u16,
    /// Host names (lowercase, IPv6 in brackets) a browser may reach us at.
    host_names: Vec<String>,
    /// Stops the server and every connection (`_riot/shutdown` on any
    /// connection, or the caller's shutdown future).
    stop: Shutdown,
    /// The WebSocket connections, so stopping waits for their turns.
    connections: tokio_util::task::TaskTracker,
}

/// A bound, not yet running `riot serve` listener.
#[derive(Debug)]
pub struct WsServer {
    listener: TcpListener,
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl WsServer {
    /// Binds `host:port` (port 0: a free port). `token` is the secret
    /// clients must present; `ui` where the web UI's files come from.
    pub async fn bind(
        host: &str,
        port: u16,
        config: AcpConfig,
        token: String,
        ui: WebUi,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind((host, port)).await?;
        let addr = listener.local_addr()?;
        let mut host_names: Vec<String> = ["127.0.0.1", "localhost", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        // An explicit non-loopback `--host` is a name the operator chose to
        // be reached at; the wildcard addresses are not names anyone browses.
        let chosen = match host.parse::<IpAddr>() {
            Ok(ip) if ip.is_unspecified() => None,
            Ok(IpAddr::V6(ip)) => Some(format!("[{ip}]")),
            Ok(IpAddr::V4(ip)) => Some(ip.to_string()),
            Err(_) => Some(host.to_ascii_lowercase()),
        };
        if let Some(name) = chosen
            && !host_names.contains(&name)
        {
            host_names.push(name);
        }
        Ok(Self {
            listener,
            addr,
            shared: Arc::new(Shared {
                config,
                token,
                ui,
                port: addr.port(),
                host_names,
                stop: Shutdown::new(),
                connections: tokio_util::task::TaskTracker::new(),
            }),
        })
    }

    /// The address actually bound (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// What stops this server; triggered by a client's `_riot/shutdown`.
    pub fn shutdown(&self) -> Shutdown {
        self.shared.stop.clone()
    }

    /// Serves until `shutdown` resolves or a client asks `_riot/shutdown`,
    /// then stops accepting, lets the HTTP requests in flight finish, and
    /// winds down every ACP connection: running turns are cancelled and
    /// end, with their responses sent, before this returns.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let stop = self.shared.stop.clone();
        let connections = self.shared.connections.clone();
        let app = Router::new()
            .route("/acp", get(acp))
            .route("/", get(index))
            .route("/{*path}", get(asset))
            .with_state(self.shared);
        let stopping = stop.clone();
        // Events go out as small frames: without TCP_NODELAY one waits for
        // the browser's acknowledgement of the one before (up to 40 ms).
        let listener = axum::serve::ListenerExt::tap_io(self.listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("riot serve: TCP_NODELAY not set: {e}");
            }
        });
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                tokio::select! {
                    () = shutdown => {}
                    () = stopping.triggered() => {}
                }
                stopping.trigger();
            })
            .await;
        // Connections watch `stop`; an error above must stop them too.
        stop.trigger();
        connections.close();
        connections.wait().await;
        served
    }
}

/// Equal strings, in time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token of `?token=…`, if any.
fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// The token of `Authorization: Bearer …`, if any.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// `name:port` split; a missing port is HTTP's default, 80.
fn split_host(host: &str) -> Option<(String, u16)> {
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let (name, rest) = host.split_at(end + 1);
        match rest.strip_prefix(':') {
            Some(p) => (name, p),
            None if rest.is_empty() => (name, "80"),
            None => return None,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, p)) => (name, p),
            None => (host, "80"),
        }
    };
    Some((name.to_ascii_lowercase(), port.parse().ok()?))
}

impl Shared {
    fn authorized(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        let expected = self.token.as_bytes();
        // Both are checked, so the time does not tell which one was given.
        let by_query = query_token(uri).is_some_and(|t| constant_time_eq(t.as_bytes(), expected));
        let by_header =
            bearer_token(headers).is_some_and(|t| constant_time_eq(t.as_bytes(), expected));
        by_query | by_header
    }

    /// No `Origin`, or the server's own: `http://` and the `Host` header,
    /// which must be one of our names with our port.
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let (Ok(origin), Some(Ok(host))) = (
            origin.to_str(),
            headers.get(header::HOST).map(HeaderValue::to_str),
        ) else {
            return false;
        };
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        port == self.port
            && self.host_names.contains(&name)
            && origin.eq_ignore_ascii_case(&format!("http://{host}"))
    }
}

fn refuse(status: StatusCode, message: &'static str) -> Response {
    let mut response = (status, format!("{message}\n")).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// `GET /acp`: the WebSocket, for a client with the token and an
/// acceptable `Origin`. Refusals never upgrade.
async fn acp(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if !shared.authorized(&headers, &uri) {
        tracing::warn!("riot serve: refused a WebSocket without a valid token");
        return refuse(StatusCode::UNAUTHORIZED, "a valid token is required");
    }
    if !shared.origin_allowed(&headers) {
        tracing::warn!(
            origin = ?headers.get(header::ORIGIN),
            host = ?headers.get(header::HOST),
            "riot serve: refused a WebSocket from a foreign Origin"
        );
        return refuse(StatusCode::FORBIDDEN, "this Origin may not connect");
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let config = shared.config.clone();
    let stop = shared.stop.clone();
    let tracked = shared.connections.clone();
    upgrade
        .max_message_size(MAX_MESSAGE_BYTES)
        .max_frame_size(MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| tracked.track_future(connection(socket, config, stop)))
}

/// What a connection's writer sends on its WebSocket.
enum Outgoing {
    /// One JSON-RPC message, and where to say it was sent.
    Text(String, oneshot::Sender<io::Result<()>>),
    /// Reading failed in a way the client is told about: once everything
    /// else is sent, close with this frame instead of a plain close.
    CloseWith(CloseFrame),
}

/// Sends `line` through the writer; resolves once it is on the socket.
async fn send_text(writer: &mpsc::UnboundedSender<Outgoing>, line: String) -> io::Result<()> {
    let (done_tx, done_rx) = oneshot::channel();
    writer
        .unbounded_send(Outgoing::Text(line, done_tx))
        .map_err(|_| io::Error::other("the WebSocket writer stopped"))?;
    done_rx
        .await
        .map_err(|_| io::Error::other("the WebSocket writer stopped"))?
}

/// What one received frame means for the agent.
enum Received {
    /// A message for the SDK.
    Message(String),
    /// A parse error to answer; the connection goes on.
    Refused(String),
    /// A parse error to answer, then the connection closes with `code`
    /// (the WebSocket library cannot read past this error).
    Fatal(String, u16),
    /// Nothing for anyone (control frames).
    Skip,
    /// The client left, or the socket failed.
    End,
}

/// Sorts one read of the WebSocket: a text frame that is JSON is a message
/// and every other text or binary frame a short parse error
/// ([`frames`](crate::frames)); a text frame that is not UTF-8 or a message
/// over [`MAX_MESSAGE_BYTES`] is answered and ends the connection.
fn received(read: Option<Result<Message, axum::Error>>) -> Received {
    let message = match read {
        None | Some(Ok(Message::Close(_))) => return Received::End,
        Some(Ok(message)) => message,
        Some(Err(e)) => {
            let e = match e.into_inner().downcast::<tungstenite::Error>() {
                Ok(e) => *e,
                Err(e) => {
                    tracing::info!(error = %e, "riot serve: the WebSocket failed");
                    return Received::End;
                }
            };
            return match e {
                tungstenite::Error::Utf8(_) => Received::Fatal(
                    frames::parse_error(&Refusal::NotUtf8, None),
                    close_code::INVALID,
                ),
                tungstenite::Error::Capacity(
                    tungstenite::error::CapacityError::MessageTooLong { size, .. },
                ) => Received::Fatal(
                    frames::parse_error(&Refusal::TooLong, Some((&[], size))),
                    close_code::SIZE,
                ),
                e => {
                    tracing::info!(error = %e, "riot serve: the WebSocket failed");
                    Received::End
                }
            };
        }
    };
    match message {
        Message::Text(text) => match frames::screen_text(text.as_str().to_owned()) {
            Ok(line) => Received::Message(line),
            Err(refused) => Received::Refused(refused.response()),
        },
        Message::Binary(bytes) => Received::Refused(frames::parse_error(
            &Refusal::Binary,
            Some((&bytes, bytes.len())),
        )),
        Message::Ping(_) | Message::Pong(_) | Message::Close(_) => Received::Skip,
    }
}

/// Runs one ACP agent over one WebSocket: each text frame is one incoming
/// message, each outgoing message one text frame. One writer owns the
/// socket's sending half and sends both the agent's messages and the
/// refusals answered here; it closes the socket once the agent is done.
async fn connection(socket: WebSocket, config: AcpConfig, stop: Shutdown) {
    tracing::info!("riot serve: an ACP client connected");
    let (mut sink, stream) = socket.split();
    let (writer, mut to_write) = mpsc::unbounded::<Outgoing>();
    let outgoing = futures::sink::unfold(writer.clone(), async |writer, line: String| {
        send_text(&writer, line).await?;
        Ok::<_, io::Error>(writer)
    });
    let incoming = futures::stream::unfold((stream, writer), |(mut stream, writer)| async move {
        loop {
            match received(stream.next().await) {
                Received::Message(line) => return Some((Ok(line), (stream, writer))),
                Received::Refused(answer) => {
                    // Answered before the next frame is read.
                    send_text(&writer, answer).await.ok()?;
                }
                Received::Fatal(answer, code) => {
                    let _ = send_text(&writer, answer).await;
                    let _ = writer.unbounded_send(Outgoing::CloseWith(CloseFrame {
                        code,
                        reason: "refused an unreadable message".into(),
                    }));
                    return None;
                }
                Received::Skip => {}
                Received::End => return None,
            }
        }
    });
    let (served_tx, mut served_rx) = oneshot::channel::<()>();
    let serving = async move {
        let served = serve_on(config, Lines::new(outgoing, incoming), stop).await;
        let _ = served_tx.send(());
        served
    };
    let writing = async move {
        let mut close_with = None;
        let mut serving = true;
        loop {
            let next = if serving {
                tokio::select! {
                    next = to_write.next() => next,
                    _ = &mut served_rx => {
                        // Whatever is queued still goes out; nothing more comes.
                        serving = false;
                        to_write.close();
                        continue;
                    }
                }
            } else {
                to_write.next().await
            };
            match next {
                None => break,
                Some(Outgoing::Text(line, done)) => {
                    let sent = sink
                        .send(Message::Text(line.into()))
                        .await
                        .map_err(io::Error::other);
                    let _ = done.send(sent);
                }
                Some(Outgoing::CloseWith(frame)) => close_with = Some(frame),
            }
        }
        let closed = match close_with {
            Some(frame) => sink.send(Message::Close(Some(frame))).await,
            None => sink.close().await,
        };
        if let Err(e) = closed {
            tracing::debug!(error = %e, "riot serve: closing the WebSocket failed");
        }
    };
    match tokio::join!(serving, writing).0 {
        Ok(()) => tracing::info!("riot serve: an ACP client disconnected"),
        Err(e) => tracing::warn!(error = %e, "riot serve: an ACP connection failed"),
    }
}

/// A response that never sends the URL (it may carry the token) as a
/// referrer, cached for good when `immutable`, else never.
fn page(content_type: &'static str, body: impl IntoResponse, immutable: bool) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-store"
        }),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn content_type(path: &str) -> &'static str {
    match Path::new(path).extension().and_then(|e| e.to_str()) {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ico") => "image/x-icon",
        Some("wasm") => "application/wasm",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("ttf") => "font/ttf",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether `path` is a file Vite names by its content (`assets/`, then
/// `name-HASH.ext` with Vite's 8-character URL-safe hash): a build that
/// changes it gives it a new name, so it may be cached for good.
fn content_addressed(path: &str) -> bool {
    let Some(name) = path.strip_prefix("assets/") else {
        return false;
    };
    let Some((stem, _extension)) = name.rsplit_once('.') else {
        return false;
    };
    let hashed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    // The hash may itself hold `-`: the last 8 characters, after a `-`.
    let chars: Vec<char> = stem.chars().collect();
    chars.len() > 9
        && chars[chars.len() - 9] == '-'
        && chars[chars.len() - 8..].iter().all(|&c| hashed(c))
        && !name.contains('/')
}

/// The UI file at `relative` (already checked to stay inside the UI).
async fn file(shared: &Shared, relative: &str) -> Response {
    let immutable = content_addressed(relative);
    match &shared.ui {
        WebUi::Dir(dir) => {
            let path = dir.join(relative);
            match shared.config.fs.read(&path).await {
                Ok(body) => page(content_type(relative), body, immutable),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    StatusCode::NOT_FOUND.into_response()
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "riot serve: cannot read a UI file");
                    StatusCode::INTERNAL_SERVER_ERROR.into_response()
                }
            }
        }
        WebUi::Embedded(get) => match get(relative) {
            Some(body) => page(content_type(relative), body, immutable),
            None => StatusCode::NOT_FOUND.into_response(),
        },
        WebUi::Missing(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET /`: the web UI's page, or a page saying why there is none; only
/// with the token.
async fn index(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    if !shared.authorized(&headers, &uri) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "open the address `riot serve` printed: it carries the token",
        );
    }
    match &shared.ui {
        WebUi::Missing(why) => page("text/html; charset=utf-8", missing_page(why), false),
        _ => file(&shared, "index.html").await,
    }
}

/// `GET /<path>`: a static file of the web UI; nothing outside it.
async fn asset(State(shared): State<Arc<Shared>>, UrlPath(path): UrlPath<String>) -> Response {
    let mut parts = Vec::new();
    for component in Path::new(&path).components() {
        match component {
            Component::Normal(part) => match part.to_str() {
                Some(part) => parts.push(part),
                None => return StatusCode::NOT_FOUND.into_response(),
            },
            _ => return StatusCode::NOT_FOUND.into_response(),
        }
    }
    if parts.is_empty() {
        return StatusCode::NOT_FOUND.into_response();
    }
    file(&shared, &parts.join("/")).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_into_name_and_port() {
        assert_eq!(
            split_host("127.0.0.1:8080"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(split_host("LocalHost:1"), Some(("localhost".into(), 1)));
        assert_eq!(split_host("[::1]:9"), Some(("[::1]".into(), 9)));
        assert_eq!(split_host("[::1]"), Some(("[::1]".into(), 80)));
        assert_eq!(split_host("example.com"), Some(("example.com".into(), 80)));
        assert_eq!(split_host("[::1]x"), None);
        assert_eq!(split_host("a:b"), None);
    }

    #[test]
    fn frames_are_sorted_into_messages_refusals_and_failures() {
        let text = |t: &str| Some(Ok(Message::Text(t.into())));
        assert!(matches!(received(text("{}")), Received::Message(m) if m == "{}"));
        assert!(
            matches!(received(text("{")), Received::Refused(a) if a.contains("not valid JSON"))
        );
        let binary = Some(Ok(Message::Binary(b"{}".to_vec().into())));
        assert!(matches!(received(binary), Received::Refused(a) if a.contains("binary frame")));
        assert!(matches!(
            received(Some(Ok(Message::Ping(Vec::new().into())))),
            Received::Skip
        ));
        assert!(matches!(received(None), Received::End));
        assert!(matches!(
            received(Some(Ok(Message::Close(None)))),
            Received::End
        ));

        let failed = |e: tungstenite::Error| received(Some(Err(axum::Error::new(e))));
        assert!(matches!(
            failed(tungstenite::Error::Utf8("bad".into())),
            Received::Fatal(a, close_code::INVALID) if a.contains("not valid UTF-8")
        ));
        let too_long = tungstenite::error::CapacityError::MessageTooLong {
            size: 9_000_000,
            max_size: MAX_MESSAGE_BYTES,
        };
        assert!(matches!(
            failed(tungstenite::Error::Capacity(too_long)),
            Received::Fatal(a, close_code::SIZE) if a.contains("9000000 bytes")
        ));
        assert!(matches!(
            failed(tungstenite::Error::ConnectionClosed),
            Received::End
        ));
    }

    #[test]
    fn only_vite_hashed_assets_are_cached_for_good() {
        assert!(content_addressed("assets/index-ePMtfjLJ.js"));
        assert!(content_addressed("assets/index-BLR3KUo5.css"));
        assert!(content_addressed("assets/index-eP-_fjLJ.js"));
        assert!(content_addressed("assets/Inter-roman-a1B2c3D4.woff2"));
        assert!(!content_addressed("index.html"));
        assert!(!content_addressed("favicon-ePMtfjLJ.ico"));
        assert!(!content_addressed("assets/index.js"));
        assert!(!content_addressed("assets/index-short.js"));
        assert!(!content_addressed("assets/index-ePMtfjLJ"));
        assert!(!content_addressed("assets/index-ePMt.jLJ.js"));
        assert!(!content_addressed("assets/deep/index-ePMtfjLJ.js"));
        assert!(!content_addressed("assets/index-ePMtfjLJ.js.map"));
    }

    #[test]
    fn the_missing_page_escapes_its_reason() {
        let page = missing_page("run `npm ci` <now> & then");
        assert!(
            page.contains("<p>run `npm ci` &lt;now&gt; &amp; then.</p>"),
            "{page}"
        );
    }

    #[test]
    fn tokens_compare_by_content() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        let uri: Uri = "/acp?x=1&token=t0k".parse().unwrap();
        assert_eq!(query_token(&uri), Some("t0k"));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  t0k"),
        );
        assert_eq!(bearer_token(&headers), Some("t0k"));
    }
}
