//! `riot exec`: one task without a UI (docs/interfaces.md). Text, json or
//! stream-json output; exit codes from the terminal reason; every Ask is a
//! Deny because nobody can answer; SIGINT stops the turn, saves the session
//! with pairing filled, and exits 130.
//!
//! The text format is for people: the answer alone on stdout, and on
//! stderr a live status line on a terminal ([`status`]), a line per tool
//! call with diffs and failing commands' output ([`report`]), and a summary
//! of denied calls with the flags that would allow them ([`denials`]). The
//! json and stream-json formats are for programs and are left as they are.

mod denials;
mod report;
mod status;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use futures::StreamExt;
use riot_kernel::config::FlagLayer;
use riot_kernel::{Kernel, NobodyAnswers, OpenOptions, ResumeFrom};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, Message, PermissionResult, SessionId, SystemLevel,
    TerminalReason, Usage,
};
use serde_json::{Value, json};

use crate::cli::{ExecArgs, OutputFormat, SharedOptions};
use crate::world;

use self::denials::{Probe, Widen};
use self::report::TextReport;
use self::status::{FRAME_MS, StatusLine};

/// Exit code for usage and configuration errors.
pub const EXIT_USAGE: i32 = 2;

/// The flags of the configuration layering.
pub fn flag_layer(shared: &SharedOptions) -> FlagLayer {
    FlagLayer {
        provider: shared.provider.map(|p| p.name().to_owned()),
        base_url: shared.base_url.clone(),
        model: shared.model.clone(),
        api_key_env: shared.api_key_env.clone(),
        permission_mode: shared.permission_mode,
        allow: shared.allow.clone(),
        ask: shared.ask.clone(),
        deny: shared.deny.clone(),
        ..FlagLayer::default()
    }
}

fn usage(message: &str) -> i32 {
    eprintln!("riot exec: {message}");
    EXIT_USAGE
}

/// The hint for a person who ran `riot exec` without a prompt at a
/// terminal, instead of waiting silently.
pub const STDIN_HINT: &str =
    "riot: reading the prompt from stdin; end with Ctrl-D, or pass it as an argument";

/// What `riot exec` learns about its terminal, once, in [`run`]. The
/// drawing code takes these values (and the clock) as arguments, so its
/// tests decide them; the CLI tests run the binary on a pseudo-terminal.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    /// stdin is a terminal: nobody is piping a prompt in.
    pub stdin_is_tty: bool,
    /// stderr is a terminal: the status line is drawn there.
    pub stderr_is_tty: bool,
    /// Columns of stderr's terminal.
    pub width: usize,
}

impl Terminal {
    /// The real process's stdin and stderr.
    pub fn detect() -> Self {
        let stderr = std::io::stderr();
        let width = terminal_size::terminal_size_of(&stderr)
            .map_or(80, |(terminal_size::Width(w), _)| usize::from(w));
        Self {
            stdin_is_tty: std::io::stdin().is_terminal(),
            stderr_is_tty: stderr.is_terminal(),
            width,
        }
    }
}

/// The permission chain as `riot permissions check` runs it, with this
/// run's flags: the summary of denials asks it which flags would allow a
/// call.
struct KernelProbe<'a> {
    kernel: &'a Kernel,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    flags: FlagLayer,
}

#[async_trait::async_trait]
impl Probe for KernelProbe<'_> {
    async fn decide(&self, tool: &str, input: &Value, widen: &Widen) -> Option<PermissionResult> {
        let mut flags = self.flags.clone();
        match widen {
            Widen::Nothing => {}
            Widen::Allow(rules) => flags.allow.extend(rules.iter().cloned()),
            Widen::Mode(mode) => flags.permission_mode = Some(*mode),
        }
        // Trust was recorded when the session opened, if asked for.
        self.kernel
            .check_permission(&self.cwd, &self.env, &flags, false, tool, input.clone())
            .await
            .ok()
    }
}

