//! Language-server feedback through a whole session (docs/diagnostics.md):
//! the strict mock model writes a Python file with an error and then
//! fixes it; the real pyright-langserver (from `tests/lsp`, installed by
//! .ci/run) reports the error in the Write's result and nothing after the
//! fixing Edit; when the session is closed, the server's process group
//! is gone.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests create real files, read /proc and poll with real sleeps

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::StreamExt;
use riot_config::FlagLayer;
use riot_kernel::{Capabilities, Kernel, OpenOptions};
use riot_lsp::LspSession;
use riot_protocol::{
    AgentEvent, LanguageServerHost, LanguageServers, LspSettings, Message, PermissionMode,
    ToolResultContent, UserBlock,
};
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;

/// riot-lsp's sessions, remembered weakly so the test can ask for their
/// pids without keeping them alive.
#[derive(Debug, Default)]
struct Watched {
    sessions: Mutex<Vec<Weak<LspSession>>>,
}

impl LanguageServerHost for Watched {
    fn session(
        &self,
        project: &Path,
        settings: &LspSettings,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    ) -> Arc<dyn LanguageServers> {
        let session = Arc::new(LspSession::new(project, settings, env, env_remove));
        self.sessions.lock().unwrap().push(Arc::downgrade(&session));
        session
    }
}

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

fn tool_call(id: &str, name: &str, input: serde_json::Value) -> Reply {
    Reply::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: input.to_string(),
        text: String::new(),
    }
}

/// The text of each tool result, in order.
fn results(messages: &[Message]) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages {
        let Message::User(user) = m else { continue };
        for block in &user.content {
            if let UserBlock::ToolResult { content, .. } = block {
                out.push(
                    content
                        .iter()
                        .filter_map(|c| match c {
                            ToolResultContent::Text { text }
                            | ToolResultContent::Document { text, .. } => Some(text.as_str()),
                            ToolResultContent::Image { .. } => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_hears_the_error_it_made_and_nothing_once_fixed_and_the_server_dies_with_the_session()
 {
    let broken = "def double(n: int) -> int:\n    return n * 2\n\nprint(double(tripple))\n";
    let server = MockServer::start(Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "toolu_1",
                "Write",
                json!({"file_path": "calc.py", "content": broken}),
            ),
            tool_call(
                "toolu_2",
                "Edit",
                json!({"file_path": "calc.py", "old_string": "double(tripple)", "new_string": "double(3)"}),
            ),
            Reply::Text("Fixed.".into()),
        ],
    ))
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().canonicalize().unwrap();
    std::fs::write(cwd.join("pyrightconfig.json"), "{}\n").unwrap();
    let riot_home = home.path().join("riot");
    std::fs::create_dir_all(&riot_home).unwrap();
    // The person's own settings: a project's `lsp` waits for trust.
    let settings = json!({"lsp": {
        // Generous for pyright's first analysis on a slow machine; a
        // passing run never waits this long.
        "wait_ms": 120_000,
        "python": {"command": [pyright_langserver().display().to_string(), "--stdio"], "extensions": [".py"]},
        "rust": false, "typescript": false, "go": false,
    }});
    std::fs::write(riot_home.join("settings.json"), settings.to_string()).unwrap();

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
    let watched = Arc::new(Watched::default());
    let kernel = Kernel::new(caps, riot_home).with_language_servers(watched.clone());
    let env = BTreeMap::from([
        ("HOME".to_owned(), home.path().display().to_string()),
        ("TEST_KEY".to_owned(), "test-key".to_owned()),
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
    ]);
    let flags = FlagLayer {
        provider: Some("anthropic".into()),
        base_url: Some(server.base_url()),
        model: Some("claude-test".into()),
        api_key_env: Some("TEST_KEY".into()),
        permission_mode: Some(PermissionMode::AcceptEdits),
        ..FlagLayer::default()
    };
    let handle = kernel
        .start(OpenOptions {
            cwd: cwd.clone(),
            env,
            flags,
            trust_project: false,
            max_turns: None,
            resume: None,
            asker: riot_kernel::Asker::Nobody,
            mcp_servers: Vec::new(),
        })
        .await
        .unwrap();

    let events: Vec<AgentEvent> = handle.prompt("fix calc.py").unwrap().collect().await;
    assert!(
        matches!(events.last(), Some(AgentEvent::Done { .. })),
        "{events:?}"
    );
    let results = results(&handle.messages().await.unwrap());
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(
        results[0],
        "Created calc.py (4 lines).\nNew diagnostics after this edit (pyright-langserver):\ncalc.py:4:14: error[reportUndefinedVariable]: \"tripple\" is not defined",
        "the Write's result, then (a block of its own) the server's news"
    );
    assert!(
        !results[1].contains("diagnostics") && !results[1].contains("language server"),
        "the fixing Edit's result says nothing more: {}",
        results[1]
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("calc.py")).unwrap(),
        broken.replace("double(tripple)", "double(3)")
    );

    let session = watched.sessions.lock().unwrap()[0].clone();
    let pids = session.upgrade().unwrap().pids().await;
    assert_eq!(pids.len(), 1, "one pyright-langserver");
    assert!(!members(pids[0]).is_empty());

    handle.close().await;
    let mut gone = false;
    for _ in 0..400 {
        if members(pids[0]).is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        gone,
        "the language server's group {} outlived the session",
        pids[0]
    );
    assert!(
        session.upgrade().is_none(),
        "the session's servers were dropped"
    );
}
