//! Rewind in an open session (docs/rewind.md): `/rewind`, `/undo` and
//! what `SessionHandle::rewind` runs between turns.

use std::sync::Arc;

use riot_protocol::{AgentEvent, ErrorKind, SystemLevel, TerminalReason};
use riot_store::{LoadedSession, StoreError};

use super::{Session, failed};
use crate::KernelError;
use crate::checkpoints::{self, RewindOutcome, RewindPoint, RewindWhat};

impl Session {
    /// The transcript as it is on disk; `None` before the first prompt.
    fn transcript(&self) -> Result<Option<LoadedSession>, KernelError> {
        match self.rewinds.sessions.load(self.id()) {
            Ok(loaded) => Ok(Some(loaded)),
            Err(StoreError::UnknownSession(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn no_prompt_yet() -> KernelError {
        KernelError::Input("this session has no user message to rewind to yet".into())
    }

    /// The user messages a rewind can go back to, each with the files its
    /// turn changed.
    pub async fn rewind_points(&self) -> Result<Vec<RewindPoint>, KernelError> {
        let Some(loaded) = self.transcript()? else {
            return Ok(Vec::new());
        };
        checkpoints::points(Arc::clone(&self.rewinds.checkpoints.store), &loaded).await
    }

    /// Rewinds to just before user message `to` (1-based): files the
    /// agent changed from then on go back, and/or the conversation from
    /// that message on is withdrawn, as `what` says. Files the person
    /// changed since the agent are left and reported unless `force`.
    pub async fn rewind(
        &mut self,
        to: u32,
        what: RewindWhat,
        force: bool,
    ) -> Result<RewindOutcome, KernelError> {
        let loaded = self.transcript()?.ok_or_else(Self::no_prompt_yet)?;
        let (from, prompt) = checkpoints::target(&loaded, to, what)?;
        let now = self.deps.clock.now_ms();
        let files = checkpoints::rewind_files(
            Arc::clone(&self.rewinds.checkpoints.store),
            self.id(),
            to,
            what,
            force,
            now,
        )
        .await?;
        if let Some(report) = &files {
            self.forget_reads(report);
        }
        if what != RewindWhat::FilesOnly {
            self.sink.rewound(to, &from)?;
            self.reload_history()?;
        }
        Ok(RewindOutcome {
            to,
            files,
            conversation: what != RewindWhat::FilesOnly,
            prompt,
        })
    }

    /// Undoes the last rewind, if nothing happened in the session since.
    pub async fn undo_rewind(&mut self, force: bool) -> Result<RewindOutcome, KernelError> {
        let loaded = self.transcript()?.ok_or_else(Self::no_prompt_yet)?;
        let now = self.deps.clock.now_ms();
        let (to, files, conversation) = checkpoints::undo_files(
            Arc::clone(&self.rewinds.checkpoints.store),
            self.id(),
            force,
            now,
        )
        .await?;
        if let Some(report) = &files {
            self.forget_reads(report);
        }
        let conversation = conversation && loaded.undoable_rewind;
        if conversation {
            self.sink.rewind_undone()?;
            self.reload_history()?;
        }
        Ok(RewindOutcome {
            to,
            files,
            conversation,
            prompt: String::new(),
        })
    }

    /// Files a rewind wrote are no longer what the agent read: it reads
    /// them again before editing.
    fn forget_reads(&self, report: &checkpoints::RewindReport) {
        for key in report.restored.iter().chain(&report.removed) {
            self.file_state
                .remove(&self.rewinds.checkpoints.store.path_of(key));
        }
    }

    /// The history as the transcript now has it.
    fn reload_history(&mut self) -> Result<(), KernelError> {
        let loaded = self.rewinds.sessions.load(self.id())?;
        self.state.messages = loaded.messages;
        self.state.last_usage = None;
        self.state.usage_anchor = None;
        self.state.turn_prompt = None;
        self.rewinds
            .checkpoints
            .prompt
            .set(u32::try_from(loaded.prompts.len()).unwrap_or(u32::MAX));
        Ok(())
    }

    /// `/rewind`, `/rewind N [--files-only|--conversation-only] [--force]`,
    /// `/rewind undo [--force]` and `/undo` (the last turn).
    pub(super) async fn rewind_command(&mut self, name: &str, args: &str) -> Vec<AgentEvent> {
        let ids = Arc::clone(&self.deps.ids);
        let info = |session: &Self, text: String| AgentEvent::Message {
            message: session.system_message(SystemLevel::Info, text),
        };
        let done = AgentEvent::Done {
            reason: TerminalReason::Completed,
        };
        let mut to: Option<u32> = None;
        let mut what = RewindWhat::Both;
        let mut force = false;
        let mut undo = false;
        for word in args.split_whitespace() {
            match word {
                "--files-only" => what = RewindWhat::FilesOnly,
                "--conversation-only" => what = RewindWhat::ConversationOnly,
                "--force" => force = true,
                "undo" if name == "rewind" => undo = true,
                n => match n.parse::<u32>() {
                    Ok(n) if to.is_none() && name == "rewind" => to = Some(n),
                    _ => {
                        return failed(
                            ids.as_ref(),
                            ErrorKind::Usage,
                            format!(
                                "/{name} does not take `{n}`: use /rewind N [--files-only | --conversation-only] [--force], /rewind undo, or /undo"
                            ),
                        );
                    }
                },
            }
        }
        if name == "rewind" && to.is_none() && !undo {
            return match self.rewind_points().await {
                Ok(points) => vec![info(self, describe_points(&points)), done],
                Err(e) => failed(ids.as_ref(), ErrorKind::Other, e.to_string()),
            };
        }
        let result = if undo {
            self.undo_rewind(force).await
        } else {
            let to = match to {
                Some(to) => to,
                // `/undo`: the last turn.
                None => match self.transcript() {
                    Ok(Some(loaded)) => u32::try_from(loaded.prompts.len()).unwrap_or(u32::MAX),
                    Ok(None) => 0,
                    Err(e) => return failed(ids.as_ref(), ErrorKind::Other, e.to_string()),
                },
            };
            self.rewind(to, what, force).await
        };
        match result {
            Ok(outcome) => vec![info(self, outcome.describe(undo)), done],
            Err(e @ KernelError::Input(_)) => failed(ids.as_ref(), ErrorKind::Usage, e.to_string()),
            Err(e) => failed(
                ids.as_ref(),
                ErrorKind::Other,
                format!("Could not rewind: {e}"),
            ),
        }
    }
}

/// `/rewind`'s list: each user message with the files its turn changed.
fn describe_points(points: &[RewindPoint]) -> String {
    if points.is_empty() {
        return "Nothing to rewind yet.".into();
    }
    let mut out = String::from(
        "Rewind to just before a message with /rewind N (--files-only, --conversation-only, --force); /undo rewinds the last turn.",
    );
    for p in points {
        let text: String = p.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = if text.chars().count() > 60 {
            format!("{}…", text.chars().take(59).collect::<String>())
        } else {
            text
        };
        let files = if p.files.is_empty() {
            "no files changed".to_owned()
        } else {
            format!("changed {}", p.files.join(", "))
        };
        let note = if p.in_history {
            ""
        } else {
            " (before a compaction: files only)"
        };
        out.push_str(&format!("\n  {}. {text} — {files}{note}", p.number));
    }
    out
}
