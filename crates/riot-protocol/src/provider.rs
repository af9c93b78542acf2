//! The provider-neutral model interface (docs/design.md §11).
//!
//! `riot-core` builds one [`ModelRequest`] per model call; each provider in
//! `riot-providers` turns it into its wire JSON and turns the reply bytes
//! into [`ProviderEvent`]s. Errors are classified once, here, so the loop's
//! recovery decisions and the transport's retries agree.

use std::fmt;

use futures::stream::BoxStream;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::cost::Price;
use crate::event::{ErrorKind, StreamDelta, Usage};
use crate::message::{AssistantBlock, Message, StopReason};

/// One model call, independent of the wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelRequest {
    pub model: String,
    pub system: SystemPrompt,
    /// Conversation history; never contains `Message::System` (INV-7).
    pub messages: Vec<Message>,
    /// Tools in the exact order sent to the model.
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    pub cache: CacheHints,
    /// Stream the reply (false only for the watchdog's fallback).
    pub stream: bool,
    /// Tools the provider runs on its own servers, declared after
    /// `tools` (docs/web.md: the provider's web search).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_tools: Vec<ServerTool>,
}

/// A tool the provider runs itself, during the reply: the model calls it
/// and the server answers it, so Riot never sees a tool call to run. What
/// it did arrives as an [`AssistantBlock::WebSearch`] in the reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerTool {
    /// The provider's web search: Anthropic's `web_search` server tool,
    /// the Responses API's `web_search`. Only offered where the model table
    /// says the model has it ([`ModelCapabilities::web_search`]).
    WebSearch {
        /// Searches one reply may make at most.
        max_uses: u32,
    },
}

/// The system prompt split for caching: the stable section is byte-identical
/// across sessions of a version; the session section is snapshotted when a
/// session starts (date, git summary, memory files) and reused byte for byte.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SystemPrompt {
    pub stable: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session: String,
}

impl SystemPrompt {
    /// A prompt with only a stable section (the default constructor).
    pub fn stable(text: impl Into<String>) -> Self {
        Self {
            stable: text.into(),
            session: String::new(),
        }
    }
}

/// A tool as declared to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Extended thinking / reasoning settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThinkingConfig {
    pub budget_tokens: u32,
}

impl ThinkingConfig {
    /// The OpenAI reasoning effort this budget stands for (`low` up to
    /// [`ThinkingLevel::Low`]'s budget, `medium` up to Medium's, else
    /// `high`).
    pub fn effort(self) -> &'static str {
        ThinkingLevel::of(Some(self)).as_str()
    }
}

/// How hard the model thinks before it answers, as the faces offer it:
/// Anthropic's thinking budget or OpenAI's reasoning effort.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Low,
    Medium,
    High,
}

impl ThinkingLevel {
    /// Every level, in order.
    pub const ALL: [ThinkingLevel; 4] = [Self::Off, Self::Low, Self::Medium, Self::High];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// `off`, `low`, `medium` or `high`.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == value)
    }

    /// The thinking settings of a level (`None` for off): a budget of
    /// 2,048, 8,192 or 16,384 tokens.
    pub fn config(self) -> Option<ThinkingConfig> {
        let budget_tokens = match self {
            Self::Off => return None,
            Self::Low => 2_048,
            Self::Medium => 8_192,
            Self::High => 16_384,
        };
        Some(ThinkingConfig { budget_tokens })
    }

    /// The level a setting stands for.
    pub fn of(config: Option<ThinkingConfig>) -> Self {
        let Some(budget) = config.map(|c| c.budget_tokens) else {
            return Self::Off;
        };
        [Self::Low, Self::Medium]
            .into_iter()
            .find(|l| l.config().is_some_and(|c| budget <= c.budget_tokens))
            .unwrap_or(Self::High)
    }
}

/// Prompt-caching hints every provider maps to its own mechanism.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheHints {
    /// Stable per-session key (OpenAI `prompt_cache_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// Put the one message-level breakpoint on the last message (Anthropic).
    pub message_breakpoint: bool,
    /// Request the long (1 h) cache lifetime where supported.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub long_ttl: bool,
}

/// One event of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// The server accepted the request; the model that answers.
    Started { model: String },
    /// A fragment for live display.
    Delta(StreamDelta),
    /// A finished content block, in reply order.
    Block(AssistantBlock),
    /// Usage so far (cumulative for this request).
    Usage(Usage),
    /// The reply ended normally.
    Stop { reason: StopReason },
    /// The transport will retry after a transient failure (before any
    /// content arrived). `kind` lets the loop count overload streaks
    /// (three in a row switch to the fallback model).
    Retrying {
        attempt: u32,
        delay_ms: u64,
        kind: ProviderErrorKind,
        reason: String,
    },
}

