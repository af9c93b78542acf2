//! The classifier on its own: reading replies, the request it builds, the
//! recent-requests handle, the timeout. Against the real HTTP provider and
//! the whole chain: `tests/auto_mode.rs`.

use riot_protocol::{FixedClock, ModelCapabilities, ProviderStream};

use super::*;

fn allow(reason: &str) -> Result<ClassifierVerdict, ClassifierUnavailable> {
    Ok(ClassifierVerdict::Allow {
        reason: reason.into(),
    })
}

fn deny(reason: &str) -> Result<ClassifierVerdict, ClassifierUnavailable> {
    Ok(ClassifierVerdict::Deny {
        reason: reason.into(),
    })
}

#[test]
fn a_verdict_is_read_alone_fenced_or_inside_prose() {
    let cases = [
        (
            r#"{"decision": "allow", "reason": "the person asked for a build"}"#,
            allow("the person asked for a build"),
        ),
        (
            "```json\n{\"decision\": \"deny\", \"reason\": \"deletes the home directory\"}\n```",
            deny("deletes the home directory"),
        ),
        (
            "Looking at the call.\n{\"decision\":\"deny\",\"reason\":\"pushes to {main}\"} Done.",
            deny("pushes to {main}"),
        ),
        (
            "{\"decision\": \"allow\", \"reason\": \"  runs the tests \"}",
            allow("runs the tests"),
        ),
        // The same answer twice is still one answer.
        (
            "{\"decision\":\"allow\",\"reason\":\"a\"}\n{\"decision\":\"allow\",\"reason\":\"b\"}",
            allow("a"),
        ),
        // Objects without a decision (an example of the input) are skipped.
        (
            "Input {\"tool\": \"Bash\"} → {\"decision\": \"deny\", \"reason\": \"off-task\"}",
            deny("off-task"),
        ),
    ];
    for (reply, expected) in cases {
        assert_eq!(parse_verdict(reply), expected, "{reply}");
    }
}

#[test]
fn anything_but_an_exact_decision_with_a_reason_is_malformed() {
    let cases = [
        ("", "no JSON object with a decision"),
        ("allow", "no JSON object with a decision"),
        ("{\"decision\": \"allow\"", "no JSON object with a decision"),
        (
            "{\"verdict\": \"allow\", \"reason\": \"x\"}",
            "no JSON object with a decision",
        ),
        ("{\"decision\": \"Allow\", \"reason\": \"x\"}", "neither"),
        ("{\"decision\": \"allow \", \"reason\": \"x\"}", "neither"),
        ("{\"decision\": \"maybe\", \"reason\": \"x\"}", "neither"),
        ("{\"decision\": true, \"reason\": \"x\"}", "neither"),
        ("{\"decision\": \"deny\"}", "no reason"),
        ("{\"decision\": \"deny\", \"reason\": \"   \"}", "no reason"),
        ("{\"decision\": \"deny\", \"reason\": 3}", "no reason"),
        (
            "{\"decision\":\"allow\",\"reason\":\"a\"} or {\"decision\":\"deny\",\"reason\":\"b\"}",
            "conflicting decisions",
        ),
    ];
    for (reply, why) in cases {
        match parse_verdict(reply) {
            Err(ClassifierUnavailable(message)) => {
                assert!(message.contains("malformed"), "{reply}: {message}");
                assert!(message.contains(why), "{reply}: {message}");
            }
            other => panic!("{reply}: expected malformed, got {other:?}"),
        }
    }
}

#[test]
fn a_long_reason_is_cut() {
    let long = "x".repeat(REASON_CHARS + 50);
    let reply = format!("{{\"decision\": \"deny\", \"reason\": \"{long}\"}}");
    let Ok(ClassifierVerdict::Deny { reason }) = parse_verdict(&reply) else {
        panic!("expected a denial");
    };
    assert_eq!(reason.chars().count(), REASON_CHARS + 1);
    assert!(reason.ends_with('…'));
}

