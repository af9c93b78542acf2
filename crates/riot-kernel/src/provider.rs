//! The model endpoint of a session: provider kind, model, base URL, key
//! (variable or credentials file; none for loopback), per-model overrides
//! from settings, and the idle watchdog (ARCHITECTURE §11, INTERFACES).

use std::collections::BTreeMap;
use std::sync::Arc;

use riot_providers::{
    ApiKey, HttpProvider, ModelOverride, ProviderConfig, ProviderKind, SplitMix64,
};

use crate::config::Config;
use crate::credentials::{self, KeyResolution};
use crate::session::{Kernel, KernelError};

impl Kernel {
    /// The provider and model a session uses. `resumed_model` is the model
    /// a resumed session ended with, used when none is configured.
    pub(crate) async fn provider(
        &self,
        config: &Config,
        env: &BTreeMap<String, String>,
        resumed_model: Option<&str>,
    ) -> Result<(Arc<HttpProvider>, String), KernelError> {
        let provider_name = config.provider.as_ref().map(|p| p.value.clone()).ok_or_else(|| {
            KernelError::Usage(
                "no provider configured: pass --provider anthropic|openai|openai-responses or set RIOT_PROVIDER".into(),
            )
        })?;
        let kind = ProviderKind::from_name(&provider_name).ok_or_else(|| {
            KernelError::Usage(format!(
                "unknown provider `{provider_name}`: use anthropic, openai or openai-responses"
            ))
        })?;
        let model = match (&config.model, resumed_model) {
            (Some(m), _) => m.value.clone(),
            (None, Some(r)) => (*r).to_owned(),
            (None, None) => {
                return Err(KernelError::Usage(
                    "no model configured: pass --model NAME or set RIOT_MODEL".into(),
                ));
            }
        };
        let base_url = config
            .base_url
            .as_ref()
            .map_or_else(|| kind.default_base_url().to_owned(), |b| b.value.clone());
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
        let key = credentials::resolve_key(
            kind.name(),
            &base_url,
            &key_var,
            &|k| env.get(k).cloned(),
            credentials_text
                .as_deref()
                .map(|t| (credentials_label.as_str(), t)),
        )
        .map_err(|e| KernelError::Usage(e.to_string()))?;

        let mut model_overrides: Vec<(String, ModelOverride)> = Vec::new();
        for (glob, value) in &config.models {
            let o: ModelOverride = serde_json::from_value(value.value.clone()).map_err(|e| {
                KernelError::Usage(format!("{}: `models.{glob}`: {e}", value.source))
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
        provider_config.api_key = match key {
            KeyResolution::Found { key, .. } => Some(ApiKey::new(key.expose())),
            KeyResolution::NotNeeded => None,
        };
        if let Some(ms) = &config.stream_idle_timeout_ms {
            provider_config.idle_timeout_ms = ms.value;
        }
        provider_config.model_overrides = model_overrides;
        let provider = Arc::new(
            HttpProvider::new(provider_config).map_err(|e| KernelError::Usage(e.to_string()))?,
        );
        Ok((provider, model))
    }
}
