#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The mock is only useful if it is as strict as the real APIs: each rule
//! of docs/testing.md's "strict mock model server" is asserted with the
//! reason of the refusal, plus the `riot-mock-model` binary end to end.

use riot_testkit::{ReasoningRule, Wire, check_alternation, check_window, validate};
use serde_json::{Value, json};

fn message(wire: Wire, rule: ReasoningRule, body: Value) -> Option<String> {
    validate(wire, rule, &body).err().map(|r| {
        assert_eq!(r.status, 400);
        r.body["error"]["message"].as_str().unwrap().to_owned()
    })
}

fn anthropic(messages: Value) -> Option<String> {
    message(
        Wire::Anthropic,
        ReasoningRule::Reject,
        json!({"model": "m", "max_tokens": 10, "messages": messages,
            "tools": [{"name": "Read", "description": "Reads", "input_schema": {"type": "object"}}]}),
    )
}

#[test]
fn anthropic_rules() {
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]});
    let ok = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}, {"type": "text", "text": "next"}]});
    assert_eq!(
        anthropic(json!([{"role": "user", "content": "hi"}, call, ok])),
        None
    );
    // Consecutive same-role turns are merged, not rejected.
    assert_eq!(
        anthropic(json!([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])),
        None
    );

    let missing = anthropic(
        json!([{"role": "user", "content": "hi"}, call, {"role": "user", "content": "hello?"}]),
    )
    .unwrap();
    assert!(missing.starts_with("messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: t1."), "{missing}");
    let text_first = anthropic(json!([{"role": "user", "content": "hi"}, call, {"role": "user", "content": [{"type": "text", "text": "wait"}, {"type": "tool_result", "tool_use_id": "t1"}]}])).unwrap();
    assert!(
        text_first.contains("tool_result blocks must come before any other content"),
        "{text_first}"
    );
    let unknown = anthropic(json!([{"role": "user", "content": "hi"}, call, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}, {"type": "tool_result", "tool_use_id": "t9"}]}])).unwrap();
    assert!(
        unknown.contains("unexpected `tool_use_id` found in `tool_result` blocks: t9"),
        "{unknown}"
    );
    let empty = anthropic(json!([{"role": "user", "content": []}])).unwrap();
    assert!(
        empty.contains("all messages must have non-empty content"),
        "{empty}"
    );
    let empty_text =
        anthropic(json!([{"role": "user", "content": [{"type": "text", "text": ""}]}])).unwrap();
    assert!(
        empty_text.contains("text content blocks must be non-empty"),
        "{empty_text}"
    );
    let ui = anthropic(json!([{"role": "user", "content": "hi"}, call, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "ui": {}}]}])).unwrap();
    assert!(ui.contains("ui: Extra inputs are not permitted"), "{ui}");
    let string_input = anthropic(json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": "{}"}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}])).unwrap();
    assert!(
        string_input.ends_with("tool_use.input: Input should be a valid dictionary"),
        "{string_input}"
    );
    let unsigned = anthropic(json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "y"}]}, {"role": "user", "content": "z"}])).unwrap();
    assert!(unsigned.contains("signature: Field required"), "{unsigned}");
    let cc = json!({"type": "ephemeral"});
    let five = json!({"model": "m", "max_tokens": 10,
        "system": [{"type": "text", "text": "a", "cache_control": cc}, {"type": "text", "text": "b", "cache_control": cc}],
        "tools": [{"name": "t", "input_schema": {}, "cache_control": cc}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "cache_control": cc}, {"type": "text", "text": "y", "cache_control": cc}]}]});
    assert_eq!(
        message(Wire::Anthropic, ReasoningRule::Reject, five).unwrap(),
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    );
}

fn chat(rule: ReasoningRule, messages: Value) -> Option<String> {
    message(
        Wire::Openai,
        rule,
        json!({"model": "m", "messages": messages}),
    )
}

/// The message of [`check_alternation`]'s refusal, if it refuses.
fn alternation(wire: Wire, messages: Value) -> Option<String> {
    check_alternation(wire, &json!({"model": "m", "messages": messages}))
        .err()
        .map(|r| {
            assert_eq!(r.status, 400);
            r.body["error"]["message"].as_str().unwrap().to_owned()
        })
}