#[test]
fn recent_requests_keep_the_last_few_cut_to_length() {
    let recent = RecentRequests::new();
    let shared = recent.clone();
    for n in 1..=RECENT_REQUESTS + 2 {
        shared.push(&format!("request {n}"));
    }
    shared.push("   ");
    let kept = recent.snapshot();
    assert_eq!(kept.len(), RECENT_REQUESTS);
    assert_eq!(kept.first().map(String::as_str), Some("request 3"));
    assert_eq!(
        kept.last().map(String::as_str),
        Some(format!("request {}", RECENT_REQUESTS + 2).as_str())
    );

    recent.push(&"é".repeat(REQUEST_CHARS * 2));
    let last = recent.snapshot().pop().unwrap_or_default();
    assert_eq!(last.chars().count(), REQUEST_CHARS + 1);
    recent.clear();
    assert!(shared.snapshot().is_empty());
}

/// A provider whose reply never comes; it keeps the request's token.
#[derive(Debug, Default)]
struct Silent {
    token: Mutex<Option<CancellationToken>>,
}

impl Provider for Silent {
    fn stream(&self, _request: ModelRequest, cancel: CancellationToken) -> ProviderStream {
        *self.token.lock().unwrap_or_else(|e| e.into_inner()) = Some(cancel);
        Box::pin(futures::stream::pending())
    }

    fn capabilities(&self, _model: &str) -> ModelCapabilities {
        ModelCapabilities {
            max_output_tokens: 300,
            ..ModelCapabilities::default()
        }
    }
}

fn classifier(provider: Arc<dyn Provider>, recent: &RecentRequests) -> ModelClassifier {
    ModelClassifier::new(
        provider,
        "small-model",
        "/work/proj",
        recent.clone(),
        Arc::new(FixedClock::new()),
    )
}

fn call() -> ClassifierRequest {
    ClassifierRequest {
        tool_name: "Bash".into(),
        input: "Bash: npm install".into(),
    }
}

#[tokio::test]
async fn no_answer_in_time_is_unavailable_and_cancels_the_request() {
    let silent = Arc::new(Silent::default());
    let recent = RecentRequests::new();
    let c = classifier(silent.clone(), &recent).with_timeout_ms(5_000);
    let Err(ClassifierUnavailable(why)) = c.classify(&call()).await else {
        panic!("a silent classifier must not answer");
    };
    assert!(why.contains("no answer in time"), "{why}");
    assert!(why.contains("5000 ms"), "{why}");
    // The transport may run the request in a task of its own: the token
    // tells it to stop.
    let token = silent
        .token
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert!(token.is_some_and(|t| t.is_cancelled()));
}

#[test]
fn the_request_holds_the_project_the_requests_and_the_call_only() {
    let recent = RecentRequests::new();
    recent.push("add a --verbose flag");
    recent.push("then run the tests");
    let c = classifier(Arc::new(Silent::default()), &recent);
    let request = c.request(&call());
    assert_eq!(request.model, "small-model");
    assert_eq!(request.system, SystemPrompt::stable(SYSTEM_PROMPT));
    assert!(request.tools.is_empty());
    assert!(request.thinking.is_none());
    assert_eq!(request.max_tokens, 300, "capped by the model's limit");
    assert_eq!(request.messages.len(), 1);
    let Some(Message::User(user)) = request.messages.first() else {
        panic!("one user message");
    };
    let [UserBlock::Text { text }] = user.content.as_slice() else {
        panic!("one text block: {:?}", user.content);
    };
    let facts: Value = serde_json::from_str(text).unwrap_or_default();
    assert_eq!(
        facts,
        json!({
            "project": "/work/proj",
            "recent_requests": ["add a --verbose flag", "then run the tests"],
            "call": {"tool": "Bash", "input": "Bash: npm install"},
        })
    );
}
