//! The editor's terminals: when the client advertises `terminal` in
//! `initialize`, Bash's foreground commands run through
//! `terminal/create` (the command as Riot's runner would start it, so
//! inside the OS sandbox when that is on), `terminal/wait_for_exit`,
//! `terminal/kill` (timeout, cancellation), `terminal/output` and always
//! `terminal/release`; the tool call embeds the terminal so the person
//! watches it live, and keeps it after the release (the final update does
//! not send it again: ACP embeds a terminal only before its release). The
//! model reads the result exactly as if Riot had run the command (Bash
//! formats it). The kill and the release are sent without waiting, from a
//! guard made where the `terminal/create` reply arrives, so a cancelled
//! turn cannot leave a terminal behind, even one still being created. Background commands and the Terminal
//! tool (which needs to type into its program, which ACP terminals cannot)
//! stay Riot's.

use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest,
    SessionNotification, SessionUpdate, Terminal, TerminalExitStatus, TerminalId,
    TerminalOutputRequest, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    WaitForTerminalExitRequest,
};
use async_trait::async_trait;
use riot_protocol::{
    CaptureLimit, CapturedOutput, Clock, CommandHost, ProcessError, ProcessOutput, ProcessSpec,
};
use tokio_util::sync::CancellationToken;

use crate::mapping::{self, ToolCalls};

/// How long (ms) a killed command's terminal may take to report its exit
/// before Riot reads its output anyway.
const AFTER_KILL_MS: u64 = 10_000;

/// Runs a session's foreground Bash commands in the client's terminals.
#[derive(Debug)]
pub struct EditorTerminals {
    connection: ConnectionTo<Client>,
    /// Set once the kernel has opened the session.
    session_id: OnceLock<String>,
    /// The session's record of which tool calls the client knows.
    calls: Arc<Mutex<ToolCalls>>,
    /// Times the command out.
    clock: Arc<dyn Clock>,
}

impl EditorTerminals {
    pub fn new(
        connection: ConnectionTo<Client>,
        calls: Arc<Mutex<ToolCalls>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            connection,
            session_id: OnceLock::new(),
            calls,
            clock,
        }
    }

    /// Binds the terminals to the session their requests name.
    pub fn bind(&self, session_id: &str) {
        let _ = self.session_id.set(session_id.to_owned());
    }

    /// Shows the terminal in its tool call (announcing the call first if
    /// the client has not heard of it yet, as a subagent's call).
    fn embed(&self, session_id: &str, tool_use_id: &str, terminal_id: &TerminalId, title: &str) {
        let first = {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.embed_terminal(tool_use_id);
            calls.announce(tool_use_id)
        };
        let terminal = ToolCallContent::Terminal(Terminal::new(terminal_id.clone()));
        let mut updates = Vec::new();
        if first {
            updates.push(mapping::tool_call(
                tool_use_id,
                "Bash",
                title,
                None,
                ToolCallStatus::InProgress,
            ));
        }
        updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            tool_use_id.to_owned(),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![terminal]),
        )));
        for update in updates {
            if let Err(e) = self
                .connection
                .send_notification(SessionNotification::new(session_id.to_owned(), update))
            {
                tracing::warn!(error = %e, "could not show the editor's terminal in its tool call");
            }
        }
    }
}

/// The command line the editor starts for `spec`: `env` removes the
/// variables Riot keeps from commands (the model keys, which the editor's
/// own environment may hold), and `sh` gives the command an empty stdin
/// as Riot's runner does, then runs the program with its arguments.
pub fn editor_command(spec: &ProcessSpec) -> (String, Vec<String>) {
    let mut args = Vec::new();
    for name in &spec.env_remove {
        args.push("-u".to_owned());
        args.push(name.clone());
    }
    args.extend(["sh", "-c", "exec \"$@\" < /dev/null", "sh"].map(str::to_owned));
    args.push(spec.program.clone());
    args.extend(spec.args.iter().cloned());
    ("env".to_owned(), args)
}

/// The editor's terminal output as a captured stream: the first
/// `head_bytes` and the rest (it fits: the terminal keeps at most
/// `head_bytes + tail_bytes`). When the terminal cut its beginning, the
/// head says so and the output counts as truncated, by an unknown amount.
pub fn captured(output: &str, truncated: bool, limit: CaptureLimit) -> CapturedOutput {
    let total_bytes = output.len() as u64;
    if truncated {
        return CapturedOutput {
            head: format!(
                "[… the beginning of the output was cut: the editor's terminal keeps only the last {} bytes …]\n",
                limit.head_bytes + limit.tail_bytes
            ),
            tail: output.to_owned(),
            total_bytes,
            omitted_bytes: 0,
            beginning_cut: true,
        };
    }
    let mut split = limit.head_bytes.min(output.len());
    while !output.is_char_boundary(split) {
        split -= 1;
    }
    CapturedOutput {
        head: output[..split].to_owned(),
        tail: output[split..].to_owned(),
        total_bytes,
        omitted_bytes: 0,
        beginning_cut: false,
    }
}

