//! The first hour with Riot (#18), black-box: the real binary against the
//! strict mock model server. Setting up with only a key, one message for
//! everything missing, a `/v1` base URL, a refused key, `--continue`
//! keeping the session's endpoint, the session list and transcripts
//! (dates, no empty sessions, a stopped prompt kept), a closed pipe, and
//! `~` in tool paths.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire, frame};
use serde_json::{Value, json};
use support::{Running, World, bodies, lines_until, run, signal, tool_call, tool_result};
use tokio::io::{AsyncBufReadExt, BufReader};

async fn server(wire: Wire, replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(wire, replies)).await.unwrap()
}

/// Session transcripts in the world's home (none if the directory does
/// not exist).
fn transcripts(world: &World) -> Vec<String> {
    match std::fs::read_dir(world.home.path().join("sessions")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect(),
        Err(_) => Vec::new(),
    }
}

// ---- 1. Only a key: that provider and its default model ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_key_set_uses_that_provider_with_its_default_model() {
    for (wire, var, path, model) in [
        (
            Wire::Anthropic,
            "ANTHROPIC_API_KEY",
            "/v1/messages",
            "claude-sonnet-4-5",
        ),
        (
            Wire::Openai,
            "OPENAI_API_KEY",
            "/v1/chat/completions",
            "gpt-5",
        ),
    ] {
        let world = World::new();
        let server = server(wire, vec![Reply::Text("Hello.".into())]).await;
        let cwd = world.project.path().to_str().unwrap().to_owned();
        // No provider and no model anywhere: only the key (and where the
        // mock listens).
        let mut cmd = world.bare(&["exec", "--cwd", &cwd, "Hi"]);
        cmd.env(var, "sk-only-key")
            .env("RIOT_BASE_URL", server.base_url());
        let out = run(cmd).await;
        assert_eq!(out.code, Some(0), "{var}: {out:?}");
        assert_eq!(out.stdout, "Hello.\n", "{var}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{var}");
        assert_eq!(requests[0].path, path, "{var}");
        assert_eq!(requests[0].body["model"], model, "{var}");
        let key_header = match wire {
            Wire::Anthropic => requests[0].header("x-api-key").map(str::to_owned),
            _ => requests[0].header("authorization").map(str::to_owned),
        };
        assert!(
            key_header.as_deref().unwrap().ends_with("sk-only-key"),
            "{var}: {key_header:?}"
        );

        // `riot config show` says where the provider and model came from.
        let mut cmd = world.bare(&["config", "show", "--cwd", &cwd]);
        cmd.env(var, "sk-only-key");
        let out = run(cmd).await;
        assert_eq!(out.code, Some(0), "{out:?}");
        let provider = match wire {
            Wire::Anthropic => "anthropic",
            _ => "openai",
        };
        let source = format!("(default for {provider}, from {var})");
        let line = |key: &str| {
            out.stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(key))
                .unwrap_or_else(|| panic!("no {key} line: {}", out.stdout))
                .to_owned()
        };
        let model_line = line("model");
        assert!(model_line.contains(model), "{model_line}");
        assert!(model_line.ends_with(&source), "{model_line}");
        let provider_line = line("provider");
        assert!(provider_line.contains(provider), "{provider_line}");
        assert!(!out.stdout.contains("sk-only-key"), "{}", out.stdout);
        server.shutdown().await;
    }
}

// ---- 2. Everything missing, in one message ----

