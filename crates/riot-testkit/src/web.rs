//! A scripted HTTP/1.1 server on loopback for web tests: pages, redirects,
//! a large body, a server that stalls, and search APIs' JSON. Raw on a
//! `TcpListener` so a test controls every byte; it records each request.
//! Dropping it stops the server and every connection.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// What a path answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A response with a body.
    Page {
        status: u16,
        content_type: Option<String>,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `bytes` bytes of `x` (a page larger than any limit).
    Large { content_type: String, bytes: usize },
    /// The status line and headers, then nothing, for ever.
    Stall,
}

impl Reply {
    /// 200 with `content_type`.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Page {
            status: 200,
            content_type: Some(content_type.to_owned()),
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A 301 to `location`.
    pub fn redirect(location: &str) -> Self {
        Reply::Page {
            status: 301,
            content_type: None,
            headers: vec![("Location".into(), location.to_owned())],
            body: Vec::new(),
        }
    }
}

/// One request the server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The request target: path and query.
    pub target: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Hit {
    /// A header's value by lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The running server.
#[derive(Debug)]
pub struct WebStandIn {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: JoinHandle<()>,
}

impl WebStandIn {
    /// Serves `routes` (matched on the path without the query; anything
    /// else is a 404) on 127.0.0.1 at a free port.
    pub async fn start(routes: Vec<(&str, Reply)>) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let hits = Arc::new(Mutex::new(Vec::new()));
        let routes: Arc<Vec<(String, Reply)>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.to_owned(), r)).collect());
        let seen = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            // Dropped with the task: every connection stops with it.
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, Arc::clone(&routes), Arc::clone(&seen)));
            }
        });
        Ok(Self { addr, hits, task })
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The requests so far, in order.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for WebStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    routes: Arc<Vec<(String, Reply)>>,
    hits: Arc<Mutex<Vec<Hit>>>,
) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let target = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_owned();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    hits.lock().unwrap_or_else(|e| e.into_inner()).push(Hit {
        target: target.clone(),
        headers,
    });
    let path = target.split('?').next().unwrap_or("/");
    let reply = routes
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, r)| r.clone())
        .unwrap_or(Reply::Page {
            status: 404,
            content_type: Some("text/plain".into()),
            headers: Vec::new(),
            body: b"not found".to_vec(),
        });
    let _ = write_reply(&mut stream, reply).await;
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Page {
            status,
            content_type,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} Stand-in\r\nConnection: close\r\n");
            if let Some(ct) = content_type {
                head.push_str(&format!("Content-Type: {ct}\r\n"));
            }
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(&body).await?;
        }
        Reply::Large {
            content_type,
            bytes,
        } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: {content_type}\r\nContent-Length: {bytes}\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            let chunk = vec![b'x'; 64 * 1024];
            let mut left = bytes;
            while left > 0 {
                let n = left.min(chunk.len());
                stream.write_all(&chunk[..n]).await?;
                left -= n;
            }
        }
        Reply::Stall => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n<html>")
                .await?;
            std::future::pending::<()>().await;
        }
    }
    stream.flush().await
}