/// A streamed reply: events, then at most one error which ends the stream.
pub type ProviderStream = BoxStream<'static, Result<ProviderEvent, ProviderError>>;

/// A model endpoint.
pub trait Provider: Send + Sync + fmt::Debug {
    /// Sends the request and streams the reply. The stream ends after
    /// `Stop` or after one `Err`; cancelling the token ends it promptly.
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> ProviderStream;

    /// What the given model supports.
    fn capabilities(&self, model: &str) -> ModelCapabilities;
}

/// Per-model facts from the model table (overridable in settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelCapabilities {
    pub context_window: u64,
    pub max_output_tokens: u32,
    pub vision: bool,
    /// Takes PDF pages as document blocks in tool results (Anthropic's own
    /// models); otherwise a Read of a PDF reaches the model as text.
    #[serde(default)]
    pub documents: bool,
    pub thinking: bool,
    /// The provider can search the web for this model on its own servers
    /// ([`ServerTool::WebSearch`]).
    #[serde(default)]
    pub web_search: bool,
    pub parallel_tools: bool,
    pub caching: CachingStyle,
    pub reasoning_replay: ReasoningReplay,
    /// What the model costs; `None` when unknown (never taken as free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

impl Default for ModelCapabilities {
    /// Unknown models: a 128k window and 8k output (docs/interfaces.md: `models`).
    fn default() -> Self {
        Self {
            context_window: 128_000,
            max_output_tokens: 8_192,
            vision: false,
            documents: false,
            thinking: false,
            web_search: false,
            parallel_tools: true,
            caching: CachingStyle::None,
            reasoning_replay: ReasoningReplay::None,
            price: None,
        }
    }
}

/// How a provider caches prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CachingStyle {
    /// No caching, or caching Riot cannot influence.
    None,
    /// Explicit `cache_control` breakpoints (Anthropic).
    Breakpoints,
    /// Automatic prefix caching keyed by `prompt_cache_key` (OpenAI).
    Automatic,
}

/// Which assistant reasoning goes back to the server in later requests
/// (docs/design.md §11: a per-model policy, not a constant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningReplay {
    /// Never (OpenAI's own endpoint rejects unknown fields).
    None,
    /// Only on assistant messages that made tool calls (DeepSeek, Kimi).
    ToolTurns,
    /// On every assistant message.
    All,
}

/// The longest single wait between two attempts at a request: 60 s. A
/// server asking for a longer one (`Retry-After`) ends the request with a
/// message saying when to retry; a minute is as long as a person watching
/// `riot exec` can be expected to wait, while per-minute rate limits still
/// fit. The provider layer enforces it; faces word errors by it.
pub const MAX_RETRY_WAIT_MS: u64 = 60_000;

/// A classified provider failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    /// The server's own message when it sent one, else a description.
    pub message: String,
    #[source]
    pub detail: Option<ErrorDetail>,
    /// HTTP status, when there was a response.
    pub status: Option<u16>,
    /// Server-requested delay (`Retry-After`), in milliseconds.
    pub retry_after_ms: Option<u64>,
}

/// Extra context of an error (kept out of `Display`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ErrorDetail(pub String);

/// The classes of docs/design.md §11 "Error classification".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorKind {
    /// 400 "prompt is too long", 413, `context_length_exceeded`.
    ContextOverflow,
    /// The reply hit the output-token limit (`finish_reason: "length"`).
    OutputLimit,
    /// An image or document is too large.
    MediaTooLarge,
    /// 401 / 403.
    Auth,
    /// 429.
    RateLimit,
    /// 429 `insufficient_quota`: retrying cannot help.
    QuotaExhausted,
    /// 402 (e.g. DeepSeek's balance).
    Payment,
    /// 529 / 503.
    Overloaded,
    /// Other 5xx.
    Server,
    /// 400 and other 4xx: the server's message is kept, never retried.
    InvalidRequest,
    /// Connection reset, TLS or timeout on an endpoint that was reachable.
    Network,
    /// The endpoint could not be reached at all (connection refused, no
    /// such host): retried briefly, then surfaced with a fix.
    Unreachable,
    /// The stream ended before its final event.
    StreamCut,
    /// No event within the idle watchdog's window.
    Stalled,
    /// The request was cancelled by the caller.
    Cancelled,
    /// The reply could not be decoded.
    Malformed,
}

