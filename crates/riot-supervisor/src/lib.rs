//! Spawns and supervises `riot serve` for the desktop shell
//! (docs/design.md §2): the shell owns the server's whole process tree.
//!
//! - The server runs in its own process group, with `--exit-on-stdin-eof`
//!   and its stdin a pipe only the supervisor holds: if the shell dies by
//!   any means, the pipe closes and the server shuts down gracefully
//!   (cancelling running turns, killing its tools' process groups).
//! - It is ready when it prints its one line
//!   (`Riot is serving at http://HOST:PORT/?token=TOKEN`); the address is
//!   published as [`Status::Ready`].
//! - If it exits on its own it is restarted after a backoff that doubles
//!   from [`Policy::first_backoff`]. After [`Policy::max_crashes`] crashes
//!   with no stable run between them the supervisor gives up and says why
//!   ([`Status::GaveUp`], with the server's last lines of stderr). A server
//!   that exits with the usage code 2 before it is ready is given up on at
//!   once: its configuration is wrong and restarting will not fix it.
//! - [`Supervisor::shutdown`] asks politely (`_riot/shutdown` over the
//!   server's own WebSocket), closes stdin, waits for the server itself
//!   (not its group) up to [`Policy::grace`], then kills the group
//!   unconditionally and reaps it.

#![allow(clippy::disallowed_methods)] // a face: spawns the real server and waits on tokio's timer

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

/// What `riot serve` prints first, before the address.
const READY_PREFIX: &str = "Riot is serving at ";

/// The exit code `riot` uses for usage and configuration errors.
const EXIT_USAGE: i32 = 2;

/// How many of the server's last stderr lines are kept for an error report.
const STDERR_LINES: usize = 20;

/// How to start the server: `program serve --port 0 --exit-on-stdin-eof`
/// followed by `args`.
#[derive(Debug, Clone)]
pub struct ServeCommand {
    pub program: PathBuf,
    /// Extra arguments after `serve` (e.g. `--ui-dir DIR`).
    pub args: Vec<OsString>,
    /// Working directory (default: the shell's).
    pub cwd: Option<PathBuf>,
    /// Environment variables set for the server, on top of the shell's.
    pub env: Vec<(OsString, OsString)>,
    /// Variables of the shell's environment the server must not see.
    pub env_remove: Vec<OsString>,
}

impl ServeCommand {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            env_remove: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.arg("serve")
            .arg("--port")
            .arg("0")
            .arg("--exit-on-stdin-eof")
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group, so stopping it reaches everything it left in
            // that group. No PR_SET_PDEATHSIG: when the shell dies, the
            // closed stdin lets the server end its turns gracefully.
            .process_group(0)
            .kill_on_drop(false);
        if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }
}

/// Timings and limits of the supervision.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Crashes in a row (no stable run between them) before giving up.
    pub max_crashes: u32,
    /// Wait before the first restart; doubles with each crash in a row.
    pub first_backoff: Duration,
    /// The longest wait between restarts.
    pub max_backoff: Duration,
    /// A run at least this long resets the crash count.
    pub stable_after: Duration,
    /// How long a starting server may take to print its address.
    pub ready_timeout: Duration,
    /// How long the polite `_riot/shutdown` request may take.
    pub polite_timeout: Duration,
    /// How long to wait for the server to exit once asked, before the
    /// group is killed.
    pub grace: Duration,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            max_crashes: 5,
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            stable_after: Duration::from_secs(30),
            ready_timeout: Duration::from_secs(30),
            // Inside the grace period: a busy server still gets to answer.
            polite_timeout: Duration::from_secs(3),
            grace: Duration::from_secs(5),
        }
    }
}

/// Where the supervised server is; published on a watch channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Starting (the first time, or again after a crash).
    Starting { attempt: u32 },
    /// Serving at `url` (`http://127.0.0.1:PORT/?token=TOKEN`).
    Ready { url: String, pid: u32 },
    /// Exited on its own; restarting after `after`.
    Restarting {
        crashes: u32,
        after: Duration,
        reason: String,
    },
    /// Stopped restarting; `reason` says why, for a person.
    GaveUp { crashes: u32, reason: String },
    /// Shut down on request.
    Stopped,
}

/// How a shutdown went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The server exited by itself within the grace period; `answered`:
    /// it had acknowledged `_riot/shutdown` (else closing its stdin did it).
    Graceful { answered: bool },
    /// The server was still running after the grace period; its group was
    /// killed.
    Forced,
    /// No server was running (it had crashed, or the supervisor gave up).
    NotRunning,
}

