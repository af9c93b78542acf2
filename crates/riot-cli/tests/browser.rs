//! The Browser tool in `riot exec` with Debian's Chromium against a page
//! this test serves on loopback (docs/browser.md): the model loads the
//! deferred tool through ToolSearch, navigates, and a screenshot reaches
//! the strict mock model as an image; a denied host is refused without a
//! request; no Chromium process outlives the session. Skipped, with the
//! reason printed, only when no Chromium is installed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::web::{Reply as Page, WebStandIn};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

fn chromium() -> bool {
    let found = riot_runtime::find_chromium().is_some();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "no Chromium found; CI installs chromium and must run the browser tests"
        );
        eprintln!("SKIPPED: no Chromium on this system (install the chromium package)");
    }
    found
}

async fn site() -> WebStandIn {
    WebStandIn::start(vec![(
        "/app",
        Page::ok(
            "text/html; charset=utf-8",
            "<html><head><title>Shop</title></head><body><h1>Welcome to the shop</h1><button>Buy</button></body></html>",
        ),
    )])
    .await
    .unwrap()
}

fn declared(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether a process whose command line names `marker` is still running.
fn running_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_loads_the_browser_navigates_and_sees_a_screenshot() {
    if !chromium() {
        return;
    }
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"models": {"mock-model": {"vision": true}}}).to_string(),
    )
    .unwrap();
    let site = site().await;
    let url = site.url("/app");
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_search",
                "ToolSearch",
                json!({"query": "select:Browser"}),
            ),
            tool_call(
                "call_nav",
                "Browser",
                json!({"action": "navigate", "url": url}),
            ),
            tool_call("call_shot", "Browser", json!({"action": "screenshot"})),
            Reply::Text("The shop is up.".into()),
        ],
    ))
    .await
    .unwrap();
    // The profile directory (and so every Chromium command line) lies
    // under this test's own temporary directory.
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--allow",
            "Browser(domain:127.0.0.1)",
            "Check the shop page",
        ],
    );
    cmd.env("TMPDIR", tmp.path()).env_remove("RIOT_BROWSER");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "The shop is up.");

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 4);
    // Deferred: only named in ToolSearch's description until loaded.
    let first = declared(&bodies[0]);
    assert!(!first.contains(&"Browser".to_owned()), "{first:?}");
    let search = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ToolSearch")
        .expect("ToolSearch is offered");
    assert!(search["description"].as_str().unwrap().contains("Browser"));
    assert_eq!(
        declared(&bodies[1]).last().map(String::as_str),
        Some("Browser")
    );

    let nav = support::tool_result(&bodies[2], "call_nav");
    let text = nav["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("Page: Shop — {url}\n")), "{nav}");
    assert!(
        text.contains("heading \"Welcome to the shop\" level=1"),
        "{nav}"
    );
    assert!(text.contains("button \"Buy\" [ref=e1]"), "{nav}");

    let shot = support::tool_result(&bodies[3], "call_shot");
    let content = shot["content"].as_array().unwrap();
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Image screenshot (1280x"),
        "{shot}"
    );
    assert_eq!(content[1]["type"], "image", "{shot}");
    assert_eq!(content[1]["source"]["media_type"], "image/png");
    // Chromium also asks for /favicon.ico.
    let pages = site.hits().iter().filter(|h| h.target == "/app").count();
    assert_eq!(pages, 1, "the page was loaded once");

    // The session's end kills Chromium's group; the processes are gone
    // once the kernel has delivered the kill (bounded by the patience).
    let marker = tmp.path().to_str().unwrap().to_owned();
    support::wait_until("every Chromium process of the session to end", || {
        !running_with(&marker)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_host_is_refused_without_loading_it() {
    if !chromium() {
        return;
    }
    let world = World::new();
    let site = site().await;
    let url = site.url("/app");
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_search",
                "ToolSearch",
                json!({"query": "select:Browser"}),
            ),
            tool_call(
                "call_nav",
                "Browser",
                json!({"action": "navigate", "url": url}),
            ),
            Reply::Text("Refused.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &["--deny", "Browser(domain:127.0.0.1)", "Check the shop page"],
    );
    cmd.env_remove("RIOT_BROWSER");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = support::tool_result(bodies(&server).last().unwrap(), "call_nav");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["content"]
            .to_string()
            .contains("Browser(domain:127.0.0.1)"),
        "{result}"
    );
    assert!(site.hits().is_empty(), "no request reached the page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_show_names_the_browser_or_why_there_is_none() {
    let world = World::new();
    // The tests' default: RIOT_BROWSER=off.
    let out = run(world.bare(&["config", "show"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.lines().any(|l| l.starts_with("browser")
            && l.ends_with("Browser is not declared: RIOT_BROWSER=off")),
        "{}",
        out.stdout
    );
    // A configured executable that does not exist is named with the reason.
    std::fs::create_dir_all(world.home.path()).unwrap();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"browser": {"executable": "/nonexistent/chromium", "headless": false}}"#,
    )
    .unwrap();
    let mut cmd = world.bare(&["config", "show", "--json"]);
    cmd.env_remove("RIOT_BROWSER");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let shown: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        shown["browser_status"],
        json!({"unavailable": "browser.executable /nonexistent/chromium is not a file"})
    );
    if !chromium() {
        return;
    }
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"browser": {"headless": false}}"#,
    )
    .unwrap();
    let mut cmd = world.bare(&["config", "show", "--json"]);
    cmd.env_remove("RIOT_BROWSER");
    let out = run(cmd).await;
    let shown: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        shown["browser_status"],
        json!({"executable": riot_runtime::find_chromium().unwrap(), "headless": false})
    );
}
