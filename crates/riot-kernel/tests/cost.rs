//! What a session costs, end to end: a real kernel on the disk and the
//! strict mock model server reporting known usage — cache reads and writes
//! included — for an Anthropic and an OpenAI model. The expected figures
//! are computed here from the usage and the providers' published rates,
//! independently of the price table, and compared with the kernel's
//! figure, its `/cost` answer, the transcript and the session list.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests create and read real files

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use riot_config::FlagLayer;
use riot_kernel::{Capabilities, Kernel, OpenOptions, ResumeFrom, Session};
use riot_protocol::{AgentEvent, CancelScope, Message, SessionCost, Usage};
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};
use riot_testkit::script::generated_events;
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};

struct Fixture {
    _home: tempfile::TempDir,
    _project: tempfile::TempDir,
    server: MockServer,
    kernel: Kernel,
    options: OpenOptions,
}

async fn fixture(wire: Wire, provider: &str, model: &str, replies: Vec<Reply>) -> Fixture {
    fixture_with(Script::new(wire, replies), provider, model).await
}

async fn fixture_with(script: Script, provider: &str, model: &str) -> Fixture {
    let server = MockServer::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let caps = Capabilities {
        fs: Arc::new(RealFs),
        proc: Arc::new(RealProcessRunner::new()),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds::new()),
        web: Arc::new(riot_protocol::NoWeb),
        terminals: Arc::new(riot_protocol::NoTerminals),
        sandbox: Arc::new(riot_protocol::NoSandbox),
        seed: 7,
    };
    let kernel = Kernel::new(caps, home.path().join("riot"));
    let options = OpenOptions {
        cwd: project.path().canonicalize().unwrap(),
        env: BTreeMap::from([
            ("HOME".to_owned(), home.path().display().to_string()),
            ("TEST_KEY".to_owned(), "test-key".to_owned()),
        ]),
        flags: FlagLayer {
            provider: Some(provider.into()),
            base_url: Some(server.base_url()),
            model: Some(model.into()),
            api_key_env: Some("TEST_KEY".into()),
            ..FlagLayer::default()
        },
        trust_project: false,
        max_turns: None,
        resume: None,
        asker: riot_kernel::Asker::Nobody,
        mcp_servers: Vec::new(),
    };
    Fixture {
        _home: home,
        _project: project,
        server,
        kernel,
        options,
    }
}

async fn turn(session: &mut Session, prompt: &str) -> Vec<AgentEvent> {
    session.turn(prompt, CancelScope::new()).collect().await
}

/// The text of the `Info` message a built-in command answers with.
fn info(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Message {
                message: Message::System(m),
            } => Some(m.text.clone()),
            _ => None,
        })
        .expect("an info message")
}

