//! Applying one settings file's keys onto the [`Config`]: which keys a
//! file may hold, which wait for trust, and how each group of keys is
//! read and checked.

use serde_json::Value;

use super::{
    BrowserSettingError, Config, ConfigError, ConfigSource, EnvLayer, EnvVar, Format, Layer,
    SettingsFile, Sourced, USER_SETTINGS, WebSearchError, browser_options, checkpoints, claude,
    notifications, rules, sandbox, web_search,
};

/// Why the value of one setting cannot be used (in
/// [`ConfigError::BadSetting`], after the key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// `web_search`.
    #[error(transparent)]
    WebSearch(#[from] WebSearchError),
    /// `browser`.
    #[error(transparent)]
    Browser(#[from] BrowserSettingError),
    /// `diagnostics`, as written.
    #[error(transparent)]
    Checks(#[from] riot_protocol::ChecksSettingError),
    /// A `diagnostics` check whose regular expression the Diagnostics
    /// tool refuses: `problem` is the tool's reason.
    #[error("pattern for `{check}` {problem}")]
    Pattern { check: String, problem: String },
    /// `lsp`.
    #[error(transparent)]
    Lsp(#[from] riot_protocol::LspSettingError),
}

/// Keys a project file may not set until the project is trusted.
const TRUST_GATED: &[&str] = &[
    "provider",
    "base_url",
    "api_key_env",
    "model",
    "fallback_model",
    "small_model",
    "web_search",
    "env",
    "diagnostics",
    "lsp",
    "browser",
];

/// The keys of Riot's own settings files.
const KNOWN_KEYS: &[&str] = &[
    "provider",
    "base_url",
    "model",
    "api_key_env",
    "models",
    "fallback_model",
    "small_model",
    "web_search",
    "checkpoints",
    "notifications",
    "context_window",
    "max_output_tokens",
    "stream_idle_timeout_ms",
    "permissions",
    "unattended_confirmed",
    "diagnostics",
    "lsp",
    "browser",
    "env",
    "hooks",
    "sandbox",
    "$schema",
];

/// One settings file being applied: where its values come from and how
/// far it is trusted.
struct FileLayer<'a> {
    file: &'a SettingsFile,
    /// The source its values are recorded with.
    from: ConfigSource,
    /// Whether it is a project's file (not the person's own).
    project: bool,
    /// Whether it is a project's file the person has not trusted.
    untrusted: bool,
}

impl FileLayer<'_> {
    /// The error for a key of this file whose value is wrong.
    fn bad(&self, key: &str, problem: &str) -> ConfigError {
        ConfigError::BadValue {
            path: self.file.path.clone(),
            key: key.to_owned(),
            problem: problem.to_owned(),
        }
    }

    /// The error for a setting of this file whose value is wrong.
    fn bad_setting(&self, key: &str, source: impl Into<SettingError>) -> ConfigError {
        ConfigError::BadSetting {
            path: self.file.path.clone(),
            key: key.to_owned(),
            source: source.into(),
        }
    }

    /// Records that `key` was ignored because the project is not trusted.
    fn ignore(&self, key: &str, config: &mut Config) {
        config
            .ignored_untrusted
            .push(format!("{key} (from {})", self.file.path.display()));
    }

    /// The string value of `key`, if the file sets one.
    fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.file.json.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(key, "must be a string")),
        }
    }

    /// The non-negative integer value of `key`, if the file sets one.
    fn number(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.file.json.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.bad(key, "must be a non-negative integer")),
        }
    }
}

