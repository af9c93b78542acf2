//! Shared pieces of the kernel's loop tests: a temporary project, scripted
//! replies, and reading results and the terminal reason back.

#![allow(dead_code)] // each test binary uses a different part

use riot_core::testing::{ScriptItem, reply};
use riot_protocol::{
    AgentEvent, Message, StopReason, TerminalReason, ToolResultContent, UserBlock,
};
use serde_json::Value;

/// A temporary project directory.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The directory as the tools see it (canonical).
    pub fn root(&self) -> std::path::PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Writes an executable hook script under `hooks/` and returns the
    /// command that runs it from the project directory.
    pub fn hook(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.root().join("hooks");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("./hooks/{name}")
    }
}

/// A reply calling these tools, `(id, name, input)` in order.
pub fn tool_reply(calls: &[(&str, &str, Value)]) -> Vec<ScriptItem> {
    let mut items = Vec::new();
    for (id, name, input) in calls {
        items.extend(reply::tool_use(id, name, input.clone()));
    }
    items.extend(reply::stop(StopReason::ToolUse, 10, 10));
    items
}

/// A final text reply.
pub fn final_reply(text: &str) -> Vec<ScriptItem> {
    let mut items = reply::text("m", text);
    items.extend(reply::stop(StopReason::EndTurn, 10, 10));
    items
}

/// The text and error flag of the tool result for `id` in `messages`.
pub fn tool_result(messages: &[Message], id: &str) -> Option<(String, bool)> {
    messages.iter().find_map(|m| {
        let Message::User(u) = m else { return None };
        u.content.iter().find_map(|b| match b {
            UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } if tool_use_id.as_str() == id => {
                let text = content
                    .iter()
                    .filter_map(|c| match c {
                        ToolResultContent::Text { text }
                        | ToolResultContent::Document { text, .. } => Some(text.as_str()),
                        ToolResultContent::Image { .. } => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Some((text, *is_error))
            }
            _ => None,
        })
    })
}

/// The terminal reason, which must be the last event.
pub fn done(events: &[AgentEvent]) -> &TerminalReason {
    match events.last() {
        Some(AgentEvent::Done { reason }) => reason,
        other => panic!("not done: {other:?}"),
    }
}

/// A person answering a session's questions through its handle, as a face
/// does: each permission question with `permission`, AskUser questions
/// with "go on" — the first of them held until [`Person::release`] when
/// the person was made with `hold`.
pub struct Person {
    /// Notified when an AskUser question arrives.
    pub asked: std::sync::Arc<tokio::sync::Notify>,
    release: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

impl Person {
    pub fn answering(
        handle: &riot_kernel::SessionHandle,
        permission: riot_protocol::PermissionOutcome,
        hold: bool,
    ) -> Self {
        use riot_kernel::{Answer, Question};
        let mut questions = handle.questions().expect("the session's questions");
        let asked = std::sync::Arc::new(tokio::sync::Notify::new());
        let (release, held) = tokio::sync::oneshot::channel::<()>();
        let mut held = hold.then_some(held);
        let handle = handle.clone();
        let notify = std::sync::Arc::clone(&asked);
        tokio::spawn(async move {
            while let Some(q) = questions.recv().await {
                let answer = match q.question {
                    Question::Permission { .. } => Answer::Permission(permission.clone()),
                    Question::Questions(_) => {
                        notify.notify_one();
                        if let Some(held) = held.take() {
                            let _ = held.await;
                        }
                        Answer::Questions(riot_protocol::QuestionOutcome::Answered(vec![vec![
                            "go on".into(),
                        ]]))
                    }
                };
                let _ = handle.answer(q.id, answer);
            }
        });
        Self {
            asked,
            release: std::sync::Mutex::new(Some(release)),
        }
    }

    /// Lets the held AskUser question be answered.
    pub fn release(&self) {
        if let Some(release) = self.release.lock().unwrap().take() {
            let _ = release.send(());
        }
    }
}
