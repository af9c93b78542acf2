//! # riot-config — what the person and the project asked for, as plain data
//!
//! Settings files, the environment and command-line flags layered into one
//! [`Config`]; the credentials file ([`credentials`]); the list of trusted
//! directories ([`trust`]). Every crate above reads these values; none of
//! them is changed after a session opens, and nothing here runs a process
//! or talks to a model.
//!
//! Configuration layering (docs/interfaces.md "Files", docs/design.md §13):
//! defaults → user settings → project settings → local settings →
//! environment → command-line flags. Every effective value remembers the
//! layer it came from, for `riot config show`.
//!
//! A project has up to four settings files, read in this order (a later one
//! wins key by key; rule lists are merged): Claude Code's
//! `.claude/settings.json` and `.claude/settings.local.json`, then Riot's
//! own `.riot/settings.json` and `.riot/settings.local.json`
//! ([`settings_locations`]). Claude Code's files are read in their own
//! format ([`Format::ClaudeCode`], [`claude`]): `permissions` (`allow`,
//! `ask`, `deny`, `defaultMode`, `additionalDirectories`), `hooks` and
//! `env`; their other keys are Claude Code's own and only listed by `riot
//! config show`.
//!
//! Project files are untrusted until the person trusts the directory: until
//! then the keys that widen what Riot may do or where it sends data, and
//! hooks, are ignored, with a notice; deny and ask rules always apply (they
//! only narrow).
//!
//! Some choices belong to the person alone, trusted project or not: a
//! project file (`.riot/` or `.claude/`) never sets `bypass`, `unattended`
//! or `auto` as the default mode, nor `unattended_confirmed`, nor an extra
//! directory that holds the project or the home directory. Such values are
//! ignored with a warning naming the file ([`Config::warnings`]); only the
//! user's own settings, the `--permission-mode` flag and
//! `$RIOT_PERMISSION_MODE` can choose those modes (unattended: only the
//! user's settings, see [`layer`]).

pub mod checkpoints;
pub mod child_env;
pub mod claude;
pub mod credentials;
mod file_keys;
pub mod notifications;
mod rules;
pub mod trust;
mod web_search;
pub use file_keys::SettingError;
pub use web_search::{SearchProvider, WebSearchError, WebSearchSetting};
pub mod sandbox;
mod settings_files;
pub use settings_files::{
    Format, Layer, SettingsFile, claude_dir, parse_settings, parse_settings_as, read_settings,
    settings_locations,
};

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use riot_protocol::{PermissionMode, RuleBehavior, RulePattern, RuleSource};
use riot_providers::ProviderKind;
use serde::Serialize;
use serde_json::{Map, Value};

use file_keys::apply_file;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", rename_all = "snake_case")]
pub enum ConfigSource {
    Default,
    User {
        path: PathBuf,
    },
    Project {
        path: PathBuf,
    },
    Local {
        path: PathBuf,
    },
    Env {
        var: String,
    },
    Flag {
        flag: String,
    },
    /// Nothing named a provider and `var` (`ANTHROPIC_API_KEY` or
    /// `OPENAI_API_KEY`) was the only key variable set: `provider` and its
    /// default model are used (docs/interfaces.md).
    KeyDefault {
        var: String,
        provider: String,
    },
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::Default => f.write_str("default"),
            ConfigSource::User { path }
            | ConfigSource::Project { path }
            | ConfigSource::Local { path } => write!(f, "{}", path.display()),
            ConfigSource::Env { var } => write!(f, "${var}"),
            ConfigSource::Flag { flag } => write!(f, "{flag}"),
            ConfigSource::KeyDefault { var, provider } => {
                write!(f, "default for {provider}, from {var}")
            }
        }
    }
}

/// A value and its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: ConfigSource,
}

/// A permission rule as configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfiguredRule {
    /// The rule as Riot reads it.
    pub rule: String,
    pub behavior: RuleBehavior,
    pub source: RuleSource,
    pub from: ConfigSource,
    /// The rule as written, when Riot reads it differently: a Claude Code
    /// rule carried over to Riot's syntax (`Read(/src/**)` is
    /// `Read(./src/**)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

/// A variable of the settings' `env`. Its value is never printed (`env`
/// often holds tokens): `riot config show` names the variable and its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    #[serde(skip)]
    pub value: String,
    pub source: ConfigSource,
}

