//! `riot serve` black-box tests (docs/interfaces.md `riot serve`, docs/design.md §2):
//! the real binary in a fresh project and `RIOT_HOME`, against the strict
//! mock model server. Checks the one printed line, an ACP conversation over
//! the WebSocket (one JSON-RPC message per text frame), the token and
//! `Origin` refusals, the web UI built into the binary and `--ui-dir`,
//! `--cwd` offered to the page, the ways the server stops, frames that are
//! not ACP messages, and `--host` beyond loopback.
//! Every `riot` started here is killed on drop (`kill_on_drop`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use futures::{SinkExt, StreamExt};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::ws::{Socket, WsClient};
use support::{PATIENCE, Running, World, provider, run, signal};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::TcpStream;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_tungstenite::connect_async;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};

const ANSWER: &str = "Served over a WebSocket.";
const WIRE: Wire = Wire::Anthropic;

/// A running `riot serve` and what its one line said.
struct Serving {
    riot: Running,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    port: u16,
    token: String,
}

impl Serving {
    /// `riot serve --port 0 EXTRA` against `server`; waits for its line and
    /// checks its exact format.
    async fn start(world: &World, server: &MockServer, extra: &[&str]) -> Self {
        Self::start_with_env(world, server, extra, &[]).await
    }

    /// [`start`](Self::start) with extra environment variables.
    async fn start_with_env(
        world: &World,
        server: &MockServer,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let base = server.base_url();
        let mut args = vec![
            "serve",
            "--provider",
            provider(WIRE),
            "--base-url",
            base.as_str(),
            "--model",
            "mock-model",
            "--port",
            "0",
        ];
        args.extend_from_slice(extra);
        let mut cmd = world.bare(&args);
        cmd.stdin(Stdio::piped()).envs(env.iter().copied());
        let mut riot = Running::spawn(cmd);
        let stdin = riot.child.stdin.take();
        let mut stdout = BufReader::new(riot.child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(PATIENCE, stdout.next_line())
            .await
            .expect("riot serve printed no line")
            .unwrap();
        let Some(line) = line else {
            let run = riot.finish().await;
            panic!("riot serve closed stdout without a line: {run:?}");
        };
        // The address printed is the one bound: `--host`, 127.0.0.1 by default.
        let host = extra
            .iter()
            .position(|a| *a == "--host")
            .map_or("127.0.0.1", |i| extra[i + 1]);
        let rest = line
            .strip_prefix(&format!("Riot is serving at http://{host}:"))
            .unwrap_or_else(|| panic!("unexpected line: {line:?}"));
        let (port, token) = rest
            .split_once("/?token=")
            .unwrap_or_else(|| panic!("no token in {line:?}"));
        let port: u16 = port.parse().unwrap();
        assert_ne!(port, 0, "{line}");
        assert!(
            token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
            "the token is at least 128 bits of hex: {line:?}"
        );
        Self {
            riot,
            stdin,
            stdout,
            port,
            token: token.to_owned(),
        }
    }

    /// Opens `/acp` with `query` and extra `headers`: the socket, or the
    /// HTTP status of the refusal.
    async fn connect(&self, query: &str, headers: &[(&str, &str)]) -> Result<Socket, u16> {
        let mut request = format!("ws://127.0.0.1:{}/acp{query}", self.port)
            .into_client_request()
            .unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        match tokio::time::timeout(PATIENCE, connect_async(request))
            .await
            .expect("the WebSocket handshake hung")
        {
            Ok((socket, response)) => {
                assert_eq!(response.status().as_u16(), 101);
                Ok(socket)
            }
            Err(WsError::Http(response)) => Err(response.status().as_u16()),
            Err(e) => panic!("the WebSocket handshake failed: {e}"),
        }
    }

    fn with_token(&self) -> String {
        format!("?token={}", self.token)
    }

    /// Stdout must end without another line once the server has stopped.
    async fn assert_no_more_stdout(&mut self) {
        let next = tokio::time::timeout(PATIENCE, self.stdout.next_line())
            .await
            .expect("riot serve did not close stdout")
            .unwrap();
        assert_eq!(next, None, "riot serve printed more than its one line");
    }
}

/// One HTTP response: the status, the headers (names in lowercase), the body.
struct Page {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Page {
    /// The value of header `name` (lowercase), if sent.
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `GET target` over plain HTTP/1.1 (`Connection: close`, so the body is
/// everything after the headers).
async fn http_page(port: u16, target: &str) -> Page {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut raw))
        .await
        .expect("the HTTP response hung")
        .unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP response: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Page {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// `GET target`: the status and the body as text.
async fn http_get(port: u16, target: &str) -> (u16, String) {
    let page = http_page(port, target).await;
    (page.status, page.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_prints_one_line_and_holds_a_conversation_over_websocket() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![Reply::Text(ANSWER.into())]))
        .await
        .unwrap();
    let mut serving = Serving::start(&world, &server, &[]).await;

    // A non-browser client: the token, no Origin.
    let socket = serving.connect(&serving.with_token(), &[]).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    let (_, init) = client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentInfo"]["name"], "riot", "{init}");
    // Without --cwd, no project directory is offered.
    assert!(init.get("_meta").is_none(), "{init}");
    let (_, opened) = client
        .call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": []}),
        )
        .await;
    let session_id = opened["sessionId"].as_str().unwrap().to_owned();
    let (updates, done) = client
        .call(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Say something"}]}),
        )
        .await;
    assert_eq!(done["stopReason"], "end_turn", "{done}");
    let text: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, ANSWER, "{updates:#?}");
    assert_eq!(server.requests().len(), 1);
    client.socket.close(None).await.unwrap();

