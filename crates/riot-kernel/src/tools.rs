//! Running tools outside a model turn (`riot tools list`, `riot tools
//! call`, `riot permissions check`): the tool stack a session in the same
//! directory assembles (`crate::stack`) — the same tools in the same
//! order, chain, hooks and MCP servers — and the file state a session
//! persists, so `tools call --session ID` sees what that session read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_protocol::{FileSystem, PermissionGate, PermissionMode, SessionId};
use riot_store::LoadedSession;

use crate::error::KernelError;
use crate::error::NoModel;
use crate::kernel::Kernel;
use crate::runner::SessionRunner;
use crate::stack::{ModelAccess, StackOptions, ToolStack};
use crate::world::SessionModel;
use riot_config::{Config, FlagLayer};

pub use crate::file_state::{file_state_path, load_file_state, save_file_state};

/// The tools of a project, ready to run: a session's tool stack.
#[derive(Debug)]
pub struct ToolHarness {
    pub stack: ToolStack,
    /// The mode calls run in (the configured one).
    pub mode: PermissionMode,
    /// The model a session here would talk to (`None`: none configured)
    /// and its context window, which sized the declarations.
    pub model: Option<String>,
    pub context_window: u64,
    state_path: Option<PathBuf>,
    fs: Arc<dyn FileSystem>,
}

impl ToolHarness {
    /// The scheduler, as a session's loop uses it.
    pub fn runner(&self) -> &Arc<SessionRunner> {
        &self.stack.runner
    }

    /// Saves the file state back to the session, if one was named.
    pub async fn save(&self) -> std::io::Result<()> {
        match &self.state_path {
            Some(path) => save_file_state(self.fs.as_ref(), path, &self.stack.file_state).await,
            None => Ok(()),
        }
    }

    /// Stops the MCP servers the harness started.
    pub async fn close(&self) {
        self.stack.shutdown_mcp().await;
    }
}

/// Where an inspection command runs: the directory, the environment, the
/// flags, and whether to trust the project first.
#[derive(Debug, Clone, Copy)]
pub struct Inspect<'a> {
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<String, String>,
    pub flags: &'a FlagLayer,
    pub trust_project: bool,
}

impl Kernel {
    /// Assembles the tools for `at.cwd` as a session would, with `gate`
    /// answering questions; with `session`, in that session's file state
    /// (and its endpoint, for Task and the classifier).
    pub async fn tools(
        &self,
        at: Inspect<'_>,
        gate: Arc<dyn PermissionGate>,
        session: Option<&SessionId>,
    ) -> Result<ToolHarness, KernelError> {
        let loaded = self
            .load_config(at.cwd, at.env, at.flags, at.trust_project)
            .await?;
        // The session must exist: refuse a typo instead of starting empty.
        let resumed = match session {
            Some(id) => Some(self.store().load(id)?),
            None => None,
        };
        let state_path = session.map(|id| file_state_path(self.home(), id));
        let owner = session
            .cloned()
            .unwrap_or_else(|| SessionId::new("tools-call"));
        let (model, context_window) = self
            .inspection_model(&loaded.config, at, resumed.as_ref())
            .await;
        let model_name = match &model {
            Ok(access) => Some(access.model.get()),
            Err(_) => loaded.config.model.as_ref().map(|m| m.value.clone()),
        };
        let stack = self
            .tool_stack(
                &loaded,
                StackOptions {
                    cwd: at.cwd.to_path_buf(),
                    env: at.env.clone(),
                    gate,
                    owner,
                    file_state: state_path.clone(),
                    model,
                    context_window,
                    start_mcp: true,
                    session_mcp: Vec::new(),
                    checkpoints: None,
                },
            )
            .await?;
        Ok(ToolHarness {
            mode: loaded.config.mode(),
            model: model_name,
            context_window,
            stack,
            state_path,
            fs: Arc::clone(&self.capabilities().fs),
        })
    }