/// Applies one settings file's keys onto `config`, in the order the
/// layering promises; `trusted` says whether a project's file is trusted.
pub(super) fn apply_file(
    config: &mut Config,
    file: &SettingsFile,
    trusted: bool,
    env: &EnvLayer,
) -> Result<(), ConfigError> {
    let project = file.layer != Layer::User;
    let layer = FileLayer {
        file,
        from: file.layer.source(&file.path),
        project,
        untrusted: project && !trusted,
    };
    let claude = file.format == Format::ClaudeCode;
    note_unknown_keys(config, file, claude);
    // Claude Code's other keys (its model, API key helper, status line, …)
    // are its own: only `permissions`, `hooks` and `env` are read.
    if !claude {
        apply_provider_keys(config, &layer)?;
    }
    if file.json.contains_key("env") && layer.untrusted {
        layer.ignore("env", config);
    } else {
        apply_env_key(config, file, &layer.from)?;
    }
    // Hooks run commands: a project's hooks wait for trust (they are read
    // by the hooks loader in riot-extensions, which applies the same rule).
    if file.json.contains_key("hooks") && layer.untrusted {
        layer.ignore("hooks", config);
    }
    if !claude {
        apply_limit_keys(config, &layer)?;
        apply_unattended_confirmed(config, &layer)?;
        checkpoints::apply_settings(&mut config.checkpoints, file, project, &mut config.warnings)?;
        apply_service_keys(config, &layer)?;
        apply_models_key(config, &layer)?;
        apply_program_keys(config, &layer)?;
    }
    match file.json.get("permissions") {
        None | Some(Value::Null) => {}
        Some(Value::Object(perms)) => {
            rules::apply_permissions(config, file, perms, trusted, env)?;
        }
        Some(_) => return Err(layer.bad("permissions", "must be an object")),
    }
    Ok(())
}

/// Lists the file's keys Riot does not know (likely typos) and, in
/// Claude Code's files, the keys Riot does not use.
fn note_unknown_keys(config: &mut Config, file: &SettingsFile, claude: bool) {
    for key in file.json.keys() {
        if claude {
            if !claude::KNOWN_KEYS.contains(&key.as_str()) {
                config
                    .unused_keys
                    .push(format!("{key} (in {})", file.path.display()));
            }
        } else if !KNOWN_KEYS.contains(&key.as_str()) {
            config
                .unknown_keys
                .push(format!("{key} (in {})", file.path.display()));
        }
    }
}

/// The provider and model names (`provider`, `base_url`, `model`,
/// `api_key_env`, `fallback_model`, `small_model`); an untrusted
/// project's wait for trust.
fn apply_provider_keys(config: &mut Config, layer: &FileLayer<'_>) -> Result<(), ConfigError> {
    for (key, slot) in [
        ("provider", &mut config.provider),
        ("base_url", &mut config.base_url),
        ("model", &mut config.model),
        ("api_key_env", &mut config.api_key_env),
        ("fallback_model", &mut config.fallback_model),
        ("small_model", &mut config.small_model),
    ] {
        if let Some(value) = layer.string(key)? {
            if layer.untrusted && TRUST_GATED.contains(&key) {
                config
                    .ignored_untrusted
                    .push(format!("{key} (from {})", layer.file.path.display()));
                continue;
            }
            *slot = Some(Sourced {
                value,
                source: layer.from.clone(),
            });
        }
    }
    Ok(())
}

/// The token and time limits: `context_window`, `max_output_tokens`,
/// `stream_idle_timeout_ms`.
fn apply_limit_keys(config: &mut Config, layer: &FileLayer<'_>) -> Result<(), ConfigError> {
    if let Some(n) = layer.number("context_window")? {
        config.context_window = Some(Sourced {
            value: n,
            source: layer.from.clone(),
        });
    }
    if let Some(n) = layer.number("max_output_tokens")? {
        let n = u32::try_from(n).map_err(|_| layer.bad("max_output_tokens", "is too large"))?;
        config.max_output_tokens = Some(Sourced {
            value: n,
            source: layer.from.clone(),
        });
    }
    if let Some(n) = layer.number("stream_idle_timeout_ms")? {
        config.stream_idle_timeout_ms = Some(Sourced {
            value: n,
            source: layer.from.clone(),
        });
    }
    Ok(())
}

/// `unattended_confirmed`: taken from the person's own settings only; a
/// project's `true` is ignored with a warning.
fn apply_unattended_confirmed(
    config: &mut Config,
    layer: &FileLayer<'_>,
) -> Result<(), ConfigError> {
    if let Some(v) = layer.file.json.get("unattended_confirmed") {
        let Some(b) = v.as_bool() else {
            return Err(layer.bad("unattended_confirmed", "must be true or false"));
        };
        if !layer.project {
            config.unattended_confirmed = b;
        } else if b {
            config.warnings.push(format!(
                "{}: ignored \"unattended_confirmed\" — only your own settings ({USER_SETTINGS}) can confirm unattended mode, never a project's settings.",
                layer.file.path.display()
            ));
        }
    }
    Ok(())
}

