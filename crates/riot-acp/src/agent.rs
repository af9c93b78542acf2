//! The ACP agent: the session table and one handler per client method.
//! Handlers that wait (opening a session, running a turn) run in their own
//! task, because the SDK's dispatch loop is blocked while a handler runs
//! and `session/cancel` must get through while a turn streams.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    CancelNotification, SessionNotification, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use riot_config::FlagLayer;
use riot_kernel::{Kernel, SessionHandle};
use riot_protocol::{CancelReason, FileSystem, SessionId};

use crate::client_fs::EditorFs;
use crate::error::{RequestError, SessionError, kernel_error};
use crate::ext;
use crate::mapping::ToolCalls;
use crate::session_config::Shown;

#[path = "agent_editor.rs"]
mod editor;
#[path = "agent_open.rs"]
mod open;
#[path = "agent_parallel.rs"]
mod parallel;
#[path = "agent_questions.rs"]
mod questions;
#[path = "agent_rewind.rs"]
mod rewind;
#[path = "agent_serve.rs"]
mod serve;
#[path = "agent_turn.rs"]
mod turn;

pub(crate) use serve::serve_on;
pub use serve::serve_stdio;

/// What `riot acp` was started with: the kernel and the defaults every
/// new session gets (docs/interfaces.md: provider options apply as defaults).
#[derive(Debug, Clone)]
pub struct AcpConfig {
    pub kernel: Kernel,
    /// Resolves the client's `cwd` to the canonical project directory.
    pub fs: Arc<dyn FileSystem>,
    /// The process environment.
    pub env: BTreeMap<String, String>,
    pub flags: FlagLayer,
    pub trust_project: bool,
    pub max_turns: Option<u32>,
    /// The project directory the person started Riot in (`riot serve
    /// --cwd`), offered to clients as `_meta.riot.defaultCwd` of the
    /// `initialize` response; sessions still name their own `cwd`.
    pub default_cwd: Option<PathBuf>,
}

/// One open session and the state its handlers share.
#[derive(Debug)]
struct Slot {
    session: SessionHandle,
    calls: Arc<Mutex<ToolCalls>>,
    /// The session's canonical project directory.
    cwd: PathBuf,
    /// Its slash commands, as announced to the client.
    commands: SessionUpdate,
    /// The models offered as its `model` config option.
    models: Vec<crate::session_config::Choice>,
    /// What the client was last told of its config options.
    shown: Mutex<Shown>,
    /// The title the client was last told (`session_info_update`).
    title: Mutex<Option<String>>,
    /// Stops the task reporting its option changes.
    closed: tokio_util::sync::CancellationToken,
    /// The git worktree it works in (`_meta.riot.worktree` on
    /// `session/new`, or the recorded one of a loaded session), finished
    /// when the session closes.
    worktree: Option<riot_worktree::Worktree>,
}

/// Tells every connection of a face to stop gracefully (`_riot/shutdown`,
/// a signal): running turns are cancelled and allowed to finish, so each
/// transcript ends with its tool calls paired, and each pending prompt
/// gets its response before the connection closes.
#[derive(Debug, Clone, Default)]
pub struct Shutdown(tokio_util::sync::CancellationToken);

impl Shutdown {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks everything watching this to stop; idempotent.
    pub fn trigger(&self) {
        self.0.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Resolves once [`trigger`](Self::trigger) was called.
    pub async fn triggered(&self) {
        self.0.cancelled().await;
    }
}

#[derive(Debug)]
struct RiotAgent {
    config: AcpConfig,
    sessions: Mutex<HashMap<String, Arc<Slot>>>,
    stop: Shutdown,
    /// The prompt tasks, so a shutdown waits for their responses.
    turns: tokio_util::task::TaskTracker,
    /// The `_riot/...` notifications the client asked for in `initialize`.
    wanted: Mutex<Vec<String>>,
    /// The editor's file methods the client offered in `initialize`.
    editor_fs: Mutex<EditorFs>,
    /// Whether the client offered its terminals (`terminal` in
    /// `initialize`): Bash's foreground commands then run there.
    editor_terminals: Mutex<bool>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn send(cx: &ConnectionTo<Client>, session_id: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(session_id.to_owned(), update)) {
        tracing::warn!(error = %e, "could not send a session update");
    }
}

fn reply<T: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<T>,
    result: Result<T, Error>,
) {
    let sent = match result {
        Ok(response) => responder.respond(response),
        Err(e) => responder.respond_with_error(e),
    };
    if let Err(e) = sent {
        tracing::warn!(error = %e, "could not send a response");
    }
}

