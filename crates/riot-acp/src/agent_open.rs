//! Opening sessions: `session/new` (in a worktree when asked),
//! `session/load` (the conversation replayed), `session/resume` through
//! [`RiotAgent::open_saved`], and `session/list`; each open session runs
//! on the editor's file system and terminals where the client offers
//! them. A child module of `agent.rs`, sharing its session table.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpServer,
    NewSessionRequest, NewSessionResponse, SessionInfo,
};
use agent_client_protocol::{Client, Error};
use riot_kernel::{Kernel, OpenOptions, ResumeFrom};
use riot_protocol::{FileSystem, SessionId};

use super::{RiotAgent, Slot, editor, kernel_error, lock, send};
use crate::client_fs::ClientFs;
use crate::client_terminal::EditorTerminals;
use crate::error::{InternalError, RequestError, SessionError};
use crate::ext;
use crate::mapping::{self, ToolCalls};
use crate::session_config::Shown;

/// What the editor lends a session it offered them for: its file system
/// and its terminals.
struct EditorHosts {
    fs: Option<Arc<ClientFs>>,
    terminals: Option<Arc<EditorTerminals>>,
}

impl EditorHosts {
    /// Ties them to the session `id` once it has one.
    fn bind(&self, id: &str) {
        if let Some(fs) = &self.fs {
            fs.bind(id);
        }
        if let Some(host) = &self.terminals {
            host.bind(id);
        }
    }
}

impl RiotAgent {
    async fn open(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: PathBuf,
        resume: Option<ResumeFrom>,
        mcp_servers: Vec<McpServer>,
        worktree: Option<riot_worktree::Worktree>,
    ) -> Result<(String, Arc<Slot>), Error> {
        if !cwd.is_absolute() {
            return Err(RequestError::RelativeCwd { cwd }.into());
        }
        // A saved session whose worktree was removed cannot open where it
        // worked: say so rather than that its directory is missing. One
        // whose worktree is there finishes it when it closes, as the
        // session that made it would (kept while another works in it).
        let mut worktree = worktree;
        if let Some(ResumeFrom::Id(id)) = &resume {
            let recorded = self
                .config
                .kernel
                .session_worktree(id)
                .await
                .map_err(SessionError::Worktree)?;
            if worktree.is_none() {
                worktree = recorded;
            }
        }
        // Canonical, so sessions and trust match however the path was sent.
        let cwd = self
            .config
            .fs
            .canonicalize(&cwd)
            .await
            .map_err(|source| RequestError::Cwd {
                cwd: cwd.clone(),
                source,
            })?;
        let (mcp_servers, refused) = mapping::mcp_servers(mcp_servers);
        for why in &refused {
            tracing::warn!("not starting an MCP server the client handed over: {why}");
        }
        let calls = Arc::new(Mutex::new(ToolCalls::new(cwd.clone())));
        let options_cwd = cwd.clone();
        let (kernel, hosts) = self.editor_kernel(cx, &cwd, &calls);
        let options = OpenOptions {
            cwd,
            env: self.config.env.clone(),
            flags: self.config.flags.clone(),
            trust_project: self.config.trust_project,
            max_turns: self.config.max_turns,
            resume,
            asker: riot_kernel::Asker::Person,
            mcp_servers,
        };
        let session = kernel.start(options).await.map_err(kernel_error)?;
        let id = session.id().to_string();
        hosts.bind(&id);
        for notice in session.notices() {
            tracing::info!(session = %id, "{notice}");
        }
        let commands = mapping::available_commands(session.commands());
        let models = self.offered_models(&options_cwd, &session).await;
        let shown = Shown::of(&session.status());
        let title = self.stored_title(&id);
        let slot = Arc::new(Slot {
            commands,
            session,
            calls,
            cwd: options_cwd,
            models,
            shown: Mutex::new(shown),
            title: Mutex::new(title),
            closed: tokio_util::sync::CancellationToken::new(),
            worktree,
        });
        editor::watch_options(cx.clone(), id.clone(), Arc::clone(&slot));
        super::questions::watch(cx.clone(), id.clone(), Arc::clone(&slot));
        self.watch_updates(cx, &id, &slot);
        lock(&self.sessions).insert(id.clone(), Arc::clone(&slot));
        Ok((id, slot))
    }

    /// The kernel a session in `cwd` runs on: on the editor's file system
    /// and terminals where the client offers them, which come with it.
    fn editor_kernel(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: &std::path::Path,
        calls: &Arc<Mutex<ToolCalls>>,
    ) -> (Kernel, EditorHosts) {
        // The editor's file system for this session's text files, when
        // the client offers it.
        let offered = *lock(&self.editor_fs);
        let client_fs = offered.any().then(|| {
            Arc::new(ClientFs::new(
                Arc::clone(&self.config.kernel.capabilities().fs),
                cx.clone(),
                cwd.to_path_buf(),
                offered,
            ))
        });
        let kernel = match &client_fs {
            Some(fs) => self
                .config
                .kernel
                .with_file_system(Arc::clone(fs) as Arc<dyn FileSystem>),
            None => self.config.kernel.clone(),
        };
        // The editor's terminals for Bash's foreground commands.
        let terminals = (*lock(&self.editor_terminals)).then(|| {
            Arc::new(EditorTerminals::new(
                cx.clone(),
                Arc::clone(calls),
                Arc::clone(&self.config.kernel.capabilities().clock),
            ))
        });
        let kernel = match &terminals {
            Some(host) => {
                kernel.with_command_host(Arc::clone(host) as Arc<dyn riot_protocol::CommandHost>)
            }
            None => kernel,
        };
        (
            kernel,
            EditorHosts {
                fs: client_fs,
                terminals,
            },
        )
    }

