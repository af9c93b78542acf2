//! Running tools outside a model turn (`riot tools list`, `riot tools
//! call`): the same tools, policy and scheduler a session assembles, and
//! the file state a session persists, so `tools call --session ID` sees
//! what that session read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_protocol::{
    FileState, FileStateStore, FileSystem, PermissionGate, PermissionMode, SessionId, ToolEnv,
};
use riot_tools::{Scheduler, SchedulerConfig};

use crate::config::FlagLayer;
use crate::session::{Kernel, KernelError};

/// Where a session's file state is kept between processes:
/// `<riot home>/file-state/<session id>.json`.
pub fn file_state_path(home: &Path, session: &SessionId) -> PathBuf {
    home.join("file-state")
        .join(format!("{}.json", session.as_str()))
}

/// Loads a persisted file state into `store` (missing or unreadable: empty).
pub async fn load_file_state(fs: &dyn FileSystem, path: &Path, store: &FileStateStore) {
    let Ok(bytes) = fs.read(path).await else {
        return;
    };
    match serde_json::from_slice::<Vec<(PathBuf, FileState)>>(&bytes) {
        Ok(entries) => {
            for (p, s) in entries {
                store.set(p, s);
            }
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable file state")
        }
    }
}

/// Persists `store` (atomically).
pub async fn save_file_state(
    fs: &dyn FileSystem,
    path: &Path,
    store: &FileStateStore,
) -> std::io::Result<()> {
    let text = serde_json::to_vec(&store.snapshot()).map_err(std::io::Error::other)?;
    if let Some(parent) = path.parent() {
        fs.create_dir_all(parent).await?;
    }
    fs.write_atomic(path, &text).await
}

/// The tools of a project, ready to run.
#[derive(Debug)]
pub struct ToolHarness {
    pub scheduler: Arc<Scheduler>,
    pub mode: PermissionMode,
    file_state: Arc<FileStateStore>,
    state_path: Option<PathBuf>,
    fs: Arc<dyn FileSystem>,
}

impl ToolHarness {
    /// Saves the file state back to the session, if one was named.
    pub async fn save(&self) -> std::io::Result<()> {
        match &self.state_path {
            Some(path) => save_file_state(self.fs.as_ref(), path, &self.file_state).await,
            None => Ok(()),
        }
    }
}

impl Kernel {
    /// Assembles the tools for `cwd` as a session would, with `gate`
    /// answering questions; with `session`, in that session's file state.
    pub async fn tools(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        flags: &FlagLayer,
        trust_project: bool,
        gate: Arc<dyn PermissionGate>,
        session: Option<&SessionId>,
    ) -> Result<ToolHarness, KernelError> {
        let loaded = self.load_config(cwd, env, flags, trust_project).await?;
        let caps = self.capabilities();
        let (spill, state_path) = match session {
            Some(id) => {
                // The session must exist: refuse a typo instead of starting empty.
                self.store()
                    .load(id)
                    .map_err(|e| KernelError::Usage(e.to_string()))?;
                (
                    self.home().join("spill").join(id.as_str()),
                    Some(file_state_path(self.home(), id)),
                )
            }
            None => (self.home().join("spill").join("tools-call"), None),
        };
        let mut tool_env = ToolEnv::new(
            cwd.to_path_buf(),
            spill,
            Arc::clone(&caps.fs),
            Arc::clone(&caps.proc),
            Arc::clone(&caps.clock),
            Arc::clone(&caps.ids),
        );
        tool_env.scrubbed_env = self.scrubbed_env(&loaded.config);
        tool_env.home = crate::session::user_home(env);
        if let Some(path) = &state_path {
            load_file_state(caps.fs.as_ref(), path, &tool_env.file_state).await;
        }
        let file_state = Arc::clone(&tool_env.file_state);
        let policy = self.policy(&loaded.config, cwd, env);
        let skills = crate::skills::SkillCatalog::discover(
            caps.fs.as_ref(),
            self.home(),
            &loaded.project_root,
            loaded.trusted,
        )
        .await
        .catalog;
        let scheduler = Arc::new(Scheduler::new(
            crate::session::session_tools(
                &crate::todo::TodoList::default(),
                &skills,
                &gate,
                &crate::plan::ModeCell::new(loaded.config.mode()),
                None,
            ),
            Arc::new(tool_env),
            Arc::new(policy),
            gate,
            SchedulerConfig::default(),
        ));
        Ok(ToolHarness {
            scheduler,
            mode: loaded.config.mode(),
            file_state,
            state_path,
            fs: Arc::clone(&caps.fs),
        })
    }

    /// The chain's decision for one call of a built-in tool, without
    /// running it (`riot permissions check`). The tool itself supplies its
    /// facts (read-only, target path or command) exactly as in a session.
    pub async fn check_permission(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        flags: &FlagLayer,
        trust_project: bool,
        tool_name: &str,
        input: serde_json::Value,
    ) -> Result<riot_protocol::PermissionResult, KernelError> {
        let loaded = self.load_config(cwd, env, flags, trust_project).await?;
        let policy = self.policy(&loaded.config, cwd, env);
        let tools = riot_tools::builtin();
        let Some(tool) = tools.iter().find(|t| t.name() == tool_name) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            return Err(KernelError::Usage(format!(
                "unknown tool `{tool_name}`; built-in tools: {}",
                names.join(", ")
            )));
        };
        let call = Arc::clone(tool)
            .prepare(input.clone())
            .map_err(|e| KernelError::Usage(riot_tools::scheduler::schema_hint(tool_name, &e)))?;
        let mut tool_env = ToolEnv::new(
            cwd.to_path_buf(),
            self.home().join("spill"),
            Arc::clone(&self.capabilities().fs),
            Arc::clone(&self.capabilities().proc),
            Arc::clone(&self.capabilities().clock),
            Arc::clone(&self.capabilities().ids),
        );
        // `~/` means the same home to the tool as to the chain.
        tool_env.home = crate::session::user_home(env);
        let tool_env = Arc::new(tool_env);
        let ctx = riot_protocol::ToolContext {
            env: tool_env,
            tool_use_id: riot_protocol::ToolUseId::new("check"),
            mode: loaded.config.mode(),
            cancel: tokio_util::sync::CancellationToken::new(),
            progress: None,
        };
        let query = riot_protocol::PermissionQuery {
            tool_name: tool_name.to_owned(),
            input,
            is_read_only: call.is_read_only(),
            target: call.permission_target(&ctx),
            tool_verdict: call.check_permissions(&ctx).await,
            classifier_input: call.classifier_input(),
            mode: loaded.config.mode(),
            hook: None,
        };
        Ok(riot_protocol::PermissionPolicy::decide(&policy, &query).await)
    }
}
