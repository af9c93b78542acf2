//! Checks a real endpoint: key, base URL and model.
//!
//! ```text
//! RIOT_PROVIDER=anthropic RIOT_MODEL=claude-sonnet-4-5 ANTHROPIC_API_KEY=... \
//!   cargo run -p riot-providers --example smoke
//! RIOT_PROVIDER=openai RIOT_BASE_URL=http://127.0.0.1:11434/v1 RIOT_MODEL=qwen3 \
//!   cargo run -p riot-providers --example smoke
//! ```
//!
//! Sends one tiny request and prints what came back, or a diagnosis of
//! what to fix.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)] // a binary edge: real time and stdio

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::future::BoxFuture;
use riot_protocol::{
    CacheHints, Clock, Message, MessageId, ModelRequest, Provider, ProviderErrorKind,
    ProviderEvent, StreamDelta, SystemPrompt,
};
use riot_providers::{ApiKey, HttpProvider, ProviderConfig, ProviderKind, SplitMix64};
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
struct WallClock;

impl Clock for WallClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    fn sleep_ms(&self, ms: u64) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(ms)))
    }
}

fn diagnosis(kind: ProviderErrorKind) -> &'static str {
    use ProviderErrorKind as K;
    match kind {
        K::Auth => {
            "the key was refused: check the key variable and that it belongs to this provider"
        }
        K::InvalidRequest => {
            "the server refused the request: check RIOT_MODEL (does this endpoint serve it?) and RIOT_PROVIDER (the wire format)"
        }
        K::Network | K::Unreachable => {
            "could not reach the server: check RIOT_BASE_URL, that the server runs, and your network/proxy"
        }
        K::RateLimit => "rate limited even after retries: wait and try again",
        K::QuotaExhausted | K::Payment => "the account has no quota or balance left: check billing",
        K::Overloaded | K::Server => {
            "the server is failing or overloaded: try later or another model"
        }
        K::Malformed | K::StreamCut => {
            "the reply did not look like this wire format: check RIOT_PROVIDER and RIOT_BASE_URL (OpenAI-style bases usually end in /v1)"
        }
        K::Stalled => {
            "the server went silent: raise RIOT_STREAM_IDLE_TIMEOUT_MS for slow local models"
        }
        K::ContextOverflow | K::OutputLimit | K::MediaTooLarge => {
            "the model's limits were hit by a tiny request: check the model's context settings"
        }
        K::Cancelled => "cancelled",
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let provider_name = std::env::var("RIOT_PROVIDER").unwrap_or_else(|_| "anthropic".into());
    let Some(kind) = ProviderKind::from_name(&provider_name) else {
        eprintln!(
            "RIOT_PROVIDER must be anthropic, openai or openai-responses (got `{provider_name}`)"
        );
        return ExitCode::from(2);
    };
    let Ok(model) = std::env::var("RIOT_MODEL") else {
        eprintln!("set RIOT_MODEL to the model id to check");
        return ExitCode::from(2);
    };
    let key_env =
        std::env::var("RIOT_API_KEY_ENV").unwrap_or_else(|_| kind.default_key_env().into());
    let mut config = ProviderConfig::new(
        kind,
        Arc::new(WallClock),
        Arc::new(SplitMix64::new(WallClock.now_ms())),
    );
    config.base_url = std::env::var("RIOT_BASE_URL").ok();
    config.api_key = std::env::var(&key_env)
        .ok()
        .filter(|k| !k.is_empty())
        .map(ApiKey::new);
    // Unparsable or zero: keep the default window.
    if let Some(ms) = std::env::var("RIOT_STREAM_IDLE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
    {
        config.idle_timeout_ms = ms;
    }
    let provider = match HttpProvider::new(config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("configuration: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "POST {} (model {model}, key from {key_env})",
        provider.endpoint()
    );
    let request = ModelRequest {
        server_tools: Vec::new(),
        model,
        system: SystemPrompt::stable("Answer in one short sentence."),
        messages: vec![Message::user_text(
            MessageId::new("smoke"),
            "Say that the connection works.",
        )],
        tools: vec![],
        max_tokens: 64,
        thinking: None,
        cache: CacheHints::default(),
        stream: true,
    };
    let mut stream = provider.stream(request, CancellationToken::new());
    while let Some(item) = stream.next().await {
        match item {
            Ok(ProviderEvent::Started { model }) => println!("answered by {model}"),
            Ok(ProviderEvent::Delta(StreamDelta::Text { text })) => print!("{text}"),
            Ok(ProviderEvent::Retrying {
                attempt,
                delay_ms,
                reason,
                ..
            }) => {
                eprintln!("retrying (attempt {attempt}) in {delay_ms} ms: {reason}");
            }
            Ok(ProviderEvent::Usage(u)) => println!(
                "\nusage: {} in, {} out, {} cached",
                u.input_tokens, u.output_tokens, u.cache_read_tokens
            ),
            Ok(ProviderEvent::Stop { reason }) => println!("OK: stopped with {reason:?}"),
            Ok(_) => {}
            Err(e) => {
                eprintln!(
                    "\nFAILED ({:?}{}): {}",
                    e.kind,
                    e.status.map(|s| format!(", HTTP {s}")).unwrap_or_default(),
                    e.message
                );
                eprintln!("diagnosis: {}", diagnosis(e.kind));
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}