/// A signal as the editor names it (`SIGKILL`, `KILL` or `9`) to its number.
fn signal_number(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    let name = name.strip_prefix("SIG").unwrap_or(name);
    Some(match name {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "ILL" => 4,
        "TRAP" => 5,
        "ABRT" => 6,
        "BUS" => 7,
        "FPE" => 8,
        "KILL" => 9,
        "USR1" => 10,
        "SEGV" => 11,
        "USR2" => 12,
        "PIPE" => 13,
        "ALRM" => 14,
        "TERM" => 15,
        _ => return None,
    })
}

/// How the wait ended.
enum Ended {
    Exited(Result<TerminalExitStatus, agent_client_protocol::Error>),
    TimedOut,
    Cancelled,
}

/// Owns a terminal the editor created: dropped, it kills the command
/// (unless it ended or was already killed) and releases the terminal, both
/// sent without waiting for a reply, so nothing can cancel them. It is
/// made where the `terminal/create` reply arrives, so a terminal whose
/// call was dropped meanwhile (a cancelled turn drops its running tools)
/// is killed and released as well; Riot's own runner kills the process
/// group on drop the same way.
struct TerminalGuard {
    connection: ConnectionTo<Client>,
    session_id: String,
    terminal_id: TerminalId,
    /// The command may still run: kill it before the release.
    needs_kill: bool,
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        if self.needs_kill {
            let kill = KillTerminalRequest::new(self.session_id.clone(), self.terminal_id.clone());
            self.connection.send_request(kill).detach();
        }
        let release =
            ReleaseTerminalRequest::new(self.session_id.clone(), self.terminal_id.clone());
        self.connection.send_request(release).detach();
    }
}

fn could_not_open(program: &str, why: &str) -> ProcessError {
    ProcessError::Spawn {
        program: program.to_owned(),
        source: std::io::Error::other(format!(
            "the editor could not open a terminal for it: {why}"
        )),
    }
}

/// The command started, but how it ended could not be read.
fn result_lost(what: &str, e: &agent_client_protocol::Error) -> ProcessError {
    ProcessError::ResultLost(format!(
        "the editor's terminal failed to {what}: {}",
        e.message
    ))
}

impl EditorTerminals {
    /// Asks the editor for a terminal running `request`. The reply is
    /// handled by a task of the connection, not by this call: if the call
    /// is dropped first, the guard made from the reply is dropped there
    /// (or with the channel), which kills and releases the terminal.
    async fn create(
        &self,
        session_id: &str,
        program: &str,
        request: CreateTerminalRequest,
    ) -> Result<TerminalGuard, ProcessError> {
        let (created_tx, created_rx) = tokio::sync::oneshot::channel();
        let connection = self.connection.clone();
        let session_id = session_id.to_owned();
        self.connection
            .spawn(async move {
                let created = connection.send_request(request).block_task().await;
                let guard = created.map(|c| TerminalGuard {
                    connection,
                    session_id,
                    terminal_id: c.terminal_id,
                    needs_kill: true,
                });
                // Refused when the call is gone: the guard drops here.
                drop(created_tx.send(guard));
                Ok(())
            })
            .map_err(|e| could_not_open(program, &e.message))?;
        match created_rx.await {
            Ok(Ok(guard)) => Ok(guard),
            Ok(Err(e)) => Err(could_not_open(program, &e.message)),
            Err(_) => Err(could_not_open(
                program,
                "the connection to the editor closed",
            )),
        }
    }
}

