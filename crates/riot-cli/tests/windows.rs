//! Riot in every window (docs/windows.md), through the real `riot exec`
//! and the strict mock, which enforces the model's window as a server
//! does (input, as body bytes / 4, plus `max_tokens`):
//!
//! - the default window's first request stays within 25 KB;
//! - an 8K window's first request within 8 KB, with a ToolSearch for
//!   `select:Terminal` making Terminal declared and usable the next turn;
//! - 40-turn sessions of Reads in an 8K and a 16K window finish, no request
//!   over the window, compacting at least once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // where the compactions happened, for the record

mod support;

use riot_testkit::{MockServer, RecordedRequest, Reply, Script, UsageRule, Wire};
use serde_json::{Value, json};
use support::{World, assert_paired, bodies, run, tool_call, tool_result};

/// The start of a summary request's instructions (riot-core compaction).
const SUMMARY_ASK: &str = "Stop working on the task for a moment";
const ANSWER: &str = "done";

fn settings(world: &World, window: u64) {
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({ "context_window": window }).to_string(),
    )
    .unwrap();
}

fn request_bytes(r: &RecordedRequest) -> usize {
    r.body.to_string().len()
}

fn declared(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_windows_first_request_is_at_most_25_kb() {
    let world = World::new();
    let server = MockServer::start(Script::new(Wire::Anthropic, vec![Reply::Text("ok".into())]))
        .await
        .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["hello"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let first = &server.requests()[0];
    let bytes = request_bytes(first);
    eprintln!("first request: {bytes} bytes");
    assert!(bytes <= 25 * 1024, "{bytes} bytes");
    // The rarely used tools wait behind ToolSearch; the everyday ones are
    // declared.
    let names = declared(&first.body);
    for tool in [
        "Read",
        "Edit",
        "Write",
        "Bash",
        "Grep",
        "Glob",
        "ToolSearch",
    ] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
    for tool in ["Terminal", "NotebookEdit", "BashOutput", "KillShell"] {
        assert!(!names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_8k_window_starts_within_8_kb_and_a_search_makes_terminal_usable() {
    let world = World::new();
    settings(&world, 8192);
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "toolu_search",
                "ToolSearch",
                json!({"query": "select:Terminal"}),
            ),
            tool_call(
                "toolu_term",
                "Terminal",
                json!({"action": "open", "name": "probe", "command": "echo riot-terminal-ok"}),
            ),
            Reply::Text(ANSWER.into()),
        ],
    )
    .usage(UsageRule::RequestSize)
    .context_window(8192);
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "start a terminal"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.status == 200), "{requests:#?}");
    let first = request_bytes(&requests[0]);
    eprintln!("first request in an 8K window: {first} bytes");
    assert!(first <= 8192, "{first} bytes");
    assert_eq!(
        declared(&requests[0].body),
        [
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "Bash",
            "ToolSearch"
        ]
    );
    // ToolSearch named Terminal and listed the others it holds.
    let search_tool = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ToolSearch")
        .unwrap();
    let description = search_tool["description"].as_str().unwrap();
    assert!(description.contains("Terminal"), "{description}");

    let bodies = bodies(&server);
    let found = tool_result(&bodies[1], "toolu_search").to_string();
    assert!(found.contains("1 tool loaded"), "{found}");
    assert!(
        declared(&bodies[1]).iter().any(|n| n == "Terminal"),
        "declared after the search: {:?}",
        declared(&bodies[1])
    );
    let opened = tool_result(&bodies[2], "toolu_term");
    assert_ne!(opened["is_error"], json!(true), "{opened}");
    assert!(opened.to_string().contains("probe"), "{opened}");
}

/// About 2 KB of text per file, different in every file.
fn file_body(i: usize) -> String {
    (0..44)
        .map(|l| format!("line {l:02} of file {i:02}: some words to fill it up.\n"))
        .collect()
}

