//! Checkpoints and rewind (docs/rewind.md): the kernel records, through
//! the scheduler's [`ToolHooks::before_change`], what a call may change
//! before it runs — the file tools' targets, or the project tree before
//! Bash and MCP tools not judged read-only — in `riot-checkpoint`'s store
//! under Riot's home; a rewind puts files back and withdraws the
//! conversation from a user message on.
//!
//! The store reads and writes the disk itself, not through the
//! injected `FileSystem`, as Glob, Grep and `@` mentions walk the project
//! with the `ignore` crate: a checkpoint is about the real files a command
//! changes, which no in-memory file system sees. It runs on blocking
//! threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_checkpoint::{Begun, CheckpointStore, FilesRewind, Scope};
use riot_protocol::{
    Clock, HookVerdict, PathAccess, PermissionTarget, SessionId, ToolCall, ToolCallResult,
    ToolHooks, ToolUseId,
};
use riot_store::{LoadedSession, SessionStore};
use serde::Serialize;

pub use riot_checkpoint::RewindReport;

use crate::KernelError;

/// What a rewind takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindWhat {
    /// Files and conversation (the default).
    Both,
    /// Files only: the conversation goes on.
    FilesOnly,
    /// The conversation only: files stay as they are.
    ConversationOnly,
}

impl RewindWhat {
    fn files(self) -> bool {
        self != RewindWhat::ConversationOnly
    }
    fn conversation(self) -> bool {
        self != RewindWhat::FilesOnly
    }
}

/// What a rewind (or its undo) did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewindOutcome {
    /// The user message rewound to (just before it).
    pub to: u32,
    /// What happened to the files; `None` when they were left alone.
    pub files: Option<RewindReport>,
    /// Whether the conversation was rewound (or, for an undo, restored).
    pub conversation: bool,
    /// The text of message `to`, to edit and send again.
    pub prompt: String,
}

impl RewindOutcome {
    /// One paragraph for a person.
    pub fn describe(&self, undo: bool) -> String {
        let mut out = if undo {
            "Undid the last rewind.".to_owned()
        } else {
            format!("Rewound to just before message {}.", self.to)
        };
        if self.conversation {
            out.push_str(if undo {
                " The conversation is back."
            } else {
                " The conversation from there on is withdrawn."
            });
        }
        match &self.files {
            None => out.push_str(" Files were left as they are."),
            Some(report) => {
                let list = |paths: &[String]| paths.join(", ");
                if report.restored.is_empty() && report.removed.is_empty() {
                    out.push_str(" No file needed restoring.");
                }
                if !report.restored.is_empty() {
                    out.push_str(&format!(" Restored: {}.", list(&report.restored)));
                }
                if !report.removed.is_empty() {
                    out.push_str(&format!(" Removed: {}.", list(&report.removed)));
                }
                let kept: Vec<String> = report
                    .conflicts
                    .iter()
                    .filter(|c| !report.forced.contains(c))
                    .cloned()
                    .collect();
                if !kept.is_empty() {
                    out.push_str(&format!(
                        " Changed by you since the agent, left as they are: {} (to restore them too, undo this rewind and rewind again with --force; your version is kept as a checkpoint first).",
                        list(&kept)
                    ));
                }
                if !report.forced.is_empty() {
                    out.push_str(&format!(
                        " Restored over your changes (undo the rewind to get them back): {}.",
                        list(&report.forced)
                    ));
                }
                for note in &report.notes {
                    out.push(' ');
                    out.push_str(note);
                }
            }
        }
        out
    }
}

/// A point a rewind can go back to: one user message, and what the
/// agent changed in its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewindPoint {
    /// 1-based.
    pub number: u32,
    pub text: String,
    pub at_ms: u64,
    /// Still in the conversation (not before a compaction or `/clear`): the
    /// conversation can be rewound to it.
    pub in_history: bool,
    /// Files the turn changed (project-relative, or absolute outside it).
    pub files: Vec<String>,
    /// Calls that recorded a checkpoint.
    pub calls: usize,
    /// Calls whose end was never recorded (the process was killed).
    pub unfinished: usize,
}

pub use riot_config::checkpoints::CheckpointSettings;

