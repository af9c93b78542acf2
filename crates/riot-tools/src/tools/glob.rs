//! Glob: find files by name pattern (docs/design.md §6.5).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::GlobBuilder;
use riot_protocol::{
    PathAccess, PermissionTarget, PromptContext, Tool, ToolContext, ToolOutcome, UiPayload,
    ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::freshness::display_path;
use crate::tools::{schema_of, walker};

/// Paths returned at most; the total is stated when more matched.
pub const MAX_RESULTS: usize = 100;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// A glob such as `**/*.rs` or `src/**/mod.rs`, relative to `path`.
    pub pattern: String,
    /// The directory to search (default: the project directory).
    #[serde(default)]
    pub path: Option<String>,
}

/// The Glob tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Glob;

fn compile(pattern: &str) -> Result<globset::GlobMatcher, ValidationError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            ValidationError::rejected(format!(
                "`pattern` is not a valid glob ({e}). Use `*` within one directory level, `**` across levels, `?` for one character, `{{a,b}}` for alternatives, e.g. `src/**/*.rs`."
            ))
        })
}

/// Splits an absolute pattern into the directory before its first wildcard
/// and the rest.
fn split_absolute(pattern: &str) -> (Option<PathBuf>, String) {
    if !pattern.starts_with('/') {
        return (None, pattern.to_owned());
    }
    let mut base = PathBuf::from("/");
    let mut rest = Vec::new();
    let mut in_glob = false;
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        if !in_glob && !part.contains(['*', '?', '[', '{']) {
            base.push(part);
        } else {
            in_glob = true;
            rest.push(part);
        }
    }
    (Some(base), rest.join("/"))
}

struct Found {
    path: PathBuf,
    mtime_ms: u64,
}