/// A usage error: exit 2, one line on stderr naming every part, nothing on
/// stdout.
fn assert_one_line_naming(out: &support::Run, parts: &[&str]) {
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    for part in parts {
        assert!(
            out.stderr.contains(part),
            "stderr should name {part}: {}",
            out.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_missing_is_named_in_one_message_with_the_fix() {
    let world = World::new();
    let cwd = world.project.path().to_str().unwrap().to_owned();

    // Nothing at all.
    let out = run(world.bare(&["exec", "--cwd", &cwd, "Hi"])).await;
    assert_one_line_naming(
        &out,
        &[
            "no provider",
            "no model",
            "$ANTHROPIC_API_KEY",
            "$OPENAI_API_KEY",
            "Fix:",
            "--provider",
            "--model",
        ],
    );

    // Both keys: Riot does not pick one.
    let mut cmd = world.bare(&["exec", "--cwd", &cwd, "Hi"]);
    cmd.env("ANTHROPIC_API_KEY", "a").env("OPENAI_API_KEY", "o");
    let out = run(cmd).await;
    assert_one_line_naming(
        &out,
        &["no provider", "no model", "both", "--provider", "--model"],
    );
    assert!(!out.stderr.contains("not set"), "{}", out.stderr);

    // A provider but neither a model nor its key (a remote endpoint).
    let out = run(world.bare(&[
        "exec",
        "--cwd",
        &cwd,
        "--provider",
        "anthropic",
        "--base-url",
        "https://api.anthropic.invalid",
        "Hi",
    ]))
    .await;
    assert_one_line_naming(
        &out,
        &["no model", "no API key", "$ANTHROPIC_API_KEY", "--model"],
    );
    assert!(!out.stderr.contains("no provider"), "{}", out.stderr);

    // A provider with its key but no model: no model is assumed.
    let mut cmd = world.bare(&["exec", "--cwd", &cwd, "--provider", "anthropic", "Hi"]);
    cmd.env("ANTHROPIC_API_KEY", "a");
    let out = run(cmd).await;
    assert_one_line_naming(&out, &["no model", "--model"]);
    assert!(!out.stderr.contains("API key"), "{}", out.stderr);

    assert!(
        transcripts(&world).is_empty(),
        "configuration errors leave no session: {:?}",
        transcripts(&world)
    );
}

// ---- 3. An anthropic base URL ending in /v1 ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_base_url_ending_in_v1_is_normalised_and_said_so() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![Reply::Text("Hello.".into())]).await;
    let cwd = world.project.path().to_str().unwrap().to_owned();
    let base = format!("{}/v1", server.base_url());
    let flags = [
        "--cwd",
        cwd.as_str(),
        "--provider",
        "anthropic",
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
    ];
    let out = run(world.bare(&[&["exec"][..], &flags, &["Hi"]].concat())).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/messages");

    let out = run(world.bare(&[&["config", "show"][..], &flags].concat())).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let expected = format!(
        "trailing /v1 is dropped because the anthropic request path /v1/messages already starts with it: requests go to {}/v1/messages",
        server.base_url()
    );
    assert!(out.stdout.contains(&expected), "{}", out.stdout);
    let out = run(world.bare(&[&["config", "show", "--json"][..], &flags].concat())).await;
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(
        json["notes"][0].as_str().unwrap().contains(&expected),
        "{json}"
    );
    server.shutdown().await;
}

// ---- 4. A refused key ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_not_retried_and_the_message_names_the_variable() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let body = json!({"type": "error", "error": {"type": "authentication_error",
                      "message": "invalid x-api-key"}});
    let refused = Reply::Error {
        status: 401,
        body: body.to_string(),
        headers: Vec::new(),
    };
    let server = server(wire, vec![refused, Reply::Text("never sent".into())]).await;
    let mut cmd = world.exec(&server, wire, &["Hi"]);
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-wrong-key-1234");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(server.requests().len(), 1, "exactly one request: no retry");
    assert_eq!(server.remaining(), 1);
    assert!(
        out.stderr.contains(
            "the endpoint refused the API key from $ANTHROPIC_API_KEY (invalid x-api-key)"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("retry"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("sk-ant-wrong-key-1234"),
        "{}",
        out.stderr
    );
    server.shutdown().await;
}

// ---- 5. --continue and --resume keep the session's endpoint ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_resume_reuse_the_sessions_provider_base_url_and_model() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let replies = ["First.", "Second.", "Third.", "Fourth."]
        .map(|t| Reply::Text(t.into()))
        .to_vec();
    let server = server(wire, replies).await;
    let cwd = world.project.path().to_str().unwrap().to_owned();
    let base = server.base_url();
    let first = run(world.bare(&[
        "exec",
        "--cwd",
        &cwd,
        "--provider",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "first-model",
        "--output-format",
        "json",
        "One",
    ]))
    .await;
    assert_eq!(first.code, Some(0), "{first:?}");
    let id = first.json()["session_id"].as_str().unwrap().to_owned();

    // No provider, base URL or model given: the session's are used (the
    // endpoint is loopback, so no key is needed either).
    let out = run(world.bare(&["exec", "--cwd", &cwd, "--continue", "Two"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Second.\n");
    let out = run(world.bare(&["exec", "--cwd", &cwd, "--resume", &id, "Three"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    // A key in the environment does not pull the session to its default
    // provider; a flag does override the model.
    let mut cmd = world.bare(&[
        "exec",
        "--cwd",
        &cwd,
        "--continue",
        "--model",
        "other-model",
        "Four",
    ]);
    cmd.env("OPENAI_API_KEY", "sk-unused");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    let models: Vec<Value> = bodies(&server).iter().map(|b| b["model"].clone()).collect();
    assert_eq!(
        models,
        ["first-model", "first-model", "first-model", "other-model"]
    );
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.path == "/v1/messages"));
    let sessions = transcripts(&world);
    assert_eq!(sessions, [format!("{id}.jsonl")], "one session throughout");
    server.shutdown().await;
}

// ---- 6. Sessions: dates, no empty ones, a stopped prompt kept ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_prints_dates_and_the_json_keeps_its_fields() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server, wire, &["Tidy the notes"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    let out = run(world.bare(&["sessions", "list"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let line = out.stdout.lines().next().unwrap();
    let fields: Vec<&str> = line.split("  ").collect();
    let when = fields[1];
    // `2026-12-01 12:34 UTC`
    let shape: String = when
        .chars()
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "9999-99-99 99:99 UTC", "{line}");
    // The mock model has no price: its cost is unknown, a dash, not $0.
    assert!(line.ends_with("2 messages  —  Tidy the notes"), "{line}");
    assert!(
        !line
            .split_whitespace()
            .any(|w| w.len() >= 12 && w.chars().all(|c| c.is_ascii_digit())),
        "no epoch milliseconds: {line}"
    );

    let out = run(world.bare(&["sessions", "list", "--json"])).await;
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    let row = &rows[0];
    assert!(
        row["updated_ms"].as_u64().unwrap() > 1_700_000_000_000,
        "{row}"
    );
    assert!(row["created_ms"].as_u64().is_some(), "{row}");
    assert_eq!(row["cost_usd"], Value::Null, "{row}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_shows_what_each_session_cost() {
    let world = World::new();
    // The user's settings price the mock model, per million tokens.
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"models": {"mock-model": {"price": {"input": 100, "output": 200, "cache_write": 125, "cache_read": 10}}}}"#,
    )
    .unwrap();
    let wire = Wire::Anthropic;
    let server = server(
        wire,
        vec![Reply::Text("Done.".into()), Reply::Text("Again.".into())],
    )
    .await;
    let out = run(world.exec(&server, wire, &["Tidy the notes"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let out = run(world.exec(&server, wire, &["--continue", "And again"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    // Each request reports 10 input and 5 output tokens: 10 × 100 + 5 × 200
    // per million, twice — the session's total across both runs.
    let expected = 2.0 * (10.0 * 100.0 + 5.0 * 200.0) / 1e6;
    let out = run(world.bare(&["sessions", "list", "--json"])).await;
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    let cost = rows[0]["cost_usd"].as_f64().expect("a known cost");
    assert!((cost - expected).abs() < 1e-12, "{}", rows[0]);
    let out = run(world.bare(&["sessions", "list"])).await;
    let line = out.stdout.lines().next().unwrap();
    assert!(
        line.ends_with("4 messages  $0.0040  Tidy the notes"),
        "{line}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fails_before_its_first_prompt_leaves_no_session() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(wire, Vec::new()).await;
    // An unknown command fails the run before anything is sent.
    let out = run(world.exec(&server, wire, &["/no-such-command"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("Unknown command"), "{}", out.stderr);
    // A built-in command answers without a prompt either.
    let out = run(world.exec(&server, wire, &["/help"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(server.requests().is_empty());
    assert!(transcripts(&world).is_empty(), "{:?}", transcripts(&world));
    let out = run(world.bare(&["sessions", "list"])).await;
    assert_eq!(out.stdout, "No sessions yet.\n", "{out:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_stopped_before_any_reply_is_kept_and_marked_interrupted() {
    let world = World::new();
    let wire = Wire::Anthropic;
    // The reply starts and then nothing comes.
    let silent = Reply::Stall(frame(
        wire,
        &[
            json!({"type": "message_start", "message": {"id": "msg_silent", "type": "message",
            "role": "assistant", "model": "mock-model", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ],
    ));
    let server = server(wire, vec![silent]).await;
    let args = ["--output-format", "events", "Rename the parser module"];
    let mut riot = Running::spawn(world.exec(&server, wire, &args));
    let mut lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
    lines_until(&mut lines, |e| e["type"] == "request_start").await;
    support::wait_until("the request to reach the mock", || {
        server.requests().len() == 1
    })
    .await;
    assert!(signal("INT", i64::from(riot.pid())));
    let rest = lines_until(&mut lines, |e| e["type"] == "result").await;
    let out = riot.finish().await;
    assert_eq!(out.code, Some(130), "{out:?}");
    let id = rest.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let out = run(world.bare(&["sessions", "show", &id])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout.contains(
            "> Rename the parser module\n  (interrupted before any reply; not sent to the model again)"
        ),
        "{}",
        out.stdout
    );
    let out = run(world.bare(&["sessions", "list"])).await;
    assert!(
        out.stdout.trim_end().ends_with("Rename the parser module"),
        "the stopped prompt is the title: {}",
        out.stdout
    );
    server.shutdown().await;
}

// ---- 7. A reader that goes away early ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_show_into_a_closed_pipe_ends_quietly_with_exit_0() {
    let world = World::new();
    // A transcript far longer than a pipe's buffer, so riot is still
    // writing when the reader goes away.
    let sessions = world.home.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut text = json!({"type": "meta", "id": "ses_long", "cwd": "/p", "model": "m",
                          "created_ms": 1_764_590_000_000_u64})
    .to_string();
    for i in 0..3_000 {
        text.push('\n');
        let message = json!({"type": "message", "at_ms": 1_764_590_000_001_u64 + i,
            "message": {"role": "user", "id": format!("u{i}"),
                        "content": [{"type": "text", "text": format!("line {i} {}", "x".repeat(100))}]}});
        text.push_str(&message.to_string());
    }
    text.push('\n');
    std::fs::write(sessions.join("ses_long.jsonl"), text).unwrap();

    for args in [
        &["sessions", "show", "ses_long"][..],
        &["sessions", "show", "ses_long", "--json"][..],
    ] {
        let mut cmd = world.bare(args);
        cmd.stdout(Stdio::piped());
        let mut riot = Running::spawn(cmd);
        let stdout = riot.child.stdout.take().unwrap();
        // `| head -1`: read one line, then close the pipe.
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(support::PATIENCE, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(first.contains("ses_long"), "{first}");
        drop(lines);
        let out = riot.finish().await;
        assert_eq!(out.code, Some(0), "{args:?}: {out:?}");
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert_eq!(out.stderr, "", "{args:?}");
    }
}

// ---- 8. `~` in tool paths ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tilde_path_reads_the_home_directory_and_the_check_sees_it() {
    let world = World::new();
    let person = tempfile::tempdir().unwrap();
    let home = person.path().canonicalize().unwrap();
    std::fs::write(home.join("x.txt"), "from the home directory\n").unwrap();
    // A decoy where the old bug looked.
    std::fs::create_dir(world.project.path().join("~")).unwrap();
    std::fs::write(world.project.path().join("~/x.txt"), "decoy\n").unwrap();
    let wire = Wire::Anthropic;
    let read = tool_call("call_read_1", "Read", json!({"file_path": "~/x.txt"}));
    let server = server(wire, vec![read, Reply::Text("Read it.".into())]).await;
    let mut cmd = world.exec(&server, wire, &["Read ~/x.txt"]);
    cmd.env("HOME", &home);
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = tool_result(&bodies(&server)[1], "call_read_1");
    let text = result.to_string();
    assert!(text.contains("from the home directory"), "{text}");
    assert!(!text.contains("decoy"), "{text}");

    // The permission chain judges the real path.
    let mut cmd = world.bare(&[
        "permissions",
        "check",
        "--tool",
        "Read",
        "--input",
        r#"{"file_path": "~/.ssh/id_rsa"}"#,
    ]);
    cmd.env("HOME", &home);
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["decision"], "ask", "{report}");
    assert_eq!(report["reason"]["kind"], "safety", "{report}");
    let real = home.join(".ssh/id_rsa");
    assert!(
        report.to_string().contains(real.to_str().unwrap()),
        "{report}"
    );
    server.shutdown().await;
}

/// Every command says in words what is wrong with `--cwd`, as `riot serve`
/// does, never a bare OS error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_cwd_is_named_in_words_by_every_command() {
    let world = World::new();
    let missing = world.project.path().join("no-such-dir");
    let file = world.project.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    for (dir, why) in [(&missing, "does not exist"), (&file, "is not a directory")] {
        let dir = dir.to_str().unwrap();
        for args in [
            vec!["exec", "--cwd", dir, "hi"],
            vec!["config", "show", "--cwd", dir],
        ] {
            let out = run(world.bare(&args)).await;
            assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
            assert!(
                out.stderr.contains(&format!("--cwd {dir} {why}")),
                "{args:?}: {}",
                out.stderr
            );
        }
    }
}
