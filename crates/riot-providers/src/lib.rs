//! # riot-providers — model endpoints
//!
//! Turns a provider-neutral [`riot_protocol::ModelRequest`] into HTTP for
//! the three wire formats people use — Anthropic Messages, OpenAI Chat
//! Completions (and every compatible server: DeepSeek, Kimi, Qwen,
//! OpenRouter, vLLM, Ollama, llama.cpp, LM Studio) and OpenAI Responses —
//! and the reply bytes into [`riot_protocol::ProviderEvent`]s
//! (docs/design.md §11).
//!
//! Code map:
//! - [`sse`]: byte-level SSE parser (UTF-8 reassembly, linear scanning);
//! - [`anthropic`], [`chat`], [`responses`]: one request builder and one
//!   stream decoder per wire format;
//! - [`history`]: cleaning shared by the builders, with the invariant
//!   checks on what is sent (pairing, no `System`, thinking model);
//! - [`models`]: the per-model table with settings overrides;
//! - [`classify`]: HTTP and stream errors → `ProviderErrorKind`;
//! - [`retry`]: backoff with injected jitter and the cap on one wait;
//!   [`relay`]: what of an attempt may be handed out when; [`transport`]:
//!   reqwest, retries, idle watchdog, non-streaming fallback, cancellation;
//!   [`redact`]: the configured key out of every error it hands out.
//!
//! It deliberately does not decide recoveries (compaction, output-limit
//! escalation, the fallback model after repeated overloads): the agent
//! loop owns those. Time comes only from the injected `Clock`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use riot_protocol::FixedClock;
//! use riot_providers::{ApiKey, HttpProvider, ProviderConfig, ProviderKind, SplitMix64};
//!
//! let mut config = ProviderConfig::new(
//!     ProviderKind::Anthropic,
//!     Arc::new(FixedClock::new()),
//!     Arc::new(SplitMix64::new(7)),
//! );
//! config.api_key = Some(ApiKey::new("sk-ant-..."));
//! let provider = HttpProvider::new(config).unwrap();
//! assert_eq!(provider.endpoint(), "https://api.anthropic.com/v1/messages");
//! ```

pub mod anthropic;
pub mod chat;
pub mod classify;
pub mod config;
pub mod decode;
pub mod history;
pub mod listing;
pub mod meter;
pub mod models;
pub mod redact;
pub mod relay;
pub mod responses;
pub mod retry;
pub mod sse;
pub mod transport;

pub use config::{
    ApiKey, BaseUrl, ConfigError, DEFAULT_IDLE_TIMEOUT_MS, ProviderConfig, ProviderKind,
};
pub use listing::ListedModel;
pub use models::{ModelOverride, capabilities_for};
pub use retry::{Jitter, MAX_RETRY_WAIT_MS, RetryPolicy, SplitMix64};
pub use transport::HttpProvider;