fn walk(
    base: &Path,
    pattern: &str,
    matcher: &globset::GlobMatcher,
    cancel: &CancellationToken,
) -> Vec<Found> {
    // A pattern naming a hidden component (`.github/**`) searches hidden paths.
    let hidden = pattern
        .split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..");
    let mut found = Vec::new();
    for entry in walker(base, hidden).build().flatten() {
        if cancel.is_cancelled() {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(base) else {
            continue;
        };
        if matcher.is_match(rel) {
            let mtime_ms = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            found.push(Found {
                path: entry.into_path(),
                mtime_ms,
            });
        }
    }
    // docs/design.md §6.5: newest first, then by path, so equal times are stable.
    found.sort_by(|a, b| {
        b.mtime_ms
            .cmp(&a.mtime_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
    found
}

fn base_dir(input: &GlobInput, ctx: &ToolContext) -> (PathBuf, String) {
    // `~/notes/*.md` searches the home directory, as `/…` patterns search
    // from the root.
    let pattern = match ctx.env.expand_home(&input.pattern) {
        Some(expanded) => expanded.to_string_lossy().into_owned(),
        None => input.pattern.clone(),
    };
    let (abs_base, rel_pattern) = split_absolute(&pattern);
    let base = match (abs_base, &input.path) {
        (Some(b), _) => b,
        (None, Some(p)) => ctx.resolve(p),
        (None, None) => ctx.env.cwd.clone(),
    };
    (base, rel_pattern)
}

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Finds files by path pattern (`**/*.rs`, `src/**/test_*.py`) under `path` (default: the project), newest first, at most 100. Files ignored by .gitignore and hidden files are skipped.\nNEVER use find or ls -R in Bash.";

#[async_trait]
impl Tool for Glob {
    type Input = GlobInput;

    fn name(&self) -> &str {
        "Glob"
    }

    fn input_schema(&self) -> Value {
        schema_of::<GlobInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Finds files whose path matches a glob pattern, like `**/*.rs` or `src/**/test_*.py`.\n\n\
             - The pattern is matched against the path relative to `path` (default: the project directory); `*` stays within one directory level, `**` crosses levels, `{a,b}` gives alternatives.\n\
             - Like ripgrep: files ignored by .gitignore/.ignore, hidden files (unless the pattern names a hidden directory such as `.github/**`) and the .git directory are skipped.\n\
             - Results are sorted by modification time, newest first, at most 100 paths; when more match, the total is stated.\n",
        );
        if cx.has_tool("Grep") {
            p.push_str("\nGlob matches file names only; to search inside files use Grep.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - use Bash `find` or `ls -R` to find files; use Glob.\n\
             - conclude a file does not exist without considering that .gitignore may hide it.\n\
             - use a bare `*.ext` expecting a recursive search; write `**/*.ext`.\n",
        );
        p
    }

    fn describe(&self, input: &GlobInput) -> String {
        match &input.path {
            Some(path) => format!("Glob {} in {path}", input.pattern),
            None => format!("Glob {}", input.pattern),
        }
    }

    fn is_read_only(&self, _input: &GlobInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &GlobInput) -> bool {
        true
    }

    fn classifier_input(&self, input: &GlobInput) -> Option<String> {
        Some(self.describe(input))
    }

    fn permission_target(&self, input: &GlobInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: base_dir(input, ctx).0,
            access: PathAccess::Read,
        }
    }

    async fn validate_input(
        &self,
        input: &GlobInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.pattern.trim().is_empty() {
            return Err(ValidationError::rejected(
                "`pattern` must not be empty. To list every file use `**/*`.",
            ));
        }
        let (base, rel) = base_dir(input, ctx);
        compile(if rel.is_empty() { "*" } else { &rel })?;
        match ctx.env.fs.metadata(&base).await {
            Ok(m) if m.kind == riot_protocol::FileKind::Dir => Ok(()),
            Ok(_) => Err(ValidationError::rejected(format!(
                "`path` {} is a file, not a directory. Give the directory to search.",
                base.display()
            ))),
            Err(_) => Err(ValidationError::rejected(format!(
                "The directory {} does not exist. Check `path`, or omit it to search the project.",
                base.display()
            ))),
        }
    }

    async fn call(&self, input: GlobInput, ctx: &ToolContext) -> ToolOutcome {
        let (base, rel) = base_dir(&input, ctx);
        let rel = if rel.is_empty() { "*".to_owned() } else { rel };
        let matcher = match compile(&rel) {
            Ok(m) => m,
            Err(e) => return ToolOutcome::failed(e.message),
        };
        let cancel = ctx.cancel.clone();
        let walk_base = base.clone();
        let walk_pattern = rel.clone();
        let found = match tokio::task::spawn_blocking(move || {
            walk(&walk_base, &walk_pattern, &matcher, &cancel)
        })
        .await
        {
            Ok(found) => found,
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "The search stopped unexpectedly ({e}). Retry it."
                ));
            }
        };
        if ctx.cancel.is_cancelled() {
            return ToolOutcome::Cancelled;
        }
        let total = found.len();
        let shown: Vec<String> = found
            .iter()
            .take(MAX_RESULTS)
            .map(|f| display_path(ctx, &f.path))
            .collect();
        let truncated = total > shown.len();
        let text = if total == 0 {
            format!(
                "No files match `{}` under {}. Files ignored by .gitignore and hidden files are not searched; if the file should exist, check the pattern (`**/` for subdirectories).",
                input.pattern,
                display_path(ctx, &base)
            )
        } else {
            let mut t = shown.join("\n");
            if truncated {
                t.push_str(&format!(
                    "\n\n(Showing the {MAX_RESULTS} most recently modified of {total} matching files. Narrow the pattern or `path` to see the rest.)"
                ));
            }
            t
        };
        ToolOutcome::text(
            text,
            Some(UiPayload::FileList {
                pattern: input.pattern,
                paths: shown,
                total: total as u64,
                truncated,
            }),
        )
    }
}

#[cfg(test)]
#[path = "glob_tests.rs"]
mod tests;