    /// Opens a saved session (`session/resume`).
    pub(super) async fn open_saved(
        &self,
        cx: &ConnectionTo<Client>,
        cwd: PathBuf,
        resume: Option<ResumeFrom>,
        mcp_servers: Vec<McpServer>,
    ) -> Result<Arc<Slot>, Error> {
        Ok(self.open(cx, cwd, resume, mcp_servers, None).await?.1)
    }

    pub(super) async fn new_session(
        &self,
        cx: &ConnectionTo<Client>,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        let asked = ext::worktree_asked(request.meta.as_ref()).map_err(RequestError::from)?;
        let worktree = match asked {
            Some(name) => Some(self.worktree_for(&request.cwd, &name).await?),
            None => None,
        };
        let cwd = worktree.as_ref().map_or(request.cwd, |w| w.cwd.clone());
        let opened = self
            .open(cx, cwd, None, request.mcp_servers, worktree.clone())
            .await;
        let (id, slot) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                if let Some(w) = &worktree {
                    self.finish_worktree(w).await;
                }
                return Err(e);
            }
        };
        let status = slot.session.status();
        let mut meta = ext::session_meta(&status.model, slot.session.sandbox());
        if let Some(w) = &slot.worktree {
            ext::add_worktree(&mut meta, w);
        }
        Ok(NewSessionResponse::new(id)
            .modes(mapping::mode_state(status.mode))
            .config_options(slot.options())
            .meta(meta))
    }

    /// ACP `session/load`: the whole conversation is replayed as updates
    /// before the response (docs/design.md §12).
    pub(super) async fn load_session(
        &self,
        cx: &ConnectionTo<Client>,
        request: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        let id = request.session_id.0.to_string();
        let existing = lock(&self.sessions).get(&id).cloned();
        let slot = match existing {
            Some(slot) => slot,
            None => {
                let resume = Some(ResumeFrom::Id(SessionId::new(id.clone())));
                self.open(cx, request.cwd, resume, request.mcp_servers, None)
                    .await?
                    .1
            }
        };
        if slot.session.is_running() {
            return Err(SessionError::RunningOnLoad { id }.into());
        }
        let messages = slot.session.messages().await.map_err(kernel_error)?;
        let mut replay = ToolCalls::new(slot.cwd.clone());
        for message in &messages {
            for update in replay.message_updates(message, true) {
                send(cx, &id, update);
            }
        }
        let status = slot.session.status();
        Ok(LoadSessionResponse::new()
            .modes(mapping::mode_state(status.mode))
            .config_options(slot.options())
            .meta(ext::session_meta(&status.model, slot.session.sandbox())))
    }

    /// ACP `session/list`: the transcripts in Riot's home, newest first,
    /// optionally only those of one directory. Subagent transcripts are
    /// not sessions a person resumes, so they are left out.
    pub(super) async fn list_sessions(
        &self,
        request: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let cwd = match request.cwd {
            Some(cwd) => Some(self.config.fs.canonicalize(&cwd).await.unwrap_or(cwd)),
            None => None,
        };
        let summaries = self
            .config
            .kernel
            .store()
            .list()
            .map_err(InternalError::SessionList)?;
        let mut sessions = Vec::new();
        for s in summaries
            .into_iter()
            .filter(|s| s.parent.is_none())
            .filter(|s| cwd.as_ref().is_none_or(|c| *c == s.cwd))
        {
            // Whether its worktree is still there (`riot worktree remove`
            // or the end of an unchanged session removes it).
            let present = match &s.worktree {
                Some(w) => Some(self.config.fs.metadata(&w.path).await.is_ok()),
                None => None,
            };
            let mut info = SessionInfo::new(s.id.to_string(), s.cwd)
                .updated_at(mapping::rfc3339(s.updated_ms));
            if !s.title.is_empty() {
                info = info.title(s.title);
            }
            if let (Some(w), Some(present)) = (&s.worktree, present) {
                info = info.meta(ext::listed_worktree(w, present));
            }
            sessions.push(info);
        }
        Ok(ListSessionsResponse::new(sessions))
    }

    /// A worktree for a new session, made from the project `cwd` is in.
    async fn worktree_for(
        &self,
        cwd: &std::path::Path,
        name: &str,
    ) -> Result<riot_worktree::Worktree, Error> {
        let name = (!name.is_empty()).then_some(name);
        self.config
            .kernel
            .worktrees()
            .create(cwd, name)
            .await
            .map_err(|e| kernel_error(e.into()))
    }
}
