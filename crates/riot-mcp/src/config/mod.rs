//! MCP server configuration in the widely used `mcpServers` shape.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
//!                 "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}" } },
//!     "docs":   { "type": "http", "url": "https://example.com/mcp",
//!                 "headers": { "Authorization": "Bearer ${DOCS_TOKEN}" } }
//!   }
//! }
//! ```
//!
//! - A stdio server has `command` and optionally `args`, `env` and `cwd`
//!   (`"type": "stdio"` may be given). A streamable HTTP server has
//!   `"type": "http"` (or `"streamable-http"`) and `url`, optionally
//!   `headers`; a `url` without `type` also means HTTP. Any server may say
//!   `"disabled": true`.
//! - One bad entry is an error naming the file and the server; the other
//!   servers still load. Keys Riot does not know are reported as warnings
//!   and ignored (other clients add their own, e.g. `autoApprove`).
//! - `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `cwd`,
//!   `url` and `headers` are expanded from the environment when the
//!   server starts ([`ServerConfig::expanded`]); files keep them as
//!   written.
//!
//! Files ([`mod@file`]): the user's `<riot home>/mcp.json` and the project's
//! `.mcp.json`. A project server with the name of a user server replaces
//! it, and project servers are read only once the person trusts the
//! project (docs/design.md §13).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod expand;
pub mod file;

pub use expand::ExpandError;
pub use file::{
    EditError, LoadedFile, McpConfig, PROJECT_FILE, USER_FILE, add_server, load, load_file,
    remove_server,
};

use crate::naming::valid_server_name;

/// Where a server's configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigScope {
    /// `<riot home>/mcp.json`.
    User,
    /// `<project>/.mcp.json`.
    Project,
    /// Handed over at run time (an ACP client's `mcpServers`, a test).
    Session,
}

impl fmt::Display for ConfigScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigScope::User => "user",
            ConfigScope::Project => "project",
            ConfigScope::Session => "session",
        })
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Validated: `[A-Za-z0-9_-]`, at most 32 characters, no `__`.
    pub name: String,
    pub transport: Transport,
    pub disabled: bool,
    pub scope: ConfigScope,
    /// The file it was read from, if any.
    pub path: Option<PathBuf>,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process spoken to over its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set on top of Riot's environment (minus the model API keys).
        env: BTreeMap<String, String>,
        /// Relative to the project directory; default the project directory.
        cwd: Option<String>,
    },
    /// A streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`, for listings.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// A problem with a configuration file or one of its servers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub path: PathBuf,
    /// The server the problem is in; `None` for the whole file.
    pub server: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server {
            Some(server) => write!(
                f,
                "{}: MCP server `{server}`: {}",
                self.path.display(),
                self.message
            ),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// What one file held: the servers that parsed, and what did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedServers {
    pub servers: Vec<ServerConfig>,
    pub errors: Vec<ConfigError>,
    /// Ignored keys, one line each.
    pub warnings: Vec<String>,
}

const STDIO_KEYS: &[&str] = &["type", "command", "args", "env", "cwd", "disabled"];
const HTTP_KEYS: &[&str] = &["type", "url", "headers", "disabled"];

