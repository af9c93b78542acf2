//! Memory files (docs/design.md §13): `<riot home>/AGENTS.md`, then
//! `AGENTS.md` and `CLAUDE.md` in every directory from the project root
//! down to the working directory — both when a directory has both, so one
//! set of instructions serves every agent. `@path` imports are followed up
//! to five levels. A file's content is read once: not again when it is
//! reached through a symbolic link or an import, when another file already
//! said the same, or when it only imports files already read (a
//! `CLAUDE.md` holding just `@AGENTS.md`). The total is capped, with a
//! notice saying what was cut.

use std::path::{Path, PathBuf};

use riot_protocol::FileSystem;

/// Import depth limit.
pub const MAX_IMPORT_DEPTH: usize = 5;
/// Total characters of memory injected into the prompt.
pub const MAX_MEMORY_CHARS: usize = 40_000;

/// One loaded memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    pub path: PathBuf,
    pub text: String,
}

/// Everything loaded, and what did not fit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memory {
    pub files: Vec<MemoryFile>,
    pub notices: Vec<String>,
}

impl Memory {
    /// The prompt section: each file with its path as a heading.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            out.push_str(&format!(
                "## {}\n\n{}\n\n",
                f.path.display(),
                f.text.trim_end()
            ));
        }
        out
    }
}

/// The project root: the nearest ancestor of `cwd` holding `.git`, else `cwd`.
pub async fn project_root(fs: &dyn FileSystem, cwd: &Path) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if fs.symlink_metadata(&d.join(".git")).await.is_ok() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// Loads the memory files for a session in `cwd`.
pub async fn load(fs: &dyn FileSystem, home: &Path, cwd: &Path) -> Memory {
    let mut candidates: Vec<PathBuf> = vec![home.join("AGENTS.md")];
    let root = project_root(fs, cwd).await;
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();
    for d in dirs {
        candidates.push(d.join("AGENTS.md"));
        candidates.push(d.join("CLAUDE.md"));
    }
    let mut loader = Loader {
        fs,
        home,
        memory: Memory::default(),
        budget: MAX_MEMORY_CHARS,
        seen_files: Vec::new(),
        seen_texts: Vec::new(),
    };
    for path in candidates {
        if let Ok(bytes) = fs.read(&path).await {
            loader.load_file(&path, bytes, 0).await;
        }
    }
    loader.memory
}

/// What has been read so far.
struct Loader<'a> {
    fs: &'a dyn FileSystem,
    home: &'a Path,
    memory: Memory,
    budget: usize,
    /// The files read, with symbolic links resolved.
    seen_files: Vec<PathBuf>,
    /// Their texts, trimmed.
    seen_texts: Vec<String>,
}

impl Loader<'_> {
    /// `path` with symbolic links resolved, or else tidied.
    async fn identity(&self, path: &Path) -> PathBuf {
        match self.fs.canonicalize(path).await {
            Ok(real) => real,
            Err(_) => riot_permissions::paths::normalize(path),
        }
    }

    fn import_target(&self, from: &Path, import: &str) -> PathBuf {
        if let Some(rest) = import.strip_prefix("~/") {
            self.home.join(rest)
        } else {
            from.parent().unwrap_or(Path::new("/")).join(import)
        }
    }

    async fn load_file(&mut self, path: &Path, bytes: Vec<u8>, depth: usize) {
        let identity = self.identity(path).await;
        if self.seen_files.contains(&identity) {
            return;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            self.memory.notices.push(format!(
                "{} is not UTF-8 text and was skipped",
                path.display()
            ));
            return;
        };
        let imports = imports_of(&text);
        if self.seen_texts.iter().any(|t| t == text.trim()) {
            tracing::debug!(file = %path.display(), "memory file says what another already said; read once");
            return;
        }
        self.seen_files.push(identity);
        // A file that only imports others (a `CLAUDE.md` holding just
        // `@AGENTS.md`) adds nothing of its own: its imports are read, it
        // is not shown.
        let shown = !only_imports(&text);
        if shown {
            self.seen_texts.push(text.trim().to_owned());
            self.push(path, text);
        }
        self.follow(path, imports, depth).await;
    }

    /// Adds a file's text within the budget.
    fn push(&mut self, path: &Path, text: String) {
        let text = if text.chars().count() > self.budget {
            self.memory.notices.push(format!(
                "{} was cut to fit the {MAX_MEMORY_CHARS}-character memory limit",
                path.display()
            ));
            text.chars().take(self.budget).collect()
        } else {
            text
        };
        self.budget -= text.chars().count();
        self.memory.files.push(MemoryFile {
            path: path.to_path_buf(),
            text,
        });
    }

    async fn follow(&mut self, path: &Path, imports: Vec<String>, depth: usize) {
        for import in imports {
            let target = self.import_target(path, &import);
            if depth + 1 > MAX_IMPORT_DEPTH {
                self.memory.notices.push(format!(
                    "@{import} in {} was not followed: imports go {MAX_IMPORT_DEPTH} levels deep at most",
                    path.display()
                ));
                continue;
            }
            match self.fs.read(&target).await {
                Ok(bytes) => Box::pin(self.load_file(&target, bytes, depth + 1)).await,
                Err(_) => self
                    .memory
                    .notices
                    .push(format!("@{import} in {} does not exist", path.display())),
            }
        }
    }
}

