//! Golden tests of `riot exec --output-format json|stream-json` against
//! the recorded description of Claude Code's headless output
//! (`fixtures/claude_code_headless_schema.json`, docs/interfaces.md): every
//! line has a known kind, every field the description requires is there
//! with its type, and no field is unknown — for a text-only task, a tool
//! task, a max-turns run and a provider error; plus the partial messages
//! of `--include-partial-messages` and a conversation held over
//! `--input-format stream-json`. The built binary runs against the strict
//! mock model server, which rejects what the real APIs reject.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::process::Stdio;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{
    NOTES, NOTES_NUMBERED, Running, World, bodies, conversation, lines_until, only_session, run,
    tool_call,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const ANSWER: &str = "The notes say alpha and beta.";

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

fn read_notes() -> Reply {
    tool_call("call_read_1", "Read", json!({"file_path": "notes.txt"}))
}

// ---- The recorded description, and a checker for it ----

/// `fixtures/claude_code_headless_schema.json`.
struct Schema(Value);

impl Schema {
    fn load() -> Self {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude_code_headless_schema.json"
        );
        Self(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
    }

    /// `system/init`, `assistant`, `result/success`, … for a line.
    fn kind(line: &Value) -> String {
        let kind = line["type"].as_str().unwrap_or("(no type)");
        match kind {
            "system" => format!("system/{}", line["subtype"].as_str().unwrap_or("")),
            "result" if line["subtype"] == "success" => "result/success".to_owned(),
            "result" => "result/error".to_owned(),
            other => other.to_owned(),
        }
    }

    /// What is wrong with one output line; empty when it matches.
    fn errors(&self, line: &Value) -> Vec<String> {
        let kind = Self::kind(line);
        let mut errors = Vec::new();
        match self.0["lines"].get(&kind) {
            Some(shape) => self.shape(line, shape, &kind, &mut errors),
            None => errors.push(format!(
                "{kind}: a line of a kind Claude Code does not write"
            )),
        }
        errors
    }

