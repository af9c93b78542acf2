//! API keys (docs/design.md §11, docs/interfaces.md): from the key variable, else
//! `<riot home>/credentials.json` (`{"keys": {"<provider or base URL>":
//! "…"}}`, mode 0600). A key is required unless the base URL's host is a
//! loopback address. Keys are never logged: [`Secret`] has no `Display` and
//! a redacting `Debug`.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

/// A key that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

/// Where a key came from (shown by `riot config show`, never the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env(String),
    CredentialsFile(String),
}

/// The outcome of looking for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyResolution {
    Found {
        key: Secret,
        source: KeySource,
    },
    /// No key, and none is needed (a loopback endpoint).
    NotNeeded,
}

/// No usable key; the message is the one-line fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("${var} is set but empty; put the API key in it (or unset it to use credentials.json)")]
    Empty { var: String },
    #[error("no API key: set ${var} (or pass --api-key-env VAR naming the variable that holds it)")]
    Missing { var: String },
    #[error("{path}: invalid credentials file: {reason}")]
    BadFile { path: String, reason: String },
}

#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

/// Finds the key for `provider` at `base_url`.
///
/// `var` is the key variable (`--api-key-env`, or the provider's default);
/// `lookup` reads the environment; `credentials` is the text of
/// `credentials.json` if it exists.
pub fn resolve_key(
    provider: &str,
    base_url: &str,
    var: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    credentials: Option<(&str, &str)>,
) -> Result<KeyResolution, KeyError> {
    match lookup(var) {
        Some(v) if !v.trim().is_empty() => {
            return Ok(KeyResolution::Found {
                key: Secret::new(v.trim()),
                source: KeySource::Env(var.to_owned()),
            });
        }
        Some(_) if !is_loopback(base_url) => {
            return Err(KeyError::Empty {
                var: var.to_owned(),
            });
        }
        _ => {}
    }
    if let Some((path, text)) = credentials {
        let file: CredentialsFile = serde_json::from_str(text).map_err(|e| KeyError::BadFile {
            path: path.to_owned(),
            // Not serde's message: it quotes the values it met, and a
            // value here may be a key.
            reason: format!(
                "line {}: expected {{\"keys\": {{\"<provider or base URL>\": \"<key>\"}}}}",
                e.line()
            ),
        })?;
        let trimmed = base_url.trim_end_matches('/');
        for name in [trimmed, provider] {
            if let Some(key) = file.keys.get(name).filter(|k| !k.is_empty()) {
                return Ok(KeyResolution::Found {
                    key: Secret::new(key.clone()),
                    source: KeySource::CredentialsFile(name.to_owned()),
                });
            }
        }
    }
    if is_loopback(base_url) {
        return Ok(KeyResolution::NotNeeded);
    }
    Err(KeyError::Missing {
        var: var.to_owned(),
    })
}

/// Whether the URL's host is a loopback address (`localhost`, `127.x.x.x`,
/// `::1`).
pub fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host == "::1"
        || host.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|p| p.parse::<u8>().is_ok())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080",
            "http://[::1]:9/v1",
            "https://user@127.1.2.3/x",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://127.0.0.1.evil.com/",
            "http://10.0.0.1/",
            "http://localhost.example/",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn env_key_wins_and_is_never_printed() {
        let got = resolve_key(
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            &env(&[("ANTHROPIC_API_KEY", "sk-ant-secret")]),
            None,
        )
        .unwrap();
        let KeyResolution::Found { key, source } = got else {
            panic!("key expected");
        };
        assert_eq!(key.expose(), "sk-ant-secret");
        assert_eq!(source, KeySource::Env("ANTHROPIC_API_KEY".into()));
        assert!(!format!("{key:?}").contains("secret"));
    }

    #[test]
    fn empty_and_missing_keys_say_how_to_fix_it() {
        let err = resolve_key(
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            &env(&[("OPENAI_API_KEY", "")]),
            None,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("$OPENAI_API_KEY is set but empty"),
            "{err}"
        );
        let err = resolve_key(
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            &env(&[]),
            None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("set $OPENAI_API_KEY"), "{err}");
    }

    #[test]
    fn a_bad_credentials_file_is_reported_without_quoting_its_content() {
        let err = resolve_key(
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            &|_| None,
            Some(("/h/credentials.json", r#"{"keys": "sk-secret-1"}"#)),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "/h/credentials.json: invalid credentials file: line 1: expected {\"keys\": {\"<provider or base URL>\": \"<key>\"}}"
        );
    }

    #[test]
    fn credentials_file_is_used_when_the_variable_is_unset() {
        let creds = r#"{"keys": {"http://10.1.1.1/v1": "by-url", "openai": "by-provider"}}"#;
        let by_url = resolve_key(
            "openai",
            "http://10.1.1.1/v1/",
            "OPENAI_API_KEY",
            &env(&[]),
            Some(("c.json", creds)),
        )
        .unwrap();
        assert!(matches!(by_url, KeyResolution::Found { ref key, .. } if key.expose() == "by-url"));
        let by_provider = resolve_key(
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            &env(&[]),
            Some(("c.json", creds)),
        )
        .unwrap();
        assert!(
            matches!(by_provider, KeyResolution::Found { ref key, .. } if key.expose() == "by-provider")
        );
    }

    #[test]
    fn a_loopback_endpoint_needs_no_key() {
        let got = resolve_key(
            "openai",
            "http://127.0.0.1:11434/v1",
            "OPENAI_API_KEY",
            &env(&[]),
            None,
        )
        .unwrap();
        assert_eq!(got, KeyResolution::NotNeeded);
    }
}
