//! How a provider is configured: wire format, endpoint, key, watchdog,
//! and the injected clock and jitter (docs/interfaces.md: the endpoint table).

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

    /// The model table's default model for this provider: what a person
    /// who only set this provider's key gets (docs/interfaces.md: "the
    /// model table's default model").
    pub fn default_model(self) -> &'static str {
        match self {
            Self::Anthropic => "claude-sonnet-4-5",
            Self::OpenAiChat | Self::OpenAiResponses => "gpt-5",
        }
    }

    /// The base URL requests are joined to: a trailing `/` trimmed
    /// (docs/interfaces.md), and for `anthropic` a trailing `/v1` dropped too — its
    /// request path, `/v1/messages`, already starts with it, and
    /// `https://api.anthropic.com/v1` is how the endpoint is often written.
    /// OpenAI-compatible base URLs include `/v1` by convention and are kept.
    pub fn normalize_base_url(self, configured: &str) -> BaseUrl {
        let trimmed = configured.trim().trim_end_matches('/');
        if self == Self::Anthropic
            && let Some(root) = trimmed.strip_suffix("/v1")
            && root
                .split_once("://")
                .is_some_and(|(_, rest)| !rest.is_empty())
        {
            return BaseUrl {
                url: root.trim_end_matches('/').to_owned(),
                dropped: Some("/v1"),
            };
        }
        BaseUrl {
            url: trimmed.to_owned(),
            dropped: None,
        }
    }
}

/// A base URL as requests use it ([`ProviderKind::normalize_base_url`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    pub url: String,
    /// What was dropped from the configured URL beyond slashes (`/v1`),
    /// so people can be told.
    pub dropped: Option<&'static str>,
}

impl BaseUrl {
    /// For people, when something was dropped: what and why, in one line.
    pub fn note(&self, kind: ProviderKind) -> Option<String> {
        self.dropped.map(|dropped| {
            format!(
                "the base URL's trailing {dropped} is dropped because the {} request path {} already starts with it: requests go to {}{}",
                kind.name(),
                kind.path(),
                self.url,
                kind.path()
            )
        })
    }
}

/// An API key. Its `Debug` never shows it, and nothing in this crate logs
/// it (docs/design.md §11).
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

/// The idle watchdog's default window (docs/interfaces.md:
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
    /// Where the key came from, for people: `$ANTHROPIC_API_KEY`,
    /// `credentials.json (…)` — never the key. A refused key is reported
    /// with it.
    pub key_origin: Option<String>,
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
            key_origin: None,
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
    fn an_anthropic_base_url_ending_in_v1_is_normalized_and_others_are_kept() {
        let anthropic = ProviderKind::Anthropic;
        for (given, url) in [
            ("https://api.anthropic.com/v1", "https://api.anthropic.com"),
            ("https://api.anthropic.com/v1/", "https://api.anthropic.com"),
            ("http://127.0.0.1:9/proxy/v1", "http://127.0.0.1:9/proxy"),
        ] {
            let got = anthropic.normalize_base_url(given);
            assert_eq!(got.url, url, "{given}");
            assert_eq!(got.dropped, Some("/v1"), "{given}");
            let note = got.note(anthropic).unwrap();
            assert!(note.contains("/v1/messages"), "{note}");
            assert!(note.contains(&format!("{url}/v1/messages")), "{note}");
        }
        for given in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/",
            "https://proxy.example/v1beta",
        ] {
            let got = anthropic.normalize_base_url(given);
            assert_eq!(got.url, given.trim_end_matches('/'));
            assert_eq!(got.dropped, None);
            assert_eq!(got.note(anthropic), None);
        }
        // OpenAI-compatible servers keep their `/v1`.
        for kind in [ProviderKind::OpenAiChat, ProviderKind::OpenAiResponses] {
            let got = kind.normalize_base_url("http://127.0.0.1:11434/v1/");
            assert_eq!(got.url, "http://127.0.0.1:11434/v1");
            assert_eq!(got.dropped, None);
        }
    }

    #[test]
    fn every_provider_has_a_default_model_the_table_knows() {
        for kind in [
            ProviderKind::Anthropic,
            ProviderKind::OpenAiChat,
            ProviderKind::OpenAiResponses,
        ] {
            let model = kind.default_model();
            assert!(!model.is_empty());
            assert_ne!(
                crate::models::capabilities_for(model, &[]),
                riot_protocol::ModelCapabilities::default(),
                "{model} is in the table"
            );
        }
        assert!(
            ProviderKind::Anthropic
                .default_model()
                .starts_with("claude-")
        );
    }

    #[test]
    fn keys_never_show_in_debug_output() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert!(!format!("{:?}", Some(key)).contains("secret"));
    }
}
