#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Request shape per wire format, sent through the real transport to the
//! strict mock (which rejects what the real APIs reject) and then read
//! back from its recording: pairing, tool results before new user text,
//! reasoning replay per policy, arguments as strings, cache breakpoints.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use riot_protocol::{
    AssistantBlock, AssistantMessage, CacheHints, ImageSource, Message, MessageId, MessageOrigin,
    ModelRequest, Provider, ProviderError, ProviderErrorKind, ProviderEvent, ReasoningReplay,
    SystemPrompt, ThinkingConfig, ThinkingLevel, ToolResultContent, ToolResultUi, ToolSpec,
    ToolUseId, UserBlock, UserMessage,
};
use riot_providers::{ApiKey, HttpProvider, Jitter, ModelOverride, ProviderConfig, ProviderKind};
use riot_testkit::{MockServer, ReasoningRule, Reply, Script, TestClock, Wire};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
struct NoJitter;
impl Jitter for NoJitter {
    fn next_u64(&self) -> u64 {
        0
    }
}

fn user(id: &str, content: Vec<UserBlock>) -> Message {
    Message::User(UserMessage {
        id: MessageId::new(id),
        content,
        origin: MessageOrigin::Person,
    })
}

fn assistant(id: &str, model: &str, content: Vec<AssistantBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        id: MessageId::new(id),
        content,
        model: model.into(),
        stop_reason: None,
        interrupted: false,
    })
}

fn text(t: &str) -> UserBlock {
    UserBlock::Text { text: t.into() }
}

fn thinking(
    text: &str,
    signature: Option<&str>,
    model: &str,
    item_id: Option<&str>,
) -> AssistantBlock {
    AssistantBlock::Thinking {
        text: text.into(),
        signature: signature.map(str::to_owned),
        model: model.into(),
        item_id: item_id.map(str::to_owned),
    }
}

fn tool_use(id: &str, name: &str, input: Value) -> AssistantBlock {
    AssistantBlock::ToolUse {
        id: ToolUseId::new(id),
        name: name.into(),
        input,
    }
}

fn result(id: &str, content: Vec<ToolResultContent>, is_error: bool) -> UserBlock {
    UserBlock::ToolResult {
        tool_use_id: ToolUseId::new(id),
        content,
        is_error,
        ui: Some(ToolResultUi {
            describe: "Read a.txt".into(),
            payload: None,
            duration_ms: 12,
        }),
    }
}

fn png() -> ImageSource {
    ImageSource {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

fn request(model: &str, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        server_tools: Vec::new(),
        model: model.into(),
        system: SystemPrompt {
            stable: "You are Riot.".into(),
            session: "Today is 2026-01-01.".into(),
        },
        messages,
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"file_path": {"type": "string"}}}),
        }],
        max_tokens: 4096,
        thinking: None,
        cache: CacheHints {
            session_key: Some("session-1".into()),
            message_breakpoint: true,
            long_ttl: false,
        },
        stream: true,
    }
}

/// Sends `request` to a strict mock and returns the recorded body and the
/// error, if the mock (or anything else) refused.
async fn send(
    wire: Wire,
    rule: ReasoningRule,
    overrides: Vec<(String, ModelOverride)>,
    request: ModelRequest,
) -> (Value, Option<ProviderError>) {
    let server =
        MockServer::start(Script::new(wire, vec![Reply::Text("ok".into())]).reasoning(rule))
            .await
            .unwrap();
    let clock = TestClock::new(60_000, Duration::from_secs(5));
    let kind = match wire {
        Wire::Anthropic => ProviderKind::Anthropic,
        Wire::Openai => ProviderKind::OpenAiChat,
        Wire::OpenaiResponses => ProviderKind::OpenAiResponses,
    };
    let mut config = ProviderConfig::new(kind, Arc::new(clock), Arc::new(NoJitter));
    config.base_url = Some(server.base_url());
    config.api_key = Some(ApiKey::new("k"));
    config.model_overrides = overrides;
    let provider = HttpProvider::new(config).unwrap();
    let mut stream = provider.stream(request, CancellationToken::new());
    let mut error = None;
    let mut stopped = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(ProviderEvent::Stop { .. }) => stopped = true,
            Ok(_) => {}
            Err(e) => error = Some(e),
        }
    }
    assert!(stopped || error.is_some());
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "a refused request is not retried");
    server.shutdown().await;
    (requests[0].body.clone(), error)
}

