//! `riot diagnostics [PATH…] [--json]` through the real binary
//! (docs/interfaces.md, docs/diagnostics.md): the checkers of the
//! `diagnostics` setting run in the project, the list goes to stdout
//! (errors first), the exit code says whether an error was found, and
//! paths narrow the list.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use serde_json::{Value, json};
use support::{World, run};

/// A world whose own settings name one checker: it prints two findings
/// the way many linters do, and a line no pattern should take.
fn world() -> World {
    let world = World::new();
    let settings = json!({"diagnostics": {"checks": [{
        "command": "echo \"ran in $(basename \"$PWD\")\" >&2; printf 'lib/b.c:7:2: warning: unused x\\nsrc/a.c:3: error E12: no semicolon\\n2 problems\\n'",
        "format": {"regex": "^(?P<file>[^:]+):(?P<line>\\d+):(?:(?P<col>\\d+):)? (?P<severity>error|warning)(?: (?P<code>E\\d+))?: (?P<message>.*)$"}
    }]}});
    std::fs::write(
        world.home.path().join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
    world
}

#[tokio::test]
async fn lists_the_findings_errors_first_and_exits_1_on_an_error() {
    let world = world();
    let out = run(world.bare(&["diagnostics"])).await;
    assert_eq!(
        out.stdout, "src/a.c:3: error[E12]: no semicolon\nlib/b.c:7:2: warning: unused x\n",
        "{out:?}"
    );
    assert_eq!(out.code, Some(1), "an error was found");
    assert!(
        out.stderr.contains("1 error, 1 warning from `echo"),
        "the summary on stderr: {}",
        out.stderr
    );
}

#[tokio::test]
async fn json_and_paths_narrow_the_list() {
    let world = world();
    let out = run(world.bare(&["diagnostics", "--json", "lib"])).await;
    assert_eq!(out.code, Some(0), "only a warning under lib/: {out:?}");
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        v["diagnostics"],
        json!([{
            "path": "lib/b.c",
            "line": 7,
            "column": 2,
            "severity": "warning",
            "message": "unused x",
            "source": "regex"
        }])
    );
    assert_eq!(v["total"], 1);
    assert_eq!(v["truncated"], false);
    assert_eq!(v["checkers"].as_array().unwrap().len(), 1);
}

/// A session's language server, through `riot exec`: the model writes a
/// file (the server hears didOpen and didSave), changes it with Bash (it
/// hears the new text and didSave again), and when the session ends the
/// server is asked to shut down and exits on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_server_hears_a_write_and_a_bash_change_and_is_shut_down() {
    use riot_testkit::{MockServer, Reply, Script, Wire};
    let world = World::new();
    let marker = world.home.path().join("server-saw");
    let settings = json!({"lsp": {
        "wait_ms": 10_000,
        "fake": {
            "command": ["python3", "-c", riot_testkit::lsp::RECORDING_SERVER, marker.to_str().unwrap()],
            "extensions": [".fake"]
        }
    }});
    std::fs::write(
        world.home.path().join("settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            support::tool_call(
                "call_write",
                "Write",
                json!({"file_path": "notes.fake", "content": "first draft\n"}),
            ),
            support::tool_call(
                "call_bash",
                "Bash",
                json!({"command": "printf 'second draft\\n' > notes.fake"}),
            ),
            Reply::Text("Both done.".into()),
        ],
    ))
    .await
    .unwrap();
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "write then rewrite"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("notes.fake")).unwrap(),
        "second draft\n"
    );
    let seen = std::fs::read_to_string(&marker)
        .expect("the server was asked to shut down and exit, and wrote what it saw");
    let documents: Vec<&str> = seen
        .lines()
        .filter(|l| l.starts_with("textDocument/") || *l == "shutdown" || *l == "exit")
        .collect();
    assert_eq!(
        documents,
        [
            r#"textDocument/didOpen "first draft\n""#,
            "textDocument/didSave",
            r#"textDocument/didChange "second draft\n""#,
            "textDocument/didSave",
            "textDocument/didClose",
            "shutdown",
            "exit",
        ],
        "{seen}"
    );
    server.shutdown().await;
}
