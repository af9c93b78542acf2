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
