//! What a compiler, linter or language server says about the code
//! (docs/diagnostics.md): the [`Diagnostic`] the Diagnostics tool and the
//! language servers both report, the `diagnostics.checks` and `lsp`
//! settings, and the [`LanguageServers`] capability the kernel asks after
//! each edit (implemented by `riot-lsp`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How serious a diagnostic is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    /// The lowercase word (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One finding of a checker or language server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// The file, relative to the project when it is inside it.
    pub path: String,
    /// 1-based; 0 when the checker named no line.
    pub line: u64,
    /// 1-based; 0 when the checker named no column.
    pub column: u64,
    pub severity: Severity,
    /// The checker's code for it (`E0308`, `reportUndefinedVariable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// Who said it (`cargo`, `pyright`, a language server's name).
    pub source: String,
}

impl Diagnostic {
    /// `path:line:col: severity[code]: message` — one line, as the model
    /// and the command line see it.
    pub fn one_line(&self) -> String {
        let mut out = self.path.clone();
        if self.line > 0 {
            out.push_str(&format!(":{}", self.line));
            if self.column > 0 {
                out.push_str(&format!(":{}", self.column));
            }
        }
        out.push_str(": ");
        out.push_str(self.severity.as_str());
        if let Some(code) = &self.code {
            out.push_str(&format!("[{code}]"));
        }
        out.push_str(": ");
        out.push_str(&self.message.replace('\n', " "));
        out
    }
}

/// How a configured checker's output is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckFormat {
    /// `cargo check --message-format=json` (rustc's JSON messages).
    Cargo,
    /// `tsc --pretty false`: `file(line,col): error TS2304: message`.
    Tsc,
    /// `pyright --outputjson`.
    Pyright,
    /// `ruff check --output-format=json`.
    Ruff,
    /// `eslint --format json`.
    Eslint,
    /// `go vet`: `file:line:col: message`.
    GoVet,
    /// A regular expression over each output line with named groups
    /// `file`, `line`, `col`, `severity`, `code`, `message` (`file` and
    /// `message` required).
    Regex(String),
}

impl CheckFormat {
    /// The known formats by their settings name.
    pub const NAMES: &'static [&'static str] =
        &["cargo", "tsc", "pyright", "ruff", "eslint", "go_vet"];

    /// The format called `name` in settings.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "cargo" => CheckFormat::Cargo,
            "tsc" => CheckFormat::Tsc,
            "pyright" => CheckFormat::Pyright,
            "ruff" => CheckFormat::Ruff,
            "eslint" => CheckFormat::Eslint,
            "go_vet" => CheckFormat::GoVet,
            _ => return None,
        })
    }

    /// The settings name (`regex` for a pattern).
    pub fn name(&self) -> &'static str {
        match self {
            CheckFormat::Cargo => "cargo",
            CheckFormat::Tsc => "tsc",
            CheckFormat::Pyright => "pyright",
            CheckFormat::Ruff => "ruff",
            CheckFormat::Eslint => "eslint",
            CheckFormat::GoVet => "go_vet",
            CheckFormat::Regex(_) => "regex",
        }
    }
}

/// One checker: what to run in the project and how to read what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticCheck {
    /// Program and arguments (a settings string runs through `sh -c`).
    pub argv: Vec<String>,
    pub format: CheckFormat,
}

impl DiagnosticCheck {
    /// The command as people read it.
    pub fn display(&self) -> String {
        match self.argv.as_slice() {
            [sh, c, script] if sh == "sh" && c == "-c" => script.clone(),
            argv => argv.join(" "),
        }
    }

    /// The `diagnostics` setting: `{"checks": [{"command": "…" | ["…"],
    /// "format": "cargo" | … | {"regex": "…"}}]}`. The regular
    /// expression is checked by the Diagnostics tool, which compiles it.
    pub fn parse_setting(value: &Value) -> Result<Vec<DiagnosticCheck>, ChecksSettingError> {
        let Some(obj) = value.as_object() else {
            return Err(ChecksSettingError::NotObject);
        };
        if let Some(key) = obj.keys().find(|k| k.as_str() != "checks") {
            return Err(ChecksSettingError::UnknownKey { key: key.clone() });
        }
        let Some(checks) = obj.get("checks") else {
            return Ok(Vec::new());
        };
        let Some(checks) = checks.as_array() else {
            return Err(ChecksSettingError::NotList);
        };
        checks
            .iter()
            .enumerate()
            .map(|(index, c)| {
                Self::parse_one(c).map_err(|source| ChecksSettingError::Check { index, source })
            })
            .collect()
    }

