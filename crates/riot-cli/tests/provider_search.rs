//! The provider's own web search through `riot exec` and the strict mock
//! (docs/web.md): with no SearXNG or Brave configured, a model that has it
//! gets Anthropic's `web_search` server tool or the Responses API's
//! `web_search` declared; what it found reaches the output like
//! WebSearch's, each search is priced, and Anthropic's search blocks go
//! back to the model verbatim in later requests (also after a resume and a
//! paused turn). A configured service, a deny rule, a model or wire
//! without it, and a small window leave it out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::search::{self, Outcome};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run};

const PAGES: &[search::Found<'static>] = &[
    ("Riot, a coding agent", "https://riot.example/"),
    ("Getting started", "https://docs.riot.example/start"),
];

/// `riot exec` of `model` on `provider` against `server`, then `args`.
fn exec_model(
    world: &World,
    server: &MockServer,
    provider: &str,
    model: &str,
    args: &[&str],
) -> tokio::process::Command {
    let base = server.base_url();
    let mut all = vec![
        "exec",
        "--provider",
        provider,
        "--base-url",
        base.as_str(),
        "--model",
        model,
    ];
    all.extend_from_slice(args);
    let mut cmd = world.bare(&all);
    cmd.env("TEST_KEY", "test-key")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key");
    cmd
}

