//! Which language server serves a file: the `lsp` settings' servers, and
//! the defaults (rust-analyzer, pyright-langserver,
//! typescript-language-server, gopls) for those the settings do not turn
//! off, used only when their program is found.

#![allow(clippy::disallowed_methods)] // looks programs up on PATH (metadata), as a shell would

use std::path::{Path, PathBuf};

use riot_protocol::LspSettings;

/// One server a session may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The settings key (`python`), which also names it to the model.
    pub language: String,
    pub command: Vec<String>,
    pub extensions: Vec<String>,
    /// A default: used only when its program is found on `PATH`.
    pub default: bool,
    /// From the settings: `initializationOptions`, and the server's
    /// configuration (`settings`).
    pub initialization_options: Option<serde_json::Value>,
    pub settings: Option<serde_json::Value>,
}

impl ServerSpec {
    /// A short name for messages: the program's file name.
    pub fn name(&self) -> String {
        self.command
            .first()
            .map(|p| {
                Path::new(p)
                    .file_name()
                    .map_or_else(|| p.clone(), |n| n.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| self.language.clone())
    }

    /// The LSP `languageId` of a file with `extension` (with the dot).
    pub fn language_id(&self, extension: &str) -> String {
        match extension {
            ".rs" => "rust",
            ".py" | ".pyi" => "python",
            ".ts" | ".mts" | ".cts" => "typescript",
            ".tsx" => "typescriptreact",
            ".js" | ".mjs" | ".cjs" => "javascript",
            ".jsx" => "javascriptreact",
            ".go" => "go",
            _ => self.language.as_str(),
        }
        .to_owned()
    }
}

fn default(language: &str, command: &[&str], extensions: &[&str]) -> ServerSpec {
    ServerSpec {
        language: language.to_owned(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        extensions: extensions.iter().map(|s| (*s).to_owned()).collect(),
        default: true,
        initialization_options: None,
        settings: None,
    }
}

/// The default servers.
pub fn defaults() -> Vec<ServerSpec> {
    vec![
        default("rust", &["rust-analyzer"], &[".rs"]),
        default(
            "python",
            &["pyright-langserver", "--stdio"],
            &[".py", ".pyi"],
        ),
        default(
            "typescript",
            &["typescript-language-server", "--stdio"],
            &[".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"],
        ),
        default("go", &["gopls"], &[".go"]),
    ]
}

/// The servers of a session: the configured ones (in key order), then the
/// defaults the settings neither replace nor turn off. Nothing when the
/// settings say `"enabled": false`.
pub fn servers(settings: &LspSettings) -> Vec<ServerSpec> {
    if settings.disabled {
        return Vec::new();
    }
    let mut out: Vec<ServerSpec> = settings
        .servers
        .iter()
        .filter_map(|(language, s)| {
            s.as_ref().map(|s| ServerSpec {
                language: language.clone(),
                command: s.command.clone(),
                extensions: s.extensions.clone(),
                default: false,
                initialization_options: s.initialization_options.clone(),
                settings: s.settings.clone(),
            })
        })
        .collect();
    out.extend(
        defaults()
            .into_iter()
            .filter(|d| !settings.servers.contains_key(&d.language)),
    );
    out
}

/// The file ending of `path` with its dot (`.py`), if any.
pub fn extension_of(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
}

/// The first of `servers` that serves `path`'s kind of file.
pub fn server_for<'a>(servers: &'a [ServerSpec], path: &Path) -> Option<&'a ServerSpec> {
    let ext = extension_of(path)?;
    servers.iter().find(|s| s.extensions.contains(&ext))
}

/// `program` as the system would run it: a path as given (relative ones
/// against `cwd`), a bare name from the first `PATH` directory holding an
/// executable file of that name.
pub fn find_program(program: &str, path_var: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = cwd.join(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use riot_protocol::LspServerSetting;

    use super::*;

    #[test]
    fn settings_add_replace_and_turn_off_servers() {
        let mut settings = LspSettings::default();
        settings.servers.insert(
            "python".into(),
            Some(LspServerSetting {
                command: vec!["/opt/pyright-langserver".into(), "--stdio".into()],
                extensions: vec![".py".into()],
                initialization_options: None,
                settings: None,
            }),
        );
        settings.servers.insert("rust".into(), None);
        settings.servers.insert(
            "zig".into(),
            Some(LspServerSetting {
                command: vec!["zls".into()],
                extensions: vec![".zig".into()],
                initialization_options: None,
                settings: None,
            }),
        );
        let all = servers(&settings);
        let names: Vec<(&str, bool)> = all
            .iter()
            .map(|s| (s.language.as_str(), s.default))
            .collect();
        assert_eq!(
            names,
            [
                ("python", false),
                ("zig", false),
                ("typescript", true),
                ("go", true)
            ]
        );
        assert_eq!(
            server_for(&all, Path::new("/p/a.py")).unwrap().name(),
            "pyright-langserver"
        );
        assert_eq!(
            server_for(&all, Path::new("/p/b.zig"))
                .unwrap()
                .language_id(".zig"),
            "zig"
        );
        assert!(
            server_for(&all, Path::new("/p/main.rs")).is_none(),
            "rust: false"
        );
        assert!(server_for(&all, Path::new("/p/Makefile")).is_none());
        assert_eq!(
            server_for(&all, Path::new("/p/App.tsx"))
                .unwrap()
                .language_id(".tsx"),
            "typescriptreact"
        );

        settings.disabled = true;
        assert!(servers(&settings).is_empty());
    }

    #[test]
    fn programs_are_found_on_path_only_when_executable() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("srv"), "#!/bin/sh\n").unwrap();
        std::fs::write(bin.join("plain"), "not a program").unwrap();
        std::fs::set_permissions(bin.join("srv"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("/nonexistent:{}", bin.display());
        assert_eq!(
            find_program("srv", Some(&path), dir.path()),
            Some(bin.join("srv"))
        );
        assert_eq!(find_program("plain", Some(&path), dir.path()), None);
        assert_eq!(find_program("srv", None, dir.path()), None);
        assert_eq!(
            find_program("bin/srv", None, dir.path()),
            Some(dir.path().join("bin/srv")),
            "a relative path is the project's"
        );
    }

    use std::os::unix::fs::PermissionsExt;
}
