//! What `riot exec --output-format text` writes on stderr while a turn
//! runs: one line per finished tool call (on a terminal) or per started
//! call (elsewhere), a compact diff line for every edit (`• Edit src/lib.rs
//! +3 −1`, the hunks with `--verbose`), a failing command's exit code and
//! last lines of output, and the live status line (see [`StatusLine`]).
//! Denied calls are collected for the summary at the end
//! ([`super::denials`]); the model's own words about them stay in the
//! transcript.

use std::collections::HashMap;

use riot_protocol::{
    AgentEvent, AssistantBlock, DiffHunk, DiffLineKind, Message, StreamDelta, ToolResultContent,
    ToolResultUi, ToolUseId, UiPayload, UserBlock,
};
use serde_json::Value;

use super::denials::{Denial, DenialKind, classify};
use super::status::{StatusLine, cut};

/// Lines of a failing command's output shown.
pub const TAIL_LINES: usize = 5;

/// Writes the text face of one turn.
#[derive(Debug)]
pub struct TextReport {
    status: StatusLine,
    verbose: bool,
    /// The tool calls of the assistant messages seen, by id.
    calls: HashMap<ToolUseId, (String, Value)>,
    /// Calls started and not finished, in start order: id and status text.
    running: Vec<(ToolUseId, String)>,
    denials: Vec<Denial>,
}

impl TextReport {
    pub fn new(status: StatusLine, verbose: bool) -> Self {
        Self {
            status,
            verbose,
            calls: HashMap::new(),
            running: Vec::new(),
            denials: Vec::new(),
        }
    }

    /// Redraws the status line (the caller's timer).
    pub fn tick(&mut self) {
        self.status.tick();
    }

    /// Whether a status line is drawn (stderr is a terminal).
    pub fn is_live(&self) -> bool {
        self.status.is_live()
    }

    /// Erases the status line for good; call before printing the answer.
    pub fn finish(&mut self) {
        self.status.finish();
    }

    /// The denied calls so far, in order.
    pub fn denials(&self) -> &[Denial] {
        &self.denials
    }

    /// Takes one event of the turn.
    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::RequestStart { .. } => self.status.set_activity("thinking"),
            AgentEvent::Delta { delta } => match delta {
                StreamDelta::Thinking { .. } => self.status.set_activity("thinking"),
                StreamDelta::Text { .. } => self.status.set_activity("writing"),
                StreamDelta::ToolInput { name, .. } => {
                    self.status.set_activity(&format!("preparing {name}"));
                }
            },
            AgentEvent::Message {
                message: Message::Assistant(a),
            } => {
                for block in &a.content {
                    if let AssistantBlock::ToolUse { id, name, input } = block {
                        self.calls.insert(id.clone(), (name.clone(), input.clone()));
                    }
                }
            }
            AgentEvent::ToolStarted {
                tool_use_id,
                name,
                describe,
            } => {
                if !self.status.is_live() {
                    // A log shows what runs when it starts; a terminal has
                    // the status line, and the call's line when it ends.
                    self.status.line(&format!("• {describe}"));
                }
                let input = self.calls.get(tool_use_id).map(|(_, i)| i);
                let doing = match input.and_then(|i| i.get("command")).and_then(Value::as_str) {
                    Some(command) if name == "Bash" => {
                        format!("running `{}`", command.lines().next().unwrap_or(""))
                    }
                    _ => format!("running {name}"),
                };
                self.running.push((tool_use_id.clone(), doing));
                self.show_running();
            }
            AgentEvent::Message {
                message: Message::User(u),
            } => {
                let results: Vec<_> = u
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        UserBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                            ui,
                        } => Some((tool_use_id, content, *is_error, ui.as_ref())),
                        _ => None,
                    })
                    .collect();
                if results.is_empty() {
                    return;
                }
                // The status line first, so it is not redrawn stale under
                // the lines of the finished calls.
                self.running
                    .retain(|(id, _)| !results.iter().any(|(done, ..)| *done == id));
                if self.running.is_empty() {
                    self.status.set_activity("thinking");
                } else {
                    self.show_running();
                }
                for (id, content, is_error, ui) in results {
                    self.result(id, content, is_error, ui);
                }
            }
            AgentEvent::Message {
                message: Message::System(s),
            } => self.status.line(&format!("riot: {}", s.text)),
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.status
                    .line(&format!("riot: {reason}; retry {attempt} in {delay_ms} ms"));
                self.status.set_activity("waiting to retry");
            }
            AgentEvent::Compacting { .. } => {
                self.status.set_activity("compacting the conversation");
            }
            AgentEvent::Done { .. } => self.status.finish(),
            _ => {}
        }
    }

    fn show_running(&mut self) {
        let text = match self.running.as_slice() {
            [] => return,
            [(_, one)] => one.clone(),
            [(_, first), rest @ ..] => format!("{first} and {} more", rest.len()),
        };
        self.status.set_activity(&text);
    }

    fn result(
        &mut self,
        id: &ToolUseId,
        content: &[ToolResultContent],
        is_error: bool,
        ui: Option<&ToolResultUi>,
    ) {
        let (tool, input) = self
            .calls
            .get(id)
            .cloned()
            .unwrap_or_else(|| (String::new(), Value::Null));
        let describe = ui.map_or_else(|| tool.clone(), |u| u.describe.clone());
        let what = if describe.is_empty() {
            "a tool call".to_owned()
        } else {
            describe.clone()
        };
        let text = content
            .iter()
            .find_map(|c| match c {
                ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                    Some(text.as_str())
                }
                ToolResultContent::Image { .. } => None,
            })
            .unwrap_or("");
        let payload = ui.and_then(|u| u.payload.as_ref());
        if !is_error {
            match payload {
                Some(UiPayload::FileDiff {
                    path,
                    created,
                    hunks,
                }) => {
                    let tool = if tool.is_empty() { "Edit" } else { &tool };
                    for line in diff_lines(tool, path, *created, hunks, self.verbose) {
                        self.status.line(&line);
                    }
                }
                _ if self.status.is_live() => self.status.line(&format!("• {what}")),
                _ => {}
            }
            return;
        }
        if let Some((kind, why)) = classify(text) {
            let line = match kind {
                DenialKind::NobodyAnswers => {
                    format!("✗ {what}: denied (it needs approval; see the end)")
                }
                DenialKind::Refused => format!("✗ {what}: denied — {why}"),
            };
            self.status.line(&line);
            self.denials.push(Denial {
                tool,
                input,
                describe,
                kind,
                why,
            });
            return;
        }
        if let Some(UiPayload::Command {
            exit_code,
            stdout,
            stderr,
            timed_out,
            ..
        }) = payload
        {
            for line in failed_command_lines(&what, *exit_code, *timed_out, stdout, stderr) {
                self.status.line(&line);
            }
            return;
        }
        let why = text.lines().next().unwrap_or("");
        self.status.line(&format!("✗ {what}: {why}"));
    }
}

