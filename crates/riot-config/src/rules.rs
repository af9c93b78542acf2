//! The `permissions` key of a settings file — its rules, mode and the
//! directories the agent may also work in — read into the configuration.

#[allow(clippy::wildcard_imports)] // the rest of config.rs's reading, split by key
use super::*;

/// The `permissions` object, in the file's format: the rule lists, the
/// default mode and the extra directories.
pub(super) fn apply_permissions(
    config: &mut Config,
    file: &SettingsFile,
    perms: &Map<String, Value>,
    trusted: bool,
    env: &EnvLayer,
) -> Result<(), ConfigError> {
    let from = file.layer.source(&file.path);
    let project = file.layer != Layer::User;
    let untrusted = project && !trusted;
    let claude = file.format == Format::ClaudeCode;
    let path = file.path.display();
    let bad = |key: &str, problem: &str| ConfigError::BadValue {
        path: file.path.clone(),
        key: key.to_owned(),
        problem: problem.to_owned(),
    };
    let ignore = |key: &str, config: &mut Config| {
        config
            .ignored_untrusted
            .push(format!("{key} (from {path})"));
    };
    let (mode_key, dirs_key) = if claude {
        ("defaultMode", "additionalDirectories")
    } else {
        ("default_mode", "additional_directories")
    };
    if claude {
        for key in perms.keys() {
            if !claude::KNOWN_PERMISSION_KEYS.contains(&key.as_str()) {
                config
                    .unused_keys
                    .push(format!("permissions.{key} (in {path})"));
            }
        }
    }
    for (list, behavior) in [
        ("deny", RuleBehavior::Deny),
        ("ask", RuleBehavior::Ask),
        ("allow", RuleBehavior::Allow),
    ] {
        let key = format!("permissions.{list}");
        let rules = match perms.get(list) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(rules)) => rules,
            Some(_) => return Err(bad(&key, "must be a list of rule strings")),
        };
        if behavior == RuleBehavior::Allow && untrusted {
            if !rules.is_empty() {
                ignore(&key, config);
            }
            continue;
        }
        for rule in rules {
            let Some(text) = rule.as_str() else {
                return Err(bad(&key, "must be a list of rule strings"));
            };
            let read = if claude {
                match claude::read_rule(text) {
                    claude::RuleReading::Rules(rules) => rules,
                    claude::RuleReading::NotUnderstood(why) => {
                        config.warnings.push(format!(
                            "{path}: left out the {list} rule `{text}`, which Riot cannot read the way Claude Code does: {why}."
                        ));
                        continue;
                    }
                }
            } else {
                RulePattern::parse(text).map_err(|e| bad(&key, &e.to_string()))?;
                vec![text.to_owned()]
            };
            let written = (read.len() != 1 || read[0] != text).then(|| text.to_owned());
            for rule in read {
                config.rules.push(ConfiguredRule {
                    rule,
                    behavior,
                    source: file.layer.rule_source(),
                    from: from.clone(),
                    written: written.clone(),
                });
            }
        }
    }
    if let Some(value) = perms.get(mode_key) {
        let key = format!("permissions.{mode_key}");
        let Some(text) = value.as_str() else {
            return Err(bad(&key, "must be a string"));
        };
        let mode = if claude {
            let mode = claude::mode(text);
            if mode.is_none() {
                let names: Vec<&str> = claude::MODE_NAMES.iter().map(|(n, _)| *n).collect();
                config.warnings.push(format!(
                    "{path}: ignored \"{key}\": \"{text}\" — it is not one of Claude Code's modes Riot knows ({}).",
                    names.join(", ")
                ));
            }
            mode
        } else {
            Some(
                text.parse()
                    .map_err(|e: riot_protocol::permission::UnknownMode| {
                        bad(&key, &e.to_string())
                    })?,
            )
        };
        match mode {
            None => {}
            Some(mode) if project && PERSONAL_MODES.contains(&mode) => {
                let who = if mode == PermissionMode::Unattended {
                    format!(
                        "only your own settings ({USER_SETTINGS}, with \"unattended_confirmed\": true) can"
                    )
                } else {
                    format!(
                        "only your own settings ({USER_SETTINGS}), --permission-mode or $RIOT_PERMISSION_MODE can"
                    )
                };
                config.warnings.push(format!(
                    "{path}: ignored \"{key}\": \"{text}\" — project settings cannot choose {mode} mode, trusted or not; {who}."
                ));
            }
            Some(mode) if untrusted && mode != PermissionMode::Default => ignore(&key, config),
            Some(mode) => {
                config.default_mode = Some(Sourced {
                    value: mode,
                    source: from.clone(),
                });
            }
        }
    }
    apply_directories(config, file, perms, dirs_key, untrusted, env)
}