    // SIGTERM stops it cleanly, and stdout held only the line.
    assert!(signal("TERM", i64::from(serving.riot.pid())));
    serving.assert_no_more_stdout().await;
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(0), "riot serve after SIGTERM: {run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_without_the_token_or_from_a_foreign_origin() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let serving = Serving::start(&world, &server, &[]).await;
    let port = serving.port;
    let token = serving.with_token();
    let wrong = format!("?token={}", "0".repeat(serving.token.len()));
    let other_port = if port == u16::MAX { port - 1 } else { port + 1 };
    let own = format!("http://127.0.0.1:{port}");
    let other = format!("http://localhost:{other_port}");
    let localhost = format!("http://localhost:{port}");
    let bearer = format!("Bearer {}", serving.token);

    // Without the right token: 401, whatever else is sent.
    assert_eq!(serving.connect("", &[]).await.err(), Some(401));
    assert_eq!(serving.connect(&wrong, &[]).await.err(), Some(401));
    assert_eq!(
        serving
            .connect("", &[("Authorization", "Bearer nope")])
            .await
            .err(),
        Some(401)
    );
    assert_eq!(
        serving.connect("", &[("Origin", own.as_str())]).await.err(),
        Some(401)
    );
    // With the token, a foreign Origin: 403.
    for origin in [
        "http://evil.example",
        other.as_str(),
        // Reached at 127.0.0.1: another name of the same server is foreign.
        localhost.as_str(),
        "null",
    ] {
        assert_eq!(
            serving.connect(&token, &[("Origin", origin)]).await.err(),
            Some(403),
            "Origin {origin}"
        );
    }
    // The server's own Origin is accepted, and the socket speaks ACP.
    let socket = serving
        .connect(&token, &[("Origin", own.as_str())])
        .await
        .unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    let (_, init) = client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], 1, "{init}");
    // The token also works as a bearer header.
    assert!(
        serving
            .connect("", &[("Authorization", bearer.as_str())])
            .await
            .is_ok()
    );

    // The page at `/` needs the token too (what it shows: below).
    assert_eq!(http_get(port, "/").await.0, 401);
    assert_eq!(http_get(port, &format!("/{wrong}")).await.0, 401);
    assert_eq!(http_get(port, &format!("/{token}")).await.0, 200);
    assert_eq!(server.requests().len(), 0);

    // SIGINT stops it even with a client still connected (130: interrupted).
    assert!(signal("INT", i64::from(serving.riot.pid())));
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(130), "riot serve after SIGINT: {run:?}");
    drop(client);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_shows_the_ui_dir_and_exits_when_stdin_closes() {
    let world = World::new();
    let files = tempfile::tempdir().unwrap();
    let ui = files.path().join("ui");
    std::fs::create_dir(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<p>the riot test ui</p>").unwrap();
    std::fs::write(ui.join("app.js"), "console.log('ui');").unwrap();
    std::fs::create_dir(ui.join("assets")).unwrap();
    std::fs::write(ui.join("assets/app-Ab_9-xYz.css"), "p { color: red }").unwrap();
    std::fs::write(files.path().join("secret.txt"), "not for the web").unwrap();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let ui_arg = ui.to_str().unwrap().to_owned();
    let mut serving = Serving::start(
        &world,
        &server,
        &["--ui-dir", ui_arg.as_str(), "--exit-on-stdin-eof"],
    )
    .await;
    let port = serving.port;

    assert_eq!(http_get(port, "/").await.0, 401);
    let (status, body) = http_get(port, &format!("/{}", serving.with_token())).await;
    assert_eq!(status, 200);
    assert_eq!(body, "<p>the riot test ui</p>");
    let script = http_page(port, "/app.js").await;
    assert_eq!(script.status, 200);
    assert_eq!(script.text(), "console.log('ui');");
    assert_eq!(
        script.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    // Only a name with a content hash, as Vite writes them, is cached.
    assert_eq!(script.header("cache-control"), Some("no-store"));
    let style = http_page(port, "/assets/app-Ab_9-xYz.css").await;
    assert_eq!(style.status, 200);
    assert_eq!(style.text(), "p { color: red }");
    assert_eq!(
        style.header("content-type"),
        Some("text/css; charset=utf-8")
    );
    assert_eq!(
        style.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    // Nothing outside the UI directory.
    assert_eq!(http_get(port, "/..%2Fsecret.txt").await.0, 404);
    assert_eq!(http_get(port, "/missing.js").await.0, 404);

    // Closing stdin shuts it down, successfully, with nothing more printed.
    drop(serving.stdin.take());
    serving.assert_no_more_stdout().await;
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(0), "riot serve after stdin EOF: {run:?}");
}

/// Why `build.rs` did not embed the web UI in the `riot` under test, as
/// the page shows it; empty when it did. (Cargo sets what a build script
/// says for every target of its package, these tests included.)
const UI_MISSING: &str = env!("RIOT_UI_MISSING");

/// `text` as HTML text.
fn html_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The file name in `html` after `prefix` (e.g. `src="./assets/`) that
/// ends in `extension`.
fn linked<'a>(html: &'a str, prefix: &str, extension: &str) -> &'a str {
    html.match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &html[at + prefix.len()..];
            rest.split('"').next()
        })
        .find(|name| name.ends_with(extension))
        .unwrap_or_else(|| panic!("no {prefix}…{extension}\" in {html}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_ui_dir_serves_the_web_ui_built_into_it() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let serving = Serving::start(&world, &server, &[]).await;
    let port = serving.port;

    assert_eq!(http_get(port, "/").await.0, 401);
    let index = http_page(port, &format!("/{}", serving.with_token())).await;
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    // The address carries the token: the page is never cached.
    assert_eq!(index.header("cache-control"), Some("no-store"));
    let html = index.text();
    if !UI_MISSING.is_empty() {
        // Built without the UI (no Node.js): the page says why and what to do.
        assert!(
            html.contains(&format!("<p>{}.</p>", html_text(UI_MISSING))),
            "{html}"
        );
        let why = format!("this riot was built without the web UI: {UI_MISSING}");
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{why}");
        }
        eprintln!("\n!!! SKIPPING the embedded web UI's checks: {why} !!!\n");
        return;
    }

    // The real UI's page (desktop/ui/index.html as Vite built it): React's
    // root, the title, the content security policy, hashed assets.
    assert!(html.contains("<div id=\"root\"></div>"), "{html}");
    assert!(html.contains("<title>Riot</title>"), "{html}");
    assert!(html.contains("Content-Security-Policy"), "{html}");
    assert!(!html.contains("not embedded"), "{html}");
    let script = linked(&html, "src=\"./assets/", ".js");
    let style = linked(&html, "href=\"./assets/", ".css");
    let dist =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../desktop/ui/dist/assets");
    for (file, content_type) in [
        (script, "text/javascript; charset=utf-8"),
        (style, "text/css; charset=utf-8"),
    ] {
        let asset = http_page(port, &format!("/assets/{file}")).await;
        assert_eq!(asset.status, 200, "{file}");
        assert_eq!(asset.header("content-type"), Some(content_type), "{file}");
        assert_eq!(
            asset.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "{file}"
        );
        assert_eq!(asset.header("x-content-type-options"), Some("nosniff"));
        assert!(
            asset.body.len() > 1000,
            "{file}: {} bytes",
            asset.body.len()
        );
        // The bytes of the build it came from, while that build is on disk
        // (a rebuild with other content writes other names).
        if let Ok(built) = std::fs::read(dist.join(file)) {
            assert!(asset.body == built, "{file} differs from the built one");
        }
    }
    // Source maps are left out of the binary; unknown files are not found.
    assert_eq!(
        http_get(port, &format!("/assets/{script}.map")).await.0,
        404
    );
    assert_eq!(http_get(port, "/assets/missing-ABCDEFGH.js").await.0, 404);
    assert_eq!(http_get(port, "/..%2FCargo.toml").await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_offers_its_cwd_to_the_page_as_the_project_directory() {
    let world = World::new();
    std::fs::create_dir(world.project.path().join("my project")).unwrap();
    let expected = world.cwd().join("my project");
    let expected = expected.to_str().unwrap();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let (browser, opened) = fake_browser(&world);
    // Relative to where riot starts (the project), as a person types it.
    let serving = Serving::start_with_env(
        &world,
        &server,
        &["--cwd", "my project", "--open"],
        &[("BROWSER", browser.to_str().unwrap())],
    )
    .await;

    // Any client learns it from `initialize`: `_meta.riot.defaultCwd`.
    let socket = serving.connect(&serving.with_token(), &[]).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    let (_, init) = client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(init["_meta"]["riot"]["defaultCwd"], expected, "{init}");
    // It is a directory sessions can be opened in.
    let (_, opened_session) = client
        .call("session/new", json!({"cwd": expected, "mcpServers": []}))
        .await;
    assert!(opened_session["sessionId"].is_string(), "{opened_session}");

    // The page `--open` opens carries it as `&cwd=`, which the UI pre-fills.
    support::wait_until("the browser to be started", || opened.exists()).await;
    let html = std::fs::read_to_string(world.home.path().join("open.html")).unwrap();
    let address = format!(
        "http://127.0.0.1:{}/?token={}&amp;cwd={}",
        serving.port,
        serving.token,
        expected.replace(' ', "%20")
    );
    assert!(
        html.contains(&format!(
            "<meta http-equiv=\"refresh\" content=\"0; url={address}\">"
        )),
        "{html}"
    );
    assert!(signal("TERM", i64::from(serving.riot.pid())));
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_names_a_wrong_cwd_or_ui_dir_and_why_and_exits_2() {
    let world = World::new();
    let project = world.cwd();
    let file = project.join("notes.txt");
    std::fs::write(&file, "not a directory").unwrap();
    let missing = project.join("nowhere");
    let (project, file, missing) = (
        project.to_str().unwrap(),
        file.to_str().unwrap(),
        missing.to_str().unwrap(),
    );
    let under_file = format!("{file}/sub");
    let ui_hint = "pass the directory of the built web UI (it holds index.html)";
    let cases = [
        (
            ["--cwd", missing],
            format!("riot serve: --cwd {missing} does not exist\n"),
        ),
        (
            ["--cwd", "nowhere"],
            "riot serve: --cwd nowhere does not exist\n".to_owned(),
        ),
        (
            ["--cwd", file],
            format!("riot serve: --cwd {file} is not a directory\n"),
        ),
        (
            ["--cwd", under_file.as_str()],
            format!("riot serve: --cwd {under_file} does not exist\n"),
        ),
        (
            ["--ui-dir", missing],
            format!("riot serve: --ui-dir {missing} does not exist; {ui_hint}\n"),
        ),
        (
            ["--ui-dir", project],
            format!("riot serve: --ui-dir {project} has no index.html; {ui_hint}\n"),
        ),
    ];
    for (flag, expected) in cases {
        let mut args = vec!["serve", "--port", "0"];
        args.extend(flag);
        let ran = run(world.bare(&args)).await;
        assert_eq!(ran.code, Some(2), "{args:?}: {ran:?}");
        assert_eq!(ran.stdout, "", "{args:?}: {ran:?}");
        assert_eq!(ran.stderr, expected, "{args:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_open_hands_the_browser_an_owner_only_page_leading_to_the_address() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let (browser, opened) = fake_browser(&world);
    let command = format!("{} --new-window", browser.display());
    let serving = Serving::start_with_env(
        &world,
        &server,
        &["--open"],
        &[("BROWSER", command.as_str())],
    )
    .await;
    support::wait_until("the browser to be started", || opened.exists()).await;
    // The browser gets an owner-only page that goes on to the address: the
    // token never appears on a command line.
    let page = world.home.path().join("open.html");
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        format!("--new-window\nfile://{}\n", page.display())
    );
    let address = format!("http://127.0.0.1:{}/?token={}", serving.port, serving.token);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!(
            "<meta http-equiv=\"refresh\" content=\"0; url={address}\">"
        )),
        "{html}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(signal("TERM", i64::from(serving.riot.pid())));
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(!run.stderr.contains("cannot open a browser"), "{run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_in_another_window_is_not_deleted_under_it() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![Reply::Text("Hi.".into())]))
        .await
        .unwrap();
    let serving = Serving::start(&world, &server, &[]).await;
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});
    let mut first = WsClient {
        socket: serving.connect(&serving.with_token(), &[]).await.unwrap(),
        next_id: 0,
    };
    first.call("initialize", init.clone()).await;
    let (_, opened) = first
        .call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": []}),
        )
        .await;
    let session_id = opened["sessionId"].as_str().unwrap().to_owned();
    // The transcript is written with the first prompt.
    let prompt = json!({"sessionId": session_id, "prompt": [{"type": "text", "text": "Hello"}]});
    first.call("session/prompt", prompt).await;
    let mut second = WsClient {
        socket: serving.connect(&serving.with_token(), &[]).await.unwrap(),
        next_id: 0,
    };
    second.call("initialize", init).await;
    let delete = json!({"sessionId": session_id});
    let (_, refused) = second
        .exchange("_riot/session_delete", delete.clone())
        .await;
    assert_eq!(
        refused["error"]["message"],
        format!("session `{session_id}` is open in another window; close it there first"),
        "{refused}"
    );
    assert!(world.transcript(&session_id).exists());

    // Once the first window is gone, the session can be deleted.
    drop(first);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (_, response) = second
            .exchange("_riot/session_delete", delete.clone())
            .await;
        if response.get("error").is_none() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{response}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!world.transcript(&session_id).exists());
}

