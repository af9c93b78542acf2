//! Finding the installed npm servers, starting the HTTP one, watching
//! process groups, calling tools.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use riot_mcp::{HubOptions, McpHub, ServerConfig, ServerStatus, Transport};
use riot_protocol::{DynTool, ProcessSpec, ProgressPayload, ToolContext, ToolOutcome};
use riot_runtime::{PipedChild, SystemClock};
use riot_tools::testing::TempProject;
use tokio::io::AsyncBufReadExt;

/// Generous bound for anything the tests wait on (never a speed claim).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The repository's `tests/mcp-servers`.
pub fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers")
}

/// The installed npm packages the tests run.
pub struct Installed {
    pub everything: PathBuf,
    pub filesystem: PathBuf,
    pub fixtures: PathBuf,
}

/// The servers from `tests/mcp-servers/node_modules`. Missing under
/// `CI=true` fails the test; elsewhere it is skipped, loudly.
pub fn installed(test: &str) -> Option<Installed> {
    let dir = servers_dir();
    let modules = dir.join("node_modules/@modelcontextprotocol");
    let found = Installed {
        everything: modules.join("server-everything/dist/index.js"),
        filesystem: modules.join("server-filesystem/dist/index.js"),
        fixtures: dir.join("fixtures"),
    };
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let sdk = modules.join("sdk/package.json");
    if node && found.everything.is_file() && found.filesystem.is_file() && sdk.is_file() {
        return Some(found);
    }
    let why = format!(
        "the MCP test servers are not installed (node found: {node}); run `npm ci --prefix tests/mcp-servers`"
    );
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {why}");
    }
    eprintln!("\n!!! SKIPPING {test}: {why} !!!\n");
    None
}

pub fn stdio(name: &str, command: &str, args: &[&str]) -> ServerConfig {
    ServerConfig::session(
        name,
        Transport::Stdio {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: Default::default(),
            cwd: None,
        },
    )
}

pub fn http(name: &str, url: &str) -> ServerConfig {
    ServerConfig::session(
        name,
        Transport::Http {
            url: url.into(),
            headers: Default::default(),
        },
    )
}

pub fn options(cwd: &Path) -> HubOptions {
    HubOptions::new(Arc::new(SystemClock), cwd)
}

/// A started hub whose servers all settled.
pub async fn ready_hub(servers: Vec<ServerConfig>, cwd: &Path) -> Arc<McpHub> {
    let hub = McpHub::new(servers, options(cwd));
    hub.start().unwrap();
    assert!(
        hub.wait_settled(PATIENCE.as_millis() as u64).await,
        "servers never settled"
    );
    for (name, status) in hub.statuses() {
        assert!(
            matches!(status, ServerStatus::Ready { .. }),
            "{name}: {status}"
        );
    }
    hub
}

pub fn tool(hub: &McpHub, name: &str) -> Arc<dyn DynTool> {
    let tools = hub.tools();
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            let names: Vec<_> = tools.iter().map(|t| t.name().to_owned()).collect();
            panic!("no tool {name} in {names:?}")
        })
}

/// Progress a call reported, as status lines.
#[derive(Clone, Default)]
pub struct Progress(Arc<Mutex<Vec<String>>>);

impl Progress {
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Waits until at least one progress report arrived.
    pub async fn first(&self) {
        wait_for("a progress report", || !self.lines().is_empty()).await;
    }
}

/// A context in `project` that records progress.
pub fn ctx_with_progress(project: &TempProject) -> (ToolContext, Progress) {
    let progress = Progress::default();
    let mut ctx = project.ctx();
    let sink = progress.clone();
    ctx.progress = Some(Arc::new(move |p: ProgressPayload| {
        if let ProgressPayload::Status { text } = p {
            sink.0.lock().unwrap().push(text);
        }
    }));
    (ctx, progress)
}

pub async fn call(
    tool: &Arc<dyn DynTool>,
    input: serde_json::Value,
    ctx: &ToolContext,
) -> ToolOutcome {
    let prepared = Arc::clone(tool).prepare(input).expect("input parses");
    prepared.call(ctx).await
}

/// Polls `done` every 25 ms, failing after [`PATIENCE`].
pub async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Live (not zombie) processes whose process group is `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let mut after = stat
            .rsplit_once(')')
            .map(|(_, r)| r)
            .unwrap_or("")
            .split_whitespace();
        let state = after.next();
        let pgrp = after.nth(1).and_then(|p| p.parse::<u32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            members.push(pid);
        }
    }
    members
}

/// Waits until nothing of the group `pgid` is alive.
pub async fn group_gone(pgid: u32) {
    wait_for(&format!("process group {pgid} to be gone"), || {
        group_members(pgid).is_empty()
    })
    .await;
}

/// server-everything in streamable HTTP mode on a free loopback port, in
/// its own process group, killed whole when this is dropped (also when
/// the test fails).
pub struct HttpEverything {
    _child: PipedChild,
    pub url: String,
}

impl HttpEverything {
    pub async fn start(installed: &Installed) -> Self {
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let spec = ProcessSpec {
                program: "node".into(),
                args: vec![
                    installed.everything.display().to_string(),
                    "streamableHttp".into(),
                ],
                cwd: servers_dir(),
                env_set: vec![("PORT".into(), port.to_string())],
                env_remove: vec![],
                timeout_ms: None,
                capture: Default::default(),
                stdin: None,
                undoable_only: false,
            };
            let mut child = PipedChild::spawn(&spec).unwrap();
            drain(child.take_stdout());
            let stderr = child.take_stderr().unwrap();
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            let listening = tokio::time::timeout(PATIENCE, async {
                while let Ok(Some(line)) = lines.next_line().await {
                    if line.contains("listening on port") {
                        return true;
                    }
                    if line.contains("already in use") {
                        return false;
                    }
                }
                false
            })
            .await
            .unwrap_or(false);
            // Keep reading so the server never blocks on a full pipe.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            if listening {
                return Self {
                    _child: child,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                };
            }
        }
        panic!("server-everything never listened on a free port");
    }
}

fn drain(pipe: Option<tokio::process::ChildStdout>) {
    if let Some(pipe) = pipe {
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(pipe).lines();
            while let Ok(Some(_)) = lines.next_line().await {}
        });
    }
}

/// The text of an outcome (see `riot_tools::testing::text_of`).
pub fn text(outcome: &ToolOutcome) -> String {
    riot_tools::testing::text_of(outcome)
}
