//! The model endpoint as a person sets it up from a UI (first-run
//! onboarding, settings): what is configured and whether a session can
//! start with it ([`ModelStatus`]), and saving a choice
//! ([`ModelChoice`]) — provider, model and base URL into the user's
//! `settings.json` (other keys kept), the key into `credentials.json`
//! (owner-only), never into settings, logs or replies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use riot_providers::ProviderKind;
use serde_json::{Map, Value};

use crate::error::KernelError;
use crate::kernel::Kernel;
use riot_config::FlagLayer;
use riot_config::credentials::{self, KeyResolution, KeySource, Secret};

/// Whether the endpoint has the key it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyState {
    Present,
    Missing,
    /// A loopback endpoint without a key.
    NotNeeded,
}

/// The effective model endpoint of new sessions in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelStatus {
    pub provider: Option<String>,
    /// The configured base URL; `None`: the provider's default.
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub key: KeyState,
    /// Where the key comes from: `$VAR` or `credentials.json`.
    pub key_source: Option<String>,
    /// Why a session cannot start, in one line; `None` when it can.
    pub problem: Option<String>,
}

impl ModelStatus {
    pub fn ready(&self) -> bool {
        self.problem.is_none()
    }
}

/// A person's choice of endpoint, to save.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub provider: String,
    pub model: String,
    /// `None`: the provider's default endpoint.
    pub base_url: Option<String>,
    /// `None`: keep whatever key is stored.
    pub api_key: Option<Secret>,
}

impl ModelChoice {
    /// Checks and normalises the choice; the error says what to fix.
    fn validated(&self) -> Result<(ProviderKind, String, Option<String>), KernelError> {
        let provider = self.provider.trim();
        let kind = ProviderKind::from_name(provider).ok_or_else(|| {
            KernelError::Input(format!(
                "unknown provider `{provider}`: use anthropic, openai or openai-responses"
            ))
        })?;
        let model = self.model.trim();
        if model.is_empty() {
            return Err(KernelError::Input(
                "no model: enter the model's name, e.g. claude-sonnet-4-5 or qwen2.5-coder".into(),
            ));
        }
        let base_url = match self.base_url.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(url) => {
                let host = url
                    .strip_prefix("http://")
                    .or_else(|| url.strip_prefix("https://"))
                    .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
                match host {
                    Some(host) if !host.is_empty() && !url.contains(char::is_whitespace) => {
                        Some(url.trim_end_matches('/').to_owned())
                    }
                    _ => {
                        return Err(KernelError::Input(format!(
                            "base URL `{url}` is not an http(s) address, e.g. http://127.0.0.1:11434/v1"
                        )));
                    }
                }
            }
        };
        Ok((kind, model.to_owned(), base_url))
    }
}

impl Kernel {
    fn settings_path(&self) -> PathBuf {
        self.home().join("settings.json")
    }

    fn credentials_path(&self) -> PathBuf {
        self.home().join("credentials.json")
    }

    /// What new sessions in `cwd` would use, and why they could not start.
    /// Never fails: a configuration that cannot be read is the problem.
    pub async fn model_status(
        &self,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        flags: &FlagLayer,
        trust_project: bool,
    ) -> ModelStatus {
        let mut status = ModelStatus {
            provider: None,
            base_url: None,
            model: None,
            key: KeyState::Missing,
            key_source: None,
            problem: None,
        };
        let loaded = match self.load_config(cwd, env, flags, trust_project).await {
            Ok(loaded) => loaded,
            Err(e) => {
                status.problem = Some(e.to_string());
                return status;
            }
        };
        let config = loaded.config;
        status.provider = config.provider.as_ref().map(|p| p.value.clone());
        status.model = config.model.as_ref().map(|m| m.value.clone());
        let Some(name) = status.provider.clone() else {
            status.problem = Some("no provider configured".into());
            return status;
        };
        let Some(kind) = ProviderKind::from_name(&name) else {
            status.problem = Some(format!(
                "unknown provider `{name}`: use anthropic, openai or openai-responses"
            ));
            return status;
        };
        status.base_url = config.base_url.as_ref().map(|b| b.value.clone());
        let base_url = status
            .base_url
            .clone()
            .unwrap_or_else(|| kind.default_base_url().to_owned());
        let var = config
            .api_key_env
            .as_ref()
            .map_or_else(|| kind.default_key_env().to_owned(), |v| v.value.clone());
        let credentials = self.read_text(&self.credentials_path()).await;
        let label = self.credentials_path().display().to_string();
        match credentials::resolve_key(
            kind.name(),
            &base_url,
            &var,
            &|k| env.get(k).cloned(),
            credentials.as_deref().map(|t| (label.as_str(), t)),
        ) {
            Ok(KeyResolution::Found { source, .. }) => {
                status.key = KeyState::Present;
                status.key_source = Some(match source {
                    KeySource::Env(var) => format!("${var}"),
                    KeySource::CredentialsFile(_) => "credentials.json".into(),
                });
            }
            Ok(KeyResolution::NotNeeded) => status.key = KeyState::NotNeeded,
            Err(e) => status.problem = Some(e.to_string()),
        }
        if status.model.is_none() && status.problem.is_none() {
            status.problem = Some("no model configured".into());
        }
        status
    }

