//! The ACP methods an editor uses beyond a conversation: session
//! configuration options (`session/set_config_option`,
//! `config_option_update`), the session lifecycle (`session/resume`,
//! `session/close`, `session/delete`, `session_info_update`) and
//! authentication (`authMethods`, `authenticate`, `logout`, the
//! auth-required error). A child module of `agent.rs`, sharing its
//! session table.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse, CloseSessionRequest,
    CloseSessionResponse, ConfigOptionUpdate, DeleteSessionRequest, DeleteSessionResponse,
    LogoutRequest, LogoutResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionConfigOptionValue, SessionInfoUpdate, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::{Client, Error};
use riot_config::credentials::Secret;
use riot_kernel::ResumeFrom;
use riot_kernel::model_settings::KeyState;
use riot_protocol::{PermissionMode, SessionId};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::{JsonRpcMessage, JsonRpcRequest, UntypedMessage};
use serde_json::{Value, json};

use super::{RiotAgent, Slot, kernel_error, lock, reply, send};
use crate::error::{AuthError, InternalError, RequestError, SessionError};
use crate::ext;
use crate::mapping;
use crate::session_config::{self, Shown};

/// The editor methods, served by one handler: the SDK describes its
/// handler chain in trace logs with nesting that doubles in size with each
/// handler, so they are kept few.
#[derive(Debug, Clone)]
pub(super) enum EditorRequest {
    Resume(ResumeSessionRequest),
    Close(CloseSessionRequest),
    Delete(DeleteSessionRequest),
    SetConfigOption(SetSessionConfigOptionRequest),
    Authenticate(AuthenticateRequest),
    Logout(LogoutRequest),
}

const RESUME: &str = "session/resume";
const CLOSE: &str = "session/close";
const DELETE: &str = "session/delete";
const SET_CONFIG_OPTION: &str = "session/set_config_option";
const AUTHENTICATE: &str = "authenticate";
const LOGOUT: &str = "logout";

/// Params as the request type; left-out params are an empty object.
fn params<T: serde::de::DeserializeOwned>(params: &Value) -> Result<T, Error> {
    let params = if params.is_null() {
        json!({})
    } else {
        params.clone()
    };
    serde_json::from_value(params)
        .map_err(|e| Error::invalid_params().data(json!({"error": e.to_string()})))
}

impl JsonRpcMessage for EditorRequest {
    fn matches_method(method: &str) -> bool {
        [
            RESUME,
            CLOSE,
            DELETE,
            SET_CONFIG_OPTION,
            AUTHENTICATE,
            LOGOUT,
        ]
        .contains(&method)
    }

