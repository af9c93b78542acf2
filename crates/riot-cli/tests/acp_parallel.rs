//! The message queue and background agents over ACP (docs/parallel.md,
//! docs/interfaces.md): a JSON-RPC client drives the real `riot acp`
//! against the strict mock model. `_riot/queue` edits the session
//! handle's queue while a turn runs and the loop delivers it after the
//! tool results; `_riot/background` lists a background Task and
//! `_riot/background_stop` ends it, its command included, with its result
//! reaching the parent once. The client asks for `_riot/queue_update` and
//! `_riot/background_update` and checks what they say.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{PATIENCE, Running, World, provider, tool_call};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

const WIRE: Wire = Wire::Anthropic;

/// A small ACP client over `riot acp`'s stdio that keeps every
/// notification it reads.
struct Client {
    riot: Running,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    /// Every notification read, in order.
    notes: Vec<Value>,
}

impl Client {
    /// `riot acp` against `server`, initialized asking for the queue and
    /// background notifications, with one session open.
    async fn start(world: &World, server: &MockServer) -> (Self, String) {
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
        let mut client = Self {
            riot,
            stdin,
            lines,
            next_id: 0,
            notes: Vec::new(),
        };
        let init = client
            .ok(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {"_meta": {"riot": {
                    "notifications": ["_riot/queue_update", "_riot/background_update"]}}}}),
            )
            .await;
        let riot = &init["agentCapabilities"]["_meta"]["riot"];
        for method in [
            "_riot/queue",
            "_riot/background",
            "_riot/background_stop",
            "_riot/deliver",
        ] {
            assert!(
                riot["requests"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(method)),
                "{riot}"
            );
        }
        for method in ["_riot/queue_update", "_riot/background_update"] {
            assert!(
                riot["notifications"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(method)),
                "{riot}"
            );
        }
        let session = client
            .ok(
                "session/new",
                json!({"cwd": world.project.path(), "mcpServers": []}),
            )
            .await;
        let id = session["sessionId"].as_str().unwrap().to_owned();
        (client, id)
    }

    async fn write(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Reads one message: notifications are kept, the agent's requests
    /// (permission questions) fail the test; a response is returned.
    async fn read(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("riot acp went silent")
            .unwrap()
            .expect("riot acp closed stdout");
        let message: Value = serde_json::from_str(&line).unwrap();
        match (message.get("method"), message.get("id")) {
            (Some(_), Some(_)) => panic!("unexpected request from the agent: {message}"),
            (Some(_), None) => {
                self.notes.push(message);
                None
            }
            _ => Some(message),
        }
    }

    /// The response to request `id`.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            if let Some(message) = self.read().await {
                assert_eq!(message["id"], id, "{message}");
                return message;
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id).await
    }

    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Reads notifications until one satisfies `check`; returns it.
    async fn note(&mut self, check: impl Fn(&Value) -> bool) -> Value {
        let mut seen = 0;
        loop {
            if let Some(found) = self.notes[seen..].iter().find(|n| check(n)) {
                return found.clone();
            }
            seen = self.notes.len();
            if let Some(message) = self.read().await {
                panic!("a response nobody waited for: {message}");
            }
        }
    }

    async fn close(mut self) {
        drop(self.stdin.take());
        let out = self.riot.finish().await;
        assert_eq!(out.code, Some(0), "{out:?}");
    }
}

/// A queued message as `[id, text, origin]`.
type Queued = [String; 3];

/// The messages' `[id, text, origin]`.
fn queued(messages: &Value) -> Vec<Queued> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            [
                m["id"].as_str().unwrap().to_owned(),
                m["text"].as_str().unwrap().to_owned(),
                m["origin"].as_str().unwrap().to_owned(),
            ]
        })
        .collect()
}