    /// Saves `choice` for new sessions: provider, model and base URL in
    /// the user's `settings.json` (its other keys kept; no base URL
    /// removes a stored one), the key, if given, in `credentials.json`
    /// under the base URL (or the provider's name for its default
    /// endpoint), owner-only. A file that cannot be parsed is left alone
    /// and reported.
    pub async fn save_model_choice(&self, choice: &ModelChoice) -> Result<(), KernelError> {
        let (kind, model, base_url) = choice.validated()?;
        let fs = self.capabilities().fs.as_ref();
        fs.create_dir_all(self.home())
            .await
            .map_err(KernelError::io(self.home().display().to_string()))?;

        // Both files are read and checked before either is written, so a
        // refusal changes nothing.
        let settings_path = self.settings_path();
        let mut settings = self.json_object(&settings_path).await?;
        settings.insert("provider".into(), Value::String(kind.name().to_owned()));
        settings.insert("model".into(), Value::String(model));
        match &base_url {
            Some(url) => settings.insert("base_url".into(), Value::String(url.clone())),
            None => settings.remove("base_url"),
        };
        let key = choice
            .api_key
            .as_ref()
            .map(|k| k.expose().trim())
            .filter(|k| !k.is_empty());
        let credentials = match key {
            None => None,
            Some(key) => {
                let path = self.credentials_path();
                let mut file = self.json_object(&path).await?;
                let keys = file
                    .entry("keys")
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(keys) = keys else {
                    return Err(KernelError::BadFile(format!(
                        "{}: `keys` must be an object; fix or remove the file",
                        path.display()
                    )));
                };
                let name = base_url.unwrap_or_else(|| kind.name().to_owned());
                keys.insert(name, Value::String(key.to_owned()));
                Some((path, file))
            }
        };
        if let Some((path, file)) = credentials {
            write_json(fs, &path, &Value::Object(file), true).await?;
        }
        write_json(fs, &settings_path, &Value::Object(settings), false).await
    }

    /// Stores an API key for `provider` at `base_url` (`None`: the
    /// provider's default endpoint) in `credentials.json`, owner-only,
    /// without touching the settings: an editor's `authenticate`. The key
    /// is never logged or echoed.
    pub async fn save_api_key(
        &self,
        provider: &str,
        base_url: Option<&str>,
        key: &Secret,
    ) -> Result<(), KernelError> {
        let key = key.expose().trim();
        if key.is_empty() {
            return Err(KernelError::Input(
                "the API key is empty: pass the key itself".into(),
            ));
        }
        let name = key_name(provider, base_url)?;
        let fs = self.capabilities().fs.as_ref();
        fs.create_dir_all(self.home())
            .await
            .map_err(KernelError::io(self.home().display().to_string()))?;
        let path = self.credentials_path();
        let mut file = self.json_object(&path).await?;
        let keys = file
            .entry("keys")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(keys) = keys else {
            return Err(KernelError::BadFile(format!(
                "{}: `keys` must be an object; fix or remove the file",
                path.display()
            )));
        };
        keys.insert(name, Value::String(key.to_owned()));
        write_json(fs, &path, &Value::Object(file), true).await
    }

    /// Removes the stored key of `provider` at `base_url` (and the one
    /// under the provider's name) from `credentials.json`; whether there
    /// was one. A key in the environment is not Riot's to remove.
    pub async fn forget_api_key(
        &self,
        provider: &str,
        base_url: Option<&str>,
    ) -> Result<bool, KernelError> {
        let name = key_name(provider, base_url)?;
        let path = self.credentials_path();
        let mut file = self.json_object(&path).await?;
        let Some(Value::Object(keys)) = file.get_mut("keys") else {
            return Ok(false);
        };
        let mut removed = keys.remove(&name).is_some();
        removed |= keys.remove(provider).is_some();
        if removed {
            write_json(
                self.capabilities().fs.as_ref(),
                &path,
                &Value::Object(file),
                true,
            )
            .await?;
        }
        Ok(removed)
    }

    async fn read_text(&self, path: &Path) -> Option<String> {
        let bytes = self.capabilities().fs.read(path).await.ok()?;
        String::from_utf8(bytes).ok()
    }

    /// A JSON object file's content; empty when it does not exist.
    async fn json_object(&self, path: &Path) -> Result<Map<String, Value>, KernelError> {
        match self.capabilities().fs.read(path).await {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err(KernelError::BadFile(format!(
                    "{}: not a JSON object; fix or remove it, then save again",
                    path.display()
                ))),
                // Not the parser's message: it may quote the file's content.
                Err(e) => Err(KernelError::BadFile(format!(
                    "{}:{}: invalid JSON; fix or remove it, then save again",
                    path.display(),
                    e.line()
                ))),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
            Err(e) => Err(KernelError::io(path.display().to_string())(e)),
        }
    }
}

/// The `credentials.json` entry of an endpoint: its base URL, or the
/// provider's name for its default endpoint.
fn key_name(provider: &str, base_url: Option<&str>) -> Result<String, KernelError> {
    let kind = ProviderKind::from_name(provider).ok_or_else(|| {
        KernelError::Input(format!(
            "unknown provider `{provider}`: use anthropic, openai or openai-responses"
        ))
    })?;
    Ok(match base_url.map(|u| u.trim().trim_end_matches('/')) {
        Some(url) if !url.is_empty() && url != kind.default_base_url().trim_end_matches('/') => {
            url.to_owned()
        }
        _ => kind.name().to_owned(),
    })
}

async fn write_json(
    fs: &dyn riot_protocol::FileSystem,
    path: &Path,
    value: &Value,
    private: bool,
) -> Result<(), KernelError> {
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| KernelError::Failed(e.to_string()))?;
    text.push('\n');
    let written = if private {
        fs.write_atomic_private(path, text.as_bytes()).await
    } else {
        fs.write_atomic(path, text.as_bytes()).await
    };
    written.map_err(KernelError::io(format!("cannot write {}", path.display())))
}
