//! The model endpoint of a session: provider kind, model, base URL, key
//! (variable or credentials file; none for loopback), per-model overrides
//! from settings, and the idle watchdog (docs/design.md §11, docs/interfaces.md).
//!
//! Which endpoint: flags and `RIOT_*` variables first; then, for a resumed
//! session, the provider, base URL and model it recorded; then settings,
//! and — with no provider configured and exactly one of
//! `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` set — that provider with its
//! default model (`config::layer`). Anything still missing is named in one
//! message with the fix.

use std::collections::BTreeMap;
use std::sync::Arc;

use riot_providers::{
    ApiKey, HttpProvider, ModelOverride, ProviderConfig, ProviderKind, SplitMix64,
};
use riot_store::LoadedSession;

use crate::error::KernelError;
use crate::kernel::Kernel;
use riot_config::credentials::{self, KeyError, KeyResolution, KeySource};
use riot_config::{self as config, Config, ConfigSource, Sourced};

/// The endpoint a session talks to, as requests use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub kind: ProviderKind,
    pub model: String,
    /// Normalized (`ProviderKind::normalize_base_url`).
    pub base_url: String,
}

/// Whether a value overrides what a resumed session recorded: only flags
/// and the environment do; settings are defaults for new sessions.
fn overrides<T>(value: &Sourced<T>) -> bool {
    matches!(
        value.source,
        ConfigSource::Flag { .. } | ConfigSource::Env { .. }
    )
}

/// Something a session cannot start without.
enum Missing {
    /// No provider; the key variables that are set (none, or both).
    Provider {
        keys_set: Vec<&'static str>,
    },
    Model,
    Key(KeyError),
}

/// One message naming everything missing, then the fix, on one line.
fn not_configured(missing: &[Missing]) -> String {
    if let [Missing::Key(e)] = missing {
        return e.to_string();
    }
    let model_missing = missing.iter().any(|m| matches!(m, Missing::Model));
    let mut what: Vec<String> = Vec::new();
    let mut why = None;
    let mut fixes: Vec<String> = Vec::new();
    for m in missing {
        match m {
            Missing::Provider { keys_set } => {
                what.push("no provider".into());
                if keys_set.is_empty() {
                    why = Some("neither $ANTHROPIC_API_KEY nor $OPENAI_API_KEY is set".to_owned());
                    fixes.push(if model_missing {
                        "export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY=…) to use that provider's default model, or pass --provider and --model (and --base-url for a local server)".into()
                    } else {
                        "export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY=…), or pass --provider".into()
                    });
                } else {
                    why = Some(format!(
                        "both ${} are set, so Riot will not pick one",
                        keys_set.join(" and $")
                    ));
                    fixes.push(if model_missing {
                        "pass --provider anthropic|openai and --model NAME (or set RIOT_PROVIDER and RIOT_MODEL)".into()
                    } else {
                        "pass --provider anthropic|openai (or set RIOT_PROVIDER)".into()
                    });
                }
            }
            Missing::Model => {
                what.push("no model".into());
                // Without a provider, its fix above names --model too.
                if !missing
                    .iter()
                    .any(|m| matches!(m, Missing::Provider { .. }))
                {
                    fixes.push("pass --model NAME (or set RIOT_MODEL)".into());
                }
            }
            Missing::Key(KeyError::Missing { var }) => {
                what.push(format!("no API key (${var} is not set)"));
                fixes.push(format!(
                    "set ${var} (or pass --api-key-env VAR naming the variable that holds it)"
                ));
            }
            Missing::Key(KeyError::Empty { var }) => {
                what.push(format!("no API key (${var} is set but empty)"));
                fixes.push(format!(
                    "put the key in ${var} (or unset it to use credentials.json)"
                ));
            }
            Missing::Key(e @ KeyError::BadFile { .. }) => {
                what.push(format!("no usable API key ({e})"));
                fixes.push("fix or remove the credentials file".into());
            }
        }
    }
    let what = match what.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
    format!("not configured: {what}{why}. Fix: {}.", fixes.join("; "))
}