/// The effective configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Config {
    pub provider: Option<Sourced<String>>,
    pub base_url: Option<Sourced<String>>,
    pub model: Option<Sourced<String>>,
    pub api_key_env: Option<Sourced<String>>,
    pub fallback_model: Option<Sourced<String>>,
    /// The model WebFetch's `prompt` asks (docs/web.md); the session's
    /// model when unset.
    pub small_model: Option<Sourced<String>>,
    /// The `diagnostics` setting (docs/diagnostics.md), checked when read;
    /// a later file replaces an earlier one's.
    pub diagnostics: Option<Sourced<Value>>,
    /// The `lsp` setting (docs/diagnostics.md), checked when read; a
    /// later file replaces an earlier one's.
    pub lsp: Option<Sourced<Value>>,
    /// The `browser` setting (docs/browser.md): `executable` and
    /// `headless`, checked when read; a later file replaces an earlier one's.
    pub browser: Option<Sourced<Value>>,
    /// WebSearch's backend (docs/web.md): `web_search` in settings, or
    /// `RIOT_SEARXNG_URL`.
    pub web_search: Option<Sourced<WebSearchSetting>>,
    /// Checkpoints and their retention (`checkpoints`, docs/rewind.md):
    /// the person's own settings only.
    pub checkpoints: checkpoints::CheckpointSettings,
    /// How faces get the person's attention (`notifications`): the
    /// terminal UI's bell and title, the desktop's notifications.
    pub notifications: notifications::Notifications,
    pub context_window: Option<Sourced<u64>>,
    pub max_output_tokens: Option<Sourced<u32>>,
    pub stream_idle_timeout_ms: Option<Sourced<u64>>,
    pub default_mode: Option<Sourced<PermissionMode>>,
    pub unattended_confirmed: bool,
    /// Per-model overrides keyed by a glob on the model name.
    pub models: BTreeMap<String, Sourced<Value>>,
    pub rules: Vec<ConfiguredRule>,
    /// Variables set for the commands Riot runs (tools, hooks, MCP
    /// servers), by name ([`Config::tool_env`]).
    pub env: BTreeMap<String, EnvVar>,
    /// Directories outside the project that count as the project when the
    /// mode decides about an edit (`additionalDirectories`): absolute,
    /// merged from every layer.
    pub additional_directories: Vec<Sourced<PathBuf>>,
    /// What was ignored because the project is not trusted.
    pub ignored_untrusted: Vec<String>,
    /// Unknown keys seen in settings files (likely typos).
    pub unknown_keys: Vec<String>,
    /// Claude Code settings Riot does not use, each naming its file.
    pub unused_keys: Vec<String>,
    /// Settings ignored whatever the trust, each naming its file and why:
    /// shown to the person (session notices, `riot config show`).
    pub warnings: Vec<String>,
    /// The OS sandbox (`sandbox` in settings, docs/sandbox.md).
    pub sandbox: sandbox::SandboxSettings,
}

/// A settings file that cannot be used. Says which file and which line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}:{line}:{column}: invalid JSON: {reason}. Fix the file or move it aside.")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{path}: `{key}` {problem}")]
    BadValue {
        path: PathBuf,
        key: String,
        problem: String,
    },
    /// A key whose value cannot be used, with why (the `web_search`,
    /// `browser`, `diagnostics` and `lsp` settings).
    #[error("{path}: `{key}` {source}")]
    BadSetting {
        path: PathBuf,
        key: String,
        #[source]
        source: SettingError,
    },
    #[error("{path}: cannot read: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("${var}: {problem}")]
    BadEnv { var: String, problem: String },
    #[error("{0}")]
    Usage(String),
}

/// Values from the environment (`RIOT_*`), read by the face and passed in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvLayer {
    pub vars: BTreeMap<String, String>,
}

/// Values from command-line flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagLayer {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub permission_mode: Option<PermissionMode>,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    /// `--system-prompt`: replaces Riot's own instructions in a new
    /// session's system prompt.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`: ends a new session's system prompt.
    pub append_system_prompt: Option<String>,
}

/// Modes only the person's own settings, flags or environment may choose:
/// they let calls through without asking. A project's files never can, even
/// trusted — trusting a repository is not handing it the keys.
const PERSONAL_MODES: &[PermissionMode] = &[
    PermissionMode::Bypass,
    PermissionMode::Unattended,
    PermissionMode::Auto,
];

/// Where the person's own settings live, as warnings name it.
const USER_SETTINGS: &str = "settings.json in Riot's home";

/// The `browser` setting as the browser host takes it:
/// `{"executable": "/path/to/chromium", "headless": false}`, both optional.
pub fn browser_options(
    value: &Value,
) -> Result<riot_protocol::BrowserOptions, BrowserSettingError> {
    let Value::Object(map) = value else {
        return Err(BrowserSettingError::NotObject);
    };
    let mut options = riot_protocol::BrowserOptions::default();
    for (key, v) in map {
        match (key.as_str(), v) {
            ("executable", Value::String(path)) if std::path::Path::new(path).is_absolute() => {
                options.executable = Some(path.into());
            }
            ("executable", _) => return Err(BrowserSettingError::BadExecutable),
            ("headless", Value::Bool(b)) => options.headless = *b,
            ("headless", _) => return Err(BrowserSettingError::BadHeadless),
            (other, _) => {
                return Err(BrowserSettingError::UnknownKey {
                    key: other.to_owned(),
                });
            }
        }
    }
    Ok(options)
}

