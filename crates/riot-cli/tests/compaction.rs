//! Issue 8 "Done when": a 40-turn scripted session through the real `riot`
//! binary with a small configured context window, against the strict mock
//! model server. The context fills with Read results until the loop
//! compacts: the summary request is answered by a `when` rule of the
//! script (the script cannot know at which turn it comes), every request
//! is accepted, the request after the summary carries the summary and the
//! re-read working set, the final answer arrives, and the transcript marks
//! the boundary so `--resume` loads the compacted history.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // where the compactions happened, for the record

mod support;

use riot_testkit::{MockServer, RecordedRequest, Reply, Script, UsageRule, Wire};
use serde_json::{Value, json};
use support::{World, assert_paired, run};

/// Model turns of the session: 39 Reads, then the answer.
const TURNS: usize = 40;
/// Project files the model reads in turn.
const FILES: usize = 12;
/// The start of the summary request's last user message (compaction.rs).
const SUMMARY_ASK: &str = "Stop working on the task for a moment";
/// What the scripted model puts in its summary.
const SUMMARY: &str = "1. Intent: read every module of the project and report what each does.";
const CONTINUES: &str = "This session continues from an earlier conversation";
const RE_READ: &str = "(re-read after compaction)";
const ANSWER: &str = "All modules read: each one defines numbered helper functions.";
/// A window small enough that a few Reads pass the threshold, yet larger
/// than a small window (so the summary request shares the session's
/// prefix): 24_000 − min(4_000, a quarter) − min(13k, an eighth: 3_000) =
/// 17_000 estimated tokens — room for the tool declarations (about 6k
/// tokens) and more Reads than the working set re-reads after a summary.
const SETTINGS: &str = r#"{"context_window": 24000, "max_output_tokens": 4000}"#;

fn file_name(i: usize) -> String {
    format!("src/module_{i:02}.rs")
}

/// About 3 KB of Rust per file, different in every file.
fn file_body(i: usize) -> String {
    (0..60)
        .map(|l| format!("pub fn module_{i:02}_helper_{l:02}(x: u64) -> u64 {{ x + {l} }}\n"))
        .collect()
}

fn read_call(turn: usize) -> Reply {
    Reply::ToolCall {
        id: format!("toolu_{turn:03}"),
        name: "Read".into(),
        arguments: json!({"file_path": file_name(turn % FILES)}).to_string(),
        text: String::new(),
    }
}

fn script() -> Script {
    let mut replies: Vec<Reply> = (0..TURNS - 1).map(read_call).collect();
    replies.push(Reply::Text(ANSWER.into()));
    Script::new(Wire::Anthropic, replies)
        .usage(UsageRule::RequestSize)
        .when(
            SUMMARY_ASK,
            Reply::Text(format!(
                "<analysis>Read modules in order.</analysis>\n<summary>\n{SUMMARY}\n</summary>"
            )),
        )
}

fn project(world: &World) {
    std::fs::create_dir_all(world.project.path().join("src")).unwrap();
    for i in 0..FILES {
        std::fs::write(world.project.path().join(file_name(i)), file_body(i)).unwrap();
    }
}

fn settings(world: &World, text: &str) {
    std::fs::write(world.home.path().join("settings.json"), text).unwrap();
}

fn exec(world: &World, server: &MockServer, extra: &[&str]) -> tokio::process::Command {
    let cwd = world.project.path().to_str().unwrap().to_owned();
    let base = server.base_url();
    let mut args = vec![
        "exec",
        "--cwd",
        cwd.as_str(),
        "--provider",
        "anthropic",
        "--base-url",
        base.as_str(),
        "--model",
        "claude-test",
        "--output-format",
        "events",
    ];
    args.extend_from_slice(extra);
    world.bare(&args)
}

/// Every text of a request's last message, joined.
fn last_user_text(request: &RecordedRequest) -> String {
    let last = request.body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    texts(last).join("\n")
}

/// The text blocks of a message.
fn texts(message: &Value) -> Vec<String> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap().to_owned())
        .collect()
}

/// `value` without any `cache_control` key, at any depth.
fn without_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_markers(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_markers).collect()),
        other => other.clone(),
    }
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

const PROMPT: &str = "Read every module under src/ one by one and report.";

