//! Black-box tests of `riot exec` (docs/interfaces.md "The `riot` binary"): the
//! built binary against the strict in-process mock model server, each in a
//! fresh project and `RIOT_HOME`. The mock rejects what the real APIs
//! reject (unpaired tool calls above all), so an exit 0 also means every
//! request was valid.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, RoleRule, Script, Wire};
use serde_json::{Value, json};
use support::{
    GroupGuard, NOTES, NOTES_NUMBERED, Running, World, assert_paired, bodies, conversation,
    lines_until, only_session, pgid_of, processes_with, provider, run, signal,
    stalled_partial_answer, tool_call, tool_calls, transcript_messages, wait_until,
};
use tokio::io::{AsyncBufReadExt, BufReader};

const ANSWER: &str = "The notes say alpha and beta.";

fn read_notes() -> Reply {
    tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"}))
}

async fn server(wire: Wire, replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(wire, replies)).await.unwrap()
}

// ---- 1. A two-turn Read task in each wire format ----

/// Runs the Read task; returns the second request's body.
async fn read_task(wire: Wire) -> Value {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let server = server(wire, vec![read_notes(), Reply::Text(ANSWER.into())]).await;
    let out = run(world.exec(&server, wire, &["Summarize notes.txt"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!("{ANSWER}\n"),
        "stdout is the final text only"
    );
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2, "one request per model turn");
    bodies[1].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_task_anthropic_returns_numbered_lines_paired_with_the_call() {
    let body = read_task(Wire::Anthropic).await;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        conversation(messages),
        [
            "user: Summarize notes.txt",
            "assistant: tool_use call_read_1",
            "user: tool_result call_read_1"
        ]
    );
    let result = &messages[2]["content"][0];
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": NOTES_NUMBERED}])
    );
    assert_ne!(result["is_error"], true);
    assert_eq!(
        messages[1]["content"][0]["input"],
        json!({"file_path": "notes.txt"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_task_openai_returns_numbered_lines_paired_with_the_call() {
    let body = read_task(Wire::Openai).await;
    let messages: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["tool_calls"],
        json!([{"id": "call_read_1", "type": "function",
                "function": {"name": "Read", "arguments": "{\"file_path\":\"notes.txt\"}"}}])
    );
    assert_eq!(
        *messages[2],
        json!({"role": "tool", "tool_call_id": "call_read_1", "content": NOTES_NUMBERED})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_task_openai_responses_returns_numbered_lines_paired_with_the_call() {
    let body = read_task(Wire::OpenaiResponses).await;
    let items: Vec<&Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "developer")
        .collect();
    assert_eq!(items.len(), 3, "{items:#?}");
    assert_eq!(items[0]["role"], "user");
    assert_eq!(items[1]["type"], "function_call");
    assert_eq!(items[1]["call_id"], "call_read_1");
    assert_eq!(items[1]["name"], "Read");
    assert_eq!(
        *items[2],
        json!({"type": "function_call_output", "call_id": "call_read_1", "output": NOTES_NUMBERED})
    );
}

// ---- 2. Write: denied in default mode, allowed with accept-edits ----

fn write_out() -> Reply {
    tool_call(
        "call_write_1",
        "Write",
        json!({"file_path": "out.txt", "content": "hello\nwörld\n"}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_is_denied_in_default_mode_and_the_model_is_told_why() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(
        wire,
        vec![write_out(), Reply::Text("I could not write it.".into())],
    )
    .await;
    let out = run(world.exec(&server, wire, &["Create out.txt"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !world.project.path().join("out.txt").exists(),
        "a denied Write must not run"
    );
    let second = &bodies(&server)[1];
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "call_write_1");
    assert_eq!(result["is_error"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Permission to run Write (")
            && text.contains("was denied")
            && text.contains("nobody can answer permission questions"),
        "the model must learn it was denied and why: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_is_allowed_with_accept_edits() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![write_out(), Reply::Text("Written.".into())]).await;
    let args = ["--permission-mode", "accept-edits", "Create out.txt"];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Written.\n");
    let bytes = std::fs::read(world.project.path().join("out.txt")).unwrap();
    assert_eq!(bytes, "hello\nwörld\n".as_bytes());
    let result = &bodies(&server)[1]["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "call_write_1");
    assert_ne!(result["is_error"], true, "{result}");
}

// ---- 3. Output formats ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_one_object_with_the_interfaces_keys() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![read_notes(), Reply::Text(ANSWER.into())]).await;
    let out = run(world.exec(
        &server,
        wire,
        &["--output-format", "json", "Summarize notes.txt"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout.lines().count(),
        1,
        "exactly one line: {}",
        out.stdout
    );
    let result = out.json();
    let mut keys: Vec<&str> = result
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "duration_api_ms",
            "duration_ms",
            "is_error",
            "num_turns",
            "permission_denials",
            "reason",
            "result",
            "session_id",
            "side_usage",
            "subtype",
            "total_cost_usd",
            "type",
            "usage",
            "uuid",
        ]
    );
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["reason"], "completed");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], ANSWER);
    assert_eq!(result["num_turns"], json!(server.requests().len()));
    assert_eq!(result["num_turns"], 2);
    // The mock reports 10 uncached input and 5 output tokens per reply.
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 20, "output_tokens": 10,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    );
    assert_eq!(
        result["side_usage"],
        json!({"input_tokens": 0, "output_tokens": 0,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}),
        "no side requests"
    );
    assert_eq!(result["permission_denials"], json!([]));
    assert!(result["duration_api_ms"].is_u64());
    assert!(
        result["duration_api_ms"].as_u64() <= result["duration_ms"].as_u64(),
        "{result}"
    );
    assert!(result["duration_ms"].is_u64());
    let id = result["session_id"].as_str().unwrap();
    assert_eq!(
        only_session(&world),
        id,
        "session_id names the saved transcript"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_prints_every_event_then_the_result() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let wire = Wire::Openai;
    let server = server(wire, vec![read_notes(), Reply::Text(ANSWER.into())]).await;
    let args = ["--output-format", "events", "Summarize notes.txt"];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    // Deltas, usage and progress may come in any number; the skeleton may not.
    let skeleton: Vec<String> = events
        .iter()
        .filter(|e| !matches!(e["type"].as_str(), Some("delta" | "usage" | "progress")))
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => format!("message {}", e["message"]["role"].as_str().unwrap()),
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(
        skeleton,
        [
            "message user",
            "request_start",
            "message assistant",
            "tool_started",
            "message user",
            "request_start",
            "message assistant",
            "done",
            "result",
        ]
    );
    assert_eq!(
        events[0]["message"]["content"],
        json!([{"type": "text", "text": "Summarize notes.txt"}])
    );
    let done = &events[events.len() - 2];
    assert_eq!(done["reason"], json!({"type": "completed"}));
    let result = events.last().unwrap();
    assert_eq!(result["result"], ANSWER);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["session_id"].as_str().unwrap(), only_session(&world));
}

// ---- 4. Exit codes (0 is asserted above) ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_retryable_provider_error_exits_1_naming_the_servers_message() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
                      "message": "messages.0.content: the mock refuses this prompt"}});
    let error = Reply::Error {
        status: 400,
        body: body.to_string(),
        headers: Vec::new(),
    };
    let server = server(wire, vec![error]).await;
    let out = run(world.exec(&server, wire, &["--output-format", "json", "Hello"])).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("the mock refuses this prompt"),
        "stderr must name the server's message: {}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
    let result = out.json();
    assert_eq!(result["reason"], "error");
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
}

/// A usage error: exit 2, one line on stderr, nothing on stdout.
fn assert_usage_error(out: &support::Run, names: &str) {
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(out.stdout, "", "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
    assert!(
        out.stderr.contains(names),
        "stderr should name {names}: {}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2_with_a_one_line_fix() {
    let world = World::new();
    let wire = Wire::Openai;
    let server = server(wire, Vec::new()).await;
    let cwd = world.project.path().to_str().unwrap();
    let base = server.base_url();

    // No model configured.
    let out = run(world.bare(&[
        "exec",
        "--cwd",
        cwd,
        "--provider",
        "openai",
        "--base-url",
        &base,
        "Hi",
    ]))
    .await;
    assert_usage_error(&out, "--model");

    // Unknown provider, from the environment (the flag is checked by clap).
    let mut cmd = world.bare(&[
        "exec",
        "--cwd",
        cwd,
        "--base-url",
        &base,
        "--model",
        "m",
        "Hi",
    ]);
    cmd.env("RIOT_PROVIDER", "bogus");
    let out = run(cmd).await;
    assert_usage_error(&out, "unknown provider `bogus`");
    let out = run(world.bare(&["exec", "--provider", "bogus", "--model", "m", "Hi"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("openai-responses"),
        "lists the valid values: {}",
        out.stderr
    );

    // Resuming a session that does not exist.
    let out = run(world.exec(&server, wire, &["--resume", "ses_doesnotexist", "Hi"])).await;
    assert_usage_error(&out, "ses_doesnotexist");

    assert!(
        server.requests().is_empty(),
        "usage errors never reach the model"
    );
}

/// `riot exec` against the real OpenAI endpoint, with every HTTPS
/// connection sent through `proxy` so an attempt is seen, not made.
fn openai_through(
    world: &World,
    proxy: &std::net::TcpListener,
    key: &str,
) -> tokio::process::Command {
    let cwd = world.project.path().to_str().unwrap();
    let args = [
        "exec",
        "--cwd",
        cwd,
        "--provider",
        "openai",
        "--base-url",
        "https://api.openai.com/v1",
        "--model",
        "gpt-test",
        "Hi",
    ];
    let mut cmd = world.bare(&args);
    let proxy = format!("http://{}", proxy.local_addr().unwrap());
    for var in ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        cmd.env(var, &proxy);
    }
    cmd.env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("OPENAI_API_KEY", key);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_key_variable_exits_2_before_any_network_use() {
    let world = World::new();
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let out = run(openai_through(&world, &proxy, "")).await;
    assert_usage_error(&out, "OPENAI_API_KEY");
    // Any connection riot made is queued by now.
    let attempt = proxy.accept();
    assert!(
        attempt
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "riot connected before checking the key: {attempt:?}"
    );

    // The probe works: with a key, the same command does try to connect.
    let _riot = Running::spawn(openai_through(&world, &proxy, "sk-test"));
    let mut stream = None;
    wait_until("a connection through the proxy", || {
        stream = proxy.accept().ok().map(|(s, _)| s);
        stream.is_some()
    })
    .await;
    let mut stream = stream.unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(support::PATIENCE)).unwrap();
    let mut head = [0u8; 26];
    std::io::Read::read_exact(&mut stream, &mut head).unwrap();
    assert_eq!(&head, b"CONNECT api.openai.com:443");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_exits_3_when_the_model_keeps_calling_tools() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let wire = Wire::Anthropic;
    let again = tool_call("call_read_2", "Read", json!({"file_path": "notes.txt"}));
    let server = server(wire, vec![read_notes(), again]).await;
    let args = [
        "--max-turns",
        "1",
        "--output-format",
        "json",
        "Keep reading",
    ];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(3), "{out:?}");
    assert_eq!(
        server.requests().len(),
        1,
        "no request after the last allowed turn"
    );
    let result = out.json();
    assert_eq!(result["reason"], "max_turns");
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["num_turns"], 1);
    // The allowed turn's tool ran and its result was saved.
    let saved = transcript_messages(&world.transcript(result["session_id"].as_str().unwrap()));
    assert_eq!(
        conversation(&saved),
        [
            "user: Keep reading",
            "assistant: tool_use call_read_1",
            "user: tool_result call_read_1"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_a_stall_exits_130_and_saves_a_paired_session() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![read_notes(), stalled_partial_answer()]).await;
    let args = ["--output-format", "events", "Summarize notes.txt"];
    let mut riot = Running::spawn(world.exec(&server, wire, &args));
    let mut lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
    lines_until(&mut lines, |e| {
        e["type"] == "delta" && e["delta"]["text"] == "Partial answer"
    })
    .await;
    assert_eq!(server.requests().len(), 2);
    assert!(signal("INT", i64::from(riot.pid())));
    let rest = lines_until(&mut lines, |e| e["type"] == "result").await;
    let out = riot.finish().await;
    assert_eq!(out.code, Some(130), "{out:?}");
    let result = rest.last().unwrap();
    assert_eq!(result["reason"], "aborted");
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);

    let saved = transcript_messages(&world.transcript(result["session_id"].as_str().unwrap()));
    assert_eq!(
        conversation(&saved),
        [
            "user: Summarize notes.txt",
            "assistant: tool_use call_read_1",
            "user: tool_result call_read_1",
            "assistant: Partial answer",
        ]
    );
    assert_eq!(saved[3]["interrupted"], true, "{:#?}", saved[3]);
    assert_paired(&saved);
    server.shutdown().await;
}

// ---- 5. Resume and continue ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_sends_the_earlier_conversation_before_the_new_prompt() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let replies = vec![
        Reply::Text("First answer.".into()),
        Reply::Text("Second answer.".into()),
    ];
    let server = server(wire, replies).await;
    let first = run(world.exec(
        &server,
        wire,
        &["--output-format", "json", "First question"],
    ))
    .await;
    assert_eq!(first.code, Some(0), "{first:?}");
    let id = first.json()["session_id"].as_str().unwrap().to_owned();

    let args = [
        "--output-format",
        "json",
        "--resume",
        id.as_str(),
        "Second question",
    ];
    let second = run(world.exec(&server, wire, &args)).await;
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(
        second.json()["session_id"],
        id.as_str(),
        "a resumed session keeps its id"
    );
    assert_eq!(second.json()["result"], "Second answer.");

    let bodies = bodies(&server);
    assert_eq!(
        conversation(bodies[1]["messages"].as_array().unwrap()),
        [
            "user: First question",
            "assistant: First answer.",
            "user: Second question"
        ]
    );
    assert_eq!(
        bodies[1]["system"], bodies[0]["system"],
        "the system prompt is reused byte for byte"
    );
    assert_eq!(
        only_session(&world),
        id,
        "resume appends to the same transcript"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_picks_the_latest_session_of_this_directory() {
    let world = World::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let wire = Wire::Anthropic;
    let replies = ["Answer A1.", "Answer A2.", "Answer B.", "Answer A3."]
        .map(|t| Reply::Text(t.into()))
        .to_vec();
    let server = server(wire, replies).await;
    let json = ["--output-format", "json"];
    for prompt in ["Question A1", "Question A2"] {
        let out = run(world.exec(&server, wire, &[&json[..], &[prompt]].concat())).await;
        assert_eq!(out.code, Some(0), "{out:?}");
    }
    // The newest session overall belongs to another directory.
    let out = run(world.exec_in(elsewhere.path(), &server, wire, &["Question B"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");

    let out = run(world.exec(&server, wire, &["--continue", "Question A3"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Answer A3.\n");
    let last = bodies(&server).pop().unwrap();
    assert_eq!(
        conversation(last["messages"].as_array().unwrap()),
        [
            "user: Question A2",
            "assistant: Answer A2.",
            "user: Question A3"
        ]
    );
}

// ---- 6. kill -9 during a long Bash call ----

/// Starts `riot exec` running Bash `sleep`, waits until the sleep runs,
/// and SIGKILLs riot. Returns the world, the server, the session id, the
/// sleep's pid and a guard on its process group.
async fn kill_9_during_bash() -> (World, MockServer, String, i64, GroupGuard) {
    let world = World::new();
    let wire = Wire::Anthropic;
    // A sleep no other process runs, as a grandchild of riot (bash -c with
    // two commands forks it).
    let sleep = format!("sleep 120.{}", std::process::id());
    let command = format!("{sleep}; echo slept");
    let bash = tool_call(
        "call_bash_1",
        "Bash",
        json!({"command": command, "description": "Wait"}),
    );
    // Strict about roles, like endpoints that refuse two user messages in a
    // row: the resumed request must merge the filled result and the prompt.
    let server = MockServer::start(Script::new(wire, vec![bash]).roles(RoleRule::Alternate))
        .await
        .unwrap();
    let args = [
        "--permission-mode",
        "bypass",
        "--output-format",
        "events",
        "Run the slow command",
    ];
    let mut riot = Running::spawn(world.exec(&server, wire, &args));
    let mut lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
    lines_until(&mut lines, |e| e["type"] == "tool_started").await;
    let mut pid = None;
    wait_until("the sleep to start", || {
        pid = processes_with(&sleep).into_iter().find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0"))
        });
        pid.is_some()
    })
    .await;
    let pid = pid.unwrap();
    let guard = GroupGuard { pgid: pgid_of(pid) };
    assert!(signal("KILL", i64::from(riot.pid())));
    let status = tokio::time::timeout(support::PATIENCE, riot.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), None, "killed by a signal");
    let id = only_session(&world);
    (world, server, id, pid, guard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_during_bash_the_session_shows_and_resumes_with_valid_pairing() {
    let (world, server, id, _sleep, _guard) = kill_9_during_bash().await;

    let out = run(world.bare(&["sessions", "show", &id])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .starts_with(&format!("session {id}  model mock-model")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("> Run the slow command"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("→ Bash"), "{}", out.stdout);

    server.push(Reply::Text("Resumed after the crash.".into()));
    let out = run(world.exec(&server, Wire::Anthropic, &["--resume", &id, "Go on"])).await;
    assert_eq!(
        out.code,
        Some(0),
        "the strict mock accepted the resumed history: {out:?}"
    );
    assert_eq!(out.stdout, "Resumed after the crash.\n");
    let resumed = bodies(&server).pop().unwrap();
    let messages = resumed["messages"].as_array().unwrap();
    assert_paired(messages);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user"],
        "the filled result and the new prompt are one user message"
    );
    assert_eq!(
        conversation(messages),
        [
            "user: Run the slow command",
            "assistant: tool_use call_bash_1",
            "user: tool_result call_bash_1",
            "user: Go on",
        ]
    );
    let filled = &messages[2]["content"][0];
    assert_eq!(
        filled["is_error"], true,
        "the cut call is reported as not completed: {filled}"
    );
    assert_paired(&transcript_messages(&world.transcript(&id)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_bash_leaves_no_tool_process_running() {
    let (_world, _server, _id, sleep, _guard) = kill_9_during_bash().await;
    // docs/design.md §2: a SIGKILLed kernel does not leave its tool
    // processes running. Half of the 120 s the sleep would last.
    let gone = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while !support::is_gone(sleep) {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        gone.is_ok(),
        "the Bash tool's `sleep` (pid {sleep}) outlived the SIGKILLed riot"
    );
}

// ---- 7. The session list ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_json_lists_both_runs_newest_first() {
    let world = World::new();
    let wire = Wire::Openai;
    let server = server(
        wire,
        vec![Reply::Text("One.".into()), Reply::Text("Two.".into())],
    )
    .await;
    let mut ids = Vec::new();
    for prompt in ["The first task", "The second task"] {
        let out = run(world.exec(&server, wire, &["--output-format", "json", prompt])).await;
        assert_eq!(out.code, Some(0), "{out:?}");
        ids.push(out.json()["session_id"].as_str().unwrap().to_owned());
    }
    let out = run(world.bare(&["sessions", "list", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let list: Value = serde_json::from_str(&out.stdout).unwrap();
    let rows = list.as_array().unwrap();
    let summary: Vec<(&str, &str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap(),
                r["title"].as_str().unwrap(),
                r["messages"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (ids[1].as_str(), "The second task", 2),
            (ids[0].as_str(), "The first task", 2)
        ]
    );
    let cwd = world.cwd();
    for r in rows {
        assert_eq!(r["cwd"], cwd.to_str().unwrap());
        assert_eq!(r["model"], "mock-model");
    }
}

// ---- 8. Project settings cannot choose the modes that do not ask ----

/// A Bash call that only a mode letting calls through without asking runs.
fn touch_call() -> Reply {
    tool_call(
        "call_touch_1",
        "Bash",
        json!({"command": "touch made-by-the-model", "description": "Create a file"}),
    )
}

fn project_settings(world: &World, text: &str) -> std::path::PathBuf {
    let dir = world.project.path().join(".riot");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), text).unwrap();
    world.cwd().join(".riot/settings.json")
}

/// The reported reproduction: a trusted project's settings asked for
/// unattended mode, confirmed, and got it in every later run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_settings_cannot_turn_on_unattended_mode() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let path = project_settings(
        &world,
        r#"{"unattended_confirmed": true, "permissions": {"default_mode": "unattended"}}"#,
    );
    let warnings = [
        format!(
            "riot: {}: ignored \"unattended_confirmed\" — only your own settings (settings.json in Riot's home) can confirm unattended mode, never a project's settings.",
            path.display()
        ),
        format!(
            "riot: {}: ignored \"permissions.default_mode\": \"unattended\" — project settings cannot choose unattended mode, trusted or not; only your own settings (settings.json in Riot's home, with \"unattended_confirmed\": true) can.",
            path.display()
        ),
    ];
    // Trusting the project, then a later run of the trusted project.
    for args in [
        &["--trust-project", "Make the file"][..],
        &["Make the file"],
    ] {
        let server = server(wire, vec![touch_call(), Reply::Text("Done.".into())]).await;
        let out = run(world.exec(&server, wire, args)).await;
        assert_eq!(out.code, Some(0), "{out:?}");
        for warning in &warnings {
            assert!(
                out.stderr.lines().any(|l| l == warning),
                "{args:?}: no `{warning}` in {}",
                out.stderr
            );
        }
        assert!(
            !out.stderr.contains("Permission mode is unattended"),
            "{}",
            out.stderr
        );
        assert!(
            !world.project.path().join("made-by-the-model").exists(),
            "{args:?}: the Bash call ran without asking"
        );
        let result = support::tool_result(&bodies(&server)[1], "call_touch_1");
        assert_eq!(result["is_error"], true, "{result}");
        assert!(
            result
                .to_string()
                .contains("nobody can answer permission questions in this session"),
            "nobody could answer, so the question became a denial: {result}"
        );
    }

    let out = run(world.bare(&["config", "show"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["permission", "mode", "default", "(default)"]),
        "{}",
        out.stdout
    );
    for warning in &warnings {
        let line = warning.replacen("riot: ", "warning: ", 1);
        assert!(
            out.stdout.lines().any(|l| l == line),
            "no `{line}` in {}",
            out.stdout
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_settings_cannot_choose_bypass_or_auto() {
    let wire = Wire::Anthropic;
    for mode in ["bypass", "auto"] {
        let world = World::new();
        let path = project_settings(
            &world,
            &format!(r#"{{"permissions": {{"default_mode": "{mode}"}}}}"#),
        );
        // Auto mode would ask the classifier first: a third request, which
        // this script does not answer.
        let server = server(wire, vec![touch_call(), Reply::Text("Done.".into())]).await;
        let out = run(world.exec(&server, wire, &["--trust-project", "Make the file"])).await;
        assert_eq!(out.code, Some(0), "{mode}: {out:?}");
        assert_eq!(out.stdout, "Done.\n", "{mode}");
        let warning = format!(
            "riot: {}: ignored \"permissions.default_mode\": \"{mode}\" — project settings cannot choose {mode} mode, trusted or not; only your own settings (settings.json in Riot's home), --permission-mode or $RIOT_PERMISSION_MODE can.",
            path.display()
        );
        assert!(
            out.stderr.lines().any(|l| l == warning),
            "{mode}: no `{warning}` in {}",
            out.stderr
        );
        assert_eq!(bodies(&server).len(), 2, "{mode}: no classifier request");
        assert!(
            !world.project.path().join("made-by-the-model").exists(),
            "{mode}: the Bash call ran without asking"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_own_settings_still_choose_unattended_mode() {
    let world = World::new();
    let wire = Wire::Anthropic;
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"unattended_confirmed": true, "permissions": {"default_mode": "unattended"}}"#,
    )
    .unwrap();
    // A trusted project's settings cannot take the confirmation back.
    project_settings(&world, r#"{"unattended_confirmed": false}"#);
    let server = server(wire, vec![touch_call(), Reply::Text("Done.".into())]).await;
    let out = run(world.exec(&server, wire, &["--trust-project", "Make the file"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(
            "riot: Permission mode is unattended: Riot will not ask before most actions."
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("ignored"), "{}", out.stderr);
    assert!(world.project.path().join("made-by-the-model").exists());
    let result = support::tool_result(&bodies(&server)[1], "call_touch_1");
    assert_ne!(result["is_error"], true, "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_projects_settings_still_choose_plan_mode() {
    let world = World::new();
    let path = project_settings(&world, r#"{"permissions": {"default_mode": "plan"}}"#);
    let out = run(world.bare(&["--trust-project", "config", "show", "--json"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let config: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(config["default_mode"]["value"], "plan", "{config}");
    assert_eq!(
        config["default_mode"]["source"],
        json!({"layer": "project", "path": path}),
        "{config}"
    );
    assert_eq!(config["warnings"], json!([]), "{config}");
}

// ---- 9. The text output, for a person ----

/// The lines of `stderr` from the one equal to `first`, as many as `want`
/// has; fails showing all of stderr when `first` is missing.
fn block_from<'a>(stderr: &'a str, first: &str, len: usize) -> Vec<&'a str> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == first)
        .unwrap_or_else(|| panic!("no line `{first}` in stderr:\n{stderr}"));
    lines[at..lines.len().min(at + len)].to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_calls_end_the_run_with_a_summary_naming_the_flags_that_allow_them() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let calls = tool_calls(&[
        (
            "call_test_1",
            "Bash",
            json!({"command": "cargo test", "description": "Run the test suite"}),
        ),
        (
            "call_write_1",
            "Write",
            json!({"file_path": "out.txt", "content": "hello\n"}),
        ),
    ]);
    let server = server(wire, vec![calls, Reply::Text("I could not do it.".into())]).await;
    let out = run(world.exec(&server, wire, &["Test and write"])).await;
    // The turn completed: denials alone do not fail the run.
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "I could not do it.\n");
    let nobody = "denied (it needs approval; see the end)";
    let stderr: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        stderr[stderr.len() - 5..],
        [
            format!("✗ Run the test suite (cargo test): {nobody}").as_str(),
            format!("✗ Write out.txt: {nobody}").as_str(),
            "riot: 2 calls were denied because nobody can answer permission questions in `riot exec`:",
            "  • Bash `cargo test` — allow it with --allow 'Bash(cargo test *)'",
            "  • Write out.txt — allow it with --allow 'Edit(./out.txt)' or --permission-mode accept-edits",
        ],
        "{}",
        out.stderr
    );
    // The model-facing words stay with the model.
    assert!(!out.stderr.contains("Do not retry"), "{}", out.stderr);
    let result = support::tool_result(&bodies(&server)[1], "call_test_1");
    assert!(
        result.to_string().contains("Do not retry it"),
        "the model is still told in its own words: {result}"
    );
    assert!(!world.project.path().join("out.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flags_the_summary_names_do_allow_the_calls() {
    // The summary's advice, taken: the same calls now run.
    let world = World::new();
    let wire = Wire::Anthropic;
    let calls = tool_calls(&[
        (
            "call_echo_1",
            "Bash",
            json!({"command": "touch made-by-bash", "description": "Make a file"}),
        ),
        (
            "call_write_1",
            "Write",
            json!({"file_path": "out.txt", "content": "hello\n"}),
        ),
    ]);
    let server = server(
        wire,
        vec![
            calls.clone(),
            Reply::Text("Denied.".into()),
            calls,
            Reply::Text("Done.".into()),
        ],
    )
    .await;
    let first = run(world.exec(&server, wire, &["Make files"])).await;
    assert_eq!(first.code, Some(0), "{first:?}");
    let advice: Vec<&str> = first
        .stderr
        .lines()
        .filter_map(|l| l.split_once(" — allow it with ").map(|(_, flags)| flags))
        .collect();
    assert_eq!(
        advice,
        [
            "--allow 'Bash(touch made-by-bash *)'",
            "--allow 'Edit(./out.txt)' or --permission-mode accept-edits",
        ],
        "{}",
        first.stderr
    );
    // The first alternative of each, as a shell would pass them.
    let second = run(world.exec(
        &server,
        wire,
        &[
            "--allow",
            "Bash(touch made-by-bash *)",
            "--allow",
            "Edit(./out.txt)",
            "Make files",
        ],
    ))
    .await;
    assert_eq!(second.code, Some(0), "{second:?}");
    assert!(!second.stderr.contains("denied"), "{}", second.stderr);
    assert!(world.project.path().join("made-by-bash").exists());
    assert!(world.project.path().join("out.txt").exists());
}

/// Reads `src/lib.rs`, then replaces its middle line with three.
fn edit_replies() -> Vec<Reply> {
    vec![
        tool_call("call_read_1", "Read", json!({"file_path": "src/lib.rs"})),
        tool_call(
            "call_edit_1",
            "Edit",
            json!({"file_path": "src/lib.rs", "old_string": "old", "new_string": "new1\nnew2\nnew3"}),
        ),
        Reply::Text("Edited.".into()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_shows_a_diff_line_and_its_hunks_with_verbose() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let src = world.project.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let original = "line1\nold\nline3\n";
    std::fs::write(src.join("lib.rs"), original).unwrap();
    let mut replies = edit_replies();
    replies.extend(edit_replies());
    let server = server(wire, replies).await;
    let edits = ["--permission-mode", "accept-edits", "Edit it"];

    let out = run(world.exec(&server, wire, &edits)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Edited.\n");
    assert_eq!(
        std::fs::read_to_string(src.join("lib.rs")).unwrap(),
        "line1\nnew1\nnew2\nnew3\nline3\n"
    );
    assert_eq!(
        block_from(&out.stderr, "• Edit src/lib.rs  +3 −1", 2),
        ["• Edit src/lib.rs  +3 −1"],
        "no hunks without --verbose:\n{}",
        out.stderr
    );
    // Not a terminal: no status line, no control characters.
    assert!(
        !out.stderr.contains('\r') && !out.stderr.contains('\x1b'),
        "{:?}",
        out.stderr
    );

    std::fs::write(src.join("lib.rs"), original).unwrap();
    let verbose = [&["--verbose"][..], &edits].concat();
    let out = run(world.exec(&server, wire, &verbose)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        block_from(&out.stderr, "• Edit src/lib.rs  +3 −1", 8),
        [
            "• Edit src/lib.rs  +3 −1",
            "    @@ -1,3 +1,5 @@",
            "     line1",
            "    -old",
            "    +new1",
            "    +new2",
            "    +new3",
            "     line3",
        ],
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_shows_its_exit_code_and_last_lines_of_output() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let command = "seq 1 8; echo 'error: no such crate' >&2; exit 3";
    let bash = tool_call(
        "call_bash_1",
        "Bash",
        json!({"command": command, "description": "Build it"}),
    );
    let server = server(wire, vec![bash, Reply::Text("It failed.".into())]).await;
    let args = ["--permission-mode", "bypass", "Build"];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let head = format!("✗ Build it ({command}): exit code 3; last 5 of 9 lines:");
    assert_eq!(
        block_from(&out.stderr, &head, 6),
        [
            head.as_str(),
            "  │ 5",
            "  │ 6",
            "  │ 7",
            "  │ 8",
            "  │ error: no such crate",
        ],
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("[stderr]"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_help_documents_verbose_and_what_denials_do_to_the_exit_code() {
    let world = World::new();
    let out = run(world.bare(&["exec", "--help"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let help = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "-v, --verbose",
        "show the changed lines of every edit",
        "Denials alone do not change the exit code",
    ] {
        assert!(help.contains(needle), "no `{needle}` in:\n{}", out.stdout);
    }
}

/// `riot exec` arguments against the mock, for a pseudo-terminal.
fn exec_argv(world: &World, server: &MockServer, wire: Wire, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = [
        "exec",
        "--cwd",
        world.project.path().to_str().unwrap(),
        "--provider",
        provider(wire),
        "--base-url",
        &server.base_url(),
        "--model",
        "mock-model",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    all.extend(args.iter().map(|s| (*s).to_owned()));
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_a_status_line_shows_what_runs_and_is_gone_at_the_end() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let sleep = tool_call(
        "call_sleep_1",
        "Bash",
        json!({"command": "sleep 1", "description": "Wait a second"}),
    );
    let server = server(wire, vec![sleep, Reply::Text("Slept.".into())]).await;
    let argv = exec_argv(&world, &server, wire, &["Wait"]);
    let riot = world.pty(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    let (code, raw) = riot.finish().await;
    assert_eq!(code, 0, "{raw:?}");

    let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let drawn = |what: &str| -> Vec<char> {
        frames
            .iter()
            .copied()
            .filter(|f| raw.contains(&format!("\r\x1b[K{f} {what} · ")))
            .collect()
    };
    assert!(!drawn("thinking").is_empty(), "{raw:?}");
    // Redrawn while the command runs: the spinner moved.
    let running = drawn("running `sleep 1`");
    assert!(
        running.len() >= 2,
        "the status line was not redrawn while `sleep 1` ran: {running:?} in {raw:?}"
    );
    // What is left on the screen: the finished call and the answer, and
    // no trace of the status line.
    assert_eq!(
        screen_rows(&raw),
        ["• Wait a second (sleep 1)", "Slept."],
        "{raw:?}"
    );
}

/// The non-empty rows of the terminal's screen.
fn screen_rows(raw: &str) -> Vec<String> {
    support::pty::screen(raw)
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_prompt_at_a_terminal_exec_says_it_reads_stdin() {
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(wire, vec![Reply::Text("Hi there.".into())]).await;
    let argv = exec_argv(&world, &server, wire, &[]);
    let mut riot = world.pty(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    let hint = "riot: reading the prompt from stdin; end with Ctrl-D, or pass it as an argument";
    riot.wait_for(hint).await;
    assert!(server.requests().is_empty(), "it waits for the prompt");
    // A line, then Ctrl-D at the start of the next: end of input.
    riot.type_in(b"Say hi\n");
    riot.type_in(b"\x04");
    let (code, raw) = riot.finish().await;
    assert_eq!(code, 0, "{raw:?}");
    let rows = screen_rows(&raw);
    assert_eq!(rows.first().map(String::as_str), Some(hint), "{raw:?}");
    assert_eq!(
        rows.last().map(String::as_str),
        Some("Hi there."),
        "{raw:?}"
    );
    let body = &bodies(&server)[0];
    assert_eq!(
        conversation(body["messages"].as_array().unwrap()),
        ["user: Say hi\n"]
    );
}

/// Bash's output reaches the model as a screen showed it: colours
/// dropped, a progress line redrawn with carriage returns read as it was
/// left (the Terminal tool reads its terminals the same way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_reaches_the_model_as_plain_text() {
    let world = World::new();
    let command = r"printf '\033[1;32m   Compiling\033[0m riot\n 10%%\r 55%%\r100%%\n\033[31merror\033[0m: done\n'";
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call("call_1", "Bash", json!({"command": command})),
            Reply::Text("ok".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["--allow", "Bash", "build"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = support::tool_result(&bodies(&server)[1], "call_1");
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    assert!(
        text.starts_with("   Compiling riot\n100%\nerror: done"),
        "{text:?}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
}
