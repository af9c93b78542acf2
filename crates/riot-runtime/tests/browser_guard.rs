#![allow(clippy::disallowed_methods)] // a loopback server and a real Chromium
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // test code; a skip is printed

//! What a page loads on its own is judged too (docs/browser.md): a page on
//! an approved loopback host cannot reach another private host or a
//! cloud-metadata address through a fetch, a frame, an image, a worker, a
//! pop-up or a redirect,
//! and the model is told what was refused. Skipped, with the reason
//! printed, only when no Chromium is installed.

use std::sync::{Arc, Mutex};

use riot_protocol::{Browser, BrowserAction, BrowserError, BrowserTarget};
use riot_runtime::{ChromiumBrowser, find_chromium};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback server that records every request's path; stopped on drop.
struct Server {
    port: u16,
    paths: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    fn hit(&self, path: &str) -> bool {
        self.paths.lock().unwrap().iter().any(|p| p == path)
    }
}

fn page(port: u16) -> String {
    format!(
        r#"<!doctype html><html><head><title>Guarded</title></head><body>
<h1>Guarded page</h1>
<img src="http://169.254.169.254/latest/meta-data/pixel.png">
<iframe src="http://localhost:{port}/frame"></iframe>
<button onclick="window.open('http://localhost:{port}/popup')">Open</button>
<script>fetch('http://localhost:{port}/secret').catch(function () {{}});
new Worker(URL.createObjectURL(new Blob(["fetch('http://localhost:{port}/worker').catch(function () {{}})"])));
try {{ new WebSocket('ws://localhost:{port}/socket'); }} catch (e) {{}}</script>
</body></html>"#
    )
}

async fn serve() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let paths: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&paths);
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&got).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                seen.lock().unwrap().push(path.clone());
                let (status, extra, body) = match path.as_str() {
                    "/" => ("200 OK", String::new(), page(port)),
                    "/to-metadata" => (
                        "302 Found",
                        "Location: http://169.254.169.254/latest/meta-data/\r\n".to_owned(),
                        String::new(),
                    ),
                    "/to-localhost" => (
                        "302 Found",
                        format!("Location: http://localhost:{port}/secret\r\n"),
                        String::new(),
                    ),
                    _ => ("404 Not Found", String::new(), "no".to_owned()),
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\n{extra}Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    Server { port, paths, task }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_a_page_makes_on_its_own_are_judged_like_the_url() {
    let Some(executable) = find_chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Chromium found; CI installs chromium and must run the browser tests"
        );
        eprintln!("SKIPPED: no Chromium on this system (install the chromium package)");
        return;
    };
    let server = serve().await;
    let base = format!("http://127.0.0.1:{}", server.port);
    let browser = ChromiumBrowser::new(executable, true);

    // The approved host loads; what the page itself asks of another
    // private host or of the metadata address does not leave the browser.
    let page = browser
        .act(BrowserAction::Navigate {
            url: format!("{base}/"),
        })
        .await
        .unwrap();
    assert_eq!(page.title, "Guarded");
    assert!(
        page.text.contains("heading \"Guarded page\""),
        "{}",
        page.text
    );
    let port = server.port;
    // The fetch may still be in flight when the load completes: the
    // console collects every refusal, so ask until both are there.
    let mut seen = page.text.clone();
    for _ in 0..100 {
        if seen.contains(&format!("http://localhost:{port}/secret"))
            && seen.contains(&format!("http://localhost:{port}/frame"))
            && seen.contains(&format!("http://localhost:{port}/worker"))
            && seen.contains(&format!("a connection to localhost:{port}"))
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        seen.push_str(&browser.act(BrowserAction::Console).await.unwrap().text);
    }
    assert!(
        seen.contains(&format!(
            "[blocked by Riot] http://localhost:{port}/secret: localhost ("
        )),
        "{seen}"
    );
    assert!(
        seen.contains("and the model did not navigate to it"),
        "{seen}"
    );
    assert!(
        seen.contains(&format!("[blocked by Riot] http://localhost:{port}/frame")),
        "{seen}"
    );
    // A worker is a target of its own, made to pause its requests too.
    assert!(
        seen.contains(&format!("[blocked by Riot] http://localhost:{port}/worker")),
        "{seen}"
    );
    assert!(
        seen.contains("[blocked by Riot] http://169.254.169.254/latest/meta-data/pixel.png: 169.254.169.254 (169.254.169.254) is a link-local or cloud-metadata address, which is never loaded"),
        "{seen}"
    );
    assert!(!server.hit("/secret"), "the page reached another host");
    assert!(!server.hit("/worker"), "a worker reached another host");
    // A WebSocket's handshake is not paused by DevTools; the proxy judges
    // its connection.
    assert!(
        seen.contains(&format!(
            "[blocked by Riot] a connection to localhost:{port}: localhost ("
        )),
        "{seen}"
    );
    assert!(!server.hit("/socket"), "a WebSocket reached another host");
    assert!(!server.hit("/frame"), "the frame reached another host");

    // A pop-up is a page of its own, and judged the same way.
    let line = page
        .text
        .lines()
        .find(|l| l.contains("button \"Open\""))
        .unwrap_or_else(|| panic!("no Open button in:\n{}", page.text));
    let start = line.find("[ref=").unwrap() + 5;
    let open = line[start..line.len() - 1].to_owned();
    browser
        .act(BrowserAction::Click {
            target: BrowserTarget::Ref(open),
        })
        .await
        .unwrap();
    let mut popup = String::new();
    for _ in 0..100 {
        popup.push_str(&browser.act(BrowserAction::Console).await.unwrap().text);
        if popup.contains(&format!("[blocked by Riot] http://localhost:{port}/popup")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        popup.contains(&format!("[blocked by Riot] http://localhost:{port}/popup")),
        "{popup}"
    );
    assert!(!server.hit("/popup"), "the pop-up reached another host");

    // A redirect is a new request, judged the same way.
    let Err(BrowserError::Failed(why)) = browser
        .act(BrowserAction::Navigate {
            url: format!("{base}/to-metadata"),
        })
        .await
    else {
        panic!("a redirect to the metadata address loaded");
    };
    assert!(
        why.contains("[blocked by Riot] http://169.254.169.254/latest/meta-data/: 169.254.169.254 (169.254.169.254) is a link-local or cloud-metadata address"),
        "{why}"
    );
    let Err(BrowserError::Failed(why)) = browser
        .act(BrowserAction::Navigate {
            url: format!("{base}/to-localhost"),
        })
        .await
    else {
        panic!("a redirect to another private host loaded");
    };
    assert!(
        why.contains(&format!("[blocked by Riot] http://localhost:{port}/secret")),
        "{why}"
    );
    assert!(server.hit("/to-localhost"));
    assert!(!server.hit("/secret"), "the redirect reached another host");
    browser.close().await;
}