/// The settings of services around the session: `web_search` (waiting
/// for trust in a project), `notifications`, `sandbox`.
fn apply_service_keys(config: &mut Config, layer: &FileLayer<'_>) -> Result<(), ConfigError> {
    let file = layer.file;
    match file.json.get("web_search") {
        None | Some(Value::Null) => {}
        Some(_) if layer.untrusted => layer.ignore("web_search", config),
        Some(value) => {
            config.web_search = Some(Sourced {
                value: web_search::web_search_setting(value)
                    .map_err(|problem| layer.bad_setting("web_search", problem))?,
                source: layer.from.clone(),
            });
        }
    }
    if let Some(value) = file.json.get("notifications").filter(|v| !v.is_null()) {
        notifications::apply(&mut config.notifications, value, &file.path, &layer.from)?;
    }
    if let Some(value) = file.json.get("sandbox").filter(|v| !v.is_null()) {
        sandbox::apply(
            &mut config.sandbox,
            value,
            &file.path,
            &layer.from,
            layer.project,
            &mut config.warnings,
        )?;
    }
    Ok(())
}

/// `models`: per-model overrides keyed by a glob on the model name.
fn apply_models_key(config: &mut Config, layer: &FileLayer<'_>) -> Result<(), ConfigError> {
    match layer.file.json.get("models") {
        None | Some(Value::Null) => {}
        Some(Value::Object(models)) => {
            for (glob, value) in models {
                if !value.is_object() {
                    return Err(layer.bad(&format!("models.{glob}"), "must be an object"));
                }
                config.models.insert(
                    glob.clone(),
                    Sourced {
                        value: value.clone(),
                        source: layer.from.clone(),
                    },
                );
            }
        }
        Some(_) => {
            return Err(layer.bad("models", "must be an object keyed by model-name glob"));
        }
    }
    Ok(())
}

/// The keys that run programs (`diagnostics`, `lsp`, `browser`), each
/// checked when read.
fn apply_program_keys(config: &mut Config, layer: &FileLayer<'_>) -> Result<(), ConfigError> {
    // These run programs: a project's wait for trust.
    for (key, slot, check) in [
        (
            "diagnostics",
            &mut config.diagnostics,
            check_diagnostics as fn(&Value) -> Result<(), SettingError>,
        ),
        ("lsp", &mut config.lsp, check_lsp),
        ("browser", &mut config.browser, |v| {
            browser_options(v).map(|_| ()).map_err(SettingError::from)
        }),
    ] {
        match layer.file.json.get(key) {
            None | Some(Value::Null) => {}
            Some(_) if layer.untrusted => config
                .ignored_untrusted
                .push(format!("{key} (from {})", layer.file.path.display())),
            Some(value) => {
                check(value).map_err(|problem| layer.bad_setting(key, problem))?;
                *slot = Some(Sourced {
                    value: value.clone(),
                    source: layer.from.clone(),
                });
            }
        }
    }
    Ok(())
}

fn check_diagnostics(value: &Value) -> Result<(), SettingError> {
    for check in riot_protocol::DiagnosticCheck::parse_setting(value)? {
        if let riot_protocol::CheckFormat::Regex(pattern) = &check.format {
            riot_tools::tools::diagnostics::check_pattern(pattern).map_err(|problem| {
                SettingError::Pattern {
                    check: check.display(),
                    problem: problem.to_string(),
                }
            })?;
        }
    }
    Ok(())
}

fn check_lsp(value: &Value) -> Result<(), SettingError> {
    riot_protocol::LspSettings::parse_setting(value)
        .map(|_| ())
        .map_err(SettingError::from)
}

/// The `env` key: variables for the commands Riot runs. A later file's
/// value of a variable replaces an earlier one's.
fn apply_env_key(
    config: &mut Config,
    file: &SettingsFile,
    from: &ConfigSource,
) -> Result<(), ConfigError> {
    let bad = |key: String, problem: &str| ConfigError::BadValue {
        path: file.path.clone(),
        key,
        problem: problem.to_owned(),
    };
    let vars = match file.json.get("env") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(vars)) => vars,
        Some(_) => {
            return Err(bad(
                "env".into(),
                "must be an object of variable names and string values",
            ));
        }
    };
    for (name, value) in vars {
        let key = format!("env.{name}");
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(bad(key, "is not a variable name"));
        }
        let value = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(bad(key, "must be a string")),
        };
        if value.contains('\0') {
            return Err(bad(key, "must not contain a NUL character"));
        }
        config.env.insert(
            name.clone(),
            EnvVar {
                value,
                source: from.clone(),
            },
        );
    }
    Ok(())
}