/// A text reply on the Anthropic wire reporting this usage: the input
/// figures in `message_start`, the output in `message_delta`.
fn anthropic_reply(
    model: &str,
    text: &str,
    input: u64,
    read: u64,
    write: u64,
    output: u64,
) -> Reply {
    let mut events = generated_events(Wire::Anthropic, model, text, None, input);
    for event in &mut events {
        match event["type"].as_str() {
            Some("message_start") => {
                event["message"]["usage"] = json!({"input_tokens": input,
                    "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                    "output_tokens": 1});
            }
            Some("message_delta") => event["usage"] = json!({"output_tokens": output}),
            _ => {}
        }
    }
    Reply::Events(events)
}

fn close(actual: Option<f64>, expected: f64) {
    let actual = actual.expect("a known cost");
    assert!(
        (actual - expected).abs() < 1e-9,
        "cost {actual} but {expected} expected"
    );
}

#[tokio::test]
async fn an_anthropic_sessions_cost_counts_cache_reads_and_writes_and_its_compaction() {
    let model = "claude-sonnet-4-5";
    let f = fixture(
        Wire::Anthropic,
        "anthropic",
        model,
        vec![
            anthropic_reply(model, "Done.", 1_200, 30_000, 2_000, 350),
            // The `/compact` summary: a side request.
            anthropic_reply(
                model,
                "<summary>The person said hi.</summary>",
                400,
                31_000,
                0,
                120,
            ),
        ],
    )
    .await;
    let mut session = f.kernel.open(f.options.clone()).await.unwrap();
    let done = turn(&mut session, "hi").await;
    assert!(
        done.iter().any(|e| matches!(e, AgentEvent::Usage { .. })),
        "{done:?}"
    );

    // Claude Sonnet 4.5: $3 input, $15 output, $3.75 a 5-minute cache
    // write and $0.30 a cache hit, per million tokens.
    let first = (1_200.0 * 3.0 + 350.0 * 15.0 + 2_000.0 * 3.75 + 30_000.0 * 0.30) / 1e6;
    let cost = session.cost();
    close(cost.usd, first);
    assert_eq!(
        cost.usage,
        Usage {
            input_tokens: 1_200,
            output_tokens: 350,
            cache_read_tokens: 30_000,
            cache_write_tokens: 2_000,
            web_searches: 0,
        }
    );
    assert_eq!(cost.side_usage, Usage::default());

    let answer = info(&turn(&mut session, "/cost").await);
    assert_eq!(
        answer,
        "Cost: $0.0254 for 1 model request.\n\
         Tokens: 1,200 input, 350 output, 30,000 read from the cache, 2,000 written to it."
    );

    let compacted = turn(&mut session, "/compact").await;
    assert!(
        compacted
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacted { .. })),
        "{compacted:?}"
    );
    let summary = (400.0 * 3.0 + 120.0 * 15.0 + 31_000.0 * 0.30) / 1e6;
    let cost = session.cost();
    close(cost.usd, first + summary);
    assert_eq!(cost.requests, 2);
    assert_eq!(
        cost.side_usage,
        Usage {
            input_tokens: 400,
            output_tokens: 120,
            cache_read_tokens: 31_000,
            cache_write_tokens: 0,
            web_searches: 0,
        }
    );
    assert_eq!(f.server.requests().len(), 2);

    // The transcript has both requests with the running total; the list
    // reads it from the last one, and a resumed session goes on from it.
    let id = session.id().clone();
    drop(session);
    let records = f.kernel.store().records(&id).unwrap();
    let usage_records: Vec<Value> = records
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .filter(|r| r["type"] == "usage")
        .collect();
    assert_eq!(usage_records.len(), 2);
    assert_eq!(usage_records[0]["side"], json!(null), "main: no side flag");
    assert_eq!(usage_records[1]["side"], json!(true));
    let listed = f
        .kernel
        .store()
        .list()
        .unwrap()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap();
    close(listed.cost.unwrap().usd, first + summary);

    let mut resumed = f
        .kernel
        .open(OpenOptions {
            resume: Some(ResumeFrom::Id(id)),
            ..f.options.clone()
        })
        .await
        .unwrap();
    close(resumed.cost().usd, first + summary);
    assert!(
        info(&turn(&mut resumed, "/cost").await).starts_with("Cost: $0.0377 for 2 model requests.")
    );
}

#[tokio::test]
async fn an_openai_sessions_cost_bills_cached_input_at_the_cached_rate() {
    let model = "gpt-5";
    let mut events = generated_events(Wire::Openai, model, "Done.", None, 0);
    let last = events.last_mut().unwrap();
    last["usage"] = json!({"prompt_tokens": 5_000, "completion_tokens": 800,
        "total_tokens": 5_800, "prompt_tokens_details": {"cached_tokens": 4_000}});
    let f = fixture(Wire::Openai, "openai", model, vec![Reply::Events(events)]).await;
    let mut session = f.kernel.open(f.options.clone()).await.unwrap();
    turn(&mut session, "hi").await;
    // GPT-5: $1.25 input, $0.125 cached input, $10 output per million;
    // input excludes the cached tokens.
    let expected = (1_000.0 * 1.25 + 4_000.0 * 0.125 + 800.0 * 10.0) / 1e6;
    let cost = session.cost();
    close(cost.usd, expected);
    assert_eq!(
        cost.usage,
        Usage {
            input_tokens: 1_000,
            output_tokens: 800,
            cache_read_tokens: 4_000,
            cache_write_tokens: 0,
            web_searches: 0,
        }
    );
    assert_eq!(
        info(&turn(&mut session, "/cost").await).lines().next(),
        Some("Cost: $0.0097 for 1 model request.")
    );
}

