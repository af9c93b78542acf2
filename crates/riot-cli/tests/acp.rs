//! ACP conversation tests (VERIFICATION L5 "Faces"): a JSON-RPC 2.0 client
//! written here drives the real `riot acp` binary over its stdio, against
//! the strict mock model server, in a fresh project and `RIOT_HOME`. The
//! client checks every stdout line is a JSON-RPC message (stdout is
//! protocol-only), answers the agent's permission requests, and collects
//! the `session/update` notifications each request produced.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{
    NOTES, NOTES_NUMBERED, PATIENCE, Running, World, provider, stalled_partial_answer, tool_call,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

const ANSWER: &str = "The notes say alpha and beta.";
const WIRE: Wire = Wire::Anthropic;

/// What one request produced: the agent's requests to us (with the answer
/// we gave), the updates in order, and the response.
#[derive(Debug, Default)]
struct Exchange {
    updates: Vec<Value>,
    asked: Vec<Value>,
    /// Ids of the agent's requests it withdrew (`$/cancel_request`).
    withdrawn: Vec<Value>,
    response: Value,
}

impl Exchange {
    fn result(&self) -> &Value {
        assert!(
            self.response.get("error").is_none(),
            "the request failed: {}",
            self.response
        );
        &self.response["result"]
    }

    /// The `session/update` payloads of one kind.
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.updates
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The agent's streamed text, joined.
    fn text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap())
            .collect()
    }

    fn kinds(&self) -> Vec<String> {
        self.updates
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A minimal ACP client over a `riot acp` child's stdio.
struct AcpClient {
    riot: Running,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl AcpClient {
    /// A mock server answering with `replies`, and a client that has
    /// initialized `riot acp` against it and opened a session.
    async fn in_session(world: &World, replies: Vec<Reply>) -> (MockServer, Self, String) {
        let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
        let mut client = Self::start(world, &server);
        client.initialize().await;
        let session_id = client.new_session(world).await;
        (server, client, session_id)
    }

    fn start(world: &World, server: &MockServer) -> Self {
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
        let mut riot = Running::spawn(cmd);
        let stdin = riot.child.stdin.take();
        let lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
        Self {
            riot,
            stdin,
            lines,
            next_id: 0,
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

    /// The next message on stdout; every line must be JSON-RPC 2.0.
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("riot acp went silent")
            .unwrap()
            .expect("riot acp closed stdout");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries a non-protocol line ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.write(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    async fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Reads until the response to `id`, collecting updates and answering
    /// the agent's requests with `answer`. `until_update` is called on each
    /// update and may act on the connection (e.g. cancel).
    async fn finish(
        &mut self,
        id: u64,
        exchange: &mut Exchange,
        answer: &mut dyn FnMut(&Value) -> Value,
    ) {
        loop {
            let message = self.read().await;
            if message.get("method").is_some() && message.get("id").is_some() {
                let result = answer(&message);
                exchange.asked.push(message.clone());
                self.write(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                    .await;
            } else if message["method"] == "session/update" {
                exchange.updates.push(message["params"]["update"].clone());
            } else if message["method"] == "$/cancel_request" {
                exchange
                    .withdrawn
                    .push(message["params"]["requestId"].clone());
            } else if message["id"] == id {
                exchange.response = message;
                return;
            } else {
                panic!("unexpected message: {message}");
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Exchange {
        self.call_answering(method, params, &mut |asked| {
            panic!("unexpected request from the agent: {asked}")
        })
        .await
    }

    async fn call_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: &mut dyn FnMut(&Value) -> Value,
    ) -> Exchange {
        let id = self.send_request(method, params).await;
        let mut exchange = Exchange::default();
        self.finish(id, &mut exchange, answer).await;
        exchange
    }

    async fn initialize(&mut self) -> Value {
        let exchange = self
            .call(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {}}),
            )
            .await;
        exchange.result().clone()
    }

    async fn new_session(&mut self, world: &World) -> String {
        let exchange = self
            .call(
                "session/new",
                json!({"cwd": world.project.path(), "mcpServers": []}),
            )
            .await;
        let result = exchange.result();
        assert_eq!(result["modes"]["currentModeId"], "default", "{result}");
        result["sessionId"].as_str().unwrap().to_owned()
    }

    /// Closes stdin; `riot acp` must then exit on its own, successfully.
    async fn close(mut self) {
        drop(self.stdin.take());
        let out = self.riot.finish().await;
        assert_eq!(out.code, Some(0), "riot acp after stdin EOF: {out:?}");
    }
}

fn prompt(session_id: &str, text: &str) -> Value {
    json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]})
}

fn selected(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_streams_as_a_tool_call_and_a_loaded_session_replays_it() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let replies = vec![
        tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"})),
        Reply::Text(ANSWER.into()),
    ];
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();

    let mut client = AcpClient::start(&world, &server);
    let init = client.initialize().await;
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["list"],
        json!({})
    );
    assert_eq!(init["authMethods"], json!([]));
    let session_id = client.new_session(&world).await;

    let turn = client
        .call("session/prompt", prompt(&session_id, "Summarize notes.txt"))
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    // The call is announced with its kind, then finishes with the content
    // the model read and Riot's UI payload; then the answer streams.
    assert_eq!(
        turn.kinds()
            .iter()
            .filter(|k| !k.ends_with("_chunk"))
            .collect::<Vec<_>>(),
        ["tool_call", "tool_call_update"],
        "{:#?}",
        turn.updates
    );
    let call = turn.of_kind("tool_call")[0];
    assert_eq!(call["toolCallId"], "call_read_1");
    assert_eq!(call["kind"], "read");
    assert_eq!(call["rawInput"], json!({"file_path": "notes.txt"}));
    assert!(
        call["title"].as_str().unwrap().contains("notes.txt"),
        "the title is the tool's describe line: {call}"
    );
    let done = turn.of_kind("tool_call_update")[0];
    assert_eq!(done["toolCallId"], "call_read_1");
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["content"],
        json!([{"type": "content", "content": {"type": "text", "text": NOTES_NUMBERED}}])
    );
    assert_eq!(done["rawOutput"]["type"], "file_read");
    assert_eq!(done["rawOutput"]["total_lines"], 2);
    let answer_at = turn
        .kinds()
        .iter()
        .position(|k| k == "agent_message_chunk")
        .unwrap();
    assert!(answer_at > 1, "the answer streams after the tool call");
    assert_eq!(turn.text(), ANSWER);

    // session/list names it, in this directory and no other.
    let listed = client
        .call("session/list", json!({"cwd": world.project.path()}))
        .await;
    let sessions = listed.result()["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0]["sessionId"], session_id.as_str());
    assert_eq!(sessions[0]["cwd"], world.cwd().to_str().unwrap());
    let elsewhere = tempfile::tempdir().unwrap();
    let listed = client
        .call("session/list", json!({"cwd": elsewhere.path()}))
        .await;
    assert_eq!(listed.result()["sessions"], json!([]));
    client.close().await;

    // A new `riot acp` loads the session: the conversation is replayed as
    // updates before the response, and no model request is made.
    let requests_before = server.requests().len();
    let mut client = AcpClient::start(&world, &server);
    client.initialize().await;
    let load = client
        .call(
            "session/load",
            json!({"sessionId": session_id, "cwd": world.project.path(), "mcpServers": []}),
        )
        .await;
    assert_eq!(load.result()["modes"]["currentModeId"], "default");
    assert_eq!(
        load.kinds(),
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ],
        "{:#?}",
        load.updates
    );
    assert_eq!(load.updates[0]["content"]["text"], "Summarize notes.txt");
    assert_eq!(load.updates[1]["toolCallId"], "call_read_1");
    assert_eq!(load.updates[1]["kind"], "read");
    assert_eq!(load.updates[2]["status"], "completed");
    assert_eq!(
        load.updates[2]["content"][0]["content"]["text"],
        NOTES_NUMBERED
    );
    assert_eq!(load.text(), ANSWER);
    assert_eq!(server.requests().len(), requests_before);
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_asks_the_client_and_only_allow_once_creates_the_file() {
    let world = World::new();
    let write = |id: &str| {
        tool_call(
            id,
            "Write",
            json!({"file_path": "out.txt", "content": "hello\nwörld\n"}),
        )
    };
    let replies = vec![
        write("call_write_1"),
        Reply::Text("I could not write it.".into()),
        write("call_write_2"),
        Reply::Text("Written.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let out = world.project.path().join("out.txt");

    // Rejected: the file stays absent and the call fails.
    let rejected = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Create out.txt"),
            &mut |_| selected("reject_once"),
        )
        .await;
    assert_eq!(rejected.result()["stopReason"], "end_turn");
    assert_eq!(rejected.asked.len(), 1, "{:#?}", rejected.asked);
    let asked = &rejected.asked[0];
    assert_eq!(asked["method"], "session/request_permission");
    assert_eq!(asked["params"]["sessionId"], session_id.as_str());
    assert_eq!(asked["params"]["toolCall"]["toolCallId"], "call_write_1");
    assert_eq!(asked["params"]["toolCall"]["kind"], "edit");
    let kinds: Vec<&str> = asked["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"allow_once") && kinds.contains(&"reject_once"),
        "{kinds:?}"
    );
    // The client knew the call before it was asked about it.
    let call = rejected.of_kind("tool_call")[0];
    assert_eq!(call["toolCallId"], "call_write_1");
    assert_eq!(call["kind"], "edit");
    // `pending` is ACP's default status and may be left out.
    assert!(
        matches!(call["status"].as_str(), None | Some("pending")),
        "{call}"
    );
    let done = rejected.of_kind("tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "failed", "{done:#?}");
    assert!(!out.exists(), "a rejected Write must not run");
    assert_eq!(rejected.text(), "I could not write it.");

    // Allowed once: the file is written byte for byte.
    let allowed = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Try again"),
            &mut |_| selected("allow_once"),
        )
        .await;
    assert_eq!(allowed.result()["stopReason"], "end_turn");
    assert_eq!(allowed.asked.len(), 1);
    assert_eq!(
        allowed.asked[0]["params"]["toolCall"]["toolCallId"],
        "call_write_2"
    );
    assert_eq!(std::fs::read(&out).unwrap(), "hello\nwörld\n".as_bytes());
    let done = allowed.of_kind("tool_call_update");
    let last = done.last().unwrap();
    assert_eq!(last["toolCallId"], "call_write_2");
    assert_eq!(last["status"], "completed");
    assert_eq!(last["rawOutput"]["type"], "file_diff");
    assert_eq!(last["rawOutput"]["created"], true);
    // Editors show the change as a diff of a new file.
    let diff = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff content: {last}"));
    assert_eq!(diff["path"], world.cwd().join("out.txt").to_str().unwrap());
    assert_eq!(diff["newText"], "hello\nwörld\n");
    assert!(diff.get("oldText").is_none_or(Value::is_null), "{diff}");
    assert_eq!(allowed.text(), "Written.");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_stalled_reply_ends_the_prompt_cancelled() {
    let world = World::new();
    let replies = vec![stalled_partial_answer(), Reply::Text("Back again.".into())];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;

    let id = client
        .send_request("session/prompt", prompt(&session_id, "Explain"))
        .await;
    let mut exchange = Exchange::default();
    // Wait for the partial answer, then cancel.
    loop {
        let message = client.read().await;
        assert_eq!(message["method"], "session/update", "{message}");
        let update = message["params"]["update"].clone();
        exchange.updates.push(update);
        if exchange.text() == "Partial answer" {
            break;
        }
    }
    client
        .notify("session/cancel", json!({"sessionId": session_id}))
        .await;
    client
        .finish(id, &mut exchange, &mut |asked| {
            panic!("unexpected request: {asked}")
        })
        .await;
    assert_eq!(exchange.result()["stopReason"], "cancelled");
    assert_eq!(server.requests().len(), 1);

    // The session is free again, and the partial answer was kept in its
    // history as the person saw it (ARCHITECTURE §5: stopping).
    let next = client
        .call("session/prompt", prompt(&session_id, "Go on"))
        .await;
    assert_eq!(next.result()["stopReason"], "end_turn");
    assert_eq!(next.text(), "Back again.");
    let messages = support::bodies(&server)[1]["messages"].clone();
    assert_eq!(
        support::conversation(messages.as_array().unwrap()),
        ["user: Explain", "assistant: Partial answer", "user: Go on"]
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_edits_chosen_with_set_mode_writes_without_asking() {
    let world = World::new();
    let replies = vec![
        tool_call(
            "call_write_1",
            "Write",
            json!({"file_path": "out.txt", "content": "mode\n"}),
        ),
        Reply::Text("Written.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;

    let unknown = client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "yolo"}),
        )
        .await;
    let message = unknown.response["error"]["message"].as_str().unwrap();
    assert!(message.contains("accept-edits"), "{message}");

    let set = client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "accept-edits"}),
        )
        .await;
    set.result();
    // No permission request may arrive: `call` panics on one.
    let turn = client
        .call("session/prompt", prompt(&session_id, "Create out.txt"))
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("out.txt")).unwrap(),
        "mode\n"
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_ending_in_a_model_error_fails_the_prompt_request() {
    let world = World::new();
    let body = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    // Riot retries an auth failure once, then gives up.
    let unauthorized = || Reply::Error {
        status: 401,
        body: body.to_string(),
        headers: Vec::new(),
    };
    let replies = vec![unauthorized(), unauthorized()];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let turn = client
        .call("session/prompt", prompt(&session_id, "Hello"))
        .await;
    // ARCHITECTURE §4: an error with no ACP stop reason is a JSON-RPC error.
    assert!(turn.response.get("result").is_none(), "{}", turn.response);
    let error = &turn.response["error"];
    assert!(error["code"].is_i64(), "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("HTTP 401") && message.contains("API key"),
        "the person learns what failed and what to check: {error}"
    );
    assert_eq!(server.requests().len(), 2);
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_running_bash_call_keeps_the_call_paired() {
    let world = World::new();
    // A sleep no other process runs, so the test can see it start and end.
    let sleep = format!("sleep 120.{}", std::process::id());
    let command = format!("{sleep}; echo slept");
    let replies = vec![
        tool_call(
            "call_bash_1",
            "Bash",
            json!({"command": command, "description": "Wait"}),
        ),
        Reply::Text("Stopped waiting.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "bypass"}),
        )
        .await
        .result();

    let id = client
        .send_request(
            "session/prompt",
            prompt(&session_id, "Run the slow command"),
        )
        .await;
    let mut exchange = Exchange::default();
    loop {
        let message = client.read().await;
        assert_eq!(message["method"], "session/update", "{message}");
        exchange.updates.push(message["params"]["update"].clone());
        if !exchange.of_kind("tool_call").is_empty() {
            break;
        }
    }
    let call = exchange.of_kind("tool_call")[0].clone();
    assert_eq!(call["kind"], "execute");
    assert_eq!(call["status"], "in_progress");
    let mut sleeping = None;
    support::wait_until("the sleep to start", || {
        sleeping = support::processes_with(&sleep).into_iter().find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0"))
        });
        sleeping.is_some()
    })
    .await;
    let _guard = support::GroupGuard {
        pgid: support::pgid_of(sleeping.unwrap()),
    };
    client
        .notify("session/cancel", json!({"sessionId": session_id}))
        .await;
    client
        .finish(id, &mut exchange, &mut |asked| {
            panic!("unexpected request: {asked}")
        })
        .await;
    assert_eq!(exchange.result()["stopReason"], "cancelled");
    let last = exchange
        .of_kind("tool_call_update")
        .last()
        .copied()
        .cloned();
    let last = last.expect("the call's end is reported");
    assert_eq!(last["toolCallId"], "call_bash_1");
    assert_eq!(last["status"], "failed", "{last}");
    support::wait_until("the sleep to be stopped", || {
        support::is_gone(sleeping.unwrap())
    })
    .await;

    // The next prompt sends a history the strict mock accepts: the call
    // is answered by its (interrupted) result.
    let next = client
        .call("session/prompt", prompt(&session_id, "Go on"))
        .await;
    assert_eq!(next.result()["stopReason"], "end_turn");
    let body = support::bodies(&server).pop().unwrap();
    let messages = body["messages"].as_array().unwrap();
    support::assert_paired(messages);
    assert_eq!(
        support::conversation(messages)[..3],
        [
            "user: Run the slow command",
            "assistant: tool_use call_bash_1",
            "user: tool_result call_bash_1"
        ]
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_a_permission_question_is_open_denies_the_call() {
    let world = World::new();
    let replies = vec![tool_call(
        "call_write_1",
        "Write",
        json!({"file_path": "out.txt", "content": "never\n"}),
    )];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let id = client
        .send_request("session/prompt", prompt(&session_id, "Create out.txt"))
        .await;
    let mut exchange = Exchange::default();
    let asked = loop {
        let message = client.read().await;
        if message["method"] == "session/request_permission" {
            break message;
        }
        assert_eq!(message["method"], "session/update", "{message}");
        exchange.updates.push(message["params"]["update"].clone());
    };
    // As ACP asks of clients: cancel, then answer the open question
    // `cancelled`.
    client
        .notify("session/cancel", json!({"sessionId": session_id}))
        .await;
    client
        .write(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}}))
        .await;
    client
        .finish(id, &mut exchange, &mut |asked| {
            panic!("unexpected request: {asked}")
        })
        .await;
    assert_eq!(exchange.result()["stopReason"], "cancelled");
    assert!(!world.project.path().join("out.txt").exists());
    assert!(
        exchange.withdrawn.iter().all(|w| *w == asked["id"]),
        "only the open question may be withdrawn: {:?}",
        exchange.withdrawn
    );
    let last = exchange
        .of_kind("tool_call_update")
        .last()
        .copied()
        .cloned();
    assert_eq!(
        last.expect("the call's end is reported")["status"],
        "failed"
    );
    assert_eq!(server.requests().len(), 1, "no request after the cancel");
    client.close().await;
    server.shutdown().await;
}