/// `additionalDirectories`: `~/…` in the home directory, a relative path
/// against the project (a project's file) — the user's own file names them
/// absolutely. A project cannot add a directory that holds the project or
/// the home directory: with accept-edits that would let edits anywhere
/// there through unasked.
pub(super) fn apply_directories(
    config: &mut Config,
    file: &SettingsFile,
    perms: &Map<String, Value>,
    key: &str,
    untrusted: bool,
    env: &EnvLayer,
) -> Result<(), ConfigError> {
    let path = file.path.display();
    let key = format!("permissions.{key}");
    let bad = |problem: &str| ConfigError::BadValue {
        path: file.path.clone(),
        key: key.clone(),
        problem: problem.to_owned(),
    };
    let dirs = match perms.get(key.trim_start_matches("permissions.")) {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(dirs)) => dirs,
        Some(_) => return Err(bad("must be a list of directories")),
    };
    if untrusted {
        if !dirs.is_empty() {
            config
                .ignored_untrusted
                .push(format!("{key} (from {path})"));
        }
        return Ok(());
    }
    let home = env
        .vars
        .get("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| riot_permissions::paths::normalize(Path::new(h)));
    // `<project>/.riot/settings.json` → `<project>`.
    let project_root = (file.layer != Layer::User)
        .then(|| file.path.parent().and_then(Path::parent))
        .flatten();
    for dir in dirs {
        let Some(text) = dir.as_str() else {
            return Err(bad("must be a list of directories"));
        };
        let resolved = if text == "~" || text.starts_with("~/") {
            match &home {
                Some(home) => home.join(text.trim_start_matches('~').trim_start_matches('/')),
                None => {
                    config.warnings.push(format!(
                        "{path}: ignored \"{key}\" entry \"{text}\" — $HOME is not set, so `~` means nothing."
                    ));
                    continue;
                }
            }
        } else if Path::new(text).is_absolute() {
            PathBuf::from(text)
        } else if let Some(root) = project_root {
            root.join(text)
        } else {
            config.warnings.push(format!(
                "{path}: ignored \"{key}\" entry \"{text}\" — in your own settings a directory must be absolute or start with ~/."
            ));
            continue;
        };
        let resolved = riot_permissions::paths::normalize(&resolved);
        if let Some(root) = project_root {
            let holds = |inner: &Path| inner.starts_with(&resolved) && inner != resolved;
            let held = if holds(root) {
                Some("the project")
            } else if home.as_deref().is_some_and(|h| h.starts_with(&resolved)) {
                Some("your home directory")
            } else {
                None
            };
            if let Some(what) = held {
                config.warnings.push(format!(
                    "{path}: ignored \"{key}\" entry \"{text}\" — {} holds {what}, and project settings cannot add such a directory, trusted or not; add it in your own settings ({USER_SETTINGS}) if you mean it.",
                    resolved.display()
                ));
                continue;
            }
        }
        if !config
            .additional_directories
            .iter()
            .any(|d| d.value == resolved)
        {
            config.additional_directories.push(Sourced {
                value: resolved,
                source: file.layer.source(&file.path),
            });
        }
    }
    Ok(())
}
