#![allow(clippy::disallowed_methods)] // starts Chromium: builds and spawns an OS process
#![allow(unsafe_code)] // pipes for fds 3/4 and pre_exec are libc calls

//! A small typed client of the Chrome DevTools Protocol over
//! `--remote-debugging-pipe`: Chromium reads commands from fd 3 and writes
//! replies and events to fd 4, each a JSON object ended by a NUL byte. No
//! TCP port is opened, so no other local user can reach the browser.

use std::collections::HashMap;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::sync::oneshot;

use super::guard::RequestGuard;
use crate::group::GroupGuard;

/// How long one command may take.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, CdpError>>>>>;

/// Why a DevTools command got no result.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CdpError {
    /// The command could not be written as JSON.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The pipe to the browser would not take the command.
    #[error("the browser stopped answering ({0})")]
    Write(#[source] std::io::Error),
    /// The browser ended before it answered.
    #[error("the browser exited")]
    Exited,
    /// No answer in [`COMMAND_TIMEOUT`].
    #[error("the browser did not answer {method} within {secs} s")]
    Timeout { method: String, secs: u64 },
    /// The browser answered with an error: its message.
    #[error("{0}")]
    Reply(String),
}

/// Events the browser keeps: console lines since the last read, and the
/// requests the guard refused since the last action.
#[derive(Debug, Default)]
pub(crate) struct Events {
    pub console: Vec<String>,
    pub blocked: Vec<String>,
}

impl Events {
    /// Records a refusal (`[blocked by Riot] …`): once among the next
    /// action's notes, and in the console; both bounded, so a page that
    /// retries in a loop cannot fill memory.
    pub(crate) fn refused(events: &Mutex<Events>, line: String) {
        let mut events = events.lock().unwrap_or_else(|e| e.into_inner());
        if events.blocked.len() < 20 && !events.blocked.contains(&line) {
            events.blocked.push(line.clone());
        }
        if events.console.len() < 1000 {
            events.console.push(line);
        }
    }
}

/// The command side of the pipe, shared by the tool's calls and the
/// handler that answers paused requests and new targets.
#[derive(Debug)]
struct Link {
    writer: tokio::sync::Mutex<pipe::Sender>,
    pending: Pending,
    next_id: AtomicU64,
}

/// A running Chromium and the pipe to it.
#[derive(Debug)]
pub(crate) struct Cdp {
    link: Arc<Link>,
    pub events: Arc<Mutex<Events>>,
    pub requests: Arc<RequestGuard>,
    child: Child,
    guard: GroupGuard,
    pub pid: u32,
}

#[derive(Serialize)]
struct Command<'a> {
    id: u64,
    method: &'a str,
    params: Value,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a str>,
}

fn pipe_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [0; 2];
    // SAFETY: pipe2 fills the two-element array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A copy of `fd` numbered 10 or above, so that placing the child's ends on
/// 3 and 4 cannot overwrite one with the other.
fn high(fd: &OwnedFd) -> std::io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if new < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh descriptor owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

impl Cdp {
    /// Starts `executable` with `args` in its own process group, the pipe on
    /// fds 3 and 4.
    pub(crate) fn start(
        executable: &Path,
        args: &[String],
        events: Arc<Mutex<Events>>,
        requests: Arc<RequestGuard>,
    ) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        let (cmd_read, cmd_write) = pipe_pair()?;
        let (reply_read, reply_write) = pipe_pair()?;
        let child_in = high(&cmd_read)?;
        let child_out = high(&reply_write)?;
        drop((cmd_read, reply_write));
        let (fd_in, fd_out) = (child_in.as_raw_fd(), child_out.as_raw_fd());
        let mut cmd = tokio::process::Command::new(executable);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0);
        let parent = std::process::id();
        // SAFETY: between fork and exec only async-signal-safe calls are
        // made (dup2, prctl, getppid); nothing allocates.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(fd_in, 3) < 0 || libc::dup2(fd_out, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                #[cfg(target_os = "linux")]
                {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if u32::try_from(libc::getppid()).ok() != Some(parent) {
                        return Err(std::io::Error::other("parent exited during spawn"));
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        drop((child_in, child_out));
        let pid = child.id().unwrap_or_default();
        let guard = GroupGuard::new(Some(pid));
        let writer = pipe::Sender::from_owned_fd(cmd_write)?;
        let reader = pipe::Receiver::from_owned_fd(reply_read)?;
        let link = Arc::new(Link {
            writer: tokio::sync::Mutex::new(writer),
            pending: Arc::default(),
            next_id: AtomicU64::new(1),
        });
        tokio::spawn(read_loop(
            reader,
            Arc::clone(&link),
            Arc::clone(&events),
            Arc::clone(&requests),
        ));
        Ok(Self {
            link,
            events,
            requests,
            child,
            guard,
            pid,
        })
    }

    /// Sends one command (to `session` when given) and waits for its result.
    pub(crate) async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        self.link.call(session, method, params).await
    }

    /// Whether the browser process is still running.
    pub(crate) fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the whole process group and reaps the browser.
    pub(crate) async fn kill(mut self) {
        self.guard.kill_now();
        let _ = self.child.wait().await;
    }
}

