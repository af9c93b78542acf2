#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! docs/testing.md L5 over HTTP: the real reqwest transport, SSE parser and
//! decoders against the strict in-process mock server, and the fault
//! cases of L4 that belong to the transport (retries, Retry-After, auth
//! never retried, cut streams, stalls, overflow).

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use riot_protocol::{
    AssistantBlock, CacheHints, Clock, ModelRequest, Provider, ProviderError, ProviderErrorKind,
    ProviderEvent, StopReason, StreamDelta, SystemPrompt,
};
use riot_providers::{ApiKey, ConfigError, HttpProvider, Jitter, ProviderConfig, ProviderKind};
use riot_testkit::{MockServer, Reply, Script, TestClock, Wire};
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
struct NoJitter;
impl Jitter for NoJitter {
    fn next_u64(&self) -> u64 {
        0
    }
}

fn kind_for(wire: Wire) -> ProviderKind {
    match wire {
        Wire::Anthropic => ProviderKind::Anthropic,
        Wire::Openai => ProviderKind::OpenAiChat,
        Wire::OpenaiResponses => ProviderKind::OpenAiResponses,
    }
}

/// A watchdog window is ≥ 60 s. Here it waits a generous 5 s of real time
/// (so a loaded machine never trips it by accident) while retry delays are
/// recorded and skipped.
fn clock() -> TestClock {
    TestClock::new(60_000, Duration::from_secs(5))
}

/// For the stall tests: the watchdog trips after 1 s of real silence.
fn stall_clock() -> TestClock {
    TestClock::new(60_000, Duration::from_secs(1))
}

fn provider(server: &MockServer, wire: Wire, clock: &TestClock) -> HttpProvider {
    let mut config =
        ProviderConfig::new(kind_for(wire), Arc::new(clock.clone()), Arc::new(NoJitter));
    config.base_url = Some(server.base_url());
    config.api_key = Some(ApiKey::new("test-key"));
    HttpProvider::new(config).unwrap()
}

/// A server that answers with `replies`, in order.
async fn serve(wire: Wire, replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(wire, replies)).await.unwrap()
}

/// One "hi" to `model` through a fresh provider for `server`.
async fn ask(
    server: &MockServer,
    wire: Wire,
    clock: &TestClock,
    model: &str,
) -> (Vec<ProviderEvent>, Option<ProviderError>) {
    collect(&provider(server, wire, clock), request(model, "hi")).await
}

fn request(model: &str, text: &str) -> ModelRequest {
    ModelRequest {
        server_tools: Vec::new(),
        model: model.into(),
        system: SystemPrompt::stable("You are a test."),
        messages: vec![riot_protocol::Message::user_text(
            riot_protocol::MessageId::new("u1"),
            text,
        )],
        tools: vec![],
        max_tokens: 1024,
        thinking: None,
        cache: CacheHints::default(),
        stream: true,
    }
}

async fn collect(
    provider: &HttpProvider,
    request: ModelRequest,
) -> (Vec<ProviderEvent>, Option<ProviderError>) {
    let mut stream = provider.stream(request, CancellationToken::new());
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => {
                assert!(stream.next().await.is_none(), "nothing after the error");
                return (events, Some(e));
            }
        }
    }
    (events, None)
}