/// Why [`Supervisor::ready`] has no address to give.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    /// The supervisor gave up on the server; `reason` is the one in
    /// [`Status::GaveUp`].
    #[error("{reason}")]
    GaveUp { crashes: u32, reason: String },
    /// The server was shut down on request.
    #[error("stopped")]
    Stopped,
    /// The supervision task ended without a word.
    #[error("the supervisor ended")]
    Ended,
}

/// Why a server did not get as far as printing its address.
#[derive(Debug, thiserror::Error)]
enum StartError {
    /// The program could not be spawned.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// It had no process id: it was already gone.
    #[error("the server exited at once")]
    ExitedAtOnce,
    /// Its stdout was not piped.
    #[error("no stdout")]
    NoStdout,
    /// Reading its stdout failed.
    #[error(transparent)]
    Read(std::io::Error),
    /// Its stdout ended before the address line.
    #[error("riot serve closed its output without printing its address")]
    NoAddress,
    /// Its first line was not the address line.
    #[error("riot serve printed {line:?} instead of its address")]
    NotAddress { line: String },
    /// No line within [`Policy::ready_timeout`].
    #[error("riot serve printed no address within {secs} s")]
    Timeout { secs: u64 },
}

/// Why the polite `_riot/shutdown` request did not go through.
#[derive(Debug, thiserror::Error)]
enum ShutdownError {
    /// The page address has no ACP socket behind it.
    #[error("not a served address: {page}")]
    NotServed { page: String },
    /// The WebSocket could not connect, send or receive.
    #[error(transparent)]
    Socket(#[from] tokio_tungstenite::tungstenite::Error),
    /// The server closed the connection before it replied.
    #[error("the connection closed before the reply")]
    Closed,
    /// A reply was not JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The server answered a request with an error.
    #[error("{method}: {error}")]
    Refused {
        method: &'static str,
        error: serde_json::Value,
    },
}

/// A running supervision of one `riot serve`.
#[derive(Debug)]
pub struct Supervisor {
    status: watch::Receiver<Status>,
    stop: CancellationToken,
    task: JoinHandle<Stopped>,
}

impl Supervisor {
    /// Starts `command` under `policy` on the current tokio runtime.
    pub fn start(command: ServeCommand, policy: Policy) -> Self {
        let (tx, rx) = watch::channel(Status::Starting { attempt: 1 });
        let stop = CancellationToken::new();
        let task = tokio::spawn(supervise(command, policy, tx, stop.clone()));
        Self {
            status: rx,
            stop,
            task,
        }
    }

    /// The current status and its changes.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.status.clone()
    }

    /// Waits until the server is ready (its address) or the supervisor
    /// gives up (the reason).
    pub async fn ready(&self) -> Result<String, NotReady> {
        let mut rx = self.status.clone();
        loop {
            match &*rx.borrow_and_update() {
                Status::Ready { url, .. } => return Ok(url.clone()),
                Status::GaveUp { crashes, reason } => {
                    return Err(NotReady::GaveUp {
                        crashes: *crashes,
                        reason: reason.clone(),
                    });
                }
                Status::Stopped => return Err(NotReady::Stopped),
                Status::Starting { .. } | Status::Restarting { .. } => {}
            }
            if rx.changed().await.is_err() {
                return Err(NotReady::Ended);
            }
        }
    }

    /// Stops the server (see the module docs) and ends the supervision.
    pub async fn shutdown(self) -> Stopped {
        self.stop.cancel();
        self.task.await.unwrap_or(Stopped::NotRunning)
    }
}

/// One spawned server process.
struct Server {
    child: Child,
    pid: u32,
    stdin: Option<tokio::process::ChildStdin>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    stderr_reader: Option<JoinHandle<()>>,
}