    /// The chain's decision for one call of a session's tool, without
    /// running it (`riot permissions check`). The tool itself supplies its
    /// facts (read-only, target path or command) exactly as in a session,
    /// on a session's tool stack. A check asks no model: in auto mode, a
    /// call the classifier would judge is an `ask` here. MCP servers start
    /// only to check an MCP tool.
    pub async fn check_permission(
        &self,
        at: Inspect<'_>,
        tool_name: &str,
        input: serde_json::Value,
    ) -> Result<riot_protocol::PermissionResult, KernelError> {
        let loaded = self
            .load_config(at.cwd, at.env, at.flags, at.trust_project)
            .await?;
        let mcp = tool_name.starts_with("mcp__");
        let stack = self
            .tool_stack(
                &loaded,
                StackOptions {
                    cwd: at.cwd.to_path_buf(),
                    env: at.env.clone(),
                    gate: Arc::new(crate::gate::NobodyAnswers),
                    owner: SessionId::new("permissions-check"),
                    file_state: None,
                    model: Err(NoModel::PermissionCheck),
                    context_window: unconfigured_window(&loaded.config),
                    start_mcp: mcp,
                    session_mcp: Vec::new(),
                    checkpoints: None,
                },
            )
            .await?;
        if mcp {
            stack.mcp_settled().await;
        }
        let decided = decide(&stack, loaded.config.mode(), tool_name, input).await;
        if mcp {
            stack.shutdown_mcp().await;
        }
        decided
    }

    /// The model a session here would have, for Task and the classifier,
    /// and its context window; `Err` with why there is none (the tools are
    /// the same, Task just cannot run).
    async fn inspection_model(
        &self,
        config: &Config,
        at: Inspect<'_>,
        resumed: Option<&LoadedSession>,
    ) -> (Result<ModelAccess, NoModel>, u64) {
        match self.provider(config, at.env, resumed).await {
            Ok((provider, endpoint)) => {
                let window =
                    riot_protocol::Provider::capabilities(provider.as_ref(), &endpoint.model)
                        .context_window;
                let model = SessionModel::new(endpoint.model);
                let access = ModelAccess {
                    provider,
                    model,
                    cost: None,
                };
                (Ok(access), window)
            }
            Err(e) => (
                Err(NoModel::Unconfigured(Arc::new(e))),
                unconfigured_window(config),
            ),
        }
    }
}

/// The context window of the configured model (or of an unknown one)
/// when no endpoint can be made.
fn unconfigured_window(config: &Config) -> u64 {
    let model = config.model.as_ref().map_or("", |m| m.value.as_str());
    config.context_window.as_ref().map_or_else(
        || riot_providers::capabilities_for(model, &[]).context_window,
        |w| w.value,
    )
}

/// What the stack's chain decides for one call of `tool_name` in `mode`.
async fn decide(
    stack: &ToolStack,
    mode: PermissionMode,
    tool_name: &str,
    input: serde_json::Value,
) -> Result<riot_protocol::PermissionResult, KernelError> {
    let tools = stack.runner.tools();
    let Some(tool) = tools.iter().find(|t| t.name() == tool_name) else {
        let (mcp, own): (Vec<&str>, Vec<&str>) = tools
            .iter()
            .map(|t| t.name())
            .filter(|n| *n != "ToolSearch")
            .partition(|n| n.starts_with("mcp__"));
        let mcp = if mcp.is_empty() {
            String::new()
        } else {
            format!("; MCP tools: {}", mcp.join(", "))
        };
        return Err(KernelError::Input(format!(
            "unknown tool `{tool_name}`; built-in tools: {}{mcp}",
            own.join(", ")
        )));
    };
    let call = Arc::clone(tool)
        .prepare(input.clone())
        .map_err(|e| KernelError::Input(riot_tools::scheduler::schema_hint(tool_name, &e)))?;
    let ctx = riot_protocol::ToolContext {
        env: Arc::clone(stack.runner.env()),
        tool_use_id: riot_protocol::ToolUseId::new("check"),
        mode,
        allowed_by: riot_protocol::AllowedBy::Riot,
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
        mode,
        hook: None,
    };
    Ok(stack.base.policy.decide(&query).await)
}
