//! Shared helpers for the decision tables.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use riot_protocol::{DirEntry, FileKind, FileMeta, FileSystem};

use riot_permissions::{Policy, builtin_query};
use riot_protocol::{
    PermissionMode, PermissionPolicy, PermissionQuery, PermissionResult, PermissionRule,
    RuleBehavior, RulePattern, RuleSource,
};
use serde_json::{Value, json};

pub const PROJECT: &str = "/work/proj";
pub const HOME: &str = "/home/me";

pub fn rule(text: &str, behavior: RuleBehavior, source: RuleSource) -> PermissionRule {
    PermissionRule {
        pattern: RulePattern::parse(text).unwrap(),
        behavior,
        source,
    }
}

/// The project the tables run in, on an in-memory disk: ordinary files
/// only, so globs and recursive readers find no secrets.
pub const PROJECT_FILES: &[&str] = &[
    "/work/proj/README.md",
    "/work/proj/Cargo.toml",
    "/work/proj/src/main.rs",
    "/work/proj/src/lib.rs",
    "/work/proj/data.txt",
    "/home/me/.bashrc",
];

pub fn policy(rules: Vec<PermissionRule>) -> Policy {
    policy_on(TreeFs::new(PROJECT_FILES, &[]), rules)
}

pub fn policy_on(fs: TreeFs, rules: Vec<PermissionRule>) -> Policy {
    Policy::new(PROJECT, Some(PathBuf::from(HOME)))
        .with_riot_home(format!("{HOME}/.config/riot"))
        .with_file_system(Arc::new(fs))
        .with_rules(rules)
}

/// A read-only in-memory disk: files (their parent directories exist
/// too) and symlinks, which may dangle.
#[derive(Debug, Default)]
pub struct TreeFs {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    links: Vec<(PathBuf, PathBuf)>,
}

impl TreeFs {
    pub fn new(files: &[&str], links: &[(&str, &str)]) -> Self {
        let mut fs = TreeFs::default();
        for f in files {
            let path = PathBuf::from(f);
            let mut dir = path.parent();
            while let Some(d) = dir {
                if !fs.dirs.contains(&d.to_path_buf()) {
                    fs.dirs.push(d.to_path_buf());
                }
                dir = d.parent();
            }
            fs.files.push(path);
        }
        for (link, target) in links {
            fs.links.push((PathBuf::from(link), PathBuf::from(target)));
        }
        fs
    }

    fn exists(&self, p: &Path) -> bool {
        self.files.iter().any(|f| f == p) || self.dirs.iter().any(|d| d == p)
    }

    fn link(&self, p: &Path) -> Option<&PathBuf> {
        self.links.iter().find(|(l, _)| l == p).map(|(_, t)| t)
    }
}

fn unsupported<T>() -> io::Result<T> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "not in this fake",
    ))
}

fn not_found<T>() -> io::Result<T> {
    Err(io::Error::new(io::ErrorKind::NotFound, "no such file"))
}

fn meta(kind: FileKind) -> FileMeta {
    FileMeta {
        kind,
        len: 0,
        modified_ms: None,
        mode: None,
    }
}