#[test]
fn strict_alternation_rules() {
    let a = Wire::Anthropic;
    let user = |t: &str| json!({"role": "user", "content": t});
    let assistant = |t: &str| json!({"role": "assistant", "content": t});
    assert_eq!(
        alternation(a, json!([user("a"), assistant("b"), user("c")])),
        None
    );
    assert_eq!(
        alternation(a, json!([user("a"), user("b")])).unwrap(),
        "messages.1: roles must alternate between \"user\" and \"assistant\", but found multiple \"user\" roles in a row"
    );
    assert_eq!(
        alternation(a, json!([user("a"), assistant("b"), assistant("c")])).unwrap(),
        "messages.2: roles must alternate between \"user\" and \"assistant\", but found multiple \"assistant\" roles in a row"
    );

    let c = Wire::Openai;
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]});
    let tool = json!({"role": "tool", "tool_call_id": "c1", "content": "x"});
    let system = json!({"role": "system", "content": "s"});
    assert_eq!(
        alternation(
            c,
            json!([
                system,
                user("a"),
                call,
                tool,
                user("b"),
                call,
                tool,
                assistant("done")
            ])
        ),
        None
    );
    assert_eq!(
        alternation(
            c,
            json!([system, user("a"), call, tool, user("b"), user("c")])
        )
        .unwrap(),
        "Conversation roles must alternate user/assistant/user/assistant/... (messages[5] is a second 'user' message in a row)"
    );
    assert_eq!(
        alternation(
            c,
            json!([user("a"), assistant("b"), system, assistant("c")])
        )
        .unwrap(),
        "Conversation roles must alternate user/assistant/user/assistant/... (messages[3] is a second 'assistant' message in a row)"
    );

    // Responses input is a list of items, not turns.
    assert_eq!(
        check_alternation(
            Wire::OpenaiResponses,
            &json!({"input": [user("a"), user("b")]})
        ),
        Ok(())
    );
}

#[test]
fn chat_completions_rules() {
    let call = |reasoning: Option<&str>| {
        let mut m = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]});
        if let Some(r) = reasoning {
            m["reasoning_content"] = json!(r);
        }
        m
    };
    let tool = json!({"role": "tool", "tool_call_id": "c1", "content": "x"});
    let user = json!({"role": "user", "content": "hi"});
    assert_eq!(
        chat(ReasoningRule::Reject, json!([user, call(None), tool, user])),
        None
    );

    let orphan = chat(ReasoningRule::Reject, json!([user, tool])).unwrap();
    assert_eq!(
        orphan,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
    );
    let unanswered = chat(ReasoningRule::Reject, json!([user, call(None), user])).unwrap();
    assert!(
        unanswered.contains("did not have response messages: c1"),
        "{unanswered}"
    );
    let object_args = chat(ReasoningRule::Reject, json!([user, {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": {}}}]}, tool])).unwrap();
    assert_eq!(
        object_args,
        "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead."
    );
    let empty = chat(
        ReasoningRule::Reject,
        json!([{"role": "user", "content": ""}]),
    )
    .unwrap();
    assert!(empty.contains("string too short"), "{empty}");
    let sent = chat(ReasoningRule::Reject, json!([user, call(Some("r")), tool])).unwrap();
    assert_eq!(
        sent,
        "Unrecognized request argument supplied: messages[1].reasoning_content"
    );
    let missing = chat(
        ReasoningRule::RequireOnToolTurns,
        json!([user, call(None), tool]),
    )
    .unwrap();
    assert!(
        missing.starts_with(
            "Missing `reasoning_content` field in the assistant message at message index 1"
        ),
        "{missing}"
    );
    assert_eq!(
        chat(
            ReasoningRule::RequireOnToolTurns,
            json!([user, call(Some("r")), tool, user])
        ),
        None
    );
}

#[test]
fn responses_rules() {
    let body = |input: Value| json!({"model": "m", "store": false, "input": input});
    let call = json!({"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "c1", "output": "x"});
    let user = json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]});
    let r = |input| message(Wire::OpenaiResponses, ReasoningRule::Reject, body(input));
    assert_eq!(r(json!([user, call, output])), None);
    assert_eq!(
        r(json!([user, output])).unwrap(),
        "No tool call found for function call output with call_id c1."
    );
    assert_eq!(
        r(json!([user, call, user])).unwrap(),
        "No tool output found for function call c1."
    );
    let reasoning =
        r(json!([user, {"type": "reasoning", "id": "rs_1", "summary": []}, call, output])).unwrap();
    assert!(
        reasoning.starts_with("Item with id 'rs_1' not found."),
        "{reasoning}"
    );
}

/// The 8-byte PNG signature, base64: the smallest payload the mock takes
/// for a PNG.
const PNG: &str = "iVBORw0KGgo=";

#[test]
fn anthropic_image_rules() {
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]});
    let with = |image: Value| {
        anthropic(json!([
            {"role": "user", "content": "look"},
            call,
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Image a.png"}, image]}]}
        ]))
    };
    let image = |media_type: &str, data: &str| json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}});
    assert_eq!(with(image("image/png", PNG)), None);
    assert_eq!(
        with(image("image/bmp", PNG)).unwrap(),
        "messages.2.content.0.tool_result.content.1.image.source.base64: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got 'image/bmp')"
    );
    assert_eq!(
        with(image("image/png", "not base64!")).unwrap(),
        "messages.2.content.0.tool_result.content.1.image.source.base64: The image data is not valid base64."
    );
    assert_eq!(
        with(image("image/jpeg", PNG)).unwrap(),
        "messages.2.content.0.tool_result.content.1.image.source.base64: Image does not match the provided media type image/jpeg"
    );
    assert_eq!(
        anthropic(json!([{"role": "user", "content": [image("image/gif", PNG)]}])).unwrap(),
        "messages.0.content.0.image.source.base64: Image does not match the provided media type image/gif"
    );
}

