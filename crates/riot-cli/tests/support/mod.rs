//! Running the real `riot` binary against the strict mock model server:
//! a fresh project and `RIOT_HOME` per test, a child environment without
//! model keys or `RIOT_*` variables, and guards that stop every process a
//! test starts even when the test fails.

#![allow(dead_code)] // each test binary uses a different part

pub mod node_client;
pub mod pty;
pub mod ws;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use riot_testkit::{MockServer, RecordedRequest, Reply, Wire, frame};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

/// The `notes.txt` the Read tests put in the project.
pub const NOTES: &str = "alpha\nbeta ✓\n";
/// `NOTES` as Read numbers it (docs/interfaces.md: `cat -n` style).
pub const NOTES_NUMBERED: &str = "     1\talpha\n     2\tbeta ✓";

/// A reply that calls one tool.
pub fn tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
        text: String::new(),
    }
}

/// server-everything's entry point from `tests/mcp-servers` (installed by
/// `.ci/run`). Missing under `CI=true` fails the test; elsewhere the test
/// is skipped, loudly.
#[allow(dead_code, clippy::print_stderr)] // not every test binary uses it
pub fn everything_server(test: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../tests/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if node && path.is_file() {
        return Some(path.canonicalize().unwrap());
    }
    let why = "server-everything is not installed; run `npm ci --prefix tests/mcp-servers`";
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}");
    }
    eprintln!("\n!!! SKIPPING {test}: {why} !!!\n");
    None
}

/// The `tool_result` block answering `id` anywhere in a request body.
#[allow(dead_code)] // not every test binary uses it
pub fn tool_result(body: &Value, id: &str) -> Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {body}"))
}

/// The text of the `tool_result` answering `id` in a request body: its
/// string content, or its blocks' text with `[image]`-style marks for
/// the others.
#[allow(dead_code)] // not every test binary uses it
pub fn tool_result_text(body: &Value, id: &str) -> String {
    let result = tool_result(body, id);
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_owned(),
                Some(other) => format!("[{other}]"),
                None => String::new(),
            })
            .collect(),
        other => panic!("unexpected tool_result content {other}"),
    }
}

/// A reply starting one subagent of type `agent` with `prompt`.
#[allow(dead_code)] // not every test binary uses it
pub fn task_call(id: &str, agent: &str, prompt: &str) -> Reply {
    tool_call(id, "Task", task_input(agent, prompt))
}

/// The input of a Task call.
#[allow(dead_code)] // not every test binary uses it
pub fn task_input(agent: &str, prompt: &str) -> Value {
    json!({"description": "look around", "prompt": prompt, "subagent_type": agent})
}

/// A script whose model starts an `explore` agent in the background
/// (Task `call_bg`, prompt `CHILD-PROMPT find the notes`), then gives the
/// parent's `after` replies in order. The agent runs `command` through
/// Bash (`call_child_sleep`), then answers `answer`: its two requests are
/// told apart by the prompt and by that call.
#[allow(dead_code)] // not every test binary uses it
pub fn background_agent_script(
    command: &str,
    answer: &str,
    after: Vec<Reply>,
) -> riot_testkit::Script {
    let mut input = task_input("explore", "CHILD-PROMPT find the notes");
    input["run_in_background"] = json!(true);
    let mut replies = vec![tool_call("call_bg", "Task", input)];
    replies.extend(after);
    riot_testkit::Script::new(Wire::Anthropic, replies)
        .when_request_contains("call_child_sleep", Reply::Text(answer.into()))
        .when(
            "CHILD-PROMPT",
            tool_call(
                "call_child_sleep",
                "Bash",
                json!({"command": command, "description": "wait"}),
            ),
        )
}

/// An Anthropic reply that calls several tools at once.
#[allow(dead_code)] // not every test binary uses every helper
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Reply {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_mock_calls", "type": "message", "role": "assistant", "model": "mock-model", "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    ];
    for (index, (id, name, input)) in calls.iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
        events.push(json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    Reply::Events(events)
}

