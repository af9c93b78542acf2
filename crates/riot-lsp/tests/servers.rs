//! riot-lsp against a real language server (pyright-langserver from
//! `tests/lsp`, installed by .ci/run) and against stand-in servers that
//! crash or never answer. Every test checks by process group that nothing
//! it started outlives it.

#![allow(clippy::disallowed_methods)] // tests write files, read /proc and poll with real sleeps
#![allow(clippy::unwrap_used)] // helpers of the tests: a failure there is the test failing

use std::path::{Path, PathBuf};
use std::time::Duration;

use riot_lsp::LspSession;
use riot_protocol::{EditDiagnostics, LanguageServers, LspSettings, Severity};
use serde_json::json;

/// The repository's pyright-langserver.
fn pyright_langserver() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp/node_modules/.bin/pyright-langserver");
    assert!(
        bin.exists(),
        "pyright is not installed: run `npm ci --prefix tests/lsp` (as .ci/run does)"
    );
    bin
}

/// Live (not zombie) members of process group `pgid`.
fn members(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let mut rest = stat.rsplit_once(')').unwrap().1.split_whitespace();
        let state = rest.next();
        if rest.nth(1).and_then(|g| g.parse().ok()) == Some(pgid) && state != Some("Z") {
            found.push(pid);
        }
    }
    found
}