#[tokio::test]
async fn a_model_without_a_price_leaves_the_cost_unknown_until_settings_give_one() {
    let f = fixture(
        Wire::Anthropic,
        "anthropic",
        "mock-model",
        vec![
            Reply::Text("one".into()),
            Reply::Text("two".into()),
            Reply::Text("three".into()),
        ],
    )
    .await;
    let mut session = f.kernel.open(f.options.clone()).await.unwrap();
    turn(&mut session, "hi").await;
    let cost = session.cost();
    assert_eq!(cost.usd, None, "unknown, never zero");
    assert_eq!(cost.unpriced, vec!["mock-model".to_owned()]);
    let answer = info(&turn(&mut session, "/cost").await);
    assert!(
        answer.starts_with(
            "Cost: unknown (1 model request) — no price for `mock-model`; give one in settings as \"models\": {\"mock-model\": {\"price\""
        ),
        "{answer}"
    );
    let id = session.id().clone();
    drop(session);

    // A price in the user's settings prices the model from then on; what
    // was already unknown stays so.
    let settings = f.kernel.home().join("settings.json");
    std::fs::create_dir_all(f.kernel.home()).unwrap();
    std::fs::write(
        &settings,
        r#"{"models": {"mock-*": {"price": {"input": 1, "output": 2, "cache_write": 1, "cache_read": 0.1}}}}"#,
    )
    .unwrap();
    let mut resumed = f
        .kernel
        .open(OpenOptions {
            resume: Some(ResumeFrom::Id(id)),
            ..f.options.clone()
        })
        .await
        .unwrap();
    turn(&mut resumed, "again").await;
    let cost: SessionCost = resumed.cost();
    assert_eq!(cost.usd, None);
    assert_eq!(cost.requests, 2);
    // The request itself was priced: the mock reports 10 input and 5
    // output tokens.
    let id = resumed.id().clone();
    drop(resumed);
    let last = f
        .kernel
        .store()
        .records(&id)
        .unwrap()
        .into_iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .rfind(|r| r["type"] == "usage")
        .unwrap();
    assert_eq!(last["cost_usd"], json!((10.0 * 1.0 + 5.0 * 2.0) / 1e6));
    assert_eq!(last["total"]["usd"], json!(null));

    let fresh_options = f.options.clone();
    let mut fresh = f.kernel.open(fresh_options).await.unwrap();
    assert_eq!(fresh.cost(), SessionCost::default());
    let answer = info(&turn(&mut fresh, "/cost").await);
    assert_eq!(
        answer.lines().next(),
        Some("Cost: $0.0000 for 0 model requests.")
    );
    turn(&mut fresh, "hi").await;
    close(fresh.cost().usd, (10.0 * 1.0 + 5.0 * 2.0) / 1e6);
}

#[tokio::test]
async fn a_subagents_requests_are_the_sessions_side_requests() {
    let model = "claude-haiku-4-5";
    let f = fixture(
        Wire::Anthropic,
        "anthropic",
        model,
        vec![
            // The session asks an explore agent…
            Reply::ToolCall {
                id: "call_task".into(),
                name: "Task".into(),
                arguments: json!({"description": "look around", "prompt": "What is here?",
                    "subagent_type": "explore"})
                .to_string(),
                text: String::new(),
            },
            // …which answers at once, on the session's model…
            anthropic_reply(model, "Nothing yet.", 2_000, 0, 500, 40),
            // …and the session ends its turn.
            anthropic_reply(model, "Done.", 300, 1_000, 0, 20),
        ],
    )
    .await;
    let mut session = f.kernel.open(f.options.clone()).await.unwrap();
    turn(&mut session, "Explore").await;
    assert_eq!(f.server.requests().len(), 3);
    // Claude Haiku 4.5: $1 input, $5 output, $1.25 a cache write, $0.10 a
    // cache hit. The generated tool call reports 10 input, 5 output.
    let main = (10.0 * 1.0 + 5.0 * 5.0 + (300.0 * 1.0 + 20.0 * 5.0 + 1_000.0 * 0.10)) / 1e6;
    let side = (2_000.0 * 1.0 + 40.0 * 5.0 + 500.0 * 1.25) / 1e6;
    let cost = session.cost();
    close(cost.usd, main + side);
    assert_eq!(cost.requests, 3);
    assert_eq!(
        cost.side_usage,
        Usage {
            input_tokens: 2_000,
            output_tokens: 40,
            cache_read_tokens: 0,
            cache_write_tokens: 500,
            web_searches: 0,
        }
    );
    assert_eq!(cost.usage.input_tokens, 310);
}

#[tokio::test]
async fn auto_modes_classifier_requests_are_side_requests() {
    let model = "claude-haiku-4-5";
    let script = Script::new(
        Wire::Anthropic,
        vec![
            Reply::ToolCall {
                id: "call_bash".into(),
                name: "Bash".into(),
                arguments: json!({"command": "touch built.txt"}).to_string(),
                text: String::new(),
            },
            Reply::Text("Finished.".into()),
        ],
    )
    // The classifier's request is recognised by the call it carries.
    .when(
        "Bash: touch built.txt",
        Reply::Text(r#"{"decision": "allow", "reason": "asked for"}"#.into()),
    );
    let mut f = fixture_with(script, "anthropic", model).await;
    f.options.flags.permission_mode = Some(riot_protocol::PermissionMode::Auto);
    let mut session = f.kernel.open(f.options.clone()).await.unwrap();
    turn(&mut session, "Create the build marker").await;
    let requests = f.server.requests();
    assert_eq!(requests.len(), 3, "turn, classifier, turn");
    assert_eq!(requests[1].rule, Some(0), "the classifier's request");
    // Every generated reply reports 10 input and 5 output tokens; Claude
    // Haiku 4.5 costs $1 and $5 per million of them.
    let each = (10.0 * 1.0 + 5.0 * 5.0) / 1e6;
    let cost = session.cost();
    close(cost.usd, 3.0 * each);
    assert_eq!(cost.side_usage.input_tokens, 10);
    assert_eq!(cost.usage.input_tokens, 20);
    assert_eq!(session.side_usage(), cost.side_usage, "the same request");
}