fn count_key(v: &Value, key: &str) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key(key)) + m.values().map(|x| count_key(x, key)).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(|x| count_key(x, key)).sum(),
        _ => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_requests_pass_the_strict_mock_with_signatures_breakpoints_and_no_ui() {
    let model = "claude-sonnet-4-5";
    let messages = vec![
        user("u1", vec![text("read a.txt and b.txt")]),
        assistant(
            "a1",
            model,
            vec![
                thinking(
                    "old model's plan",
                    Some("SIG_OTHER"),
                    "claude-opus-4-1",
                    None,
                ),
                thinking("plan", Some("SIG_A"), model, None),
                AssistantBlock::Text {
                    text: String::new(),
                },
                tool_use("toolu_1", "Read", json!({"file_path": "a.txt"})),
                tool_use("toolu_2", "Read", json!({"file_path": "b.txt"})),
            ],
        ),
        user(
            "u2",
            vec![
                result("toolu_1", vec![ToolResultContent::text("hello")], false),
                result("toolu_2", vec![], true),
                text("now summarise"),
            ],
        ),
        assistant(
            "a2",
            model,
            vec![AssistantBlock::Text {
                text: "done".into(),
            }],
        ),
        user("u3", vec![text("")]),
        user(
            "u4",
            vec![text("thanks"), UserBlock::Image { source: png() }],
        ),
    ];
    let mut req = request(model, messages);
    req.thinking = Some(ThinkingConfig {
        budget_tokens: 2_000,
    });
    let (body, err) = send(Wire::Anthropic, ReasoningRule::Reject, vec![], req).await;
    assert_eq!(err, None, "the strict mock accepted it");
    assert_eq!(
        count_key(&body, "cache_control"),
        3,
        "stable, session and one message-level breakpoint"
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "the empty message is dropped");
    let last = messages[4]["content"].as_array().unwrap();
    assert!(
        last.last().unwrap().get("cache_control").is_some(),
        "breakpoint on the last message"
    );
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "thinking", "thinking": "plan", "signature": "SIG_A"})
    );
    assert!(
        !body.to_string().contains("SIG_OTHER"),
        "thinking from another model is dropped"
    );
    assert_eq!(count_key(&body, "ui"), 0, "ui never reaches a provider");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(
        messages[2]["content"][1],
        json!({"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true})
    );
    assert_eq!(
        messages[2]["content"][2],
        json!({"type": "text", "text": "now summarise"})
    );
    assert_eq!(last[1]["source"]["type"], "base64");
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2000})
    );
}

/// A conversation whose one Read returned a two-page PDF as a document.
fn pdf_history(model: &str) -> (Vec<Message>, String) {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(riot_testkit::pdf::pdf(2));
    let document = ToolResultContent::pdf(
        data.clone(),
        2,
        "--- Page 1 ---\nOne\n\n--- Page 2 ---\nTwo\n",
    );
    let messages = vec![
        user("u1", vec![text("read doc.pdf")]),
        assistant(
            "a1",
            model,
            vec![tool_use("call_1", "Read", json!({"file_path": "doc.pdf"}))],
        ),
        user(
            "u2",
            vec![result(
                "call_1",
                vec![
                    ToolResultContent::text("doc.pdf: pages 1-2 of 2 (PDF text).\n"),
                    document,
                ],
                false,
            )],
        ),
    ];
    (messages, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_passes_the_strict_anthropic_mock_and_the_openai_wires_get_its_text() {
    let model = "claude-sonnet-4-5";
    let (messages, data) = pdf_history(model);
    let (body, err) = send(
        Wire::Anthropic,
        ReasoningRule::Reject,
        vec![],
        request(model, messages),
    )
    .await;
    assert_eq!(err, None, "the strict mock accepted it");
    assert_eq!(
        body["messages"][2]["content"][0]["content"][1],
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}})
    );
    let joined =
        "doc.pdf: pages 1-2 of 2 (PDF text).\n\n--- Page 1 ---\nOne\n\n--- Page 2 ---\nTwo\n";
    let (messages, _) = pdf_history("gpt-4.1");
    let (body, err) = send(
        Wire::Openai,
        ReasoningRule::Reject,
        vec![],
        request("gpt-4.1", messages),
    )
    .await;
    assert_eq!(err, None);
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": joined})
    );
    let (messages, _) = pdf_history("gpt-5.1");
    let (body, err) = send(
        Wire::OpenaiResponses,
        ReasoningRule::Reject,
        vec![],
        request("gpt-5.1", messages),
    )
    .await;
    assert_eq!(err, None);
    let output = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].clone());
    assert_eq!(output, Some(json!(joined)));
    assert!(!body.to_string().contains("application/pdf"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_thinking_is_off_when_the_tool_turn_in_progress_has_no_thinking_of_this_model() {
    let model = "claude-sonnet-4-5";
    let messages = vec![
        user("u1", vec![text("go")]),
        // Written by the fallback's predecessor: its signed thinking is dropped.
        assistant(
            "a1",
            "claude-opus-4-1",
            vec![
                thinking("p", Some("SIG_OLD"), "claude-opus-4-1", None),
                tool_use("toolu_1", "Read", json!({})),
            ],
        ),
        user(
            "u2",
            vec![result("toolu_1", vec![ToolResultContent::text("x")], false)],
        ),
    ];
    let mut req = request(model, messages);
    req.thinking = Some(ThinkingConfig {
        budget_tokens: 2_000,
    });
    let (body, err) = send(Wire::Anthropic, ReasoningRule::Reject, vec![], req).await;
    assert_eq!(err, None);
    assert!(body.get("thinking").is_none(), "{body}");
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}])
    );
}

