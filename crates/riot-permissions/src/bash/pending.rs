//! Checks that need the disk: which files a glob reaches, and whether a
//! tree a recursive reader would print holds secret files. The analysis
//! records them; the policy settles them through its injected
//! [`FileSystem`]. Without one — or when the answer would take too long
//! to find — the worst is assumed.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use riot_protocol::{FileKind, FileSystem};

use super::CommandAnalysis;
use crate::paths::{self, Sensitivity};

/// A glob (after resolving variables) whose matches decide the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingGlob {
    /// The word as written, for messages.
    pub raw: String,
    /// The pattern: absolute when the directory it runs in is known.
    pub patterns: Vec<String>,
    /// The command writes (or may write) what the glob names.
    pub write: bool,
}

/// A directory a recursive reader would print every file of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingTree {
    /// The reader as written (`grep -r KEY .`).
    pub command: String,
    /// The directory, absolute when known.
    pub root: String,
}

/// Most directory listings one glob may take.
const MAX_LISTINGS: usize = 256;
/// Most paths one glob may reach before the answer is "too many".
const MAX_MATCHES: usize = 4096;
/// Most entries looked at under one recursive reader's root.
pub const MAX_TREE_ENTRIES: usize = 20_000;
/// Directories the secret search does not enter: tool caches and build
/// output, where a person's own secrets do not live.
const TREE_SKIPS: &[&str] = &[".git", "node_modules", "target"];

/// Paths this far apart are checked as a set of candidates.
const MAX_CANDIDATES: usize = 512;

/// Protection context for the checks.
pub struct Protect<'a> {
    pub home: Option<&'a Path>,
    pub riot_home: Option<&'a Path>,
}

impl Protect<'_> {
    fn classify(&self, path: &str) -> Option<Sensitivity> {
        paths::classify_for(path, self.home, self.riot_home)
    }
}

/// Settles every pending check, adding findings to the analysis.
pub async fn settle(
    analysis: &mut CommandAnalysis,
    fs: Option<&dyn FileSystem>,
    protect: &Protect<'_>,
) {
    for glob in std::mem::take(&mut analysis.pending_globs) {
        // Braces expand whether or not the files exist (`pre-commi{t,}`):
        // their alternatives are judged as written.
        let braced = glob.patterns.iter().flat_map(|p| expand_braces(p));
        if let Some(finding) = braced.filter(|p| !has_glob(p)).find_map(|p| {
            protect
                .classify(&p)
                .filter(|s| glob.write || s.applies_to_reads())
                .map(|s| format!("`{}` expands to `{p}`: {}", glob.raw, s.detail()))
        }) {
            analysis.note_dangerous(finding);
        }
        for pattern in &glob.patterns {
            let absolute = pattern.starts_with('/');
            let found = match fs {
                Some(fs) if absolute => expand_on_disk(fs, pattern).await,
                _ => Err(()),
            };
            let finding = match found {
                Ok(matches) => matches.iter().find_map(|m| {
                    protect
                        .classify(m)
                        .filter(|s| glob.write || s.applies_to_reads())
                        .map(|s| format!("`{}` reaches `{m}`: {}", glob.raw, s.detail()))
                }),
                Err(()) => could_reach(pattern, protect)
                    .filter(|s| glob.write || s.applies_to_reads())
                    .map(|s| {
                        format!(
                            "`{}` is expanded by the shell and could reach a protected path: {}",
                            glob.raw,
                            s.detail()
                        )
                    }),
            };
            if let Some(finding) = finding {
                analysis.note_dangerous(finding);
            }
        }
    }
    for tree in std::mem::take(&mut analysis.pending_trees) {
        let finding = match fs {
            Some(fs) if tree.root.starts_with('/') => {
                secret_in_tree(fs, Path::new(&tree.root), protect).await
            }
            _ => Some(format!(
                "Riot cannot look inside `{}` for secret files",
                tree.root
            )),
        };
        if let Some(finding) = finding {
            analysis.note_dangerous(format!(
                "`{}` prints every file it searches, and {finding}",
                tree.command.trim()
            ));
        }
    }
}

/// Most alternatives one brace expansion is followed to.
const MAX_BRACE_ALTERNATIVES: usize = 64;

/// The shell's brace expansion of comma lists (`a{b,c}d` is `abd acd`),
/// nested ones included, at most [`MAX_BRACE_ALTERNATIVES`] results.
/// Sequences (`{1..3}`) and unmatched braces stay as written.
pub(super) fn expand_braces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut work = vec![text.to_owned()];
    while let Some(t) = work.pop() {
        if out.len() + work.len() > MAX_BRACE_ALTERNATIVES {
            break;
        }
        match split_first_brace(&t) {
            Some((pre, alts, post)) => {
                for alt in alts {
                    work.push(format!("{pre}{alt}{post}"));
                }
            }
            None => out.push(t),
        }
    }
    out
}

