//! `_riot/config` and `_riot/config_set`: the model endpoint new
//! sessions use, reported (never the key) and chosen.

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};

use super::{CONFIG, CONFIG_SET};
use crate::rpc::riot_request;

/// `_riot/config`: the model endpoint of new sessions in `cwd` (default:
/// the person's home directory).
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(ConfigRequest, CONFIG, ConfigResponse);

/// `_riot/config`'s and `_riot/config_set`'s result. Never the key.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct ConfigResponse {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// `present`, `missing` or `not-needed`.
    pub key: String,
    /// `$VAR` or `credentials.json`.
    pub key_source: Option<String>,
    pub ready: bool,
    pub problem: Option<String>,
    /// The `notifications` setting in effect (the web UI follows
    /// `desktop`); absent when the settings could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<riot_config::notifications::NotificationSettings>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

impl From<riot_kernel::model_settings::ModelStatus> for ConfigResponse {
    fn from(status: riot_kernel::model_settings::ModelStatus) -> Self {
        use riot_kernel::model_settings::KeyState;
        Self {
            ready: status.ready(),
            key: match status.key {
                KeyState::Present => "present",
                KeyState::Missing => "missing",
                KeyState::NotNeeded => "not-needed",
            }
            .to_owned(),
            provider: status.provider,
            base_url: status.base_url,
            model: status.model,
            key_source: status.key_source,
            problem: status.problem,
            notifications: None,
            meta: None,
        }
    }
}

/// An API key on the wire: never printed, not even in debug output.
#[derive(schemars::JsonSchema, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WireKey(pub String);

impl std::fmt::Debug for WireKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireKey(redacted)")
    }
}

/// `_riot/config_set`: the endpoint a person chose.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigSetRequest {
    pub provider: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<WireKey>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(ConfigSetRequest, CONFIG_SET, ConfigResponse);
