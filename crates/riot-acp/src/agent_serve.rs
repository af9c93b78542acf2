//! The table from ACP's methods (and Riot's `_riot/...` ones) to what the
//! agent does for each, and the connection that serves it. A child module
//! of `agent.rs`, sharing its session table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, CancelNotification, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, LoadSessionRequest,
    LoadSessionResponse, LogoutCapabilities, McpCapabilities, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionListCapabilities,
    SessionResumeCapabilities, SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};

use super::{AcpConfig, RiotAgent, Shutdown, editor, lock, reply};
use crate::client_fs::EditorFs;
use crate::error::RequestError;
use crate::ext::{self, ShutdownRequest, ShutdownResponse};

/// The `initialize` response: Riot's capabilities, auth methods and
/// `_meta.riot.defaultCwd`.
fn initialize(
    request: &InitializeRequest,
    default_cwd: Option<&std::path::Path>,
) -> InitializeResponse {
    tracing::info!(client_version = ?request.protocol_version, "ACP initialize");
    InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .mcp_capabilities(McpCapabilities::new().http(true))
                .session_capabilities(
                    SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .resume(SessionResumeCapabilities::new())
                        .close(SessionCloseCapabilities::new())
                        .delete(SessionDeleteCapabilities::new()),
                )
                .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()))
                // Text and resource links are the baseline every agent
                // takes; images are prepared as Read prepares them.
                .prompt_capabilities(PromptCapabilities::new().image(true))
                .meta(ext::capabilities_meta()),
        )
        .auth_methods(editor::auth_methods())
        .agent_info(Implementation::new("riot", env!("CARGO_PKG_VERSION")).title("Riot".to_owned()))
        .meta(default_cwd.and_then(ext::initialize_meta))
}

/// Serves ACP on stdin/stdout until the client closes stdin or `stop` is
/// triggered (`_riot/shutdown` triggers it too). Nothing but protocol
/// messages is written to stdout.
pub async fn serve_stdio(config: AcpConfig, stop: Shutdown) -> Result<(), Error> {
    serve_on(config, crate::stdio::stdio_lines(), stop).await
}

/// One ACP request's handler, answering with what `$body` gives (a
/// `Result` of the response): `now` in the handler itself, in order with
/// the connection's other messages; `task` on a task of its own, so a slow
/// request holds up nothing; `turn` on a task the agent tracks, which
/// shutdown waits for (prompts, deliveries). `$agent` (an `&Arc`) is
/// cloned into the handler, and again into each task.
macro_rules! answer {
    (now, $agent:ident, $req:ty, |$a:ident, $r:ident, $cx:ident| $body:expr) => {{
        let $a = Arc::clone($agent);
        async move |$r: $req,
                    responder: Responder<
            <$req as agent_client_protocol::JsonRpcRequest>::Response,
        >,
                    $cx: ConnectionTo<Client>| {
            reply(responder, $body);
            Ok(())
        }
    }};
    (task, $agent:ident, $req:ty, |$a:ident, $r:ident, $cx:ident| $body:expr) => {{
        let agent = Arc::clone($agent);
        async move |$r: $req,
                    responder: Responder<
            <$req as agent_client_protocol::JsonRpcRequest>::Response,
        >,
                    $cx: ConnectionTo<Client>| {
            let $a = Arc::clone(&agent);
            tokio::spawn(async move {
                reply(responder, $body);
            });
            Ok(())
        }
    }};
    (turn, $agent:ident, $req:ty, |$a:ident, $r:ident, $cx:ident| $body:expr) => {{
        let agent = Arc::clone($agent);
        async move |$r: $req,
                    responder: Responder<
            <$req as agent_client_protocol::JsonRpcRequest>::Response,
        >,
                    $cx: ConnectionTo<Client>| {
            let $a = Arc::clone(&agent);
            agent.turns.spawn(async move {
                reply(responder, $body);
            });
            Ok(())
        }
    }};
}