/// The number of the latest user message of a session (1-based; 0 before
/// the first), kept by its transcript sink as prompts are recorded.
#[derive(Debug, Clone, Default)]
pub(crate) struct PromptNumber(Arc<AtomicU32>);

impl PromptNumber {
    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
    pub(crate) fn set(&self, n: u32) {
        self.0.store(n, Ordering::SeqCst);
    }
    pub(crate) fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    pub(crate) fn drop_one(&self) {
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

/// A project's checkpoint store.
pub(crate) fn store_for(
    home: &Path,
    project: &Path,
    settings: CheckpointSettings,
) -> Arc<CheckpointStore> {
    Arc::new(CheckpointStore::open(home, project, settings.store()))
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> KernelError + '_ {
    move |source| KernelError::Io {
        what: what.to_owned(),
        source,
    }
}

async fn blocking<R: Send + 'static>(
    what: &'static str,
    job: impl FnOnce() -> std::io::Result<R> + Send + 'static,
) -> Result<R, KernelError> {
    match tokio::task::spawn_blocking(job).await {
        Ok(result) => result.map_err(io(what)),
        Err(e) => Err(KernelError::Failed(format!("{what}: {e}"))),
    }
}

/// A session's checkpoints: recording them (as tool hooks) and rewinding.
#[derive(Debug)]
pub struct Checkpointer {
    pub(crate) store: Arc<CheckpointStore>,
    pub(crate) session: SessionId,
    pub(crate) prompt: PromptNumber,
    clock: Arc<dyn Clock>,
    /// Records anything (the `enabled` setting).
    enabled: bool,
    /// Records the tree before commands: not when the project is the
    /// filesystem root or the person's home.
    tree: bool,
    pending: Mutex<HashMap<ToolUseId, Begun>>,
}

impl Checkpointer {
    pub(crate) fn new(
        store: Arc<CheckpointStore>,
        session: SessionId,
        prompt: PromptNumber,
        clock: Arc<dyn Clock>,
        settings: CheckpointSettings,
        user_home: Option<&Path>,
    ) -> Self {
        let project = store.project().to_path_buf();
        let tree = project.parent().is_some() && user_home.is_none_or(|h| h != project);
        Self {
            store,
            session,
            prompt,
            clock,
            enabled: settings.enabled,
            tree,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Prunes the project's store by the retention settings, in the
    /// background.
    pub(crate) fn prune_later(&self) {
        let store = Arc::clone(&self.store);
        let now = self.clock.now_ms();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = store.prune(now) {
                tracing::warn!(error = %e, "could not prune checkpoints");
            }
        });
    }

    fn scope(&self, call: &ToolCall, target: &PermissionTarget) -> Option<Scope> {
        match target {
            PermissionTarget::Path {
                path,
                access: PathAccess::Write,
            } => Some(Scope::Files(vec![path.clone()])),
            _ if self.tree && (call.name == "Bash" || call.name.starts_with("mcp__")) => {
                Some(Scope::Tree)
            }
            _ => None,
        }
    }

    async fn before(&self, call: &ToolCall, target: &PermissionTarget) {
        if !self.enabled {
            return;
        }
        let Some(scope) = self.scope(call, target) else {
            return;
        };
        let store = Arc::clone(&self.store);
        let session = self.session.as_str().to_owned();
        let message = self.prompt.get().max(1);
        let tool = call.name.clone();
        let at = self.clock.now_ms();
        match blocking("recording a checkpoint", move || {
            store.begin(&session, message, &tool, scope, at)
        })
        .await
        {
            Ok(begun) => {
                if begun.skipped() > 0 {
                    tracing::info!(
                        files = begun.skipped(),
                        "files over the checkpoint size limit were not recorded"
                    );
                }
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(call.id.clone(), begun);
            }
            Err(e) => {
                tracing::warn!(error = %e, tool = %call.name, "no checkpoint before this call")
            }
        }
    }

    async fn after(&self, call: &ToolCall) {
        let begun = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&call.id);
        let Some(begun) = begun else { return };
        let store = Arc::clone(&self.store);
        let at = self.clock.now_ms();
        if let Err(e) = blocking("recording a checkpoint", move || store.finish(begun, at)).await {
            tracing::warn!(error = %e, tool = %call.name, "the checkpoint after this call was not recorded");
        }
    }
}

