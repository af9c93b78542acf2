//! One connection attempt to one server, from spawn to end, as a task.
//!
//! Start (spawn or connect, `initialize`, `tools/list`) races the startup
//! timeout, the child's exit and a stop request. Once ready, the task
//! watches for the child exiting, the connection closing, a stop request
//! and `notifications/tools/list_changed`. Every way out kills the child's
//! process group; so does dropping the task.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use riot_protocol::{CaptureLimit, Clock, ClockExt, ProcessSpec};
use riot_runtime::PipedChild;
use rmcp::model::Tool as McpToolInfo;
use rmcp::service::{RoleClient, RunningService, serve_client};
use rmcp::transport::IntoTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use tokio::io::AsyncBufReadExt;
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::RiotClient;
use crate::config::Transport;
use crate::options::HubOptions;
use crate::server::Server;

/// Lines of a server's stderr kept for failure reasons.
const STDERR_LINES: usize = 8;
/// Characters kept of one stderr line.
const STDERR_LINE_CHARS: usize = 300;
/// How long a closing connection or an exiting child is waited for.
const SETTLE_MS: u64 = 2_000;
/// How long the last stderr output of an exited child is waited for.
const STDERR_SETTLE_MS: u64 = 500;

/// What every connection task of a hub shares.
pub(crate) struct Shared {
    pub options: HubOptions,
    http: OnceLock<Result<reqwest::Client, NoHttpClient>>,
}

/// The HTTP client for HTTP servers could not be built (shared, so the
/// cause is behind an `Arc`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("no HTTP client could be built ({0})")]
pub(crate) struct NoHttpClient(#[source] Arc<reqwest::Error>);

impl Shared {
    pub fn new(options: HubOptions) -> Self {
        Self {
            options,
            http: OnceLock::new(),
        }
    }

    /// One HTTP client (and connection pool) for all HTTP servers.
    fn http(&self) -> Result<reqwest::Client, NoHttpClient> {
        self.http
            .get_or_init(|| {
                // ring, never aws-lc; an already installed provider will do.
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::builder()
                    // A redirect would replay custom headers (tokens) elsewhere.
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| NoHttpClient(Arc::new(e)))
            })
            .clone()
    }
}

type Service = RunningService<RoleClient, RiotClient>;

/// Runs connection `generation` of `server` until it fails or `stop` is
/// cancelled. Reports every change through `server`.
pub(crate) async fn run(
    server: Arc<Server>,
    shared: Arc<Shared>,
    generation: u64,
    stop: CancellationToken,
) {
    let config = match server.config.expanded(&shared.options.env) {
        Ok(config) => config,
        Err(e) => {
            server.fail(generation, format!("its configuration cannot be used: {e}"));
            return;
        }
    };
    let client = RiotClient::new(&server.name, Arc::clone(&server.progress));
    let conn = Conn {
        server: &server,
        shared: &shared,
        generation,
        stop: &stop,
    };
    match config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let cwd = match cwd {
                Some(dir) if !dir.is_empty() => shared.options.cwd.join(dir),
                _ => shared.options.cwd.clone(),
            };
            let spec = ProcessSpec {
                program: command.clone(),
                args,
                cwd,
                // The hub's variables first: the server's own `env` wins.
                env_set: {
                    let mut set: Vec<(String, String)> = shared
                        .options
                        .env_set
                        .iter()
                        .filter(|(name, _)| !env.contains_key(name))
                        .cloned()
                        .collect();
                    set.extend(env);
                    set
                },
                env_remove: shared.options.env_remove.clone(),
                timeout_ms: None,
                capture: CaptureLimit::default(),
                stdin: None,
                undoable_only: false,
            };
            let mut child = match PipedChild::spawn(&spec) {
                Ok(child) => child,
                Err(e) => {
                    server.fail(
                        generation,
                        format!("{e}; check `command` and that it is installed"),
                    );
                    return;
                }
            };
            server.set_pid(generation, child.pid());
            let stderr = StderrTail::start(child.take_stderr(), &server.name);
            let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
                server.fail(generation, "its pipes could not be opened".into());
                return;
            };
            let mut process = Process::Child {
                child: Box::new(child),
                stderr,
                clock: Arc::clone(&shared.options.clock),
            };
            conn.drive(client, (stdout, stdin), &mut process).await;
        }
        Transport::Http { url, headers } => {
            let http = match shared.http() {
                Ok(http) => http,
                Err(reason) => {
                    server.fail(generation, reason.to_string());
                    return;
                }
            };
            let mut custom = HashMap::new();
            for (name, value) in headers {
                // Checked when the file was read and after expansion.
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::from_bytes(name.as_bytes()),
                    http::HeaderValue::from_str(&value),
                ) {
                    custom.insert(name, value);
                }
            }
            let transport = StreamableHttpClientTransport::with_client(
                http,
                StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom),
            );
            conn.drive(client, transport, &mut Process::Remote).await;
        }
    }
}

