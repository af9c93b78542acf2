//! Black-box tests of MCP through the `riot` binary (docs/design.md §6.7,
//! §13): `riot mcp add|list|remove` on the user file, and a `riot exec`
//! session whose model calls a real MCP server's tool (the npm
//! server-everything installed by `.ci/run` into `tests/mcp-servers`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use std::path::Path;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, everything_server, processes_with, run, tool_call, wait_until};

/// Configures server-everything for the user, with `allow` as the only
/// allow rules.
fn configure_everything(world: &World, js: &Path, allow: &[&str]) {
    std::fs::write(
        world.home.path().join("mcp.json"),
        json!({"mcpServers": {"everything": {"command": "node",
            "args": [js.to_str().unwrap(), "stdio"]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"permissions": {"allow": allow}}).to_string(),
    )
    .unwrap();
}

fn user_file(world: &World) -> Value {
    serde_json::from_slice(&std::fs::read(world.home.path().join("mcp.json")).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_list_and_remove_manage_the_user_file_and_report_each_servers_status() {
    let Some(everything) = everything_server("add_list_and_remove") else {
        return;
    };
    let world = World::new();
    let js = everything.to_str().unwrap();
    let marker = format!("riot-mcp-list-{}", std::process::id());

    let added = run(world.bare(&["mcp", "add", "everything", "node", js, "stdio"])).await;
    assert_eq!(added.code, Some(0), "{added:?}");
    assert!(
        added
            .stdout
            .contains("Added MCP server `everything` (stdio)"),
        "{}",
        added.stdout
    );
    let silent = format!("cat > /dev/null # {marker}");
    let added = run(world.bare(&[
        "mcp",
        "add",
        "-e",
        "LEVEL=debug",
        "silent",
        "--",
        "sh",
        "-c",
        &silent,
    ]))
    .await;
    assert_eq!(added.code, Some(0), "{added:?}");
    let added = run(world.bare(&[
        "mcp",
        "add",
        "-H",
        "Authorization: Bearer t0ken",
        "remote",
        "http://127.0.0.1:9/mcp",
    ]))
    .await;
    assert_eq!(added.code, Some(0), "{added:?}");
    assert_eq!(
        user_file(&world),
        json!({"mcpServers": {
            "everything": {"command": "node", "args": [js, "stdio"]},
            "silent": {"command": "sh", "args": ["-c", silent], "env": {"LEVEL": "debug"}},
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                       "headers": {"Authorization": "Bearer t0ken"}}
        }})
    );

    let again = run(world.bare(&["mcp", "add", "everything", "node", js])).await;
    assert_eq!(again.code, Some(2), "{again:?}");
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    let bad = run(world.bare(&["mcp", "add", "-e", "NOEQUALS", "x", "true"])).await;
    assert_eq!(bad.code, Some(2), "{bad:?}");
    assert!(
        bad.stderr.contains("`NOEQUALS` is not KEY=VALUE"),
        "{}",
        bad.stderr
    );

    let mut list = world.bare(&["mcp", "list", "--json"]);
    // Long enough for Node to start the ready server on a loaded
    // machine; the silent one fails when it runs out.
    list.env("RIOT_MCP_STARTUP_TIMEOUT_MS", "10000");
    let listed = run(list).await;
    assert_eq!(listed.code, Some(0), "{listed:?}");
    let rows: Vec<Value> = serde_json::from_str(&listed.stdout).unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    let ready = row("everything");
    assert_eq!(ready["status"], "ready", "{ready}");
    assert!(ready["tools"].as_u64().unwrap() >= 5, "{ready}");
    assert_eq!(ready["scope"], "user");
    let silent_row = row("silent");
    assert_eq!(silent_row["status"], "failed");
    assert!(
        silent_row["reason"]
            .as_str()
            .unwrap()
            .contains("did not answer `initialize` within 10 s (the startup timeout)"),
        "{silent_row}"
    );
    let remote = row("remote");
    assert_eq!(remote["status"], "failed");
    assert!(
        remote["reason"]
            .as_str()
            .unwrap()
            .contains("http://127.0.0.1:9/mcp"),
        "the reason names the unreachable server: {remote}"
    );
    // `list` stops every server it started.
    wait_until("the silent server to be gone", || {
        processes_with(&marker).is_empty()
    })
    .await;

    let removed = run(world.bare(&["mcp", "remove", "silent"])).await;
    assert_eq!(removed.code, Some(0), "{removed:?}");
    let missing = run(world.bare(&["mcp", "remove", "silent"])).await;
    assert_eq!(missing.code, Some(2), "{missing:?}");
    assert!(
        missing.stderr.contains("no MCP server `silent`"),
        "{}",
        missing.stderr
    );
    let file = user_file(&world);
    let names: Vec<&String> = file["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["everything", "remote"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_calls_an_mcp_tool_and_its_result_reaches_the_next_request() {
    let Some(everything) = everything_server("exec_calls_an_mcp_tool") else {
        return;
    };
    let world = World::new();
    configure_everything(&world, &everything, &["mcp__everything__echo"]);
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_echo_1",
                "mcp__everything__echo",
                json!({"message": "hello from riot"}),
            ),
            Reply::Text("Echoed.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["Echo something"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Echoed.");

    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    // The call waited for the server instead of failing as unknown, and the
    // next request offers the server's tools after the session's own.
    let names: Vec<&str> = bodies[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let first_mcp = names.iter().position(|n| n.starts_with("mcp__")).unwrap();
    assert_eq!(names[first_mcp - 1], "ToolSearch", "{names:?}");
    assert!(names.contains(&"mcp__everything__echo"), "{names:?}");
    let mcp: Vec<&&str> = names[first_mcp..].iter().collect();
    let mut sorted = mcp.clone();
    sorted.sort();
    assert_eq!(mcp, sorted, "MCP tools are sorted");
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "call_echo_1");
    assert!(
        result.get("is_error").is_none_or(|e| e == false),
        "{result}"
    );
    assert_eq!(result["content"][0]["text"], "Echo: hello from riot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_does_not_hold_up_the_session_and_is_stopped_with_it() {
    let world = World::new();
    let marker = format!("riot-mcp-silent-{}", std::process::id());
    std::fs::write(
        world.home.path().join("mcp.json"),
        json!({"mcpServers": {"silent": {"command": "sh",
            "args": ["-c", format!("cat > /dev/null # {marker}")]}}})
        .to_string(),
    )
    .unwrap();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![Reply::Text("Hello.".into())],
    ))
    .await
    .unwrap();
    // Ten minutes to answer `initialize`: a session that waited for it
    // would not end in this test's lifetime.
    let mut exec = world.exec(&server, Wire::Anthropic, &["Say hello"]);
    exec.env("RIOT_MCP_STARTUP_TIMEOUT_MS", "600000");
    let out = run(exec).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Hello.");
    let tools = bodies(&server)[0]["tools"].to_string();
    assert!(!tools.contains("mcp__silent"), "{tools}");
    wait_until("the silent server to be gone", || {
        processes_with(&marker).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_tool_lists_are_deferred_behind_tool_search_and_loaded_on_demand() {
    let Some(everything) = everything_server("large_tool_lists_are_deferred") else {
        return;
    };
    let world = World::new();
    configure_everything(&world, &everything, &["mcp__everything__echo"]);
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_search_1",
                "ToolSearch",
                json!({"query": "select:mcp__everything__echo"}),
            ),
            tool_call(
                "call_echo_1",
                "mcp__everything__echo",
                json!({"message": "deferred hello"}),
            ),
            Reply::Text("Done.".into()),
        ],
    ))
    .await
    .unwrap();
    // server-everything declares about 4,600 characters; a tenth of a
    // real window is more, so lower the mark.
    let mut exec = world.exec(&server, Wire::Anthropic, &["Echo"]);
    exec.env("RIOT_TOOL_SEARCH_CHARS", "1000");
    let out = run(exec).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 3);
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // After the search: ToolSearch, then only the loaded tool.
    let offered = names(&bodies[1]);
    let tail: Vec<&str> = offered[offered.len() - 2..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(tail, ["ToolSearch", "mcp__everything__echo"], "{offered:?}");
    assert_eq!(
        offered.iter().filter(|n| n.starts_with("mcp__")).count(),
        1,
        "{offered:?}"
    );
    let search = bodies[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ToolSearch")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        search.contains("mcp__everything__get-sum") || search.contains("mcp__everything__add"),
        "{search}"
    );
    let found = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(found["tool_use_id"], "call_search_1");
    assert!(
        found["content"]
            .to_string()
            .contains("## mcp__everything__echo"),
        "{found}"
    );
    assert!(
        found["content"].to_string().contains("Input schema"),
        "{found}"
    );
    // The cached prefix holds: the third request offers the same list.
    assert_eq!(names(&bodies[2]), offered);
    let echoed = &bodies[2]["messages"][4]["content"][0];
    assert_eq!(echoed["tool_use_id"], "call_echo_1");
    assert_eq!(echoed["content"][0]["text"], "Echo: deferred hello");
}
