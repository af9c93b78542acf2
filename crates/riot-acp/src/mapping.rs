//! Pure translations between Riot's types and ACP's: tool kinds, stop
//! reasons, permission modes and options, prompt content, and the
//! `session/update` payloads for messages and tool calls. No I/O here, so
//! the mapping is tested without a connection.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, Content, ContentBlock,
    ContentChunk, Diff, ImageContent, McpServer, PermissionOption, PermissionOptionKind, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionMode, SessionModeState, SessionUpdate,
    StopReason, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind, UnstructuredCommandInput,
};
use riot_protocol::{
    AssistantBlock, DiffHunk, DiffLineKind, ImageSource, Message, MessageOrigin, PermissionMode,
    PermissionOutcome, PermissionRequestDetail, SystemLevel, TerminalReason, TodoStatus,
    ToolResultContent, ToolResultUi, UiPayload, UserBlock,
};
use serde_json::{Value, json};

/// The ACP kind of a built-in tool, so editors pick the right icon and
/// grouping; MCP and unknown tools are `other`.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Read" => ToolKind::Read,
        "Edit" | "Write" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "BashOutput" | "KillShell" | "Terminal" => ToolKind::Execute,
        "Grep" | "Glob" | "ToolSearch" | "WebSearch" => ToolKind::Search,
        "WebFetch" => ToolKind::Fetch,
        "ExitPlanMode" => ToolKind::SwitchMode,
        "TodoWrite" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// docs/design.md §4: the terminal reason's ACP `stopReason`; `None` means
/// the prompt request fails with a JSON-RPC error instead.
pub fn stop_reason(reason: &TerminalReason) -> Option<StopReason> {
    Some(match reason.acp_stop_reason()? {
        "end_turn" => StopReason::EndTurn,
        "max_turn_requests" => StopReason::MaxTurnRequests,
        "cancelled" => StopReason::Cancelled,
        "refusal" => StopReason::Refusal,
        "max_tokens" => StopReason::MaxTokens,
        _ => return None,
    })
}

/// The permission modes offered as ACP session modes. Every session has
/// auto mode's classifier, so `auto` is offered; `unattended` comes only
/// from the person's own settings (docs/design.md §9.1), so it is not — a
/// session already in it still lists it.
pub const OFFERED_MODES: [PermissionMode; 6] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::Auto,
    PermissionMode::Bypass,
    PermissionMode::DontAsk,
];

fn mode_text(mode: PermissionMode) -> (&'static str, &'static str) {
    match mode {
        PermissionMode::Default => ("Default", "Ask before edits and commands"),
        PermissionMode::AcceptEdits => ("Accept edits", "Edit files in the project without asking"),
        PermissionMode::Plan => ("Plan", "Read-only until a plan is approved"),
        PermissionMode::Auto => ("Auto", "A classifier model answers what rules did not"),
        PermissionMode::Bypass => ("Bypass", "Do what rules and safety checks do not stop"),
        PermissionMode::DontAsk => ("Don't ask", "Every question is answered no"),
        PermissionMode::Unattended => ("Unattended", "Safety findings pass too"),
    }
}