    /// Panics listing every mismatch of `lines`.
    fn assert_lines(&self, lines: &[Value]) {
        let errors: Vec<String> = lines.iter().flat_map(|l| self.errors(l)).collect();
        assert!(
            errors.is_empty(),
            "the output differs from Claude Code's headless schema:\n{}\nin:\n{}",
            errors.join("\n"),
            lines
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    fn shape(&self, value: &Value, shape: &Value, path: &str, errors: &mut Vec<String>) {
        let Some(object) = value.as_object() else {
            errors.push(format!("{path}: expected an object, got {value}"));
            return;
        };
        if let Some(tag) = shape["tag"].as_str() {
            let which = value[tag].as_str().unwrap_or("");
            match shape["variants"].get(which) {
                Some(variant) => self.shape(value, variant, path, errors),
                None => errors.push(format!("{path}: unknown {tag} `{which}`")),
            }
            return;
        }
        let riot = &shape["riot"];
        let not_written = riot["not_written"].as_object().cloned().unwrap_or_default();
        let type_of = |field: &str, declared: &Value| -> String {
            riot["types"][field]
                .as_str()
                .or(declared.as_str())
                .unwrap_or("any")
                .to_owned()
        };
        let mut known = Vec::new();
        for (group, required) in [("required", true), ("optional", false)] {
            let fields = shape[group].as_object().cloned().unwrap_or_default();
            for (field, declared) in fields {
                known.push(field.clone());
                if not_written.contains_key(&field) {
                    if object.contains_key(&field) {
                        errors.push(format!(
                            "{path}.{field}: the description says Riot does not write it"
                        ));
                    }
                    continue;
                }
                match object.get(&field) {
                    Some(v) => self.check(
                        v,
                        &type_of(&field, &declared),
                        &format!("{path}.{field}"),
                        errors,
                    ),
                    None if required => errors.push(format!("{path}.{field}: missing")),
                    None => {}
                }
            }
        }
        // Riot's own fields beside Claude Code's: always written.
        for (field, declared) in riot["fields"].as_object().cloned().unwrap_or_default() {
            known.push(field.clone());
            match object.get(&field) {
                Some(v) => self.check(
                    v,
                    declared.as_str().unwrap_or("any"),
                    &format!("{path}.{field}"),
                    errors,
                ),
                None => errors.push(format!("{path}.{field}: missing (a Riot field)")),
            }
        }
        for field in object.keys() {
            if !known.contains(field) {
                errors.push(format!(
                    "{path}.{field}: a field the description does not have"
                ));
            }
        }
    }

    /// Checks `value` against a type of the description's notation.
    fn check(&self, value: &Value, ty: &str, path: &str, errors: &mut Vec<String>) {
        let alternatives = split_alternatives(ty);
        let mut best: Option<Vec<String>> = None;
        for alt in &alternatives {
            let mut mine = Vec::new();
            if !self.matches_kind(value, alt) {
                continue;
            }
            self.check_one(value, alt, path, &mut mine);
            if mine.is_empty() {
                return;
            }
            best.get_or_insert(mine);
        }
        match best {
            Some(found) => errors.extend(found),
            None => errors.push(format!("{path}: expected {ty}, got {value}")),
        }
    }

    /// Whether `value` is of the JSON kind `alt` names (its details are
    /// checked by `check_one`).
    fn matches_kind(&self, value: &Value, alt: &str) -> bool {
        match alt {
            "string" => value.is_string(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "any" => true,
            _ if alt.starts_with('=') => value.as_str() == Some(&alt[1..]),
            _ if alt.starts_with("array<") => value.is_array(),
            _ if alt.starts_with('@') => value.is_object(),
            _ => panic!("the description has an unknown type `{alt}`"),
        }
    }

    fn check_one(&self, value: &Value, alt: &str, path: &str, errors: &mut Vec<String>) {
        if let Some(item) = alt.strip_prefix("array<").and_then(|a| a.strip_suffix('>')) {
            for (i, v) in value.as_array().unwrap().iter().enumerate() {
                self.check(v, item, &format!("{path}[{i}]"), errors);
            }
        } else if let Some(name) = alt.strip_prefix('@') {
            let shape = self.0["shapes"]
                .get(name)
                .unwrap_or_else(|| panic!("the description has no shape `{name}`"));
            self.shape(value, shape, path, errors);
        }
    }
}

/// `a|array<b|c>|d` → `a`, `array<b|c>`, `d`.
fn split_alternatives(ty: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in ty.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '|' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

/// The JSON lines of stdout.
fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The kinds of the lines, in order.
fn kinds(lines: &[Value]) -> Vec<String> {
    lines.iter().map(Schema::kind).collect()
}

/// The one result object of `--output-format json`, checked.
fn checked_json(schema: &Schema, out: &support::Run) -> Value {
    assert_eq!(out.stdout.lines().count(), 1, "one object: {out:?}");
    let result = out.json();
    schema.assert_lines(std::slice::from_ref(&result));
    result
}

#[test]
fn the_checker_finds_what_differs_from_the_description() {
    let schema = Schema::load();
    let good = json!({
        "type": "result", "subtype": "success", "uuid": "u", "session_id": "s",
        "duration_ms": 3, "duration_api_ms": 2, "is_error": false, "num_turns": 1,
        "result": "ok", "total_cost_usd": null,
        "usage": {"input_tokens": 1, "output_tokens": 2,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        "permission_denials": [], "reason": "completed",
        "side_usage": {"input_tokens": 0, "output_tokens": 0,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": null},
    });
    assert_eq!(schema.errors(&good), Vec::<String>::new());
    let mut broken = good.clone();
    broken.as_object_mut().unwrap().remove("usage");
    broken["num_turns"] = json!("1");
    broken["extra"] = json!(true);
    broken["permission_denials"] = json!([{"tool_name": "Bash", "tool_use_id": "t"}]);
    broken["modelUsage"] = json!({});
    assert_eq!(
        schema.errors(&broken),
        [
            "result/success.num_turns: expected integer, got \"1\"",
            "result/success.usage: missing",
            "result/success.modelUsage: the description says Riot does not write it",
            "result/success.permission_denials[0].tool_input: missing",
            "result/success.extra: a field the description does not have",
        ]
    );
    assert_eq!(
        schema.errors(&json!({"type": "tool_progress", "uuid": "u"})),
        ["tool_progress: a line of a kind Claude Code does not write"]
    );
    let block = json!({"type": "assistant", "uuid": "u", "session_id": "s", "parent_tool_use_id": null,
        "message": {"id": "m", "type": "message", "role": "assistant", "model": "x",
                    "content": [{"type": "image"}], "stop_reason": "done", "stop_sequence": null,
                    "usage": {"input_tokens": 0, "output_tokens": 0,
                              "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}});
    assert_eq!(
        schema.errors(&block),
        [
            "assistant.message.content[0]: unknown type `image`",
            "assistant.message.stop_reason: expected =end_turn|=max_tokens|=stop_sequence|=tool_use|=pause_turn|=refusal|null, got \"done\"",
        ]
    );
}

// ---- The four runs of the issue, in json and stream-json ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_task_matches_claude_codes_shapes() {
    let schema = Schema::load();
    let world = World::new();
    let wire = Wire::Anthropic;
    let server = server(vec![Reply::Text(ANSWER.into()), Reply::Text(ANSWER.into())]).await;

    let out = run(world.exec(&server, wire, &["--output-format", "json", "Summarize"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = checked_json(&schema, &out);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], ANSWER);
    assert_eq!(result["num_turns"], 1);
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 10, "output_tokens": 5,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    );
    assert_eq!(result["session_id"].as_str().unwrap(), only_session(&world));

    let world = World::new();
    let args = ["--output-format", "stream-json", "Summarize"];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = json_lines(&out.stdout);
    schema.assert_lines(&lines);
    assert_eq!(
        kinds(&lines),
        ["system/init", "assistant", "result/success"]
    );
    let id = only_session(&world);
    for line in &lines {
        assert_eq!(line["session_id"], id.as_str(), "{line}");
    }
    let init = &lines[0];
    assert_eq!(init["cwd"], world.cwd().to_str().unwrap());
    assert_eq!(init["model"], "mock-model");
    assert_eq!(init["permissionMode"], "default");
    assert_eq!(init["mcp_servers"], json!([]));
    // The tools are those the model was offered, in the order sent.
    let sent = bodies(&server);
    let offered: Vec<&str> = sent[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tools, offered);
    let commands = init["slash_commands"].as_array().unwrap();
    assert!(commands.contains(&json!("compact")), "{init}");
    assert!(
        commands
            .iter()
            .all(|c| !c.as_str().unwrap().starts_with('/'))
    );

    let message = &lines[1]["message"];
    assert_eq!(
        message["content"],
        json!([{"type": "text", "text": ANSWER}])
    );
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(message["model"], "mock-model");
    assert_eq!(message["usage"]["output_tokens"], 5);
    assert_eq!(lines[2]["result"], ANSWER);
    // Each line has its own id.
    let mut uuids: Vec<&str> = lines.iter().map(|l| l["uuid"].as_str().unwrap()).collect();
    uuids.sort_unstable();
    uuids.dedup();
    assert_eq!(uuids.len(), lines.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_task_matches_claude_codes_shapes() {
    let schema = Schema::load();
    let wire = Wire::Anthropic;
    let server = server(vec![
        read_notes(),
        Reply::Text(ANSWER.into()),
        read_notes(),
        Reply::Text(ANSWER.into()),
    ])
    .await;

    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let out = run(world.exec(
        &server,
        wire,
        &["--output-format", "json", "Summarize notes.txt"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = checked_json(&schema, &out);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["result"], ANSWER);
    assert_eq!(result["permission_denials"], json!([]));

    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let args = ["--output-format", "stream-json", "Summarize notes.txt"];
    let out = run(world.exec(&server, wire, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = json_lines(&out.stdout);
    schema.assert_lines(&lines);
    assert_eq!(
        kinds(&lines),
        [
            "system/init",
            "assistant",
            "user",
            "assistant",
            "result/success"
        ]
    );
    assert_eq!(
        lines[1]["message"]["content"],
        json!([{"type": "tool_use", "id": "call_read_1", "name": "Read",
                "input": {"file_path": "notes.txt"}}])
    );
    assert_eq!(lines[1]["message"]["stop_reason"], "tool_use");
    assert_eq!(
        lines[2]["message"],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_read_1",
               "content": NOTES_NUMBERED, "is_error": false}]})
    );
    assert_eq!(lines[4]["num_turns"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_turns_run_matches_claude_codes_shapes() {
    let schema = Schema::load();
    let wire = Wire::Anthropic;
    let again = || tool_call("call_read_2", "Read", json!({"file_path": "notes.txt"}));
    let server = server(vec![read_notes(), again(), read_notes(), again()]).await;
    for format in ["json", "stream-json"] {
        let world = World::new();
        std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
        let args = [
            "--max-turns",
            "1",
            "--output-format",
            format,
            "Keep reading",
        ];
        let out = run(world.exec(&server, wire, &args)).await;
        assert_eq!(out.code, Some(3), "{format}: {out:?}");
        let lines = json_lines(&out.stdout);
        schema.assert_lines(&lines);
        let result = lines.last().unwrap();
        if format == "stream-json" {
            assert_eq!(
                kinds(&lines),
                ["system/init", "assistant", "user", "result/error"]
            );
        }
        assert_eq!(result["subtype"], "error_max_turns", "{format}");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["reason"], "max_turns");
        assert_eq!(result["num_turns"], 1);
        assert_eq!(
            result["errors"],
            json!([
                "stopped after the maximum number of turns (1); raise --max-turns to let it go on"
            ])
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_error_matches_claude_codes_shapes() {
    let schema = Schema::load();
    let wire = Wire::Anthropic;
    let body = json!({"type": "error", "error": {"type": "invalid_request_error",
                      "message": "messages.0.content: the mock refuses this prompt"}});
    let error = || Reply::Error {
        status: 400,
        body: body.to_string(),
        headers: Vec::new(),
    };
    let server = server(vec![error(), error()]).await;
    for format in ["json", "stream-json"] {
        let world = World::new();
        let out = run(world.exec(&server, wire, &["--output-format", format, "Hello"])).await;
        assert_eq!(out.code, Some(1), "{format}: {out:?}");
        let lines = json_lines(&out.stdout);
        schema.assert_lines(&lines);
        if format == "stream-json" {
            assert_eq!(kinds(&lines), ["system/init", "result/error"]);
        }
        let result = lines.last().unwrap();
        assert_eq!(result["subtype"], "error_during_execution", "{format}");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["reason"], "error");
        assert_eq!(result["num_turns"], 1);
        assert_eq!(result["result"], "");
        let errors = result["errors"].as_array().unwrap();
        assert_eq!(errors.len(), 1, "{result}");
        assert!(
            errors[0]
                .as_str()
                .unwrap()
                .contains("the mock refuses this prompt"),
            "{result}"
        );
    }
}

// ---- Partial messages ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_messages_stream_each_reply_before_the_whole_message() {
    let schema = Schema::load();
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), NOTES).unwrap();
    let server = server(vec![read_notes(), Reply::Text(ANSWER.into())]).await;
    let args = [
        "--output-format",
        "stream-json",
        "--include-partial-messages",
        "Summarize notes.txt",
    ];
    let out = run(world.exec(&server, Wire::Anthropic, &args)).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines = json_lines(&out.stdout);
    schema.assert_lines(&lines);
    // Each reply: its raw events, then the whole message.
    let skeleton: Vec<String> = lines
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "stream_event" => l["event"]["type"].as_str().unwrap().to_owned(),
            _ => Schema::kind(l),
        })
        .collect();
    assert_eq!(
        skeleton,
        [
            "system/init",
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "assistant",
            "user",
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "assistant",
            "result/success",
        ]
    );
    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "stream_event")
        .map(|l| &l["event"])
        .collect();
    assert_eq!(
        events[1]["content_block"],
        json!({"type": "tool_use", "id": "call_read_1", "name": "Read", "input": {}})
    );
    let input: String = events[..6]
        .iter()
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&input).unwrap(),
        json!({"file_path": "notes.txt"})
    );
    let text: String = events[6..]
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, ANSWER);
    assert_eq!(events[4]["delta"]["stop_reason"], "tool_use");
    assert_eq!(events[10]["delta"]["stop_reason"], "end_turn");
}

// ---- A conversation over --input-format stream-json ----

fn user_line(text: &str) -> String {
    format!(
        "{}\n",
        json!({"type": "user", "message": {"role": "user", "content": text}})
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_input_answers_each_message_in_one_session() {
    let schema = Schema::load();
    let world = World::new();
    let server = server(vec![
        Reply::Text("First answer.".into()),
        Reply::Text("Second answer.".into()),
    ])
    .await;
    let args = [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ];
    let mut cmd = world.exec(&server, Wire::Anthropic, &args);
    cmd.stdin(Stdio::piped());
    let mut riot = Running::spawn(cmd);
    let mut stdin = riot.child.stdin.take().unwrap();
    let mut lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();

    // One message, its answer; only then the next.
    stdin
        .write_all(user_line("First question").as_bytes())
        .await
        .unwrap();
    let first = lines_until(&mut lines, |l| l["type"] == "result").await;
    assert_eq!(server.requests().len(), 1, "the second is not asked yet");
    let blocks = json!({"type": "user", "message": {"role": "user",
        "content": [{"type": "text", "text": "Second question"}]}});
    stdin
        .write_all(format!("{blocks}\n").as_bytes())
        .await
        .unwrap();
    let second = lines_until(&mut lines, |l| l["type"] == "result").await;
    // The end of input ends the run, with nothing more on stdout.
    drop(stdin);
    let after = tokio::time::timeout(support::PATIENCE, lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after, None, "nothing after the last result");
    let out = riot.finish().await;
    assert_eq!(out.code, Some(0), "{out:?}");

    schema.assert_lines(&first);
    schema.assert_lines(&second);
    assert_eq!(
        kinds(&first),
        ["system/init", "assistant", "result/success"]
    );
    assert_eq!(kinds(&second), ["assistant", "result/success"]);
    assert_eq!(first[2]["result"], "First answer.");
    assert_eq!(second[1]["result"], "Second answer.");
    assert_eq!(second[1]["num_turns"], 1, "each result counts its own turn");
    let id = only_session(&world);
    for line in first.iter().chain(&second) {
        assert_eq!(line["session_id"], id.as_str(), "one session: {line}");
    }
    // The second request carries the first exchange.
    let bodies = bodies(&server);
    assert_eq!(
        conversation(bodies[1]["messages"].as_array().unwrap()),
        [
            "user: First question",
            "assistant: First answer.",
            "user: Second question"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_input_line_ends_the_conversation_with_a_usage_error() {
    let world = World::new();
    let server = server(vec![Reply::Text("First answer.".into())]).await;
    let args = ["--input-format", "stream-json", "--output-format", "events"];
    let mut cmd = world.exec(&server, Wire::Anthropic, &args);
    cmd.stdin(Stdio::piped());
    let mut riot = Running::spawn(cmd);
    let mut stdin = riot.child.stdin.take().unwrap();
    let input = format!(
        "{}\n{{\"type\": \"user\", \"message\": 3\n",
        user_line("Hi").trim_end()
    );
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    let out = riot.finish().await;
    assert_eq!(out.code, Some(2), "{out:?}");
    let lines = json_lines(&out.stdout);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "the first message was answered");
    assert_eq!(result["result"], "First answer.");
    let last = out.stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("riot exec: an input line is not JSON (")
            && last.ends_with(
                r#"); send one user message per line as {"type": "user", "message": {"role": "user", "content": "…"}}"#
            ),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_input_needs_a_streaming_output_and_no_prompt_argument() {
    let world = World::new();
    let server = server(Vec::new()).await;
    for (args, says) in [
        (
            &["--input-format", "stream-json", "--output-format", "json"][..],
            "riot exec: --input-format stream-json answers each message as it comes; add --output-format stream-json (or events)",
        ),
        (
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "Hi",
            ],
            "riot exec: with --input-format stream-json the prompts come on stdin as JSON lines; drop the PROMPT argument",
        ),
        (
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ],
            "riot exec: no user message on stdin: send one JSON line per message, as {\"type\": \"user\", \"message\": {\"role\": \"user\", \"content\": \"…\"}}",
        ),
        (
            &["--include-partial-messages", "Hi"],
            "riot exec: --include-partial-messages adds stream_event lines to --output-format stream-json; add that, or drop it",
        ),
    ] {
        let out = run(world.exec(&server, Wire::Anthropic, args)).await;
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stdout, "", "{args:?}");
        assert_eq!(out.stderr, format!("{says}\n"), "{args:?}");
    }
    assert!(server.requests().is_empty());
}

// ---- Cost ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn total_cost_usd_is_the_sessions_cost_and_null_when_the_price_is_unknown() {
    let schema = Schema::load();
    let world = World::new();
    let server = server(vec![
        Reply::Text("Unpriced.".into()),
        Reply::Text("One.".into()),
        Reply::Text("Two.".into()),
    ])
    .await;
    // The table has no price for the mock's model: unknown, not zero.
    let out = run(world.exec(&server, Wire::Anthropic, &["--output-format", "json", "Hi"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = checked_json(&schema, &out);
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");

    // Priced in the user's settings, per million tokens.
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"models": {"mock-model": {"price": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}}}"#,
    )
    .unwrap();
    // Each reply reports 10 input and 5 output tokens.
    let per_request = (10.0 * 3.0 + 5.0 * 15.0) / 1e6;
    let mut ids = Vec::new();
    for (args, requests) in [
        (&["--output-format", "json", "One"][..], 1.0),
        (
            &["--output-format", "stream-json", "--continue", "Two"],
            2.0,
        ),
    ] {
        let out = run(world.exec(&server, Wire::Anthropic, args)).await;
        assert_eq!(out.code, Some(0), "{out:?}");
        let lines = json_lines(&out.stdout);
        schema.assert_lines(&lines);
        let result = lines.last().unwrap();
        let usage = &result["usage"];
        assert_eq!(
            (
                usage["input_tokens"].as_u64(),
                usage["output_tokens"].as_u64()
            ),
            (Some(10), Some(5)),
            "{result}"
        );
        // The session's total: a continued session counts its earlier run.
        let cost = result["total_cost_usd"].as_f64().expect("a known cost");
        assert!((cost - requests * per_request).abs() < 1e-12, "{result}");
        ids.push(result["session_id"].clone());
    }
    assert_eq!(ids[0], ids[1]);
}
