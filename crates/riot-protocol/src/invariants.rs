//! Checks several crates need (docs/testing.md L2): tool pairing, no `System`
//! message in a request, the cache-breakpoint budget, thinking blocks bound
//! to the current model. The loop calls them at its checkpoints; providers
//! assert them on what they are about to send.
//!
//! A violation is a bug in Riot. [`enforce`] panics in debug builds (tests
//! run in debug) and logs at error level in release, where the session goes
//! on.

use std::collections::HashSet;
use std::fmt;

use crate::ids::ToolUseId;
use crate::message::{AssistantBlock, Message, UserBlock};

/// Anthropic's limit on `cache_control` blocks in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// A broken invariant, named by its docs/testing.md id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub id: &'static str,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.id, self.detail)
    }
}

fn violation(id: &'static str, detail: String) -> Result<(), Violation> {
    Err(Violation { id, detail })
}

/// Panics in debug builds, logs in release.
#[track_caller]
pub fn enforce(result: Result<(), Violation>) {
    if let Err(v) = result {
        if cfg!(debug_assertions) {
            #[allow(clippy::panic)] // docs/testing.md L2: invariants panic in debug builds
            {
                panic!("invariant violated: {v}");
            }
        }
        tracing::error!(invariant = v.id, detail = %v.detail, "invariant violated");
    }
}

/// INV-1 and INV-2 over a complete history (as sent to a provider): every
/// `tool_use` is answered by exactly one `tool_result` in the next message,
/// which is a user message whose tool results come before any other
/// content; no result answers an unknown or earlier id. `System` messages
/// are skipped (they never reach a provider).
pub fn check_tool_pairing(messages: &[Message]) -> Result<(), Violation> {
    check_pairing(messages, false)
}

/// Like [`check_tool_pairing`] but allows the history to end with an
/// assistant message whose tool uses are still running.
pub fn check_tool_pairing_open_tail(messages: &[Message]) -> Result<(), Violation> {
    check_pairing(messages, true)
}

fn check_pairing(messages: &[Message], open_tail: bool) -> Result<(), Violation> {
    let convo: Vec<&Message> = messages
        .iter()
        .filter(|m| !matches!(m, Message::System(_)))
        .collect();
    let mut pending: Vec<&ToolUseId> = Vec::new();
    for (i, message) in convo.iter().enumerate() {
        match message {
            Message::Assistant(a) => {
                if !pending.is_empty() {
                    return violation(
                        "INV-1",
                        format!("message {i}: tool_use {} has no tool_result", pending[0]),
                    );
                }
                pending = a.tool_uses().map(|t| t.id).collect();
                let unique: HashSet<_> = pending.iter().collect();
                if unique.len() != pending.len() {
                    return violation("INV-1", format!("message {i}: duplicate tool_use id"));
                }
            }
            Message::User(u) => {
                let mut seen_other = false;
                let mut answered: Vec<&ToolUseId> = Vec::new();
                for block in &u.content {
                    match block {
                        UserBlock::ToolResult { tool_use_id, .. } => {
                            if seen_other {
                                return violation(
                                    "INV-2",
                                    format!(
                                        "message {i}: content before the tool_result for {tool_use_id}"
                                    ),
                                );
                            }
                            if !pending.contains(&tool_use_id) {
                                return violation(
                                    "INV-1",
                                    format!("message {i}: orphan tool_result for {tool_use_id}"),
                                );
                            }
                            if answered.contains(&tool_use_id) {
                                return violation(
                                    "INV-1",
                                    format!("message {i}: second tool_result for {tool_use_id}"),
                                );
                            }
                            answered.push(tool_use_id);
                        }
                        _ => seen_other = true,
                    }
                }
                if let Some(missing) = pending.iter().find(|id| !answered.contains(id)) {
                    return violation(
                        "INV-1",
                        format!("message {i}: tool_use {missing} has no tool_result"),
                    );
                }
                pending.clear();
            }
            Message::System(_) => {}
        }
    }
    match pending.first() {
        Some(id) if !open_tail => violation(
            "INV-1",
            format!("tool_use {id} at the end of the history has no tool_result"),
        ),
        _ => Ok(()),
    }
}

/// INV-3: a parallel batch holds only concurrency-safe calls (a batch of
/// one may hold anything). `safe[i]` is call i's `is_concurrency_safe`.
pub fn check_parallel_batch(safe: &[bool]) -> Result<(), Violation> {
    if safe.len() > 1
        && let Some(i) = safe.iter().position(|s| !s)
    {
        return violation(
            "INV-3",
            format!(
                "call {i} of a parallel batch of {} is not concurrency-safe",
                safe.len()
            ),
        );
    }
    Ok(())
}

/// INV-7: no `System` message reaches a provider.
pub fn check_no_system_messages(messages: &[Message]) -> Result<(), Violation> {
    match messages
        .iter()
        .position(|m| matches!(m, Message::System(_)))
    {
        Some(i) => violation("INV-7", format!("message {i} is a System message")),
        None => Ok(()),
    }
}

/// INV-8: at most one message-level breakpoint and at most
/// [`MAX_CACHE_BREAKPOINTS`] in total.
pub fn check_cache_breakpoints(message_level: usize, total: usize) -> Result<(), Violation> {
    if message_level > 1 {
        return violation(
            "INV-8",
            format!("{message_level} message-level cache breakpoints (at most 1)"),
        );
    }
    if total > MAX_CACHE_BREAKPOINTS {
        return violation(
            "INV-8",
            format!("{total} cache breakpoints (at most {MAX_CACHE_BREAKPOINTS})"),
        );
    }
    Ok(())
}

/// INV-9: no thinking block (whose signature is bound to its model) from a
/// model other than `model`.
pub fn check_thinking_model(messages: &[Message], model: &str) -> Result<(), Violation> {
    for (i, m) in messages.iter().enumerate() {
        let Message::Assistant(a) = m else { continue };
        for block in &a.content {
            let from = match block {
                AssistantBlock::Thinking {
                    model: from,
                    signature: Some(_),
                    ..
                }
                | AssistantBlock::RedactedThinking { model: from, .. } => from,
                _ => continue,
            };
            if from != model {
                return violation(
                    "INV-9",
                    format!("message {i}: thinking from `{from}` sent to `{model}`"),
                );
            }
        }
    }
    Ok(())
}
