//! L3 golden replay (docs/testing.md): each directory under `tests/golden/`
//! holds `case.json` (with a required `description`), `responses/NNN.json`
//! (the scripted provider events of request NNN) and `expected.jsonl` (the
//! expected events, deltas excluded, transitions included).
//!
//! A mismatch prints an aligned one-line-per-event diff. `UPDATE_GOLDEN=1`
//! rewrites the expectations **and still fails**, so a person reviews the
//! diff before committing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report
#![allow(clippy::disallowed_methods)] // golden files are read and rewritten directly

mod support;

use std::path::{Path, PathBuf};

use riot_protocol::AgentEvent;
use serde_json::Value;
use support::{Case, assert_paired, run_case, script_item, summarize};

/// The cases docs/testing.md L3 requires at minimum.
const REQUIRED: &[&str] = &[
    "simple_text",
    "single_tool",
    "parallel_reads",
    "mixed_batch",
    "tool_error",
    "invalid_input",
    "edit_without_read",
    "permission_ask",
    "permission_deny",
    "interrupt_mid_tool",
    "queued_message",
    "multi_turn_10",
    "prompt_withdrawn",
    "partial_answer_kept",
    "max_turns",
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn load_case(dir: &Path) -> (Case, Vec<Vec<riot_core::testing::ScriptItem>>) {
    let case_text = std::fs::read_to_string(dir.join("case.json")).unwrap();
    let case: Case = serde_json::from_str(&case_text)
        .unwrap_or_else(|e| panic!("{}/case.json: {e}", dir.display()));
    assert!(
        !case.description.trim().is_empty(),
        "{}: description is required",
        dir.display()
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("responses"))
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    let responses = files
        .iter()
        .map(|f| {
            let items: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(f).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            items.iter().flat_map(script_item).collect()
        })
        .collect();
    (case, responses)
}

fn expected_lines(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter(|e| !matches!(e, AgentEvent::Delta { .. }))
        .map(|e| serde_json::to_string(e).unwrap())
        .collect()
}

fn aligned_diff(expected: &[AgentEvent], actual: &[AgentEvent]) -> String {
    let width = expected
        .iter()
        .map(|e| summarize(e).chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut out = format!("  {:<width$}   {}\n", "expected", "actual");
    for i in 0..expected.len().max(actual.len()) {
        let e = expected.get(i).map(summarize).unwrap_or_default();
        let a = actual.get(i).map(summarize).unwrap_or_default();
        let mark = if e == a && expected.get(i) == actual.get(i) {
            ' '
        } else {
            '!'
        };
        out.push_str(&format!("{mark} {e:<width$} │ {a}\n"));
    }
    out
}

#[tokio::test]
async fn golden_cases() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let names: Vec<String> = dirs
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for required in REQUIRED {
        assert!(
            names.iter().any(|n| n == required),
            "missing golden case {required}"
        );
    }

    let mut failures = Vec::new();
    let mut rewritten = Vec::new();
    for (dir, name) in dirs.iter().zip(&names) {
        let (case, responses) = load_case(dir);
        let run = run_case(&case, responses).await;
        // Whatever the case, the history stays paired and the transcript
        // replays to exactly the history (withdrawals included).
        assert_paired(&run.state.messages);
        assert_eq!(
            run.transcript.replay(),
            run.state.messages,
            "{name}: transcript replay"
        );
        let actual: Vec<AgentEvent> = run
            .events
            .into_iter()
            .filter(|e| !matches!(e, AgentEvent::Delta { .. }))
            .collect();
        let expected_path = dir.join("expected.jsonl");
        if update {
            let mut text = expected_lines(&actual).join("\n");
            text.push('\n');
            std::fs::write(&expected_path, text).unwrap();
            rewritten.push(name.clone());
            continue;
        }
        let expected: Vec<AgentEvent> = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run with UPDATE_GOLDEN=1)",
                    expected_path.display()
                )
            })
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
            .collect();
        if expected != actual {
            failures.push(format!(
                "── {name}: {}\n{}",
                case.description,
                aligned_diff(&expected, &actual)
            ));
        }
    }
    if update {
        panic!(
            "UPDATE_GOLDEN rewrote {} cases ({}); review `git diff crates/riot-core/tests/golden` and rerun without UPDATE_GOLDEN",
            rewritten.len(),
            rewritten.join(", ")
        );
    }
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}