/// An Anthropic reply that streams the text "Partial answer", then goes
/// silent (the connection stays open).
pub fn stalled_partial_answer() -> Reply {
    Reply::Stall(frame(
        Wire::Anthropic,
        &[
            json!({"type": "message_start", "message": {"id": "msg_stall", "type": "message", "role": "assistant",
               "model": "mock-model", "content": [], "stop_reason": null,
               "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Partial answer"}}),
        ],
    ))
}

/// Long enough for a debug binary on a loaded two-core machine; only a
/// hang ever reaches it.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// The provider flag value of a wire.
pub fn provider(wire: Wire) -> &'static str {
    match wire {
        Wire::Anthropic => "anthropic",
        Wire::Openai => "openai",
        Wire::OpenaiResponses => "openai-responses",
    }
}

/// A fresh project directory and a fresh `RIOT_HOME`.
pub struct World {
    pub project: TempDir,
    pub home: TempDir,
}

impl World {
    pub fn new() -> Self {
        Self {
            project: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// The project directory as `riot` sees it (canonical).
    pub fn cwd(&self) -> PathBuf {
        self.project.path().canonicalize().unwrap()
    }

    /// `riot ARGS` with the hermetic environment, nothing else.
    pub fn bare(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_riot"));
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            if key.starts_with("RIOT_")
                || key == "ANTHROPIC_API_KEY"
                || key == "OPENAI_API_KEY"
                || key == "BRAVE_API_KEY"
                || key == "XDG_CONFIG_HOME"
                || key == "CLAUDE_CONFIG_DIR"
            {
                cmd.env_remove(key);
            }
        }
        // The OS sandbox is off here: these tests pin the permission table
        // without it (tests/sandbox.rs turns it back on).
        cmd.env("RIOT_SANDBOX", "off");
        // No browser either: a found Chromium adds the deferred Browser to
        // what ToolSearch lists (tests/browser.rs turns it back on).
        cmd.env("RIOT_BROWSER", "off");
        cmd.env("RIOT_HOME", self.home.path())
            .env("HOME", self.home.path())
            .current_dir(self.project.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// `riot exec` against `server`, model `mock-model`, then `args`.
    pub fn exec(&self, server: &MockServer, wire: Wire, args: &[&str]) -> Command {
        self.exec_in(self.project.path(), server, wire, args)
    }

    /// `riot exec` in another project directory, sharing this `RIOT_HOME`.
    pub fn exec_in(&self, dir: &Path, server: &MockServer, wire: Wire, args: &[&str]) -> Command {
        let cwd = dir.to_str().unwrap().to_owned();
        let base = server.base_url();
        let mut all = vec![
            "exec",
            "--cwd",
            cwd.as_str(),
            "--provider",
            provider(wire),
            "--base-url",
            base.as_str(),
            "--model",
            "mock-model",
        ];
        all.extend_from_slice(args);
        self.bare(&all)
    }

    /// The transcript file of a session.
    pub fn transcript(&self, session_id: &str) -> PathBuf {
        self.home
            .path()
            .join("sessions")
            .join(format!("{session_id}.jsonl"))
    }
}

/// What a finished `riot` run left behind.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The single JSON object of `--output-format json`.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim_end())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{self:?}"))
    }
}

/// Runs `cmd` to the end (killed if it outlasts [`PATIENCE`]).
pub async fn run(mut cmd: Command) -> Run {
    let child = cmd.spawn().expect("spawn riot");
    let output = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("riot did not finish in time")
        .expect("wait for riot");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A spawned child that is SIGKILLed on drop (tokio's `kill_on_drop`)
/// and whose output can still be collected.
pub struct Running {
    pub child: Child,
}

impl Running {
    pub fn spawn(mut cmd: Command) -> Self {
        Self {
            child: cmd.spawn().expect("spawn riot"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("child still running")
    }

    /// Waits for the end and collects the output.
    pub async fn finish(self) -> Run {
        let output = tokio::time::timeout(PATIENCE, self.child.wait_with_output())
            .await
            .expect("riot did not finish in time")
            .expect("wait for riot");
        Run {
            code: output.status.code(),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// Sends `signal` (e.g. "INT", "KILL") to a pid, or to a process group
/// when `pid` is negative, with the system `kill`.
pub fn signal(signal: &str, pid: i64) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Kills a process group on drop: tool subprocesses live in their own
/// group, which outlives a SIGKILLed `riot` unless Riot reaps it.
pub struct GroupGuard {
    pub pgid: Option<i64>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            signal("KILL", -pgid);
        }
    }
}

/// Pids of live processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<i64> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i64>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) && !is_gone(pid) {
            found.push(pid);
        }
    }
    found
}

/// Whether a process has exited (gone, or a zombie not yet reaped).
pub fn is_gone(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// The process group of a pid.
pub fn pgid_of(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    // Fields after the name: state ppid pgrp ...
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// Polls `check` every 20 ms until it holds or [`PATIENCE`] runs out.
pub async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "gave up waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The messages of a transcript (`Record::Message` lines), as JSON.
pub fn transcript_messages(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "message")
        .map(|r| r["message"].clone())
        .collect()
}

/// The request bodies the mock accepted, in order.
pub fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .map(|r: RecordedRequest| r.body)
        .collect()
}

/// An Anthropic-shaped message list (a request's `messages`, or the
/// transcript's messages, which share the block shapes) as one line per
/// block: `role: text`, `role: tool_use ID`, `role: tool_result ID`.
pub fn conversation(messages: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        let role = m["role"].as_str().unwrap();
        for block in m["content"].as_array().unwrap() {
            out.push(match block["type"].as_str().unwrap() {
                "text" => format!("{role}: {}", block["text"].as_str().unwrap()),
                "tool_use" => format!("{role}: tool_use {}", block["id"].as_str().unwrap()),
                "tool_result" => {
                    format!(
                        "{role}: tool_result {}",
                        block["tool_use_id"].as_str().unwrap()
                    )
                }
                other => format!("{role}: {other}"),
            });
        }
    }
    out
}

/// Every `tool_use` is answered by a `tool_result` in the next message,
/// and every result answers a call of the message before it.
pub fn assert_paired(messages: &[Value]) {
    let blocks = |m: &Value, kind: &str, key: &str| -> Vec<String> {
        m["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == kind)
            .map(|b| b[key].as_str().unwrap().to_owned())
            .collect()
    };
    for (i, m) in messages.iter().enumerate() {
        let results = blocks(m, "tool_result", "tool_use_id");
        let calls_before = match i.checked_sub(1) {
            Some(p) => blocks(&messages[p], "tool_use", "id"),
            None => Vec::new(),
        };
        for r in &results {
            assert!(
                calls_before.contains(r),
                "result {r} answers no call before it: {messages:#?}"
            );
        }
        let calls = blocks(m, "tool_use", "id");
        if calls.is_empty() {
            continue;
        }
        let next = messages
            .get(i + 1)
            .unwrap_or_else(|| panic!("{calls:?} unanswered"));
        assert_eq!(next["role"], "user");
        let answered = blocks(next, "tool_result", "tool_use_id");
        for c in &calls {
            assert!(answered.contains(c), "call {c} unanswered: {messages:#?}");
        }
    }
}

/// The only transcript in a home.
pub fn only_session(world: &World) -> String {
    let names: Vec<String> = std::fs::read_dir(world.home.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names[0].strip_suffix(".jsonl").unwrap().to_owned()
}

/// Reads stream-json lines until one satisfies `until`; returns them all.
pub async fn lines_until(
    lines: &mut Lines<BufReader<ChildStdout>>,
    until: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("riot printed nothing in time")
            .unwrap()
            .unwrap_or_else(|| panic!("stdout ended before the awaited event: {seen:#?}"));
        let value: Value = serde_json::from_str(&line).unwrap();
        let done = until(&value);
        seen.push(value);
        if done {
            return seen;
        }
    }
}