impl RiotAgent {
    /// Sends one of Riot's extension notifications (`ext.rs`) if the
    /// client asked for it.
    fn notify(
        &self,
        cx: &ConnectionTo<Client>,
        notification: impl agent_client_protocol::JsonRpcNotification,
    ) {
        let method = notification.method().to_owned();
        if !lock(&self.wanted).contains(&method) {
            return;
        }
        if let Err(e) = cx.send_notification(notification) {
            tracing::warn!(error = %e, method, "could not send a _riot notification");
        }
    }

    fn slot(&self, id: &str) -> Result<Arc<Slot>, Error> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| SessionError::Unknown { id: id.to_owned() }.into())
    }

    fn cancel(&self, notification: &CancelNotification) {
        let id = notification.session_id.0.to_string();
        let Ok(slot) = self.slot(&id) else {
            tracing::info!(session = %id, "cancel for an unknown session");
            return;
        };
        slot.session.cancel(CancelReason::User);
    }

    /// Cancels every running turn for a shutdown; how many there were.
    fn cancel_all(&self) -> u32 {
        let slots: Vec<Arc<Slot>> = lock(&self.sessions).values().cloned().collect();
        let mut cancelled = 0;
        for slot in slots {
            if slot.session.cancel(CancelReason::Shutdown) {
                cancelled += 1;
            }
        }
        cancelled
    }

    /// The end of the connection: running turns are cancelled and run to
    /// their end (results recorded, responses sent), then the sessions are
    /// closed.
    async fn wind_down(&self) {
        let cancelled = self.cancel_all();
        if cancelled > 0 {
            tracing::info!(cancelled, "ACP: waiting for cancelled turns to end");
        }
        self.turns.close();
        self.turns.wait().await;
        let slots: Vec<Arc<Slot>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for slot in slots {
            slot.shut().await;
            if let Some(w) = &slot.worktree {
                self.finish_worktree(w).await;
            }
        }
    }

    /// A session's worktree at its end: removed if unchanged, else kept.
    async fn finish_worktree(&self, worktree: &riot_worktree::Worktree) {
        match self.config.kernel.worktrees().finish(worktree).await {
            Ok(end) => tracing::info!("ACP: {}", end.describe(worktree)),
            Err(e) => tracing::warn!(worktree = %worktree.name, "ACP: worktree kept: {e}"),
        }
    }

    /// Tells the client which slash commands the session has.
    fn announce_commands(&self, cx: &ConnectionTo<Client>, id: &str) {
        if let Ok(slot) = self.slot(id) {
            send(cx, id, slot.commands.clone());
        }
    }

    async fn set_mode(
        &self,
        request: &SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let id = request.session_id.0.to_string();
        let slot = self.slot(&id)?;
        let mode = editor::offered(&request.mode_id.0)?;
        // During a turn it applies from the next batch of tool calls.
        slot.session.set_mode(mode).await.map_err(kernel_error)?;
        Ok(SetSessionModeResponse::new())
    }
}

impl RiotAgent {
    /// `_riot/config`: the model configuration and the `notifications`
    /// setting in effect.
    async fn model_config(&self, request: &ext::ConfigRequest) -> ext::ConfigResponse {
        let cwd = request
            .cwd
            .clone()
            .or_else(|| self.config.env.get("HOME").cloned())
            .unwrap_or_else(|| "/".into());
        let cwd = std::path::Path::new(&cwd);
        let kernel = &self.config.kernel;
        let (env, flags, trust) = (
            &self.config.env,
            &self.config.flags,
            self.config.trust_project,
        );
        let mut response: ext::ConfigResponse =
            kernel.model_status(cwd, env, flags, trust).await.into();
        // A settings file Riot cannot read is already the answer's `problem`.
        if let Ok(loaded) = kernel.load_config(cwd, env, flags, trust).await {
            response.notifications = Some(loaded.config.notifications.settings);
        }
        response
    }

