//! `riot serve`'s transport: ACP over a WebSocket on loopback
//! (ARCHITECTURE §2, INTERFACES `riot serve`). One JSON-RPC message per
//! text frame; each connection is served by the same agent as `riot acp`,
//! with the frames bridged to its line transport.
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
//! files are served without it from `--ui-dir`: they are public code, and
//! a foreign page cannot read them (no CORS headers).

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Lines;
use axum::Router;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{SinkExt, StreamExt};
use tokio::net::TcpListener;

use crate::agent::{AcpConfig, Shutdown, serve_on};

/// The page `GET /` shows when no `--ui-dir` is given: the web UI is not
/// embedded in the binary yet, and the page says so.
const PLACEHOLDER_PAGE: &str = "<!doctype html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Riot</title></head>
<body style=\"font-family: sans-serif; max-width: 40em; margin: 3em auto\">
<h1>Riot is running</h1>
<p>The web UI is not built into this binary yet. Start <code>riot serve --ui-dir DIR</code>
with a built web UI to use it here.</p>
<p>ACP clients can connect to the WebSocket at <code>/acp</code> with the same token.</p>
</body></html>
";

/// What every connection shares.
#[derive(Debug)]
struct Shared {
    config: AcpConfig,
    token: String,
    ui_dir: Option<PathBuf>,
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
    /// clients must present; `ui_dir` the built web UI, if any.
    pub async fn bind(
        host: &str,
        port: u16,
        config: AcpConfig,
        token: String,
        ui_dir: Option<PathBuf>,
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
                ui_dir,
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
        let served = axum::serve(self.listener, app)
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
    upgrade.on_upgrade(move |socket| tracked.track_future(connection(socket, config, stop)))
}

/// Runs one ACP agent over one WebSocket: each text frame is one incoming
/// message, each outgoing message one text frame.
async fn connection(socket: WebSocket, config: AcpConfig, stop: Shutdown) {
    tracing::info!("riot serve: an ACP client connected");
    let (sink, stream) = socket.split();
    let outgoing = sink
        .sink_map_err(io::Error::other)
        .with(|line: String| futures::future::ready(Ok(Message::Text(line.into()))));
    let incoming = futures::stream::unfold(stream, |mut stream| async move {
        loop {
            match stream.next().await? {
                Ok(Message::Text(text)) => return Some((Ok(text.as_str().to_owned()), stream)),
                Ok(Message::Close(_)) => return None,
                Ok(Message::Binary(_)) => {
                    tracing::warn!("riot serve: ignored a binary frame (ACP uses text frames)");
                }
                Ok(Message::Ping(_) | Message::Pong(_)) => {}
                Err(e) => {
                    tracing::info!(error = %e, "riot serve: the WebSocket failed");
                    return None;
                }
            }
        }
    });
    match serve_on(config, Lines::new(outgoing, incoming), stop).await {
        Ok(()) => tracing::info!("riot serve: an ACP client disconnected"),
        Err(e) => tracing::warn!(error = %e, "riot serve: an ACP connection failed"),
    }
}

/// A response that never caches and never sends the URL (it may carry the
/// token) as a referrer.
fn page(content_type: &'static str, body: Vec<u8>) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
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

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("wasm") => "application/wasm",
        Some("woff2") => "font/woff2",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn file(shared: &Shared, path: &Path) -> Response {
    match shared.config.fs.read(path).await {
        Ok(body) => page(content_type(path), body),
        Err(e) if e.kind() == io::ErrorKind::NotFound => StatusCode::NOT_FOUND.into_response(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "riot serve: cannot read a UI file");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// `GET /`: the web UI's page (from `--ui-dir`), or a page saying it is
/// not built yet; only with the token.
async fn index(State(shared): State<Arc<Shared>>, headers: HeaderMap, uri: Uri) -> Response {
    if !shared.authorized(&headers, &uri) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "open the address `riot serve` printed: it carries the token",
        );
    }
    match &shared.ui_dir {
        Some(dir) => file(&shared, &dir.join("index.html")).await,
        None => page(
            "text/html; charset=utf-8",
            PLACEHOLDER_PAGE.as_bytes().to_vec(),
        ),
    }
}

/// `GET /<path>`: a static file of `--ui-dir`; nothing outside it.
async fn asset(State(shared): State<Arc<Shared>>, UrlPath(path): UrlPath<String>) -> Response {
    let Some(dir) = &shared.ui_dir else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let relative = Path::new(&path);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return StatusCode::NOT_FOUND.into_response();
    }
    file(&shared, &dir.join(relative)).await
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
