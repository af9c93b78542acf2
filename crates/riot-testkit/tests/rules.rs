#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `when` rules (a reply out of turn for requests whose last user message
//! contains a text) and the `usage` rule of a script, through the real
//! server over a socket.

use riot_testkit::{MockServer, Reply, RoleRule, Script, UsageRule, Wire, last_user_text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SUMMARY_ASK: &str = "Do not call any tools";

/// POSTs `body` (non-streaming) and returns the status and the JSON body.
async fn post(server: &MockServer, path: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", server.port()))
        .await
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nanthropic-version: 2023-06-01\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body.as_bytes()).await.unwrap();
    let mut raw = String::new();
    socket.read_to_string(&mut raw).await.unwrap();
    let status: u16 = raw[9..12].parse().unwrap();
    let (_, payload) = raw.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(payload).unwrap_or(Value::Null))
}

fn anthropic(messages: Value) -> Value {
    json!({"model": "m", "max_tokens": 100, "stream": false, "messages": messages,
        "tools": [{"name": "Read", "description": "Reads", "input_schema": {"type": "object"}}]})
}

fn text_of(reply: &Value) -> &str {
    reply["content"][0]["text"].as_str().unwrap()
}

#[tokio::test]
async fn a_when_rule_answers_out_of_turn_every_time_and_leaves_the_script_in_place() {
    let script = Script::new(
        Wire::Anthropic,
        vec![Reply::Text("first".into()), Reply::Text("second".into())],
    )
    .when(SUMMARY_ASK, Reply::Text("<summary>S</summary>".into()));
    let server = MockServer::start(script).await.unwrap();
    let normal = anthropic(json!([{"role": "user", "content": "go on"}]));
    let summary = anthropic(json!([
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": format!("Stop. {SUMMARY_ASK}. Reply with text.")}]}
    ]));

    let (status, reply) = post(&server, "/v1/messages", &normal).await;
    assert_eq!((status, text_of(&reply)), (200, "first"));
    let (status, reply) = post(&server, "/v1/messages", &summary).await;
    assert_eq!((status, text_of(&reply)), (200, "<summary>S</summary>"));
    assert_eq!(server.remaining(), 1, "the rule used up no scripted reply");
    let (status, reply) = post(&server, "/v1/messages", &normal).await;
    assert_eq!((status, text_of(&reply)), (200, "second"));
    // Rules answer as often as they match, also once the script is done.
    let (status, reply) = post(&server, "/v1/messages", &summary).await;
    assert_eq!((status, text_of(&reply)), (200, "<summary>S</summary>"));
    let (status, _) = post(&server, "/v1/messages", &normal).await;
    assert_eq!(status, 400, "out of script is still a non-retryable error");

    let answered: Vec<(u16, Option<usize>)> = server
        .requests()
        .iter()
        .map(|r| (r.status, r.rule))
        .collect();
    assert_eq!(
        answered,
        [
            (200, None),
            (200, Some(0)),
            (200, None),
            (200, Some(0)),
            (400, None)
        ]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn only_the_last_user_message_counts_and_invalid_requests_are_still_rejected() {
    let script = Script::new(Wire::Anthropic, vec![Reply::Text("scripted".into())])
        .when(SUMMARY_ASK, Reply::Text("rule".into()));
    let server = MockServer::start(script).await.unwrap();

    // An unpaired tool_use is refused before any rule is consulted.
    let unpaired = anthropic(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": SUMMARY_ASK}]}
    ]));
    let (status, reply) = post(&server, "/v1/messages", &unpaired).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(server.remaining(), 1);

    // The text in an earlier message, or in a tool result, is no match.
    let earlier = anthropic(json!([
        {"role": "user", "content": SUMMARY_ASK},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": SUMMARY_ASK}]}]}
    ]));
    let (status, reply) = post(&server, "/v1/messages", &earlier).await;
    assert_eq!((status, text_of(&reply)), (200, "scripted"));
    assert_eq!(
        server.requests().iter().map(|r| r.rule).collect::<Vec<_>>(),
        [None, None]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn request_size_usage_grows_with_the_request_and_fixed_usage_does_not() {
    let messages = |n: usize| anthropic(json!([{"role": "user", "content": "x".repeat(n)}]));
    for (rule, small, large) in [
        (UsageRule::Fixed, 10, 10),
        (
            UsageRule::RequestSize,
            messages(10).to_string().len().div_ceil(4),
            messages(4000).to_string().len().div_ceil(4),
        ),
    ] {
        let script = Script::new(
            Wire::Anthropic,
            vec![Reply::Text("a".into()), Reply::Text("b".into())],
        )
        .usage(rule);
        let server = MockServer::start(script).await.unwrap();
        let (_, reply) = post(&server, "/v1/messages", &messages(10)).await;
        assert_eq!(reply["usage"]["input_tokens"], json!(small), "{rule:?}");
        let (_, reply) = post(&server, "/v1/messages", &messages(4000)).await;
        assert_eq!(reply["usage"]["input_tokens"], json!(large), "{rule:?}");
        server.shutdown().await;
    }
    assert!(messages(4000).to_string().len().div_ceil(4) > 1000);
}

#[test]
fn the_last_user_text_of_each_wire() {
    let anthropic = json!({"messages": [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}, {"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    ]});
    assert_eq!(
        last_user_text(Wire::Anthropic, &anthropic).as_deref(),
        Some("one\ntwo")
    );
    let chat = json!({"messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "ask"},
        {"role": "assistant", "content": "a"}
    ]});
    assert_eq!(last_user_text(Wire::Openai, &chat).as_deref(), Some("ask"));
    let responses = json!({"input": [
        {"role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "x"}
    ]});
    assert_eq!(
        last_user_text(Wire::OpenaiResponses, &responses).as_deref(),
        Some("hello")
    );
    assert_eq!(
        last_user_text(Wire::OpenaiResponses, &json!({"input": "plain"})).as_deref(),
        Some("plain")
    );
    assert_eq!(last_user_text(Wire::Openai, &json!({"messages": []})), None);
}

#[test]
fn rules_and_usage_read_from_a_script_file() {
    let script: Script = serde_json::from_value(json!({
        "wire": "anthropic",
        "usage": "request-size",
        "when": [{"last_user_contains": SUMMARY_ASK, "reply": {"text": "<summary>s</summary>"}}],
        "replies": [{"text": "hi"}]
    }))
    .unwrap();
    assert_eq!(script.usage, UsageRule::RequestSize);
    assert_eq!(script.when.len(), 1);
    assert_eq!(script.when[0].last_user_contains, SUMMARY_ASK);
    assert_eq!(
        script.when[0].reply,
        Reply::Text("<summary>s</summary>".into())
    );
    let defaults: Script =
        serde_json::from_value(json!({"wire": "openai", "replies": []})).unwrap();
    assert_eq!(defaults.usage, UsageRule::Fixed);
    assert!(defaults.when.is_empty());
}

#[test]
fn a_request_rule_matches_the_whole_body_and_both_conditions_must_hold() {
    let body = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "Explore alpha"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ALPHA-CONTENT"}]}
    ]});
    let by_body = riot_testkit::When {
        last_user_contains: String::new(),
        request_contains: Some("ALPHA-CONTENT".into()),
        hold_until: None,
        reply: Reply::Text("x".into()),
    };
    assert!(by_body.matches(Wire::Anthropic, &body));
    let both = riot_testkit::When {
        last_user_contains: "Explore alpha".into(),
        request_contains: Some("ALPHA-CONTENT".into()),
        hold_until: None,
        reply: Reply::Text("x".into()),
    };
    assert!(
        !both.matches(Wire::Anthropic, &body),
        "the last user message is the tool result, not the prompt"
    );
    let other = riot_testkit::When {
        last_user_contains: String::new(),
        request_contains: Some("BETA-CONTENT".into()),
        hold_until: None,
        reply: Reply::Text("x".into()),
    };
    assert!(!other.matches(Wire::Anthropic, &body));
}

#[tokio::test]
async fn the_alternate_role_rule_rejects_two_user_messages_in_a_row_without_using_a_reply() {
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]});
    let result = json!({"type": "tool_result", "tool_use_id": "t1", "content": "Interrupted", "is_error": true});
    let split = anthropic(json!([
        {"role": "user", "content": "run it"},
        call,
        {"role": "user", "content": [result]},
        {"role": "user", "content": "Go on"}
    ]));
    let merged = anthropic(json!([
        {"role": "user", "content": "run it"},
        call,
        {"role": "user", "content": [result, {"type": "text", "text": "Go on"}]}
    ]));

    // By default, like Anthropic's own API, both are accepted.
    let lenient = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("a".into()), Reply::Text("b".into())],
    ))
    .await
    .unwrap();
    assert_eq!(post(&lenient, "/v1/messages", &split).await.0, 200);
    assert_eq!(post(&lenient, "/v1/messages", &merged).await.0, 200);

    // `"roles": "alternate"` in a script file, as the binary reads it.
    let script: Script = serde_json::from_value(json!({
        "wire": "anthropic",
        "roles": "alternate",
        "replies": [{"text": "merged is fine"}]
    }))
    .unwrap();
    assert_eq!(script.roles, RoleRule::Alternate);
    let strict = MockServer::start(script).await.unwrap();
    let (status, body) = post(&strict, "/v1/messages", &split).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "messages.3: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"
    );
    assert_eq!(strict.remaining(), 1, "a rejection uses up no reply");
    let (status, reply) = post(&strict, "/v1/messages", &merged).await;
    assert_eq!((status, text_of(&reply)), (200, "merged is fine"));
}