struct Conn<'a> {
    server: &'a Arc<Server>,
    shared: &'a Shared,
    generation: u64,
    stop: &'a CancellationToken,
}

enum Started {
    Ready(Box<Service>, Vec<McpToolInfo>),
    Failed(String),
    TimedOut { initialized: bool },
    Exited(String),
    Stopped,
}

impl Conn<'_> {
    async fn drive<T, E, A>(&self, client: RiotClient, transport: T, process: &mut Process)
    where
        T: IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let clock = &self.shared.options.clock;
        let timeout_ms = self.shared.options.startup_timeout_ms;
        let tools_changed = Arc::clone(&client.tools_changed);
        let initialized = AtomicBool::new(false);
        let startup = async {
            let service = serve_client(client, transport)
                .await
                .map_err(|e| format!("the `initialize` handshake failed: {e}"))?;
            initialized.store(true, Ordering::SeqCst);
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| format!("listing its tools failed: {e}"))?;
            Ok::<_, String>((service, tools))
        };
        let started = tokio::select! {
            result = clock.timeout(timeout_ms, startup) => match result {
                Ok(Ok((service, tools))) => Started::Ready(Box::new(service), tools),
                Ok(Err(reason)) => Started::Failed(reason),
                Err(_) => Started::TimedOut {
                    initialized: initialized.load(Ordering::SeqCst),
                },
            },
            reason = process.exited() => Started::Exited(reason),
            () = self.stop.cancelled() => Started::Stopped,
        };
        let (service, tools) = match started {
            Started::Ready(service, tools) => (service, tools),
            Started::Stopped => return process.stop().await,
            Started::Exited(reason) => return self.fail(reason),
            Started::Failed(reason) => {
                // A child that died makes the handshake fail first; its
                // exit status says more than "connection closed".
                let reason = match process.gone().await {
                    Some(exit) => format!("{reason}; {exit}"),
                    None => reason,
                };
                process.stop().await;
                return self.fail(reason);
            }
            Started::TimedOut { initialized } => {
                let what = if initialized {
                    "did not list its tools"
                } else {
                    "did not answer `initialize`"
                };
                let mut reason = format!(
                    "{what} within {} (the startup timeout); check the command or URL",
                    seconds(timeout_ms)
                );
                process.stop().await;
                if let Some(output) = process.stderr_summary() {
                    reason.push_str(&format!("; its last output: {output}"));
                }
                return self.fail(reason);
            }
        };
        self.supervise(*service, tools, tools_changed, process)
            .await;
    }

    async fn supervise(
        &self,
        service: Service,
        tools: Vec<McpToolInfo>,
        tools_changed: Arc<tokio::sync::Notify>,
        process: &mut Process,
    ) {
        let clock = &self.shared.options.clock;
        let peer = service.peer().clone();
        let closer = service.cancellation_token();
        self.server.ready(self.generation, peer.clone(), tools);
        let mut closed = std::pin::pin!(service.waiting());
        loop {
            tokio::select! {
                () = self.stop.cancelled() => {
                    closer.cancel();
                    let _ = clock.timeout(SETTLE_MS, &mut closed).await;
                    return process.stop().await;
                }
                reason = process.exited() => {
                    closer.cancel();
                    return self.fail(reason);
                }
                _ = &mut closed => {
                    let reason = process
                        .gone()
                        .await
                        .unwrap_or_else(|| "the server closed the connection".into());
                    process.stop().await;
                    return self.fail(reason);
                }
                () = tools_changed.notified() => self.refresh_tools(&peer).await,
            }
        }
    }

    /// Lists the tools again after `notifications/tools/list_changed`; on
    /// failure the old list stays (a dead connection is noticed anyway).
    async fn refresh_tools(&self, peer: &rmcp::service::Peer<RoleClient>) {
        let timeout_ms = self.shared.options.startup_timeout_ms;
        let listed = self
            .shared
            .options
            .clock
            .timeout(timeout_ms, peer.list_all_tools())
            .await;
        let server = &self.server.name;
        match listed {
            Ok(Ok(tools)) => self.server.set_tools(self.generation, tools),
            Ok(Err(e)) => tracing::warn!(%server, error = %e, "listing changed MCP tools failed"),
            Err(_) => tracing::warn!(%server, "listing changed MCP tools timed out"),
        }
    }

    fn fail(&self, reason: String) {
        self.server.fail(self.generation, reason);
    }
}