/// The `modes` of `session/new` and `session/load`.
pub fn mode_state(current: PermissionMode) -> SessionModeState {
    let mut modes: Vec<PermissionMode> = OFFERED_MODES.to_vec();
    if !modes.contains(&current) {
        modes.push(current);
    }
    let available = modes
        .into_iter()
        .map(|m| {
            let (name, description) = mode_text(m);
            SessionMode::new(m.as_str(), name).description(description.to_owned())
        })
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// A mode id a client may switch to.
pub fn offered_mode(id: &str) -> Option<PermissionMode> {
    OFFERED_MODES.into_iter().find(|m| m.as_str() == id)
}

/// Option ids of `session/request_permission`.
pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";
pub const REJECT_ALWAYS: &str = "reject_always";

/// The options offered for a question; the "always" ones only when the
/// chain suggested a rule to remember.
pub fn permission_options(suggested_rule: Option<&str>) -> Vec<PermissionOption> {
    let mut options = vec![PermissionOption::new(
        ALLOW_ONCE,
        "Allow",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(rule) = suggested_rule {
        options.push(PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {rule}"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    if let Some(rule) = suggested_rule {
        options.push(PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {rule}"),
            PermissionOptionKind::RejectAlways,
        ));
    }
    options
}

/// The option id of a question's `index`-th choice.
pub fn answer_option_id(index: usize) -> String {
    format!("answer_{index}")
}

/// The option id for not answering a question.
pub const DECLINE: &str = "decline";

/// A structured question (AskUser, plan approval) as permission options:
/// one per choice, then "Don't answer".
pub fn question_options(question: &riot_protocol::Question) -> Vec<PermissionOption> {
    let mut options: Vec<PermissionOption> = question
        .options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let name = match &o.description {
                Some(d) if !d.trim().is_empty() => format!("{} — {}", o.label, d.trim()),
                _ => o.label.clone(),
            };
            PermissionOption::new(answer_option_id(i), name, PermissionOptionKind::AllowOnce)
        })
        .collect();
    options.push(PermissionOption::new(
        DECLINE,
        "Don't answer",
        PermissionOptionKind::RejectOnce,
    ));
    options
}

/// The label the client chose for `question`; `None` for "Don't answer"
/// or an id that names no choice.
pub fn chosen_label(question: &riot_protocol::Question, option_id: &str) -> Option<String> {
    let index: usize = option_id.strip_prefix("answer_")?.parse().ok()?;
    question.options.get(index).map(|o| o.label.clone())
}

/// The outcome of the option the client chose. An unknown option id is a
/// rejection: only an explicit allow lets a call run (docs/design.md §9.2).
pub fn chosen_outcome(option_id: &str, suggested_rule: Option<&str>) -> PermissionOutcome {
    match (option_id, suggested_rule) {
        (ALLOW_ONCE, _) => PermissionOutcome::AllowOnce,
        (ALLOW_ALWAYS, Some(rule)) => PermissionOutcome::AllowAlways {
            rule: rule.to_owned(),
        },
        (ALLOW_ALWAYS, None) => PermissionOutcome::AllowOnce,
        (REJECT_ALWAYS, Some(rule)) => PermissionOutcome::RejectAlways {
            rule: rule.to_owned(),
        },
        _ => PermissionOutcome::RejectOnce { feedback: None },
    }
}

/// Prompt content Riot does not take: the client's to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsupportedContent {
    /// An embedded resource (its text inline) rather than a link to it.
    #[error("embedded resources are not supported; send a resource link")]
    EmbeddedResource,
    /// An image block without base64 `data` (only a `uri`).
    #[error("an image block needs its base64 `data`; an image only by `uri` is not supported")]
    ImageWithoutData,
    /// An audio block.
    #[error("audio is not supported in prompts")]
    Audio,
    /// A kind of block this version of the protocol does not name.
    #[error("unsupported prompt content")]
    UnknownKind,
}

/// The prompt's content as the text of one user message and the images
/// sent after it. Resource links become a mention of their URI, which the
/// model reads with its tools; image blocks (base64 data) are passed on,
/// one image each.
pub fn prompt_text(
    blocks: &[ContentBlock],
) -> Result<(String, Vec<ImageSource>), UnsupportedContent> {
    let mut parts: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::ResourceLink(link) => {
                let path = link
                    .uri
                    .strip_prefix("file://")
                    .map_or_else(|| link.uri.clone(), str::to_owned);
                parts.push(format!("@{path}"));
            }
            ContentBlock::Resource(_) => return Err(UnsupportedContent::EmbeddedResource),
            ContentBlock::Image(image) => {
                if image.data.is_empty() {
                    return Err(UnsupportedContent::ImageWithoutData);
                }
                images.push(ImageSource {
                    media_type: image.mime_type.clone(),
                    data: image.data.clone(),
                });
            }
            ContentBlock::Audio(_) => return Err(UnsupportedContent::Audio),
            _ => return Err(UnsupportedContent::UnknownKind),
        }
    }
    Ok((parts.join("\n"), images))
}