/// Whether a text holds nothing but `@path` imports (and blank lines).
fn only_imports(text: &str) -> bool {
    let mut any = false;
    for line in text.lines() {
        for word in line.split_whitespace() {
            let import = word.strip_prefix('@').is_some_and(|p| {
                let p = p.trim_end_matches([',', ';', ')', ':', '.']);
                !p.is_empty() && (p.contains('/') || p.contains('.')) && !p.contains('@')
            });
            if !import {
                return false;
            }
            any = true;
        }
    }
    any
}

/// `@path` tokens outside code: a word starting with `@` that looks like a
/// path (contains `/` or `.`). Fenced code blocks and inline code are skipped.
pub fn imports_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (i, part) in line.split('`').enumerate() {
            // Odd segments are inside inline code.
            if i % 2 == 1 {
                continue;
            }
            for word in part.split_whitespace() {
                if let Some(p) = word.strip_prefix('@') {
                    let p = p.trim_end_matches([',', ';', ')', ':', '.']);
                    if !p.is_empty() && (p.contains('/') || p.contains('.')) && !p.contains('@') {
                        out.push(p.to_owned());
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests write real files and links

    use super::*;

    /// A project (with `.git`) and an empty Riot home.
    struct Dirs {
        home: tempfile::TempDir,
        project: tempfile::TempDir,
    }

    impl Dirs {
        fn new() -> Self {
            let dirs = Self {
                home: tempfile::tempdir().unwrap(),
                project: tempfile::tempdir().unwrap(),
            };
            std::fs::create_dir(dirs.project.path().join(".git")).unwrap();
            dirs
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.project.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        /// (file relative to the project, text) of what was loaded.
        async fn load(&self, cwd: &str) -> (Vec<(String, String)>, Vec<String>) {
            let memory = load(
                &riot_runtime::RealFs,
                self.home.path(),
                &self.project.path().join(cwd),
            )
            .await;
            let files = memory
                .files
                .iter()
                .map(|f| {
                    (
                        f.path
                            .strip_prefix(self.project.path())
                            .unwrap()
                            .display()
                            .to_string(),
                        f.text.clone(),
                    )
                })
                .collect();
            (files, memory.notices)
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[tokio::test]
    async fn both_files_of_a_directory_are_read_agents_md_first() {
        let dirs = Dirs::new();
        dirs.write("AGENTS.md", "Use cargo nextest.");
        dirs.write("CLAUDE.md", "Prefer small commits.");
        dirs.write("sub/CLAUDE.md", "Only Claude's file here.");
        let (files, notices) = dirs.load("sub").await;
        assert_eq!(
            files,
            pairs(&[
                ("AGENTS.md", "Use cargo nextest."),
                ("CLAUDE.md", "Prefer small commits."),
                ("sub/CLAUDE.md", "Only Claude's file here."),
            ])
        );
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[tokio::test]
    async fn a_link_between_them_is_read_once() {
        for (real, link) in [("AGENTS.md", "CLAUDE.md"), ("CLAUDE.md", "AGENTS.md")] {
            let dirs = Dirs::new();
            dirs.write(real, "One set of instructions.");
            std::os::unix::fs::symlink(real, dirs.project.path().join(link)).unwrap();
            let (files, _) = dirs.load("").await;
            assert_eq!(
                files,
                pairs(&[("AGENTS.md", "One set of instructions.")]),
                "{link} -> {real}"
            );
        }
    }

    #[tokio::test]
    async fn the_same_text_or_a_file_that_only_imports_the_other_is_read_once() {
        let dirs = Dirs::new();
        dirs.write("AGENTS.md", "Run the tests.\n");
        dirs.write("CLAUDE.md", "Run the tests.");
        assert_eq!(
            dirs.load("").await.0,
            pairs(&[("AGENTS.md", "Run the tests.\n")])
        );

        let dirs = Dirs::new();
        dirs.write("AGENTS.md", "Run the tests.");
        dirs.write("CLAUDE.md", "@AGENTS.md\n");
        assert_eq!(
            dirs.load("").await.0,
            pairs(&[("AGENTS.md", "Run the tests.")])
        );

        let dirs = Dirs::new();
        dirs.write("AGENTS.md", "@./CLAUDE.md");
        dirs.write("CLAUDE.md", "Run the tests.");
        assert_eq!(
            dirs.load("").await.0,
            pairs(&[("CLAUDE.md", "Run the tests.")])
        );

        // An import among other words is text of its own.
        let dirs = Dirs::new();
        dirs.write("AGENTS.md", "Read @CLAUDE.md too.");
        dirs.write("CLAUDE.md", "Run the tests.");
        assert_eq!(
            dirs.load("").await.0,
            pairs(&[
                ("AGENTS.md", "Read @CLAUDE.md too."),
                ("CLAUDE.md", "Run the tests.")
            ])
        );
    }

    #[tokio::test]
    async fn the_cap_counts_both_files() {
        let dirs = Dirs::new();
        dirs.write("AGENTS.md", &"a".repeat(MAX_MEMORY_CHARS - 10));
        dirs.write("CLAUDE.md", &"c".repeat(20));
        let (files, notices) = dirs.load("").await;
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].1, "c".repeat(10));
        let claude = dirs.project.path().join("CLAUDE.md");
        assert_eq!(
            notices,
            [format!(
                "{} was cut to fit the {MAX_MEMORY_CHARS}-character memory limit",
                claude.display()
            )]
        );
    }

    #[test]
    fn imports_skip_code_and_emails() {
        let text = "See @docs/style.md and @~/notes.md.\n`@not/this.md`\n```\n@nor/this.md\n```\nmail me@example.com";
        assert_eq!(imports_of(text), vec!["docs/style.md", "~/notes.md"]);
    }
}