#[async_trait]
impl CommandHost for EditorTerminals {
    async fn run(
        &self,
        tool_use_id: &str,
        spec: ProcessSpec,
        cancel: CancellationToken,
    ) -> Result<ProcessOutput, ProcessError> {
        let Some(session_id) = self.session_id.get().cloned() else {
            return Err(ProcessError::Unavailable);
        };
        if spec.stdin.is_some() {
            // Bash never writes to stdin; a terminal could not take it.
            return Err(ProcessError::Unavailable);
        }
        let limit = spec.capture.head_bytes + spec.capture.tail_bytes;
        let (command, args) = editor_command(&spec);
        let env = spec
            .env_set
            .iter()
            .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
            .collect();
        let request = CreateTerminalRequest::new(session_id.clone(), command)
            .args(args)
            .env(env)
            .cwd(spec.cwd.clone())
            .output_byte_limit(limit as u64);
        let mut guard = self.create(&session_id, &spec.program, request).await?;
        let terminal_id = guard.terminal_id.clone();
        let title = spec.args.last().cloned().unwrap_or_default();
        // After what the turn said before the call.
        mapping::caught_up(&self.calls).await;
        self.embed(&session_id, tool_use_id, &terminal_id, &title);

        let wait = self
            .connection
            .send_request(WaitForTerminalExitRequest::new(
                session_id.clone(),
                terminal_id.clone(),
            ))
            .block_task();
        tokio::pin!(wait);
        let deadline = async {
            match spec.timeout_ms {
                Some(ms) => self.clock.sleep_ms(ms).await,
                None => std::future::pending().await,
            }
        };
        let ended = tokio::select! {
            exited = &mut wait => Ended::Exited(exited.map(|r| r.exit_status)),
            () = deadline => Ended::TimedOut,
            () = cancel.cancelled() => Ended::Cancelled,
        };
        let (status, timed_out, cancelled) = match ended {
            Ended::Exited(Ok(status)) => {
                guard.needs_kill = false;
                (Some(status), false, false)
            }
            // The command may still run: the guard kills it on the way out.
            Ended::Exited(Err(e)) => return Err(result_lost("wait for the command", &e)),
            stopped => {
                // Sent, not awaited: a dropped call cannot withdraw it.
                guard.needs_kill = false;
                let kill = KillTerminalRequest::new(session_id.clone(), terminal_id.clone());
                self.connection.send_request(kill).detach();
                let status = tokio::select! {
                    exited = &mut wait => exited.ok().map(|r| r.exit_status),
                    () = self.clock.sleep_ms(AFTER_KILL_MS) => None,
                };
                let timed_out = matches!(stopped, Ended::TimedOut);
                (status, timed_out, !timed_out)
            }
        };
        let output = self
            .connection
            .send_request(TerminalOutputRequest::new(
                session_id.clone(),
                terminal_id.clone(),
            ))
            .block_task()
            .await;
        // The release: sent now, never awaited (so never withdrawn).
        drop(guard);
        let output = output.map_err(|e| result_lost("report the output", &e))?;
        let status = status.or(output.exit_status);
        Ok(ProcessOutput {
            exit_code: status
                .as_ref()
                .and_then(|s| s.exit_code)
                .and_then(|c| i32::try_from(c).ok()),
            signal: status
                .as_ref()
                .and_then(|s| s.signal.as_deref())
                .and_then(signal_number),
            stdout: captured(&output.output, output.truncated, spec.capture),
            stderr: CapturedOutput::default(),
            timed_out,
            cancelled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: CaptureLimit = CaptureLimit {
        head_bytes: 4,
        tail_bytes: 4,
    };

    #[test]
    fn the_editor_runs_the_prepared_command_without_the_keys_and_with_empty_stdin() {
        let spec = ProcessSpec {
            program: "bwrap".into(),
            args: vec![
                "--die-with-parent".into(),
                "bash".into(),
                "-c".into(),
                "ls".into(),
            ],
            cwd: "/p".into(),
            env_set: vec![("PAGER".into(), "cat".into())],
            env_remove: vec!["ANTHROPIC_API_KEY".into(), "OPENAI_API_KEY".into()],
            timeout_ms: Some(1),
            capture: LIMIT,
            stdin: None,
            undoable_only: false,
        };
        let (command, args) = editor_command(&spec);
        assert_eq!(command, "env");
        assert_eq!(
            args,
            [
                "-u",
                "ANTHROPIC_API_KEY",
                "-u",
                "OPENAI_API_KEY",
                "sh",
                "-c",
                "exec \"$@\" < /dev/null",
                "sh",
                "bwrap",
                "--die-with-parent",
                "bash",
                "-c",
                "ls"
            ]
        );
    }

    #[test]
    fn output_splits_into_head_and_tail_and_a_cut_beginning_is_said() {
        let whole = captured("abcdefg", false, LIMIT);
        assert_eq!((whole.head.as_str(), whole.tail.as_str()), ("abcd", "efg"));
        assert_eq!((whole.total_bytes, whole.omitted_bytes), (7, 0));
        // A character is never split between head and tail.
        let wide = captured("abcé", false, LIMIT);
        assert_eq!((wide.head.as_str(), wide.tail.as_str()), ("abc", "é"));
        let cut = captured("lastbyte", true, LIMIT);
        assert_eq!(
            cut.head,
            "[… the beginning of the output was cut: the editor's terminal keeps only the last 8 bytes …]\n"
        );
        assert_eq!(cut.tail, "lastbyte");
        // Cut, by an amount the editor did not say.
        assert!(cut.truncated() && cut.beginning_cut);
        assert_eq!((cut.total_bytes, cut.omitted_bytes), (8, 0));
        assert!(!whole.truncated());
    }

    #[test]
    fn signals_are_read_by_name_or_number() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("TERM"), Some(15));
        assert_eq!(signal_number("2"), Some(2));
        assert_eq!(signal_number("SIGWHAT"), None);
    }
}