impl Server {
    fn spawn(command: &ServeCommand) -> Result<Self, StartError> {
        let mut child = command
            .command()
            .spawn()
            .map_err(|source| StartError::Spawn {
                program: command.program.clone(),
                source,
            })?;
        let pid = child.id().ok_or(StartError::ExitedAtOnce)?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_reader = child
            .stderr
            .take()
            .map(|pipe| tokio::spawn(keep_tail(pipe, Arc::clone(&stderr))));
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            pid,
            stdin,
            stderr,
            stderr_reader,
        })
    }

    /// The last lines of stderr, once the pipe has closed (or after a
    /// moment, if something outside the group still holds it).
    async fn stderr_tail(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = timeout(Duration::from_millis(500), reader).await;
        }
        self.stderr
            .lock()
            .map(|lines| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    /// Kills the whole group (the server and anything it left in it).
    fn kill_group(&self) {
        let Ok(pgid) = i32::try_from(self.pid) else {
            return;
        };
        match killpg(Pid::from_raw(pgid), Signal::SIGKILL) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => tracing::warn!(pgid, error = %e, "cannot kill riot serve's process group"),
        }
    }

    /// Ends this server: politely when `url` is known, then by closing
    /// stdin, then by killing its group after the grace period. The group
    /// is killed and the server reaped in every case.
    async fn stop(mut self, url: Option<&str>, policy: &Policy) -> Stopped {
        let deadline = Instant::now() + policy.grace;
        let mut answered = false;
        if let Some(url) = url {
            match timeout(policy.polite_timeout, ask_shutdown(url)).await {
                Ok(Ok(())) => answered = true,
                Ok(Err(e)) => tracing::info!(error = %e, "riot serve did not take _riot/shutdown"),
                Err(_) => tracing::info!("riot serve did not answer _riot/shutdown in time"),
            }
        }
        drop(self.stdin.take());
        let how = match tokio::time::timeout_at(deadline, self.child.wait()).await {
            Ok(_) => Stopped::Graceful { answered },
            Err(_) => {
                tracing::warn!(
                    pid = self.pid,
                    "riot serve outlived its grace period; killing its group"
                );
                Stopped::Forced
            }
        };
        self.kill_group();
        let _ = self.child.wait().await;
        how
    }
}

/// Keeps the last [`STDERR_LINES`] lines of `pipe`.
async fn keep_tail(pipe: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(pipe).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
    }
}

/// The WebSocket address of the ACP endpoint behind a served page's URL
/// (`http://H:P/?token=T` → `ws://H:P/acp?token=T`).
pub fn acp_socket_url(page: &str) -> Option<String> {
    let rest = page.strip_prefix("http://")?;
    let (host, query) = rest.split_once("/?")?;
    let token = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))?;
    Some(format!("ws://{host}/acp?token={token}"))
}

/// Connects as an ACP client (ACP needs `initialize` first), sends
/// `_riot/shutdown` and waits for its reply.
async fn ask_shutdown(page: &str) -> Result<(), ShutdownError> {
    let socket = acp_socket_url(page).ok_or_else(|| ShutdownError::NotServed {
        page: page.to_owned(),
    })?;
    let (mut ws, _) = tokio_tungstenite::connect_async(socket.as_str()).await?;
    let requests = [
        (
            "initialize",
            serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}}),
        ),
        ("_riot/shutdown", serde_json::json!({})),
    ];
    for (id, (method, params)) in requests.into_iter().enumerate() {
        let request = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params
        });
        ws.send(Message::text(request.to_string())).await?;
        loop {
            let message = ws.next().await.ok_or(ShutdownError::Closed)?;
            let Message::Text(text) = message? else {
                continue;
            };
            let reply: serde_json::Value = serde_json::from_str(&text)?;
            if reply.get("id") == Some(&serde_json::json!(id)) && reply.get("method").is_none() {
                if let Some(error) = reply.get("error") {
                    return Err(ShutdownError::Refused {
                        method,
                        error: error.clone(),
                    });
                }
                break;
            }
        }
    }
    Ok(())
}

/// Why a run ended without a shutdown request.
fn describe_exit(status: std::io::Result<ExitStatus>) -> (String, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => (format!("riot serve exited with code {code}"), Some(code)),
            (None, Some(signal)) => (format!("riot serve was killed by signal {signal}"), None),
            (None, None) => ("riot serve ended".into(), None),
        },
        Err(e) => (format!("cannot wait for riot serve: {e}"), None),
    }
}

fn with_tail(reason: String, tail: &str) -> String {
    if tail.is_empty() {
        reason
    } else {
        format!("{reason}; its last output:\n{tail}")
    }
}

/// Waits for the address line on `stdout`.
async fn read_address(stdout: Option<tokio::process::ChildStdout>) -> Result<String, StartError> {
    let stdout = stdout.ok_or(StartError::NoStdout)?;
    let mut lines = BufReader::new(stdout).lines();
    let line = lines
        .next_line()
        .await
        .map_err(StartError::Read)?
        .ok_or(StartError::NoAddress)?;
    let Some(url) = line.strip_prefix(READY_PREFIX) else {
        return Err(StartError::NotAddress { line });
    };
    // Nothing else is ever printed; keep draining so the pipe never fills.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(url.trim().to_owned())
}

