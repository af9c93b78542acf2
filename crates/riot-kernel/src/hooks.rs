//! Hooks (ARCHITECTURE §13) in Claude Code's file shape: the `hooks` key of
//! a settings file, or a `hooks.json` holding the same object:
//!
//! ```json
//! {"PreToolUse": [{"matcher": "Bash", "hooks": [
//!     {"type": "command", "command": "./check.sh", "timeout": 60}]}]}
//! ```
//!
//! Every layer's hooks run (user, then project, local and the project's
//! `hooks.json` — those only when the project is trusted). A hook runs as
//! `bash -c <command>` in the project directory, with the model keys
//! scrubbed and one JSON event on stdin. Exit 2 blocks with stderr as the
//! reason; exit 0 stdout is extra context, or a JSON object
//! (`hookSpecificOutput.{permissionDecision, permissionDecisionReason,
//! updatedInput, additionalContext}`, `{"decision": "block", "reason"}`);
//! any other exit, a timeout or a crash is "no opinion" and logged.
//! Same-event hooks run in parallel; a command listed twice runs once.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use riot_core::{StopHooks, StopVerdict};
use riot_protocol::{
    CaptureLimit, CapturedOutput, FileSystem, HookDecisionKind, HookPermission, HookVerdict,
    Message, MessageOrigin, ProcessRunner, ProcessSpec, ToolCall, ToolCallResult, ToolHooks,
    ToolResultContent,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::{self, ConfigError, Layer, SettingsFile};

/// Seconds a hook may run when its entry gives no `timeout`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The events hooks can attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
    PreCompact,
}

impl HookEvent {
    const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::PreCompact,
    ];

    /// The name used in files and in the event's `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the group's matcher applies (tool events match the tool
    /// name, SessionStart the source, PreCompact the trigger).
    fn uses_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which subjects (tool names) a group applies to.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, an empty string or no matcher.
    All,
    /// `Bash` or `Edit|Write`: exact names.
    Names(Vec<String>),
    /// Anything else is a regular expression matched against the whole name.
    Regex(regex::Regex),
}

impl Matcher {
    /// Parses a matcher; a bad regular expression is an error.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if text.split('|').all(plain) {
            return Ok(Matcher::Names(text.split('|').map(str::to_owned).collect()));
        }
        regex::Regex::new(&format!("^(?:{text})$"))
            .map(Matcher::Regex)
            .map_err(|e| format!("is not a tool name, `A|B` or a valid regular expression: {e}"))
    }

    /// Whether `subject` is matched.
    pub fn matches(&self, subject: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == subject),
            Matcher::Regex(re) => re.is_match(subject),
        }
    }
}

/// One command hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandHook {
    pub command: String,
    pub timeout_ms: u64,
}

/// A matcher and its hooks, for one event, from one file.
#[derive(Debug, Clone)]
pub struct HookGroup {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub hooks: Vec<CommandHook>,
    /// The file it came from (for logs).
    pub source: PathBuf,
}

/// Every configured hook, in layer order.
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    pub groups: Vec<HookGroup>,
}