/// Why the `browser` setting cannot be used. The message completes a
/// sentence that starts with the key (`browser …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserSettingError {
    /// The setting is not a JSON object.
    #[error("must be an object such as {{\"headless\": false}}")]
    NotObject,
    /// `executable` is not an absolute path.
    #[error("`executable` must be the absolute path of a Chromium")]
    BadExecutable,
    /// `headless` is not a boolean.
    #[error("`headless` must be true or false")]
    BadHeadless,
    /// A key other than `executable` and `headless`.
    #[error("has no key `{key}` (known: executable, headless)")]
    UnknownKey { key: String },
}

/// Layers the files (in order user, project, local), then environment and
/// flags. `trusted` says whether the project's files are trusted.
pub fn layer(
    files: &[SettingsFile],
    env: &EnvLayer,
    flags: &FlagLayer,
    trusted: bool,
) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    for file in files {
        apply_file(&mut config, file, trusted, env)?;
    }
    apply_env(&mut config, env)?;
    apply_flags(&mut config, flags);
    infer_from_key(&mut config, env);
    if let Some(mode) = &config.default_mode
        && mode.value == PermissionMode::Unattended
    {
        // Project layers never get here (`apply_file` ignores them).
        if !matches!(mode.source, ConfigSource::User { .. }) {
            return Err(ConfigError::Usage(format!(
                "unattended mode can only be set in your own settings file ({USER_SETTINGS}) with \"unattended_confirmed\": true (it came from {})",
                mode.source
            )));
        }
        if !config.unattended_confirmed {
            return Err(ConfigError::Usage(format!(
                "{} sets unattended mode without \"unattended_confirmed\": true; add it to confirm that safety findings may pass",
                mode.source
            )));
        }
    }
    Ok(config)
}

fn apply_env(config: &mut Config, env: &EnvLayer) -> Result<(), ConfigError> {
    sandbox::apply_env(&mut config.sandbox, &env.vars)?;
    let src = |var: &str| ConfigSource::Env {
        var: var.to_owned(),
    };
    for (var, slot) in [
        ("RIOT_PROVIDER", &mut config.provider),
        ("RIOT_BASE_URL", &mut config.base_url),
        ("RIOT_MODEL", &mut config.model),
    ] {
        if let Some(v) = env.vars.get(var).filter(|v| !v.is_empty()) {
            *slot = Some(Sourced {
                value: v.clone(),
                source: src(var),
            });
        }
    }
    if let Some(v) = env
        .vars
        .get("RIOT_PERMISSION_MODE")
        .filter(|v| !v.is_empty())
    {
        let mode: PermissionMode = v.parse().map_err(
            |e: riot_protocol::permission::UnknownMode| ConfigError::BadEnv {
                var: "RIOT_PERMISSION_MODE".into(),
                problem: e.to_string(),
            },
        )?;
        config.default_mode = Some(Sourced {
            value: mode,
            source: src("RIOT_PERMISSION_MODE"),
        });
    }
    if let Some(v) = env
        .vars
        .get("RIOT_STREAM_IDLE_TIMEOUT_MS")
        .filter(|v| !v.is_empty())
    {
        let ms: u64 = v.parse().map_err(|_| ConfigError::BadEnv {
            var: "RIOT_STREAM_IDLE_TIMEOUT_MS".into(),
            problem: format!("`{v}` is not a number of milliseconds"),
        })?;
        config.stream_idle_timeout_ms = Some(Sourced {
            value: ms,
            source: src("RIOT_STREAM_IDLE_TIMEOUT_MS"),
        });
    }
    if let Some(v) = env.vars.get("RIOT_SEARXNG_URL").filter(|v| !v.is_empty()) {
        config.web_search = Some(Sourced {
            value: web_search::web_search_setting(
                &serde_json::json!({"provider": "searxng", "url": v}),
            )
            .map_err(|problem| ConfigError::BadEnv {
                var: "RIOT_SEARXNG_URL".into(),
                problem: match problem {
                    // The setting's words, said of the variable's value.
                    WebSearchError::BadUrl => format!("`{v}` is not an http:// or https:// URL"),
                    other => format!("`{v}` {other}"),
                },
            })?,
            source: src("RIOT_SEARXNG_URL"),
        });
    }
    Ok(())
}