/// The server tools a request declared (entries of `tools` with a type
/// other than a function).
fn server_tools(body: &Value) -> Vec<Value> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t.get("type")
                .is_some_and(|k| k != "function" && k != "custom")
        })
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_web_search_is_declared_shown_priced_and_sent_back_verbatim() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            search::anthropic(
                "srvtoolu_1",
                "riot coding agent",
                Outcome::Found(PAGES),
                "Riot is a coding agent ([Riot](https://riot.example/)).",
            ),
            Reply::Text("You asked about Riot.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(exec_model(
        &world,
        &server,
        "anthropic",
        "claude-sonnet-4-5",
        &[
            "--output-format",
            "stream-json",
            "--verbose",
            "What is Riot?",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let first = &bodies(&server)[0];
    // Declared after every client tool, exactly as the API takes it.
    assert_eq!(
        first["tools"].as_array().unwrap().last().unwrap(),
        &json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
    );
    assert_eq!(server_tools(first).len(), 1);

    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The assistant message shows the search and its pages (never their
    // encrypted content), then the answer.
    let assistant = lines
        .iter()
        .find(|l| l["type"] == "assistant")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert_eq!(
        assistant["message"]["content"],
        json!([
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
             "input": {"query": "riot coding agent"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Riot, a coding agent", "url": "https://riot.example/"},
                {"type": "web_search_result", "title": "Getting started", "url": "https://docs.riot.example/start"}
            ]},
            {"type": "text", "text": "Riot is a coding agent ([Riot](https://riot.example/))."}
        ])
    );
    // One search at $10 per 1,000, on top of Sonnet 4.5's tokens (10
    // input at $3, 20 output at $15 per million).
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["usage"]["server_tool_use"]["web_search_requests"], 1);
    let cost = result["total_cost_usd"].as_f64().unwrap();
    let expected = 0.01 + (10.0 * 3.0 + 20.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");

    // The next prompt, in a new process: the search goes back as it came,
    // encrypted pages included, before the answer that cites it.
    let session = result["session_id"].as_str().unwrap().to_owned();
    let out = run(exec_model(
        &world,
        &server,
        "anthropic",
        "claude-sonnet-4-5",
        &["--resume", &session, "What did I ask?"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "You asked about Riot.\n");
    let second = &bodies(&server)[1];
    let reply = &second["messages"][1];
    assert_eq!(reply["role"], "assistant");
    let blocks = reply["content"].as_array().unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
               "input": {"query": "riot coding agent"}})
    );
    assert_eq!(blocks[1]["type"], "web_search_tool_result");
    assert_eq!(blocks[1]["tool_use_id"], "srvtoolu_1");
    assert_eq!(
        blocks[1]["content"][1],
        json!({"type": "web_search_result", "title": "Getting started",
               "url": "https://docs.riot.example/start",
               "encrypted_content": "ENCRYPTED-PAGE-1", "page_age": "2 days ago"})
    );
    assert_eq!(
        blocks[2]["text"],
        "Riot is a coding agent ([Riot](https://riot.example/))."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_search_is_shown_with_its_reason_and_the_turn_goes_on() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![search::anthropic(
            "srvtoolu_1",
            "riot",
            Outcome::Failed("too_many_requests"),
            "The search is busy; from memory, Riot is a coding agent.",
        )],
    ))
    .await
    .unwrap();
    let out = run(exec_model(
        &world,
        &server,
        "anthropic",
        "claude-haiku-4-5",
        &[
            "--output-format",
            "stream-json",
            "--verbose",
            "What is Riot?",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The search's result says why it failed, in words, with the API's code.
    let assistant = lines.iter().find(|l| l["type"] == "assistant").unwrap();
    assert_eq!(
        assistant["message"]["content"][1],
        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content":
            {"type": "web_search_tool_result_error",
             "error_code": "the search service is rate limited (too_many_requests)"}})
    );
    let result = lines.last().unwrap();
    assert_eq!(
        result["result"],
        "The search is busy; from memory, Riot is a coding agent."
    );
    // A failed search is still a search the provider bills.
    assert_eq!(result["usage"]["server_tool_use"]["web_search_requests"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_turn_goes_back_with_its_search_and_the_model_goes_on() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            search::anthropic_paused("srvtoolu_9", "long research"),
            search::anthropic_continued("srvtoolu_9", Outcome::Found(PAGES), "Done researching."),
            Reply::Text("Still here.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(exec_model(
        &world,
        &server,
        "anthropic",
        "claude-opus-4-5",
        &["Research it."],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done researching.\n");
    let requests = bodies(&server);
    assert_eq!(requests.len(), 2);
    // The paused reply is the last message, its search call as it came,
    // so the server goes on with it.
    let last = requests[1]["messages"].as_array().unwrap().last().unwrap();
    // (It carries the request's cache breakpoint, as a last message does.)
    assert_eq!(
        last,
        &json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search",
             "input": {"query": "long research"}, "cache_control": {"type": "ephemeral"}}
        ]})
    );

    // The next prompt: the paused reply and the one that went on, side by
    // side, so the API joins them into one turn whose search has its
    // result (the strict mock refuses a call without one).
    let session = std::fs::read_dir(world.home.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let out = run(exec_model(
        &world,
        &server,
        "anthropic",
        "claude-opus-4-5",
        &["--resume", &session, "Anything else?"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Still here.\n");
    let third = &bodies(&server)[2];
    let messages = third["messages"].as_array().unwrap();
    let kinds: Vec<(String, Vec<String>)> = messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                m["content"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|b| b["type"].as_str().unwrap().to_owned())
                            .collect()
                    })
                    .unwrap_or_else(|| vec!["text".to_owned()]),
            )
        })
        .collect();
    let owned = |role: &str, blocks: &[&str]| {
        (
            role.to_owned(),
            blocks.iter().map(|b| (*b).to_owned()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        kinds,
        vec![
            owned("user", &["text"]),
            owned("assistant", &["server_tool_use"]),
            owned("assistant", &["web_search_tool_result", "text"]),
            owned("user", &["text"]),
        ],
        "{third}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_responses_api_gets_its_web_search_and_no_search_item_is_sent_back() {
    let world = World::new();
    let server = MockServer::start(Script::new(
        Wire::OpenaiResponses,
        vec![
            search::responses(
                "ws_1",
                "riot coding agent",
                Outcome::Found(PAGES),
                "Riot is a coding agent.",
            ),
            Reply::Text("Still Riot.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(exec_model(
        &world,
        &server,
        "openai-responses",
        "gpt-5",
        &["--output-format", "json", "What is Riot?"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out.json();
    assert_eq!(result["result"], "Riot is a coding agent.");
    assert_eq!(result["usage"]["server_tool_use"]["web_search_requests"], 1);
    // gpt-5: 10 input at $1.25, 20 output at $10 per million, one search.
    let cost = result["total_cost_usd"].as_f64().unwrap();
    let expected = 0.01 + (10.0 * 1.25 + 20.0 * 10.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    let first = &bodies(&server)[0];
    assert_eq!(server_tools(first), vec![json!({"type": "web_search"})]);
    assert_eq!(
        first["include"],
        json!([
            "reasoning.encrypted_content",
            "web_search_call.action.sources"
        ])
    );
    assert_eq!(first["max_tool_calls"], 5);

    let session = result["session_id"].as_str().unwrap().to_owned();
    let out = run(exec_model(
        &world,
        &server,
        "openai-responses",
        "gpt-5",
        &["--resume", &session, "And now?"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let second = &bodies(&server)[1];
    let kinds: Vec<&str> = second["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(kinds, vec!["message", "message", "message"], "{second}");
}

/// The first request of `riot exec "hi"` with the person's `settings`.
async fn first_request(
    provider: &str,
    wire: Wire,
    model: &str,
    settings: Value,
    env: &[(&str, &str)],
) -> Value {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let server = MockServer::start(Script::new(wire, vec![Reply::Text("Hello.".into())]))
        .await
        .unwrap();
    let mut cmd = exec_model(&world, &server, provider, model, &["hi"]);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    bodies(&server).remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_service_a_deny_rule_a_model_or_wire_without_it_and_a_small_window_leave_it_out()
 {
    let web_search = json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5});
    let sonnet = "claude-sonnet-4-5";
    // Nothing configured: declared.
    let body = first_request("anthropic", Wire::Anthropic, sonnet, json!({}), &[]).await;
    assert_eq!(server_tools(&body), vec![web_search.clone()]);
    // `"native"` chooses it even with a Brave key set.
    let body = first_request(
        "anthropic",
        Wire::Anthropic,
        sonnet,
        json!({"web_search": {"provider": "native"}}),
        &[("BRAVE_API_KEY", "brave-key")],
    )
    .await;
    assert_eq!(server_tools(&body), vec![web_search.clone()]);
    // A settings override gives a model the table does not know the search.
    let body = first_request(
        "anthropic",
        Wire::Anthropic,
        "mock-model",
        json!({"models": {"mock-*": {"web_search": true}}}),
        &[],
    )
    .await;
    assert_eq!(server_tools(&body), vec![web_search.clone()]);
    // Left out: a search service of the person's own…
    for (settings, env) in [
        (json!({}), vec![("RIOT_SEARXNG_URL", "http://127.0.0.1:9/")]),
        (json!({}), vec![("BRAVE_API_KEY", "brave-key")]),
        // …a rule denying WebSearch…
        (json!({"permissions": {"deny": ["WebSearch"]}}), vec![]),
        // …a window of 16K or less…
        (json!({"context_window": 16_000}), vec![]),
    ] {
        let body =
            first_request("anthropic", Wire::Anthropic, sonnet, settings.clone(), &env).await;
        assert_eq!(
            server_tools(&body),
            Vec::<Value>::new(),
            "{settings} {env:?}"
        );
    }
    // …a model without it…
    for model in ["mock-model", "claude-3-haiku-20240307", "deepseek-chat"] {
        let body = first_request("anthropic", Wire::Anthropic, model, json!({}), &[]).await;
        assert_eq!(server_tools(&body), Vec::<Value>::new(), "{model}");
    }
    // …and Chat Completions, which has no server tools.
    let body = first_request("openai", Wire::Openai, "gpt-5", json!({}), &[]).await;
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["type"] == "function"),
        "{body}"
    );
}