impl Kernel {
    /// The provider, the endpoint, and where the key came from.
    /// `resumed`: the session being resumed, whose provider, base URL and
    /// model are kept unless a flag or the environment overrides them.
    pub(crate) async fn provider(
        &self,
        config: &Config,
        env: &BTreeMap<String, String>,
        resumed: Option<&LoadedSession>,
    ) -> Result<(Arc<HttpProvider>, Endpoint), KernelError> {
        let recorded = resumed.and_then(|r| r.meta.provider.as_deref());
        // Whether the resumed session's endpoint (base URL, model) still
        // applies: not when its provider was overridden by another.
        let (provider_name, keep_session) = match (&config.provider, recorded) {
            (Some(p), Some(r)) if overrides(p) => (Some(p.value.clone()), p.value == r),
            (_, Some(r)) => (Some(r.to_owned()), true),
            (p, None) => (p.as_ref().map(|p| p.value.clone()), resumed.is_some()),
        };
        let kind = match &provider_name {
            None => None,
            Some(name) => Some(ProviderKind::from_name(name).ok_or_else(|| {
                KernelError::Endpoint(format!(
                    "unknown provider `{name}`: use anthropic, openai or openai-responses"
                ))
            })?),
        };
        let model = match (&config.model, resumed) {
            (Some(m), _) if overrides(m) => Some(m.value.clone()),
            (_, Some(r)) if keep_session => Some(r.model.clone()),
            (m, _) => m.as_ref().map(|m| m.value.clone()),
        };
        let mut missing = Vec::new();
        if kind.is_none() {
            missing.push(Missing::Provider {
                keys_set: config::keys_set(env).into_iter().map(|(v, _)| v).collect(),
            });
        }
        if model.is_none() {
            missing.push(Missing::Model);
        }
        let Some(kind) = kind else {
            return Err(KernelError::Endpoint(not_configured(&missing)));
        };

        let recorded_base = resumed
            .filter(|_| keep_session)
            .and_then(|r| r.meta.base_url.clone());
        let configured_base = match (&config.base_url, recorded_base) {
            (Some(b), _) if overrides(b) => b.value.clone(),
            (_, Some(r)) => r,
            (Some(b), None) => b.value.clone(),
            (None, None) => kind.default_base_url().to_owned(),
        };
        let base_url = kind.normalize_base_url(&configured_base).url;
        let key_var = config
            .api_key_env
            .as_ref()
            .map_or_else(|| kind.default_key_env().to_owned(), |v| v.value.clone());
        let credentials_path = self.home().join("credentials.json");
        let credentials_text = self
            .capabilities()
            .fs
            .read(&credentials_path)
            .await
            .ok()
            .and_then(|b| String::from_utf8(b).ok());
        let credentials_label = credentials_path.display().to_string();
        let key = match credentials::resolve_key(
            kind.name(),
            &base_url,
            &key_var,
            &|k| env.get(k).cloned(),
            credentials_text
                .as_deref()
                .map(|t| (credentials_label.as_str(), t)),
        ) {
            Ok(key) => Some(key),
            Err(e) => {
                missing.push(Missing::Key(e));
                None
            }
        };
        let (Some(key), Some(model)) = (key, model) else {
            return Err(KernelError::Endpoint(not_configured(&missing)));
        };

        let mut model_overrides: Vec<(String, ModelOverride)> = Vec::new();
        for (glob, value) in &config.models {
            let o: ModelOverride = serde_json::from_value(value.value.clone()).map_err(|e| {
                KernelError::Endpoint(format!("{}: `models.{glob}`: {e}", value.source))
            })?;
            model_overrides.push((glob.clone(), o));
        }
        if config.context_window.is_some() || config.max_output_tokens.is_some() {
            // Top-level overrides apply to every model and win over `models`.
            let o = ModelOverride {
                context_window: config.context_window.as_ref().map(|c| c.value),
                max_output_tokens: config.max_output_tokens.as_ref().map(|c| c.value),
                ..ModelOverride::default()
            };
            model_overrides.push(("*".into(), o));
        }
        let mut provider_config = ProviderConfig::new(
            kind,
            Arc::clone(&self.capabilities().clock),
            Arc::new(SplitMix64::new(self.capabilities().seed)),
        );
        provider_config.base_url = Some(base_url.clone());
        (provider_config.api_key, provider_config.key_origin) = match key {
            KeyResolution::Found { key, source } => (
                Some(ApiKey::new(key.expose())),
                Some(match source {
                    KeySource::Env(var) => format!("${var}"),
                    KeySource::CredentialsFile(name) => {
                        format!("{credentials_label} (the entry for {name})")
                    }
                }),
            ),
            KeyResolution::NotNeeded => (None, None),
        };
        if let Some(ms) = &config.stream_idle_timeout_ms {
            provider_config.idle_timeout_ms = ms.value;
        }
        provider_config.model_overrides = model_overrides;
        let provider = Arc::new(HttpProvider::new(provider_config)?);
        Ok((
            provider,
            Endpoint {
                kind,
                model,
                base_url,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_missing_is_named_in_one_line_with_the_fix() {
        let nothing = not_configured(&[
            Missing::Provider {
                keys_set: Vec::new(),
            },
            Missing::Model,
        ]);
        assert_eq!(
            nothing,
            "not configured: no provider and no model (neither $ANTHROPIC_API_KEY nor $OPENAI_API_KEY is set). \
             Fix: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY=…) to use that provider's default model, \
             or pass --provider and --model (and --base-url for a local server)."
        );
        let both = not_configured(&[
            Missing::Provider {
                keys_set: vec!["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
            },
            Missing::Model,
        ]);
        assert!(
            both.contains("both $ANTHROPIC_API_KEY and $OPENAI_API_KEY are set"),
            "{both}"
        );
        assert!(
            both.contains("--provider anthropic|openai and --model NAME"),
            "{both}"
        );
        let model_and_key = not_configured(&[
            Missing::Model,
            Missing::Key(KeyError::Missing {
                var: "OPENAI_API_KEY".into(),
            }),
        ]);
        assert_eq!(
            model_and_key,
            "not configured: no model and no API key ($OPENAI_API_KEY is not set). \
             Fix: pass --model NAME (or set RIOT_MODEL); set $OPENAI_API_KEY \
             (or pass --api-key-env VAR naming the variable that holds it)."
        );
        for message in [nothing, both, model_and_key] {
            assert!(!message.contains('\n'), "{message}");
        }
        // A key problem alone keeps its own message.
        let key = KeyError::Empty {
            var: "OPENAI_API_KEY".into(),
        };
        assert_eq!(
            not_configured(&[Missing::Key(key.clone())]),
            key.to_string()
        );
    }
}
