//! ACP conversation tests (docs/testing.md L5 "Faces"): a JSON-RPC 2.0 client
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
    NOTES, NOTES_NUMBERED, PATIENCE, Running, World, provider, run, stalled_partial_answer,
    tool_call,
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
        Self::start_with(
            world,
            &[
                "acp",
                "--provider",
                provider(WIRE),
                "--base-url",
                base.as_str(),
                "--model",
                "mock-model",
            ],
        )
    }

    /// `riot ARGS` (an ACP face) with no model configured but by `args`.
    fn start_with(world: &World, args: &[&str]) -> Self {
        Self::start_with_env(world, args, &[])
    }

    /// [`start_with`](Self::start_with) with extra environment variables.
    fn start_with_env(world: &World, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = world.bare(args);
        cmd.stdin(Stdio::piped()).envs(env.iter().copied());
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

    /// Writes `bytes` to stdin as they are (no newline added).
    async fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next stdout line, unparsed.
    async fn read_line(&mut self) -> String {
        tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("riot acp went silent")
            .unwrap()
            .expect("riot acp closed stdout")
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

    /// `initialize` from a client that asks for Riot's `notifications`.
    async fn initialize_for(&mut self, notifications: &[&str]) -> Value {
        let exchange = self
            .call(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {
                    "_meta": {"riot": {"notifications": notifications}}
                }}),
            )
            .await;
        exchange.result().clone()
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
        let (id, result) = new_session_answer(self, world).await;
        assert_eq!(result["modes"]["currentModeId"], "default", "{result}");
        id
    }

    /// The `available_commands_update` that follows a session's creation
    /// or load: the built-ins first, with their argument hints.
    async fn expect_commands(&mut self, session_id: &str) -> Vec<Value> {
        let message = self.read().await;
        assert_eq!(message["method"], "session/update", "{message}");
        assert_eq!(message["params"]["sessionId"], session_id, "{message}");
        let update = &message["params"]["update"];
        assert_eq!(
            update["sessionUpdate"], "available_commands_update",
            "{message}"
        );
        let commands = update["availableCommands"].as_array().unwrap().clone();
        let names: Vec<&str> = commands
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names[..6],
            ["compact", "clear", "model", "mode", "cost", "help"],
            "{names:?}"
        );
        assert_eq!(commands[0]["input"]["hint"], "[what to focus on]");
        assert!(
            commands[1].get("input").is_none_or(Value::is_null),
            "{}",
            commands[1]
        );
        commands
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
    let methods: Vec<&str> = init["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["anthropic-api-key", "openai-api-key", "none"]);
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
        // A usage update after each model request; the first prompt
        // names the session.
        [
            "usage_update",
            "tool_call",
            "tool_call_update",
            "usage_update",
            "session_info_update"
        ],
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
    client.expect_commands(&session_id).await;
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
    // What a dialog must show (docs/design.md §9): the tool, the resolved
    // absolute path, the reason.
    let out_path = world.cwd().join("out.txt");
    assert_eq!(asked["params"]["toolCall"]["name"], "Write");
    assert_eq!(
        asked["params"]["toolCall"]["locations"][0]["path"],
        out_path.to_str().unwrap()
    );
    let detail = &asked["params"]["toolCall"]["_meta"]["riot"]["detail"];
    assert_eq!(detail["path"], out_path.to_str().unwrap(), "{detail}");
    assert_eq!(detail["tool_name"], "Write");
    assert!(detail["reason"]["kind"].is_string(), "{detail}");
    // What the write will do, from the question's one preview: the new
    // file's content as a diff, and Riot's payload for clients that show it.
    assert_eq!(
        asked["params"]["toolCall"]["content"],
        json!([{"type": "diff", "path": out_path.to_str().unwrap(), "newText": "hello\nwörld\n"}]),
        "{asked}"
    );
    assert_eq!(
        (&detail["preview"]["type"], &detail["preview"]["created"]),
        (&json!("file_diff"), &json!(true)),
        "{detail}"
    );
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
    // history as the person saw it (docs/design.md §5: stopping).
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
    // A refused key is never retried.
    let unauthorized = Reply::Error {
        status: 401,
        body: body.to_string(),
        headers: Vec::new(),
    };
    let replies = vec![unauthorized];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let turn = client
        .call("session/prompt", prompt(&session_id, "Hello"))
        .await;
    // docs/design.md §4: an error with no ACP stop reason is a JSON-RPC error.
    assert!(turn.response.get("result").is_none(), "{}", turn.response);
    let error = &turn.response["error"];
    assert!(error["code"].is_i64(), "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("HTTP 401") && message.contains("API key"),
        "the person learns what failed and what to check: {error}"
    );
    assert_eq!(server.requests().len(), 1);
    client.close().await;
    server.shutdown().await;
}

/// "New session" in an editor or the desktop app: nothing is saved until
/// the session's first prompt, so an unused one leaves no empty session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_is_saved_with_its_first_prompt_not_before() {
    let world = World::new();
    let (server, mut client, unused) =
        AcpClient::in_session(&world, vec![Reply::Text("Hello.".into())]).await;
    let used = client.new_session(&world).await;
    assert!(!world.transcript(&unused).exists());
    assert!(!world.transcript(&used).exists());
    let turn = client.call("session/prompt", prompt(&used, "Hi")).await;
    assert_eq!(turn.result()["stopReason"], "end_turn", "{}", turn.response);
    assert!(world.transcript(&used).exists());
    client.close().await;
    assert!(
        !world.transcript(&unused).exists(),
        "the unused session left nothing"
    );
    let out = run(world.bare(&["sessions", "list", "--json"])).await;
    let rows: Value = serde_json::from_str(&out.stdout).unwrap();
    let ids: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [used.as_str()]);
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

