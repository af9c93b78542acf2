//! docs/design.md §15: API keys never reach logs, transcripts or output. A
//! whole session runs with a key and a trace-level log; then every file
//! Riot wrote and everything it printed is searched for the key — after
//! checking the key really was used, so the search can fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::Path;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::{World, run, tool_call};

const KEY: &str = "sk-ant-riot-test-SECRET-7f3a9c";

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[tokio::test]
async fn a_trace_level_session_writes_the_key_nowhere() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), "hello\n").unwrap();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call("toolu_1", "Bash", json!({"command": "env"})),
            tool_call("toolu_2", "Read", json!({"file_path": "notes.txt"})),
            Reply::Text("Done.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut cmd = world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--permission-mode",
            "bypass",
            "--output-format",
            "events",
            "go",
        ],
    );
    cmd.env("ANTHROPIC_API_KEY", KEY).env("RIOT_LOG", "trace");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    // The key was used: the mock saw it on every request.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(r.header("x-api-key"), Some(KEY));
    }
    // The model saw `env` output: the key variable was scrubbed from Bash.
    let bash_result = requests[1].body.to_string();
    assert!(bash_result.contains("PATH="), "env ran: {bash_result}");
    assert!(!bash_result.contains("ANTHROPIC_API_KEY"), "{bash_result}");

    let mut files = Vec::new();
    files_under(world.home.path(), &mut files);
    let log = world.home.path().join("logs/riot.log");
    assert!(files.contains(&log), "a log was written: {files:?}");
    assert!(
        std::fs::metadata(&log).unwrap().len() > 1000,
        "the trace log has content"
    );
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(KEY), "{} contains the key", file.display());
    }
    assert!(!out.stdout.contains(KEY), "stdout contains the key");
    assert!(!out.stderr.contains(KEY), "stderr contains the key");
    server.shutdown().await;
}

/// A server that echoes the key in its error bodies — first a server
/// error (retried), then a 401 (never retried): `riot exec` prints the
/// retry notice and the final error, and the transcript stores them, all
/// with the key redacted at the provider — in every output format.
#[tokio::test]
async fn a_key_echoed_in_a_provider_error_is_printed_and_stored_redacted() {
    for format in ["text", "events", "stream-json"] {
        let world = World::new();
        let failing = json!({"type": "error", "error": {"type": "api_error",
                          "message": format!("upstream failed for x-api-key {KEY}")}});
        let server_error = Reply::Error {
            status: 500,
            body: failing.to_string(),
            headers: Vec::new(),
        };
        let body = json!({"type": "error", "error": {"type": "authentication_error",
                          "message": format!("invalid x-api-key {KEY}")}});
        let unauthorized = Reply::Error {
            status: 401,
            body: body.to_string(),
            headers: Vec::new(),
        };
        let server = MockServer::start(Script::new(
            Wire::Anthropic,
            vec![server_error, unauthorized],
        ))
        .await
        .unwrap();
        let mut cmd = world.exec(&server, Wire::Anthropic, &["--output-format", format, "go"]);
        cmd.env("ANTHROPIC_API_KEY", KEY);
        let out = run(cmd).await;
        assert_eq!(out.code, Some(1), "{format}: {out:?}");

        // The key was sent twice (the server error is retried) and echoed
        // twice.
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{format}");
        for r in &requests {
            assert_eq!(r.header("x-api-key"), Some(KEY));
        }
        let shown = format!("{}\n{}", out.stdout, out.stderr);
        // The wait is 500 ms plus real jitter.
        let retry_line = "riot: upstream failed for x-api-key [REDACTED]; retry 2 in ";
        let failure = "Model request failed (HTTP 401): the endpoint refused the API key \
                       from $ANTHROPIC_API_KEY (invalid x-api-key [REDACTED]). \
                       Check that the key is valid and belongs to this endpoint.";
        if format == "text" {
            assert!(
                out.stderr
                    .lines()
                    .any(|l| l.starts_with(retry_line) && l.ends_with(" ms")),
                "{}",
                out.stderr
            );
        } else if format == "events" {
            let events: Vec<serde_json::Value> = out
                .stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let reasons: Vec<&str> = events
                .iter()
                .filter_map(|e| e.get("reason").and_then(|r| r.as_str()))
                .filter(|r| r.contains("x-api-key"))
                .collect();
            assert_eq!(
                reasons,
                ["upstream failed for x-api-key [REDACTED]"],
                "{}",
                out.stdout
            );
        }
        assert!(shown.contains(failure), "{format}: {shown}");

        let mut files = Vec::new();
        files_under(world.home.path(), &mut files);
        let transcript = world.transcript(&support::only_session(&world));
        assert!(files.contains(&transcript), "{files:?}");
        let stored = std::fs::read_to_string(&transcript).unwrap();
        assert!(
            stored.contains("[REDACTED]"),
            "the error was stored: {stored}"
        );
        for file in &files {
            let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
            assert!(!text.contains(KEY), "{} contains the key", file.display());
        }
        assert!(
            !shown.contains(KEY),
            "{format}: the output contains the key"
        );
        server.shutdown().await;
    }
}
