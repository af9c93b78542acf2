//! How a provider is configured: wire format, endpoint, key, watchdog,
//! and the injected clock and jitter (INTERFACES: the endpoint table).

use std::fmt;
use std::sync::Arc;

use riot_protocol::Clock;

use crate::models::ModelOverride;
use crate::retry::{Jitter, RetryPolicy};

/// The wire format (`--provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic Messages (`anthropic`).
    Anthropic,
    /// OpenAI Chat Completions and every compatible server (`openai`).
    OpenAiChat,
    /// OpenAI Responses (`openai-responses`).
    OpenAiResponses,
}

impl ProviderKind {
    /// Parses the `--provider` value.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAiChat),
            "openai-responses" => Some(Self::OpenAiResponses),
            _ => None,
        }
    }

    /// The `--provider` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAiChat => "openai",
            Self::OpenAiResponses => "openai-responses",
        }
    }

    /// The default base URL.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Anthropic => "https://api.anthropic.com",
            Self::OpenAiChat | Self::OpenAiResponses => "https://api.openai.com/v1",
        }
    }

    /// The request path joined to the base URL.
    pub fn path(self) -> &'static str {
        match self {
            Self::Anthropic => "/v1/messages",
            Self::OpenAiChat => "/chat/completions",
            Self::OpenAiResponses => "/responses",
        }
    }

    /// The default key variable (`--api-key-env`).
    pub fn default_key_env(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::OpenAiChat | Self::OpenAiResponses => "OPENAI_API_KEY",
        }
    }
}

/// An API key. Its `Debug` never shows it, and nothing in this crate logs
/// it (ARCHITECTURE §11).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// The idle watchdog's default window (INTERFACES:
/// `RIOT_STREAM_IDLE_TIMEOUT_MS`).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 90_000;

/// Everything needed to construct an [`crate::HttpProvider`].
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// `None`: the kind's default base URL.
    pub base_url: Option<String>,
    /// Required unless the base URL's host is a loopback address.
    pub api_key: Option<ApiKey>,
    pub idle_timeout_ms: u64,
    pub clock: Arc<dyn Clock>,
    pub jitter: Arc<dyn Jitter>,
    pub retry: RetryPolicy,
    /// Background requests (titles, summaries, the classifier) give up on
    /// overload instead of retrying.
    pub background: bool,
    /// Settings `models` overrides, keyed by a glob on the model name.
    pub model_overrides: Vec<(String, ModelOverride)>,
}

impl ProviderConfig {
    /// A configuration with §11's defaults for everything but the
    /// essentials.
    pub fn new(kind: ProviderKind, clock: Arc<dyn Clock>, jitter: Arc<dyn Jitter>) -> Self {
        Self {
            kind,
            base_url: None,
            api_key: None,
            idle_timeout_ms: DEFAULT_IDLE_TIMEOUT_MS,
            clock,
            jitter,
            retry: RetryPolicy::default(),
            background: false,
            model_overrides: Vec::new(),
        }
    }
}

/// Why a provider could not be constructed; each says what to do next.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no API key for {base_url}: set the key variable (e.g. {key_env}) or use a loopback base URL"
    )]
    MissingKey {
        base_url: String,
        key_env: &'static str,
    },
    #[error("invalid base URL `{0}`: expected something like https://api.openai.com/v1")]
    InvalidBaseUrl(String),
    #[error("could not set up the HTTP client: {0}")]
    Client(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show_in_debug_output() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{:?}", Some(key)).contains("secret"));
    }
}
