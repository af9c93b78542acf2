//! A session's OS sandbox (docs/design.md §9.4, docs/sandbox.md): the
//! policy built from the `sandbox` settings, the project, the home and the
//! rules denying reads, and what the machine's [`Sandbox`] capability
//! reports it enforces. The tool stack wraps the tools' process runner
//! with it; the permission chain lets it allow commands only when it is
//! enforced and `sandbox.auto_allow` is on.
//!
//! [`Sandbox`]: riot_protocol::Sandbox

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use riot_protocol::{RuleBehavior, RulePattern, SandboxMechanism, SandboxPolicy, SandboxStatus};
use serde::Serialize;

use crate::kernel::Kernel;
use crate::world::user_home;
use riot_config::{Config, ConfigSource};

/// The sandbox of a session in one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSandbox {
    /// Whether the settings turn it on (`sandbox.enabled`).
    pub enabled: bool,
    /// Whether an enforced sandbox allows commands unasked
    /// (`sandbox.auto_allow`).
    pub auto_allow: bool,
    pub policy: SandboxPolicy,
    /// What is enforced; not enforced when disabled, with that reason.
    pub status: SandboxStatus,
}

impl SessionSandbox {
    /// Whether commands run sandboxed.
    pub fn enforced(&self) -> bool {
        self.enabled && self.status.enforced
    }

    /// Whether Riot lets commands run unasked in the sandbox: it is
    /// enforced, `sandbox.auto_allow` is on, and the mechanism keeps what a
    /// rewind cannot restore (the project's `.git`) out of such a
    /// command's reach. Landlock alone cannot make anything below the
    /// writable project read-only, so there commands are asked about as
    /// without a sandbox.
    pub fn allows_unasked(&self) -> bool {
        self.enforced() && self.auto_allow && self.unasked_off().is_none()
    }

    /// Why an enforced sandbox with `sandbox.auto_allow` on still lets
    /// nothing run unasked; `None` when it does.
    pub fn unasked_off(&self) -> Option<&'static str> {
        (self.status.mechanism == SandboxMechanism::LandlockSeccomp).then_some(
            "Landlock alone cannot keep the project's `.git` read-only, so a command run unasked could destroy history a rewind cannot restore; commands are asked about as without a sandbox (install bubblewrap to run them unasked)",
        )
    }

    /// What every face shows about it, from the same status as `riot
    /// sandbox check`: "sandboxed (bubblewrap)", "sandboxed (Landlock)",
    /// or "not sandboxed: REASON".
    pub fn label(&self) -> String {
        if self.enforced() {
            let by = match self.status.mechanism {
                SandboxMechanism::LandlockSeccomp => "Landlock",
                _ => "bubblewrap",
            };
            format!("sandboxed ({by})")
        } else {
            format!(
                "not sandboxed: {}",
                self.status
                    .reason
                    .as_deref()
                    .unwrap_or("no reason was given")
            )
        }
    }

    /// The notice a session shows once when the sandbox is wanted but
    /// cannot be enforced.
    pub fn notice(&self) -> Option<String> {
        if self.enabled {
            self.status.notice()
        } else {
            None
        }
    }
}

impl Kernel {
    /// The sandbox a session in `cwd` gets with `config`.
    pub fn session_sandbox(
        &self,
        config: &Config,
        cwd: &Path,
        env: &BTreeMap<String, String>,
    ) -> SessionSandbox {
        let home = user_home(env);
        let settings = &config.sandbox;
        let policy = settings.policy(
            cwd,
            home.as_deref(),
            hidden_paths(config, cwd, home.as_deref()),
        );
        let enabled = settings.enabled();
        let status = if enabled {
            self.capabilities().sandbox.status(&policy)
        } else {
            let why = match settings.enabled.as_ref().map(|s| &s.source) {
                Some(ConfigSource::Env { var }) => {
                    format!("the sandbox is turned off (${var} is off); unset it to turn it on")
                }
                source => format!(
                    "the sandbox is turned off (\"sandbox\": {{\"enabled\": false}} in {}); remove that to turn it on",
                    source.map(ToString::to_string).unwrap_or_default()
                ),
            };
            SandboxStatus::not_enforced(why)
        };
        SessionSandbox {
            enabled,
            auto_allow: settings.auto_allow(),
            policy,
            status,
        }
    }
}

/// The paths deny rules on `Read` name exactly (`Read(./secrets/**)`,
/// `Read(~/.kube/**)`, `Read(//etc/shadow)`, a bare `Read(.env)` at the
/// project's top), hidden inside the sandbox. A pattern with wildcards
/// elsewhere cannot be turned into mounts; the permission rules still hold
/// for it.
pub fn hidden_paths(config: &Config, project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for rule in config
        .rules
        .iter()
        .filter(|r| r.behavior == RuleBehavior::Deny)
    {
        let Ok(pattern) = RulePattern::parse(&rule.rule) else {
            continue;
        };
        if pattern.tool != "Read" {
            continue;
        }
        let Some(content) = pattern.content.as_deref() else {
            continue;
        };
        let content = content.strip_suffix("/**").unwrap_or(content);
        if content.is_empty() || content.contains(['*', '?', '[', '{']) {
            continue;
        }
        let path = if let Some(rest) = content.strip_prefix("~/") {
            match home {
                Some(home) => home.join(rest),
                None => continue,
            }
        } else if let Some(rest) = content.strip_prefix("//") {
            Path::new("/").join(rest)
        } else if content.starts_with('/') {
            PathBuf::from(content)
        } else {
            project.join(content.strip_prefix("./").unwrap_or(content))
        };
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use riot_config::{ConfigSource, ConfiguredRule};
    use riot_protocol::RuleSource;

    fn deny(rule: &str) -> ConfiguredRule {
        ConfiguredRule {
            rule: rule.into(),
            behavior: RuleBehavior::Deny,
            source: RuleSource::User,
            from: ConfigSource::Default,
            written: None,
        }
    }

    #[test]
    fn exact_read_denials_become_hidden_paths() {
        let config = Config {
            rules: [
                "Read(./secrets/**)",
                "Read(~/.kube/**)",
                "Read(//etc/shadow)",
                "Read(.env)",
                "Read(./**/*.pem)",
                "Bash(curl *)",
                "Edit(./src/**)",
            ]
            .map(deny)
            .to_vec(),
            ..Config::default()
        };
        assert_eq!(
            hidden_paths(&config, Path::new("/p"), Some(Path::new("/home/me"))),
            ["/p/secrets", "/home/me/.kube", "/etc/shadow", "/p/.env"].map(PathBuf::from)
        );
    }
}