    /// `_riot/config_set`: saves, then reports what new sessions get.
    async fn set_model_config(
        &self,
        request: ext::ConfigSetRequest,
    ) -> Result<ext::ConfigResponse, Error> {
        let choice = riot_kernel::model_settings::ModelChoice {
            provider: request.provider,
            model: request.model,
            base_url: request.base_url,
            api_key: request
                .api_key
                .map(|k| riot_config::credentials::Secret::new(k.0)),
        };
        self.config
            .kernel
            .save_model_choice(&choice)
            .await
            .map_err(kernel_error)?;
        tracing::info!(provider = %choice.provider, model = %choice.model, "ACP: model settings saved");
        Ok(self.model_config(&ext::ConfigRequest::default()).await)
    }

    /// `_riot/files`.
    async fn files(&self, request: &ext::FilesRequest) -> Result<ext::FilesResponse, Error> {
        let cwd = PathBuf::from(&request.cwd);
        if !cwd.is_absolute() {
            return Err(RequestError::RelativeCwd { cwd }.into());
        }
        let root = self
            .config
            .fs
            .canonicalize(&cwd)
            .await
            .map_err(|source| RequestError::Cwd {
                cwd: cwd.clone(),
                source,
            })?;
        let limit = request.limit.unwrap_or(50).clamp(1, 500);
        let files = self
            .config
            .kernel
            .project_files(&root, &request.query, limit)
            .await
            .map_err(kernel_error)?;
        Ok(ext::FilesResponse { files, meta: None })
    }

    /// `_riot/session_rename`.
    fn rename_session(
        &self,
        cx: &ConnectionTo<Client>,
        request: &ext::SessionRenameRequest,
    ) -> Result<ext::DoneResponse, Error> {
        self.config
            .kernel
            .rename_session(&SessionId::new(request.session_id.clone()), &request.title)
            .map_err(kernel_error)?;
        if let Ok(slot) = self.slot(&request.session_id) {
            self.announce_title(cx, &request.session_id, &slot);
        }
        Ok(ext::DoneResponse::default())
    }

    /// `_riot/session_delete`: refused while a turn runs in it or another
    /// client has it open; open and idle on this connection, it is closed
    /// first.
    async fn delete_session(
        &self,
        request: &ext::SessionDeleteRequest,
    ) -> Result<ext::DoneResponse, Error> {
        self.delete_by_id(&request.session_id).await?;
        Ok(ext::DoneResponse::default())
    }

    /// Deletes a saved session (`_riot/session_delete`, `session/delete`).
    async fn delete_by_id(&self, id: &String) -> Result<(), Error> {
        let open = lock(&self.sessions).get(id).cloned();
        if let Some(slot) = open {
            if slot.session.is_running() {
                return Err(SessionError::RunningOnDelete { id: id.clone() }.into());
            }
            lock(&self.sessions).remove(id);
            // Closed before the check below, which counts open sessions.
            slot.shut().await;
            if let Some(w) = &slot.worktree {
                self.finish_worktree(w).await;
            }
        }
        let session_id = SessionId::new(id.clone());
        // Open by another client of this server (another window or tab).
        if self.config.kernel.is_open(&session_id) {
            return Err(SessionError::OpenElsewhere { id: id.clone() }.into());
        }
        self.config
            .kernel
            .store()
            .delete(&session_id)
            .map_err(SessionError::Delete)?;
        tracing::info!(session = %id, "ACP: session deleted");
        Ok(())
    }

    /// `_riot/set_model`: now, or from the running turn's next request.
    async fn set_model(&self, request: &ext::SetModelRequest) -> Result<ext::DoneResponse, Error> {
        let model = request.model.trim();
        if model.is_empty() {
            return Err(RequestError::EmptyModelName.into());
        }
        let slot = self.slot(&request.session_id)?;
        slot.session.set_model(model).await.map_err(kernel_error)?;
        Ok(ext::DoneResponse::default())
    }
}