/// The session's tool hooks with checkpoints around calls that change
/// files.
#[derive(Debug)]
pub(crate) struct CheckpointHooks {
    pub(crate) inner: Arc<dyn ToolHooks>,
    pub(crate) checkpoints: Arc<Checkpointer>,
}

#[async_trait]
impl ToolHooks for CheckpointHooks {
    async fn pre_tool_use(&self, call: &ToolCall) -> HookVerdict {
        self.inner.pre_tool_use(call).await
    }

    async fn post_tool_use(&self, call: &ToolCall, result: &ToolCallResult) -> Option<String> {
        self.inner.post_tool_use(call, result).await
    }

    async fn before_change(&self, call: &ToolCall, target: &PermissionTarget) {
        self.checkpoints.before(call, target).await;
        self.inner.before_change(call, target).await;
    }

    async fn after_change(&self, call: &ToolCall) {
        self.inner.after_change(call).await;
        self.checkpoints.after(call).await;
    }
}

/// The rewind points of a session: its prompts, each with what its turn
/// changed.
pub(crate) async fn points(
    store: Arc<CheckpointStore>,
    loaded: &LoadedSession,
) -> Result<Vec<RewindPoint>, KernelError> {
    let session = loaded.meta.id.as_str().to_owned();
    let turns = blocking("reading checkpoints", move || store.turns(&session)).await?;
    Ok(loaded
        .prompts
        .iter()
        .map(|p| {
            let turn = turns.iter().find(|t| t.message == p.number);
            RewindPoint {
                number: p.number,
                text: p.text.clone(),
                at_ms: p.at_ms,
                in_history: p.in_history,
                files: turn.map(|t| t.files.clone()).unwrap_or_default(),
                calls: turn.map_or(0, |t| t.calls),
                unfinished: turn.map_or(0, |t| t.unfinished),
            }
        })
        .collect())
}

/// Checks a rewind to `to` against the transcript; the message to
/// withdraw from and its text.
pub(crate) fn target(
    loaded: &LoadedSession,
    to: u32,
    what: RewindWhat,
) -> Result<(riot_protocol::MessageId, String), KernelError> {
    let count = loaded.prompts.len();
    let Some(prompt) = loaded
        .prompts
        .iter()
        .find(|p| p.number == to)
        .filter(|_| to >= 1)
    else {
        return Err(KernelError::Input(if count == 0 {
            "this session has no user message to rewind to yet".to_owned()
        } else {
            format!(
                "there is no user message {to} in this session; choose 1 to {count} (`riot sessions checkpoints ID` lists them)"
            )
        }));
    };
    if what.conversation() && !prompt.in_history {
        return Err(KernelError::Input(format!(
            "message {to} is before the conversation was compacted or cleared, so the conversation cannot go back to it; rewind with --files-only, or to a later message"
        )));
    }
    Ok((prompt.id.clone(), prompt.text.clone()))
}

/// The files part of a rewind (recorded even for a conversation-only
/// one, so undo takes rewinds back in order).
pub(crate) async fn rewind_files(
    store: Arc<CheckpointStore>,
    session: &SessionId,
    to: u32,
    what: RewindWhat,
    force: bool,
    now: u64,
) -> Result<Option<RewindReport>, KernelError> {
    let session = session.as_str().to_owned();
    let files = if what.files() {
        FilesRewind::Yes { force }
    } else {
        FilesRewind::No
    };
    let conversation = what.conversation();
    let report = blocking("rewinding files", move || {
        store.rewind(&session, to, files, conversation, now)
    })
    .await?;
    Ok(what.files().then_some(report))
}

/// The files part of an undo, and whether the conversation is to be
/// restored as well.
pub(crate) async fn undo_files(
    store: Arc<CheckpointStore>,
    session: &SessionId,
    force: bool,
    now: u64,
) -> Result<(u32, Option<RewindReport>, bool), KernelError> {
    let session = session.as_str().to_owned();
    let s = session.clone();
    let st = Arc::clone(&store);
    let Some(last) = blocking("reading checkpoints", move || st.undoable(&s)).await? else {
        return Err(KernelError::Input(
            "there is no rewind to undo: nothing was rewound, or the session went on after the last rewind".into(),
        ));
    };
    let report = blocking("undoing a rewind", move || store.undo(&session, force, now)).await?;
    Ok((last.to, last.files.then_some(report), last.conversation))
}