/// Serves ACP on any transport (stdio, or one WebSocket connection of
/// `riot serve`) until the client goes away or `stop` is triggered, then
/// winds down: running turns are cancelled and end before this returns.
/// One agent, with its own session table, per connection; the handlers
/// registered below are the table from ACP's methods (and Riot's
/// `_riot/...` ones) to what the agent does for each.
pub(crate) async fn serve_on(
    config: AcpConfig,
    transport: impl ConnectTo<Agent> + 'static,
    stop: Shutdown,
) -> Result<(), Error> {
    let agent = Arc::new(RiotAgent {
        config,
        sessions: Mutex::new(HashMap::new()),
        stop,
        turns: tokio_util::task::TaskTracker::new(),
        wanted: Mutex::new(Vec::new()),
        editor_fs: Mutex::new(EditorFs::default()),
        editor_terminals: Mutex::new(false),
    });
    let agent = &agent;
    let builder = Agent
        .v1()
        .name("riot")
        // Registers ACP's own methods: `initialize`, the conversation
        // (`session/new`, `session/load`, `session/prompt`, `session/list`,
        // `session/set_mode`) and `session/cancel`.
        .on_receive_request(
            {
                let agent = Arc::clone(agent);
                async move |request: InitializeRequest,
                            responder: Responder<InitializeResponse>,
                            _cx: ConnectionTo<Client>| {
                    *lock(&agent.wanted) =
                        ext::wanted_notifications(request.client_capabilities.meta.as_ref());
                    *lock(&agent.editor_fs) =
                        EditorFs::from_capabilities(&request.client_capabilities);
                    *lock(&agent.editor_terminals) = request.client_capabilities.terminal;
                    responder.respond(initialize(&request, agent.config.default_cwd.as_deref()))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(agent);
                async move |request: NewSessionRequest,
                            responder: Responder<NewSessionResponse>,
                            cx: ConnectionTo<Client>| {
                    let agent = Arc::clone(&agent);
                    tokio::spawn(async move {
                        // A provider that needs a key it lacks: ACP's
                        // auth-required error, before anything is opened.
                        let result = match agent.require_key(&request.cwd).await {
                            Ok(()) => agent.new_session(&cx, request).await,
                            Err(e) => Err(e),
                        };
                        let id = result.as_ref().ok().map(|r| r.session_id.0.to_string());
                        reply(responder, result);
                        // After the response, so the client knows the session.
                        if let Some(id) = id {
                            agent.announce_commands(&cx, &id);
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let agent = Arc::clone(agent);
                async move |request: LoadSessionRequest,
                            responder: Responder<LoadSessionResponse>,
                            cx: ConnectionTo<Client>| {
                    let agent = Arc::clone(&agent);
                    tokio::spawn(async move {
                        let id = request.session_id.0.to_string();
                        let result = agent.load_session(&cx, request).await;
                        let loaded = result.is_ok();
                        reply(responder, result);
                        if loaded {
                            agent.announce_commands(&cx, &id);
                        }
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(turn, agent, PromptRequest, |agent, request, cx| agent
                .prompt(&cx, request)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(task, agent, ListSessionsRequest, |agent, request, _cx| {
                agent.list_sessions(request).await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(now, agent, SetSessionModeRequest, |agent, request, _cx| {
                agent.set_mode(&request).await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let agent = Arc::clone(agent);
                async move |notification: CancelNotification, _cx: ConnectionTo<Client>| {
                    agent.cancel(&notification);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        // Registers Riot's `_riot/...` methods on the server and its saved
        // sessions: shutdown, MCP servers, model configuration, project files,
        // renaming, deleting and a session's model.
        .on_receive_request(
            {
                let agent = Arc::clone(agent);
                async move |_request: ShutdownRequest,
                            responder: Responder<ShutdownResponse>,
                            _cx: ConnectionTo<Client>| {
                    tracing::info!("ACP: _riot/shutdown requested");
                    let cancelled_turns = agent.cancel_all();
                    // The reply is queued before the connection starts closing.
                    let sent = responder.respond(ShutdownResponse {
                        cancelled_turns,
                        meta: None,
                    });
                    agent.stop.trigger();
                    sent
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                ext::McpServersRequest,
                |agent, _request, _cx| {
                    let servers = agent
                        .config
                        .kernel
                        .mcp_servers()
                        .into_iter()
                        .map(ext::McpServerEntry::from)
                        .collect();
                    Ok(ext::McpServersResponse {
                        servers,
                        meta: None,
                    })
                }
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                task,
                agent,
                ext::McpRestartRequest,
                |agent, request, _cx| {
                    let project = request.project.as_deref().map(std::path::Path::new);
                    agent
                        .config
                        .kernel
                        .restart_mcp_server(project, &request.name)
                        .await
                        .map(|()| ext::McpRestartResponse { meta: None })
                        .map_err(|e| Error::from(RequestError::McpRestart(e)))
                }
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(task, agent, ext::ConfigRequest, |agent, request, _cx| Ok(
                agent.model_config(&request).await
            )),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(task, agent, ext::ConfigSetRequest, |agent, request, _cx| {
                agent.set_model_config(request).await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(task, agent, ext::FilesRequest, |agent, request, _cx| agent
                .files(&request)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                ext::SessionRenameRequest,
                |agent, request, cx| agent.rename_session(&cx, &request)
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                ext::SessionDeleteRequest,
                |agent, request, _cx| agent.delete_session(&request).await
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(now, agent, ext::SetModelRequest, |agent, request, _cx| {
                agent.set_model(&request).await
            }),
            agent_client_protocol::on_receive_request!(),
        )
        // Registers the `_riot/...` methods on what an open session runs:
        // checkpoints and rewind, its terminals, its queue, background agents and
        // deliveries.
        // `_riot/checkpoints` and `_riot/rewind` (agent_rewind.rs).
        .on_receive_request(
            answer!(
                now,
                agent,
                ext::CheckpointsRequest,
                |agent, request, _cx| agent.checkpoints(&request).await
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(now, agent, ext::RewindRequest, |agent, request, _cx| agent
                .rewind(&request)
                .await),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                task,
                agent,
                crate::terminals::TerminalWriteRequest,
                |agent, request, _cx| {
                    match agent.slot(&request.session_id) {
                        Ok(slot) => crate::terminals::write(&slot.session, &request).await,
                        Err(e) => Err(e),
                    }
                }
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                crate::terminals::TerminalResizeRequest,
                |agent, request, _cx| {
                    match agent.slot(&request.session_id) {
                        Ok(slot) => crate::terminals::resize(&slot.session, &request).await,
                        Err(e) => Err(e),
                    }
                }
            ),
            agent_client_protocol::on_receive_request!(),
        )
        // `_riot/queue`, `_riot/background`, `_riot/background_stop`
        // (agent_parallel.rs), `_riot/deliver` (agent_turn.rs).
        .on_receive_request(
            answer!(
                now,
                agent,
                crate::queue::QueueRequest,
                |agent, request, _cx| agent.queue(&request)
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                crate::background::BackgroundRequest,
                |agent, request, _cx| agent.background(&request)
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                turn,
                agent,
                crate::background::DeliverRequest,
                |agent, request, cx| agent.deliver(&cx, &request).await
            ),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            answer!(
                now,
                agent,
                crate::background::BackgroundStopRequest,
                |agent, request, _cx| agent.background_stop(&request)
            ),
            agent_client_protocol::on_receive_request!(),
        )
        // Registers the methods an editor uses beyond a conversation
        // (agent_editor.rs), each answered on a task of its own.
        .on_receive_request(
            {
                let agent = Arc::clone(agent);
                async move |request: editor::EditorRequest,
                            responder: Responder<serde_json::Value>,
                            cx: ConnectionTo<Client>| {
                    let agent = Arc::clone(&agent);
                    tokio::spawn(async move {
                        agent.editor_request(&cx, request, responder).await;
                    });
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_request!(),
        );
    let agent = Arc::clone(agent);
    builder
        .connect_with(transport, async move |cx: ConnectionTo<Client>| {
            tokio::select! {
                () = cx.incoming_closed() => {}
                () = agent.stop.triggered() => {}
            }
            agent.wind_down().await;
            Ok(())
        })
        .await
}
