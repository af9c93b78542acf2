//! The session's side of the transcript: its events and history become
//! rows — notes, the person's messages, replies committed as they settle,
//! tool results, the provider's searches — and the end of a turn.

#[allow(clippy::wildcard_imports)] // one impl of App, split by job
use super::*;

impl App {
    /// Adds rows to the scrollback, after a blank row if something came
    /// before.
    pub(super) fn push_block(&mut self, rows: Vec<Line<'static>>) {
        if rows.is_empty() {
            return;
        }
        if self.wrote {
            self.scrollback.push(Line::default());
        }
        self.wrote = true;
        self.blocks += 1;
        self.scrollback.extend(rows);
    }

    /// A one-line note in the conversation (system messages, stops).
    pub fn note(&mut self, level: SystemLevel, text: &str) {
        let (mark, style) = match level {
            SystemLevel::Info => ("ℹ ", self.theme.dim()),
            SystemLevel::Warning => ("⚠ ", self.theme.warning()),
            SystemLevel::Error => ("✗ ", self.theme.error()),
        };
        let width = usize::from(self.width);
        let mut rows = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lead = if i == 0 {
                Span::styled(mark, style)
            } else {
                Span::raw("  ")
            };
            rows.extend(wrap(
                &Line::from(Span::styled(line.to_owned(), style)),
                width,
                &[lead],
                &[Span::raw("  ")],
            ));
        }
        self.push_block(rows);
    }

    pub(super) fn user_rows(&self, text: &str) -> Vec<Line<'static>> {
        let width = usize::from(self.width);
        let style = self.theme.user();
        let mut rows = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lead = if i == 0 { "› " } else { "  " };
            rows.extend(wrap(
                &Line::from(Span::styled(line.to_owned(), style)),
                width,
                &[Span::styled(lead, style)],
                &[Span::raw("  ")],
            ));
        }
        rows
    }

    /// Shows an earlier conversation (a resumed session), as it happened.
    pub fn history(&mut self, messages: &[Message]) {
        for message in messages {
            match message {
                Message::User(u) if u.origin == MessageOrigin::Person => {
                    let text: Vec<&str> = u
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            UserBlock::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect();
                    if let Some(first) = text.first() {
                        if self.session_title.is_none() {
                            self.session_title = Some(short_title(first));
                        }
                        let rows = self.user_rows(first);
                        self.push_block(rows);
                    }
                }
                Message::User(u) => {
                    self.background_results(&u.content);
                    self.results(&u.content);
                }
                Message::Assistant(a) => {
                    if a.content
                        .iter()
                        .any(|b| matches!(b, AssistantBlock::Thinking { .. }))
                    {
                        self.fold_thinking(&thinking_of(a));
                    }
                    self.searches(a);
                    self.markdown_block(&a.text());
                    self.remember_calls(a);
                }
                Message::System(s) => self.note(s.level, &s.text),
            }
        }
    }

    /// The provider's web searches in a reply, drawn like WebSearch calls.
    pub(super) fn searches(&mut self, a: &riot_protocol::AssistantMessage) {
        for shown in a.content.iter().filter_map(AssistantBlock::search_shown) {
            let rows = tools::finished(
                tools::Finished {
                    name: "WebSearch",
                    describe: &shown.ui.describe,
                    ui: Some(&shown.ui),
                    is_error: shown.failed,
                    text: &shown.text,
                },
                usize::from(self.width),
                self.theme,
            );
            self.push_block(rows);
        }
    }

    pub(super) fn remember_calls(&mut self, a: &riot_protocol::AssistantMessage) {
        for call in a.tool_uses() {
            self.calls
                .insert(call.id.clone(), (call.name.to_owned(), call.input.clone()));
        }
    }

    pub(super) fn markdown_block(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let rows = markdown::render(text, usize::from(self.width), self.theme);
        self.push_block(rows);
    }

    pub(super) fn fold_thinking(&mut self, thinking: &str) {
        let words = thinking.split_whitespace().count();
        if words == 0 {
            return;
        }
        let row = Line::from(Span::styled(
            format!("✻ Thought ({words} words)"),
            self.theme.thinking(),
        ));
        self.push_block(vec![row]);
    }

    /// Moves the finished blocks of the streaming reply to the scrollback.
    pub(super) fn commit_stable(&mut self) {
        let rest = &self.text[self.committed..];
        let stable = markdown::stable_len(rest);
        if stable > 0 {
            let chunk = rest[..stable].to_owned();
            self.committed += stable;
            self.reply_rest(&chunk);
        }
    }

    /// Moves the rows of the streaming reply that can no longer change to
    /// the scrollback: the wrapped rows of a paragraph but its last, the
    /// lines of a code block but the one being written, the items of a list
    /// but the last ([`markdown::settle`]). The loop calls it before each
    /// frame; the live area then shows only the rest.
    pub fn settle(&mut self) {
        let rest = &self.text[self.committed..];
        if rest.trim().is_empty() {
            self.live = None;
            return;
        }
        let settled = markdown::settle(rest, usize::from(self.width), self.theme, self.skip);
        let mut rows = settled.rows;
        let live = rows.split_off(settled.settled);
        if !rows.is_empty() {
            self.reply_rows(rows);
            self.skip = settled.resume;
        }
        // A few rows at most: a table or a long line held back is not kept
        // room for after it settles.
        self.floor = self.floor.max(live.len().min(FLOOR));
        self.live = Some(Live {
            len: self.text.len(),
            committed: self.committed,
            skip: self.skip,
            width: usize::from(self.width),
            rows: live,
        });
    }

    /// The rows of the streaming reply not in the scrollback yet, at
    /// `width` columns.
    pub(crate) fn live_text(&self, width: usize) -> Vec<Line<'static>> {
        if let Some(live) = &self.live
            && live.len == self.text.len()
            && live.committed == self.committed
            && live.skip == self.skip
            && live.width == width
        {
            return live.rows.clone();
        }
        let rest = &self.text[self.committed..];
        markdown::render_from(rest, width, self.theme, self.skip)
    }

    /// The rows the live area keeps for the streaming reply
    /// ([`App::floor`]).
    pub fn floor(&self) -> usize {
        if self.busy { self.floor } else { 0 }
    }

    /// How many rows of the streaming reply the live area shows at
    /// `width` columns.
    pub fn live_rows(&self, width: usize) -> usize {
        if self.text[self.committed..].trim().is_empty() {
            0
        } else {
            self.live_text(width).len()
        }
    }

    /// Rows of the reply for the scrollback: after a blank row when they
    /// begin a block, or when something else went there since the reply's
    /// rows before them.
    pub(super) fn reply_rows(&mut self, rows: Vec<Line<'static>>) {
        if rows.is_empty() {
            return;
        }
        if self.skip > 0 && self.reply_block == self.blocks {
            self.scrollback.extend(rows);
        } else {
            self.push_block(rows);
        }
        self.reply_block = self.blocks;
    }

    /// Moves the rest of the reply's open block, `rest`, to the scrollback.
    pub(super) fn reply_rest(&mut self, rest: &str) {
        if !rest.trim().is_empty() {
            let rows = markdown::render_from(rest, usize::from(self.width), self.theme, self.skip);
            self.reply_rows(rows);
        }
        self.skip = 0;
        self.live = None;
    }

    /// Moves all of the streaming reply to the scrollback.
    pub(super) fn commit_all(&mut self, final_text: Option<&str>) {
        if !self.thinking.is_empty() {
            let thinking = std::mem::take(&mut self.thinking);
            self.fold_thinking(&thinking);
        }
        let text = final_text.unwrap_or(&self.text).to_owned();
        // Rows of the open block in the scrollback hold it to what
        // streamed.
        let streamed = if self.skip > 0 {
            &self.text[..]
        } else {
            &self.text[..self.committed]
        };
        let rest = if text.starts_with(streamed) {
            text.get(self.committed..).unwrap_or("").to_owned()
        } else {
            // The reply differs from what streamed (a non-streaming
            // fallback): show what was not shown.
            self.text.get(self.committed..).unwrap_or("").to_owned()
        };
        self.reply_rest(&rest);
        self.text.clear();
        self.committed = 0;
        self.floor = 0;
    }

    /// A background agent's result reaching the model: one dim row each
    /// (`⎿ background agent bg_1 (explore) completed`); the model's
    /// answer follows.
    pub(super) fn background_results(&mut self, content: &[UserBlock]) {
        for block in content {
            let UserBlock::Text { text } = block else {
                continue;
            };
            let Some(tag) = text
                .strip_prefix("<background-task ")
                .and_then(|rest| rest.split_once('>'))
                .map(|(tag, _)| tag)
            else {
                continue;
            };
            let attribute = |name: &str| {
                tag.split_once(&format!("{name}=\""))
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .map_or("", |(value, _)| value)
            };
            let row = format!(
                "  ⎿ background agent {} ({}) {}",
                attribute("id"),
                attribute("agent"),
                attribute("status")
            );
            let dim = self.theme.dim();
            self.push_block(vec![Line::from(Span::styled(row, dim))]);
        }
    }

    /// A turn Riot started by itself, to give the model what background
    /// agents returned while no turn ran: the app runs it as a prompt's.
    pub fn delivery_started(&mut self) {
        self.busy = true;
        self.turn_ended = false;
        self.turn_started = self.now;
        "thinking".clone_into(&mut self.activity);
    }

    pub(super) fn results(&mut self, content: &[UserBlock]) {
        for block in content {
            let UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ui,
            } = block
            else {
                continue;
            };
            let (name, _) = self
                .calls
                .get(tool_use_id)
                .cloned()
                .unwrap_or_else(|| (String::new(), Value::Null));
            let describe = self
                .running
                .iter()
                .find(|r| &r.id == tool_use_id)
                .map(|r| r.describe.clone())
                .unwrap_or_default();
            self.running.retain(|r| &r.id != tool_use_id);
            let text = content
                .iter()
                .find_map(|c| match c {
                    ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                        Some(text.as_str())
                    }
                    ToolResultContent::Image { .. } => None,
                })
                .unwrap_or("");
            let rows = tools::finished(
                tools::Finished {
                    name: &name,
                    describe: &describe,
                    ui: ui.as_ref(),
                    is_error: *is_error,
                    text,
                },
                usize::from(self.width),
                self.theme,
            );
            self.push_block(rows);
        }
    }

    /// Takes one event of the running turn.
    pub fn event(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::RequestStart { .. } => "thinking".clone_into(&mut self.activity),
            AgentEvent::Delta { delta } => match delta {
                StreamDelta::Text { text } => {
                    if !self.thinking.is_empty() {
                        let thinking = std::mem::take(&mut self.thinking);
                        self.fold_thinking(&thinking);
                    }
                    "writing".clone_into(&mut self.activity);
                    self.text.push_str(text);
                    self.commit_stable();
                }
                StreamDelta::Thinking { text } => {
                    "thinking".clone_into(&mut self.activity);
                    self.thinking.push_str(text);
                }
                StreamDelta::ToolInput { name, .. } => {
                    self.activity = format!("preparing {name}");
                }
            },
            AgentEvent::Message { message } => match message {
                Message::Assistant(a) => {
                    if self.thinking.is_empty() && self.text.is_empty() {
                        // Nothing streamed (a non-streaming reply).
                        let thinking = thinking_of(a);
                        self.fold_thinking(&thinking);
                    }
                    self.commit_all(Some(&a.text()));
                    self.searches(a);
                    self.remember_calls(a);
                    if a.interrupted {
                        let dim = self.theme.dim();
                        self.scrollback
                            .push(Line::from(Span::styled("  ⎿ interrupted", dim)));
                    }
                }
                Message::User(u) => match u.origin {
                    MessageOrigin::ToolResults => self.results(&u.content),
                    MessageOrigin::Person => {
                        // A queued message the loop delivered.
                        let text = u.content.iter().find_map(|b| match b {
                            UserBlock::Text { text } => Some(text.clone()),
                            _ => None,
                        });
                        if let Some(text) = text
                            && let Some(at) = self.queued.iter().position(|q| *q == text)
                        {
                            self.queued.remove(at);
                            let rows = self.user_rows(&text);
                            self.push_block(rows);
                        }
                    }
                    _ => {
                        self.background_results(&u.content);
                        self.results(&u.content);
                    }
                },
                Message::System(s) => self.note(s.level, &s.text),
            },
            AgentEvent::ToolStarted {
                tool_use_id,
                describe,
                name,
            } => {
                self.activity = format!("running {name}");
                self.running.push(Running {
                    id: tool_use_id.clone(),
                    describe: describe.clone(),
                    output: VecDeque::new(),
                });
            }
            AgentEvent::Progress {
                tool_use_id,
                payload,
            } => {
                if let Some(r) = self.running.iter_mut().find(|r| &r.id == tool_use_id) {
                    match payload {
                        ProgressPayload::Output { text, .. } => {
                            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                                r.output.push_back(line.to_owned());
                                if r.output.len() > LIVE_OUTPUT {
                                    r.output.pop_front();
                                }
                            }
                        }
                        ProgressPayload::Status { text } => {
                            r.output.clear();
                            r.output.push_back(text.clone());
                        }
                    }
                }
            }
            AgentEvent::PermissionRequest { .. } => {}
            AgentEvent::PermissionResolved { request_id, .. } => {
                // Answered elsewhere, timed out or cancelled: close it.
                self.asking.retain(|a| match a {
                    Asking::Permission { request_id: r, .. } => r != request_id,
                    Asking::Questions { .. } => true,
                });
                self.track_wait();
            }
            AgentEvent::Compacting { .. } => {
                "compacting the conversation".clone_into(&mut self.activity);
            }
            AgentEvent::Compacted { before, after, .. } => {
                self.note(
                    SystemLevel::Info,
                    &format!("Compacted the conversation: {before} → {after} tokens"),
                );
            }
            AgentEvent::PromptWithdrawn { .. } => {
                let dim = self.theme.dim();
                self.scrollback.push(Line::from(Span::styled(
                    "  ⎿ withdrawn: stopped before any reply",
                    dim,
                )));
            }
            AgentEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                self.note(
                    SystemLevel::Warning,
                    &format!(
                        "{reason}; retry {attempt} in {:.1} s",
                        *delay_ms as f64 / 1000.0
                    ),
                );
                "waiting to retry".clone_into(&mut self.activity);
            }
            AgentEvent::Usage { usage, .. } => {
                self.usage.add(usage);
                self.context = usage.input_tokens
                    + usage.cache_read_tokens
                    + usage.cache_write_tokens
                    + usage.output_tokens;
            }
            AgentEvent::Done { reason } => self.done(reason),
        }
    }

    pub(super) fn done(&mut self, reason: &TerminalReason) {
        self.commit_all(None);
        for r in std::mem::take(&mut self.running) {
            let dim = self.theme.dim();
            self.push_block(vec![Line::from(vec![
                Span::styled("● ", dim),
                Span::styled(r.describe, dim),
            ])]);
        }
        match reason {
            TerminalReason::Completed | TerminalReason::StopHookPrevented => {}
            TerminalReason::Aborted { .. } => {
                let dim = self.theme.dim();
                self.scrollback
                    .push(Line::from(Span::styled("  ⎿ stopped", dim)));
            }
            TerminalReason::MaxTurns => self.note(
                SystemLevel::Warning,
                "Stopped after the maximum number of turns (--max-turns).",
            ),
            TerminalReason::Refusal => {
                self.note(SystemLevel::Warning, "The model declined to answer.");
            }
            TerminalReason::Error { error } => self.note(SystemLevel::Error, &error.message),
        }
        self.busy = false;
        self.activity.clear();
        self.turn_ended = true;
        // Questions of the turn are over (their gate calls ended with it).
        self.asking.clear();
        self.asked_at = None;
        if self.queued.is_empty() {
            self.ring();
        } else {
            for text in std::mem::take(&mut self.queued) {
                let rows = self.user_rows(&text);
                self.push_block(rows);
            }
            self.busy = true;
            self.turn_started = self.now;
            self.effects.push(Effect::SendQueued);
        }
    }
}