fn chat_history(model: &str) -> Vec<Message> {
    vec![
        user("u1", vec![text("look at the screenshot")]),
        assistant(
            "a1",
            model,
            vec![
                thinking("I should read both", None, model, None),
                AssistantBlock::Text {
                    text: "Let me look.".into(),
                },
                tool_use("call_1", "Read", json!({"file_path": "shot.png"})),
                tool_use("call_2", "Read", json!({"file_path": "empty.txt"})),
            ],
        ),
        user(
            "u2",
            vec![
                result(
                    "call_1",
                    vec![
                        ToolResultContent::text("an image"),
                        ToolResultContent::Image { source: png() },
                    ],
                    false,
                ),
                result("call_2", vec![], false),
                text("and then?"),
            ],
        ),
        assistant(
            "a2",
            model,
            vec![
                thinking("simple", None, model, None),
                AssistantBlock::Text {
                    text: "It shows a cat.".into(),
                },
            ],
        ),
        user("u3", vec![text("thanks")]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_for_openai_never_send_reasoning_and_keep_tool_messages_paired() {
    let (body, err) = send(
        Wire::Openai,
        ReasoningRule::Reject,
        vec![],
        request("gpt-4.1", chat_history("gpt-4.1")),
    )
    .await;
    assert_eq!(err, None, "the strict OpenAI-style mock accepted it");
    assert_eq!(count_key(&body, "reasoning_content"), 0);
    let m = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "assistant",
            "user"
        ]
    );
    assert_eq!(m[0]["content"], "You are Riot.\n\nToday is 2026-01-01.");
    assert_eq!(
        m[2]["tool_calls"][0]["function"]["arguments"], "{\"file_path\":\"shot.png\"}",
        "arguments are a JSON string"
    );
    assert_eq!(
        m[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "an image"})
    );
    assert_eq!(
        m[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "(no output)"}),
        "never an empty string"
    );
    assert_eq!(
        m[5]["content"][0]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=",
        "tool images follow in a user message"
    );
    assert_eq!(
        m[5]["content"][1],
        json!({"type": "text", "text": "and then?"})
    );
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert!(
        body.get("prompt_cache_key").is_none(),
        "only OpenAI's own endpoint gets prompt_cache_key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepseek_thinking_models_replay_reasoning_on_tool_call_turns_only() {
    let model = "deepseek-v4-flash";
    let (body, err) = send(
        Wire::Openai,
        ReasoningRule::RequireOnToolTurns,
        vec![],
        request(model, chat_history(model)),
    )
    .await;
    assert_eq!(err, None, "the strict DeepSeek-style mock accepted it");
    let m = body["messages"].as_array().unwrap();
    assert_eq!(m[2]["reasoning_content"], "I should read both");
    assert!(
        m[6].get("reasoning_content").is_none(),
        "reasoning of a turn without tool calls is dropped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wrong_reasoning_policy_is_rejected_by_the_strict_mock_in_both_directions() {
    let model = "deepseek-v4-flash";
    let never = vec![(
        "deepseek-*".to_owned(),
        ModelOverride {
            reasoning_replay: Some(ReasoningReplay::None),
            ..ModelOverride::default()
        },
    )];
    let (_, err) = send(
        Wire::Openai,
        ReasoningRule::RequireOnToolTurns,
        never,
        request(model, chat_history(model)),
    )
    .await;
    let err = err.unwrap();
    assert_eq!(err.kind, ProviderErrorKind::InvalidRequest);
    assert!(
        err.message.starts_with(
            "Missing `reasoning_content` field in the assistant message at message index 2"
        ),
        "{}",
        err.message
    );
    let (_, err) = send(
        Wire::Openai,
        ReasoningRule::Reject,
        vec![],
        request(model, chat_history(model)),
    )
    .await;
    assert_eq!(
        err.unwrap().message,
        "Unrecognized request argument supplied: messages[2].reasoning_content"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_requests_replay_reasoning_items_unchanged_and_pair_by_call_id() {
    let model = "gpt-5.1";
    let messages = vec![
        user("u1", vec![text("add 12 and 7")]),
        assistant(
            "a1",
            model,
            vec![
                thinking("**Adding**", Some("gAAAAAB-encrypted"), model, Some("rs_1")),
                tool_use("call_1", "calculator", json!({"a": 12, "b": 7})),
            ],
        ),
        user(
            "u2",
            vec![result("call_1", vec![ToolResultContent::text("19")], false)],
        ),
    ];
    let (body, err) = send(
        Wire::OpenaiResponses,
        ReasoningRule::Reject,
        vec![],
        request(model, messages),
    )
    .await;
    assert_eq!(err, None, "the strict mock accepted it");
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["instructions"],
        "You are Riot.\n\nToday is 2026-01-01."
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "**Adding**"}], "encrypted_content": "gAAAAAB-encrypted"})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_1", "name": "calculator", "arguments": "{\"a\":12,\"b\":7}"})
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "19"})
    );
    assert_eq!(body["prompt_cache_key"], "session-1");
}