fn text_block(text: impl Into<String>) -> ContentBlock {
    ContentBlock::from(text.into())
}

/// A text chunk of the agent's reply.
pub fn message_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(text)))
}

/// The MCP servers a client handed over in `session/new` or
/// `session/load`, as session-scoped configurations; the ones that cannot
/// be used (SSE, a bad name) are returned as reasons.
pub fn mcp_servers(servers: Vec<McpServer>) -> (Vec<riot_mcp::ServerConfig>, Vec<String>) {
    let mut configs = Vec::new();
    let mut refused = Vec::new();
    for server in servers {
        let (name, transport) = match server {
            McpServer::Stdio(s) => (
                s.name,
                riot_mcp::Transport::Stdio {
                    command: s.command.to_string_lossy().into_owned(),
                    args: s.args,
                    env: s.env.into_iter().map(|v| (v.name, v.value)).collect(),
                    cwd: None,
                },
            ),
            McpServer::Http(s) => (
                s.name,
                riot_mcp::Transport::Http {
                    url: s.url,
                    headers: s.headers.into_iter().map(|h| (h.name, h.value)).collect(),
                },
            ),
            McpServer::Sse(s) => {
                refused.push(format!(
                    "`{}` uses SSE, which Riot does not speak; use its streamable HTTP endpoint",
                    s.name
                ));
                continue;
            }
            _ => {
                refused.push("a transport Riot does not know".to_owned());
                continue;
            }
        };
        if let Some(why) = riot_mcp::naming::valid_server_name(&name) {
            refused.push(format!("`{name}`: {why}"));
            continue;
        }
        configs.push(riot_mcp::ServerConfig::session(name, transport));
    }
    (configs, refused)
}

/// The slash commands a person can type in this session
/// (`available_commands_update`).
pub fn available_commands(commands: &[riot_extensions::commands::Command]) -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
        commands
            .iter()
            .map(|c| {
                AvailableCommand::new(c.name.clone(), c.description.clone()).input(
                    c.argument_hint.as_ref().map(|hint| {
                        AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                            hint.clone(),
                        ))
                    }),
                )
            })
            .collect(),
    ))
}

/// A chunk of the agent's visible reasoning.
pub fn thought_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(text)))
}

/// A chunk of the person's prompt (replay of a loaded session).
pub fn user_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(text)))
}

/// A new tool call, announced with everything known when it is first seen.
pub fn tool_call(
    id: &str,
    name: &str,
    title: &str,
    input: Option<&Value>,
    status: ToolCallStatus,
) -> SessionUpdate {
    let mut call = ToolCall::new(id.to_owned(), title.to_owned())
        .name(name.to_owned())
        .kind(tool_kind(name))
        .status(status);
    if let Some(input) = input {
        call = call.raw_input(input.clone());
    }
    SessionUpdate::ToolCall(call)
}

/// The fields of a running call: its describe line as the title.
pub fn tool_started(id: &str, describe: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_owned(),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::InProgress)
            .title(describe.to_owned()),
    ))
}