/// Parses the text of an `mcpServers` file. Never fails as a whole unless
/// the file is not a JSON object with an `mcpServers` object.
pub fn parse(path: &Path, text: &str, scope: ConfigScope) -> ParsedServers {
    let mut out = ParsedServers::default();
    let file_error = |message: String| ConfigError {
        path: path.to_path_buf(),
        server: None,
        message,
    };
    let json: Value = match serde_json::from_str(text) {
        Ok(json) => json,
        Err(e) => {
            out.errors.push(file_error(format!(
                "not valid JSON ({e}); fix or remove the file"
            )));
            return out;
        }
    };
    let Some(root) = json.as_object() else {
        out.errors.push(file_error(
            "must be a JSON object like {\"mcpServers\": {...}}".into(),
        ));
        return out;
    };
    let servers = match root.get("mcpServers") {
        None => return out,
        Some(Value::Object(servers)) => servers,
        Some(_) => {
            out.errors.push(file_error(
                "`mcpServers` must be an object mapping server names to their settings".into(),
            ));
            return out;
        }
    };
    for (name, entry) in servers {
        let error = |message: String| ConfigError {
            path: path.to_path_buf(),
            server: Some(name.clone()),
            message,
        };
        match parse_entry(name, entry) {
            Ok((transport, disabled, unknown)) => {
                for key in unknown {
                    out.warnings.push(format!(
                        "{}: MCP server `{name}`: unknown key `{key}` ignored",
                        path.display()
                    ));
                }
                out.servers.push(ServerConfig {
                    name: name.clone(),
                    transport,
                    disabled,
                    scope: scope.clone(),
                    path: Some(path.to_path_buf()),
                });
            }
            Err(problem) => out.errors.push(error(problem.to_string())),
        }
    }
    out
}

/// What is wrong with one server's entry. The message follows the
/// server's name (`…: MCP server `docs`: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum EntryError {
    /// The name cannot be a server name; says why.
    #[error("{0}")]
    BadName(String),
    /// The entry is not a JSON object.
    #[error("must be an object with `command` (stdio) or `url` (HTTP)")]
    NotObject,
    /// `disabled` is not a boolean.
    #[error("`disabled` must be true or false")]
    BadDisabled,
    /// Neither `command`, `url` nor `type`.
    #[error("needs `command` (a stdio server) or `url` (an HTTP server)")]
    NoTransport,
    /// `"type": "sse"`.
    #[error(
        "the deprecated SSE transport is not supported; use the server's streamable HTTP endpoint with \"type\": \"http\""
    )]
    Sse,
    /// A `type` Riot does not know.
    #[error("unknown `type` `{kind}`; use \"stdio\" or \"http\"")]
    UnknownType { kind: String },
    /// `type` is not a string.
    #[error("`type` must be a string: \"stdio\" or \"http\"")]
    TypeNotString,
    /// `command` is empty or not a string.
    #[error("`command` must be a non-empty string")]
    BadCommand,
    /// A stdio server without `command`.
    #[error("a stdio server needs `command`")]
    NoCommand,
    /// `args` is not a list of strings.
    #[error("`args` must be an array of strings")]
    BadArgs,
    /// `cwd` is not a string.
    #[error("`cwd` must be a string")]
    BadCwd,
    /// `url` is not a string.
    #[error("`url` must be a string")]
    UrlNotString,
    /// An HTTP server without `url`.
    #[error("an HTTP server needs `url`")]
    NoUrl,
    /// A `url` that is not http(s) (and not a `${VAR}` either).
    #[error("`url` must start with http:// or https:// (got `{url}`)")]
    BadScheme { url: String },
    /// A header HTTP would refuse.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// A value of `env` or `headers` that is not a string.
    #[error("`{key}`: the value of `{name}` must be a string")]
    NotString { key: String, name: String },
    /// `env` or `headers` is not an object.
    #[error("`{key}` must be an object of strings")]
    NotStringMap { key: String },
}

/// A header name or value HTTP does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// The name is not a valid header name.
    #[error("`headers`: `{name}` is not a valid HTTP header name")]
    BadName { name: String },
    /// The value holds characters HTTP does not allow.
    #[error(
        "`headers`: the value of `{name}` contains characters HTTP does not allow (e.g. a newline)"
    )]
    BadValue { name: String },
}

type Entry = (Transport, bool, Vec<String>);