/// The 40-turn session in a small window: the world, the mock (still
/// running) and what `riot` printed.
async fn small_window_session() -> (World, MockServer, support::Run) {
    let world = World::new();
    project(&world);
    settings(&world, SETTINGS);
    let server = MockServer::start(script()).await.unwrap();
    let out = run(exec(&world, &server, &[PROMPT])).await;
    (world, server, out)
}

/// Indices of the requests the `when` rule answered: the summary requests.
fn summary_requests(requests: &[RecordedRequest]) -> Vec<usize> {
    requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.rule == Some(0))
        .map(|(i, _)| i)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forty_turn_session_compacts_in_a_small_window_and_finishes() {
    let (world, server, out) = small_window_session().await;
    let requests = server.requests();

    // Every request was accepted by the strict mock and kept pairing.
    let statuses: Vec<u16> = requests.iter().map(|r| r.status).collect();
    assert!(
        statuses.iter().all(|&s| s == 200),
        "rejected: {:?}\n{out:?}",
        requests
            .iter()
            .filter(|r| r.status != 200)
            .map(|r| (r.status, last_user_text(r)))
            .collect::<Vec<_>>()
    );
    for r in &requests {
        assert_paired(r.body["messages"].as_array().unwrap());
    }
    assert_eq!(server.remaining(), 0, "all 40 scripted turns were used");

    // The final answer arrives.
    assert_eq!(out.code, Some(0), "{out:?}");
    let events = lines(&out.stdout);
    let result = events.last().unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["reason"], "completed");
    assert_eq!(result["result"], ANSWER);
    assert_eq!(
        result["num_turns"],
        json!(TURNS),
        "one RequestStart per model turn"
    );

    // At least one summary compaction, each announced and each asked of
    // the model by the summary request.
    let compacted: Vec<&Value> = events.iter().filter(|e| e["type"] == "compacted").collect();
    let summary_requests = summary_requests(&requests);
    assert!(!compacted.is_empty(), "no compaction happened");
    assert_eq!(compacted.len(), summary_requests.len(), "{compacted:?}");
    assert_eq!(requests.len(), TURNS + summary_requests.len());
    for c in &compacted {
        assert_eq!(c["strategy"], "summary", "{c}");
        assert!(
            c["after"].as_u64().unwrap() < c["before"].as_u64().unwrap(),
            "{c}"
        );
    }
    eprintln!(
        "{} compactions; summary requests at request indices {:?} of {}; estimated tokens before → after: {:?}",
        compacted.len(),
        summary_requests,
        requests.len(),
        compacted
            .iter()
            .map(|c| format!("{} → {}", c["before"], c["after"]))
            .collect::<Vec<_>>()
    );

    for &s in &summary_requests {
        let ask = &requests[s];
        let text = last_user_text(ask);
        assert!(text.starts_with(SUMMARY_ASK), "{text}");
        assert!(text.contains("Do not call any tools"), "{text}");
        // Same tools and system as the normal request before it, and its
        // messages as a prefix: the summary request reads from the cache.
        let before = &requests[s - 1].body;
        assert_eq!(ask.body["tools"], before["tools"]);
        assert_eq!(ask.body["system"], before["system"]);
        let asked = without_markers(&ask.body["messages"]);
        let earlier = without_markers(&before["messages"]);
        let earlier = earlier.as_array().unwrap();
        assert_eq!(
            &asked.as_array().unwrap()[..earlier.len()],
            &earlier[..],
            "summary request {s} does not extend the request before it"
        );

        // The request right after it is the compacted history: one user
        // message with the summary and the re-read working set.
        let next = &requests[s + 1];
        assert_eq!(next.rule, None);
        let messages = next.body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "{messages:#?}");
        let blocks = texts(&messages[0]);
        assert!(blocks[0].starts_with(CONTINUES), "{}", blocks[0]);
        assert!(blocks[0].contains(SUMMARY), "{}", blocks[0]);
        if s == summary_requests[0] {
            assert!(
                blocks.iter().any(|b| b.contains(PROMPT)),
                "the person's words are kept verbatim: {blocks:?}"
            );
        }
        let attachments: Vec<&String> = blocks.iter().filter(|b| b.contains(RE_READ)).collect();
        assert!(!attachments.is_empty(), "no working set: {blocks:#?}");
        for a in attachments {
            let i = (0..FILES)
                .find(|&i| a.contains(&format!("{} {RE_READ}", file_name(i))))
                .unwrap_or_else(|| panic!("no project file path in {a}"));
            assert!(
                a.contains(&format!(
                    "     1\tpub fn module_{i:02}_helper_00(x: u64) -> u64 {{ x + 0 }}"
                )),
                "the file's current content, numbered: {a}"
            );
        }
    }

    // Summary requests, and only they, are side usage: the mock reports
    // a request's bytes / 4 as its input tokens and 5 output tokens.
    let side = &result["side_usage"];
    let summary_input: usize = summary_requests
        .iter()
        .map(|&s| requests[s].body.to_string().len().div_ceil(4))
        .sum();
    assert_eq!(side["input_tokens"], json!(summary_input), "{result}");
    assert_eq!(
        side["output_tokens"],
        json!(5 * summary_requests.len()),
        "{result}"
    );
    let turn_input: usize = requests
        .iter()
        .filter(|r| r.rule.is_none())
        .map(|r| r.body.to_string().len().div_ceil(4))
        .sum();
    assert_eq!(result["usage"]["input_tokens"], json!(turn_input));

    // The transcript marks each boundary with the compacted history.
    let session = result["session_id"].as_str().unwrap().to_owned();
    let records: Vec<Value> = std::fs::read_to_string(world.transcript(&session))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let boundaries: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "compacted")
        .collect();
    assert_eq!(boundaries.len(), compacted.len());
    let last_boundary = boundaries.last().unwrap();
    assert_eq!(last_boundary["strategy"], "summary");
    assert_eq!(last_boundary["messages"].as_array().unwrap().len(), 1);
    assert_eq!(last_boundary["messages"][0]["origin"], "summary");

    // Resumed (in a large window, so nothing compacts again), the first
    // request starts at the last summary, not at the whole past.
    let last_summary = requests[summary_requests.last().unwrap() + 1].body["messages"][0].clone();
    settings(&world, r#"{"context_window": 1000000}"#);
    let resumed = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("Resumed.".into())],
    ))
    .await
    .unwrap();
    let again = run(exec(
        &world,
        &resumed,
        &["--resume", &session, "Anything left?"],
    ))
    .await;
    assert_eq!(again.code, Some(0), "{again:?}");
    // Side usage is this process's: the resumed run made no side request,
    // though the session's cost goes on from the summaries before it.
    let result: Value = serde_json::from_str(again.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(result["type"], "result", "{result}");
    assert_eq!(result["side_usage"]["input_tokens"], 0, "{result}");
    assert_eq!(result["side_usage"]["output_tokens"], 0, "{result}");
    let first = &resumed.requests()[0];
    assert_eq!(first.status, 200);
    let messages = first.body["messages"].as_array().unwrap();
    assert_eq!(texts(&messages[0]), texts(&last_summary));
    let since = TURNS + summary_requests.len() - (summary_requests.last().unwrap() + 1);
    assert_eq!(
        messages.len(),
        // the summary, then per later request its reply and (but for the
        // last) its results, then the new prompt
        2 * since + 1,
        "{:#?}",
        support::conversation(messages)
    );
    assert_eq!(
        texts(messages.last().unwrap()).last().unwrap(),
        "Anything left?"
    );
    resumed.shutdown().await;
    server.shutdown().await;
}

/// The person's messages are kept verbatim by Riot itself through every
/// compaction, not only the first: after one compaction the prompt lives
/// only inside the summary message, and the next summary must carry it on
/// (this test found that it once did not).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_summary_keeps_the_persons_words_verbatim() {
    let (_world, server, out) = small_window_session().await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    let summaries = summary_requests(&requests);
    assert!(summaries.len() >= 2, "needs two compactions: {summaries:?}");
    for s in summaries {
        let first = &requests[s + 1].body["messages"][0];
        let text = texts(first).join("\n");
        assert!(
            text.contains(PROMPT),
            "after summary request {s}, the prompt is gone: {text}"
        );
    }
    server.shutdown().await;
}