/// Reads until the responses to all of `ids` arrived; returns them by id,
/// with the updates and `_riot/...` notifications seen meanwhile.
async fn responses_to(client: &mut AcpClient, ids: &[u64]) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let mut responses: Vec<Option<Value>> = vec![None; ids.len()];
    let mut updates = Vec::new();
    let mut extensions = Vec::new();
    while responses.iter().any(Option::is_none) {
        let message = client.read().await;
        if let Some(at) = ids.iter().position(|id| message["id"] == *id)
            && message.get("method").is_none()
        {
            responses[at] = Some(message);
        } else if message["method"] == "session/update" {
            updates.push(message["params"]["update"].clone());
        } else if message["method"]
            .as_str()
            .is_some_and(|m| m.starts_with("_riot/"))
        {
            extensions.push(message);
        } else {
            panic!("unexpected message: {message}");
        }
    }
    (
        responses.into_iter().map(Option::unwrap).collect(),
        updates,
        extensions,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn riot_shutdown_replies_then_ends_the_running_turn_and_exits_zero() {
    let world = World::new();
    // A sleep no other test runs, so this test can see it start and end.
    let sleep = format!("sleep 121.{}", std::process::id());
    let replies = vec![tool_call(
        "call_bash_1",
        "Bash",
        json!({"command": format!("{sleep}; echo slept"), "description": "Wait"}),
    )];
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    let init = client.initialize().await;
    // The extension is advertised the ACP way, in the capabilities' _meta.
    assert_eq!(
        init["agentCapabilities"]["_meta"]["riot"]["requests"],
        json!([
            "_riot/shutdown",
            "_riot/mcp_servers",
            "_riot/mcp_restart",
            "_riot/config",
            "_riot/config_set",
            "_riot/files",
            "_riot/session_rename",
            "_riot/session_delete",
            "_riot/set_model",
            "_riot/terminal_write",
            "_riot/terminal_resize",
            "_riot/checkpoints",
            "_riot/rewind",
            "_riot/queue",
            "_riot/background",
            "_riot/background_stop",
            "_riot/deliver"
        ]),
        "{init}"
    );
    let session_id = client.new_session(&world).await;
    client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "bypass"}),
        )
        .await
        .result();
    let prompt_id = client
        .send_request(
            "session/prompt",
            prompt(&session_id, "Run the slow command"),
        )
        .await;
    let mut updates = Vec::new();
    while !updates
        .iter()
        .any(|u: &Value| u["sessionUpdate"] == "tool_call")
    {
        let message = client.read().await;
        assert_eq!(message["method"], "session/update", "{message}");
        updates.push(message["params"]["update"].clone());
    }
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

    // The request takes `_meta` like every ACP payload.
    let shutdown_id = client
        .send_request("_riot/shutdown", json!({"_meta": {"reason": "test"}}))
        .await;
    let (responses, more, extensions) = responses_to(&mut client, &[shutdown_id, prompt_id]).await;
    updates.extend(more);
    assert_eq!(
        responses[0]["result"],
        json!({"cancelledTurns": 1}),
        "{}",
        responses[0]
    );
    assert_eq!(
        responses[1]["result"]["stopReason"], "cancelled",
        "the running prompt is answered before the agent stops: {}",
        responses[1]
    );
    assert!(
        extensions.is_empty(),
        "no _riot notification the client did not ask for: {extensions:?}"
    );
    let last = updates
        .iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .expect("the call's end is reported");
    assert_eq!(last["toolCallId"], "call_bash_1");
    assert_eq!(last["status"], "failed", "{last}");

    // It exits by itself, successfully, with stdin still open.
    let stdin = client.stdin.take();
    let out = client.riot.finish().await;
    drop(stdin);
    assert_eq!(out.code, Some(0), "riot acp after _riot/shutdown: {out:?}");
    support::wait_until("the sleep to be stopped", || {
        support::is_gone(sleeping.unwrap())
    })
    .await;
    // The transcript ends with the call answered by its interrupted result,
    // so the session can be resumed.
    let messages = support::transcript_messages(&world.transcript(&session_id));
    support::assert_paired(&messages);
    assert_eq!(
        support::conversation(&messages),
        [
            "user: Run the slow command",
            "assistant: tool_use call_bash_1",
            "user: tool_result call_bash_1"
        ]
    );
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn riot_shutdown_without_params_stops_an_idle_agent() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, Vec::new()))
        .await
        .unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize().await;
    // JSON-RPC lets a request leave `params` out.
    client.next_id += 1;
    let id = client.next_id;
    client
        .write(json!({"jsonrpc": "2.0", "id": id, "method": "_riot/shutdown"}))
        .await;
    let (responses, _, _) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"], json!({"cancelledTurns": 0}));
    let stdin = client.stdin.take();
    let out = client.riot.finish().await;
    drop(stdin);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(server.requests().is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_requests_are_the_turns_side_usage_and_in_the_sessions_cost() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"models": {"mock-model": {"price": {"input": 1, "output": 2, "cache_write": 1, "cache_read": 1}}}}"#,
    )
    .unwrap();
    let script = Script::new(
        WIRE,
        vec![
            tool_call(
                "call_task",
                "Task",
                json!({"description": "look around", "prompt": "CHILD-PROMPT find the notes",
                       "subagent_type": "explore"}),
            ),
            Reply::Text("Delegated.".into()),
        ],
    )
    .when(
        "CHILD-PROMPT",
        Reply::Text("The notes are in notes.txt.".into()),
    );
    let server = MockServer::start(script).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize_for(&["_riot/usage"]).await;
    let session_id = client.new_session(&world).await;
    let id = client
        .send_request("session/prompt", prompt(&session_id, "Find the notes"))
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"]["stopReason"], "end_turn");
    assert_eq!(server.requests().len(), 3, "parent, child, parent");
    let params = &extensions[0]["params"];
    // The parent's two requests are the turn's usage; the child's one,
    // its side usage (10 input and 5 output tokens each, as the mock
    // reports) — as `riot exec` counts them.
    assert_eq!(params["requests"], 2);
    assert_eq!(
        params["usage"],
        json!({"inputTokens": 20, "outputTokens": 10, "cacheReadTokens": 0, "cacheWriteTokens": 0})
    );
    assert_eq!(
        params["sideUsage"],
        json!({"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0})
    );
    // And the cost counts all three: 30 input × $1 and 15 output × $2 per
    // million tokens.
    let cost = params["costUsd"].as_f64().expect("a known cost");
    assert!((cost - 60.0 / 1e6).abs() < 1e-12, "{params}");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_after_each_prompt_goes_to_a_client_that_asked_for_it() {
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    // A price for the mock model, so the session's cost is known.
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"models": {"mock-model": {"price": {"input": 1, "output": 2, "cache_write": 1.25, "cache_read": 0.1}}}}"#,
    )
    .unwrap();
    // The second request reports cache figures, as a warm prompt cache does.
    let cached = Reply::Events(vec![
        json!({"type": "message_start", "message": {"id": "msg_cached", "type": "message", "role": "assistant",
           "model": "mock-model", "content": [], "stop_reason": null,
           "usage": {"input_tokens": 12, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 30, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]);
    let replies = vec![
        tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"})),
        cached,
        Reply::Text("Again.".into()),
    ];
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    let init = client
        .call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {
                "_meta": {"riot": {"notifications": ["_riot/usage", "_riot/unknown"]}}
            }}),
        )
        .await;
    assert_eq!(
        init.result()["agentCapabilities"]["_meta"]["riot"]["notifications"],
        json!([
            "_riot/usage",
            "_riot/compaction",
            "_riot/terminal",
            "_riot/queue_update",
            "_riot/background_update"
        ])
    );
    let session_id = client.new_session(&world).await;

    let id = client
        .send_request("session/prompt", prompt(&session_id, "Summarize notes.txt"))
        .await;
    let (responses, updates, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"]["stopReason"], "end_turn");
    assert!(!updates.is_empty());
    assert_eq!(
        extensions.len(),
        1,
        "one usage report per prompt: {extensions:#?}"
    );
    assert_eq!(extensions[0]["method"], "_riot/usage");
    assert!(extensions[0].get("id").is_none(), "a notification");
    let params = &extensions[0]["params"];
    assert_eq!(params["sessionId"], session_id.as_str());
    assert_eq!(params["model"], "mock-model");
    assert_eq!(params["requests"], 2);
    // Summed over the turn's two requests: 10 + 12 input tokens outside
    // the cache, 5 + 9 output, and the second request's cache figures.
    assert_eq!(
        params["usage"],
        json!({"inputTokens": 22, "outputTokens": 14, "cacheReadTokens": 700, "cacheWriteTokens": 30})
    );
    // What the session has cost so far, at the settings' price per million
    // tokens: 22 × 1 + 14 × 2 + 30 × 1.25 + 700 × 0.1.
    let cost = |params: &Value| params["costUsd"].as_f64().expect("a known cost");
    let first = (22.0 + 28.0 + 37.5 + 70.0) / 1e6;
    assert!((cost(params) - first).abs() < 1e-12, "{params}");

    // The next prompt reports its own turn only.
    let id = client
        .send_request("session/prompt", prompt(&session_id, "Again"))
        .await;
    let (_, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(extensions.len(), 1, "{extensions:#?}");
    assert_eq!(extensions[0]["params"]["requests"], 1);
    assert_eq!(
        extensions[0]["params"]["usage"],
        json!({"inputTokens": 10, "outputTokens": 5, "cacheReadTokens": 0, "cacheWriteTokens": 0})
    );
    // The cost is the session's, not the turn's: it grows by this turn's 10 × 1 + 5 × 2.
    let second = first + 20.0 / 1e6;
    assert!(
        (cost(&extensions[0]["params"]) - second).abs() < 1e-12,
        "{}",
        extensions[0]["params"]
    );
    client.close().await;
    server.shutdown().await;
}

/// `riot serve` stops on `_riot/shutdown` from any of its WebSocket
/// clients: the reply, the running prompt's `cancelled`, then exit 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn riot_shutdown_over_the_websocket_stops_riot_serve() {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![stalled_partial_answer()]))
        .await
        .unwrap();
    let base = server.base_url();
    let mut cmd = world.bare(&[
        "serve",
        "--provider",
        provider(WIRE),
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
        "--port",
        "0",
    ]);
    cmd.stdin(Stdio::piped());
    let mut riot = Running::spawn(cmd);
    let stdin = riot.child.stdin.take();
    let mut stdout = BufReader::new(riot.child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(PATIENCE, stdout.next_line())
        .await
        .expect("riot serve printed no line")
        .unwrap()
        .expect("riot serve printed no line");
    let address = line
        .strip_prefix("Riot is serving at http://")
        .unwrap_or_else(|| panic!("unexpected line: {line:?}"));
    let url = format!("ws://{}", address.replacen("/?", "/acp?", 1));
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();

    let mut next_id = 0;
    let mut request = async |socket: &mut _, method: &str, params: Value| -> u64 {
        next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        SinkExt::send(socket, Message::Text(message.to_string().into()))
            .await
            .unwrap();
        next_id
    };
    async fn receive(
        socket: &mut tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
    ) -> Value {
        loop {
            let frame = tokio::time::timeout(PATIENCE, socket.next())
                .await
                .expect("riot serve went silent")
                .expect("the socket closed")
                .unwrap();
            if let Message::Text(text) = frame {
                return serde_json::from_str(text.as_str()).unwrap();
            }
        }
    }
    let id = request(
        &mut socket,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    )
    .await;
    assert_eq!(receive(&mut socket).await["id"], id);
    let id = request(
        &mut socket,
        "session/new",
        json!({"cwd": world.project.path(), "mcpServers": []}),
    )
    .await;
    let created = receive(&mut socket).await;
    assert_eq!(created["id"], id, "{created}");
    let session_id = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let prompt_id = request(
        &mut socket,
        "session/prompt",
        prompt(&session_id, "Explain"),
    )
    .await;
    // The model's reply has started (and stalls): the turn is running.
    loop {
        let message = receive(&mut socket).await;
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    let shutdown_id = request(&mut socket, "_riot/shutdown", json!({})).await;
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let message = receive(&mut socket).await;
        if message.get("method").is_none() {
            answers.push(message);
        }
    }
    let shutdown = answers.iter().find(|m| m["id"] == shutdown_id).unwrap();
    assert_eq!(
        shutdown["result"],
        json!({"cancelledTurns": 1}),
        "{shutdown}"
    );
    let prompted = answers.iter().find(|m| m["id"] == prompt_id).unwrap();
    assert_eq!(prompted["result"]["stopReason"], "cancelled", "{prompted}");

    // The server stops by itself, stdin still open, with nothing more on
    // stdout than its one line.
    let rest = tokio::time::timeout(PATIENCE, stdout.next_line())
        .await
        .expect("riot serve did not close stdout")
        .unwrap();
    assert_eq!(rest, None, "riot serve printed more than its one line");
    let out = riot.finish().await;
    drop(stdin);
    assert_eq!(
        out.code,
        Some(0),
        "riot serve after _riot/shutdown: {out:?}"
    );
    // The partial answer was kept: the transcript is whole.
    let messages = support::transcript_messages(&world.transcript(&session_id));
    assert_eq!(
        support::conversation(&messages),
        ["user: Explain", "assistant: Partial answer"]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_is_reported_to_a_client_that_asked_for_it() {
    use riot_testkit::UsageRule;
    // As in compaction.rs: a small window that a few Reads of ~3 KB files
    // fill, and a `when` rule answering the summary request.
    const FILES: usize = 12;
    const TURNS: usize = 40;
    let world = World::new();
    std::fs::create_dir_all(world.project.path().join("src")).unwrap();
    for i in 0..FILES {
        let body: String = (0..60)
            .map(|l| format!("pub fn module_{i:02}_helper_{l:02}(x: u64) -> u64 {{ x + {l} }}\n"))
            .collect();
        std::fs::write(
            world.project.path().join(format!("src/module_{i:02}.rs")),
            body,
        )
        .unwrap();
    }
    std::fs::write(
        world.home.path().join("settings.json"),
        // Room for the tool declarations (about 10k tokens and growing
        // with every tool) plus more Reads than the working set re-reads.
        r#"{"context_window": 40000, "max_output_tokens": 4000}"#,
    )
    .unwrap();
    let mut replies: Vec<Reply> = (0..TURNS - 1)
        .map(|t| {
            tool_call(
                &format!("toolu_{t:03}"),
                "Read",
                json!({"file_path": format!("src/module_{:02}.rs", t % FILES)}),
            )
        })
        .collect();
    replies.push(Reply::Text("All modules read.".into()));
    let script = Script::new(WIRE, replies)
        .usage(UsageRule::RequestSize)
        .when(
            "Stop working on the task for a moment",
            Reply::Text(
                "<analysis>Read modules.</analysis>\n<summary>\n1. Read every module.\n</summary>"
                    .into(),
            ),
        );
    let server = MockServer::start(script).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize_for(&["_riot/compaction"]).await;
    let session_id = client.new_session(&world).await;
    let id = client
        .send_request(
            "session/prompt",
            prompt(
                &session_id,
                "Read every module under src/ one by one and report.",
            ),
        )
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(
        responses[0]["result"]["stopReason"], "end_turn",
        "{}",
        responses[0]
    );
    let summaries = server
        .requests()
        .iter()
        .filter(|r| r.rule == Some(0))
        .count();
    assert!(summaries > 0, "the session did not compact");

    // Only the notification asked for (no `_riot/usage`), each summary
    // announced before and reported after.
    assert!(
        extensions.iter().all(|e| e["method"] == "_riot/compaction"
            && e["params"]["sessionId"] == session_id.as_str()),
        "{extensions:#?}"
    );
    let summary: Vec<&Value> = extensions
        .iter()
        .map(|e| &e["params"])
        .filter(|p| p["strategy"] == "summary")
        .collect();
    assert_eq!(summary.len(), 2 * summaries, "{summary:#?}");
    for pair in summary.chunks(2) {
        assert_eq!(pair[0]["status"], "compacting", "{pair:?}");
        assert!(pair[0].get("tokensBefore").is_none(), "{pair:?}");
        assert_eq!(pair[1]["status"], "compacted", "{pair:?}");
        let before = pair[1]["tokensBefore"].as_u64().unwrap();
        let after = pair[1]["tokensAfter"].as_u64().unwrap();
        assert!(after < before, "compaction shrinks the context: {pair:?}");
    }
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_running_turn_cancelled_and_exits_zero() {
    let world = World::new();
    let replies = vec![stalled_partial_answer()];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let id = client
        .send_request("session/prompt", prompt(&session_id, "Explain"))
        .await;
    loop {
        let message = client.read().await;
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    assert!(support::signal("TERM", i64::from(client.riot.pid())));
    let (responses, _, _) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"]["stopReason"], "cancelled");
    let stdin = client.stdin.take();
    let out = client.riot.finish().await;
    drop(stdin);
    assert_eq!(out.code, Some(0), "riot acp after SIGTERM: {out:?}");
    let messages = support::transcript_messages(&world.transcript(&session_id));
    assert_eq!(
        support::conversation(&messages),
        ["user: Explain", "assistant: Partial answer"]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_switch_the_model_and_clear_the_conversation() {
    let world = World::new();
    let replies = vec![Reply::Text("First.".into()), Reply::Text("Second.".into())];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;

    let first = client
        .call("session/prompt", prompt(&session_id, "Hello"))
        .await;
    assert_eq!(first.result()["stopReason"], "end_turn");

    // Built-ins answer as agent text and never reach the model.
    let model = client
        .call(
            "session/prompt",
            prompt(&session_id, "/model mock-model-large"),
        )
        .await;
    assert_eq!(model.result()["stopReason"], "end_turn");
    assert_eq!(
        model.text(),
        "Model: mock-model-large from the next request on."
    );
    let cleared = client
        .call("session/prompt", prompt(&session_id, "/clear"))
        .await;
    assert_eq!(cleared.result()["stopReason"], "end_turn");
    assert_eq!(cleared.text(), "Cleared: the conversation starts over.");
    assert_eq!(server.requests().len(), 1);

    let unknown = client
        .call("session/prompt", prompt(&session_id, "/nope"))
        .await;
    let message = unknown.response["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Unknown command /nope."), "{message}");
    // The client's mistake, not an internal error.
    assert_eq!(
        unknown.response["error"]["code"], -32602,
        "{}",
        unknown.response
    );

    let again = client
        .call("session/prompt", prompt(&session_id, "Again"))
        .await;
    assert_eq!(again.result()["stopReason"], "end_turn");
    assert_eq!(again.text(), "Second.");
    let bodies = support::bodies(&server);
    assert_eq!(bodies[1]["model"], "mock-model-large");
    assert_eq!(
        support::conversation(bodies[1]["messages"].as_array().unwrap()),
        ["user: Again"],
        "the cleared conversation is not sent"
    );
    // The system prompt and tools are what they were: the cache holds.
    assert_eq!(bodies[1]["system"], bodies[0]["system"]);
    assert_eq!(bodies[1]["tools"], bodies[0]["tools"]);
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_a_write_until_the_plan_is_approved_then_writes_in_the_same_turn() {
    let world = World::new();
    let write = || json!({"file_path": "out.txt", "content": "planned\n"});
    let replies = vec![
        tool_call("call_write_1", "Write", write()),
        tool_call(
            "call_plan_1",
            "ExitPlanMode",
            json!({"plan": "1. Write out.txt\n2. Check it"}),
        ),
        tool_call("call_write_2", "Write", write()),
        Reply::Text("Done as planned.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "plan"}),
        )
        .await
        .result();

    let turn = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Plan, then write out.txt"),
            &mut |asked| {
                // The only question is the plan's: its choices, then "Don't answer".
                let options: Vec<&str> = asked["params"]["options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o["name"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    options,
                    [
                        "Yes, and accept edits",
                        "Yes, and ask before edits",
                        "No, keep planning",
                        "Don't answer"
                    ]
                );
                assert_eq!(asked["params"]["toolCall"]["toolCallId"], "call_plan_1");
                assert!(
                    asked["params"]["toolCall"]["content"]
                        .to_string()
                        .contains("1. Write out.txt"),
                    "the plan is shown: {asked}"
                );
                selected("answer_0")
            },
        )
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.asked.len(), 1, "the approved write did not ask");
    assert_eq!(
        std::fs::read(world.cwd().join("out.txt")).unwrap(),
        b"planned\n"
    );
    assert_eq!(turn.text(), "Done as planned.");
    let modes = turn.of_kind("current_mode_update");
    assert_eq!(modes.len(), 1, "{:#?}", turn.updates);
    assert_eq!(modes[0]["currentModeId"], "accept-edits");

    let bodies = support::bodies(&server);
    let refused = support::tool_result(&bodies[1], "call_write_1");
    assert_eq!(refused["is_error"], true);
    assert!(
        refused["content"]
            .to_string()
            .contains("Plan mode: cannot write")
            && refused["content"].to_string().contains(
                "until the plan is approved. Finish the plan and call ExitPlanMode. Do not retry"
            ),
        "{refused}"
    );
    let approved = support::tool_result(&bodies[2], "call_plan_1");
    assert!(
        approved["content"]
            .to_string()
            .contains("The person approved the plan. The permission mode is now accept-edits."),
        "{approved}"
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_shows_the_choices_and_the_model_gets_the_answer() {
    let world = World::new();
    let replies = vec![
        tool_call(
            "call_ask_1",
            "AskUser",
            json!({"questions": [
                {"question": "Which database should the service use?", "header": "Database",
                 "options": [{"label": "Postgres", "description": "already in production"}, {"label": "SQLite"}]},
                {"question": "Anything else?"}
            ]}),
        ),
        Reply::Text("Postgres it is.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let turn = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Set up storage"),
            &mut |asked| {
                assert_eq!(
                    asked["params"]["toolCall"]["title"],
                    "Database: Which database should the service use?"
                );
                let names: Vec<&str> = asked["params"]["options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o["name"].as_str().unwrap())
                    .collect();
                assert_eq!(
                    names,
                    ["Postgres — already in production", "SQLite", "Don't answer"]
                );
                selected("answer_0")
            },
        )
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    // The free-text question cannot be shown by an ACP client.
    assert_eq!(turn.asked.len(), 1);
    let body = support::bodies(&server)[1].to_string();
    assert!(
        body.contains(
            "The person answered:\\n- Which database should the service use? → Postgres\\n- Anything else? → (no answer)"
        ),
        "{body}"
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_handed_over_by_the_client_serve_that_session() {
    let Some(js) = support::everything_server("acp with MCP") else {
        return;
    };
    let world = World::new();
    let replies = vec![
        tool_call(
            "call_echo_1",
            "mcp__everything__echo",
            json!({"message": "from the editor's server"}),
        ),
        Reply::Text("Echoed.".into()),
    ];
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    let init = client.initialize().await;
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    let created = client
        .call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": [
                {"name": "everything", "command": "node",
                 "args": [js.to_str().unwrap(), "stdio"], "env": []},
                {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
            ]}),
        )
        .await;
    let session_id = created.result()["sessionId"].as_str().unwrap().to_owned();
    client.expect_commands(&session_id).await;

    let turn = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Echo through the editor's server"),
            &mut |asked| {
                assert_eq!(
                    asked["params"]["toolCall"]["toolCallId"], "call_echo_1",
                    "{asked}"
                );
                selected("allow_once")
            },
        )
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.asked.len(), 1, "an MCP tool asks in default mode");
    let body = &support::bodies(&server)[1];
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "call_echo_1");
    assert_eq!(
        result["content"][0]["text"],
        "Echo: from the editor's server"
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_parent_stops_its_subagent_with_both_transcripts_paired() {
    let world = World::new();
    let script = Script::new(
        WIRE,
        vec![
            support::task_call("call_task_1", "general-purpose", "Research slowly please"),
            Reply::Text("Back again.".into()),
        ],
    )
    .when("Research slowly please", stalled_partial_answer());
    let server = MockServer::start(script).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize().await;
    let session_id = client.new_session(&world).await;

    let id = client
        .send_request("session/prompt", prompt(&session_id, "Research"))
        .await;
    // The subagent is running once its own request reached the model.
    support::wait_until("the subagent's request", || server.requests().len() == 2).await;
    client
        .notify("session/cancel", json!({"sessionId": session_id}))
        .await;
    let mut exchange = Exchange::default();
    client
        .finish(id, &mut exchange, &mut |asked| {
            panic!("unexpected request: {asked}")
        })
        .await;
    assert_eq!(exchange.result()["stopReason"], "cancelled");

    let sessions = world.home.path().join("sessions");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    for file in &files {
        support::assert_paired(&support::transcript_messages(file));
    }
    let parent = world.transcript(&session_id);
    let messages = support::transcript_messages(&parent);
    assert_eq!(
        support::conversation(&messages),
        [
            "user: Research",
            "assistant: tool_use call_task_1",
            "user: tool_result call_task_1"
        ]
    );
    let child = files.iter().find(|f| **f != parent).unwrap();
    // Its brief, and whatever it had said when it was stopped.
    let said = support::conversation(&support::transcript_messages(child));
    assert_eq!(said[0], "user: Research slowly please", "{said:?}");
    assert!(said.len() <= 2, "{said:?}");

    // The session goes on.
    let next = client
        .call("session/prompt", prompt(&session_id, "Go on"))
        .await;
    assert_eq!(next.result()["stopReason"], "end_turn");
    assert_eq!(next.text(), "Back again.");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn riot_mcp_servers_reports_status_and_riot_mcp_restart_restarts() {
    let Some(js) = support::everything_server("acp with MCP") else {
        return;
    };
    let world = World::new();
    std::fs::write(
        world.home.path().join("mcp.json"),
        json!({"mcpServers": {
            "everything": {"command": "node", "args": [js.to_str().unwrap(), "stdio"]},
            "off": {"command": "true", "disabled": true}
        }})
        .to_string(),
    )
    .unwrap();
    let (server, mut client, _session_id) = AcpClient::in_session(&world, vec![]).await;

    let ready = |servers: &Value| {
        servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "everything" && s["status"] == "ready")
    };
    let mut listed = Value::Null;
    for _ in 0..600 {
        listed = client
            .call("_riot/mcp_servers", json!({}))
            .await
            .result()
            .clone();
        if ready(&listed) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let servers = listed["servers"].as_array().unwrap();
    let everything = servers.iter().find(|s| s["name"] == "everything").unwrap();
    assert_eq!(everything["status"], "ready", "{listed}");
    assert_eq!(everything["scope"], "user");
    assert_eq!(everything["transport"], "stdio");
    assert!(everything["tools"].as_u64().unwrap() >= 5, "{everything}");
    assert_eq!(
        everything["project"],
        world.cwd().to_str().unwrap(),
        "{everything}"
    );
    let off = servers.iter().find(|s| s["name"] == "off").unwrap();
    assert_eq!(off["status"], "disabled");

    let restarted = client
        .call("_riot/mcp_restart", json!({"name": "everything"}))
        .await;
    restarted.result();
    let unknown = client
        .call("_riot/mcp_restart", json!({"name": "nope"}))
        .await;
    let message = unknown.response["error"]["message"].as_str().unwrap();
    assert!(message.contains("no MCP server `nope`"), "{message}");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_switched_with_slash_model_reaches_subagents() {
    let world = World::new();
    let script = Script::new(
        WIRE,
        vec![
            support::task_call("call_task_1", "explore", "Look around for me"),
            Reply::Text("Looked.".into()),
        ],
    )
    .when("Look around for me", Reply::Text("Nothing here.".into()));
    let server = MockServer::start(script).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize().await;
    let session_id = client.new_session(&world).await;
    client
        .call(
            "session/prompt",
            prompt(&session_id, "/model mock-model-large"),
        )
        .await
        .result();
    let turn = client
        .call("session/prompt", prompt(&session_id, "Look"))
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let models: Vec<String> = support::bodies(&server)
        .iter()
        .map(|b| b["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(models, ["mock-model-large"; 3], "parent, child, parent");
    client.close().await;
    server.shutdown().await;
}

/// The error of a response, as `(code, message)`.
fn error_of(exchange: &Exchange) -> (i64, String) {
    let error = &exchange.response["error"];
    assert!(
        error.is_object(),
        "expected an error: {}",
        exchange.response
    );
    (
        error["code"].as_i64().unwrap(),
        error["message"].as_str().unwrap().to_owned(),
    )
}

/// `_riot/config` reports the `notifications` setting in effect: the web
/// UI follows its `desktop` (docs/parallel.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_reports_the_notifications_setting_in_effect() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"notifications": {"desktop": false}}"#,
    )
    .unwrap();
    let mut client = AcpClient::start_with_env(&world, &["acp"], &[]);
    client.initialize().await;
    let config = client.call("_riot/config", json!({})).await;
    assert_eq!(
        config.result()["notifications"],
        json!({"bell": true, "title": true, "desktop": false}),
        "{}",
        config.response
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn onboarding_saves_the_endpoint_and_key_and_new_sessions_use_them() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![Reply::Text("Set up.".into())]))
        .await
        .unwrap();
    let base = server.base_url();
    let home = world.home.path();
    std::fs::write(
        home.join("settings.json"),
        r#"{"permissions": {"allow": ["Read"]}}"#,
    )
    .unwrap();
    // No provider, model or URL: what a first start looks like. Logging
    // everything, to show the key reaches no log line even so.
    let mut client = AcpClient::start_with_env(&world, &["acp"], &[("RIOT_LOG", "trace")]);
    client.initialize().await;

    let before = client.call("_riot/config", json!({})).await;
    assert_eq!(
        before.result(),
        &json!({"provider": null, "baseUrl": null, "model": null, "key": "missing",
                "keySource": null, "ready": false, "problem": "no provider configured",
                "notifications": {"bell": true, "title": true, "desktop": true}})
    );

    // Bad choices are refused with what to fix, and nothing is written.
    for (choice, says) in [
        (
            json!({"provider": "gemini", "model": "m"}),
            "unknown provider `gemini`: use anthropic, openai or openai-responses",
        ),
        (
            json!({"provider": "anthropic", "model": "  "}),
            "no model: enter the model's name, e.g. claude-sonnet-4-5 or qwen2.5-coder",
        ),
        (
            json!({"provider": "openai", "model": "m", "baseUrl": "ftp://host/v1"}),
            "base URL `ftp://host/v1` is not an http(s) address, e.g. http://127.0.0.1:11434/v1",
        ),
    ] {
        let refused = client.call("_riot/config_set", choice).await;
        assert_eq!(error_of(&refused), (-32602, says.to_owned()));
    }
    assert_eq!(
        std::fs::read_to_string(home.join("settings.json")).unwrap(),
        r#"{"permissions": {"allow": ["Read"]}}"#
    );
    assert!(!home.join("credentials.json").exists());

    let key = "sk-onboarding-7f3a";
    let saved = client
        .call(
            "_riot/config_set",
            json!({"provider": "anthropic", "model": "mock-model",
                   "baseUrl": format!("{base}/"), "apiKey": key}),
        )
        .await;
    assert_eq!(
        saved.result(),
        &json!({"provider": "anthropic", "baseUrl": base, "model": "mock-model",
                "key": "present", "keySource": "credentials.json", "ready": true,
                "problem": null,
                "notifications": {"bell": true, "title": true, "desktop": true}})
    );
    assert!(
        !saved.response.to_string().contains(key),
        "the key never comes back"
    );

    // Settings keep their other keys; the key lives only in credentials.json.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings,
        json!({"permissions": {"allow": ["Read"]}, "provider": "anthropic",
               "model": "mock-model", "base_url": base})
    );
    let credentials = home.join("credentials.json");
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(&credentials).unwrap()).unwrap();
    assert_eq!(stored, json!({"keys": {base.clone(): key}}));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&credentials)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);

    // A new session runs on it, and the key reaches the endpoint.
    let exchange = client
        .call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": []}),
        )
        .await;
    let result = exchange.result().clone();
    assert_eq!(result["_meta"]["riot"]["model"], "mock-model", "{result}");
    let session_id = result["sessionId"].as_str().unwrap().to_owned();
    client.expect_commands(&session_id).await;
    let turn = client
        .call("session/prompt", prompt(&session_id, "hello"))
        .await;
    assert_eq!(turn.text(), "Set up.");
    let request = server.requests().pop().unwrap();
    assert!(
        request
            .headers
            .iter()
            .any(|(name, value)| name == "x-api-key" && value == key),
        "{:?}",
        request.headers.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    client.close().await;
    let log = std::fs::read_to_string(home.join("logs/riot.log")).unwrap();
    assert!(
        log.contains("_riot/config_set"),
        "the trace log saw the request"
    );
    assert!(!log.contains(key), "the key is never logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_rename_delete_and_set_model_serve_the_ui() {
    let world = World::new();
    let project = world.project.path();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("target")).unwrap();
    std::fs::write(project.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(project.join("src/domain.rs"), "").unwrap();
    std::fs::write(project.join("target/main.o"), "").unwrap();
    std::fs::write(project.join("README.md"), "").unwrap();
    let (server, mut client, session_id) = AcpClient::in_session(
        &world,
        vec![Reply::Text("one".into()), Reply::Text("two".into())],
    )
    .await;

    // @ mentions: ranked, ignored files left out.
    let found = client
        .call("_riot/files", json!({"cwd": project, "query": "mai"}))
        .await;
    assert_eq!(
        found.result()["files"],
        json!(["src/main.rs", "src/domain.rs"])
    );
    let all = client
        .call(
            "_riot/files",
            json!({"cwd": project, "query": "", "limit": 2}),
        )
        .await;
    assert_eq!(all.result()["files"], json!(["README.md", "src/main.rs"]));
    let relative = client
        .call("_riot/files", json!({"cwd": "src", "query": ""}))
        .await;
    assert_eq!(
        error_of(&relative),
        (-32602, "cwd src is not an absolute path".to_owned())
    );

    // The model switch applies to the next request.
    let first = client
        .call("session/prompt", prompt(&session_id, "first"))
        .await;
    assert_eq!(first.text(), "one");
    let switched = client
        .call(
            "_riot/set_model",
            json!({"sessionId": session_id, "model": "mock-model-2"}),
        )
        .await;
    assert_eq!(switched.result(), &json!({}));
    client
        .call("session/prompt", prompt(&session_id, "second"))
        .await;
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("mock-model"), json!("mock-model-2")]);

    // A name replaces the first prompt as the title.
    client
        .call(
            "_riot/session_rename",
            json!({"sessionId": session_id, "title": "  Bug\nhunt  "}),
        )
        .await
        .result();
    let listed = client.call("session/list", json!({})).await;
    let sessions = listed.result()["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["title"], "Bug hunt");

    // Deleting removes the transcript; a second delete says it is gone.
    client
        .call("_riot/session_delete", json!({"sessionId": session_id}))
        .await
        .result();
    assert!(!world.transcript(&session_id).exists());
    let listed = client.call("session/list", json!({})).await;
    assert_eq!(listed.result()["sessions"], json!([]));
    let again = client
        .call("_riot/session_delete", json!({"sessionId": session_id}))
        .await;
    assert_eq!(
        error_of(&again),
        (
            -32602,
            format!(
                "no session `{session_id}`; `riot sessions list` shows the sessions that exist"
            )
        )
    );
    let gone = client
        .call(
            "_riot/set_model",
            json!({"sessionId": session_id, "model": "x"}),
        )
        .await;
    assert_eq!(
        error_of(&gone),
        (-32602, format!("unknown session `{session_id}`"))
    );
    client.close().await;
}

/// A parse error as `riot acp` answers a line it cannot read: `id` null,
/// code -32700; its message.
fn parse_error_message(line: &str) -> String {
    let message: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout carries a non-protocol line ({e}): {line}"));
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    assert_eq!(message["id"], Value::Null, "{message}");
    assert_eq!(message["error"]["code"], -32700, "{message}");
    message["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_is_not_utf8_gets_a_parse_error_and_the_agent_serves_on() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, Vec::new()))
        .await
        .unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.write_raw(b"\xff\xfe\n").await;
    let line = client.read_line().await;
    assert_eq!(
        parse_error_message(&line),
        "Parse error: the message is not valid UTF-8; 2 bytes: \"\u{fffd}\u{fffd}\""
    );
    // Still running, and answering.
    assert!(client.riot.child.try_wait().unwrap().is_none());
    let init = client.initialize().await;
    assert_eq!(init["agentInfo"]["name"], "riot", "{init}");
    assert!(client.riot.child.try_wait().unwrap().is_none());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_bad_line_is_quoted_by_a_short_excerpt_and_an_overlong_one_is_discarded() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, Vec::new()))
        .await
        .unwrap();
    let mut client = AcpClient::start(&world, &server);

    // 5 MB of junk under the line limit: not JSON, quoted by 100 characters.
    let mut junk = vec![b'x'; 5_000_000];
    junk.push(b'\n');
    client.write_raw(&junk).await;
    let line = client.read_line().await;
    assert!(line.len() < 1024, "the answer is {} bytes", line.len());
    assert_eq!(
        parse_error_message(&line),
        format!(
            "Parse error: the message is not valid JSON (syntax error at line 1, column 1); 5000000 bytes: \"{}…\"",
            "x".repeat(100)
        )
    );
    let init = client.initialize().await;
    assert_eq!(init["agentInfo"]["name"], "riot", "{init}");

    // Over the 8 MiB limit: discarded, even if it would be JSON.
    let mut long = br#"{"jsonrpc":"2.0","id":99,"method":"initialize","params":{"pad":""#.to_vec();
    long.resize(9 * 1024 * 1024, b'y');
    long.extend_from_slice(b"\"}}\n");
    let length = long.len() - 1;
    client.write_raw(&long).await;
    let line = client.read_line().await;
    assert!(line.len() < 1024, "the answer is {} bytes", line.len());
    let message = parse_error_message(&line);
    assert!(
        message.starts_with(&format!(
            "Parse error: the message is longer than the 8 MiB limit and was discarded; {length} bytes: \"{{\"jsonrpc\""
        )),
        "{message}"
    );
    assert!(message.ends_with("yyy…\""), "{message}");
    let init = client.initialize().await;
    assert_eq!(init["agentInfo"]["name"], "riot", "{init}");
    client.close().await;
    assert!(server.requests().is_empty());
}

/// "Always" is offered only when the chain says a rule would stick: never
/// for a safety finding, which the chain would ask about again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_is_offered_only_for_a_rule_that_would_stick() {
    let world = World::new();
    let write =
        |id: &str, path: &str| tool_call(id, "Write", json!({"file_path": path, "content": "x\n"}));
    let replies = vec![
        write("call_hook", ".git/hooks/pre-commit"),
        Reply::Text("Not written.".into()),
        write("call_out", "out.txt"),
        Reply::Text("Not written either.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    let options = |asked: &Value| -> Vec<(String, String)> {
        asked["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap().to_owned(),
                    o["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let hook = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Add a hook"),
            &mut |_| selected("reject_once"),
        )
        .await;
    assert_eq!(hook.asked.len(), 1, "{:#?}", hook.asked);
    let detail = &hook.asked[0]["params"]["toolCall"]["_meta"]["riot"]["detail"];
    assert_eq!(detail["reason"]["kind"], "safety", "{detail}");
    assert_eq!(
        options(&hook.asked[0]),
        [
            ("allow_once".to_owned(), "Allow".to_owned()),
            ("reject_once".to_owned(), "Reject".to_owned())
        ]
    );
    let out = client
        .call_answering(
            "session/prompt",
            prompt(&session_id, "Create out.txt"),
            &mut |_| selected("reject_once"),
        )
        .await;
    let kinds: Vec<(String, String)> = options(&out.asked[0]);
    assert!(
        kinds.contains(&(
            "allow_always".to_owned(),
            "Always allow Edit(./out.txt)".to_owned()
        )),
        "{kinds:?}"
    );
    assert!(!world.project.path().join(".git/hooks/pre-commit").exists());
    client.close().await;
    server.shutdown().await;
}

/// An image block in an ACP prompt reaches the model after the prompt's
/// text (docs/interfaces.md, ACP): `initialize` advertises it, the image
/// is sent as Riot sends a Read image, and the mock accepts the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_in_a_prompt_reaches_the_model() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"models": {"mock-model": {"vision": true}}}).to_string(),
    )
    .unwrap();
    // A 1x1 PNG (red pixel).
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
    let server = MockServer::start(Script::new(WIRE, vec![Reply::Text("A red dot.".into())]))
        .await
        .unwrap();
    let mut client = AcpClient::start(&world, &server);
    let init = client.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let session_id = client.new_session(&world).await;
    let turn = client
        .call(
            "session/prompt",
            json!({"sessionId": session_id, "prompt": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "mimeType": "image/png", "data": png}
            ]}),
        )
        .await;
    assert_eq!(
        turn.response["result"]["stopReason"], "end_turn",
        "{}",
        turn.response
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let content = requests[0].body["messages"][0]["content"].clone();
    assert_eq!(content[0], json!({"type": "text", "text": "What is this?"}));
    assert_eq!(
        content[1]["text"],
        "<attachment title=\"Image image 1\">\nImage image 1 (1x1 px).\n</attachment>"
    );
    assert_eq!(content[2]["type"], "image");
    assert_eq!(
        content[2]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": png})
    );
    client.close().await;
    server.shutdown().await;
}

/// The next `_riot/terminal` screen of `name` whose rows satisfy `ok`
/// (other messages are skipped), at most ten seconds.
async fn terminal_screen(
    client: &mut AcpClient,
    name: &str,
    ok: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let message = tokio::time::timeout_at(deadline, client.read())
            .await
            .expect("the screen never showed what was expected");
        let update = &message["params"]["update"];
        if message["method"] == "_riot/terminal"
            && update["type"] == "screen"
            && update["name"] == name
        {
            let rows = update["rows"].as_array().unwrap().clone();
            if ok(&rows) {
                return rows;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_watches_a_terminal_types_into_it_and_the_model_is_told() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"permissions": {"allow": ["Terminal"]}}"#,
    )
    .unwrap();
    let replies = vec![
        tool_call(
            "call_open",
            "Terminal",
            json!({"action": "open", "name": "py", "command": "python3 -q"}),
        ),
        Reply::Text("A Python REPL is open.".into()),
        tool_call(
            "call_read",
            "Terminal",
            json!({"action": "read", "name": "py"}),
        ),
        Reply::Text("You computed 42.".into()),
    ];
    let server = MockServer::start(Script::new(WIRE, replies)).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize_for(&["_riot/terminal"]).await;
    let session_id = client.new_session(&world).await;

    let id = client
        .send_request("session/prompt", prompt(&session_id, "Open a Python REPL"))
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"]["stopReason"], "end_turn");
    assert!(
        extensions
            .iter()
            .all(|e| e["method"] == "_riot/terminal"
                && e["params"]["sessionId"] == session_id.as_str()),
        "{extensions:#?}"
    );
    assert_eq!(
        extensions[0]["params"]["update"],
        json!({"type": "opened", "name": "py", "command": "python3 -q", "size": {"rows": 30, "cols": 100}})
    );
    assert!(
        extensions
            .iter()
            .any(|e| e["params"]["update"]["type"] == "screen"
                && e["params"]["update"]["rows"][0] == ">>>"),
        "{extensions:#?}"
    );

    // The person types into the terminal; the screen shows the answer.
    let id = client
        .send_request(
            "_riot/terminal_write",
            json!({"sessionId": session_id, "name": "py", "input": "6*7\r"}),
        )
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"], json!({}), "{:?}", responses[0]);
    let answered = |rows: &[Value]| rows.get(1) == Some(&json!("42"));
    let rows = match extensions.iter().find_map(|e| {
        let rows = e["params"]["update"]["rows"].as_array()?;
        answered(rows).then(|| rows.clone())
    }) {
        Some(rows) => rows,
        None => terminal_screen(&mut client, "py", answered).await,
    };
    assert_eq!(rows[0], ">>> 6*7");

    // An unknown terminal is the client's mistake, said plainly.
    let id = client
        .send_request(
            "_riot/terminal_write",
            json!({"sessionId": session_id, "name": "nope", "input": "x"}),
        )
        .await;
    let (responses, _, _) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["error"]["code"], -32602);
    assert!(
        responses[0]["error"]["data"]["error"]
            .as_str()
            .unwrap()
            .starts_with("no terminal named `nope`; open terminals: py"),
        "{}",
        responses[0]
    );

    // The person's next prompt tells the model what they typed; the
    // model's read after it does not say it again.
    let id = client
        .send_request("session/prompt", prompt(&session_id, "What did I do?"))
        .await;
    let (responses, _, _) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"]["stopReason"], "end_turn");
    let bodies = support::bodies(&server);
    let prompt_message = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        prompt_message.contains("What did I do?")
            && prompt_message.contains(
                "The person typed into terminal `py` since you last read it: 6*7<Enter>. Read it with the Terminal tool to see what it shows now."
            ),
        "{prompt_message}"
    );
    let read = support::tool_result(&bodies[3], "call_read").to_string();
    assert!(read.contains(">>> 6*7"), "{read}");
    assert!(!read.contains("The person typed"), "{read}");

    // The person resizes the terminal: the program is told its new size.
    let id = client
        .send_request(
            "_riot/terminal_resize",
            json!({"sessionId": session_id, "name": "py", "rows": 12, "cols": 60}),
        )
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert_eq!(
        responses[0]["result"],
        json!({"rows": 12, "cols": 60}),
        "{:?}",
        responses[0]
    );
    assert!(
        extensions.iter().any(|e| e["params"]["update"]
            == json!({"type": "resized", "name": "py", "size": {"rows": 12, "cols": 60}})),
        "{extensions:#?}"
    );
    let id = client
        .send_request(
            "_riot/terminal_write",
            json!({"sessionId": session_id, "name": "py", "input": "import os; os.get_terminal_size()\r"}),
        )
        .await;
    let _ = responses_to(&mut client, &[id]).await;
    let told = |rows: &[Value]| {
        rows.iter()
            .any(|r| r == &json!("os.terminal_size(columns=60, lines=12)"))
    };
    let rows = terminal_screen(&mut client, "py", told).await;
    assert!(rows.len() <= 12, "{rows:?}");
    // Too small a size is raised to the smallest Riot sets.
    let id = client
        .send_request(
            "_riot/terminal_resize",
            json!({"sessionId": session_id, "name": "py", "rows": 1, "cols": 1}),
        )
        .await;
    let (responses, _, _) = responses_to(&mut client, &[id]).await;
    assert_eq!(responses[0]["result"], json!({"rows": 5, "cols": 20}));
    // Closing the session closes its terminals, and the client that
    // watches them hears so before the close is answered.
    let id = client
        .send_request("session/close", json!({"sessionId": session_id}))
        .await;
    let (responses, _, extensions) = responses_to(&mut client, &[id]).await;
    assert!(responses[0].get("error").is_none(), "{:?}", responses[0]);
    assert!(
        extensions.iter().any(|e| e["method"] == "_riot/terminal"
            && e["params"]["update"] == json!({"type": "closed", "name": "py"})),
        "{extensions:#?}"
    );
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn riot_checkpoints_and_riot_rewind_take_back_a_turns_write_and_its_messages() {
    let world = World::new();
    let replies = vec![
        tool_call(
            "call_made",
            "Write",
            json!({"file_path": "made.txt", "content": "agent\n"}),
        ),
        Reply::Text("Written.".into()),
        Reply::Text("Fresh start.".into()),
    ];
    let (server, mut client, session_id) = AcpClient::in_session(&world, replies).await;
    client
        .call(
            "session/set_mode",
            json!({"sessionId": session_id, "modeId": "accept-edits"}),
        )
        .await
        .result();
    let turn = client
        .call("session/prompt", prompt(&session_id, "Make a file"))
        .await;
    assert_eq!(turn.result()["stopReason"], "end_turn");

    let points = client
        .call("_riot/checkpoints", json!({"sessionId": session_id}))
        .await;
    let point = &points.result()["points"][0];
    assert_eq!(point["number"], 1);
    assert_eq!(point["text"], "Make a file");
    assert_eq!(point["files"], json!(["made.txt"]));

    let rewound = client
        .call("_riot/rewind", json!({"sessionId": session_id, "to": 1}))
        .await;
    assert_eq!(
        rewound.result()["summary"],
        "Rewound to just before message 1. The conversation from there on is withdrawn. Removed: made.txt."
    );
    assert_eq!(
        rewound.result()["outcome"]["files"]["removed"],
        json!(["made.txt"])
    );
    assert!(!world.project.path().join("made.txt").exists());

    // Nothing is left to rewind to: the client's mistake, said plainly.
    let again = client
        .call("_riot/rewind", json!({"sessionId": session_id, "to": 1}))
        .await;
    let (code, message) = error_of(&again);
    assert_eq!(code, -32602);
    assert!(message.contains("no user message"), "{message}");

    let fresh = client
        .call("session/prompt", prompt(&session_id, "Start over"))
        .await;
    assert_eq!(fresh.text(), "Fresh start.");
    let last = support::bodies(&server).pop().unwrap();
    assert_eq!(
        support::conversation(last["messages"].as_array().unwrap()),
        ["user: Start over"]
    );
    client.close().await;
    server.shutdown().await;
}

/// `session/new` says whether the session's commands run in the OS
/// sandbox, in the words every face shows: under bubblewrap, under
/// Landlock alone (bubblewrap hidden from `PATH`), and turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_new_says_whether_and_how_commands_are_sandboxed() {
    let world = World::new();
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let base = server.base_url();
    let args = [
        "acp",
        "--provider",
        provider(WIRE),
        "--base-url",
        base.as_str(),
        "--model",
        "mock-model",
    ];
    let empty = tempfile::tempdir().unwrap();
    let path = std::env::var("PATH").unwrap();
    let bwrap_found = path
        .split(':')
        .any(|dir| std::path::Path::new(dir).join("bwrap").is_file());
    let mut cases: Vec<(Vec<(&str, &str)>, &str)> = vec![(
        vec![],
        "not sandboxed: the sandbox is turned off ($RIOT_SANDBOX is off); unset it to turn it on",
    )];
    let landlock_path = empty.path().to_str().unwrap().to_owned();
    if std::env::var("CI").is_ok() || bwrap_found {
        cases.push((vec![("RIOT_SANDBOX", "on")], "sandboxed (bubblewrap)"));
        cases.push((
            vec![("RIOT_SANDBOX", "on"), ("PATH", landlock_path.as_str())],
            "sandboxed (Landlock)",
        ));
    }
    for (env, expected) in cases {
        let mut client = AcpClient::start_with_env(&world, &args, &env);
        client.initialize().await;
        let exchange = client
            .call(
                "session/new",
                json!({"cwd": world.project.path(), "mcpServers": []}),
            )
            .await;
        let result = exchange.result().clone();
        assert_eq!(
            result["_meta"]["riot"]["sandbox"], expected,
            "{env:?}: {result}"
        );
    }
}

/// `session/new` by hand (the helper drops its answer): the result, after
/// the slash commands that follow it.
async fn new_session_answer(client: &mut AcpClient, world: &World) -> (String, Value) {
    let exchange = client
        .call(
            "session/new",
            json!({"cwd": world.project.path(), "mcpServers": []}),
        )
        .await;
    let result = exchange.result().clone();
    let id = result["sessionId"].as_str().unwrap().to_owned();
    client.expect_commands(&id).await;
    (id, result)
}

/// The config option `id` of an answer carrying `configOptions`.
fn config_option<'a>(result: &'a Value, id: &str) -> Option<&'a Value> {
    result["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
}