#[tokio::test]
#[allow(clippy::disallowed_methods)] // polls the server while a request waits there
async fn a_held_rule_answers_only_once_the_request_it_waits_for_has_arrived() {
    let script = Script::new(Wire::Anthropic, vec![Reply::Text("in turn".into())])
        .when_held("first", "second", Reply::Text("first answered".into()))
        .when("second", Reply::Text("second answered".into()));
    let server = std::sync::Arc::new(MockServer::start(script).await.unwrap());
    let ask = {
        let server = std::sync::Arc::clone(&server);
        move |text: &'static str| {
            let server = std::sync::Arc::clone(&server);
            async move {
                let body = anthropic(json!([{"role": "user", "content": text}]));
                post(&server, "/v1/messages", &body).await
            }
        }
    };
    let first = tokio::spawn(ask("first"));
    while server.arrivals() == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // `first` has arrived and waits; a request no rule holds is answered
    // at once meanwhile, and is the only one answered (recorded) so far.
    let (status, other) = ask("unrelated").await;
    assert_eq!((status, text_of(&other)), (200, "in turn"));
    let rules: Vec<Option<usize>> = server.requests().iter().map(|r| r.rule).collect();
    assert_eq!(
        rules,
        [None],
        "`first` is not answered before `second` arrives"
    );
    assert!(!first.is_finished());
    let (status, second) = ask("second").await;
    assert_eq!((status, text_of(&second)), (200, "second answered"));
    let (status, answered) = first.await.unwrap();
    assert_eq!((status, text_of(&answered)), (200, "first answered"));
    let rules: Vec<Option<usize>> = server.requests().iter().map(|r| r.rule).collect();
    assert_eq!(rules.len(), 3);
    assert!(rules.contains(&Some(0)) && rules.contains(&Some(1)));
}
