//! The `sandbox` settings (docs/sandbox.md): `enabled`, `network`,
//! `writable`, `auto_allow`. A project's files may only narrow the
//! sandbox — turn it or its auto-allow off, keep the network off — never
//! widen it: `network: true` and `writable` paths from a project file are
//! ignored with a warning, trusted or not (trusting a repository is not
//! letting it choose what its commands may reach).

use std::path::{Path, PathBuf};

use riot_protocol::SandboxPolicy;
use serde::Serialize;
use serde_json::Value;

use super::{ConfigError, ConfigSource, Sourced};

/// The `sandbox` settings as layered; unset values take the defaults
/// (enabled, no network, nothing extra writable, auto-allow on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Sourced<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Sourced<bool>>,
    /// Extra writable paths as written (`~/` is the home, a relative path
    /// is in the project).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_allow: Option<Sourced<bool>>,
}

impl SandboxSettings {
    /// Whether commands should run sandboxed (default: yes).
    pub fn enabled(&self) -> bool {
        self.enabled.as_ref().is_none_or(|s| s.value)
    }

    /// Whether an enforced sandbox lets commands through unasked
    /// (default: yes).
    pub fn auto_allow(&self) -> bool {
        self.auto_allow.as_ref().is_none_or(|s| s.value)
    }

    /// The policy for `project`: the defaults, the network and the extra
    /// writable paths from here, and `hidden` (paths denied to reading).
    pub fn policy(
        &self,
        project: &Path,
        home: Option<&Path>,
        hidden: Vec<PathBuf>,
    ) -> SandboxPolicy {
        let mut policy = SandboxPolicy::for_project(project, home);
        policy.network = self.network.as_ref().is_some_and(|s| s.value);
        policy.writable = self
            .writable
            .iter()
            .filter_map(|w| resolve(&w.value, project, home))
            .collect();
        policy.hidden = hidden;
        policy
    }
}

fn resolve(written: &str, project: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if written == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = written.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let path = Path::new(written);
    Some(if path.is_absolute() {
        path.to_path_buf()
    } else {
        project.join(path)
    })
}

/// `RIOT_SANDBOX`: `on`/`off` (also `1`/`0`, `true`/`false`) sets
/// `enabled` for this run, over the files (the person's environment).
pub(super) fn apply_env(
    settings: &mut SandboxSettings,
    vars: &std::collections::BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    let Some(value) = vars.get("RIOT_SANDBOX").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let enabled = match value.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" => true,
        "off" | "0" | "false" => false,
        _ => {
            return Err(ConfigError::BadEnv {
                var: "RIOT_SANDBOX".into(),
                problem: format!(
                    "`{value}` is not on or off; use RIOT_SANDBOX=off to run commands unsandboxed"
                ),
            });
        }
    };
    settings.enabled = Some(Sourced {
        value: enabled,
        source: ConfigSource::Env {
            var: "RIOT_SANDBOX".into(),
        },
    });
    Ok(())
}