async fn gone(pgid: u32) -> bool {
    for _ in 0..400 {
        if members(pgid).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn session(root: &Path, settings: serde_json::Value) -> LspSession {
    let settings = LspSettings::parse_setting(&settings).unwrap();
    LspSession::new(root, &settings, Vec::new(), Vec::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_reports_an_error_an_edit_makes_and_none_once_it_is_fixed() {
    let (_dir, root) = project();
    std::fs::write(root.join("pyrightconfig.json"), "{}\n").unwrap();
    let file = root.join("calc.py");
    std::fs::write(&file, "def double(n: int) -> int:\n    return n * 2\n").unwrap();
    // Generous: pyright's first analysis on a slow machine; a test that
    // passes never waits this long.
    let lsp = session(
        &root,
        json!({
            "wait_ms": 120_000,
            "python": {"command": [pyright_langserver().display().to_string(), "--stdio"], "extensions": [".py"]},
            "rust": false, "typescript": false, "go": false,
        }),
    );

    let clean = lsp.after_edit(&file).await;
    assert_eq!(
        clean,
        EditDiagnostics::Reported {
            server: "pyright-langserver".into(),
            diagnostics: vec![]
        }
    );
    let pids = lsp.pids().await;
    assert_eq!(pids.len(), 1, "one server, started by the first edit");

    std::fs::write(
        &file,
        "def double(n: int) -> int:\n    return n * 2\n\nprint(double(tripple))\n",
    )
    .unwrap();
    let EditDiagnostics::Reported { diagnostics, .. } = lsp.after_edit(&file).await else {
        panic!("pyright answered the first edit, so it answers this one");
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let d = &diagnostics[0];
    assert_eq!(
        (
            d.path.as_str(),
            d.line,
            d.column,
            d.severity,
            d.code.as_deref()
        ),
        (
            "calc.py",
            4,
            14,
            Severity::Error,
            Some("reportUndefinedVariable")
        )
    );
    assert_eq!(d.message, "\"tripple\" is not defined");

    std::fs::write(
        &file,
        "def double(n: int) -> int:\n    return n * 2\n\nprint(double(3))\n",
    )
    .unwrap();
    let EditDiagnostics::Reported { diagnostics, .. } = lsp.after_edit(&file).await else {
        panic!("no answer to the fixing edit");
    };
    assert_eq!(diagnostics, vec![], "the fix leaves nothing");
    assert_eq!(lsp.pids().await, pids, "the same server all along");

    lsp.shutdown().await;
    assert!(
        gone(pids[0]).await,
        "the server's group outlived the session"
    );
    assert_eq!(lsp.after_edit(&file).await, EditDiagnostics::NoServer);
}

#[tokio::test]
async fn a_server_that_never_answers_costs_at_most_the_wait_and_dies_with_the_session() {
    let (_dir, root) = project();
    let file = root.join("a.fake");
    std::fs::write(&file, "anything\n").unwrap();
    let lsp = session(
        &root,
        json!({
            "wait_ms": 200,
            "fake": {"command": ["sh", "-c", "sleep 600 & exec sleep 600"], "extensions": [".fake"]},
        }),
    );
    let answer = lsp.after_edit(&file).await;
    assert_eq!(
        answer,
        EditDiagnostics::NoAnswer {
            server: "sh".into(),
            detail: "it did not report diagnostics within 200 ms".into()
        }
    );
    let pids = lsp.pids().await;
    assert_eq!(pids.len(), 1);
    assert!(!members(pids[0]).is_empty(), "still running, just silent");
    drop(lsp);
    assert!(
        gone(pids[0]).await,
        "dropping the session kills the server's group"
    );
}

#[tokio::test]
async fn a_crashing_server_never_fails_the_edit_and_waits_before_restarting() {
    let (_dir, root) = project();
    let file = root.join("a.fake");
    std::fs::write(&file, "anything\n").unwrap();
    let lsp = session(
        &root,
        json!({
            "wait_ms": 60_000,
            "fake": {"command": ["sh", "-c", "echo 'fake server: out of cheese' >&2; sleep 0.2; exit 3"], "extensions": [".fake"]},
        }),
    );
    let EditDiagnostics::NoAnswer { server, detail } = lsp.after_edit(&file).await else {
        panic!("a crashed server reports nothing");
    };
    assert_eq!(server, "sh");
    assert_eq!(
        detail,
        "it exited; its last words: fake server: out of cheese"
    );

    // Right after: not started again until the backoff has passed.
    let EditDiagnostics::NoAnswer { detail, .. } = lsp.after_edit(&file).await else {
        panic!("still down");
    };
    assert!(
        detail.starts_with(
            "it exited; its last words: fake server: out of cheese; it is started again in "
        ),
        "{detail}"
    );
    assert_eq!(lsp.pids().await, Vec::<u32>::new(), "no second process yet");
}

#[tokio::test]
async fn files_no_server_serves_are_left_alone_and_missing_defaults_are_skipped() {
    let (_dir, root) = project();
    let file = root.join("notes.txt");
    std::fs::write(&file, "hi\n").unwrap();
    let settings = LspSettings::default();
    let lsp = LspSession::new(
        &root,
        &settings,
        vec![("PATH".into(), root.display().to_string())],
        Vec::new(),
    );
    assert_eq!(lsp.after_edit(&file).await, EditDiagnostics::NoServer);
    let py = root.join("a.py");
    std::fs::write(&py, "x = 1\n").unwrap();
    assert_eq!(
        lsp.after_edit(&py).await,
        EditDiagnostics::NoServer,
        "pyright-langserver is not on this PATH, so the default is skipped"
    );
}

#[tokio::test]
async fn a_default_server_that_cannot_start_counts_as_not_installed() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = project();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    // What rustup's proxy does for a component that is not installed.
    let fake = bin.join("pyright-langserver");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"error: Unknown binary 'pyright-langserver'\" >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = root.join("a.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let lsp = LspSession::new(
        &root,
        &LspSettings::default(),
        vec![("PATH".into(), bin.display().to_string())],
        Vec::new(),
    );
    assert_eq!(lsp.after_edit(&file).await, EditDiagnostics::NoServer);
    assert_eq!(lsp.after_edit(&file).await, EditDiagnostics::NoServer);
    assert_eq!(lsp.pids().await, Vec::<u32>::new(), "not started again");
}

#[test]
fn backoff_doubles_from_a_second_to_a_minute() {
    let waits: Vec<u64> = (1..=8).map(riot_lsp::backoff_ms).collect();
    assert_eq!(
        waits,
        [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]
    );
}

#[tokio::test]
async fn a_server_gets_its_settings_saves_closes_and_exits_on_its_own_before_anything_is_killed() {
    let (_dir, root) = project();
    let file = root.join("a.fake");
    std::fs::write(&file, "anything\n").unwrap();
    let marker = root.join("exited");
    let lsp = session(
        &root,
        json!({
            "wait_ms": 10_000,
            "fake": {
                "command": ["python3", "-c", riot_testkit::lsp::RECORDING_SERVER, marker.to_str().unwrap()],
                "extensions": [".fake"],
                "initialization_options": {"mode": "strict"},
                "settings": {"fake": {"lint": {"level": 2}}}
            },
        }),
    );
    for _ in 0..2 {
        assert_eq!(
            lsp.after_edit(&file).await,
            EditDiagnostics::Reported {
                server: "python3".into(),
                diagnostics: Vec::new()
            }
        );
    }
    let pids = lsp.pids().await;
    assert_eq!(pids.len(), 1);
    lsp.shutdown().await;
    let seen = std::fs::read_to_string(&marker)
        .expect("the server got shutdown and exit and left on its own");
    // The answer to its own question comes whenever Riot reads it.
    let answer = r#"configuration [{"level": 2}, null, {"fake": {"lint": {"level": 2}}}]"#;
    let (answers, rest): (Vec<&str>, Vec<&str>) = seen.lines().partition(|l| *l == answer);
    assert_eq!(answers, [answer], "{seen}");
    assert_eq!(
        rest,
        [
            r#"initialize {"mode": "strict"}"#,
            "initialized",
            r#"workspace/didChangeConfiguration {"fake": {"lint": {"level": 2}}}"#,
            r#"textDocument/didOpen "anything\n""#,
            "textDocument/didSave",
            r#"textDocument/didChange "anything\n""#,
            "textDocument/didSave",
            "textDocument/didClose",
            "shutdown",
            "exit"
        ]
    );
    assert!(gone(pids[0]).await);
}

#[tokio::test]
async fn after_a_command_a_changed_document_is_sent_again_and_a_deleted_one_closed() {
    let (_dir, root) = project();
    let kept = root.join("kept.fake");
    let changed = root.join("changed.fake");
    let deleted = root.join("deleted.fake");
    for file in [&kept, &changed, &deleted] {
        std::fs::write(file, "first\n").unwrap();
    }
    let marker = root.join("exited");
    let lsp = session(
        &root,
        json!({
            "wait_ms": 10_000,
            "fake": {
                "command": ["python3", "-c", riot_testkit::lsp::RECORDING_SERVER, marker.to_str().unwrap()],
                "extensions": [".fake"],
            },
        }),
    );
    for file in [&kept, &changed, &deleted] {
        assert!(matches!(
            lsp.after_edit(file).await,
            EditDiagnostics::Reported { .. }
        ));
    }
    // What a command does behind the servers' back.
    std::fs::write(&changed, "second\n").unwrap();
    std::fs::remove_file(&deleted).unwrap();
    lsp.after_command().await;
    // Nothing changed since: nothing is sent.
    lsp.after_command().await;
    lsp.shutdown().await;
    let seen = std::fs::read_to_string(&marker).unwrap();
    let documents: Vec<&str> = seen
        .lines()
        .filter(|l| l.starts_with("textDocument/") || *l == "shutdown")
        .collect();
    assert_eq!(
        documents,
        [
            r#"textDocument/didOpen "first\n""#,
            "textDocument/didSave",
            r#"textDocument/didOpen "first\n""#,
            "textDocument/didSave",
            r#"textDocument/didOpen "first\n""#,
            "textDocument/didSave",
            r#"textDocument/didChange "second\n""#,
            "textDocument/didSave",
            "textDocument/didClose",
            // The two left open are closed at the end.
            "textDocument/didClose",
            "textDocument/didClose",
            "shutdown",
        ],
        "{seen}"
    );
}

#[tokio::test]
async fn a_server_that_takes_incremental_changes_gets_only_what_changed() {
    let (_dir, root) = project();
    let file = root.join("a.fake");
    std::fs::write(&file, "fn main() {\n    old();\n}\n").unwrap();
    let marker = root.join("exited");
    let lsp = session(
        &root,
        json!({
            "wait_ms": 10_000,
            "fake": {
                "command": ["python3", "-c", riot_testkit::lsp::RECORDING_SERVER, marker.to_str().unwrap(), "2"],
                "extensions": [".fake"],
            },
        }),
    );
    assert!(matches!(
        lsp.after_edit(&file).await,
        EditDiagnostics::Reported { .. }
    ));
    std::fs::write(&file, "fn main() {\n    new_call();\n}\n").unwrap();
    assert!(matches!(
        lsp.after_edit(&file).await,
        EditDiagnostics::Reported { .. }
    ));
    lsp.shutdown().await;
    let seen = std::fs::read_to_string(&marker).unwrap();
    let changes: Vec<&str> = seen
        .lines()
        .filter(|l| l.starts_with("textDocument/didChange"))
        .collect();
    // `old` became `new_call` on line 1: only that part is sent.
    assert_eq!(
        changes,
        [r#"textDocument/didChange 1:4-1:7 "new_call""#],
        "{seen}"
    );
}