/// A parse error as `riot serve` answers a frame that is not an ACP
/// message: `id` null, code -32700; its message.
fn parse_error_message(message: &serde_json::Value) -> String {
    assert_eq!(message["id"], serde_json::Value::Null, "{message}");
    assert_eq!(message["error"]["code"], -32700, "{message}");
    message["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_that_are_not_acp_messages_get_short_parse_errors_on_a_usable_connection() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let serving = Serving::start(&world, &server, &[]).await;
    let socket = serving.connect(&serving.with_token(), &[]).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    let init = json!({"protocolVersion": 1, "clientCapabilities": {}});

    // A binary frame, even one holding a request, is not a message.
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": init});
    client
        .socket
        .send(Message::Binary(request.to_string().into_bytes().into()))
        .await
        .unwrap();
    let answer = client.read().await;
    let message = parse_error_message(&answer);
    assert!(
        message.starts_with(
            "Parse error: the message is a binary frame; ACP messages travel in text frames; "
        ),
        "{message}"
    );
    let (_, result) = client.call("initialize", init.clone()).await;
    assert_eq!(result["agentInfo"]["name"], "riot", "{result}");

    // 5 MB of text that is not JSON: quoted by 100 characters.
    client
        .socket
        .send(Message::Text("x".repeat(5_000_000).into()))
        .await
        .unwrap();
    let frame = tokio::time::timeout(PATIENCE, client.socket.next())
        .await
        .expect("riot serve went silent")
        .expect("riot serve closed the WebSocket")
        .unwrap();
    let Message::Text(text) = frame else {
        panic!("unexpected frame: {frame:?}")
    };
    assert!(text.len() < 1024, "the answer is {} bytes", text.len());
    let answer: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
    assert_eq!(
        parse_error_message(&answer),
        format!(
            "Parse error: the message is not valid JSON (syntax error at line 1, column 1); 5000000 bytes: \"{}…\"",
            "x".repeat(100)
        )
    );
    let (_, result) = client.call("initialize", init).await;
    assert_eq!(result["agentInfo"]["name"], "riot", "{result}");

    // A text frame that is not UTF-8: the WebSocket protocol says the
    // connection fails (1007), after the parse error.
    client
        .socket
        .send(Message::Frame(Frame::message(
            b"\xff\xfe".to_vec(),
            OpCode::Data(Data::Text),
            true,
        )))
        .await
        .unwrap();
    let answer = client.read().await;
    assert_eq!(
        parse_error_message(&answer),
        "Parse error: the message is not valid UTF-8"
    );
    let frame = tokio::time::timeout(PATIENCE, client.socket.next())
        .await
        .expect("riot serve went silent")
        .expect("riot serve dropped the WebSocket without a close frame")
        .unwrap();
    let Message::Close(Some(CloseFrame { code, reason })) = frame else {
        panic!("unexpected frame: {frame:?}")
    };
    assert_eq!(code, CloseCode::Invalid);
    assert_eq!(reason.as_str(), "refused an unreadable message");

    // The server itself serves on.
    let socket = serving.connect(&serving.with_token(), &[]).await.unwrap();
    let mut again = WsClient { socket, next_id: 0 };
    let (_, result) = again
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(result["agentInfo"]["name"], "riot", "{result}");
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_a_host_beyond_loopback_without_allow_remote() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let base = server.base_url();
    let ran = run(world.bare(&[
        "serve",
        "--provider",
        provider(WIRE),
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
        "--port",
        "0",
        "--host",
        "0.0.0.0",
    ]))
    .await;
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert_eq!(ran.stdout, "", "{ran:?}");
    assert_eq!(
        ran.stderr,
        "riot serve: --host 0.0.0.0 is not a loopback address; pass --allow-remote to serve beyond this machine\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_allow_remote_warns_that_the_token_travels_in_plain_http() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let mut serving =
        Serving::start(&world, &server, &["--host", "0.0.0.0", "--allow-remote"]).await;
    // Bound to every address: reachable at loopback too.
    let socket = serving.connect(&serving.with_token(), &[]).await.unwrap();
    let mut client = WsClient { socket, next_id: 0 };
    let (_, init) = client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(init["agentInfo"]["name"], "riot", "{init}");
    client.socket.close(None).await.unwrap();

    assert!(signal("TERM", i64::from(serving.riot.pid())));
    serving.assert_no_more_stdout().await;
    let port = serving.port;
    let run = serving.riot.finish().await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "riot serve: warning: listening on 0.0.0.0:{port}, beyond this machine (--allow-remote): the token travels in plain HTTP, and anyone on the network who sees it can drive the agent\n"
        )
    );
}

/// A `$BROWSER` that writes the arguments it was given to `opened.txt`
/// (atomically, so a reader never sees half of them): (script, that file).
fn fake_browser(world: &World) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let opened = world.home.path().join("opened.txt");
    let browser = world.home.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    (browser, opened)
}