fn set_option(session_id: &str, id: &str, value: &str) -> Value {
    json!({"sessionId": session_id, "configId": id, "value": value})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_option_lists_the_endpoints_models_and_thinking_high_reaches_the_request() {
    let world = World::new();
    let server = MockServer::start(
        Script::new(WIRE, vec![Reply::Text("Thought it over.".into())])
            .models(&["claude-opus-4-1", "claude-haiku-4-5"]),
    )
    .await
    .unwrap();
    let base = server.base_url();
    let mut client = AcpClient::start_with(
        &world,
        &[
            "acp",
            "--provider",
            "anthropic",
            "--base-url",
            &base,
            "--model",
            "claude-sonnet-4-5",
        ],
    );
    client.initialize().await;
    let (session_id, result) = new_session_answer(&mut client, &world).await;
    let model = config_option(&result, "model").unwrap();
    assert_eq!(model["currentValue"], "claude-sonnet-4-5");
    let offered: Vec<(&str, &str)> = model["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["value"].as_str().unwrap(), o["name"].as_str().unwrap()))
        .collect();
    assert_eq!(offered[0], ("claude-sonnet-4-5", "claude-sonnet-4-5"));
    // The endpoint's models, with the names it gives them.
    for listed in [
        ("claude-opus-4-1", "Claude Opus 4 1"),
        ("claude-haiku-4-5", "Claude Haiku 4 5"),
    ] {
        assert!(offered.contains(&listed), "{listed:?} not in {offered:?}");
    }
    let ids: Vec<&str> = offered.iter().map(|(id, _)| *id).collect();
    let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "repeated: {ids:?}");
    // Asked once, with Anthropic's headers.
    let listings = server.model_listings();
    assert_eq!(listings.len(), 1);
    assert_eq!(listings[0].path, "/v1/models");
    assert_eq!(listings[0].status, 200);
    // A model that can think gets the thinking option, off to start with.
    let thinking = config_option(&result, "thinking").unwrap();
    assert_eq!(thinking["category"], "thought_level");
    assert_eq!(thinking["currentValue"], "off");

    let switched = client
        .call(
            "session/set_config_option",
            set_option(&session_id, "model", "claude-opus-4-1"),
        )
        .await;
    assert_eq!(
        config_option(switched.result(), "model").unwrap()["currentValue"],
        "claude-opus-4-1"
    );
    let high = client
        .call(
            "session/set_config_option",
            set_option(&session_id, "thinking", "high"),
        )
        .await;
    assert_eq!(
        config_option(high.result(), "thinking").unwrap()["currentValue"],
        "high"
    );
    let unknown = client
        .call(
            "session/set_config_option",
            set_option(&session_id, "thinking", "max"),
        )
        .await;
    assert_eq!(
        error_of(&unknown),
        (
            -32602,
            "unknown thinking level `max`; use off, low, medium or high".to_owned()
        )
    );

    let answer = client
        .call("session/prompt", prompt(&session_id, "Think hard"))
        .await;
    assert_eq!(answer.result()["stopReason"], "end_turn");
    let bodies = support::bodies(&server);
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0]["model"], "claude-opus-4-1");
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384})
    );
    // The answer keeps its room beside the thinking budget.
    assert!(
        bodies[0]["max_tokens"].as_u64().unwrap() > 16384 + 1024,
        "{}",
        bodies[0]["max_tokens"]
    );
    assert_eq!(server.model_listings().len(), 1, "listed once per session");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_reaches_chat_completions_as_reasoning_effort() {
    let world = World::new();
    let server = MockServer::start(
        Script::new(Wire::Openai, vec![Reply::Text("Reasoned.".into())]).models(&["gpt-5-mini"]),
    )
    .await
    .unwrap();
    let base = server.base_url();
    let mut client = AcpClient::start_with(
        &world,
        &[
            "acp",
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "gpt-5",
        ],
    );
    client.initialize().await;
    let (session_id, result) = new_session_answer(&mut client, &world).await;
    let model = config_option(&result, "model").unwrap();
    assert!(
        model["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "gpt-5-mini"),
        "{model}"
    );
    assert_eq!(server.model_listings()[0].path, "/v1/models");
    let high = client
        .call(
            "session/set_config_option",
            set_option(&session_id, "thinking", "high"),
        )
        .await;
    assert_eq!(
        config_option(high.result(), "thinking").unwrap()["currentValue"],
        "high"
    );
    let answer = client
        .call("session/prompt", prompt(&session_id, "Reason"))
        .await;
    assert_eq!(answer.result()["stopReason"], "end_turn");
    let bodies = support::bodies(&server);
    assert_eq!(bodies[0]["model"], "gpt-5");
    assert_eq!(bodies[0]["reasoning_effort"], "high");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_listing_the_configured_models_are_offered_and_a_model_that_cannot_think_has_no_thinking()
 {
    let world = World::new();
    // The mock lists nothing: its models path is a 404.
    let server = MockServer::start(Script::new(WIRE, vec![])).await.unwrap();
    let mut client = AcpClient::start(&world, &server);
    client.initialize().await;
    let (session_id, result) = new_session_answer(&mut client, &world).await;
    let model = config_option(&result, "model").unwrap();
    assert_eq!(model["currentValue"], "mock-model");
    assert_eq!(server.model_listings()[0].status, 404);
    assert!(
        config_option(&result, "thinking").is_none(),
        "mock-model cannot think: {result}"
    );
    let refused = client
        .call(
            "session/set_config_option",
            set_option(&session_id, "thinking", "high"),
        )
        .await;
    assert_eq!(
        error_of(&refused),
        (
            -32602,
            "`mock-model` cannot think; `thinking` is not offered for it".to_owned()
        )
    );
    client.close().await;
    server.shutdown().await;
}