#[test]
fn anthropic_tool_blocks_need_declared_tools() {
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]});
    let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]});
    let body = |tools: Value| {
        json!({"model": "m", "max_tokens": 10, "tools": tools,
            "messages": [{"role": "user", "content": "hi"}, call, result]})
    };
    let refusal = "Requests which include `tool_use` or `tool_result` blocks must define tools.";
    for tools in [json!([]), Value::Null] {
        assert_eq!(
            message(Wire::Anthropic, ReasoningRule::Reject, body(tools)).as_deref(),
            Some(refusal)
        );
    }
    let plain =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(message(Wire::Anthropic, ReasoningRule::Reject, plain), None);
}

#[test]
fn a_window_counts_the_input_as_bytes_over_four_plus_the_reserved_output() {
    let refusal = |wire: Wire, body: Value, bytes: usize| {
        check_window(wire, &body, bytes, 8192).err().map(|r| {
            (
                r.status,
                r.body["error"]["message"].as_str().unwrap().to_owned(),
                r.body["error"]["code"].clone(),
            )
        })
    };
    let anthropic = json!({"max_tokens": 2048});
    assert_eq!(
        refusal(Wire::Anthropic, anthropic.clone(), 4 * 6144),
        None,
        "exactly full fits"
    );
    assert_eq!(
        refusal(Wire::Anthropic, anthropic.clone(), 4 * 6144 + 1),
        Some((400, "input length and `max_tokens` exceed context limit: 6145 + 2048 > 8192, decrease input length or `max_tokens` and try again".into(), Value::Null))
    );
    assert_eq!(
        refusal(Wire::Anthropic, anthropic, 4 * 9000),
        Some((
            400,
            "prompt is too long: 9000 tokens > 8192 maximum".into(),
            Value::Null
        ))
    );
    assert_eq!(
        refusal(Wire::Openai, json!({"max_completion_tokens": 4000}), 4 * 5000),
        Some((400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (5000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.".into(), json!("context_length_exceeded")))
    );
    assert_eq!(
        refusal(
            Wire::OpenaiResponses,
            json!({"max_output_tokens": 100}),
            4 * 8100
        )
        .map(|r| r.2),
        Some(json!("context_length_exceeded"))
    );
}

#[test]
fn chat_completions_image_rules() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}]});
    let url = |u: &str| json!({"type": "image_url", "image_url": {"url": u}});
    let png_url = format!("data:image/png;base64,{PNG}");
    // The shape Riot sends: text in the tool message, the image after it.
    assert_eq!(
        chat(
            ReasoningRule::Reject,
            json!([
                {"role": "user", "content": "look"},
                call,
                {"role": "tool", "tool_call_id": "c1", "content": "Image a.png"},
                {"role": "user", "content": [url(&png_url)]}
            ])
        ),
        None
    );
    assert_eq!(
        chat(
            ReasoningRule::Reject,
            json!([
                {"role": "user", "content": "look"},
                call,
                {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "Image a.png"}, url(&png_url)]}
            ])
        )
        .unwrap(),
        "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL."
    );
    let user_image = |u: &str| {
        chat(
            ReasoningRule::Reject,
            json!([{"role": "user", "content": [url(u)]}]),
        )
    };
    assert_eq!(
        user_image("data:image/png;base64,%%%").unwrap(),
        "Invalid image URL: 'messages[0].content[0].image_url.url'. The image data is not valid base64."
    );
    assert_eq!(
        user_image(&format!("data:image/tiff;base64,{PNG}")).unwrap(),
        "Invalid image URL: 'messages[0].content[0].image_url.url'. Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got 'image/tiff')"
    );
    assert!(
        user_image(PNG)
            .unwrap()
            .contains("Expected a base64-encoded data URL with an image MIME type")
    );
}