fn apply_flags(config: &mut Config, flags: &FlagLayer) {
    let src = |flag: &str| ConfigSource::Flag {
        flag: flag.to_owned(),
    };
    for (flag, value, slot) in [
        ("--provider", &flags.provider, &mut config.provider),
        ("--base-url", &flags.base_url, &mut config.base_url),
        ("--model", &flags.model, &mut config.model),
        ("--api-key-env", &flags.api_key_env, &mut config.api_key_env),
    ] {
        if let Some(v) = value {
            *slot = Some(Sourced {
                value: v.clone(),
                source: src(flag),
            });
        }
    }
    if let Some(mode) = flags.permission_mode {
        config.default_mode = Some(Sourced {
            value: mode,
            source: src("--permission-mode"),
        });
    }
    for (flag, rules, behavior) in [
        ("--deny", &flags.deny, RuleBehavior::Deny),
        ("--ask", &flags.ask, RuleBehavior::Ask),
        ("--allow", &flags.allow, RuleBehavior::Allow),
    ] {
        for rule in rules {
            config.rules.push(ConfiguredRule {
                rule: rule.clone(),
                behavior,
                source: RuleSource::CliFlag,
                from: src(flag),
                written: None,
            });
        }
    }
}

/// The key variables that choose a provider when nothing else does.
pub const KEY_VARIABLES: [(&str, ProviderKind); 2] = [
    ("ANTHROPIC_API_KEY", ProviderKind::Anthropic),
    ("OPENAI_API_KEY", ProviderKind::OpenAiChat),
];

/// The key variables of [`KEY_VARIABLES`] that are set (non-empty).
pub fn keys_set(env: &BTreeMap<String, String>) -> Vec<(&'static str, ProviderKind)> {
    KEY_VARIABLES
        .into_iter()
        .filter(|(var, _)| env.get(*var).is_some_and(|v| !v.trim().is_empty()))
        .collect()
}

/// docs/interfaces.md: with no provider configured and exactly one of
/// `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` set, that provider is used with
/// the model table's default model for it (a configured model still wins).
/// Otherwise nothing is assumed.
fn infer_from_key(config: &mut Config, env: &EnvLayer) {
    if config.provider.is_some() {
        return;
    }
    let [(var, kind)] = keys_set(&env.vars)[..] else {
        return;
    };
    let source = ConfigSource::KeyDefault {
        var: var.to_owned(),
        provider: kind.name().to_owned(),
    };
    config.provider = Some(Sourced {
        value: kind.name().to_owned(),
        source: source.clone(),
    });
    if config.model.is_none() {
        config.model = Some(Sourced {
            value: kind.default_model().to_owned(),
            source,
        });
    }
}

impl Config {
    /// The one-line notice shown when project settings were ignored.
    pub fn trust_notice(&self) -> Option<String> {
        (!self.ignored_untrusted.is_empty()).then(|| {
            format!(
                "This project is not trusted, so Riot ignored: {}. Pass --trust-project once to trust it.",
                self.ignored_untrusted.join(", ")
            )
        })
    }

    /// How the configured endpoint is used where it differs from what was
    /// written (an anthropic base URL ending in `/v1`), for people.
    pub fn endpoint_notes(&self) -> Vec<String> {
        let (Some(provider), Some(base_url)) = (&self.provider, &self.base_url) else {
            return Vec::new();
        };
        let Some(kind) = ProviderKind::from_name(&provider.value) else {
            return Vec::new();
        };
        kind.normalize_base_url(&base_url.value)
            .note(kind)
            .into_iter()
            .collect()
    }

    /// The `env` variables to set for the commands Riot runs — tools,
    /// hooks and MCP servers — in name order. The process environment wins
    /// (as it does over settings everywhere in the layering): a variable it
    /// already has is not replaced. The model key variables are never set
    /// (they are removed from those commands' environment).
    pub fn tool_env(&self, process_env: &BTreeMap<String, String>) -> Vec<(String, String)> {
        let key_var = self.api_key_env.as_ref().map(|v| v.value.as_str());
        self.env
            .iter()
            .filter(|(name, _)| {
                !process_env.contains_key(*name)
                    && !KEY_VARIABLES.iter().any(|(var, _)| var == name)
                    && key_var != Some(name.as_str())
            })
            .map(|(name, var)| (name.clone(), var.value.clone()))
            .collect()
    }

    /// The extra directories that count as the project
    /// (`additionalDirectories`), absolute.
    pub fn additional_dirs(&self) -> Vec<PathBuf> {
        self.additional_directories
            .iter()
            .map(|d| d.value.clone())
            .collect()
    }

    /// The permission mode: configured, else `default`.
    pub fn mode(&self) -> PermissionMode {
        self.default_mode
            .as_ref()
            .map_or(PermissionMode::Default, |m| m.value)
    }
}

#[cfg(test)]
mod tests;
