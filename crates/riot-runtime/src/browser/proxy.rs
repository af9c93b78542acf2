//! The browser's only way out (docs/browser.md, "What the page loads"):
//! Chromium is told to send all its traffic, loopback included, through
//! this proxy on 127.0.0.1. Each connection is judged by
//! [`RequestGuard::connectable`] and opened to exactly the addresses that
//! were judged, so what the DevTools request guard cannot see (WebSocket
//! handshakes) is covered, and a name cannot resolve to a public address
//! for the check and a private one for the connection.
//!
//! Two request shapes arrive: `CONNECT host:port` (HTTPS and WebSockets,
//! tunnelled as bytes) and a plain-HTTP request in absolute form
//! (`GET http://host/path HTTP/1.1`), forwarded in origin form with
//! `Connection: close`, so one client connection carries one request and
//! never reaches a second host unjudged.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::cdp::Events;
use super::guard::RequestGuard;

/// The most a request head may take.
const MAX_HEAD: usize = 64 * 1024;

/// A running proxy; stopped, with every connection it carries, when
/// dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listens on a free loopback port.
    pub(crate) async fn start(
        guard: Arc<RequestGuard>,
        events: Arc<Mutex<Events>>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            // Owned here: aborting the accept loop drops every connection.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { return };
                        connections.spawn(carry(stream, Arc::clone(&guard), Arc::clone(&events)));
                    }
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Self { port, task })
    }
}

/// One client connection: read its head, judge, then carry the bytes.
async fn carry(mut client: TcpStream, guard: Arc<RequestGuard>, events: Arc<Mutex<Events>>) {
    let Some((head, rest)) = read_head(&mut client).await else {
        return;
    };
    let Some(request) = parse(&head) else {
        let _ = client
            .write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await;
        return;
    };
    let addresses = match guard.connectable(&request.host, request.port).await {
        Ok(addresses) => addresses,
        // Chromium's own background requests to names that do not
        // resolve (no network) would only be noise in the page's console.
        Err(refused) if refused.is_unresolved() => {
            let _ = client
                .write_all(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            return;
        }
        Err(why) => {
            let line = format!(
                "[blocked by Riot] a connection to {}:{}: {why}",
                request.host, request.port
            );
            Events::refused(&events, line);
            let _ = client
                .write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                )
                .await;
            return;
        }
    };
    let Ok(mut upstream) = TcpStream::connect(&addresses[..]).await else {
        let _ = client
            .write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await;
        return;
    };
    let sent = match &request.forward {
        None => client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await
            .is_ok(),
        Some(head) => upstream.write_all(head).await.is_ok(),
    };
    if !sent || upstream.write_all(&rest).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// The head (through the blank line) and whatever followed it.
async fn read_head(stream: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Some((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// What a client asked for: where to connect and, for plain HTTP, the
/// head to send there instead of the client's.
#[derive(Debug, PartialEq)]
struct Request {
    host: String,
    port: u16,
    forward: Option<Vec<u8>>,
}

fn parse(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target, version) = (first.next()?, first.next()?, first.next()?);
    if method == "CONNECT" {
        let (host, port) = target.rsplit_once(':')?;
        return Some(Request {
            host: host.to_owned(),
            port: port.parse().ok()?,
            forward: None,
        });
    }
    let url = url::Url::parse(target).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    let mut forward = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or("").trim();
        if name.eq_ignore_ascii_case("connection")
            || name.eq_ignore_ascii_case("proxy-connection")
            || name.eq_ignore_ascii_case("proxy-authorization")
            || name.eq_ignore_ascii_case("keep-alive")
        {
            continue;
        }
        forward.push_str(line);
        forward.push_str("\r\n");
    }
    forward.push_str("Connection: close\r\n\r\n");
    Some(Request {
        host: url.host_str()?.to_owned(),
        port: url.port_or_known_default()?,
        forward: Some(forward.into_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_form_requests_are_read_as_where_to_go() {
        assert_eq!(
            parse(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
            Some(Request {
                host: "example.com".into(),
                port: 443,
                forward: None
            })
        );
        assert_eq!(
            parse(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").map(|r| (r.host, r.port)),
            Some(("[::1]".into(), 8080))
        );
        let plain = parse(
            b"GET http://127.0.0.1:3000/a/b?c=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!((plain.host.as_str(), plain.port), ("127.0.0.1", 3000));
        assert_eq!(
            String::from_utf8(plain.forward.unwrap()).unwrap(),
            "GET /a/b?c=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(parse(b"GET /relative HTTP/1.1\r\n\r\n"), None);
        assert_eq!(parse(b"GET ftp://example.com/ HTTP/1.1\r\n\r\n"), None);
    }
}
