//! `riot exec`: one task without a UI (docs/interfaces.md). Text, json or
//! stream-json output; exit codes from the terminal reason; every Ask is a
//! Deny because nobody can answer; SIGINT stops the turn, saves the session
//! with pairing filled, and exits 130.

use std::io::{Read, Write};
use std::sync::Arc;

use futures::StreamExt;
use riot_kernel::config::FlagLayer;
use riot_kernel::{Kernel, NobodyAnswers, OpenOptions, ResumeFrom};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, Message, SessionId, SystemLevel, TerminalReason,
    ToolResultContent, Usage, UserBlock,
};
use serde_json::json;

use crate::cli::{ExecArgs, OutputFormat, SharedOptions};
use crate::world;

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
    }
}

fn usage(message: &str) -> i32 {
    eprintln!("riot exec: {message}");
    EXIT_USAGE
}

/// Runs `riot exec`; returns the exit code.
pub async fn run(shared: &SharedOptions, args: &ExecArgs) -> i32 {
    let prompt = match &args.prompt {
        Some(p) => p.clone(),
        None => {
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
    let options = OpenOptions {
        cwd,
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
        Err(riot_kernel::KernelError::Failed(m)) => {
            eprintln!("riot exec: {m}");
            return 1;
        }
    };
    for notice in session.notices() {
        eprintln!("riot: {notice}");
    }
    let session_id = session.id().to_string();

    let cancel = CancelScope::new();
    let interrupt = cancel.clone();
    let signals = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("riot: stopping (press Ctrl-C again to quit at once)");
            interrupt.cancel(CancelReason::User);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });

    let format = args.output_format;
    let mut stdout = std::io::stdout().lock();
    let mut turns = 0u32;
    let mut usage_sum = Usage::default();
    let mut final_text = String::new();
    let mut reason = None;
    {
        let mut events = std::pin::pin!(session.turn(&prompt, cancel));
        while let Some(event) = events.next().await {
            if format == OutputFormat::StreamJson {
                let line = serde_json::to_string(&event).unwrap_or_default();
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
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
                } if format == OutputFormat::Text || s.level == SystemLevel::Error => {
                    eprintln!("riot: {}", s.text);
                }
                AgentEvent::ToolStarted { describe, .. } if format == OutputFormat::Text => {
                    eprintln!("• {describe}");
                }
                AgentEvent::Message {
                    message: Message::User(u),
                } if format == OutputFormat::Text => {
                    // Failed and denied calls, so a CI log shows why.
                    for block in &u.content {
                        if let UserBlock::ToolResult {
                            content,
                            is_error: true,
                            ui,
                            ..
                        } = block
                        {
                            let what = ui.as_ref().map_or("a tool call", |u| u.describe.as_str());
                            let why = content
                                .iter()
                                .find_map(|c| match c {
                                    ToolResultContent::Text { text } => text.lines().next(),
                                    ToolResultContent::Image { .. } => None,
                                })
                                .unwrap_or("");
                            eprintln!("✗ {what}: {why}");
                        }
                    }
                }
                AgentEvent::Retrying {
                    attempt,
                    delay_ms,
                    reason,
                } if format == OutputFormat::Text => {
                    eprintln!("riot: {reason}; retry {attempt} in {delay_ms} ms");
                }
                AgentEvent::Done { reason: r } => reason = Some(r.clone()),
                _ => {}
            }
        }
    }
    signals.abort();
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
            match &reason {
                TerminalReason::MaxTurns => {
                    eprintln!("riot: stopped after the maximum number of turns (--max-turns)")
                }
                TerminalReason::Aborted { .. } => {
                    eprintln!("riot: interrupted; session {session_id} saved")
                }
                _ => {}
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            let _ = writeln!(stdout, "{result}");
        }
    }
    let _ = stdout.flush();
    reason.exit_code()
}