/// 39 Reads of 2 KB files, then the answer, in a window of `window`.
async fn forty_reads(window: u64) {
    const TURNS: usize = 40;
    const FILES: usize = 12;
    let world = World::new();
    settings(&world, window);
    std::fs::create_dir_all(world.project.path().join("src")).unwrap();
    for i in 0..FILES {
        let body = file_body(i);
        assert!((1900..2200).contains(&body.len()));
        std::fs::write(world.project.path().join(format!("src/f{i:02}.txt")), body).unwrap();
    }
    let mut replies: Vec<Reply> = (0..TURNS - 1)
        .map(|t| {
            tool_call(
                &format!("toolu_{t:03}"),
                "Read",
                json!({"file_path": format!("src/f{:02}.txt", t % FILES)}),
            )
        })
        .collect();
    replies.push(Reply::Text(ANSWER.into()));
    let script = Script::new(Wire::Anthropic, replies)
        .usage(UsageRule::RequestSize)
        .context_window(window)
        .when(
            SUMMARY_ASK,
            Reply::Text("<summary>1. Intent: read every file under src/.</summary>".into()),
        );
    let server = MockServer::start(script).await.unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--output-format",
            "json",
            "Read every file under src/ in turn.",
        ],
    ))
    .await;
    let requests = server.requests();
    let over: Vec<(usize, u16, usize)> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.status != 200)
        .map(|(i, r)| (i, r.status, request_bytes(r)))
        .collect();
    assert!(over.is_empty(), "refused: {over:?}\n{out:?}");
    for r in &requests {
        assert_paired(r.body["messages"].as_array().unwrap());
        let tokens = (request_bytes(r) as u64).div_ceil(4);
        let output = r.body["max_tokens"].as_u64().unwrap();
        assert!(tokens + output <= window, "{tokens} + {output} > {window}");
    }
    let summaries = requests.iter().filter(|r| r.rule == Some(0)).count();
    eprintln!(
        "{window}-token window: {} requests, {summaries} compactions, largest {} bytes",
        requests.len(),
        requests.iter().map(request_bytes).max().unwrap_or(0)
    );
    assert!(
        summaries >= 1,
        "no compaction in {} requests",
        requests.len()
    );
    for r in requests.iter().filter(|r| r.rule == Some(0)) {
        assert!(
            r.body
                .get("tools")
                .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
            "the summariser gets no declarations"
        );
    }
    assert_eq!(server.remaining(), 0, "all 40 scripted turns were used");
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], ANSWER, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_reads_in_an_8k_window_compact_and_finish() {
    forty_reads(8192).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_reads_in_a_16k_window_compact_and_finish() {
    forty_reads(16_384).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_gives_each_declaration_its_bytes_for_the_window() {
    let world = World::new();
    settings(&world, 8192);
    let out = run(world.bare(&["tools", "list", "--json", "--model", "mock-model"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let listed: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "Bash",
            "ToolSearch"
        ]
    );
    for tool in &listed {
        let sent = json!({
            "name": tool["name"],
            "description": tool["description"],
            "input_schema": tool["input_schema"],
        });
        assert_eq!(
            tool["bytes"].as_u64().unwrap(),
            sent.to_string().len() as u64,
            "{}",
            tool["name"]
        );
    }
    let total: u64 = listed.iter().map(|t| t["bytes"].as_u64().unwrap()).sum();
    assert!(total < 6 * 1024, "{total} bytes declared in an 8K window");

    // The text form ends with the total, the window and what is held back.
    let text = run(world.bare(&["tools", "list", "--model", "mock-model"])).await;
    let last = text.stdout.lines().last().unwrap();
    assert!(
        last.starts_with(&format!("7 tools declared in {total} bytes for mock-model (window: 8192 tokens); through ToolSearch: ")),
        "{last}"
    );
    assert!(last.contains("Terminal") && last.contains("Task"), "{last}");
}
