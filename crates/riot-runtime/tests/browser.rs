#![allow(clippy::disallowed_methods)] // reads /proc to check the browser's processes are gone
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // test code; a skip is printed

//! The Browser capability against Debian's Chromium and a page this test
//! serves on loopback. Skipped, with the reason printed, only when no
//! Chromium is installed.

use std::sync::Arc;

use riot_protocol::{Browser, BrowserAction, BrowserTarget};
use riot_runtime::{ChromiumBrowser, find_chromium};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGE: &str = r#"<!doctype html><html><head><title>Demo page</title></head><body>
<h1>Hello from the test</h1>
<p id="out">Waiting</p>
<button onclick="document.getElementById('out').textContent = 'Clicked ' + document.getElementById('name').value">Go</button>
<input id="name" aria-label="Name">
<select id="size" aria-label="Size"><option value="s">Small</option><option value="l">Large</option></select>
<script>console.log('ready'); setTimeout(function () { throw new Error('boom'); }, 0);</script>
</body></html>"#;

/// A loopback server answering every GET with [`PAGE`]; it stops when the
/// returned handle is dropped (aborted).
struct Server {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let (status, body) = if got.starts_with(b"GET / ") || got.starts_with(b"GET /?") {
                    ("200 OK", PAGE)
                } else {
                    ("404 Not Found", "no")
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    Server { url, task }
}

/// Whether any process is still in process group `pgid`.
fn group_alive(pgid: u32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // pid (comm) state ppid pgrp …: comm may hold spaces, so split after ')'.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
    })
}

fn chromium() -> Option<std::path::PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        eprintln!("SKIPPED: no Chromium on this system (install the chromium package)");
    }
    found
}

fn r(name: &str) -> BrowserTarget {
    BrowserTarget::Ref(name.into())
}

/// The ref a snapshot gave the line containing `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in:\n{snapshot}"));
    let start = line.find("[ref=").expect("a ref") + 5;
    line[start..line.len() - 1].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drives_a_page_and_leaves_no_process_behind() {
    let Some(executable) = chromium() else {
        return;
    };
    let server = serve().await;
    let browser = Arc::new(ChromiumBrowser::new(executable, true));

    let page = browser
        .act(BrowserAction::Navigate {
            url: server.url.clone(),
        })
        .await
        .unwrap();
    assert_eq!(page.url, server.url);
    assert_eq!(page.title, "Demo page");
    assert!(
        page.text
            .contains("heading \"Hello from the test\" level=1"),
        "{}",
        page.text
    );
    let pid = browser.pid().await.expect("running");
    assert!(group_alive(pid));

    let go = ref_of(&page.text, "button \"Go\"");
    let name = ref_of(&page.text, "textbox \"Name\"");
    let typed = browser
        .act(BrowserAction::Type {
            target: r(&name),
            text: "Ada".into(),
        })
        .await
        .unwrap();
    assert!(
        typed.text.contains("textbox \"Name\" value=\"Ada\""),
        "{}",
        typed.text
    );
    // Typing again replaces the text.
    browser
        .act(BrowserAction::Type {
            target: BrowserTarget::Selector("#name".into()),
            text: "Grace".into(),
        })
        .await
        .unwrap();
    let clicked = browser
        .act(BrowserAction::Click { target: r(&go) })
        .await
        .unwrap();
    assert!(
        clicked.text.contains("text \"Clicked Grace\""),
        "{}",
        clicked.text
    );

    let chosen = browser
        .act(BrowserAction::Select {
            target: BrowserTarget::Selector("#size".into()),
            value: "Large".into(),
        })
        .await
        .unwrap();
    assert!(
        chosen.text.contains("combobox \"Size\" value=\"Large\""),
        "{}",
        chosen.text
    );

    let console = browser.act(BrowserAction::Console).await.unwrap();
    let lines: Vec<&str> = console.text.lines().collect();
    assert_eq!(lines[0], "[log] ready", "{}", console.text);
    assert!(
        lines[1].starts_with("[uncaught error] Error: boom"),
        "{}",
        console.text
    );
    let again = browser.act(BrowserAction::Console).await.unwrap();
    assert_eq!(
        again.text,
        "No console messages or errors since the last check."
    );

    let shot = browser.act(BrowserAction::Screenshot).await.unwrap();
    let image = shot.image.expect("a screenshot");
    assert_eq!(image.media_type, "image/png");
    assert!(image.data.starts_with("iVBORw0KGgo"), "a PNG's base64");

    let missing = browser
        .act(BrowserAction::Click {
            target: BrowserTarget::Selector("#nothing".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "no element matches `#nothing` on this page"
    );

    let second = format!("{}?second", server.url);
    let page = browser
        .act(BrowserAction::Navigate {
            url: second.clone(),
        })
        .await
        .unwrap();
    assert_eq!(page.url, second);
    let back = browser.act(BrowserAction::Back).await.unwrap();
    assert_eq!(back.url, server.url);
    assert!(
        back.text.contains("heading \"Hello from the test\""),
        "{}",
        back.text
    );

    browser.act(BrowserAction::Close).await.unwrap();
    assert_eq!(browser.pid().await, None);
    // The group is SIGKILLed at once; its processes leave /proc when
    // reaped, which the renderers' parent may take a moment to do.
    for _ in 0..100 {
        if !group_alive(pid) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("Chromium's process group {pid} outlived close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_sessions_browser_kills_the_group() {
    let Some(executable) = chromium() else {
        return;
    };
    let server = serve().await;
    let browser = ChromiumBrowser::new(executable, true);
    browser
        .act(BrowserAction::Navigate {
            url: server.url.clone(),
        })
        .await
        .unwrap();
    let pid = browser.pid().await.unwrap();
    assert!(group_alive(pid));
    drop(browser);
    // SIGKILL is delivered at once; the processes leave /proc when reaped.
    for _ in 0..100 {
        if !group_alive(pid) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("Chromium's process group {pid} outlived its browser");
}
