//! Settings files: where they are looked for ([`settings_locations`]),
//! which layer and format each is ([`Layer`], [`Format`]), and reading and
//! parsing them into [`SettingsFile`]s.

use std::path::{Path, PathBuf};

use riot_protocol::{FileSystem, RuleSource};
use serde_json::{Map, Value};

use super::{ConfigError, ConfigSource};

/// One settings layer as read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsFile {
    pub path: PathBuf,
    pub layer: Layer,
    pub format: Format,
    pub json: Map<String, Value>,
}

/// Whose format a settings file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Riot's own keys (`default_mode`, snake_case).
    Riot,
    /// Claude Code's `.claude/settings*.json` ([`claude`](crate::claude)).
    ClaudeCode,
}

/// Which file layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    User,
    Project,
    Local,
}

impl Layer {
    pub(crate) fn source(self, path: &Path) -> ConfigSource {
        let path = path.to_path_buf();
        match self {
            Layer::User => ConfigSource::User { path },
            Layer::Project => ConfigSource::Project { path },
            Layer::Local => ConfigSource::Local { path },
        }
    }

    pub(crate) fn rule_source(self) -> RuleSource {
        match self {
            Layer::User => RuleSource::User,
            Layer::Project => RuleSource::Project,
            Layer::Local => RuleSource::Local,
        }
    }
}

/// Where settings files are read from, lowest precedence first: Claude
/// Code's user file (in `claude_dir`, see [`claude_dir`]) and the user's
/// own, then Claude Code's project files, then Riot's (docs/interfaces.md
/// "Files").
pub fn settings_locations(
    home: &Path,
    claude_dir: Option<&Path>,
    project_root: &Path,
) -> Vec<(PathBuf, Layer, Format)> {
    let mut locations: Vec<(PathBuf, Layer, Format)> = claude_dir
        .map(|dir| (dir.join("settings.json"), Layer::User, Format::ClaudeCode))
        .into_iter()
        .collect();
    locations.extend([
        (home.join("settings.json"), Layer::User, Format::Riot),
        (
            project_root.join(".claude/settings.json"),
            Layer::Project,
            Format::ClaudeCode,
        ),
        (
            project_root.join(".claude/settings.local.json"),
            Layer::Local,
            Format::ClaudeCode,
        ),
        (
            project_root.join(".riot/settings.json"),
            Layer::Project,
            Format::Riot,
        ),
        (
            project_root.join(".riot/settings.local.json"),
            Layer::Local,
            Format::Riot,
        ),
    ]);
    locations
}

/// Claude Code's own directory, whose `settings.json` is its user layer:
/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`; `None` without either.
pub fn claude_dir(env: &std::collections::BTreeMap<String, String>) -> Option<PathBuf> {
    if let Some(dir) = env.get("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    env.get("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(h).join(".claude"))
}

/// Reads the settings files of [`settings_locations`] that exist. One
/// that cannot be read or parsed is an error naming it.
pub async fn read_settings(
    fs: &dyn FileSystem,
    home: &Path,
    claude_dir: Option<&Path>,
    project_root: &Path,
) -> Result<Vec<SettingsFile>, ConfigError> {
    let mut files = Vec::new();
    for (path, layer, format) in settings_locations(home, claude_dir, project_root) {
        match fs.read(&path).await {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|_| ConfigError::Unreadable {
                    path: path.clone(),
                    reason: "not UTF-8 text".into(),
                })?;
                files.push(parse_settings_as(&path, layer, format, &text)?);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ConfigError::Unreadable {
                    path,
                    reason: e.to_string(),
                });
            }
        }
    }
    Ok(files)
}

/// Parses a settings file's text in Riot's format; the error names the line.
pub fn parse_settings(path: &Path, layer: Layer, text: &str) -> Result<SettingsFile, ConfigError> {
    parse_settings_as(path, layer, Format::Riot, text)
}

/// Parses a settings file's text; the error names the line.
pub fn parse_settings_as(
    path: &Path,
    layer: Layer,
    format: Format,
    text: &str,
) -> Result<SettingsFile, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        reason: e
            .to_string()
            .split(" at line")
            .next()
            .unwrap_or_default()
            .to_owned(),
    })?;
    let Value::Object(json) = value else {
        return Err(ConfigError::BadValue {
            path: path.to_path_buf(),
            key: "(top level)".into(),
            problem: "must be a JSON object".into(),
        });
    };
    Ok(SettingsFile {
        path: path.to_path_buf(),
        layer,
        format,
        json,
    })
}