/// The fields of a finished call: status, the model's content (text and
/// images; a document as its text), the UI payload as `rawOutput`, the file it touched as a
/// location.
pub fn tool_finished(
    content: &[ToolResultContent],
    is_error: bool,
    ui: Option<&ToolResultUi>,
    cwd: &Path,
) -> ToolCallUpdateFields {
    let status = if is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    let mut blocks: Vec<ToolCallContent> = content
        .iter()
        .map(|c| {
            ToolCallContent::Content(Content::new(match c {
                ToolResultContent::Text { text } => text_block(text.as_str()),
                // An image the tool read (Read on a PNG, a screenshot):
                // the editor or web UI shows it with the call.
                ToolResultContent::Image { source } => ContentBlock::Image(ImageContent::new(
                    source.data.clone(),
                    source.media_type.clone(),
                )),
                // The pages of a PDF the tool read: their text, not
                // megabytes of base64 for the editor to carry.
                ToolResultContent::Document { text, .. } => text_block(text.as_str()),
            }))
        })
        .collect();
    if let Some(diff) = ui
        .and_then(|u| u.payload.as_ref())
        .and_then(|p| diff_content(p, cwd))
    {
        blocks.push(diff);
    }
    let mut fields = ToolCallUpdateFields::new().status(status).content(blocks);
    if let Some(ui) = ui {
        fields = fields.title(ui.describe.clone());
        if let Some(payload) = &ui.payload {
            if let Ok(raw) = serde_json::to_value(payload) {
                fields = fields.raw_output(raw);
            }
            if let Some(path) = payload_path(payload) {
                fields = fields.locations(vec![ToolCallLocation::new(cwd.join(path))]);
            }
        }
    }
    fields
}