/// A request body's content in order: text blocks as they are, tool
/// results as `result:<id>`, tool uses as `use:<id>`.
fn flattened(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(text) => out.push(text.clone()),
            Value::Array(blocks) => {
                for block in blocks {
                    match block["type"].as_str() {
                        Some("text") => out.push(block["text"].as_str().unwrap().to_owned()),
                        Some("tool_result") => {
                            out.push(format!("result:{}", block["tool_use_id"].as_str().unwrap()));
                        }
                        Some("tool_use") => {
                            out.push(format!("use:{}", block["id"].as_str().unwrap()));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn error_message(response: &Value) -> String {
    assert_eq!(response["error"]["code"], -32602, "{response}");
    response["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_messages_wait_in_the_session_are_edited_and_removed_and_follow_the_tool_results() {
    let world = World::new();
    let gate = world.project.path().join("go");
    // The command waits for the test's signal, so the queue is changed
    // while the turn runs, deterministically.
    let command = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; echo went",
        gate.display()
    );
    let server = MockServer::start(Script::new(
        WIRE,
        vec![
            tool_call(
                "call_wait",
                "Bash",
                json!({"command": command, "description": "Wait for the signal"}),
            ),
            Reply::Text("Noted both.".into()),
        ],
    ))
    .await
    .unwrap();
    let (mut client, session) = Client::start(&world, &server).await;
    client
        .ok(
            "session/set_mode",
            json!({"sessionId": session, "modeId": "bypass"}),
        )
        .await;
    let turn = client
        .send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "Wait, then answer"}]}),
        )
        .await;
    client
        .note(|n| {
            n["method"] == "session/update"
                && n["params"]["update"]["sessionUpdate"] == "tool_call"
                && n["params"]["update"]["status"] == "in_progress"
        })
        .await;

    let pushed = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "push", "text": "also check b"}),
        )
        .await;
    let first = pushed["id"].as_str().unwrap().to_owned();
    assert_eq!(
        queued(&pushed["messages"]),
        [[first.clone(), "also check b".into(), "person".into()]]
    );
    let second = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "push", "text": "never mind"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let edited = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "edit", "id": first, "text": "also check b and d"}),
        )
        .await;
    assert_eq!(
        queued(&edited["messages"]),
        [
            [first.clone(), "also check b and d".into(), "person".into()],
            [second.clone(), "never mind".into(), "person".into()],
        ]
    );
    let removed = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "remove", "id": second}),
        )
        .await;
    assert_eq!(
        queued(&removed["messages"]),
        [[first.clone(), "also check b and d".into(), "person".into()]]
    );
    // An id that is not waiting is refused, naming what is.
    let unknown = client
        .call(
            "_riot/queue",
            json!({"sessionId": session, "action": "remove", "id": second}),
        )
        .await;
    assert_eq!(
        error_message(&unknown),
        format!(
            "there is no queued message `{second}` in this session: it was delivered or removed; the queued ones are `{first}`"
        )
    );
    let no_text = client
        .call(
            "_riot/queue",
            json!({"sessionId": session, "action": "push", "text": "  "}),
        )
        .await;
    assert_eq!(
        error_message(&no_text),
        "push needs the message's `text`, not empty"
    );
    let listed = client
        .ok("_riot/queue", json!({"sessionId": session}))
        .await;
    assert_eq!(queued(&listed["messages"]).len(), 1);

    std::fs::write(&gate, "").unwrap();
    let end = client.response(turn).await;
    assert_eq!(end["result"]["stopReason"], "end_turn", "{end}");

    // The client heard each change, and the delivery.
    let updates: Vec<(Vec<Queued>, Vec<Queued>)> = client
        .notes
        .iter()
        .filter(|n| n["method"] == "_riot/queue_update")
        .map(|n| {
            assert_eq!(n["params"]["sessionId"], session);
            (
                queued(&n["params"]["messages"]),
                queued(&n["params"]["delivered"]),
            )
        })
        .collect();
    let kept = [first.clone(), "also check b and d".into(), "person".into()];
    assert_eq!(
        updates,
        [
            (
                vec![[first.clone(), "also check b".into(), "person".into()]],
                vec![]
            ),
            (
                vec![
                    [first.clone(), "also check b".into(), "person".into()],
                    [second.clone(), "never mind".into(), "person".into()]
                ],
                vec![]
            ),
            (
                vec![
                    kept.clone(),
                    [second.clone(), "never mind".into(), "person".into()]
                ],
                vec![]
            ),
            (vec![kept.clone()], vec![]),
            (vec![], vec![kept.clone()]),
        ]
    );

    // The model's next request has the message right after the results.
    let bodies = support::bodies(&server);
    assert_eq!(bodies.len(), 2);
    let second_request = flattened(&bodies[1]);
    assert_eq!(
        second_request,
        [
            "Wait, then answer",
            "use:call_wait",
            "result:call_wait",
            "also check b and d"
        ],
        "{:#}",
        bodies[1]
    );
    assert!(!bodies[0].to_string().contains("also check"));

    // Between turns the queue waits for the client, which takes it to
    // send it as its next prompt.
    client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "push", "text": "next one"}),
        )
        .await;
    let taken = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "take"}),
        )
        .await;
    assert_eq!(queued(&taken["messages"]), Vec::<[String; 3]>::new());
    let taken = queued(&taken["taken"]);
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0][1], "next one");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_task_is_listed_and_stopped_and_the_parent_gets_its_end_once() {
    let world = World::new();
    let marker = format!("sleep 47.{}", std::process::id());
    let server = MockServer::start(
        Script::new(
            WIRE,
            vec![
                tool_call(
                    "call_bg",
                    "Task",
                    json!({"description": "wait around", "prompt": "CHILD-SLEEP wait",
                           "subagent_type": "explore", "run_in_background": true}),
                ),
                Reply::Text("PARENT-STARTED".into()),
                // The next turn: one tool call, then the answer.
                tool_call(
                    "call_echo",
                    "Bash",
                    json!({"command": "echo hi", "description": "Say hi"}),
                ),
                Reply::Text("PARENT-DONE".into()),
            ],
        )
        .when(
            "CHILD-SLEEP",
            tool_call(
                "call_child_sleep",
                "Bash",
                json!({"command": marker, "description": "wait"}),
            ),
        ),
    )
    .await
    .unwrap();
    let (mut client, session) = Client::start(&world, &server).await;
    let end = client
        .ok(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "PARENT start"}]}),
        )
        .await;
    assert_eq!(end["stopReason"], "end_turn");
    // The processes found by the check that passed: a second look could
    // miss one that was still starting (its command line not yet the
    // command's).
    let mut sleeping = Vec::new();
    support::wait_until("the background command to start", || {
        sleeping = support::processes_with(&marker);
        !sleeping.is_empty()
    })
    .await;
    let _guard = support::GroupGuard {
        pgid: support::pgid_of(sleeping[0]),
    };
    // The task counts the call once its loop has taken the call's start,
    // which on a loaded machine can come just after the command started.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let listed = loop {
        let listed = client
            .ok("_riot/background", json!({"sessionId": session}))
            .await;
        if listed["tasks"][0]["calls"] != 0 || tokio::time::Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let tasks = listed["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{listed}");
    assert_eq!(tasks[0]["id"], "bg_1");
    assert_eq!(tasks[0]["agent"], "explore");
    assert_eq!(tasks[0]["description"], "wait around");
    assert_eq!(tasks[0]["state"], "running");
    assert_eq!(tasks[0]["calls"], 1);
    assert_eq!(
        tasks[0]["last"],
        format!("explore: wait ({marker})"),
        "{listed}"
    );
    assert_eq!(tasks[0]["result"], Value::Null);

    // Unknown ids are refused, naming the session's tasks.
    let unknown = client
        .call(
            "_riot/background_stop",
            json!({"sessionId": session, "id": "bg_9"}),
        )
        .await;
    assert_eq!(
        error_message(&unknown),
        "there is no background task `bg_9` in this session; its tasks are bg_1"
    );
    let stopped = client
        .ok(
            "_riot/background_stop",
            json!({"sessionId": session, "id": "bg_1"}),
        )
        .await;
    assert_eq!(stopped["task"]["id"], "bg_1");
    let ended = client
        .note(|n| {
            n["method"] == "_riot/background_update" && n["params"]["task"]["state"] != "running"
        })
        .await;
    assert_eq!(ended["params"]["sessionId"], session);
    assert_eq!(ended["params"]["task"]["state"], "stopped", "{ended}");
    assert_eq!(
        ended["params"]["task"]["result"],
        "The background task was stopped before it finished."
    );
    support::wait_until("the background command to be killed", || {
        sleeping.iter().all(|p| support::is_gone(*p))
    })
    .await;
    // Stopping it again says it has ended.
    let again = client
        .call(
            "_riot/background_stop",
            json!({"sessionId": session, "id": "bg_1"}),
        )
        .await;
    assert_eq!(
        error_message(&again),
        "background task `bg_1` has already ended (stopped); there is nothing to stop"
    );
    // The start, the tool call and the end were told, in order.
    let states: Vec<(String, u64)> = client
        .notes
        .iter()
        .filter(|n| n["method"] == "_riot/background_update")
        .map(|n| {
            (
                n["params"]["task"]["state"].as_str().unwrap().to_owned(),
                n["params"]["task"]["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("running".to_owned(), 0),
            ("running".to_owned(), 1),
            ("stopped".to_owned(), 1)
        ]
    );

    // Its result waits in the queue as Riot's message…
    let waiting = client
        .ok("_riot/queue", json!({"sessionId": session}))
        .await;
    let waiting = queued(&waiting["messages"]);
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0][2], "riot");
    assert!(
        waiting[0][1].starts_with(
            "<background-task id=\"bg_1\" agent=\"explore\" status=\"stopped\">\nThe background task was stopped before it finished.\n</background-task>"
        ),
        "{waiting:?}"
    );
    // …which the person cannot change…
    let edit = client
        .call(
            "_riot/queue",
            json!({"sessionId": session, "action": "edit", "id": waiting[0][0], "text": "x"}),
        )
        .await;
    assert!(
        error_message(&edit).ends_with(
            "is a background task's result Riot queued for the agent; it cannot be edited or removed"
        ),
        "{edit}"
    );
    // …and the parent gets it once, with its next prompt, after the
    // person's words.
    let end = client
        .ok(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "PARENT go on"}]}),
        )
        .await;
    assert_eq!(end["stopReason"], "end_turn");
    let parents: Vec<Value> = support::bodies(&server)
        .into_iter()
        .filter(|b| b["messages"][0].to_string().contains("PARENT start"))
        .collect();
    let last = flattened(parents.last().unwrap());
    let delivered: Vec<&String> = last
        .iter()
        .filter(|t| t.contains("status=\"stopped\""))
        .collect();
    assert_eq!(delivered.len(), 1, "{last:#?}");
    let at = last
        .iter()
        .position(|t| t.contains("status=\"stopped\""))
        .unwrap();
    assert_eq!(last[at - 1], "PARENT go on", "{last:#?}");
    for body in parents
        .iter()
        .filter(|b| !b.to_string().contains("PARENT go on"))
    {
        assert!(
            !body.to_string().contains("status=\\\"stopped\\\""),
            "{body}"
        );
    }
    // Nothing of it waits any more.
    let waiting = client
        .ok(
            "_riot/queue",
            json!({"sessionId": session, "action": "list"}),
        )
        .await;
    assert_eq!(waiting["messages"], json!([]), "{waiting}");
    client.close().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliver_gives_a_result_that_ended_after_the_turn_to_the_model_in_a_turn_of_its_own() {
    let world = World::new();
    let server = MockServer::start(support::background_agent_script(
        "sleep 1",
        "CHILD-ANSWER notes.txt",
        vec![
            Reply::Text("PARENT-IDLE".into()),
            Reply::Text("PARENT-SAW the notes".into()),
        ],
    ))
    .await
    .unwrap();
    let (mut client, session) = Client::start(&world, &server).await;
    // Nothing waits yet: no turn, and no request to the model.
    let none = client
        .ok("_riot/deliver", json!({"sessionId": session}))
        .await;
    assert_eq!(none, json!({"stopReason": null}));
    assert!(server.requests().is_empty());
    let unknown = client
        .call("_riot/deliver", json!({"sessionId": "ses_nope"}))
        .await;
    assert_eq!(error_message(&unknown), "unknown session `ses_nope`");

    let end = client
        .ok(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "PARENT start"}]}),
        )
        .await;
    assert_eq!(end["stopReason"], "end_turn");
    // The result arrives in the queue as Riot's message.
    let waiting = client
        .note(|n| {
            n["method"] == "_riot/queue_update"
                && n["params"]["messages"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["origin"] == "riot"))
        })
        .await;
    assert_eq!(waiting["params"]["sessionId"], session);
    let before = client.notes.len();
    let delivered = client
        .ok("_riot/deliver", json!({"sessionId": session}))
        .await;
    assert_eq!(delivered, json!({"stopReason": "end_turn"}));
    // The turn streamed as a prompt's does, and the queue said the result
    // was delivered.
    let said: String = client.notes[before..]
        .iter()
        .filter(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|n| {
            n["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(said, "PARENT-SAW the notes");
    assert!(
        client.notes[before..].iter().any(|n| {
            n["method"] == "_riot/queue_update"
                && n["params"]["delivered"]
                    .as_array()
                    .is_some_and(|d| d.len() == 1)
        }),
        "{:#?}",
        &client.notes[before..]
    );
    let parents: Vec<Value> = support::bodies(&server)
        .into_iter()
        .filter(|b| b["messages"][0].to_string().contains("PARENT start"))
        .collect();
    assert_eq!(parents.len(), 3);
    let last = flattened(&parents[2]);
    assert_eq!(last[last.len() - 2], "PARENT-IDLE");
    assert!(
        last[last.len() - 1].starts_with(
            "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nCHILD-ANSWER notes.txt"
        ),
        "{last:#?}"
    );
    // Delivered once: asking again starts nothing.
    let again = client
        .ok("_riot/deliver", json!({"sessionId": session}))
        .await;
    assert_eq!(again, json!({"stopReason": null}));
    assert_eq!(
        support::bodies(&server)
            .iter()
            .filter(|b| b["messages"][0].to_string().contains("PARENT start"))
            .count(),
        3
    );
    client.close().await;
}
