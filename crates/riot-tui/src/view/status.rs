//! The status line below the live area: what runs, the model, the mode,
//! the context and tokens used, the cost, MCP servers and the sandbox.

use ratatui::text::{Line, Span};
use riot_protocol::PermissionMode;

use super::SPINNER;
use crate::app::App;
use crate::wrap::truncate;

/// `⠋ writing 12s · esc to stop   model · mode · context · tokens · MCP`.
pub(super) fn status_line(app: &App, width: usize) -> Line<'static> {
    let theme = app.theme;
    let mut spans = Vec::new();
    if !app.asking.is_empty() {
        // The person's time, not the model's.
        spans.push(Span::styled("? ", theme.question()));
        spans.push(Span::raw(format!(
            "waiting for your answer {}s",
            app.waited_s()
        )));
        spans.push(Span::styled(" · ", theme.dim()));
    } else if app.busy {
        let spin = SPINNER[usize::try_from(app.now / 100).unwrap_or(0) % SPINNER.len()];
        let activity = if app.activity.is_empty() {
            "working"
        } else {
            app.activity.as_str()
        };
        spans.push(Span::styled(format!("{spin} "), theme.spinner()));
        spans.push(Span::raw(format!("{activity} {}s", app.elapsed_s())));
        spans.push(Span::styled(" · esc to stop · ", theme.dim()));
    }
    let mut parts = vec![app.model.clone()];
    if app.thinking_level != riot_protocol::ThinkingLevel::Off {
        parts.push(format!("thinking {}", app.thinking_level.as_str()));
    }
    parts.push(mode_label(app.mode).to_owned());
    // What runs beside the conversation, before the figures: a narrow
    // terminal cuts the end of the line.
    let background = app
        .tasks
        .iter()
        .filter(|t| t.state == riot_kernel::background::TaskState::Running)
        .count();
    if background > 0 {
        parts.push(format!("{background} background (/tasks)"));
    }
    if !app.terminals.is_empty() {
        let n = app.terminals.len();
        parts.push(format!(
            "ctrl+t {}",
            crate::wrap::plural(n as u64, "terminal", "terminals")
        ));
    }
    if app.context > 0 {
        match app.context_window {
            Some(window) if window > 0 => parts.push(format!(
                "context {} ({}%)",
                tokens(app.context),
                app.context * 100 / window
            )),
            _ => parts.push(format!("context {}", tokens(app.context))),
        }
    }
    let total = app.usage.input_tokens
        + app.usage.output_tokens
        + app.usage.cache_read_tokens
        + app.usage.cache_write_tokens;
    if total > 0 {
        parts.push(format!("{} tokens", tokens(total)));
    }
    if let Some(usd) = app.cost {
        parts.push(riot_protocol::format_usd(usd));
    }
    let mcp = app.mcp;
    if mcp.starting + mcp.ready + mcp.failed > 0 {
        let mut m = Vec::new();
        if mcp.starting > 0 {
            m.push(format!("{} starting", mcp.starting));
        }
        if mcp.ready > 0 {
            m.push(format!("{} ready", mcp.ready));
        }
        if mcp.failed > 0 {
            m.push(format!("{} failed", mcp.failed));
        }
        parts.push(format!("MCP {}", m.join(", ")));
    }
    if !app.busy {
        parts.push("shift+tab mode".to_owned());
    }
    let used: usize = spans.iter().map(Span::width).sum();
    // Last, and only where it fits: it does not change during the
    // session, and the figures before it matter more on a narrow terminal.
    if let Some(sandbox) = &app.sandbox {
        let room = width.saturating_sub(used);
        let so_far = parts.join(" · ").chars().count();
        let long = sandbox_label(sandbox);
        let short = sandbox.split(':').next().unwrap_or_default().to_owned();
        for label in [long, short] {
            if so_far + 3 + label.chars().count() <= room {
                parts.push(label);
                break;
            }
        }
    }
    let rest = truncate(&parts.join(" · "), width.saturating_sub(used));
    spans.push(Span::styled(rest, theme.dim()));
    Line::from(spans)
}

/// The sandbox as the status line shows it: a reason it is not enforced is
/// cut to a few words (`riot sandbox check` has it whole).
fn sandbox_label(label: &str) -> String {
    const REASON_CHARS: usize = 40;
    match label.strip_prefix("not sandboxed: ") {
        Some(reason) if reason.chars().count() > REASON_CHARS => {
            let cut: String = reason.chars().take(REASON_CHARS).collect();
            format!("not sandboxed: {}…", cut.trim_end())
        }
        _ => label.to_owned(),
    }
}

/// How the status line names a mode.
pub fn mode_label(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "ask before edits",
        PermissionMode::AcceptEdits => "⏵⏵ accept edits",
        PermissionMode::Plan => "⏸ plan mode",
        PermissionMode::Auto => "auto mode",
        PermissionMode::Bypass => "bypass permissions",
        PermissionMode::DontAsk => "don't ask",
        PermissionMode::Unattended => "unattended",
    }
}

fn tokens(n: u64) -> String {
    if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}