/// An RFC 3339 UTC timestamp of milliseconds since the epoch.
pub fn rfc3339(ms: u64) -> String {
    let secs = (ms / 1000) % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        riot_kernel::prompt::date_of(ms),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// An edit's hunks as ACP diff content: the changed region before and
/// after (a created file has no old text). ACP paths are absolute; a
/// relative one is resolved against the session's directory.
pub fn diff_content(payload: &UiPayload, cwd: &Path) -> Option<ToolCallContent> {
    let UiPayload::FileDiff {
        path,
        created,
        hunks,
    } = payload
    else {
        return None;
    };
    Some(diff_at(cwd.join(path), *created, hunks))
}

/// What a permission question's preview would change, as ACP diff
/// content at the path Riot resolved: the same hunks every face shows.
pub fn question_diff(detail: &PermissionRequestDetail) -> Option<ToolCallContent> {
    let Some(UiPayload::FileDiff { created, hunks, .. }) = &detail.preview else {
        return None;
    };
    let path = detail.path.as_deref()?;
    Some(diff_at(PathBuf::from(path), *created, hunks))
}

fn diff_at(path: PathBuf, created: bool, hunks: &[DiffHunk]) -> ToolCallContent {
    let mut old = String::new();
    let mut new = String::new();
    for (i, hunk) in hunks.iter().enumerate() {
        if i > 0 {
            // Hunks are apart in the file; keep them apart in the region.
            old.push_str("…\n");
            new.push_str("…\n");
        }
        for line in &hunk.lines {
            let (to_old, to_new) = match line.kind {
                DiffLineKind::Context => (true, true),
                DiffLineKind::Removed => (true, false),
                DiffLineKind::Added => (false, true),
            };
            if to_old {
                old.push_str(&line.text);
                old.push('\n');
            }
            if to_new {
                new.push_str(&line.text);
                new.push('\n');
            }
        }
    }
    let mut diff = Diff::new(path, new);
    if !created {
        diff = diff.old_text(old);
    }
    ToolCallContent::Diff(diff)
}

fn payload_path(payload: &UiPayload) -> Option<&str> {
    match payload {
        UiPayload::FileRead { path, .. }
        | UiPayload::ImageRead { path, .. }
        | UiPayload::PdfRead { path, .. }
        | UiPayload::DocumentRead { path, .. }
        | UiPayload::NotebookRead { path, .. }
        | UiPayload::FileDiff { path, .. } => Some(path),
        _ => None,
    }
}

/// TodoWrite's list as an ACP plan.
pub fn plan(payload: &UiPayload) -> Option<SessionUpdate> {
    let UiPayload::Todos { todos } = payload else {
        return None;
    };
    let entries = todos
        .iter()
        .map(|t| {
            let status = match t.status {
                TodoStatus::Pending => PlanEntryStatus::Pending,
                TodoStatus::InProgress => PlanEntryStatus::InProgress,
                TodoStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(t.content.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    Some(SessionUpdate::Plan(Plan::new(entries)))
}

/// Tracks which tool calls the client has been told about, so each call is
/// announced once (`tool_call`) and updated afterwards (`tool_call_update`).
#[derive(Debug, Default)]
pub struct ToolCalls {
    /// The session's directory, against which relative paths resolve.
    cwd: PathBuf,
    /// Calls the model made: id → (tool name, input).
    seen: HashMap<String, (String, Value)>,
    announced: std::collections::HashSet<String>,
    /// Calls whose command ran in the editor's terminal.
    /// The terminal is released before the call's result is known, and
    /// ACP allows embedding a terminal only before its release: the final
    /// update leaves it in place rather than sending it again.
    terminals: std::collections::HashSet<String>,
    /// The running prompt's forwarder of the turn's events, while there is
    /// one: [`caught_up`] waits for it.
    forwarder: Option<Forwarder>,
}

/// Asks a prompt's forwarder to answer once it has sent every event the
/// turn had produced by then.
pub type Forwarder = tokio::sync::mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>;

/// Until the forwarder of the running prompt has sent the client every
/// event the turn produced before this call (its text included), so that
/// an announcement made outside the event stream (a session's question,
/// the editor's terminal) never overtakes what came before it. Returns at
/// once when no prompt is forwarding.
pub async fn caught_up(calls: &std::sync::Mutex<ToolCalls>) {
    let forwarder = calls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .forwarder
        .clone();
    if let Some(forwarder) = forwarder {
        let (ack, done) = tokio::sync::oneshot::channel();
        if forwarder.send(ack).is_ok() {
            // An error: the prompt ended, nothing is left to overtake.
            let _ = done.await;
        }
    }
}

impl ToolCalls {
    /// Sets (or, with `None`, clears) the running prompt's forwarder.
    pub fn set_forwarder(&mut self, forwarder: Option<Forwarder>) {
        self.forwarder = forwarder;
    }

    /// The calls of a session working in `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            ..Self::default()
        }
    }

    /// Remembers the calls of an assistant message.
    pub fn saw_calls(&mut self, message: &Message) {
        if let Message::Assistant(a) = message {
            for call in a.tool_uses() {
                self.seen.insert(
                    call.id.as_str().to_owned(),
                    (call.name.to_owned(), call.input.clone()),
                );
            }
        }
    }

    /// Marks a call announced; true the first time.
    pub fn announce(&mut self, id: &str) -> bool {
        self.announced.insert(id.to_owned())
    }

    /// Remembers that call `id` runs in an editor's terminal.
    pub fn embed_terminal(&mut self, id: &str) {
        self.terminals.insert(id.to_owned());
    }

    /// The update for a call starting to run.
    pub fn started(&mut self, id: &str, name: &str, describe: &str) -> SessionUpdate {
        if self.announce(id) {
            let input = self.seen.get(id).map(|(_, input)| input.clone());
            tool_call(
                id,
                name,
                describe,
                input.as_ref(),
                ToolCallStatus::InProgress,
            )
        } else {
            tool_started(id, describe)
        }
    }

    /// A provider's web search as a WebSearch call that has finished.
    fn searched(&mut self, block: &AssistantBlock) -> Option<Vec<SessionUpdate>> {
        let shown = block.search_shown()?;
        self.announce(&shown.id);
        let query = match block {
            AssistantBlock::WebSearch { query, .. } => json!({ "query": query }),
            _ => Value::Null,
        };
        Some(vec![
            tool_call(
                &shown.id,
                "WebSearch",
                &shown.ui.describe,
                Some(&query),
                ToolCallStatus::InProgress,
            ),
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                shown.id.clone(),
                tool_finished(
                    &[ToolResultContent::text(shown.text)],
                    shown.failed,
                    Some(&shown.ui),
                    &self.cwd,
                ),
            )),
        ])
    }

    /// The updates for a message: chunks are streamed as deltas, so only
    /// tool results (and, when `replay`, the whole conversation) map here.
    pub fn message_updates(&mut self, message: &Message, replay: bool) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        match message {
            Message::Assistant(a) => {
                self.saw_calls(message);
                if !replay {
                    // The provider's searches ran inside the reply: they
                    // show now, as finished WebSearch calls.
                    out.extend(a.content.iter().filter_map(|b| self.searched(b)).flatten());
                    return out;
                }
                for block in &a.content {
                    if let Some(updates) = self.searched(block) {
                        out.extend(updates);
                        continue;
                    }
                    match block {
                        AssistantBlock::Text { text } if !text.is_empty() => {
                            out.push(message_chunk(text));
                        }
                        AssistantBlock::Thinking { text, .. } if !text.is_empty() => {
                            out.push(thought_chunk(text));
                        }
                        AssistantBlock::ToolUse { id, name, input } => {
                            self.announce(id.as_str());
                            out.push(tool_call(
                                id.as_str(),
                                name,
                                name,
                                Some(input),
                                ToolCallStatus::Pending,
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Message::User(u) => {
                for block in &u.content {
                    match block {
                        UserBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                            ui,
                        } => {
                            let id = tool_use_id.as_str();
                            let mut fields =
                                tool_finished(content, *is_error, ui.as_ref(), &self.cwd);
                            // The command's output is in the (released)
                            // terminal the call already shows: no content,
                            // so it stays. A result that is not the
                            // command's output (it could not be read, the
                            // call was cancelled) replaces it.
                            if self.terminals.remove(id)
                                && matches!(
                                    ui.as_ref().and_then(|u| u.payload.as_ref()),
                                    Some(UiPayload::Command { .. })
                                )
                            {
                                fields.content = None;
                            }
                            if self.announce(id) {
                                // Never started (invalid input, denied before
                                // a question): announce it finished.
                                let (name, input) = self
                                    .seen
                                    .get(id)
                                    .cloned()
                                    .unwrap_or_else(|| ("tool".to_owned(), Value::Null));
                                let title = ui.as_ref().map_or(name.as_str(), |u| &u.describe);
                                out.push(tool_call(
                                    id,
                                    &name,
                                    title,
                                    Some(&input),
                                    ToolCallStatus::Pending,
                                ));
                            }
                            out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                                id.to_owned(),
                                fields,
                            )));
                            if let Some(update) =
                                ui.as_ref().and_then(|u| u.payload.as_ref()).and_then(plan)
                            {
                                out.push(update);
                            }
                        }
                        // Only what the person typed: the first text block.
                        // What Riot added after it (attached files, a
                        // background result, their terminal typing) is
                        // not their words.
                        UserBlock::Text { text }
                            if replay
                                && u.origin == MessageOrigin::Person
                                && first_text(u).is_some_and(|t| std::ptr::eq(t, text)) =>
                        {
                            out.push(user_chunk(text));
                        }
                        _ => {}
                    }
                }
            }
            // Riot's own notes (a built-in command's output, a switch to
            // the fallback model) have no deltas: they are shown whole.
            // Errors are not: the prompt's JSON-RPC error carries them.
            Message::System(s) if s.level != SystemLevel::Error => {
                out.push(message_chunk(&s.text));
            }
            Message::System(_) => {}
        }
        out
    }
}

/// A user message's first text block.
fn first_text(message: &riot_protocol::UserMessage) -> Option<&String> {
    message.content.iter().find_map(|b| match b {
        UserBlock::Text { text } => Some(text),
        _ => None,
    })
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