#[test]
fn responses_image_rules() {
    let r = |input: Value| {
        message(
            Wire::OpenaiResponses,
            ReasoningRule::Reject,
            json!({"model": "m", "store": false, "input": input}),
        )
    };
    let png_url = format!("data:image/png;base64,{PNG}");
    let call = json!({"type": "function_call", "call_id": "c1", "name": "Read", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "c1", "output": "Image a.png"});
    let user = |part: Value| json!({"role": "user", "content": [part]});
    let image = |u: &str| json!({"type": "input_image", "image_url": u});
    assert_eq!(
        r(json!([
            user(json!({"type": "input_text", "text": "look"})),
            call,
            output,
            user(image(&png_url))
        ])),
        None
    );
    assert_eq!(
        r(json!([user(image("data:image/png;base64,@@"))])).unwrap(),
        "Invalid 'input[0].content[0].image_url'. The image data is not valid base64."
    );
    assert!(
        r(json!([user(
            json!({"type": "image_url", "image_url": {"url": png_url}})
        )]))
        .unwrap()
        .starts_with("Invalid value: 'image_url'.")
    );
}

#[test]
#[allow(clippy::disallowed_methods)] // test code: spawns the binary and writes its script file
fn the_binary_prints_its_port_first_and_serves_the_script() {
    use std::io::{BufRead, BufReader, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(
        &path,
        r#"{"wire": "openai", "replies": [{"text": "hello from the binary"}]}"#,
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_riot-mock-model"))
        .args(["--script", path.to_str().unwrap(), "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port: u16 = line.strip_prefix("PORT ").unwrap().trim().parse().unwrap();
    let post = |body: &str| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let ok = post(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#);
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(
        ok.contains("hello from the binary") && ok.contains("data: [DONE]"),
        "{ok}"
    );
    let exhausted =
        post(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#);
    assert!(
        exhausted.starts_with("HTTP/1.1 400"),
        "out of script is never retryable: {exhausted}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn anthropic_document_rules() {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let document = |media_type: &str, data: &str| json!({"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}});
    let with = |documents: Vec<Value>| {
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for (i, d) in documents.into_iter().enumerate() {
            let id = format!("t{i}");
            calls.push(json!({"type": "tool_use", "id": id, "name": "Read", "input": {}}));
            results.push(json!({"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": "doc.pdf"}, d]}));
        }
        anthropic(json!([
            {"role": "user", "content": "read"},
            {"role": "assistant", "content": calls},
            {"role": "user", "content": results}
        ]))
    };
    let pdf = b64(&riot_testkit::pdf::pdf(3));
    assert_eq!(with(vec![document("application/pdf", &pdf)]), None);
    assert_eq!(
        with(vec![document("image/png", &pdf)]).unwrap(),
        "messages.2.content.0.tool_result.content.1.document.source.base64.media_type: Input should be 'application/pdf'"
    );
    assert_eq!(
        with(vec![document("application/pdf", "not base64!")]).unwrap(),
        "messages.2.content.0.tool_result.content.1.document.source.base64.data: The PDF data is not valid base64."
    );
    assert_eq!(
        with(vec![document("application/pdf", &b64(b"hello, not a PDF"))]).unwrap(),
        "The PDF specified was not valid."
    );
    assert_eq!(
        with(vec![document("application/pdf", &b64(b"%PDF-1.5\nbroken"))]).unwrap(),
        "The PDF specified was not valid."
    );
    assert_eq!(
        with(vec![json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}})]).unwrap(),
        "messages.2.content.0.tool_result.content.1.document.source: Input tag does not match any of the expected tags: 'base64', 'text', 'content', 'url', 'file'"
    );
    // 100 pages over the request pass; 101 do not, however they are split.
    let twenty = b64(&riot_testkit::pdf::pdf(20));
    let one = b64(&riot_testkit::pdf::pdf(1));
    let mut hundred: Vec<Value> = (0..5)
        .map(|_| document("application/pdf", &twenty))
        .collect();
    assert_eq!(with(hundred.clone()), None);
    hundred.push(document("application/pdf", &one));
    assert_eq!(
        with(hundred).unwrap(),
        "A maximum of 100 PDF pages may be provided."
    );
}

#[test]
fn an_anthropic_body_over_32_mb_is_too_large() {
    let big = "x".repeat(32 * 1024 * 1024);
    let body =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": big}]});
    let refused = validate(Wire::Anthropic, ReasoningRule::Reject, &body).unwrap_err();
    assert_eq!(refused.status, 413);
    assert_eq!(
        refused.body,
        json!({"type": "error", "error": {"type": "request_too_large",
            "message": "Request exceeds the maximum allowed number of bytes."}})
    );
    let fits = "x".repeat(31 * 1024 * 1024);
    let body =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": fits}]});
    assert_eq!(
        validate(Wire::Anthropic, ReasoningRule::Reject, &body),
        Ok(())
    );
}