/// Applies a file's `sandbox` object. `project`: the file is a project's
/// (it may only narrow); `warnings` gets what was ignored.
pub(super) fn apply(
    settings: &mut SandboxSettings,
    value: &Value,
    path: &Path,
    from: &ConfigSource,
    project: bool,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    let bad = |key: &str, problem: &str| ConfigError::BadValue {
        path: path.to_path_buf(),
        key: format!("sandbox.{key}"),
        problem: problem.to_owned(),
    };
    let Value::Object(object) = value else {
        return Err(ConfigError::BadValue {
            path: path.to_path_buf(),
            key: "sandbox".into(),
            problem: "must be an object with enabled, network, writable and auto_allow".into(),
        });
    };
    fn sourced<T>(value: T, from: &ConfigSource) -> Sourced<T> {
        Sourced {
            value,
            source: from.clone(),
        }
    }
    for (key, value) in object {
        match key.as_str() {
            "enabled" | "network" | "auto_allow" => {
                let Some(b) = value.as_bool() else {
                    return Err(bad(key, "must be true or false"));
                };
                if project && b && key == "network" {
                    warnings.push(format!(
                        "{}: ignored \"sandbox.network\": true — only your own settings can let sandboxed commands use the network.",
                        path.display()
                    ));
                    continue;
                }
                let slot = match key.as_str() {
                    "enabled" => &mut settings.enabled,
                    "network" => &mut settings.network,
                    _ => &mut settings.auto_allow,
                };
                *slot = Some(sourced(b, from));
            }
            "writable" => {
                let Some(items) = value.as_array() else {
                    return Err(bad(key, "must be an array of paths"));
                };
                let mut paths = Vec::new();
                for item in items {
                    match item.as_str() {
                        Some(p) if !p.is_empty() => paths.push(p.to_owned()),
                        _ => return Err(bad(key, "must be an array of non-empty path strings")),
                    }
                }
                if project && !paths.is_empty() {
                    warnings.push(format!(
                        "{}: ignored \"sandbox.writable\" — only your own settings can make more paths writable to sandboxed commands.",
                        path.display()
                    ));
                    continue;
                }
                settings
                    .writable
                    .extend(paths.into_iter().map(|p| sourced(p, from)));
            }
            other => {
                return Err(bad(
                    other,
                    "is not a sandbox setting (enabled, network, writable, auto_allow)",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user() -> ConfigSource {
        ConfigSource::User {
            path: PathBuf::from("/home/me/.config/riot/settings.json"),
        }
    }

    #[test]
    fn the_defaults_are_on_without_network() {
        let settings = SandboxSettings::default();
        assert!(settings.enabled() && settings.auto_allow());
        let policy = settings.policy(Path::new("/p"), Some(Path::new("/home/me")), Vec::new());
        assert!(!policy.network);
        assert_eq!(policy.writable_paths(), [PathBuf::from("/p")]);
        assert!(policy.read_only.contains(&PathBuf::from("/p/.git/hooks")));
        assert!(
            policy
                .read_only
                .contains(&PathBuf::from("/home/me/.bashrc"))
        );
    }

    #[test]
    fn the_persons_settings_widen_and_resolve_paths() {
        let mut settings = SandboxSettings::default();
        let mut warnings = Vec::new();
        let value = json!({"enabled": true, "network": true, "auto_allow": false,
                           "writable": ["~/.cargo", "out", "/srv/cache"]});
        apply(
            &mut settings,
            &value,
            Path::new("/u.json"),
            &user(),
            false,
            &mut warnings,
        )
        .unwrap();
        assert!(warnings.is_empty());
        assert!(!settings.auto_allow());
        let policy = settings.policy(Path::new("/p"), Some(Path::new("/home/me")), Vec::new());
        assert!(policy.network);
        assert_eq!(
            policy.writable_paths(),
            ["/p", "/home/me/.cargo", "/p/out", "/srv/cache"].map(PathBuf::from)
        );
    }

    #[test]
    fn a_project_may_only_narrow() {
        let mut settings = SandboxSettings::default();
        let mut warnings = Vec::new();
        let from = ConfigSource::Project {
            path: PathBuf::from("/p/.riot/settings.json"),
        };
        let value = json!({"network": true, "writable": ["/"], "auto_allow": false});
        apply(
            &mut settings,
            &value,
            Path::new("/p/.riot/settings.json"),
            &from,
            true,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(
            warnings,
            [
                "/p/.riot/settings.json: ignored \"sandbox.network\": true — only your own settings can let sandboxed commands use the network.",
                "/p/.riot/settings.json: ignored \"sandbox.writable\" — only your own settings can make more paths writable to sandboxed commands."
            ]
        );
        assert!(settings.network.is_none() && settings.writable.is_empty());
        assert!(!settings.auto_allow());
        let value = json!({"enabled": false});
        apply(
            &mut settings,
            &value,
            Path::new("/p/.riot/settings.json"),
            &from,
            true,
            &mut warnings,
        )
        .unwrap();
        assert!(!settings.enabled());
    }

    #[test]
    fn riot_sandbox_turns_it_on_or_off_for_a_run() {
        let mut settings = SandboxSettings::default();
        let vars = |v: &str| [("RIOT_SANDBOX".to_owned(), v.to_owned())].into();
        apply_env(&mut settings, &vars("off")).unwrap();
        assert!(!settings.enabled());
        apply_env(&mut settings, &vars("1")).unwrap();
        assert!(settings.enabled());
        assert_eq!(
            apply_env(&mut settings, &vars("maybe"))
                .unwrap_err()
                .to_string(),
            "$RIOT_SANDBOX: `maybe` is not on or off; use RIOT_SANDBOX=off to run commands unsandboxed"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let mut settings = SandboxSettings::default();
        let mut warnings = Vec::new();
        for (value, message) in [
            (
                json!({"network": "yes"}),
                "/u.json: `sandbox.network` must be true or false",
            ),
            (
                json!({"writable": "/x"}),
                "/u.json: `sandbox.writable` must be an array of paths",
            ),
            (
                json!({"paths": []}),
                "/u.json: `sandbox.paths` is not a sandbox setting (enabled, network, writable, auto_allow)",
            ),
            (
                json!(true),
                "/u.json: `sandbox` must be an object with enabled, network, writable and auto_allow",
            ),
        ] {
            let err = apply(
                &mut settings,
                &value,
                Path::new("/u.json"),
                &user(),
                false,
                &mut warnings,
            )
            .unwrap_err();
            assert_eq!(err.to_string(), message);
        }
    }
}