/// `• Edit src/lib.rs  +3 −1`, then with `verbose` each hunk.
pub fn diff_lines(
    tool: &str,
    path: &str,
    created: bool,
    hunks: &[DiffHunk],
    verbose: bool,
) -> Vec<String> {
    let count = |kind: DiffLineKind| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == kind)
            .count()
    };
    let added = count(DiffLineKind::Added);
    let removed = count(DiffLineKind::Removed);
    let new = if created { " (new file)" } else { "" };
    let mut lines = vec![format!("• {tool} {path}  +{added} −{removed}{new}")];
    if verbose {
        for h in hunks {
            lines.push(format!(
                "    @@ -{},{} +{},{} @@",
                h.old_start, h.old_lines, h.new_start, h.new_lines
            ));
            for l in &h.lines {
                let mark = match l.kind {
                    DiffLineKind::Context => ' ',
                    DiffLineKind::Added => '+',
                    DiffLineKind::Removed => '-',
                };
                lines.push(format!("    {mark}{}", l.text));
            }
        }
    }
    lines
}

/// `✗ Run the tests (cargo test): exit code 101; last 5 of 40 lines:` and
/// those lines, stdout's then stderr's (their interleaving is not kept).
pub fn failed_command_lines(
    what: &str,
    exit_code: Option<i32>,
    timed_out: bool,
    stdout: &str,
    stderr: &str,
) -> Vec<String> {
    let how = match (timed_out, exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "ended by a signal".to_owned(),
    };
    let output: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let shown = &output[output.len().saturating_sub(TAIL_LINES)..];
    let head = match (output.len(), shown.len()) {
        (0, _) => format!("✗ {what}: {how}, no output"),
        (all, n) if all == n => format!("✗ {what}: {how}; output:"),
        (all, n) => format!("✗ {what}: {how}; last {n} of {all} lines:"),
    };
    let mut lines = vec![head];
    lines.extend(shown.iter().map(|l| format!("  │ {}", cut(l, 400))));
    lines
}

#[cfg(test)]
mod tests {
    use riot_protocol::DiffLine;

    use super::*;

    fn line(kind: DiffLineKind, text: &str) -> DiffLine {
        DiffLine {
            kind,
            text: text.into(),
        }
    }

    #[test]
    fn an_edit_is_one_line_and_its_hunks_with_verbose() {
        let hunks = [DiffHunk {
            old_start: 1,
            old_lines: 3,
            new_start: 1,
            new_lines: 4,
            lines: vec![
                line(DiffLineKind::Context, "a"),
                line(DiffLineKind::Removed, "b"),
                line(DiffLineKind::Added, "B"),
                line(DiffLineKind::Added, "B2"),
                line(DiffLineKind::Context, "c"),
            ],
        }];
        assert_eq!(
            diff_lines("Edit", "src/lib.rs", false, &hunks, false),
            ["• Edit src/lib.rs  +2 −1"]
        );
        assert_eq!(
            diff_lines("Write", "new.txt", true, &hunks, true),
            [
                "• Write new.txt  +2 −1 (new file)",
                "    @@ -1,3 +1,4 @@",
                "     a",
                "    -b",
                "    +B",
                "    +B2",
                "     c",
            ]
        );
    }

    #[test]
    fn a_failing_command_shows_its_exit_code_and_last_lines() {
        let stdout = "1\n2\n3\n4\n\n5\n6\n";
        assert_eq!(
            failed_command_lines("Count (seq 6)", Some(3), false, stdout, "oops\n"),
            [
                "✗ Count (seq 6): exit code 3; last 5 of 7 lines:",
                "  │ 3",
                "  │ 4",
                "  │ 5",
                "  │ 6",
                "  │ oops",
            ]
        );
        assert_eq!(
            failed_command_lines("false", Some(1), false, "", ""),
            ["✗ false: exit code 1, no output"]
        );
        assert_eq!(
            failed_command_lines("sleep 9", None, true, "", "partial\n"),
            ["✗ sleep 9: timed out; output:", "  │ partial"]
        );
    }
}