/// `30 s` for whole seconds, else `1500 ms`.
fn seconds(ms: u64) -> String {
    if ms >= 1_000 && ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else {
        format!("{ms} ms")
    }
}

/// The other end of a connection, if Riot owns it.
enum Process {
    Child {
        child: Box<PipedChild>,
        stderr: StderrTail,
        clock: Arc<dyn Clock>,
    },
    Remote,
}

impl Process {
    /// Completes when the child exits, with why; never for a remote server.
    async fn exited(&mut self) -> String {
        match self {
            Process::Child {
                child,
                stderr,
                clock,
            } => {
                let status = child.wait().await;
                stderr.finish(clock.as_ref()).await;
                exit_reason(status, stderr)
            }
            Process::Remote => std::future::pending().await,
        }
    }

    /// After the connection failed: whether the child exited too (waited
    /// for briefly), and how.
    async fn gone(&mut self) -> Option<String> {
        match self {
            Process::Child {
                child,
                stderr,
                clock,
            } => {
                let status = clock.timeout(SETTLE_MS, child.wait()).await.ok()?;
                stderr.finish(clock.as_ref()).await;
                Some(exit_reason(status, stderr))
            }
            Process::Remote => None,
        }
    }

    /// Kills the child's whole process group and reaps the child.
    async fn stop(&mut self) {
        if let Process::Child { child, .. } = self
            && let Err(e) = child.kill().await
        {
            tracing::warn!(error = %e, "could not reap an MCP server process");
        }
    }

    fn stderr_summary(&self) -> Option<String> {
        match self {
            Process::Child { stderr, .. } => stderr.summary(),
            Process::Remote => None,
        }
    }
}

fn exit_reason(status: std::io::Result<std::process::ExitStatus>, stderr: &StderrTail) -> String {
    let mut reason = match status {
        Ok(status) => format!("the server process exited ({status})"),
        Err(e) => format!("the server process was lost ({e})"),
    };
    if let Some(output) = stderr.summary() {
        reason.push_str(&format!("; its last output: {output}"));
    }
    reason
}

/// The last lines a child wrote to stderr (also logged at debug level).
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    pump: Option<JoinHandle<()>>,
}

impl StderrTail {
    fn start(stderr: Option<ChildStderr>, server: &str) -> Self {
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let pump = stderr.map(|stderr| {
            let lines = Arc::clone(&lines);
            let server = server.to_owned();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(stderr);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\n', &mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf);
                            let line = line.trim_end();
                            tracing::debug!(server = %server, "{line}");
                            if line.is_empty() {
                                continue;
                            }
                            let mut kept = lines.lock().unwrap_or_else(|e| e.into_inner());
                            if kept.len() == STDERR_LINES {
                                kept.pop_front();
                            }
                            kept.push_back(line.chars().take(STDERR_LINE_CHARS).collect());
                        }
                    }
                }
            })
        });
        Self { lines, pump }
    }

    /// Lets the reader take in what the child wrote before it ended (a
    /// grandchild may hold the pipe open: bounded).
    async fn finish(&mut self, clock: &dyn Clock) {
        if let Some(pump) = self.pump.as_mut() {
            let _ = clock.timeout(STDERR_SETTLE_MS, pump).await;
        }
    }

    fn summary(&self) -> Option<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join(" | "))
    }
}

impl Drop for StderrTail {
    fn drop(&mut self) {
        if let Some(pump) = self.pump.take() {
            pump.abort();
        }
    }
}
