//! The editor's terminals (issue 28, docs/editors.md): a JSON-RPC client
//! written here drives the real `riot acp` binary over its stdio against
//! the strict mock model server and plays the editor — when it advertises
//! `terminal`, it serves `terminal/create`, `output`, `wait_for_exit`,
//! `kill` and `release` by running the command itself, and the test checks
//! the order of those requests, the command and directory the editor was
//! handed, what the tool call showed, and what reached the model. Without
//! the capability no `terminal/*` request is sent and Riot runs the
//! command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{PATIENCE, Running, World, provider, tool_call};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

const WIRE: Wire = Wire::Anthropic;
/// The editor's own environment holds a model key; commands must not see it.
const EDITOR_KEY: &str = "sk-ant-editor-0000";

/// One terminal the fake editor runs.
struct Term {
    child: Child,
    /// stdout and stderr as they arrived.
    output: Arc<Mutex<Vec<u8>>>,
    readers: Vec<tokio::task::JoinHandle<()>>,
    exit: Option<Value>,
    /// `terminal/wait_for_exit` requests not answered yet.
    waiting: Vec<Value>,
}

impl Term {
    fn kill_group(&self) {
        if let Some(pid) = self.child.id() {
            support::signal("KILL", -i64::from(pid));
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// A minimal ACP client that is also the editor's terminal host.
struct Editor {
    riot: Running,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    terminals: HashMap<String, Term>,
    /// Every `terminal/*` request, in order: (method, params).
    log: Vec<(String, Value)>,
    /// The `session/update` payloads.
    updates: Vec<Value>,
    /// Cancels this session's turn when its command is being waited for.
    cancel_when_waiting: Option<String>,
    /// `$/cancel_request` params Riot sent.
    withdrawn: Vec<Value>,
    /// Holds back its `terminal/create` reply and cancels this session's
    /// turn instead (the reply is sent later by the test).
    cancel_while_creating: Option<String>,
    /// The held `terminal/create`: (request id, terminal id).
    held_create: Option<(Value, String)>,
    /// Answers `terminal/wait_for_exit` with this error message.
    fail_wait: Option<String>,
}

impl Editor {
    fn start(world: &World, server: &MockServer) -> Self {
        Self::start_sandboxed(world, server, false)
    }

    /// With `sandbox`, the OS sandbox as this machine has it (the test
    /// support turns it off otherwise).
    fn start_sandboxed(world: &World, server: &MockServer, sandbox: bool) -> Self {
        let base = server.base_url();
        let mut cmd = world.bare(&[
            "acp",
            "--provider",
            provider(WIRE),
            "--base-url",
            base.as_str(),
            "--model",
            "mock-model",
        ]);
        cmd.stdin(Stdio::piped());
        if sandbox {
            cmd.env_remove("RIOT_SANDBOX");
        }
        let mut riot = Running::spawn(cmd);
        let stdin = riot.child.stdin.take();
        let lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
        Self {
            riot,
            stdin,
            lines,
            next_id: 0,
            terminals: HashMap::new(),
            log: Vec::new(),
            updates: Vec::new(),
            cancel_when_waiting: None,
            withdrawn: Vec::new(),
            cancel_while_creating: None,
            held_create: None,
            fail_wait: None,
        }
    }

    async fn write(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    async fn respond(&mut self, id: &Value, result: Value) {
        self.write(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    /// Sends a request and serves the agent until its response.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let message = self
            .pump(|m, _| m["id"] == id && m.get("method").is_none())
            .await
            .expect("the response");
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        message["result"].clone()
    }

    /// Serves the agent until `done` holds for a message it sent (which
    /// is returned) or for the editor after a message (`None`).
    async fn pump(&mut self, done: impl Fn(&Value, &Self) -> bool) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            self.answer_exits().await;
            let line = tokio::select! {
                line = self.lines.next_line() => line.unwrap().expect("riot acp closed stdout"),
                () = tokio::time::sleep(Duration::from_millis(20)) => {
                    assert!(tokio::time::Instant::now() < deadline, "riot acp went silent");
                    continue;
                }
            };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries a non-protocol line ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message.get("method").is_none() {
                if done(&message, self) {
                    return Some(message);
                }
                panic!("an unexpected response: {message}");
            }
            match message["method"].as_str() {
                Some("session/update") => {
                    self.updates.push(message["params"]["update"].clone());
                }
                Some(m) if m.starts_with("terminal/") => self.serve(&message).await,
                // A request Riot no longer waits for (its call was dropped).
                Some("$/cancel_request") => self.withdrawn.push(message["params"].clone()),
                _ => panic!("unexpected message: {message}"),
            }
            if done(&message, self) {
                return None;
            }
        }
    }

    /// Answers one `terminal/*` request as an editor would.
    async fn serve(&mut self, message: &Value) {
        let method = message["method"].as_str().unwrap().to_owned();
        let params = message["params"].clone();
        let id = message["id"].clone();
        self.log.push((method.clone(), params.clone()));
        let terminal = params["terminalId"].as_str().unwrap_or("").to_owned();
        match method.as_str() {
            "terminal/create" => {
                let mut cmd = tokio::process::Command::new(params["command"].as_str().unwrap());
                for arg in params["args"].as_array().unwrap() {
                    cmd.arg(arg.as_str().unwrap());
                }
                for var in params["env"].as_array().into_iter().flatten() {
                    cmd.env(
                        var["name"].as_str().unwrap(),
                        var["value"].as_str().unwrap(),
                    );
                }
                cmd.env("ANTHROPIC_API_KEY", EDITOR_KEY)
                    .current_dir(params["cwd"].as_str().unwrap())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    // Its own group, killed whole, as a terminal's session is.
                    .process_group(0)
                    .kill_on_drop(true);
                let mut child = cmd.spawn().expect("the editor starts the command");
                let output = Arc::new(Mutex::new(Vec::new()));
                let mut readers = Vec::new();
                let streams: [Box<dyn tokio::io::AsyncRead + Send + Unpin>; 2] = [
                    Box::new(child.stdout.take().unwrap()),
                    Box::new(child.stderr.take().unwrap()),
                ];
                for mut stream in streams {
                    let output = Arc::clone(&output);
                    readers.push(tokio::spawn(async move {
                        let mut buf = [0u8; 4096];
                        while let Ok(n) = stream.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            output.lock().unwrap().extend_from_slice(&buf[..n]);
                        }
                    }));
                }
                let terminal_id = format!("term-{}", self.terminals.len() + 1);
                self.terminals.insert(
                    terminal_id.clone(),
                    Term {
                        child,
                        output,
                        readers,
                        exit: None,
                        waiting: Vec::new(),
                    },
                );
                if let Some(session) = self.cancel_while_creating.take() {
                    self.held_create = Some((id, terminal_id));
                    self.write(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
                        .await;
                    return;
                }
                self.respond(&id, json!({"terminalId": terminal_id})).await;
            }
            "terminal/wait_for_exit" => {
                if let Some(error) = self.fail_wait.take() {
                    self.write(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": error}}))
                        .await;
                    return;
                }
                self.terminals
                    .get_mut(&terminal)
                    .expect("a known terminal")
                    .waiting
                    .push(id);
                if let Some(session) = self.cancel_when_waiting.take() {
                    self.write(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
                        .await;
                }
            }
            "terminal/output" => {
                let term = self.terminals.get_mut(&terminal).expect("a known terminal");
                let output = String::from_utf8_lossy(&term.output.lock().unwrap()).into_owned();
                let mut result = json!({"output": output, "truncated": false});
                if let Some(exit) = &term.exit {
                    result["exitStatus"] = exit.clone();
                }
                self.respond(&id, result).await;
            }
            "terminal/kill" => {
                let term = self.terminals.get_mut(&terminal).expect("a known terminal");
                term.kill_group();
                self.respond(&id, json!({})).await;
            }
            "terminal/release" => {
                let term = self.terminals.remove(&terminal).expect("a known terminal");
                term.kill_group();
                self.respond(&id, json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }

    /// Answers the waits of terminals whose command ended.
    async fn answer_exits(&mut self) {
        let mut answers = Vec::new();
        for term in self.terminals.values_mut() {
            if term.exit.is_none()
                && let Some(status) = term.child.try_wait().unwrap()
            {
                for reader in term.readers.drain(..) {
                    reader.await.unwrap();
                }
                use std::os::unix::process::ExitStatusExt;
                term.exit = Some(match (status.code(), status.signal()) {
                    (Some(code), _) => json!({"exitCode": code}),
                    (None, Some(9)) => json!({"signal": "SIGKILL"}),
                    (None, signal) => json!({"signal": signal.map(|s| s.to_string())}),
                });
            }
            if let Some(exit) = &term.exit {
                for id in term.waiting.drain(..) {
                    answers.push((id, exit.clone()));
                }
            }
        }
        for (id, exit) in answers {
            self.respond(&id, exit).await;
        }
    }

    /// `initialize` (with or without `terminal`), a session in bypass mode.
    async fn open(&mut self, world: &World, terminal: bool) -> String {
        let init = self
            .call(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {"terminal": terminal}}),
            )
            .await;
        assert_eq!(init["protocolVersion"], 1, "{init}");
        let session = self
            .call(
                "session/new",
                json!({"cwd": world.project.path(), "mcpServers": []}),
            )
            .await;
        let id = session["sessionId"].as_str().unwrap().to_owned();
        self.call(
            "session/set_mode",
            json!({"sessionId": id, "modeId": "bypass"}),
        )
        .await;
        id
    }

    fn methods(&self) -> Vec<&str> {
        self.log.iter().map(|(m, _)| m.as_str()).collect()
    }

    /// The `tool_call_update`s of one call.
    fn call_updates(&self, call: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call)
            .collect()
    }

    async fn close(mut self) {
        drop(self.stdin.take());
        let out = self.riot.finish().await;
        assert_eq!(out.code, Some(0), "riot acp after stdin EOF: {out:?}");
    }
}

fn prompt(session_id: &str, text: &str) -> Value {
    json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
}

/// The text of the `tool_result` answering `id`, and whether it is an error.
fn result_of(server: &MockServer, id: &str) -> (String, bool) {
    let body = support::bodies(server).pop().unwrap();
    let result = support::tool_result(&body, id);
    let text = match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| b["text"].as_str().unwrap_or("").to_owned())
            .collect(),
        other => panic!("unexpected tool_result content {other}"),
    };
    (text, result["is_error"] == true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_terminal_advertised_a_bash_call_runs_in_the_editors_terminal() {
    let world = World::new();
    let command = "pwd; echo \"key=${ANTHROPIC_API_KEY:-unset} pager=$PAGER\"; read line || echo stdin-empty; exit 3";
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_bash_1",
                "Bash",
                json!({"command": command, "description": "Show where"}),
            ),
            Reply::Text("Ran it.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    let done = editor
        .call("session/prompt", prompt(&session, "Run it"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");

    // create → wait_for_exit → output → release, each naming the terminal.
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
    );
    let project = std::fs::canonicalize(world.project.path()).unwrap();
    let create = &editor.log[0].1;
    assert_eq!(create["sessionId"], session.as_str());
    assert_eq!(create["cwd"], project.to_str().unwrap());
    assert_eq!(create["command"], "env");
    let args: Vec<&str> = create["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // The model keys are removed, stdin is empty, then `bash -c` as Riot
    // runs it (the sandbox is off in these tests).
    assert!(
        args.windows(2).any(|w| w == ["-u", "ANTHROPIC_API_KEY"]),
        "{args:?}"
    );
    assert_eq!(
        args[args.len() - 7..],
        [
            "sh",
            "-c",
            "exec \"$@\" < /dev/null",
            "sh",
            "bash",
            "-c",
            command
        ]
    );
    assert_eq!(create["outputByteLimit"], 1024 * 1024);
    let env: Vec<(&str, &str)> = create["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v["value"].as_str().unwrap()))
        .collect();
    assert!(env.contains(&("PAGER", "cat")), "{env:?}");
    for (_, params) in &editor.log[1..] {
        assert_eq!(params["terminalId"], "term-1");
        assert_eq!(params["sessionId"], session.as_str());
    }

    // The call showed the terminal while it ran, and keeps it when done:
    // the final update (after the release) leaves the content as it is,
    // since ACP embeds a terminal only before its release.
    let updates = editor.call_updates("call_bash_1");
    let embedding: Vec<usize> = updates
        .iter()
        .enumerate()
        .filter(|(_, u)| u["content"].to_string().contains("\"terminal\""))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(embedding.len(), 1, "embedded once: {updates:#?}");
    assert_eq!(
        updates[embedding[0]]["content"],
        json!([{"type": "terminal", "terminalId": "term-1"}])
    );
    let last = updates.last().unwrap();
    assert!(updates.len() > embedding[0] + 1, "{updates:#?}");
    assert_eq!(last["status"], "failed", "{last}");
    assert!(last.get("content").is_none(), "{last}");
    assert_eq!(last["rawOutput"]["exit_code"], 3, "{last}");

    // The model read the command's output as Riot formats a Bash result.
    let expected = format!(
        "{}\nkey=unset pager=cat\nstdin-empty\nExit code 3",
        project.display()
    );
    assert_eq!(result_of(&server, "call_bash_1"), (expected, true));
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_over_its_timeout_is_killed_in_the_editors_terminal_then_released() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_slow_1",
                "Bash",
                // Long enough that a loaded machine still prints `started`
                // in the editor's terminal inside it.
                json!({"command": "echo started; sleep 60", "timeout": 2000}),
            ),
            Reply::Text("It was too slow.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    let done = editor
        .call("session/prompt", prompt(&session, "Run the slow one"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/output",
            "terminal/release"
        ]
    );
    let (text, is_error) = result_of(&server, "call_slow_1");
    assert!(is_error);
    assert_eq!(
        text,
        format!(
            "started\nThe command timed out after 2000 ms and was stopped (with everything it started); the output above is what it produced until then. Run long commands with a larger `timeout` (at most {}) or with run_in_background.",
            600_000
        )
    );
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_terminal_capability_riot_runs_the_command_itself() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_bash_1",
                "Bash",
                json!({"command": "echo ran by riot"}),
            ),
            Reply::Text("Ran it.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, false).await;
    let done = editor
        .call("session/prompt", prompt(&session, "Run it"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");
    assert!(editor.log.is_empty(), "{:?}", editor.log);
    assert_eq!(
        result_of(&server, "call_bash_1"),
        ("ran by riot".to_owned(), false)
    );
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_sandbox_on_the_editor_is_handed_the_sandboxed_command() {
    let world = World::new();
    let mut check = world.bare(&["sandbox", "check", "--json"]);
    check.env_remove("RIOT_SANDBOX");
    let status: Value = serde_json::from_str(support::run(check).await.stdout.trim()).unwrap();
    if status["enforced"] != true {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs bubblewrap and must run this test: {status}"
        );
        eprintln!("skipped: no sandbox on this machine: {status}");
        return;
    }
    // Outside the project and not under /tmp (the sandbox's /tmp is
    // private): there, only the sandbox stops the write.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let escape = outside.path().join("escape.txt");
    let command = format!(
        "echo in-project > inside.txt && cat inside.txt; (echo escaped > {}) 2>/dev/null || echo refused",
        escape.display()
    );
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call("call_bash_1", "Bash", json!({"command": command})),
            Reply::Text("Done.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start_sandboxed(&world, &server, true);
    let session = editor.open(&world, true).await;
    let done = editor
        .call("session/prompt", prompt(&session, "Write both"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release"
        ]
    );
    let args: Vec<&str> = editor.log[0].1["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // After the stdin wrapper: the sandbox (bubblewrap or the helper), and
    // the command at the end, inside it.
    let start = args
        .iter()
        .position(|a| *a == "exec \"$@\" < /dev/null")
        .unwrap()
        + 2;
    assert!(
        args[start].ends_with("bwrap") || args[start] == env!("CARGO_BIN_EXE_riot"),
        "{args:?}"
    );
    assert!(args.contains(&"__sandbox-exec"), "{args:?}");
    assert_eq!(args[args.len() - 3..], ["bash", "-c", command.as_str()]);
    assert_eq!(
        result_of(&server, "call_bash_1"),
        ("in-project\nrefused".to_owned(), false)
    );
    assert!(!escape.exists(), "the command escaped the sandbox");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("inside.txt")).unwrap(),
        "in-project\n"
    );
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_turn_kills_the_command_in_the_editors_terminal_then_releases_it() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call("call_slow_1", "Bash", json!({"command": "sleep 60"})),
            Reply::Text("Stopped.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    editor.cancel_when_waiting = Some(session.clone());
    let done = editor
        .call("session/prompt", prompt(&session, "Run the slow one"))
        .await;
    assert_eq!(done["stopReason"], "cancelled");
    // The cancelled turn drops the call: the wait is withdrawn, the command
    // killed and the terminal released.
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release"
        ]
    );
    assert!(!editor.withdrawn.is_empty());
    assert!(editor.terminals.is_empty());
    let last = editor.call_updates("call_slow_1").last().copied().cloned();
    assert_eq!(last.unwrap()["status"], "failed");
    // The next prompt's history pairs the call with its (cancelled) result.
    let next = editor
        .call("session/prompt", prompt(&session, "Go on"))
        .await;
    assert_eq!(next["stopReason"], "end_turn");
    let body = support::bodies(&server).pop().unwrap();
    support::assert_paired(body["messages"].as_array().unwrap());
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_created_after_the_turn_was_cancelled_is_killed_and_released() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call("call_slow_1", "Bash", json!({"command": "sleep 60"})),
            Reply::Text("Stopped.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    // The editor starts the command but answers `terminal/create` only
    // after the turn was cancelled (its Bash call dropped meanwhile).
    editor.cancel_while_creating = Some(session.clone());
    let done = editor
        .call("session/prompt", prompt(&session, "Run the slow one"))
        .await;
    assert_eq!(done["stopReason"], "cancelled");
    assert_eq!(editor.methods(), ["terminal/create"]);
    let (id, terminal) = editor.held_create.take().expect("a held create");
    editor.respond(&id, json!({"terminalId": terminal})).await;
    // Riot still owns the terminal it asked for: the command is killed and
    // the terminal released.
    editor
        .pump(|_, e| e.methods().contains(&"terminal/release"))
        .await;
    assert_eq!(
        editor.methods(),
        ["terminal/create", "terminal/kill", "terminal/release"]
    );
    for (_, params) in &editor.log[1..] {
        assert_eq!(params["terminalId"], "term-1");
        assert_eq!(params["sessionId"], session.as_str());
    }
    assert!(editor.terminals.is_empty());
    // The next prompt's history pairs the call with its (cancelled) result.
    let next = editor
        .call("session/prompt", prompt(&session, "Go on"))
        .await;
    assert_eq!(next["stopReason"], "end_turn");
    let body = support::bodies(&server).pop().unwrap();
    support::assert_paired(body["messages"].as_array().unwrap());
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_whose_exit_could_not_be_read_may_have_run_and_is_killed_and_released() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_deploy_1",
                "Bash",
                json!({"command": "echo deployed > deployed.txt; sleep 60"}),
            ),
            Reply::Text("Unclear.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    editor.fail_wait = Some("the terminal's process went away".into());
    let done = editor
        .call("session/prompt", prompt(&session, "Deploy"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");
    // The command may still run: Riot kills it and releases the terminal.
    assert_eq!(
        editor.methods(),
        [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/kill",
            "terminal/release"
        ]
    );
    assert!(editor.terminals.is_empty());
    // The model is told it started, not that it could not start.
    assert_eq!(
        result_of(&server, "call_deploy_1"),
        (
            "The command was started in the editor's terminal, but its result could not be read (the editor's terminal failed to wait for the command: the terminal's process went away); it may have run. Check its effects before running it again.".to_owned(),
            true
        )
    );
    // The person reads the same in the call, which shows it instead of
    // the terminal.
    let last = editor
        .call_updates("call_deploy_1")
        .last()
        .copied()
        .cloned()
        .unwrap();
    assert_eq!(last["status"], "failed");
    assert!(
        last["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("it may have run"),
        "{last}"
    );
    editor.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_env_reaches_a_command_in_the_editors_terminal() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"env": {"RIOT_TEST_GREETING": "from-settings"}}"#,
    )
    .unwrap();
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_bash_1",
                "Bash",
                json!({"command": "echo \"greeting=$RIOT_TEST_GREETING\""}),
            ),
            Reply::Text("Greeted.".into()),
        ],
    ))
    .await
    .unwrap();
    let mut editor = Editor::start(&world, &server);
    let session = editor.open(&world, true).await;
    let done = editor
        .call("session/prompt", prompt(&session, "Greet"))
        .await;
    assert_eq!(done["stopReason"], "end_turn");
    let env = editor.log[0].1["env"].as_array().unwrap();
    assert!(
        env.contains(&json!({"name": "RIOT_TEST_GREETING", "value": "from-settings"})),
        "{env:?}"
    );
    assert_eq!(
        result_of(&server, "call_bash_1"),
        ("greeting=from-settings".to_owned(), false)
    );
    editor.close().await;
    server.shutdown().await;
}