/// Runs `riot exec`; returns the exit code.
pub async fn run(shared: &SharedOptions, args: &ExecArgs) -> i32 {
    let terminal = Terminal::detect();
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None => {
            if terminal.stdin_is_tty {
                eprintln!("{STDIN_HINT}");
            }
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                return usage(&format!("cannot read the prompt from stdin: {e}"));
            }
            text
        }
    };
    if prompt.trim().is_empty() {
        return usage("no prompt: pass it as an argument or on stdin");
    }
    let env = world::environment();
    let home = match world::riot_home(&env) {
        Ok(h) => h,
        Err(e) => return usage(&e),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return usage(&e),
    };
    let caps = world::capabilities();
    let clock = Arc::clone(&caps.clock);
    let started = clock.now_ms();
    let kernel = Kernel::new(caps, home);
    let resume = match (&args.resume, args.r#continue) {
        (Some(id), _) => Some(ResumeFrom::Id(SessionId::new(id.clone()))),
        (None, true) => Some(ResumeFrom::Latest),
        (None, false) => None,
    };
    let probe = KernelProbe {
        kernel: &kernel,
        cwd: cwd.clone(),
        env: env.clone(),
        flags: flag_layer(shared),
    };
    let options = OpenOptions {
        cwd: cwd.clone(),
        env,
        flags: flag_layer(shared),
        trust_project: shared.trust_project,
        max_turns: Some(shared.max_turns.unwrap_or(100)),
        resume,
        gate: Arc::new(NobodyAnswers),
        mcp_servers: Vec::new(),
    };
    let mut session = match kernel.open(options).await {
        Ok(s) => s,
        Err(riot_kernel::KernelError::Usage(m)) => return usage(&m),
        Err(e) => {
            eprintln!("riot exec: {e}");
            return 1;
        }
    };
    for notice in session.notices() {
        eprintln!("riot: {notice}");
    }
    let session_id = session.id().to_string();

    let format = args.output_format;
    let mut report = (format == OutputFormat::Text).then(|| {
        let status = StatusLine::new(
            Box::new(std::io::stderr()),
            terminal.stderr_is_tty,
            terminal.width,
            Arc::clone(&clock),
        );
        TextReport::new(status, args.verbose)
    });
    let live = report.as_ref().is_some_and(TextReport::is_live);

    let cancel = CancelScope::new();
    let interrupt = cancel.clone();
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            // On a terminal the status line is on this row: erase it first.
            let erase = if live { status::ERASE } else { "" };
            eprintln!("{erase}riot: stopping (press Ctrl-C again to quit at once)");
            interrupt.cancel(CancelReason::User);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let mut stdout = std::io::stdout().lock();
    let mut turns = 0u32;
    let mut usage_sum = Usage::default();
    let mut final_text = String::new();
    let mut reason = None;
    {
        let mut events = std::pin::pin!(session.turn(&prompt, cancel));
        // The status line's timer; only a terminal has one.
        let mut tick = clock.sleep_ms(FRAME_MS);
        loop {
            let event = if live {
                match futures::future::select(events.next(), &mut tick).await {
                    futures::future::Either::Left((event, _)) => event,
                    futures::future::Either::Right(((), _)) => {
                        tick = clock.sleep_ms(FRAME_MS);
                        if let Some(r) = report.as_mut() {
                            r.tick();
                        }
                        continue;
                    }
                }
            } else {
                events.next().await
            };
            let Some(event) = event else { break };
            if format == OutputFormat::StreamJson {
                let line = serde_json::to_string(&event).unwrap_or_default();
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
            }
            if let Some(r) = report.as_mut() {
                r.event(&event);
            }
            match &event {
                AgentEvent::RequestStart { .. } => turns += 1,
                AgentEvent::Usage { usage, .. } => usage_sum.add(usage),
                AgentEvent::Message {
                    message: Message::Assistant(a),
                } => {
                    let text = a.text();
                    if !text.trim().is_empty() {
                        final_text = text;
                    }
                }
                AgentEvent::Message {
                    message: Message::System(s),
                } if format != OutputFormat::Text && s.level == SystemLevel::Error => {
                    eprintln!("riot: {}", s.text);
                }
                AgentEvent::Done { reason: r } => reason = Some(r.clone()),
                _ => {}
            }
        }
    }
    signals.abort();
    if let Some(r) = report.as_mut() {
        r.finish();
    }
    if let Err(e) = session.save_file_state().await {
        tracing::warn!(error = %e, "could not save the session's file state");
    }
    let reason = reason.unwrap_or(TerminalReason::Error {
        error: riot_protocol::AgentError {
            kind: riot_protocol::ErrorKind::Internal,
            message: "the turn ended without a terminal reason".into(),
        },
    });
    let result = json!({
        "type": "result",
        "session_id": session_id,
        "reason": reason.name(),
        "is_error": reason.is_error(),
        "result": final_text,
        "turns": turns,
        "usage": {
            "input_tokens": usage_sum.input_tokens,
            "output_tokens": usage_sum.output_tokens,
            "cache_read_tokens": usage_sum.cache_read_tokens,
            "cache_write_tokens": usage_sum.cache_write_tokens,
        },
        "duration_ms": clock.now_ms().saturating_sub(started),
    });
    let side = session.side_usage();
    let mut result = result;
    if side != Usage::default() {
        // docs/interfaces.md: side requests (compaction summaries) are reported apart.
        result["side_usage"] = json!({
            "input_tokens": side.input_tokens,
            "output_tokens": side.output_tokens,
            "cache_read_tokens": side.cache_read_tokens,
            "cache_write_tokens": side.cache_write_tokens,
        });
    }
    match format {
        OutputFormat::Text => {
            if !final_text.is_empty() {
                let _ = writeln!(stdout, "{}", final_text.trim_end());
            }
            let _ = stdout.flush();
            match &reason {
                TerminalReason::MaxTurns => {
                    eprintln!("riot: stopped after the maximum number of turns (--max-turns)")
                }
                TerminalReason::Aborted { .. } => {
                    eprintln!("riot: interrupted; session {session_id} saved")
                }
                _ => {}
            }
            // Last, so a person sees it: what was denied and how to allow
            // it. The exit code stays that of the turn (see `denials`).
            if let Some(r) = report.as_ref() {
                for line in denials::summary(r.denials(), &cwd, &probe).await {
                    eprintln!("{line}");
                }
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let _ = writeln!(stdout, "{result}");
        }
    }
    let _ = stdout.flush();
    reason.exit_code()
}