fn parse_entry(name: &str, entry: &Value) -> Result<Entry, EntryError> {
    if let Some(why) = valid_server_name(name) {
        return Err(EntryError::BadName(why));
    }
    let Some(obj) = entry.as_object() else {
        return Err(EntryError::NotObject);
    };
    let disabled = match obj.get("disabled") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(EntryError::BadDisabled),
    };
    let kind = match obj.get("type") {
        None if obj.contains_key("command") => "stdio",
        None if obj.contains_key("url") => "http",
        None => return Err(EntryError::NoTransport),
        Some(Value::String(t)) => match t.as_str() {
            "stdio" => "stdio",
            "http" | "streamable-http" | "streamableHttp" => "http",
            "sse" => return Err(EntryError::Sse),
            other => {
                return Err(EntryError::UnknownType {
                    kind: other.to_owned(),
                });
            }
        },
        Some(_) => return Err(EntryError::TypeNotString),
    };
    let (transport, known) = if kind == "stdio" {
        (parse_stdio(obj)?, STDIO_KEYS)
    } else {
        (parse_http(obj)?, HTTP_KEYS)
    };
    let unknown = obj
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok((transport, disabled, unknown))
}

fn parse_stdio(obj: &Map<String, Value>) -> Result<Transport, EntryError> {
    let command = match obj.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(_) => return Err(EntryError::BadCommand),
        None => return Err(EntryError::NoCommand),
    };
    let args = match obj.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or(EntryError::BadArgs)?,
        Some(_) => return Err(EntryError::BadArgs),
    };
    let env = string_map(obj, "env")?;
    let cwd = match obj.get("cwd") {
        None => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(EntryError::BadCwd),
    };
    Ok(Transport::Stdio {
        command,
        args,
        env,
        cwd,
    })
}

fn parse_http(obj: &Map<String, Value>) -> Result<Transport, EntryError> {
    let url = match obj.get("url") {
        Some(Value::String(u)) => u.clone(),
        Some(_) => return Err(EntryError::UrlNotString),
        None => return Err(EntryError::NoUrl),
    };
    // `${VAR}` may stand for the whole URL; the scheme is checked again
    // after expansion.
    if !url.starts_with("${") && !has_http_scheme(&url) {
        return Err(EntryError::BadScheme { url });
    }
    let headers = string_map(obj, "headers")?;
    for (key, value) in &headers {
        check_header(key, value)?;
    }
    Ok(Transport::Http { url, headers })
}

pub(crate) fn has_http_scheme(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A header name and (unexpanded) value that HTTP accepts.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), HeaderError> {
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(HeaderError::BadName {
            name: name.to_owned(),
        });
    }
    if http::HeaderValue::from_str(value).is_err() {
        return Err(HeaderError::BadValue {
            name: name.to_owned(),
        });
    }
    Ok(())
}

fn string_map(obj: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, EntryError> {
    match obj.get(key) {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(EntryError::NotString {
                    key: key.to_owned(),
                    name: k.clone(),
                }),
            })
            .collect(),
        Some(_) => Err(EntryError::NotStringMap {
            key: key.to_owned(),
        }),
    }
}

impl ServerConfig {
    /// A server configured at run time (not from a file).
    pub fn session(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            transport,
            disabled: false,
            scope: ConfigScope::Session,
            path: None,
        }
    }

    /// The entry as it is written in a file (the value under its name).
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                obj.insert("command".into(), Value::String(command.clone()));
                if !args.is_empty() {
                    obj.insert(
                        "args".into(),
                        Value::Array(args.iter().cloned().map(Value::String).collect()),
                    );
                }
                if !env.is_empty() {
                    obj.insert("env".into(), string_object(env));
                }
                if let Some(cwd) = cwd {
                    obj.insert("cwd".into(), Value::String(cwd.clone()));
                }
            }
            Transport::Http { url, headers } => {
                obj.insert("type".into(), Value::String("http".into()));
                obj.insert("url".into(), Value::String(url.clone()));
                if !headers.is_empty() {
                    obj.insert("headers".into(), string_object(headers));
                }
            }
        }
        if self.disabled {
            obj.insert("disabled".into(), Value::Bool(true));
        }
        Value::Object(obj)
    }
}

fn string_object(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

#[cfg(test)]
mod tests;