    fn method(&self) -> &str {
        match self {
            Self::Resume(_) => RESUME,
            Self::Close(_) => CLOSE,
            Self::Delete(_) => DELETE,
            Self::SetConfigOption(_) => SET_CONFIG_OPTION,
            Self::Authenticate(_) => AUTHENTICATE,
            Self::Logout(_) => LOGOUT,
        }
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, Error> {
        match self {
            Self::Resume(r) => UntypedMessage::new(RESUME, r),
            Self::Close(r) => UntypedMessage::new(CLOSE, r),
            Self::Delete(r) => UntypedMessage::new(DELETE, r),
            Self::SetConfigOption(r) => UntypedMessage::new(SET_CONFIG_OPTION, r),
            Self::Authenticate(r) => UntypedMessage::new(AUTHENTICATE, r),
            Self::Logout(r) => UntypedMessage::new(LOGOUT, r),
        }
    }

    fn parse_message(method: &str, p: &Value) -> Result<Self, Error> {
        Ok(match method {
            RESUME => Self::Resume(params(p)?),
            CLOSE => Self::Close(params(p)?),
            DELETE => Self::Delete(params(p)?),
            SET_CONFIG_OPTION => Self::SetConfigOption(params(p)?),
            AUTHENTICATE => Self::Authenticate(params(p)?),
            LOGOUT => Self::Logout(params(p)?),
            _ => return Err(Error::method_not_found()),
        })
    }
}

impl JsonRpcRequest for EditorRequest {
    type Response = Value;
}

/// A typed result as the JSON the responder sends.
fn as_json<T: serde::Serialize>(result: Result<T, Error>) -> Result<Value, Error> {
    result.and_then(|r| serde_json::to_value(r).map_err(|e| InternalError::from(e).into()))
}

/// The authentication method of a loopback endpoint: nothing to do.
pub(super) const NO_KEY_METHOD: &str = "none";

/// The providers with an API-key method, by their settings name.
const KEY_PROVIDERS: [(&str, &str); 2] = [("anthropic", "Anthropic"), ("openai", "OpenAI")];

/// The id of a provider's API-key method.
fn key_method(provider: &str) -> String {
    format!("{provider}-api-key")
}

/// The `authMethods` of `initialize`: an API-key method per provider
/// (the key travels in the request's `_meta.riot.apiKey`), and `none`
/// for a local endpoint that needs no key.
pub(super) fn auth_methods() -> Vec<AuthMethod> {
    let mut methods: Vec<AuthMethod> = KEY_PROVIDERS
        .iter()
        .map(|(provider, label)| {
            AuthMethod::Agent(
                AuthMethodAgent::new(key_method(provider), format!("{label} API key")).description(
                    format!(
                        "Riot stores your {label} API key (sent as _meta.riot.apiKey of authenticate) in its owner-only credentials file."
                    ),
                ),
            )
        })
        .collect();
    methods.push(AuthMethod::Agent(
        AuthMethodAgent::new(NO_KEY_METHOD, "No key (local model)")
            .description("For a model server on this machine, which needs no API key.".to_owned()),
    ));
    methods
}

/// The permission mode a client asked for, if it is offered.
pub(super) fn offered(wanted: &str) -> Result<PermissionMode, Error> {
    mapping::offered_mode(wanted).ok_or_else(|| {
        RequestError::UnknownMode {
            wanted: wanted.to_owned(),
            offered: mapping::OFFERED_MODES
                .iter()
                .map(|m| m.as_str().to_owned())
                .collect(),
        }
        .into()
    })
}

/// Sends `config_option_update` whenever the session's model or mode
/// changes other than through `session/set_config_option` (a `/model` or
/// `/mode` command, an approved plan, `session/set_mode`), until the slot
/// is closed.
pub(super) fn watch_options(cx: ConnectionTo<Client>, id: String, slot: Arc<Slot>) {
    let mut status = slot.session.watch();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = slot.closed.cancelled() => break,
                changed = status.changed() => if changed.is_err() { break },
            }
            let now = Shown::of(&status.borrow_and_update());
            let changed = {
                let mut shown = lock(&slot.shown);
                let changed = *shown != now;
                *shown = now;
                changed
            };
            if changed {
                send(
                    &cx,
                    &id,
                    SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(slot.options())),
                );
            }
        }
    });
}

impl Slot {
    /// The config options as the client was last told them.
    pub(super) fn options(&self) -> Vec<agent_client_protocol::v1::schema::SessionConfigOption> {
        let shown = lock(&self.shown).clone();
        let can_think = self.session.capabilities(&shown.model).thinking;
        session_config::options(&shown, &self.models, can_think)
    }

    /// Closes the session (a running turn is cancelled and ends first).
    pub(super) async fn shut(&self) {
        self.closed.cancel();
        self.session.cancel(riot_protocol::CancelReason::User);
        self.session.clone().close().await;
    }
}

impl RiotAgent {
    /// Serves one editor request, then (after a resume) tells the client
    /// the session's slash commands.
    pub(super) async fn editor_request(
        &self,
        cx: &ConnectionTo<Client>,
        request: EditorRequest,
        responder: Responder<Value>,
    ) {
        let mut resumed = None;
        let result = match request {
            EditorRequest::Resume(r) => {
                let id = r.session_id.0.to_string();
                let result = self.resume_session(cx, r).await;
                resumed = result.is_ok().then_some(id);
                as_json(result)
            }
            EditorRequest::Close(r) => as_json(self.close_session(&r).await),
            EditorRequest::Delete(r) => as_json(self.delete_acp_session(&r).await),
            EditorRequest::SetConfigOption(r) => as_json(self.set_config_option(&r).await),
            EditorRequest::Authenticate(r) => as_json(self.authenticate(&r).await),
            EditorRequest::Logout(r) => as_json(self.logout(&r).await),
        };
        reply(responder, result);
        if let Some(id) = resumed {
            self.announce_commands(cx, &id);
        }
    }

    /// The models a client may pick for `session`: the configured
    /// model, fallback and small model, the provider's default model,
    /// then what the endpoint lists (asked once; the configured ones
    /// alone when the listing fails).
    pub(super) async fn offered_models(
        &self,
        cwd: &Path,
        session: &riot_kernel::SessionHandle,
    ) -> Vec<session_config::Choice> {
        let mut models: Vec<session_config::Choice> = self
            .configured_models(cwd)
            .await
            .iter()
            .map(|m| session_config::Choice::named(m))
            .collect();
        models.extend(
            session
                .listed_models()
                .await
                .iter()
                .map(|m| session_config::Choice {
                    id: m.id.clone(),
                    name: m.display_name.clone().unwrap_or_else(|| m.id.clone()),
                }),
        );
        models
    }

