//! Reading the user and project files, merging them, and adding or
//! removing a server in the user file.

use std::path::{Path, PathBuf};

use riot_protocol::FileSystem;
use serde_json::{Map, Value};

use super::{ConfigError, ConfigScope, ParsedServers, ServerConfig, parse};
use crate::naming::valid_server_name;

/// The user's file, in the Riot home directory.
pub const USER_FILE: &str = "mcp.json";
/// The project's file, in the project directory.
pub const PROJECT_FILE: &str = ".mcp.json";

/// One file as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedFile {
    pub path: PathBuf,
    /// A missing file is not an error; it has no servers.
    pub exists: bool,
    pub parsed: ParsedServers,
}

/// Reads and parses one file through the injected file system.
pub async fn load_file(fs: &dyn FileSystem, path: &Path, scope: ConfigScope) -> LoadedFile {
    let mut loaded = LoadedFile {
        path: path.to_path_buf(),
        ..LoadedFile::default()
    };
    let error = |message: String| ConfigError {
        path: path.to_path_buf(),
        server: None,
        message,
    };
    match fs.read(path).await {
        Ok(bytes) => {
            loaded.exists = true;
            match String::from_utf8(bytes) {
                Ok(text) => loaded.parsed = parse(path, &text, scope),
                Err(_) => loaded
                    .parsed
                    .errors
                    .push(error("is not UTF-8 text; save it as UTF-8 JSON".into())),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => loaded
            .parsed
            .errors
            .push(error(format!("could not be read ({e})"))),
    }
    loaded
}

/// The servers a session may start, with what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Sorted by name. A project server replaces a user server of the same
    /// name.
    pub servers: Vec<ServerConfig>,
    pub errors: Vec<ConfigError>,
    pub warnings: Vec<String>,
    /// Servers of an untrusted project's `.mcp.json`: listed, not started.
    pub untrusted: Vec<String>,
}

impl McpConfig {
    /// User servers, then project servers over them by name.
    pub fn merge(user: ParsedServers, project: ParsedServers) -> Self {
        let mut by_name = std::collections::BTreeMap::new();
        let mut errors = user.errors;
        let mut warnings = user.warnings;
        for server in user.servers.into_iter().chain(project.servers) {
            by_name.insert(server.name.clone(), server);
        }
        errors.extend(project.errors);
        warnings.extend(project.warnings);
        Self {
            servers: by_name.into_values().collect(),
            errors,
            warnings,
            untrusted: Vec::new(),
        }
    }

    /// One line telling the person why project servers did not start.
    pub fn trust_notice(&self) -> Option<String> {
        if self.untrusted.is_empty() {
            return None;
        }
        Some(format!(
            "Not starting MCP servers from the untrusted project file {PROJECT_FILE} ({}). Trust the project to start them.",
            self.untrusted.join(", ")
        ))
    }
}

/// The user's `<riot home>/mcp.json` and the project's `.mcp.json`
/// merged. Until the project is trusted its servers are not returned,
/// only named in [`McpConfig::untrusted`] (docs/design.md §13: no MCP server
/// from `.mcp.json` starts before the person trusts the project).
pub async fn load(
    fs: &dyn FileSystem,
    riot_home: &Path,
    project: &Path,
    project_trusted: bool,
) -> McpConfig {
    let user = load_file(fs, &riot_home.join(USER_FILE), ConfigScope::User).await;
    let project = load_file(fs, &project.join(PROJECT_FILE), ConfigScope::Project).await;
    if project_trusted {
        return McpConfig::merge(user.parsed, project.parsed);
    }
    let mut config = McpConfig::merge(user.parsed, ParsedServers::default());
    config.untrusted = project.parsed.servers.into_iter().map(|s| s.name).collect();
    config.untrusted.sort();
    config
}

/// Why the user file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{}: could not be read ({source})", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}; fix it by hand before changing it with riot", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("{0}")]
    Name(String),
    #[error("MCP server `{name}` already exists in {}; remove it first", path.display())]
    Exists { name: String, path: PathBuf },
    #[error("{}: could not be written ({source})", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Adds `server` to `<riot home>/mcp.json` (created if missing), keeping
/// every other key of the file. Written atomically. Returns the path.
pub async fn add_server(
    fs: &dyn FileSystem,
    riot_home: &Path,
    server: &ServerConfig,
) -> Result<PathBuf, EditError> {
    if let Some(why) = valid_server_name(&server.name) {
        return Err(EditError::Name(why));
    }
    let path = riot_home.join(USER_FILE);
    let mut root = read_root(fs, &path).await?;
    let servers = servers_mut(&mut root, &path)?;
    if servers.contains_key(&server.name) {
        return Err(EditError::Exists {
            name: server.name.clone(),
            path,
        });
    }
    servers.insert(server.name.clone(), server.to_json());
    fs.create_dir_all(riot_home)
        .await
        .map_err(|source| EditError::Write {
            path: path.clone(),
            source,
        })?;
    write_root(fs, &path, root).await?;
    Ok(path)
}

/// Removes the server `name` from `<riot home>/mcp.json`, keeping every
/// other key. Returns whether it was there.
pub async fn remove_server(
    fs: &dyn FileSystem,
    riot_home: &Path,
    name: &str,
) -> Result<bool, EditError> {
    let path = riot_home.join(USER_FILE);
    let mut root = read_root(fs, &path).await?;
    let servers = servers_mut(&mut root, &path)?;
    if servers.remove(name).is_none() {
        return Ok(false);
    }
    write_root(fs, &path, root).await?;
    Ok(true)
}

async fn read_root(fs: &dyn FileSystem, path: &Path) -> Result<Map<String, Value>, EditError> {
    let bytes = match fs.read(path).await {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(EditError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let invalid = |message: String| EditError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(invalid("is not a JSON object".into())),
        Err(e) => Err(invalid(format!("is not valid JSON ({e})"))),
    }
}

fn servers_mut<'a>(
    root: &'a mut Map<String, Value>,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, EditError> {
    match root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(servers) => Ok(servers),
        _ => Err(EditError::Invalid {
            path: path.to_path_buf(),
            message: "`mcpServers` is not an object".into(),
        }),
    }
}

async fn write_root(
    fs: &dyn FileSystem,
    path: &Path,
    root: Map<String, Value>,
) -> Result<(), EditError> {
    let mut text =
        serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| EditError::Invalid {
            path: path.to_path_buf(),
            message: format!("could not be serialized ({e})"),
        })?;
    text.push('\n');
    fs.write_atomic(path, text.as_bytes())
        .await
        .map_err(|source| EditError::Write {
            path: path.to_path_buf(),
            source,
        })
}