    fn parse_one(value: &Value) -> Result<DiagnosticCheck, CheckError> {
        let Some(obj) = value.as_object() else {
            return Err(CheckError::NotObject);
        };
        if let Some(key) = obj
            .keys()
            .find(|k| !["command", "format"].contains(&k.as_str()))
        {
            return Err(CheckError::UnknownKey { key: key.clone() });
        }
        let argv = match obj.get("command") {
            Some(Value::String(s)) if !s.trim().is_empty() => {
                vec!["sh".to_owned(), "-c".to_owned(), s.clone()]
            }
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or(CheckError::CommandNotStrings)?,
            _ => return Err(CheckError::NoCommand),
        };
        let format = match obj.get("format") {
            Some(Value::String(name)) => CheckFormat::named(name)
                .ok_or_else(|| CheckError::UnknownFormat { name: name.clone() })?,
            Some(Value::Object(o)) => match (o.get("regex"), o.len()) {
                (Some(Value::String(re)), 1) => CheckFormat::Regex(re.clone()),
                _ => return Err(CheckError::BadFormatObject),
            },
            _ => return Err(CheckError::NoFormat),
        };
        Ok(DiagnosticCheck { argv, format })
    }
}

/// Why the `diagnostics` setting cannot be used. The message completes
/// a sentence that starts with the key (`diagnostics …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChecksSettingError {
    /// The setting is not a JSON object.
    #[error("must be an object like {{\"checks\": [...]}}")]
    NotObject,
    /// A key other than `checks`.
    #[error("has an unknown key `{key}` (only `checks`)")]
    UnknownKey { key: String },
    /// `checks` is not a list.
    #[error("`checks` must be a list of {{\"command\", \"format\"}}")]
    NotList,
    /// One entry of `checks` is wrong.
    #[error("checks[{index}] {source}")]
    Check {
        /// Its place in the list, from 0.
        index: usize,
        #[source]
        source: CheckError,
    },
}

/// What is wrong with one entry of `diagnostics.checks`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The entry is not a JSON object.
    #[error("must be an object with `command` and `format`")]
    NotObject,
    /// A key other than `command` and `format`.
    #[error("has an unknown key `{key}`")]
    UnknownKey { key: String },
    /// `command` is a list holding something other than strings.
    #[error("`command` must be a string or a list of strings")]
    CommandNotStrings,
    /// No usable `command`.
    #[error("needs a `command`: a string or a list of strings")]
    NoCommand,
    /// A `format` name Riot does not know.
    #[error(
        "has an unknown `format` `{name}`: use one of {names} or {{\"regex\": \"…\"}}",
        names = CheckFormat::NAMES.join(", ")
    )]
    UnknownFormat { name: String },
    /// A `format` object other than `{"regex": "…"}`.
    #[error("`format` object must be {{\"regex\": \"…\"}}")]
    BadFormatObject,
    /// No usable `format`.
    #[error(
        "needs a `format`: one of {names} or {{\"regex\": \"…\"}}",
        names = CheckFormat::NAMES.join(", ")
    )]
    NoFormat,
}

/// How long an edit waits for its file's diagnostics by default.
pub const DEFAULT_LSP_WAIT_MS: u64 = 1_500;

/// One language server from the `lsp` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspServerSetting {
    /// Program and arguments (`["pyright-langserver", "--stdio"]`).
    pub command: Vec<String>,
    /// File endings it serves, with the dot (`.py`).
    pub extensions: Vec<String>,
    /// `initialization_options`: sent as `initializationOptions` of
    /// `initialize`.
    pub initialization_options: Option<Value>,
    /// `settings`: the server's configuration, sent with
    /// `workspace/didChangeConfiguration` once it is initialized and given
    /// (by section) when it asks with `workspace/configuration`.
    pub settings: Option<Value>,
}

/// The `lsp` settings: servers by language (`None`: a default server
/// turned off with `false`), and how long an edit waits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LspSettings {
    pub servers: BTreeMap<String, Option<LspServerSetting>>,
    /// `wait_ms`; [`DEFAULT_LSP_WAIT_MS`] when unset.
    pub wait_ms: Option<u64>,
    /// `"enabled": false` turns every language server off.
    pub disabled: bool,
}

impl LspSettings {
    /// How long an edit waits for diagnostics.
    pub fn wait_ms(&self) -> u64 {
        self.wait_ms.unwrap_or(DEFAULT_LSP_WAIT_MS)
    }

