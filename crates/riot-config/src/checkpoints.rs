//! The `checkpoints` setting (docs/rewind.md): whether changes are
//! recorded and how long the store keeps them. Plain data, read here with
//! the rest of the settings; `checkpoints.rs` works by it.

use serde::Serialize;
use serde_json::Value;

use super::{ConfigError, SettingsFile};

/// The `checkpoints` settings (docs/rewind.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckpointSettings {
    /// `false`: nothing is recorded (rewind still rewinds conversations).
    pub enabled: bool,
    pub max_age_days: u64,
    pub max_bytes: u64,
    pub max_file_bytes: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        let store = riot_checkpoint::Settings::default();
        Self {
            enabled: true,
            max_age_days: store.max_age_days,
            max_bytes: store.max_bytes,
            max_file_bytes: store.max_file_bytes,
        }
    }
}

impl CheckpointSettings {
    /// The checkpoint store's own settings.
    pub fn store(self) -> riot_checkpoint::Settings {
        riot_checkpoint::Settings {
            max_file_bytes: self.max_file_bytes,
            max_age_days: self.max_age_days,
            max_bytes: self.max_bytes,
            ..riot_checkpoint::Settings::default()
        }
    }
}

/// Reads a settings file's `checkpoints` object into `settings` (later
/// files win, key by key). Only the person's own settings choose how
/// their work is kept: a project's is ignored with a warning.
pub(crate) fn apply_settings(
    settings: &mut CheckpointSettings,
    file: &SettingsFile,
    project: bool,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let Some(value) = file.json.get("checkpoints").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    if project {
        warnings.push(format!(
            "{}: ignored \"checkpoints\" — only your own settings (settings.json in Riot's home) decide how checkpoints are kept.",
            file.path.display()
        ));
        return Ok(());
    }
    let bad = |key: &str, problem: &str| ConfigError::BadValue {
        path: file.path.clone(),
        key: format!("checkpoints.{key}"),
        problem: problem.to_owned(),
    };
    let Value::Object(map) = value else {
        return Err(ConfigError::BadValue {
            path: file.path.clone(),
            key: "checkpoints".into(),
            problem: "must be an object such as {\"max_age_days\": 30}".into(),
        });
    };
    for (key, v) in map {
        let number = || {
            v.as_u64()
                .ok_or_else(|| bad(key, "must be a non-negative integer"))
        };
        match key.as_str() {
            "enabled" => {
                settings.enabled = v
                    .as_bool()
                    .ok_or_else(|| bad(key, "must be true or false"))?;
            }
            "max_age_days" => settings.max_age_days = number()?,
            "max_bytes" => settings.max_bytes = number()?,
            "max_file_bytes" => settings.max_file_bytes = number()?,
            _ => {
                return Err(bad(
                    key,
                    "is not a checkpoints setting (enabled, max_age_days, max_bytes, max_file_bytes)",
                ));
            }
        }
    }
    Ok(())
}