/// Each thinking level as each wire sends it: Anthropic's budget with the
/// budget added to `max_tokens` up to the model's output limit (cut when
/// it cannot fit), OpenAI's effort — all accepted by the strict mock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_thinking_level_reaches_each_wire_as_its_own_setting() {
    let prompt = || vec![user("u1", vec![text("think")])];
    for (level, budget, effort) in [
        (ThinkingLevel::Low, 2_048, "low"),
        (ThinkingLevel::Medium, 8_192, "medium"),
        (ThinkingLevel::High, 16_384, "high"),
    ] {
        // 4,096 of answer plus the budget, under claude-sonnet-4-5's 64,000.
        let mut req = request("claude-sonnet-4-5", prompt());
        req.thinking = level.config();
        let (body, err) = send(Wire::Anthropic, ReasoningRule::Reject, vec![], req).await;
        assert_eq!(err, None, "{level:?}");
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": budget})
        );
        assert_eq!(body["max_tokens"], 4_096 + budget);
        for wire in [Wire::Openai, Wire::OpenaiResponses] {
            let mut req = request("gpt-5", prompt());
            req.thinking = level.config();
            let (body, err) = send(wire, ReasoningRule::Reject, vec![], req).await;
            assert_eq!(err, None, "{level:?} {wire:?}");
            let sent = match wire {
                Wire::Openai => &body["reasoning_effort"],
                _ => &body["reasoning"]["effort"],
            };
            assert_eq!(sent, effort, "{wire:?}: {body}");
        }
    }
    // A model whose output limit is 10,000: High's budget is cut to fit
    // under it, one token left for the answer at least.
    let limited = vec![(
        "claude-sonnet-4-5".to_owned(),
        ModelOverride {
            max_output_tokens: Some(10_000),
            ..ModelOverride::default()
        },
    )];
    let mut req = request("claude-sonnet-4-5", prompt());
    req.thinking = ThinkingLevel::High.config();
    let (body, err) = send(Wire::Anthropic, ReasoningRule::Reject, limited, req).await;
    assert_eq!(err, None);
    assert_eq!(body["max_tokens"], 10_000);
    assert_eq!(body["thinking"]["budget_tokens"], 9_999);
    // Off sends nothing on any wire.
    let (body, _) = send(
        Wire::Openai,
        ReasoningRule::Reject,
        vec![],
        request("gpt-5", prompt()),
    )
    .await;
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}