#[async_trait]
impl FileSystem for TreeFs {
    async fn read(&self, _: &Path) -> io::Result<Vec<u8>> {
        unsupported()
    }
    async fn metadata(&self, _: &Path) -> io::Result<FileMeta> {
        unsupported()
    }
    async fn symlink_metadata(&self, path: &Path) -> io::Result<FileMeta> {
        if self.link(path).is_some() {
            Ok(meta(FileKind::Symlink))
        } else if self.dirs.iter().any(|d| d == path) {
            Ok(meta(FileKind::Dir))
        } else if self.exists(path) {
            Ok(meta(FileKind::File))
        } else {
            not_found()
        }
    }
    async fn write_atomic(&self, _: &Path, _: &[u8]) -> io::Result<()> {
        unsupported()
    }
    async fn create_dir_all(&self, _: &Path) -> io::Result<()> {
        unsupported()
    }
    async fn remove_file(&self, _: &Path) -> io::Result<()> {
        unsupported()
    }
    async fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        // A link may be any prefix of the path (`keys/id_rsa` through a
        // linked `keys`).
        let mut p = path.to_path_buf();
        for _ in 0..8 {
            let before = p.clone();
            for (link, target) in &self.links {
                if let Ok(rest) = p.strip_prefix(link) {
                    p = if rest.as_os_str().is_empty() {
                        target.clone()
                    } else {
                        target.join(rest)
                    };
                }
            }
            if p == before {
                break;
            }
        }
        if self.exists(&p) { Ok(p) } else { not_found() }
    }
    async fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        if !self.dirs.iter().any(|d| d == path) {
            return not_found();
        }
        let mut out: Vec<DirEntry> = self
            .dirs
            .iter()
            .filter(|d| d.parent() == Some(path))
            .map(|d| DirEntry {
                path: d.clone(),
                kind: FileKind::Dir,
            })
            .chain(
                self.files
                    .iter()
                    .filter(|f| f.parent() == Some(path))
                    .map(|f| DirEntry {
                        path: f.clone(),
                        kind: FileKind::File,
                    }),
            )
            .chain(
                self.links
                    .iter()
                    .filter(|(l, _)| l.parent() == Some(path))
                    .map(|(l, _)| DirEntry {
                        path: l.clone(),
                        kind: FileKind::Symlink,
                    }),
            )
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }
    async fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.link(path).cloned().map_or_else(not_found, Ok)
    }
}

pub fn mode(name: &str) -> PermissionMode {
    name.parse().unwrap()
}

/// The query the built-in tool would produce.
pub fn query(tool: &str, arg: &str, mode: PermissionMode) -> PermissionQuery {
    let input = input_for(tool, arg);
    builtin_query(tool, &input, Path::new(PROJECT), mode)
}

pub fn input_for(tool: &str, arg: &str) -> Value {
    match tool {
        "Bash" => json!({"command": arg}),
        "Read" | "Write" | "Edit" => {
            json!({"file_path": arg, "content": "", "old_string": "a", "new_string": "b"})
        }
        "Glob" | "Grep" => json!({"pattern": "x", "path": arg}),
        "NotebookEdit" => json!({"notebook_path": arg, "cell_id": "c", "new_source": ""}),
        "WebFetch" => json!({"url": arg}),
        _ => json!({}),
    }
}

/// `(decision, reason kind)` of a result.
pub fn verdict(result: &PermissionResult) -> (&'static str, &'static str) {
    match result {
        PermissionResult::Allow { reason, .. } => ("allow", reason.kind()),
        PermissionResult::Ask { reason, .. } => ("ask", reason.kind()),
        PermissionResult::Deny { reason, .. } => ("deny", reason.kind()),
        PermissionResult::Passthrough => ("passthrough", "none"),
    }
}

pub async fn decide(policy: &Policy, q: &PermissionQuery) -> (&'static str, &'static str) {
    verdict(&policy.decide(q).await)
}

/// Runs a table of `(tool, argument, expected decision, expected kind)`
/// in one mode and reports every mismatch at once.
pub async fn run_table(policy: &Policy, mode_name: &str, rows: &[(&str, &str, &str, &str)]) {
    let m = mode(mode_name);
    let mut failures = Vec::new();
    for &(tool, arg, decision, kind) in rows {
        let got = decide(policy, &query(tool, arg, m)).await;
        if got != (decision, kind) {
            failures.push(format!(
                "{mode_name:>12} {tool}({arg:?}): expected {decision}/{kind}, got {}/{}",
                got.0, got.1
            ));
        }
    }
    assert_rows(&failures, rows.len());
}

/// Fails with every failed row of a table at once.
pub fn assert_rows(failures: &[String], rows: usize) {
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