impl Link {
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        let mut line = serde_json::to_vec(&Command {
            id,
            method,
            params,
            session_id: session,
        })?;
        line.push(0);
        {
            let mut writer = self.writer.lock().await;
            writer.write_all(&line).await.map_err(CdpError::Write)?;
        }
        match tokio::time::timeout(COMMAND_TIMEOUT, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(CdpError::Exited),
            Err(_) => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_owned(),
                    secs: COMMAND_TIMEOUT.as_secs(),
                })
            }
        }
    }
}

/// Readies a target the browser attached to (the page, a frame in another
/// process, a worker, a pop-up), which waits before it runs: its requests
/// pause for the guard, its own frames and workers attach the same way,
/// then it may run.
async fn prepare_target(link: Arc<Link>, events: Arc<Mutex<Events>>, session: String, info: Value) {
    let session = Some(session.as_str());
    let kind = info["type"].as_str().unwrap_or("target");
    let mut guarded = link
        .call(
            session,
            "Fetch.enable",
            json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
        )
        .await
        .map(|_| ());
    // A dedicated worker has no `Fetch` of its own: its requests go
    // through the frame that started it, which pauses them.
    if kind == "worker"
        && guarded
            .as_ref()
            .is_err_and(|e| matches!(e, CdpError::Reply(m) if m.contains("wasn't found")))
    {
        guarded = Ok(());
    }
    let nested = link
        .call(
            session,
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}),
        )
        .await;
    if let Err(why) = guarded.and(nested.map(|_| ())) {
        // Fail closed: a target whose requests cannot be judged never
        // runs; it is closed while it still waits.
        let url: String = info["url"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(200)
            .collect();
        let line = format!(
            "[blocked by Riot] a {kind} ({url}) was closed: its requests could not be checked ({why})"
        );
        Events::refused(&events, line);
        let _ = link
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": info["targetId"]}),
            )
            .await;
        return;
    }
    let _ = link
        .call(session, "Runtime.runIfWaitingForDebugger", json!({}))
        .await;
}

/// Answers one paused request: continued when the guard allows it, failed
/// (and reported) when not.
async fn answer_request(
    link: Arc<Link>,
    events: Arc<Mutex<Events>>,
    requests: Arc<RequestGuard>,
    session: String,
    params: Value,
) {
    let id = params["requestId"].clone();
    let url = params["request"]["url"].as_str().unwrap_or_default();
    let session = Some(session.as_str());
    match requests.judge(url).await {
        Ok(()) => {
            let _ = link
                .call(session, "Fetch.continueRequest", json!({"requestId": id}))
                .await;
        }
        Err(why) => {
            let shown: String = url.chars().take(200).collect();
            let line = format!("[blocked by Riot] {shown}: {why}");
            Events::refused(&events, line);
            let _ = link
                .call(
                    session,
                    "Fetch.failRequest",
                    json!({"requestId": id, "errorReason": "AccessDenied"}),
                )
                .await;
        }
    }
}