    /// Reads the `lsp` setting: `{"wait_ms": 1500, "enabled": true,
    /// "python": {"command": [...], "extensions": [".py"]}, "rust": false}`.
    pub fn parse_setting(value: &Value) -> Result<LspSettings, LspSettingError> {
        let Some(obj) = value.as_object() else {
            return Err(LspSettingError::NotObject);
        };
        let mut out = LspSettings::default();
        for (key, v) in obj {
            match key.as_str() {
                "wait_ms" => {
                    out.wait_ms = Some(v.as_u64().ok_or(LspSettingError::BadWait)?);
                }
                "enabled" => out.disabled = !v.as_bool().ok_or(LspSettingError::BadEnabled)?,
                lang => {
                    let server = match v {
                        Value::Bool(false) | Value::Null => None,
                        Value::Object(o) => Some(Self::parse_server(lang, o)?),
                        _ => {
                            return Err(LspSettingError::BadServer {
                                lang: lang.to_owned(),
                            });
                        }
                    };
                    out.servers.insert(lang.to_owned(), server);
                }
            }
        }
        Ok(out)
    }

    fn parse_server(
        lang: &str,
        o: &serde_json::Map<String, Value>,
    ) -> Result<LspServerSetting, LspSettingError> {
        let strings = |key: &str| -> Option<Vec<String>> {
            let items = o.get(key)?.as_array()?;
            let list: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect();
            list.filter(|l| !l.is_empty())
        };
        if let Some(key) = o.keys().find(|k| {
            ![
                "command",
                "extensions",
                "initialization_options",
                "settings",
            ]
            .contains(&k.as_str())
        }) {
            return Err(LspSettingError::UnknownServerKey {
                lang: lang.to_owned(),
                key: key.clone(),
            });
        }
        let command = strings("command").ok_or_else(|| LspSettingError::BadCommand {
            lang: lang.to_owned(),
        })?;
        let extensions = strings("extensions")
            .ok_or_else(|| LspSettingError::BadExtensions {
                lang: lang.to_owned(),
            })?
            .into_iter()
            .map(|e| {
                if e.starts_with('.') {
                    e
                } else {
                    format!(".{e}")
                }
            })
            .collect();
        Ok(LspServerSetting {
            command,
            extensions,
            initialization_options: o.get("initialization_options").cloned(),
            settings: o.get("settings").cloned(),
        })
    }
}

/// Why the `lsp` setting cannot be used. The message completes a
/// sentence that starts with the key (`lsp …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspSettingError {
    /// The setting is not a JSON object.
    #[error("must be an object keyed by language")]
    NotObject,
    /// `wait_ms` is not a whole number of milliseconds.
    #[error("`wait_ms` must be a non-negative integer")]
    BadWait,
    /// `enabled` is not a boolean.
    #[error("`enabled` must be true or false")]
    BadEnabled,
    /// A language's entry is neither a server object nor `false`.
    #[error("`{lang}` must be {{\"command\": [...], \"extensions\": [...]}} or false")]
    BadServer { lang: String },
    /// A server object has a key Riot does not know.
    #[error("`{lang}` has an unknown key `{key}`")]
    UnknownServerKey { lang: String, key: String },
    /// A server's `command` is missing, empty or not all strings.
    #[error("`{lang}.command` must be a non-empty list of strings")]
    BadCommand { lang: String },
    /// A server's `extensions` is missing, empty or not all strings.
    #[error("`{lang}.extensions` must be a non-empty list like [\".py\"]")]
    BadExtensions { lang: String },
}

/// What a language server said about a file after an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditDiagnostics {
    /// No server serves this kind of file.
    NoServer,
    /// The server published the file's diagnostics (all of them).
    Reported {
        server: String,
        diagnostics: Vec<Diagnostic>,
    },
    /// The server did not answer in time, or is not running (it crashed,
    /// or is waiting to be restarted): `detail` says which.
    NoAnswer { server: String, detail: String },
}

/// The language servers of one session (docs/diagnostics.md). Never
/// fails an edit and never waits longer than its configured wait.
#[async_trait]
pub trait LanguageServers: Send + Sync + std::fmt::Debug {
    /// `path` (absolute) was just written: starts its language's server
    /// if needed, sends it the new text and waits, bounded, for the file's
    /// diagnostics.
    async fn after_edit(&self, path: &Path) -> EditDiagnostics;

    /// A command ran that may have changed files (Bash): the documents the
    /// servers have open are compared with the disk, a changed one is
    /// sent again (`didChange`, `didSave`) and a deleted one is closed.
    async fn after_command(&self) {}

    /// Stops every server (the session ended). Dropping does it too.
    async fn shutdown(&self);
}

