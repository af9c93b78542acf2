//! The session's language-server settings and servers (docs/diagnostics.md);
//! the feedback after edits is riot-tools' `edit_feedback::LspHooks`, which the session's
//! stack wraps around its tool hooks.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use riot_protocol::{DiagnosticCheck, LanguageServers, LspSettings};

use crate::kernel::Kernel;
use riot_config::Config;

/// The `diagnostics.checks` setting (checked when the settings were read).
pub fn diagnostic_checks(config: &Config) -> Vec<DiagnosticCheck> {
    config
        .diagnostics
        .as_ref()
        .and_then(|s| DiagnosticCheck::parse_setting(&s.value).ok())
        .unwrap_or_default()
}

/// The `lsp` setting (checked when the settings were read).
pub fn lsp_settings(config: &Config) -> LspSettings {
    config
        .lsp
        .as_ref()
        .and_then(|s| LspSettings::parse_setting(&s.value).ok())
        .unwrap_or_default()
}

impl Kernel {
    /// A session's language servers in `cwd`, with the settings' `env`
    /// and without the model keys; `None` when the face gave the kernel
    /// none or the settings turn them off.
    pub(crate) fn language_servers(
        &self,
        config: &Config,
        cwd: &Path,
        env: &BTreeMap<String, String>,
        scrubbed: &[String],
    ) -> Option<Arc<dyn LanguageServers>> {
        let settings = lsp_settings(config);
        if settings.disabled {
            return None;
        }
        let host = self.language_server_host()?;
        Some(host.session(cwd, &settings, config.tool_env(env), scrubbed.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use riot_config::{EnvLayer, FlagLayer, Layer, layer};

    use super::*;

    fn settings(layer: Layer, path: &str, json: serde_json::Value) -> riot_config::SettingsFile {
        riot_config::parse_settings(Path::new(path), layer, &json.to_string()).unwrap()
    }

    fn no_env() -> EnvLayer {
        EnvLayer {
            vars: BTreeMap::new(),
        }
    }

    #[test]
    fn diagnostics_and_lsp_settings_are_checked_when_read_and_wait_for_trust_in_a_project() {
        let user = settings(
            Layer::User,
            "/h/settings.json",
            json!({"lsp": {"wait_ms": 300, "rust": false}}),
        );
        let project = settings(
            Layer::Project,
            "/p/.riot/settings.json",
            json!({
                "diagnostics": {"checks": [{"command": "make lint", "format": {"regex": "^(?P<file>[^:]+): (?P<message>.*)$"}}]},
                "lsp": {"python": {"command": ["evil-server"], "extensions": [".py"]}},
            }),
        );
        let untrusted = layer(
            &[user.clone(), project.clone()],
            &no_env(),
            &FlagLayer::default(),
            false,
        )
        .unwrap();
        assert_eq!(
            untrusted.diagnostics, None,
            "a project's checkers wait for trust"
        );
        assert_eq!(lsp_settings(&untrusted).wait_ms(), 300);
        assert_eq!(
            untrusted.ignored_untrusted,
            [
                "diagnostics (from /p/.riot/settings.json)",
                "lsp (from /p/.riot/settings.json)"
            ]
        );
        let trusted = layer(&[user, project], &no_env(), &FlagLayer::default(), true).unwrap();
        let checks = diagnostic_checks(&trusted);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].display(), "make lint");
        let lsp = lsp_settings(&trusted);
        assert!(
            lsp.servers.contains_key("python"),
            "a later file replaces `lsp` whole"
        );
        assert!(!lsp.servers.contains_key("rust"));

        let bad = settings(
            Layer::User,
            "/h/settings.json",
            json!({"diagnostics": {"checks": [{"command": "x", "format": {"regex": "(?P<file>.*)"}}]}}),
        );
        let err = layer(&[bad], &no_env(), &FlagLayer::default(), false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/h/settings.json: `diagnostics` pattern for `x` has no named group `message`: name the parts with (?P<file>…), (?P<line>…), (?P<col>…), (?P<severity>…), (?P<code>…), (?P<message>…)"
        );
    }
}