/// The first `{...}` with a top-level comma: (before, alternatives, after).
fn split_first_brace(text: &str) -> Option<(&str, Vec<&str>, &str)> {
    for (start, _) in text.match_indices('{') {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (i, b) in text.bytes().enumerate().skip(start) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let mut alts = Vec::new();
                        let mut from = start + 1;
                        for c in &commas {
                            alts.push(&text[from..*c]);
                            from = c + 1;
                        }
                        alts.push(&text[from..i]);
                        return Some((&text[..start], alts, &text[i + 1..]));
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    None
}

fn matcher(component: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(component)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

pub(super) fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// The shell's rule for hidden files: a name starting with `.` is matched
/// only by a pattern that starts with a literal `.`.
fn glob_matches(pattern: &str, m: &GlobMatcher, name: &str) -> bool {
    (!name.starts_with('.') || pattern.starts_with('.')) && m.is_match(name)
}

/// The paths an absolute glob matches on disk. `Err` when it would take
/// too many listings or matches to know.
async fn expand_on_disk(fs: &dyn FileSystem, pattern: &str) -> Result<Vec<String>, ()> {
    let mut current = vec![PathBuf::from("/")];
    let mut listings = 0;
    for comp in paths::components(pattern) {
        if comp == ".." {
            current = current
                .into_iter()
                .map(|p| p.parent().map(Path::to_path_buf).unwrap_or(p))
                .collect();
            continue;
        }
        if !has_glob(comp) {
            for p in &mut current {
                p.push(comp);
            }
            continue;
        }
        let m = matcher(comp).ok_or(())?;
        let mut next = Vec::new();
        for dir in &current {
            listings += 1;
            if listings > MAX_LISTINGS {
                return Err(());
            }
            let Ok(entries) = fs.read_dir(dir).await else {
                continue;
            };
            for entry in entries {
                let Some(name) = entry.path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if glob_matches(comp, &m, name) {
                    next.push(dir.join(name));
                    if next.len() > MAX_MATCHES {
                        return Err(());
                    }
                }
            }
        }
        current = next;
    }
    Ok(current
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect())
}

/// Without the disk: whether some protected name fits each globbed
/// component, by the shell's rules (a hidden name needs a literal `.`).
/// Returns the strongest finding among the candidates.
pub(super) fn could_reach(pattern: &str, protect: &Protect<'_>) -> Option<Sensitivity> {
    candidates_reach(pattern, protect, true)
}

/// [`could_reach`] for a search tool's name filter (`--include`, `-g`),
/// where `*` matches hidden names too.
pub(super) fn could_reach_by_name(pattern: &str, protect: &Protect<'_>) -> Option<Sensitivity> {
    candidates_reach(pattern, protect, false)
}

fn candidates_reach(
    pattern: &str,
    protect: &Protect<'_>,
    shell_dot_rule: bool,
) -> Option<Sensitivity> {
    let mut candidates = vec![String::new()];
    let absolute = pattern.starts_with('/');
    for comp in paths::components(pattern) {
        let names: Vec<String> = if has_glob(comp) {
            let Some(m) = matcher(comp) else {
                // A pattern the matcher cannot read: anything.
                return Some(Sensitivity::WriteSensitive(format!(
                    "`{comp}` could name anything"
                )));
            };
            paths::protected_names()
                .filter(|name| !shell_dot_rule || glob_matches(comp, &m, name))
                .filter(|name| m.is_match(name))
                .map(str::to_owned)
                .chain(["unprotected-name".to_owned()])
                .collect()
        } else {
            vec![comp.to_owned()]
        };
        let mut next = Vec::new();
        for c in &candidates {
            for n in &names {
                next.push(if c.is_empty() {
                    n.clone()
                } else {
                    format!("{c}/{n}")
                });
            }
        }
        if next.len() > MAX_CANDIDATES {
            return Some(Sensitivity::WriteSensitive(format!(
                "`{pattern}` could name too many paths to check"
            )));
        }
        candidates = next;
    }
    let mut write_only = None;
    for c in candidates {
        let path = if absolute { format!("/{c}") } else { c };
        match protect.classify(&path) {
            Some(s) if s.applies_to_reads() => return Some(s),
            Some(s) => {
                write_only.get_or_insert(s);
            }
            None => {}
        }
    }
    write_only
}

/// The first secret file under `root` (a readable description), or a
/// reason the tree could not be checked.
async fn secret_in_tree(fs: &dyn FileSystem, root: &Path, protect: &Protect<'_>) -> Option<String> {
    let root_s = root.to_string_lossy();
    if let Some(s) = protect
        .classify(&root_s)
        .filter(Sensitivity::applies_to_reads)
    {
        return Some(format!("`{root_s}` {}", s.detail()));
    }
    let mut queue = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = queue.pop() {
        let Ok(entries) = fs.read_dir(&dir).await else {
            continue;
        };
        for entry in entries {
            seen += 1;
            if seen > MAX_TREE_ENTRIES {
                return Some(format!(
                    "`{root_s}` holds more than {MAX_TREE_ENTRIES} entries, too many to check for secret files"
                ));
            }
            let name = entry
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match entry.kind {
                FileKind::Dir => {
                    if !TREE_SKIPS.contains(&name.as_str()) {
                        queue.push(entry.path.clone());
                    }
                }
                FileKind::Symlink => {
                    // `grep -R` and `rg -L` follow links: judge where the
                    // link leads, and its own name.
                    let link = entry.path.to_string_lossy().into_owned();
                    let target = fs.canonicalize(&entry.path).await.ok();
                    let target = target.map(|t| t.to_string_lossy().into_owned());
                    for path in [Some(link), target].into_iter().flatten() {
                        if let Some(s) = protect
                            .classify(&path)
                            .filter(Sensitivity::applies_to_reads)
                        {
                            return Some(format!("`{root_s}` links to `{path}`: {}", s.detail()));
                        }
                    }
                }
                _ => {
                    let path = entry.path.to_string_lossy();
                    if let Some(s) = protect
                        .classify(&path)
                        .filter(Sensitivity::applies_to_reads)
                    {
                        let shown = entry
                            .path
                            .strip_prefix(root)
                            .map(|p| p.to_string_lossy().into_owned())
                            .unwrap_or_else(|_| path.into_owned());
                        return Some(format!("`{root_s}` holds `{shown}`: {}", s.detail()));
                    }
                }
            }
        }
    }
    None
}