async fn supervise(
    command: ServeCommand,
    policy: Policy,
    status: watch::Sender<Status>,
    stop: CancellationToken,
) -> Stopped {
    let mut crashes = 0u32;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        status.send_replace(Status::Starting { attempt });
        let mut server = match Server::spawn(&command) {
            Ok(server) => server,
            Err(reason) => {
                status.send_replace(Status::GaveUp {
                    crashes,
                    reason: reason.to_string(),
                });
                stop.cancelled().await;
                status.send_replace(Status::Stopped);
                return Stopped::NotRunning;
            }
        };
        let started = Instant::now();
        let stdout = server.child.stdout.take();
        // Wait for the address, a stop, or the server's end.
        let ready = tokio::select! {
            () = stop.cancelled() => {
                let how = server.stop(None, &policy).await;
                status.send_replace(Status::Stopped);
                return how;
            }
            address = timeout(policy.ready_timeout, read_address(stdout)) => match address {
                Ok(Ok(url)) => Ok(url),
                Ok(Err(reason)) => Err(reason),
                Err(_) => Err(StartError::Timeout { secs: policy.ready_timeout.as_secs() }),
            },
        };
        let (reason, code, url) = match ready {
            Ok(url) => {
                status.send_replace(Status::Ready {
                    url: url.clone(),
                    pid: server.pid,
                });
                tokio::select! {
                    () = stop.cancelled() => {
                        let how = server.stop(Some(&url), &policy).await;
                        status.send_replace(Status::Stopped);
                        return how;
                    }
                    exit = server.child.wait() => {
                        let (reason, code) = describe_exit(exit);
                        (reason, code, Some(url))
                    }
                }
            }
            Err(reason) => {
                // Not ready: it exited, or printed something else, or hung.
                let exit = match timeout(Duration::from_millis(200), server.child.wait()).await {
                    Ok(exit) => Some(describe_exit(exit)),
                    Err(_) => None,
                };
                match exit {
                    Some((exited, code)) => (format!("{exited} before it was ready"), code, None),
                    None => (reason.to_string(), None, None),
                }
            }
        };
        // The server is gone or useless: clear out its group and reap it.
        server.kill_group();
        let _ = server.child.wait().await;
        let reason = with_tail(reason, &server.stderr_tail().await);
        tracing::warn!(%reason, "riot serve stopped unexpectedly");

        let stable = url.is_some() && started.elapsed() >= policy.stable_after;
        crashes = if stable { 1 } else { crashes + 1 };
        let usage_error = url.is_none() && code == Some(EXIT_USAGE);
        if usage_error || crashes >= policy.max_crashes {
            let reason = if usage_error {
                reason
            } else {
                format!("riot serve crashed {crashes} times in a row; gave up. {reason}")
            };
            status.send_replace(Status::GaveUp { crashes, reason });
            stop.cancelled().await;
            status.send_replace(Status::Stopped);
            return Stopped::NotRunning;
        }
        let after = backoff(&policy, crashes);
        status.send_replace(Status::Restarting {
            crashes,
            after,
            reason,
        });
        tokio::select! {
            () = stop.cancelled() => {
                status.send_replace(Status::Stopped);
                return Stopped::NotRunning;
            }
            () = sleep(after) => {}
        }
    }
}

/// The wait before the restart after the `crashes`th crash in a row.
fn backoff(policy: &Policy, crashes: u32) -> Duration {
    let doublings = crashes.saturating_sub(1).min(16);
    policy
        .first_backoff
        .saturating_mul(1 << doublings)
        .min(policy.max_backoff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_address_follows_from_the_page_address() {
        assert_eq!(
            acp_socket_url("http://127.0.0.1:4321/?token=abc").as_deref(),
            Some("ws://127.0.0.1:4321/acp?token=abc")
        );
        assert_eq!(
            acp_socket_url("http://[::1]:9/?x=1&token=t").as_deref(),
            Some("ws://[::1]:9/acp?token=t")
        );
        assert_eq!(acp_socket_url("http://127.0.0.1:1/"), None);
        assert_eq!(acp_socket_url("https://127.0.0.1:1/?token=a"), None);
    }

    #[test]
    fn reasons_read_as_a_person_sees_them() {
        assert_eq!(
            StartError::NotAddress {
                line: "Listening on 8080".into()
            }
            .to_string(),
            "riot serve printed \"Listening on 8080\" instead of its address"
        );
        assert_eq!(
            StartError::Timeout { secs: 30 }.to_string(),
            "riot serve printed no address within 30 s"
        );
        assert_eq!(
            ShutdownError::Refused {
                method: "_riot/shutdown",
                error: serde_json::json!({"code": -32601}),
            }
            .to_string(),
            r#"_riot/shutdown: {"code":-32601}"#
        );
        let gave_up = NotReady::GaveUp {
            crashes: 1,
            reason: "riot serve exited with code 2 before it was ready".into(),
        };
        assert_eq!(
            gave_up.to_string(),
            "riot serve exited with code 2 before it was ready"
        );
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let policy = Policy {
            first_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(3),
            ..Policy::default()
        };
        let waits: Vec<u128> = (1..=5).map(|n| backoff(&policy, n).as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 3000, 3000]);
    }
}
