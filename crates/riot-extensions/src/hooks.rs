//! Hooks (docs/design.md §13) in Claude Code's file shape: the `hooks` key of
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

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use riot_core::{StopHooks, StopVerdict};
use riot_protocol::{
    CaptureLimit, CapturedOutput, HookDecisionKind, HookPermission, HookVerdict, Message,
    MessageOrigin, ProcessRunner, ProcessSpec, ToolCall, ToolCallResult, ToolHooks,
    ToolResultContent,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

mod definition;

pub use definition::{
    BadMatcher, CommandHook, DEFAULT_TIMEOUT_SECS, HookConfig, HookEvent, HookGroup, Matcher, load,
    parse_hooks, parse_hooks_file,
};

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
            undoable_only: false,
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

impl HookRunner {
    /// PreCompact: told before history is compacted; `trigger` is `manual`
    /// (`/compact`) or `auto` (the matcher applies to it). Hooks cannot stop
    /// a compaction: what they say is logged.
    pub async fn pre_compact(&self, trigger: &str, custom_instructions: &str) {
        if !self.config.has(HookEvent::PreCompact) {
            return;
        }
        let mut fields = Map::new();
        fields.insert("trigger".into(), json!(trigger));
        fields.insert("custom_instructions".into(), json!(custom_instructions));
        let runs = self.run(HookEvent::PreCompact, Some(trigger), fields).await;
        for run in runs {
            tracing::info!(command = %run.command, outcome = ?run.outcome, "PreCompact hook ran");
        }
    }
}

/// The session's compactor with PreCompact hooks run before each
/// compaction.
#[derive(Debug)]
pub struct HookedCompactor {
    pub inner: Arc<dyn riot_core::Compactor>,
    pub hooks: Arc<HookRunner>,
}

#[async_trait::async_trait]
impl riot_core::Compactor for HookedCompactor {
    fn plan(
        &self,
        messages: &[riot_protocol::Message],
        request: &riot_core::CompactRequest,
    ) -> Option<riot_protocol::CompactionStrategy> {
        self.inner.plan(messages, request)
    }

    async fn compact(
        &self,
        messages: &[riot_protocol::Message],
        request: &riot_core::CompactRequest,
        strategy: riot_protocol::CompactionStrategy,
    ) -> Result<riot_core::Compaction, riot_core::CompactError> {
        let (trigger, instructions) = match &request.focus {
            Some(focus) => ("manual", focus.as_str()),
            None => ("auto", ""),
        };
        self.hooks.pre_compact(trigger, instructions).await;
        self.inner.compact(messages, request, strategy).await
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
            ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                Some(text.as_str())
            }
            ToolResultContent::Image { .. } => None,
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