/// Starts a session's [`LanguageServers`] (the face hands the kernel
/// one; `riot-lsp` has the real one).
pub trait LanguageServerHost: Send + Sync + std::fmt::Debug {
    /// Servers for a session in `project`, started lazily. `env` is set
    /// on top of the inherited environment; `env_remove` is taken out of
    /// it (model keys).
    fn session(
        &self,
        project: &Path,
        settings: &LspSettings,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    ) -> Arc<dyn LanguageServers>;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn checks_setting_reads_strings_lists_and_regexes() {
        let checks = DiagnosticCheck::parse_setting(&json!({"checks": [
            {"command": "make lint", "format": {"regex": "^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$"}},
            {"command": ["cargo", "check"], "format": "cargo"},
        ]}))
        .unwrap();
        assert_eq!(checks[0].argv, ["sh", "-c", "make lint"]);
        assert_eq!(checks[0].display(), "make lint");
        assert!(matches!(checks[0].format, CheckFormat::Regex(ref r) if r.contains("?P<file>")));
        assert_eq!(checks[1].argv, ["cargo", "check"]);
        assert_eq!(checks[1].format, CheckFormat::Cargo);
    }

    #[test]
    fn checks_setting_names_what_is_wrong() {
        let err = DiagnosticCheck::parse_setting(
            &json!({"checks": [{"command": "x", "format": "mypy"}]}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "checks[0] has an unknown `format` `mypy`: use one of cargo, tsc, pyright, ruff, eslint, go_vet or {\"regex\": \"…\"}"
        );
        let err =
            DiagnosticCheck::parse_setting(&json!({"checks": [{"format": "cargo"}]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "checks[0] needs a `command`: a string or a list of strings"
        );
        let err = DiagnosticCheck::parse_setting(&json!({"check": []})).unwrap_err();
        assert_eq!(
            err,
            ChecksSettingError::UnknownKey {
                key: "check".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "has an unknown key `check` (only `checks`)"
        );
    }

    #[test]
    fn setting_errors_read_as_before_and_keep_the_entry_error() {
        let message = |v: Value| DiagnosticCheck::parse_setting(&v).unwrap_err().to_string();
        assert_eq!(
            message(json!([])),
            "must be an object like {\"checks\": [...]}"
        );
        assert_eq!(
            message(json!({"checks": 1})),
            "`checks` must be a list of {\"command\", \"format\"}"
        );
        assert_eq!(
            message(json!({"checks": [{"command": "x", "format": {"re": "."}}]})),
            "checks[0] `format` object must be {\"regex\": \"…\"}"
        );
        assert_eq!(
            message(json!({"checks": [{"command": "x"}, {"command": "y"}]})),
            "checks[0] needs a `format`: one of cargo, tsc, pyright, ruff, eslint, go_vet or {\"regex\": \"…\"}"
        );
        let err =
            DiagnosticCheck::parse_setting(&json!({"checks": [{"command": [1], "format": "tsc"}]}))
                .unwrap_err();
        assert_eq!(
            std::error::Error::source(&err).map(ToString::to_string),
            Some("`command` must be a string or a list of strings".to_owned())
        );
        assert_eq!(
            LspSettings::parse_setting(&json!({"go": 1}))
                .unwrap_err()
                .to_string(),
            "`go` must be {\"command\": [...], \"extensions\": [...]} or false"
        );
    }

    #[test]
    fn lsp_setting_reads_servers_switches_and_the_wait() {
        let s = LspSettings::parse_setting(&json!({
            "wait_ms": 300,
            "python": {"command": ["pyright-langserver", "--stdio"], "extensions": ["py", ".pyi"]},
            "rust": false,
        }))
        .unwrap();
        assert_eq!(s.wait_ms(), 300);
        assert!(!s.disabled);
        assert_eq!(
            s.servers["python"],
            Some(LspServerSetting {
                command: vec!["pyright-langserver".into(), "--stdio".into()],
                extensions: vec![".py".into(), ".pyi".into()],
                initialization_options: None,
                settings: None,
            })
        );
        assert_eq!(s.servers["rust"], None);
        assert_eq!(LspSettings::default().wait_ms(), DEFAULT_LSP_WAIT_MS);
        let err = LspSettings::parse_setting(&json!({"go": {"command": []}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`go.command` must be a non-empty list of strings"
        );
    }

    #[test]
    fn one_line_has_path_position_severity_code_and_message() {
        let d = Diagnostic {
            path: "src/main.rs".into(),
            line: 3,
            column: 18,
            severity: Severity::Error,
            code: Some("E0308".into()),
            message: "mismatched types\nexpected `i32`".into(),
            source: "cargo".into(),
        };
        assert_eq!(
            d.one_line(),
            "src/main.rs:3:18: error[E0308]: mismatched types expected `i32`"
        );
    }
}