impl HookConfig {
    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether any hook listens to `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.groups.iter().any(|g| g.event == event)
    }

    /// The commands to run for `event` and `subject`, each once, in
    /// configuration order.
    pub fn matching(&self, event: HookEvent, subject: Option<&str>) -> Vec<CommandHook> {
        let mut out: Vec<CommandHook> = Vec::new();
        for group in self.groups.iter().filter(|g| g.event == event) {
            let applies = !event.uses_matcher()
                || match subject {
                    Some(s) => group.matcher.matches(s),
                    None => true,
                };
            if !applies {
                continue;
            }
            for hook in &group.hooks {
                if !out.iter().any(|h| h.command == hook.command) {
                    out.push(hook.clone());
                }
            }
        }
        out
    }

    /// Adds the groups of one `hooks` object (the value of a settings
    /// file's `hooks` key, or a whole `hooks.json`).
    pub fn add(&mut self, path: &Path, hooks: &Value) -> Result<(), ConfigError> {
        self.groups.extend(parse_hooks(path, hooks)?);
        Ok(())
    }
}

fn bad(path: &Path, key: String, problem: impl Into<String>) -> ConfigError {
    ConfigError::BadValue {
        path: path.to_path_buf(),
        key,
        problem: problem.into(),
    }
}

/// Parses a `hooks` object. Unknown events and hook types other than
/// `command` are skipped with a warning (files written for other agents
/// may have them); a wrong shape is an error naming the file and key.
pub fn parse_hooks(path: &Path, hooks: &Value) -> Result<Vec<HookGroup>, ConfigError> {
    let Value::Object(events) = hooks else {
        return Err(bad(
            path,
            "hooks".into(),
            "must be an object keyed by event name",
        ));
    };
    let mut groups = Vec::new();
    for (name, entries) in events {
        let Some(event) = HookEvent::parse(name) else {
            tracing::warn!(file = %path.display(), event = %name, "unknown hook event; skipped");
            continue;
        };
        let Value::Array(entries) = entries else {
            return Err(bad(
                path,
                format!("hooks.{name}"),
                "must be a list of {\"matcher\", \"hooks\"} objects",
            ));
        };
        for (i, entry) in entries.iter().enumerate() {
            let key = format!("hooks.{name}[{i}]");
            let Value::Object(entry) = entry else {
                return Err(bad(path, key, "must be an object with `hooks`"));
            };
            let matcher = match entry.get("matcher") {
                None | Some(Value::Null) => Matcher::All,
                Some(Value::String(m)) => {
                    Matcher::parse(m).map_err(|p| bad(path, format!("{key}.matcher"), p))?
                }
                Some(_) => return Err(bad(path, format!("{key}.matcher"), "must be a string")),
            };
            let Some(Value::Array(list)) = entry.get("hooks") else {
                return Err(bad(
                    path,
                    format!("{key}.hooks"),
                    "must be a list of {\"type\": \"command\", \"command\": ...} objects",
                ));
            };
            let mut hooks = Vec::new();
            for (j, hook) in list.iter().enumerate() {
                let key = format!("{key}.hooks[{j}]");
                let Value::Object(hook) = hook else {
                    return Err(bad(path, key, "must be an object"));
                };
                match hook.get("type").and_then(Value::as_str) {
                    Some("command") | None => {}
                    Some(other) => {
                        tracing::warn!(file = %path.display(), hook = %key, kind = %other, "only command hooks are supported; skipped");
                        continue;
                    }
                }
                let Some(command) = hook.get("command").and_then(Value::as_str) else {
                    return Err(bad(path, format!("{key}.command"), "must be a string"));
                };
                let timeout_ms = match hook.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT_SECS * 1000,
                    Some(v) => match v.as_f64() {
                        Some(secs) if secs > 0.0 && secs.is_finite() => {
                            // Whole milliseconds; a day is far beyond any sane hook.
                            (secs.min(86_400.0) * 1000.0).round() as u64
                        }
                        _ => {
                            return Err(bad(
                                path,
                                format!("{key}.timeout"),
                                "must be a positive number of seconds",
                            ));
                        }
                    },
                };
                hooks.push(CommandHook {
                    command: command.to_owned(),
                    timeout_ms,
                });
            }
            groups.push(HookGroup {
                event,
                matcher,
                hooks,
                source: path.to_path_buf(),
            });
        }
    }
    Ok(groups)
}

/// Parses a `hooks.json` file: the hooks object itself, or (as in Claude
/// Code plugins) an object whose `hooks` key holds it. Bad JSON is an
/// error naming the file and line.
pub fn parse_hooks_file(path: &Path, text: &str) -> Result<Vec<HookGroup>, ConfigError> {
    let file = config::parse_settings(path, Layer::User, text)?;
    match file.json.get("hooks") {
        Some(inner @ Value::Object(_)) => parse_hooks(path, inner),
        _ => parse_hooks(path, &Value::Object(file.json)),
    }
}

/// Reads every layer's hooks: the `hooks` key of the settings files
/// already read, and the `hooks.json` files. A project's hooks count only
/// when `trusted`; an untrusted project's `hooks.json` is named in
/// `ignored` (the settings keys are reported by [`config::layer`]).
pub async fn load(
    fs: &dyn FileSystem,
    home: &Path,
    project_root: &Path,
    settings: &[SettingsFile],
    trusted: bool,
    ignored: &mut Vec<String>,
) -> Result<HookConfig, ConfigError> {
    let mut config = HookConfig::default();
    let user_file = home.join("hooks.json");
    let project_file = project_root.join(".riot/hooks.json");
    let settings_of = |layer: Layer| settings.iter().filter(move |f| f.layer == layer);
    for file in settings_of(Layer::User) {
        if let Some(hooks) = file.json.get("hooks") {
            config.add(&file.path, hooks)?;
        }
    }
    if let Some(text) = read_text(fs, &user_file).await? {
        config.groups.extend(parse_hooks_file(&user_file, &text)?);
    }
    if trusted {
        for layer in [Layer::Project, Layer::Local] {
            for file in settings_of(layer) {
                if let Some(hooks) = file.json.get("hooks") {
                    config.add(&file.path, hooks)?;
                }
            }
        }
    }
    if let Some(text) = read_text(fs, &project_file).await? {
        if trusted {
            config
                .groups
                .extend(parse_hooks_file(&project_file, &text)?);
        } else {
            ignored.push(format!("hooks (from {})", project_file.display()));
        }
    }
    Ok(config)
}

async fn read_text(fs: &dyn FileSystem, path: &Path) -> Result<Option<String>, ConfigError> {
    match fs.read(path).await {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ConfigError::Unreadable {
                path: path.to_path_buf(),
                reason: "not UTF-8 text".into(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

/// What one hook run said.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome {
    /// Exit 2: stderr is the reason.
    Blocked { reason: String },
    /// Exit 0 with a JSON object on stdout.
    Json(Map<String, Value>),
    /// Exit 0 with plain text (possibly empty) on stdout.
    Text(String),
    /// Another exit code, a timeout or a crash (logged).
    NoOpinion,
}

/// One hook and what it said.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRun {
    pub command: String,
    pub outcome: HookOutcome,
}

fn captured_text(c: &CapturedOutput) -> String {
    if c.truncated() {
        format!(
            "{}\n[... {} bytes omitted ...]\n{}",
            c.head, c.omitted_bytes, c.tail
        )
    } else {
        format!("{}{}", c.head, c.tail)
    }
}

/// Runs hooks for one session.
#[derive(Debug, Clone)]
pub struct HookRunner {
    config: Arc<HookConfig>,
    proc: Arc<dyn ProcessRunner>,
    cwd: PathBuf,
    scrubbed_env: Vec<String>,
    session_id: String,
}

impl HookRunner {
    /// A runner for the hooks in `config`, run in `cwd` without the
    /// variables in `scrubbed_env`.
    pub fn new(
        config: HookConfig,
        proc: Arc<dyn ProcessRunner>,
        cwd: PathBuf,
        scrubbed_env: Vec<String>,
        session_id: impl Into<String>,
    ) -> Self {
        Self {
            config: Arc::new(config),
            proc,
            cwd,
            scrubbed_env,
            session_id: session_id.into(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HookConfig {
        &self.config
    }

    /// Runs the hooks of `event` matching `subject` in parallel, each with
    /// the event (the common fields plus `fields`) on stdin. Results are in
    /// configuration order.
    pub async fn run(
        &self,
        event: HookEvent,
        subject: Option<&str>,
        fields: Map<String, Value>,
    ) -> Vec<HookRun> {
        let hooks = self.config.matching(event, subject);
        if hooks.is_empty() {
            return Vec::new();
        }
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session_id));
        input.insert("cwd".into(), json!(self.cwd.display().to_string()));
        input.insert("hook_event_name".into(), json!(event.name()));
        input.extend(fields);
        let stdin = serde_json::to_vec(&Value::Object(input)).unwrap_or_default();
        let runs = hooks.into_iter().map(|hook| {
            let stdin = stdin.clone();
            async move {
                let outcome = self.run_one(event, &hook, stdin).await;
                HookRun {
                    command: hook.command,
                    outcome,
                }
            }
        });
        futures::future::join_all(runs).await
    }

    async fn run_one(&self, event: HookEvent, hook: &CommandHook, stdin: Vec<u8>) -> HookOutcome {
        let project = self.cwd.display().to_string();
        let spec = ProcessSpec {
            program: "bash".into(),
            args: vec!["-c".into(), hook.command.clone()],
            cwd: self.cwd.clone(),
            env_set: vec![
                ("RIOT_PROJECT_DIR".into(), project.clone()),
                ("CLAUDE_PROJECT_DIR".into(), project),
            ],
            env_remove: self.scrubbed_env.clone(),
            timeout_ms: Some(hook.timeout_ms),
            capture: CaptureLimit {
                head_bytes: 32 * 1024,
                tail_bytes: 8 * 1024,
            },
            stdin: Some(stdin),
        };
        let output = match self.proc.run(spec, CancellationToken::new(), None).await {
            Ok(output) => output,
            Err(e) => {
                tracing::warn!(event = %event, command = %hook.command, error = %e, "hook could not run; no opinion");
                return HookOutcome::NoOpinion;
            }
        };
        if output.timed_out {
            tracing::warn!(event = %event, command = %hook.command, timeout_ms = hook.timeout_ms, "hook timed out; no opinion");
            return HookOutcome::NoOpinion;
        }
        let stderr = captured_text(&output.stderr);
        match output.exit_code {
            Some(2) => {
                let reason = stderr.trim();
                let reason = if reason.is_empty() {
                    format!(
                        "the {event} hook `{}` exited with 2 (no reason given)",
                        hook.command
                    )
                } else {
                    reason.to_owned()
                };
                HookOutcome::Blocked { reason }
            }
            Some(0) => {
                let stdout = captured_text(&output.stdout);
                let trimmed = stdout.trim();
                if trimmed.starts_with('{')
                    && let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(trimmed)
                {
                    return HookOutcome::Json(obj);
                }
                HookOutcome::Text(trimmed.to_owned())
            }
            code => {
                tracing::warn!(event = %event, command = %hook.command, exit_code = ?code, signal = ?output.signal, stderr = %stderr.trim(), "hook failed; no opinion");
                HookOutcome::NoOpinion
            }
        }
    }

    /// UserPromptSubmit: a block with its reason, or extra context.
    pub async fn user_prompt_submit(&self, prompt: &str) -> PromptVerdict {
        if !self.config.has(HookEvent::UserPromptSubmit) {
            return PromptVerdict::Context(Vec::new());
        }
        let mut fields = Map::new();
        fields.insert("prompt".into(), json!(prompt));
        let runs = self.run(HookEvent::UserPromptSubmit, None, fields).await;
        let said = Said::of(&runs);
        if !said.blocks.is_empty() {
            return PromptVerdict::Block {
                reason: said.block_reasons(),
            };
        }
        PromptVerdict::Context(said.context)
    }

    /// SessionStart: extra context for the first prompt. `source` is
    /// `startup` or `resume` (the matcher applies to it).
    pub async fn session_start(&self, source: &str) -> Vec<String> {
        if !self.config.has(HookEvent::SessionStart) {
            return Vec::new();
        }
        let mut fields = Map::new();
        fields.insert("source".into(), json!(source));
        let runs = self
            .run(HookEvent::SessionStart, Some(source), fields)
            .await;
        Said::of(&runs).context
    }
}

/// A UserPromptSubmit answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptVerdict {
    /// Do not send the prompt; the reason is for the person.
    Block { reason: String },
    /// Send it, with this extra context after it.
    Context(Vec<String>),
}

/// What a set of hook runs said, event-independently.
#[derive(Debug, Default)]
struct Said {
    /// Exit-2 stderr and `{"decision": "block"}` reasons, with the command.
    blocks: Vec<(String, String)>,
    /// `additionalContext` and plain stdout.
    context: Vec<String>,
    /// `permissionDecision` (or the legacy `decision: approve`), with the
    /// command and reason.
    decisions: Vec<(HookDecisionKind, String, String)>,
    updated_input: Option<Value>,
}

fn string_at<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

impl Said {
    fn of(runs: &[HookRun]) -> Self {
        let mut said = Said::default();
        for run in runs {
            match &run.outcome {
                HookOutcome::NoOpinion => {}
                HookOutcome::Blocked { reason } => {
                    said.blocks.push((run.command.clone(), reason.clone()));
                }
                HookOutcome::Text(text) => {
                    if !text.is_empty() {
                        said.context.push(text.clone());
                    }
                }
                HookOutcome::Json(obj) => said.json(&run.command, obj),
            }
        }
        said
    }

    fn json(&mut self, command: &str, obj: &Map<String, Value>) {
        let reason = string_at(obj, "reason");
        match obj.get("decision").and_then(Value::as_str) {
            Some("block") => self.blocks.push((
                command.to_owned(),
                reason.map_or_else(|| format!("blocked by the hook `{command}`"), str::to_owned),
            )),
            Some("approve") => self.decisions.push((
                HookDecisionKind::Allow,
                command.to_owned(),
                reason.unwrap_or("approved by the hook").to_owned(),
            )),
            _ => {}
        }
        let Some(Value::Object(specific)) = obj.get("hookSpecificOutput") else {
            return;
        };
        let kind = match specific.get("permissionDecision").and_then(Value::as_str) {
            Some("allow") => Some(HookDecisionKind::Allow),
            Some("ask") => Some(HookDecisionKind::Ask),
            Some("deny") => Some(HookDecisionKind::Deny),
            _ => None,
        };
        if let Some(kind) = kind {
            let why = string_at(specific, "permissionDecisionReason")
                .or(reason)
                .map_or_else(|| format!("the hook `{command}` decided so"), str::to_owned);
            self.decisions.push((kind, command.to_owned(), why));
        }
        if let Some(input @ Value::Object(_)) = specific.get("updatedInput")
            && self.updated_input.is_none()
        {
            self.updated_input = Some(input.clone());
        }
        if let Some(text) = string_at(specific, "additionalContext") {
            self.context.push(text.to_owned());
        }
    }

    /// The block reasons, one per line.
    fn block_reasons(&self) -> String {
        self.blocks
            .iter()
            .map(|(_, r)| r.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The strongest decision: deny > ask > allow; reasons of that kind
    /// are joined.
    fn permission(&self) -> Option<HookPermission> {
        let mut blocks: Vec<(HookDecisionKind, String, String)> = Vec::new();
        for (command, reason) in &self.blocks {
            blocks.push((HookDecisionKind::Deny, command.clone(), reason.clone()));
        }
        let all = blocks.iter().chain(self.decisions.iter());
        for kind in [
            HookDecisionKind::Deny,
            HookDecisionKind::Ask,
            HookDecisionKind::Allow,
        ] {
            let of_kind: Vec<&(HookDecisionKind, String, String)> =
                all.clone().filter(|(k, _, _)| *k == kind).collect();
            if !of_kind.is_empty() {
                return Some(HookPermission {
                    decision: kind,
                    hook: of_kind
                        .iter()
                        .map(|(_, h, _)| h.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    reason: of_kind
                        .iter()
                        .map(|(_, _, r)| r.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                });
            }
        }
        None
    }
}

fn result_text(result: &ToolCallResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[async_trait]
impl ToolHooks for HookRunner {
    async fn pre_tool_use(&self, call: &ToolCall) -> HookVerdict {
        if !self.config.has(HookEvent::PreToolUse) {
            return HookVerdict::default();
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), json!(call.name));
        fields.insert("tool_input".into(), call.input.clone());
        fields.insert("tool_use_id".into(), json!(call.id.as_str()));
        let runs = self
            .run(HookEvent::PreToolUse, Some(&call.name), fields)
            .await;
        let said = Said::of(&runs);
        HookVerdict {
            permission: said.permission(),
            updated_input: said.updated_input.clone(),
            additional_context: (!said.context.is_empty()).then(|| said.context.join("\n\n")),
        }
    }

    async fn post_tool_use(&self, call: &ToolCall, result: &ToolCallResult) -> Option<String> {
        if !self.config.has(HookEvent::PostToolUse) {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("tool_name".into(), json!(call.name));
        fields.insert("tool_input".into(), call.input.clone());
        fields.insert("tool_use_id".into(), json!(call.id.as_str()));
        fields.insert(
            "tool_response".into(),
            json!({ "content": result_text(result), "is_error": result.is_error }),
        );
        let runs = self
            .run(HookEvent::PostToolUse, Some(&call.name), fields)
            .await;
        let said = Said::of(&runs);
        let mut parts: Vec<String> = said
            .blocks
            .iter()
            .map(|(_, r)| format!("A PostToolUse hook reported: {r}"))
            .collect();
        parts.extend(said.context);
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

#[async_trait]
impl StopHooks for HookRunner {
    async fn on_stop(&self, messages: &[Message]) -> StopVerdict {
        if !self.config.has(HookEvent::Stop) {
            return StopVerdict::Allow;
        }
        // Whether the loop already went round for a Stop hook this turn:
        // the latest user message is a hook's.
        let active = messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User(u) if u.origin != MessageOrigin::ToolResults => Some(u.origin),
                _ => None,
            })
            .is_some_and(|origin| origin == MessageOrigin::Hook);
        let mut fields = Map::new();
        fields.insert("stop_hook_active".into(), json!(active));
        let runs = self.run(HookEvent::Stop, None, fields).await;
        let said = Said::of(&runs);
        if said.blocks.is_empty() {
            StopVerdict::Allow
        } else {
            StopVerdict::Continue {
                reason: said.block_reasons(),
            }
        }
    }
}

#[cfg(test)]
mod tests;