impl ProviderError {
    /// An error of the given kind with a message.
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            detail: None,
            status: None,
            retry_after_ms: None,
        }
    }

    /// Attaches the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Whether the transport may retry the same request (before the first
    /// event of a stream only). A refused key (401/403, `Auth`) is never
    /// retried: the same key would be refused again.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            ProviderErrorKind::RateLimit
            | ProviderErrorKind::Overloaded
            | ProviderErrorKind::Server
            | ProviderErrorKind::Network
            | ProviderErrorKind::Unreachable
            | ProviderErrorKind::Stalled
            | ProviderErrorKind::StreamCut => true,
            ProviderErrorKind::Auth
            | ProviderErrorKind::ContextOverflow
            | ProviderErrorKind::OutputLimit
            | ProviderErrorKind::MediaTooLarge
            | ProviderErrorKind::QuotaExhausted
            | ProviderErrorKind::Payment
            | ProviderErrorKind::InvalidRequest
            | ProviderErrorKind::Cancelled
            | ProviderErrorKind::Malformed => false,
        }
    }

    /// Whether the agent loop withholds this error and tries to recover
    /// (compact, raise the limit, shrink media) instead of surfacing it.
    pub fn is_recoverable_by_loop(&self) -> bool {
        matches!(
            self.kind,
            ProviderErrorKind::ContextOverflow
                | ProviderErrorKind::OutputLimit
                | ProviderErrorKind::MediaTooLarge
        )
    }

    /// The turn-ending error class for faces.
    pub fn error_kind(&self) -> ErrorKind {
        match self.kind {
            ProviderErrorKind::ContextOverflow | ProviderErrorKind::MediaTooLarge => {
                ErrorKind::ContextOverflow
            }
            ProviderErrorKind::OutputLimit => ErrorKind::OutputLimit,
            ProviderErrorKind::Auth => ErrorKind::Auth,
            ProviderErrorKind::RateLimit => ErrorKind::RateLimit,
            ProviderErrorKind::QuotaExhausted | ProviderErrorKind::Payment => ErrorKind::Payment,
            ProviderErrorKind::Overloaded => ErrorKind::Overloaded,
            ProviderErrorKind::InvalidRequest | ProviderErrorKind::Malformed => {
                ErrorKind::InvalidRequest
            }
            ProviderErrorKind::Server
            | ProviderErrorKind::Network
            | ProviderErrorKind::Unreachable
            | ProviderErrorKind::StreamCut
            | ProviderErrorKind::Stalled => ErrorKind::Network,
            ProviderErrorKind::Cancelled => ErrorKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_thinking_level_reads_back_from_its_budget_and_names_its_effort() {
        for level in ThinkingLevel::ALL {
            assert_eq!(ThinkingLevel::of(level.config()), level);
            assert_eq!(ThinkingLevel::parse(level.as_str()), Some(level));
        }
        let effort = |budget_tokens| ThinkingConfig { budget_tokens }.effort();
        assert_eq!(
            [1_024, 2_048, 2_049, 8_192, 8_193, 32_000].map(effort),
            ["low", "low", "medium", "medium", "high", "high"]
        );
        assert_eq!(ThinkingLevel::parse("max"), None);
    }

    use super::*;

    #[test]
    fn quota_and_payment_are_not_retryable_but_rate_limits_are() {
        let err = |kind| ProviderError::new(kind, "x");
        assert!(err(ProviderErrorKind::RateLimit).is_retryable());
        assert!(err(ProviderErrorKind::Overloaded).is_retryable());
        assert!(!err(ProviderErrorKind::QuotaExhausted).is_retryable());
        assert!(!err(ProviderErrorKind::Payment).is_retryable());
        assert!(!err(ProviderErrorKind::InvalidRequest).is_retryable());
        assert!(!err(ProviderErrorKind::ContextOverflow).is_retryable());
        assert!(
            !err(ProviderErrorKind::Auth).is_retryable(),
            "a refused key is refused again"
        );
    }

    #[test]
    fn only_overflow_output_limit_and_media_are_withheld() {
        let err = |kind| ProviderError::new(kind, "x");
        assert!(err(ProviderErrorKind::ContextOverflow).is_recoverable_by_loop());
        assert!(err(ProviderErrorKind::OutputLimit).is_recoverable_by_loop());
        assert!(err(ProviderErrorKind::MediaTooLarge).is_recoverable_by_loop());
        assert!(!err(ProviderErrorKind::RateLimit).is_recoverable_by_loop());
        assert!(!err(ProviderErrorKind::Auth).is_recoverable_by_loop());
    }
}