    /// The configured model, fallback and small model, and the
    /// provider's default model for a session in `cwd`.
    async fn configured_models(&self, cwd: &Path) -> Vec<String> {
        let Ok(loaded) = self
            .config
            .kernel
            .load_config(
                cwd,
                &self.config.env,
                &self.config.flags,
                self.config.trust_project,
            )
            .await
        else {
            return Vec::new();
        };
        let config = loaded.config;
        let mut models: Vec<String> = [&config.model, &config.fallback_model, &config.small_model]
            .into_iter()
            .flatten()
            .map(|m| m.value.clone())
            .collect();
        if let Some(kind) = config
            .provider
            .as_ref()
            .and_then(|p| riot_providers::ProviderKind::from_name(&p.value))
        {
            models.push(kind.default_model().to_owned());
        }
        models
    }

    /// A saved session's title (its name, else its first prompt).
    pub(super) fn stored_title(&self, id: &str) -> Option<String> {
        let summaries = self.config.kernel.store().list().ok()?;
        summaries
            .into_iter()
            .find(|s| s.id.as_str() == id)
            .map(|s| s.title)
            .filter(|t| !t.is_empty())
    }

    /// Tells the client the session's title if it changed.
    pub(super) fn announce_title(&self, cx: &ConnectionTo<Client>, id: &str, slot: &Slot) {
        let Some(title) = self.stored_title(id) else {
            return;
        };
        {
            let mut told = lock(&slot.title);
            if told.as_deref() == Some(title.as_str()) {
                return;
            }
            *told = Some(title.clone());
        }
        send(
            cx,
            id,
            SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title(title)),
        );
    }

    /// ACP `session/resume`: the session continues without its
    /// conversation being replayed.
    pub(super) async fn resume_session(
        &self,
        cx: &ConnectionTo<Client>,
        request: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        let id = request.session_id.0.to_string();
        let existing = lock(&self.sessions).get(&id).cloned();
        let slot = match existing {
            Some(slot) => slot,
            None => {
                self.require_key(&request.cwd).await?;
                let resume = Some(ResumeFrom::Id(SessionId::new(id.clone())));
                self.open_saved(cx, request.cwd, resume, request.mcp_servers)
                    .await?
            }
        };
        let status = slot.session.status();
        Ok(ResumeSessionResponse::new()
            .modes(mapping::mode_state(status.mode))
            .config_options(slot.options())
            .meta(ext::session_meta(&status.model, slot.session.sandbox())))
    }

    /// ACP `session/close`: a running turn is cancelled and ends, then
    /// the session is closed; its transcript stays.
    pub(super) async fn close_session(
        &self,
        request: &CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        let id = request.session_id.0.to_string();
        let slot = lock(&self.sessions)
            .remove(&id)
            .ok_or_else(|| SessionError::NotOpen { id: id.clone() })?;
        slot.shut().await;
        if let Some(worktree) = &slot.worktree {
            self.finish_worktree(worktree).await;
        }
        tracing::info!(session = %id, "ACP: session closed");
        Ok(CloseSessionResponse::new())
    }

    /// ACP `session/delete`.
    pub(super) async fn delete_acp_session(
        &self,
        request: &DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, Error> {
        self.delete_by_id(&request.session_id.0.to_string()).await?;
        Ok(DeleteSessionResponse::new())
    }

    /// ACP `session/set_config_option`: the model or the permission mode.
    pub(super) async fn set_config_option(
        &self,
        request: &SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let slot = self.slot(&request.session_id.0)?;
        let config_id = request.config_id.0.to_string();
        let SessionConfigOptionValue::ValueId { value } = &request.value else {
            return Err(RequestError::BooleanConfigValue { config_id }.into());
        };
        let value = value.0.to_string();
        match config_id.as_str() {
            session_config::MODEL => {
                let current = slot.session.status().model;
                let choices = session_config::model_choices(&slot.models, &current);
                if !choices.iter().any(|c| c.id == value) {
                    return Err(RequestError::UnknownModel {
                        model: value,
                        offered: choices.iter().map(|c| c.id.clone()).collect(),
                    }
                    .into());
                }
                lock(&slot.shown).model.clone_from(&value);
                slot.session.set_model(&value).await.map_err(kernel_error)?;
            }
            session_config::THINKING => {
                let model = slot.session.status().model;
                if !slot.session.capabilities(&model).thinking {
                    return Err(RequestError::NoThinking { model }.into());
                }
                let Some(level) = riot_protocol::ThinkingLevel::parse(&value) else {
                    return Err(RequestError::UnknownThinkingLevel { level: value }.into());
                };
                lock(&slot.shown).thinking = level;
                slot.session
                    .set_thinking(level)
                    .await
                    .map_err(kernel_error)?;
            }
            session_config::MODE => {
                let mode = offered(&value)?;
                lock(&slot.shown).mode = mode;
                slot.session.set_mode(mode).await.map_err(kernel_error)?;
            }
            other => {
                return Err(RequestError::UnknownConfigOption {
                    option: other.to_owned(),
                }
                .into());
            }
        }
        Ok(SetSessionConfigOptionResponse::new(slot.options()))
    }

    /// The model endpoint new sessions in `cwd` would use.
    async fn model_status(&self, cwd: &Path) -> riot_kernel::model_settings::ModelStatus {
        self.config
            .kernel
            .model_status(
                cwd,
                &self.config.env,
                &self.config.flags,
                self.config.trust_project,
            )
            .await
    }

    /// The directory whose configuration applies to a connection-wide
    /// request: `riot serve --cwd`, else the person's home.
    fn home_cwd(&self) -> std::path::PathBuf {
        self.config.default_cwd.clone().unwrap_or_else(|| {
            self.config
                .env
                .get("HOME")
                .map_or_else(|| "/".into(), std::path::PathBuf::from)
        })
    }

    /// ACP's auth-required error when new sessions in `cwd` have no key
    /// for their endpoint; a relative `cwd` is left to `session/new`.
    pub(super) async fn require_key(&self, cwd: &Path) -> Result<(), Error> {
        if !cwd.is_absolute() {
            return Ok(());
        }
        let status = self.model_status(cwd).await;
        if status.key != KeyState::Missing {
            return Ok(());
        }
        let Some(provider) = status.provider.as_deref() else {
            return Ok(());
        };
        let Some(problem) = status.problem else {
            return Ok(());
        };
        let method = KEY_PROVIDERS
            .iter()
            .find(|(p, _)| provider.starts_with(p))
            .map_or_else(|| key_method("anthropic"), |(p, _)| key_method(p));
        Err(AuthError::KeyMissing { problem, method }.into())
    }

    /// ACP `authenticate`: `<provider>-api-key` stores the key in
    /// `_meta.riot.apiKey` for the configured endpoint of that provider
    /// (or its default endpoint); `none` succeeds when no key is needed.
    pub(super) async fn authenticate(
        &self,
        request: &AuthenticateRequest,
    ) -> Result<AuthenticateResponse, Error> {
        let method = request.method_id.0.to_string();
        let status = self.model_status(&self.home_cwd()).await;
        if method == NO_KEY_METHOD {
            return if status.key == KeyState::Missing {
                Err(AuthError::KeyNeeded.into())
            } else {
                Ok(AuthenticateResponse::new())
            };
        }
        let Some((provider, _)) = KEY_PROVIDERS.iter().find(|(p, _)| key_method(p) == method)
        else {
            return Err(AuthError::UnknownMethod {
                method,
                known: auth_methods()
                    .iter()
                    .map(|m| m.id().0.to_string())
                    .collect(),
            }
            .into());
        };
        let key = request
            .meta
            .as_ref()
            .and_then(|m| m.get("riot"))
            .and_then(|r| r.get("apiKey"))
            .and_then(serde_json::Value::as_str)
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| AuthError::KeyNotSent {
                method: method.clone(),
            })?;
        // The configured endpoint when it is this provider's, else the
        // provider's default one.
        let configured = status
            .provider
            .as_deref()
            .is_some_and(|p| p.starts_with(provider));
        let (name, base_url) = if configured {
            (
                status.provider.clone().unwrap_or_default(),
                status.base_url.clone(),
            )
        } else {
            ((*provider).to_owned(), None)
        };
        self.config
            .kernel
            .save_api_key(&name, base_url.as_deref(), &Secret::new(key))
            .await
            .map_err(kernel_error)?;
        tracing::info!(provider = %name, "ACP: API key stored");
        Ok(AuthenticateResponse::new())
    }

    /// ACP `logout`: removes the stored key of the configured endpoint.
    pub(super) async fn logout(&self, _request: &LogoutRequest) -> Result<LogoutResponse, Error> {
        let status = self.model_status(&self.home_cwd()).await;
        let Some(provider) = status.provider.as_deref() else {
            return Ok(LogoutResponse::new());
        };
        let removed = self
            .config
            .kernel
            .forget_api_key(provider, status.base_url.as_deref())
            .await
            .map_err(kernel_error)?;
        tracing::info!(provider, removed, "ACP: logged out");
        Ok(LogoutResponse::new())
    }
}