fn block_text(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Block(AssistantBlock::Text { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn delta_text(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Delta(StreamDelta::Text { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

const WIRES: [Wire; 3] = [Wire::Anthropic, Wire::Openai, Wire::OpenaiResponses];
const INTERNATIONAL: &str = "你好，世界！Grüße — 🙂🚀👩‍💻 façade «ok» 日本語テキスト";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chinese_and_emoji_arrive_byte_identical_in_every_chunk_size_and_format() {
    for wire in WIRES {
        for size in [1, 7, 13, 4096] {
            let script =
                Script::new(wire, vec![Reply::Text(INTERNATIONAL.into())]).chunk_size(size);
            let server = MockServer::start(script).await.unwrap();
            let clock = clock();
            let (events, err) = ask(&server, wire, &clock, "mock-model").await;
            assert_eq!(err, None, "{wire:?} chunk {size}");
            assert_eq!(block_text(&events), INTERNATIONAL, "{wire:?} chunk {size}");
            assert_eq!(delta_text(&events), INTERNATIONAL, "{wire:?} chunk {size}");
            assert_eq!(
                events.first(),
                Some(&ProviderEvent::Started {
                    model: "mock-model".into()
                })
            );
            assert_eq!(
                events.last(),
                Some(&ProviderEvent::Stop {
                    reason: StopReason::EndTurn
                })
            );
            assert_eq!(server.requests().len(), 1);
            server.shutdown().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_40kb_tool_argument_json_is_decoded_intact() {
    let items: Vec<serde_json::Value> = (0..560)
        .map(|i| serde_json::json!({"line": i, "text": format!("第{i}行 — emoji 🙂 and \"quotes\" \\ backslash")}))
        .collect();
    let input = serde_json::json!({"file_path": "/tmp/big.txt", "items": items});
    let arguments = input.to_string();
    assert!(arguments.len() > 40_000, "{}", arguments.len());
    for wire in WIRES {
        for size in [7, 4096] {
            let reply = Reply::ToolCall {
                id: "call_big".into(),
                name: "Write".into(),
                arguments: arguments.clone(),
                text: String::new(),
            };
            let server = MockServer::start(Script::new(wire, vec![reply]).chunk_size(size))
                .await
                .unwrap();
            let clock = clock();
            let (events, err) = collect(
                &provider(&server, wire, &clock),
                request("mock-model", "write it"),
            )
            .await;
            assert_eq!(err, None, "{wire:?}");
            let tools: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    ProviderEvent::Block(AssistantBlock::ToolUse { id, name, input }) => {
                        Some((id.as_str(), name.as_str(), input))
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(
                tools,
                vec![("call_big", "Write", &input)],
                "{wire:?} chunk {size}"
            );
            assert_eq!(
                events.last(),
                Some(&ProviderEvent::Stop {
                    reason: StopReason::ToolUse
                })
            );
            server.shutdown().await;
        }
    }
}

fn error(status: u16, body: &str, headers: &[(&str, &str)]) -> Reply {
    Reply::Error {
        status,
        body: body.into(),
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
    }
}

const RATE_LIMITED: &str = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_back_off_by_the_injected_clock_and_retry_after_wins() {
    let replies = vec![
        error(429, RATE_LIMITED, &[("retry-after", "3")]),
        error(429, RATE_LIMITED, &[]),
        error(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            &[],
        ),
        Reply::Text("finally".into()),
    ];
    let server = serve(Wire::Anthropic, replies).await;
    let clock = clock();
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(err, None);
    let retries: Vec<(u32, u64, ProviderErrorKind)> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retrying {
                attempt,
                delay_ms,
                kind,
                ..
            } => Some((*attempt, *delay_ms, *kind)),
            _ => None,
        })
        .collect();
    // Retry-After: 3 s; then 500 ms × 2^(2−1); then 500 ms × 2^(3−1).
    assert_eq!(
        retries,
        vec![
            (2, 3_000, ProviderErrorKind::RateLimit),
            (3, 1_000, ProviderErrorKind::RateLimit),
            (4, 2_000, ProviderErrorKind::Overloaded)
        ]
    );
    assert_eq!(
        clock.sleeps(),
        vec![3_000, 1_000, 2_000],
        "every wait went through the injected clock"
    );
    assert_eq!(block_text(&events), "finally");
    assert_eq!(server.requests().len(), 4);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_beyond_the_cap_ends_the_request_at_once_saying_when_to_retry() {
    // The test clock starts at 2026-01-01T00:00:00Z.
    let cases = [
        (
            429,
            RATE_LIMITED,
            "86400",
            ProviderErrorKind::RateLimit,
            "Number of request tokens has exceeded your per-minute rate limit; the provider \
             asked to wait 24 h (retry after 2026-01-02T00:00:00Z), longer than Riot waits on \
             its own (1 min)",
        ),
        (
            503,
            "upstream unavailable",
            "Fri, 02 Jan 2026 12:00:00 GMT",
            ProviderErrorKind::Overloaded,
            "upstream unavailable; the provider asked to wait 36 h (retry after \
             2026-01-02T12:00:00Z), longer than Riot waits on its own (1 min)",
        ),
        (
            429,
            RATE_LIMITED,
            "61",
            ProviderErrorKind::RateLimit,
            "Number of request tokens has exceeded your per-minute rate limit; the provider \
             asked to wait 1 min 1 s (retry after 2026-01-01T00:01:01Z), longer than Riot \
             waits on its own (1 min)",
        ),
    ];
    for (status, body, retry_after, kind, message) in cases {
        let server = serve(
            Wire::Anthropic,
            vec![
                error(status, body, &[("retry-after", retry_after)]),
                Reply::Text("never sent".into()),
            ],
        )
        .await;
        let clock = clock();
        let start = clock.now_ms();
        let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
        let err = err.expect("surfaced");
        assert_eq!(
            (err.kind, err.status, err.message.as_str()),
            (kind, Some(status), message)
        );
        assert!(events.is_empty(), "no Retrying notice: {events:?}");
        assert_eq!(server.requests().len(), 1, "{retry_after}: not retried");
        assert_eq!(server.remaining(), 1);
        assert!(clock.sleeps().is_empty(), "{:?}", clock.sleeps());
        // No sleep of any length completed (long ones advance the clock
        // without being recorded).
        assert_eq!(
            clock.now_ms(),
            start,
            "{retry_after}: nothing was waited for"
        );
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_of_exactly_the_cap_is_waited_in_full() {
    let replies = vec![
        error(429, RATE_LIMITED, &[("retry-after", "60")]),
        Reply::Text("finally".into()),
    ];
    let server = serve(Wire::Anthropic, replies).await;
    // Record sleeps up to 90 s (the watchdog window): the 60 s wait must
    // show up in `sleeps`, not be taken for a watchdog.
    let clock = TestClock::new(90_000, Duration::from_secs(5));
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(err, None);
    let retries: Vec<(u32, u64, ProviderErrorKind)> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retrying {
                attempt,
                delay_ms,
                kind,
                ..
            } => Some((*attempt, *delay_ms, *kind)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![(2, 60_000, ProviderErrorKind::RateLimit)]);
    assert_eq!(clock.sleeps(), vec![60_000]);
    assert_eq!(block_text(&events), "finally");
    assert_eq!(server.requests().len(), 2);
    server.shutdown().await;
}

const ECHOED_KEY: &str = "sk-live-0123456789abcdef";

fn provider_with_key(
    server: &MockServer,
    wire: Wire,
    clock: &TestClock,
    key: &str,
) -> HttpProvider {
    let mut config =
        ProviderConfig::new(kind_for(wire), Arc::new(clock.clone()), Arc::new(NoJitter));
    config.base_url = Some(server.base_url());
    config.api_key = Some(ApiKey::new(key));
    HttpProvider::new(config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_echoed_in_an_error_body_is_redacted_from_the_error_and_the_retry_notice() {
    // A server error that echoes the key is retried (the notice carries
    // its words); the 401 after it is not, and says the key was refused.
    let server_error = format!(
        r#"{{"error":{{"message":"upstream failed for key {ECHOED_KEY}","type":"server_error"}}}}"#
    );
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {ECHOED_KEY}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let server = serve(
        Wire::Openai,
        vec![
            error(500, &server_error, &[]),
            error(401, &body, &[]),
            Reply::Text("never sent".into()),
        ],
    )
    .await;
    let clock = clock();
    let provider = provider_with_key(&server, Wire::Openai, &clock, ECHOED_KEY);
    let (events, err) = collect(&provider, request("mock-model", "hi")).await;
    // The key really was sent (and echoed), so the assertions can fail.
    let auth = format!("Bearer {ECHOED_KEY}");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(auth.as_str())
    );
    assert_eq!(
        events,
        vec![ProviderEvent::Retrying {
            attempt: 2,
            delay_ms: 500,
            kind: ProviderErrorKind::Server,
            reason: "upstream failed for key [REDACTED]".into(),
        }]
    );
    let expected = "the endpoint refused the API key (Incorrect API key provided: [REDACTED]. \
                    You can find your API key at https://platform.openai.com/account/api-keys)";
    let err = err.expect("surfaced");
    assert_eq!(
        (err.kind, err.status, err.message.as_str()),
        (ProviderErrorKind::Auth, Some(401), expected)
    );
    assert!(!format!("{err:?} {err}").contains("0123456789abcdef"));
    assert_eq!(server.requests().len(), 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_echoed_in_a_plain_body_or_a_stream_error_is_redacted() {
    // A plain-text error body, kept verbatim as the message.
    let plain = format!("bad credentials: {ECHOED_KEY} is not a key");
    let server = serve(Wire::Openai, vec![error(400, &plain, &[])]).await;
    let clock = clock();
    let provider = provider_with_key(&server, Wire::Openai, &clock, ECHOED_KEY);
    let (events, err) = collect(&provider, request("mock-model", "hi")).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(
        err.map(|e| e.message),
        Some("bad credentials: [REDACTED] is not a key".to_owned())
    );
    server.shutdown().await;

    // An error event inside an Anthropic stream.
    let event = serde_json::json!({"type": "error", "error": {
        "type": "invalid_request_error",
        "message": format!("key {ECHOED_KEY} was revoked")}});
    let server = serve(Wire::Anthropic, vec![Reply::Events(vec![event])]).await;
    let provider = provider_with_key(&server, Wire::Anthropic, &clock, ECHOED_KEY);
    let (events, err) = collect(&provider, request("mock-model", "hi")).await;
    assert_eq!(server.requests()[0].header("x-api-key"), Some(ECHOED_KEY));
    assert!(events.is_empty(), "{events:?}");
    let err = err.expect("surfaced");
    assert_eq!(
        (err.kind, err.message.as_str()),
        (
            ProviderErrorKind::InvalidRequest,
            "key [REDACTED] was revoked"
        )
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_requests_give_up_on_overload_at_once() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = serve(
        Wire::Anthropic,
        vec![error(529, overloaded, &[]), Reply::Text("no".into())],
    )
    .await;
    let clock = clock();
    let background = provider(&server, Wire::Anthropic, &clock).for_background();
    let (events, err) = collect(&background, request("mock-model", "title?")).await;
    assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Overloaded));
    assert!(events.is_empty(), "no Retrying notice: {events:?}");
    assert_eq!(server.requests().len(), 1);
    assert!(clock.sleeps().is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_is_never_retried_and_the_error_names_where_it_came_from() {
    let unauthorized =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let forbidden =
        r#"{"type":"error","error":{"type":"permission_error","message":"not allowed"}}"#;
    for (status, body, server_words) in [
        (401, unauthorized, "invalid x-api-key"),
        (403, forbidden, "not allowed"),
    ] {
        let replies = vec![
            // Even a Retry-After does not make a refused key worth retrying.
            error(status, body, &[("retry-after", "1")]),
            Reply::Text("never sent".into()),
        ];
        let server = serve(Wire::Anthropic, replies).await;
        let clock = clock();
        let mut config = ProviderConfig::new(
            ProviderKind::Anthropic,
            Arc::new(clock.clone()),
            Arc::new(NoJitter),
        );
        config.base_url = Some(server.base_url());
        config.api_key = Some(ApiKey::new("test-key"));
        config.key_origin = Some("$ANTHROPIC_API_KEY".into());
        let provider = HttpProvider::new(config).unwrap();
        let (events, err) = collect(&provider, request("mock-model", "hi")).await;
        let err = err.expect("surfaced");
        assert_eq!(err.kind, ProviderErrorKind::Auth);
        assert_eq!(
            err.message,
            format!("the endpoint refused the API key from $ANTHROPIC_API_KEY ({server_words})")
        );
        assert_eq!(err.status, Some(status));
        assert_eq!(server.requests().len(), 1, "{status}: no retry");
        assert_eq!(server.remaining(), 1);
        assert!(events.is_empty(), "no Retrying notice: {events:?}");
        assert!(clock.sleeps().is_empty(), "no wait: {:?}", clock.sleeps());
        let key = server.requests()[0].header("x-api-key").map(str::to_owned);
        assert_eq!(key.as_deref(), Some("test-key"));
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_base_url_ending_in_v1_reaches_v1_messages_once() {
    let server = serve(Wire::Anthropic, vec![Reply::Text("hello".into())]).await;
    let clock = clock();
    let mut config = ProviderConfig::new(
        ProviderKind::Anthropic,
        Arc::new(clock.clone()),
        Arc::new(NoJitter),
    );
    config.base_url = Some(format!("{}/v1/", server.base_url()));
    config.api_key = Some(ApiKey::new("test-key"));
    let provider = HttpProvider::new(config).unwrap();
    assert_eq!(
        provider.endpoint(),
        format!("{}/v1/messages", server.base_url())
    );
    let (events, err) = collect(&provider, request("mock-model", "hi")).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(block_text(&events), "hello");
    assert_eq!(server.requests()[0].path, "/v1/messages");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_and_overflow_are_not_retried_and_overflow_is_recoverable() {
    let cases = [
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            ProviderErrorKind::ContextOverflow,
        ),
        (
            413,
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
            ProviderErrorKind::ContextOverflow,
        ),
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            ProviderErrorKind::QuotaExhausted,
        ),
        (
            402,
            r#"{"error":{"message":"Insufficient Balance","type":"unknown_error"}}"#,
            ProviderErrorKind::Payment,
        ),
    ];
    for (status, body, kind) in cases {
        let server = serve(
            Wire::Anthropic,
            vec![error(status, body, &[]), Reply::Text("no".into())],
        )
        .await;
        let clock = clock();
        let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
        let err = err.unwrap();
        assert_eq!(err.kind, kind, "{status}");
        assert_eq!(
            err.is_recoverable_by_loop(),
            kind == ProviderErrorKind::ContextOverflow
        );
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(server.requests().len(), 1, "{status} is not retried");
        server.shutdown().await;
    }
}

fn anthropic_prefix(text: &str) -> String {
    riot_testkit::frame(
        Wire::Anthropic,
        &[
            serde_json::json!({"type": "message_start", "message": {"model": "mock-model", "usage": {"input_tokens": 5, "output_tokens": 1}}}),
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_after_content_keeps_the_partial_text_and_surfaces_stream_cut() {
    let replies = vec![
        Reply::Cut(anthropic_prefix("部分的な答え")),
        Reply::Text("not re-requested".into()),
    ];
    let server = MockServer::start(Script::new(Wire::Anthropic, replies).chunk_size(7))
        .await
        .unwrap();
    let clock = clock();
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(
        err.map(|e| e.kind),
        Some(ProviderErrorKind::StreamCut),
        "{events:?}"
    );
    assert_eq!(delta_text(&events), "部分的な答え");
    assert_eq!(
        block_text(&events),
        "部分的な答え",
        "the partial text is kept as a block"
    );
    assert!(!events.iter().any(|e| matches!(
        e,
        ProviderEvent::Stop { .. } | ProviderEvent::Retrying { .. }
    )));
    assert_eq!(
        server.requests().len(),
        1,
        "no retry after content was shown"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_before_any_content_is_retried() {
    let prefix = riot_testkit::frame(
        Wire::Anthropic,
        &[serde_json::json!({"type": "message_start", "message": {"model": "mock-model"}})],
    );
    let replies = vec![Reply::Cut(prefix), Reply::Text("second try".into())];
    let server = serve(Wire::Anthropic, replies).await;
    let clock = clock();
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(err, None);
    assert!(
        matches!(
            events[0],
            ProviderEvent::Retrying {
                attempt: 2,
                delay_ms: 500,
                kind: ProviderErrorKind::StreamCut,
                ..
            }
        ),
        "{events:?}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::Started { .. }))
            .count(),
        1,
        "Started shown once"
    );
    assert_eq!(block_text(&events), "second try");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_before_content_falls_back_to_one_non_streaming_request() {
    let prefix = riot_testkit::frame(
        Wire::Anthropic,
        &[serde_json::json!({"type": "message_start", "message": {"model": "mock-model"}})],
    );
    let replies = vec![
        Reply::Stall(prefix),
        Reply::Text("from the fallback".into()),
    ];
    let server = serve(Wire::Anthropic, replies).await;
    let clock = stall_clock();
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(err, None);
    assert_eq!(block_text(&events), "from the fallback");
    assert_eq!(
        events.last(),
        Some(&ProviderEvent::Stop {
            reason: StopReason::EndTurn
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["stream"], true);
    assert_eq!(
        requests[1].body["stream"], false,
        "the fallback does not stream"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_after_content_surfaces_stalled_without_re_requesting() {
    let replies = vec![
        Reply::Stall(anthropic_prefix("half")),
        Reply::Text("never".into()),
    ];
    let server = serve(Wire::Anthropic, replies).await;
    let clock = stall_clock();
    let (events, err) = ask(&server, Wire::Anthropic, &clock, "mock-model").await;
    assert_eq!(err.map(|e| e.kind), Some(ProviderErrorKind::Stalled));
    assert_eq!(delta_text(&events), "half");
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mock_out_of_script_answers_non_retryable() {
    let server = MockServer::start(Script::new(Wire::Openai, vec![]))
        .await
        .unwrap();
    let clock = clock();
    let (_, err) = ask(&server, Wire::Openai, &clock, "gpt-4.1").await;
    let err = err.unwrap();
    assert_eq!(err.kind, ProviderErrorKind::InvalidRequest);
    assert!(err.message.contains("no reply left"), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_ends_a_stalled_stream_promptly() {
    let server = serve(Wire::Anthropic, vec![Reply::Stall(anthropic_prefix("x"))]).await;
    let clock = TestClock::new(60_000, Duration::from_secs(600));
    let provider = provider(&server, Wire::Anthropic, &clock);
    let cancel = CancellationToken::new();
    let mut stream = provider.stream(request("mock-model", "hi"), cancel.clone());
    // Wait for the first content, then cancel.
    loop {
        match stream.next().await {
            Some(Ok(ProviderEvent::Delta(_))) => break,
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    cancel.cancel();
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item);
    }
    assert_eq!(
        last.unwrap().unwrap_err().kind,
        ProviderErrorKind::Cancelled
    );
    server.shutdown().await;
}

#[test]
fn a_key_is_required_unless_the_host_is_loopback() {
    let clock = Arc::new(riot_protocol::FixedClock::new());
    let config = |base: Option<&str>, key: Option<&str>| {
        let mut c =
            ProviderConfig::new(ProviderKind::OpenAiChat, clock.clone(), Arc::new(NoJitter));
        c.base_url = base.map(str::to_owned);
        c.api_key = key.map(ApiKey::new);
        c
    };
    let err = HttpProvider::new(config(None, None)).unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::MissingKey {
                key_env: "OPENAI_API_KEY",
                ..
            }
        ),
        "{err}"
    );
    for local in [
        "http://127.0.0.1:11434/v1/",
        "http://localhost:8080/v1",
        "http://[::1]:1234/v1",
    ] {
        let p = HttpProvider::new(config(Some(local), None)).unwrap();
        assert!(
            p.endpoint().ends_with("/v1/chat/completions"),
            "{}",
            p.endpoint()
        );
        assert!(!p.endpoint().contains("//chat"), "trailing slash trimmed");
    }
    let p = HttpProvider::new(config(None, Some("sk-secret"))).unwrap();
    assert_eq!(p.endpoint(), "https://api.openai.com/v1/chat/completions");
    assert!(
        !format!("{p:?}").contains("sk-secret"),
        "the key never shows in Debug"
    );
    let mut responses = config(None, Some("k"));
    responses.kind = ProviderKind::OpenAiResponses;
    assert_eq!(
        HttpProvider::new(responses).unwrap().endpoint(),
        "https://api.openai.com/v1/responses"
    );
    assert!(matches!(
        HttpProvider::new(config(Some("not a url"), Some("k"))),
        Err(ConfigError::InvalidBaseUrl(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_error_body_with_status_200_on_a_streaming_request_is_classified_not_retried() {
    let body = serde_json::json!({"error": {"message": "model 'qwen9' not found", "type": "invalid_request_error"}});
    let server = serve(
        Wire::Openai,
        vec![Reply::Json(body), Reply::Text("no".into())],
    )
    .await;
    let clock = clock();
    let (events, err) = ask(&server, Wire::Openai, &clock, "qwen9").await;
    let err = err.unwrap();
    assert_eq!(
        (err.kind, err.message.as_str()),
        (ProviderErrorKind::InvalidRequest, "model 'qwen9' not found")
    );
    assert!(events.is_empty());
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

/// A wire fixture (tests/wire, or a recorded one where the machine has
/// them) framed as its README says.
fn fixture_sse(path: &std::path::Path, wire: Wire) -> String {
    let events: Vec<serde_json::Value> = support::fixture_lines(path)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    riot_testkit::frame(wire, &events)
}

/// The stream at `path`, served over HTTP in pieces of 1, 7, 13 and 4096
/// bytes, yields exactly what the in-memory decoder yields for it, and
/// ends normally.
async fn through_http_as_in_memory(path: &std::path::Path, wire: Wire, model: &str) {
    use riot_providers::decode::{Decoder, decode_chunks};
    let file = path.display();
    let sse = fixture_sse(path, wire);
    let mut decoder: Box<dyn Decoder> = match wire {
        Wire::Anthropic => Box::new(riot_providers::anthropic::decode::AnthropicDecoder::new(
            model,
        )),
        Wire::Openai => Box::new(riot_providers::chat::decode::ChatDecoder::new(model)),
        Wire::OpenaiResponses => Box::new(
            riot_providers::responses::decode::ResponsesDecoder::new(model),
        ),
    };
    let (expected, err) = decode_chunks(decoder.as_mut(), [sse.as_bytes()]);
    assert_eq!(err, None, "{file}");
    assert!(
        matches!(expected.last(), Some(ProviderEvent::Stop { .. })),
        "{file}: {expected:?}"
    );
    for size in [1, 7, 13, 4096] {
        let server =
            MockServer::start(Script::new(wire, vec![Reply::Sse(sse.clone())]).chunk_size(size))
                .await
                .unwrap();
        let clock = clock();
        let (events, err) = ask(&server, wire, &clock, model).await;
        assert_eq!(err, None, "{file} chunk {size}");
        assert_eq!(events, expected, "{file} chunk {size}");
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_fixtures_through_http_yield_exactly_what_the_in_memory_decoder_yields() {
    // The project's own complete streams (tests/wire).
    let own: [(&str, Wire, &str); 9] = [
        ("anthropic/text.jsonl", Wire::Anthropic, "claude-sonnet-4-5"),
        (
            "anthropic/thinking-signature.jsonl",
            Wire::Anthropic,
            "claude-opus-4-1",
        ),
        (
            "anthropic/tool-use-split.jsonl",
            Wire::Anthropic,
            "claude-sonnet-4-5",
        ),
        (
            "anthropic/tool-no-args.jsonl",
            Wire::Anthropic,
            "claude-haiku-4-5",
        ),
        ("openai-chat/text.jsonl", Wire::Openai, "gpt-4.1-mini"),
        (
            "openai-chat/reasoning.jsonl",
            Wire::Openai,
            "deepseek-reasoner",
        ),
        ("openai-chat/tool-calls.jsonl", Wire::Openai, "gpt-4.1"),
        (
            "openai-responses/text.jsonl",
            Wire::OpenaiResponses,
            "gpt-5-mini",
        ),
        (
            "openai-responses/reasoning-tool.jsonl",
            Wire::OpenaiResponses,
            "gpt-5.1-codex",
        ),
    ];
    for (file, wire, model) in own {
        through_http_as_in_memory(&support::own_wire().join(file), wire, model).await;
    }
    // The recorded streams, where this machine has them.
    let Some(recorded) = support::recorded_wire_or_skip(
        "wire_fixtures_through_http_yield_exactly_what_the_in_memory_decoder_yields",
    ) else {
        return;
    };
    let cases: [(&str, Wire, &str); 3] = [
        (
            "anthropic/anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt",
            Wire::Anthropic,
            "claude-sonnet-5",
        ),
        (
            "deepseek/deepseek-tool-call.chunks.txt",
            Wire::Openai,
            "deepseek-v4-flash",
        ),
        (
            "openai-responses/issue-19493-gpt-5.1-tool-call.chunks.txt",
            Wire::OpenaiResponses,
            "gpt-5.1",
        ),
    ];
    for (file, wire, model) in cases {
        through_http_as_in_memory(&recorded.join(file), wire, model).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_provider_reuses_its_connection_across_requests() {
    let replies = vec![
        Reply::Text("one".into()),
        Reply::Text("two".into()),
        Reply::Text("three".into()),
    ];
    let server = serve(Wire::Openai, replies).await;
    let clock = clock();
    let provider = provider(&server, Wire::Openai, &clock);
    for expected in ["one", "two", "three"] {
        let (events, err) = collect(&provider, request("gpt-4.1", "hi")).await;
        assert_eq!(err, None);
        assert_eq!(block_text(&events), expected);
        // The body's terminator is read in the background after Stop; give
        // that task a moment before the next request picks a connection
        // (generous: on a loaded machine a spawned task can wait its turn).
        #[allow(clippy::disallowed_methods)] // test code: lets a background task run
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let peers: Vec<_> = server.requests().iter().map(|r| r.peer).collect();
    assert_eq!(peers.len(), 3);
    assert!(
        peers.iter().all(|p| *p == peers[0]),
        "one keep-alive connection: {peers:?}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_instead_of_a_stream_fails_fast_with_a_base_url_hint() {
    let page = error(
        200,
        "<html><body>Welcome</body></html>",
        &[("content-type", "text/html; charset=utf-8")],
    );
    let server = serve(Wire::Openai, vec![page, Reply::Text("no".into())]).await;
    let clock = clock();
    let (_, err) = ask(&server, Wire::Openai, &clock, "gpt-4.1").await;
    let err = err.unwrap();
    assert_eq!(err.kind, ProviderErrorKind::Malformed);
    assert!(
        err.message
            .ends_with("answered with a web page, not an event stream: check the base URL"),
        "{}",
        err.message
    );
    assert_eq!(server.requests().len(), 1, "not retried");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_can_stop_after_three_overloads_and_switch_models() {
    // The loop owns the fallback switch (docs/design.md §11): it counts
    // `Retrying { kind: Overloaded }` notices and drops the stream at the
    // third; no further request may reach the server after that.
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let replies = (0..5).map(|_| error(529, overloaded, &[])).collect();
    let server = serve(Wire::Anthropic, replies).await;
    let clock = clock();
    let provider = provider(&server, Wire::Anthropic, &clock);
    let mut stream = provider.stream(request("claude-opus-4-5", "hi"), CancellationToken::new());
    let mut overloads = 0;
    while let Some(Ok(event)) = stream.next().await {
        if let ProviderEvent::Retrying {
            kind: ProviderErrorKind::Overloaded,
            ..
        } = event
        {
            overloads += 1;
            if overloads == 3 {
                break;
            }
        }
    }
    drop(stream);
    assert_eq!(overloads, 3);
    assert_eq!(
        server.requests().len(),
        3,
        "dropping the stream ends the retries"
    );
    assert_eq!(
        clock.sleeps(),
        vec![500, 1_000],
        "the third wait never started"
    );
    server.shutdown().await;
}
