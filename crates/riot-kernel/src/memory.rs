//! Memory files (docs/design.md §13): `<riot home>/AGENTS.md`, then
//! `AGENTS.md` (fallback `CLAUDE.md`) in every directory from the project
//! root down to the working directory. `@path` imports are followed up to
//! five levels. The total is capped, with a notice saying what was cut.

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
    let mut memory = Memory::default();
    let mut candidates: Vec<Vec<PathBuf>> = vec![vec![home.join("AGENTS.md")]];
    let root = project_root(fs, cwd).await;
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&root))
        .collect();
    dirs.reverse();
    for d in dirs {
        candidates.push(vec![d.join("AGENTS.md"), d.join("CLAUDE.md")]);
    }
    let mut budget = MAX_MEMORY_CHARS;
    for group in candidates {
        for path in group {
            if let Ok(bytes) = fs.read(&path).await {
                load_file(fs, &path, bytes, home, 0, &mut memory, &mut budget).await;
                break;
            }
        }
    }
    memory
}

async fn load_file(
    fs: &dyn FileSystem,
    path: &Path,
    bytes: Vec<u8>,
    home: &Path,
    depth: usize,
    memory: &mut Memory,
    budget: &mut usize,
) {
    if memory.files.iter().any(|f| f.path == path) {
        return;
    }
    let Ok(text) = String::from_utf8(bytes) else {
        memory.notices.push(format!(
            "{} is not UTF-8 text and was skipped",
            path.display()
        ));
        return;
    };
    let text = if text.chars().count() > *budget {
        memory.notices.push(format!(
            "{} was cut to fit the {MAX_MEMORY_CHARS}-character memory limit",
            path.display()
        ));
        text.chars().take(*budget).collect()
    } else {
        text
    };
    *budget -= text.chars().count();
    let imports = imports_of(&text);
    memory.files.push(MemoryFile {
        path: path.to_path_buf(),
        text,
    });
    for import in imports {
        let target = if let Some(rest) = import.strip_prefix("~/") {
            home.join(rest)
        } else {
            path.parent().unwrap_or(Path::new("/")).join(&import)
        };
        if depth + 1 > MAX_IMPORT_DEPTH {
            memory.notices.push(format!(
                "@{import} in {} was not followed: imports go {MAX_IMPORT_DEPTH} levels deep at most",
                path.display()
            ));
            continue;
        }
        match fs.read(&target).await {
            Ok(bytes) => {
                Box::pin(load_file(
                    fs,
                    &target,
                    bytes,
                    home,
                    depth + 1,
                    memory,
                    budget,
                ))
                .await
            }
            Err(_) => memory
                .notices
                .push(format!("@{import} in {} does not exist", path.display())),
        }
    }
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
    use super::*;

    #[test]
    fn imports_skip_code_and_emails() {
        let text = "See @docs/style.md and @~/notes.md.\n`@not/this.md`\n```\n@nor/this.md\n```\nmail me@example.com";
        assert_eq!(imports_of(text), vec!["docs/style.md", "~/notes.md"]);
    }
}
