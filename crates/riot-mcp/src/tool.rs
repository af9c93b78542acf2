//! [`McpTool`]: one tool of one server as a Riot [`Tool`], so it goes
//! through the same scheduler, validation, permission chain, budgets and
//! UI as the built-in tools (docs/design.md §1.6).
//!
//! Trust: MCP annotations are hints from a server Riot does not control.
//! `readOnlyHint: true` lets calls run in a parallel batch
//! (`is_concurrency_safe`) but never makes them read-only in the
//! permission chain's sense (`is_read_only` stays false): the chain
//! allows read-only calls in every mode, so believing the hint would let
//! any server skip the question. Permission rules on the tool name decide
//! (`mcp__github__*`, `mcp__github__get_issue`); the permission target is
//! the name alone.

use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{PromptContext, Tool, ToolContext, ToolOutcome};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Map, Value};

use crate::result;
use crate::server::{ListedTool, Server, ServerStatus};

/// Characters of the arguments shown in `describe` and given to the
/// auto-mode classifier.
const DESCRIBE_ARGS: usize = 120;
const CLASSIFIER_ARGS: usize = 2_000;

/// A tool of an MCP server. Calls go through the server's current
/// connection, so a tool taken before a restart works after it.
pub struct McpTool {
    name: String,
    server: Arc<Server>,
    tool: Arc<rmcp::model::Tool>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("server", &self.server.name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    pub(crate) fn new(server: Arc<Server>, listed: ListedTool) -> Self {
        Self {
            name: listed.name,
            server,
            tool: listed.tool,
        }
    }

    /// The server's name for this tool.
    pub fn remote_name(&self) -> &str {
        &self.tool.name
    }

    /// The configured name of its server.
    pub fn server_name(&self) -> &str {
        &self.server.name
    }

    /// The server's `readOnlyHint` (untrusted; see the module docs).
    pub fn read_only_hint(&self) -> bool {
        self.tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }
}

#[async_trait]
impl Tool for McpTool {
    /// MCP arguments are a JSON object; the server validates the rest
    /// against its own schema.
    type Input = Map<String, Value>;

    fn name(&self) -> &str {
        &self.name
    }

    fn input_schema(&self) -> Value {
        let mut schema = (*self.tool.input_schema).clone();
        // Model APIs reject a tool whose schema is not an object schema;
        // a few servers leave `type` out.
        schema
            .entry("type")
            .or_insert_with(|| Value::String("object".into()));
        Value::Object(schema)
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        let description = self
            .tool
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .unwrap_or("(The server gives no description.)");
        format!(
            "{description}\n\n(Tool `{}` of the MCP server `{}`.)",
            self.tool.name, self.server.name
        )
    }

    fn describe(&self, input: &Map<String, Value>) -> String {
        let title = self
            .tool
            .title
            .as_deref()
            .or_else(|| self.tool.annotations.as_ref()?.title.as_deref())
            .unwrap_or(&self.tool.name);
        if input.is_empty() {
            format!("{}: {title}", self.server.name)
        } else {
            format!(
                "{}: {title} {}",
                self.server.name,
                clip(&Value::Object(input.clone()).to_string(), DESCRIBE_ARGS)
            )
        }
    }

    fn is_concurrency_safe(&self, _input: &Map<String, Value>) -> bool {
        self.read_only_hint()
    }

    fn classifier_input(&self, input: &Map<String, Value>) -> Option<String> {
        Some(format!(
            "{} {}",
            self.name,
            clip(&Value::Object(input.clone()).to_string(), CLASSIFIER_ARGS)
        ))
    }

    async fn call(&self, input: Map<String, Value>, ctx: &ToolContext) -> ToolOutcome {
        if ctx.cancel.is_cancelled() {
            return ToolOutcome::Cancelled;
        }
        let server = &self.server.name;
        let (peer, generation) = match self.server.peer() {
            Ok(connected) => connected,
            Err(status) => {
                return ToolOutcome::failed(format!(
                    "The MCP server `{server}` is not connected ({status}), so {} cannot run. Do not call its tools until the person restarts it.",
                    self.name
                ));
            }
        };
        let mut params = CallToolRequestParams::new(self.tool.name.to_string());
        params.arguments = Some(input);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return self.error_outcome(e),
        };
        // Dropping the call (an interrupt, a dropped future) tells the
        // server to stop: `notifications/cancelled` for this request.
        let mut cancel_guard = CancelOnDrop {
            peer,
            id: Some(handle.id.clone()),
        };
        let _route = ctx.progress.clone().map(|sink| {
            self.server
                .progress
                .register(handle.progress_token.clone(), sink)
        });
        tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => ToolOutcome::Cancelled,
            response = handle.await_response() => {
                cancel_guard.disarm();
                match response {
                    Ok(reply) => self.reply_outcome(reply),
                    Err(e) => self.error_outcome(e),
                }
            }
            status = self.server.lost(generation) => {
                cancel_guard.disarm();
                ToolOutcome::failed(format!(
                    "The MCP server `{server}` stopped during the call ({status}); {} did not complete and its effects are unknown.",
                    self.name
                ))
            }
        }
    }
}

impl McpTool {
    fn reply_outcome(&self, reply: ServerResult) -> ToolOutcome {
        let server = &self.server.name;
        match reply {
            ServerResult::CallToolResult(result) => result::outcome(&self.name, result),
            ServerResult::EmptyResult(_) => {
                result::outcome(&self.name, rmcp::model::CallToolResult::success(Vec::new()))
            }
            ServerResult::InputRequiredResult(_) => ToolOutcome::failed(format!(
                "The MCP server `{server}` asked for more input during {}, which Riot cannot give; the call did not complete. Try other arguments or another way.",
                self.name
            )),
            ServerResult::CreateTaskResult(_) => ToolOutcome::failed(format!(
                "The MCP server `{server}` turned {} into a background task, which Riot does not follow; its result is not available.",
                self.name
            )),
            _ => ToolOutcome::failed(format!(
                "The MCP server `{server}` answered {} with something that is not a tool result.",
                self.name
            )),
        }
    }

    fn error_outcome(&self, error: ServiceError) -> ToolOutcome {
        let server = &self.server.name;
        match error {
            ServiceError::McpError(e) => ToolOutcome::failed(format!(
                "The MCP server `{server}` rejected the call to {}: {} (error {}). Check the arguments against the tool's schema.",
                self.name, e.message, e.code.0
            )),
            ServiceError::TransportClosed => {
                let status = self.server.status();
                let status = match status {
                    ServerStatus::Ready { .. } => "it closed the connection".to_owned(),
                    other => other.to_string(),
                };
                ToolOutcome::failed(format!(
                    "The MCP server `{server}` stopped during the call ({status}); {} did not complete and its effects are unknown.",
                    self.name
                ))
            }
            other => ToolOutcome::failed(format!(
                "The call to {} on the MCP server `{server}` failed: {other}.",
                self.name
            )),
        }
    }
}

/// Sends `notifications/cancelled` for a request when dropped armed.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        // In the background: the call returns at once, the notification
        // follows (over HTTP it is a request of its own).
        runtime.spawn(async move {
            let param =
                CancelledNotificationParam::new(Some(id), Some("cancelled by the client".into()));
            if let Err(e) = peer.notify_cancelled(param).await {
                tracing::debug!(error = %e, "could not send notifications/cancelled");
            }
        });
    }
}

/// At most `max` characters, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}
