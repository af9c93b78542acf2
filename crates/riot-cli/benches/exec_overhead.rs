//! Kernel overhead of `riot exec` (issue 7): a 50-turn scripted session,
//! each turn one Read, against the in-process mock model server. Prints the
//! overhead per turn — riot's total time minus the time the same 51
//! requests take when sent straight to the mock by a plain HTTP client in
//! the same run — and riot's peak RSS.
//!
//! Run: `cargo bench -p riot-cli --bench exec_overhead`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark binary
#![allow(clippy::disallowed_methods, clippy::print_stdout)] // measures real time and processes
#![allow(unsafe_code)] // getrusage(RUSAGE_CHILDREN) for the child's peak RSS

use std::time::Instant;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;

const TURNS: usize = 50;

fn script() -> Script {
    let mut replies: Vec<Reply> = (0..TURNS)
        .map(|i| Reply::ToolCall {
            id: format!("toolu_{i:03}"),
            name: "Read".into(),
            arguments: json!({"file_path": format!("src/file_{}.rs", i % 5)}).to_string(),
            text: String::new(),
        })
        .collect();
    replies.push(Reply::Text("Read all fifty.".into()));
    Script::new(Wire::Anthropic, replies)
}

fn peak_rss_kib_of_children() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer we own.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: initialised by the successful call above.
    unsafe { usage.assume_init() }.ru_maxrss
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // Test runners list benchmarks with `--list`; there is nothing to list.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // reqwest is built without a default TLS provider; Riot uses ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("src")).unwrap();
    for i in 0..5 {
        let body: String = (0..200)
            .map(|l| format!("fn f{l}() -> u32 {{ {l} }}\n"))
            .collect();
        std::fs::write(project.path().join(format!("src/file_{i}.rs")), body).unwrap();
    }
    let home = tempfile::tempdir().unwrap();

    // Reference: the mock alone, answering the same requests riot will send.
    let server = MockServer::start(script()).await.unwrap();
    let riot_started = Instant::now();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_riot"))
        .args([
            "exec",
            "--output-format",
            "json",
            "--provider",
            "anthropic",
            "--model",
            "claude-bench",
        ])
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--cwd")
        .arg(project.path())
        .arg("read the files one by one")
        .env("RIOT_HOME", home.path())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .await
        .unwrap();
    let riot_total = riot_started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["num_turns"], json!(TURNS + 1));
    let bodies: Vec<serde_json::Value> = server.requests().into_iter().map(|r| r.body).collect();
    server.shutdown().await;

    // Replay the recorded request bodies straight to a fresh mock.
    let replay = MockServer::start(script()).await.unwrap();
    let client = reqwest::Client::new();
    let url = format!("{}/v1/messages", replay.base_url());
    let mock_started = Instant::now();
    for body in &bodies {
        let response = client
            .post(&url)
            .header("anthropic-version", "2023-06-01")
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap())
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        let _ = response.bytes().await.unwrap();
    }
    let mock_total = mock_started.elapsed();
    replay.shutdown().await;

    let requests = bodies.len() as f64;
    let overhead = riot_total.saturating_sub(mock_total);
    println!(
        "exec_overhead: {TURNS} Read turns, {} requests",
        bodies.len()
    );
    println!(
        "  riot exec total      {:>9.1} ms",
        riot_total.as_secs_f64() * 1e3
    );
    println!(
        "  mock alone (same)    {:>9.1} ms",
        mock_total.as_secs_f64() * 1e3
    );
    println!(
        "  overhead per request {:>9.2} ms  (ratio riot/mock {:.1}x)",
        overhead.as_secs_f64() * 1e3 / requests,
        riot_total.as_secs_f64() / mock_total.as_secs_f64()
    );
    println!(
        "  peak RSS of riot     {:>9} KiB",
        peak_rss_kib_of_children()
    );
}