async fn read_loop(
    mut reader: pipe::Receiver,
    link: Arc<Link>,
    events: Arc<Mutex<Events>>,
    requests: Arc<RequestGuard>,
) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.iter().position(|b| *b == 0) {
            let message: Vec<u8> = buf.drain(..=end).collect();
            let Ok(value) = serde_json::from_slice::<Value>(&message[..end]) else {
                continue;
            };
            let session = value["sessionId"].as_str().unwrap_or_default().to_owned();
            match value["method"].as_str() {
                Some("Fetch.requestPaused") => {
                    tokio::spawn(answer_request(
                        Arc::clone(&link),
                        Arc::clone(&events),
                        Arc::clone(&requests),
                        session,
                        value["params"].clone(),
                    ));
                }
                Some("Target.attachedToTarget") => {
                    if let Some(child) = value["params"]["sessionId"].as_str() {
                        tokio::spawn(prepare_target(
                            Arc::clone(&link),
                            Arc::clone(&events),
                            child.to_owned(),
                            value["params"]["targetInfo"].clone(),
                        ));
                    }
                }
                _ => dispatch(value, &link.pending, &events),
            }
        }
    }
    // The browser is gone: every waiting command fails.
    link.pending
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clear();
}

fn dispatch(value: Value, pending: &Pending, events: &Mutex<Events>) {
    if let Some(id) = value.get("id").and_then(Value::as_u64) {
        let sender = pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if let Some(sender) = sender {
            let result = match value.get("error") {
                Some(error) => Err(CdpError::Reply(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error")
                        .to_owned(),
                )),
                None => Ok(value.get("result").cloned().unwrap_or(json!({}))),
            };
            let _ = sender.send(result);
        }
        return;
    }
    let method = value.get("method").and_then(Value::as_str).unwrap_or("");
    let params = value.get("params").cloned().unwrap_or(Value::Null);
    let line = match method {
        "Runtime.consoleAPICalled" => Some(console_line(&params)),
        "Runtime.exceptionThrown" => Some(exception_line(&params)),
        "Log.entryAdded" => {
            let entry = &params["entry"];
            Some(format!(
                "[{}] {}{}",
                entry["level"].as_str().unwrap_or("log"),
                entry["text"].as_str().unwrap_or(""),
                entry["url"]
                    .as_str()
                    .map(|u| format!(" ({u})"))
                    .unwrap_or_default()
            ))
        }
        _ => None,
    };
    if let Some(line) = line {
        let mut events = events.lock().unwrap_or_else(|e| e.into_inner());
        // A page that logs in a loop must not fill memory.
        if events.console.len() < 1000 {
            events.console.push(line);
        }
    }
}

fn remote_object_text(arg: &Value) -> String {
    if let Some(value) = arg.get("value") {
        return match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    }
    arg.get("unserializableValue")
        .or_else(|| arg.get("description"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| arg["type"].as_str().unwrap_or("?"))
        .to_owned()
}

fn console_line(params: &Value) -> String {
    let kind = params["type"].as_str().unwrap_or("log");
    let args: Vec<String> = params["args"]
        .as_array()
        .map(|a| a.iter().map(remote_object_text).collect())
        .unwrap_or_default();
    format!("[{kind}] {}", args.join(" "))
}

fn exception_line(params: &Value) -> String {
    let details = &params["exceptionDetails"];
    let text = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("an uncaught error");
    let first = text.lines().next().unwrap_or(text);
    let place = match (details["url"].as_str(), details["lineNumber"].as_u64()) {
        (Some(url), Some(line)) if !url.is_empty() => format!(" ({url}:{})", line + 1),
        _ => String::new(),
    };
    format!("[uncaught error] {first}{place}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_and_exception_lines_read_like_devtools() {
        let console = json!({"type": "warning", "args": [{"type": "string", "value": "low disk"}, {"type": "number", "value": 3}]});
        assert_eq!(console_line(&console), "[warning] low disk 3");
        let thrown = json!({"exceptionDetails": {"text": "Uncaught", "lineNumber": 4, "url": "http://127.0.0.1:1/",
            "exception": {"type": "object", "description": "Error: boom\n    at http://127.0.0.1:1/:5:7"}}});
        assert_eq!(
            exception_line(&thrown),
            "[uncaught error] Error: boom (http://127.0.0.1:1/:5)"
        );
    }
}