impl crate::Kernel {
    /// The checkpoint store of a session's project.
    fn session_checkpoints(
        &self,
        id: &SessionId,
    ) -> Result<(SessionStore, LoadedSession, Arc<CheckpointStore>), KernelError> {
        let sessions = self.store();
        let loaded = sessions.load(id)?;
        let project: PathBuf = loaded.meta.cwd.clone();
        let store = store_for(self.home(), &project, CheckpointSettings::default());
        Ok((sessions, loaded, store))
    }

    /// `riot sessions checkpoints ID`: the session's user messages, each
    /// with the files its turn changed.
    pub async fn rewind_points(&self, id: &SessionId) -> Result<Vec<RewindPoint>, KernelError> {
        let (_, loaded, store) = self.session_checkpoints(id)?;
        points(store, &loaded).await
    }

    /// `riot sessions rewind ID --to N`: rewinds a session that is not
    /// open (an open one rewinds through its handle).
    pub async fn rewind(
        &self,
        id: &SessionId,
        to: u32,
        what: RewindWhat,
        force: bool,
    ) -> Result<RewindOutcome, KernelError> {
        let (sessions, loaded, store) = self.session_checkpoints(id)?;
        let (from, prompt) = target(&loaded, to, what)?;
        let now = self.capabilities().clock.now_ms();
        let files = rewind_files(store, id, to, what, force, now).await?;
        if what.conversation() {
            sessions.append_to(id)?.rewound(to, &from, now)?;
        }
        Ok(RewindOutcome {
            to,
            files,
            conversation: what.conversation(),
            prompt,
        })
    }

    /// `riot sessions rewind ID --undo`: undoes the session's last rewind.
    pub async fn undo_rewind(
        &self,
        id: &SessionId,
        force: bool,
    ) -> Result<RewindOutcome, KernelError> {
        let (sessions, loaded, store) = self.session_checkpoints(id)?;
        let now = self.capabilities().clock.now_ms();
        let (to, files, conversation) = undo_files(store, id, force, now).await?;
        let conversation = conversation && loaded.undoable_rewind;
        if conversation {
            sessions.append_to(id)?.rewind_undone(now)?;
        }
        Ok(RewindOutcome {
            to,
            files,
            conversation,
            prompt: String::new(),
        })
    }
}

/// What an open session keeps for rewind: its checkpoints and the
/// transcript store it reads its prompts from.
#[derive(Debug)]
pub(crate) struct Rewinds {
    pub(crate) checkpoints: Arc<Checkpointer>,
    pub(crate) sessions: SessionStore,
}

impl Rewinds {
    /// A session's: the project's store with the settings, the prompt
    /// count a resumed session starts from, and a prune of old
    /// checkpoints in the background.
    pub(crate) fn open(
        kernel: &crate::Kernel,
        loaded: &crate::kernel::LoadedConfig,
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
        session: &SessionId,
        resumed: Option<&LoadedSession>,
    ) -> Self {
        let settings = loaded.config.checkpoints;
        let store = store_for(kernel.home(), cwd, settings);
        let prompt = PromptNumber::default();
        if let Some(resumed) = resumed {
            prompt.set(u32::try_from(resumed.prompts.len()).unwrap_or(u32::MAX));
        }
        let checkpoints = Arc::new(Checkpointer::new(
            store,
            session.clone(),
            prompt,
            Arc::clone(&kernel.capabilities().clock),
            settings,
            crate::world::user_home(env).as_deref(),
        ));
        if settings.enabled {
            checkpoints.prune_later();
        }
        Self {
            checkpoints,
            sessions: kernel.store(),
        }
    }
}

/// `base` with its hooks wrapped in checkpoints, when there are any.
pub(crate) fn wrap_hooks(
    mut base: crate::runner::StackBase,
    checkpoints: Option<Arc<Checkpointer>>,
) -> crate::runner::StackBase {
    if let Some(checkpoints) = checkpoints {
        base.hooks = Arc::new(CheckpointHooks {
            inner: Arc::clone(&base.hooks),
            checkpoints,
        });
    }
    base
}
