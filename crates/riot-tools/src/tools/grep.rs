//! Grep: search file contents with a regular expression, on ripgrep's own
//! libraries (docs/design.md §6.5).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use riot_protocol::{
    PathAccess, PermissionTarget, PromptContext, SearchMatch, Tool, ToolContext, ToolOutcome,
    UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::freshness::display_path;
use crate::tools::grep_sink::{FileHits, HitSink, Line};
use crate::tools::{schema_of, walker};

/// Entries shown when `head_limit` is not given.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Longer matched lines are cut in `content` output.
const MAX_LINE_CHARS: usize = 500;

/// What Grep returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Paths of files with a match (default).
    #[default]
    FilesWithMatches,
    /// Matching lines, with context when asked.
    Content,
    /// Number of matching lines per file.
    Count,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// A Rust/ripgrep regular expression.
    pub pattern: String,
    /// File or directory to search (default: the project directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose path matches this glob, e.g. `*.rs` or `src/**/*.ts` (rg -g).
    #[serde(default)]
    pub glob: Option<String>,
    /// Only files of this ripgrep type, e.g. `rust`, `py`, `js` (rg --type).
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Case-insensitive.
    #[serde(default, rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Line numbers in `content` mode (default true).
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (`content` mode).
    #[serde(default, rename = "-A")]
    pub after: Option<usize>,
    /// Lines of context before each match (`content` mode).
    #[serde(default, rename = "-B")]
    pub before: Option<usize>,
    /// Lines of context before and after each match (`content` mode).
    #[serde(default, rename = "-C")]
    pub context: Option<usize>,
    /// Let `.` match newlines and patterns span lines.
    #[serde(default)]
    pub multiline: Option<bool>,
    /// Entries (files, lines or counts) shown at most (default 250; 0: all).
    #[serde(default)]
    pub head_limit: Option<usize>,
    /// Entries skipped before the first shown.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// The Grep tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Grep;

fn matcher(input: &GrepInput) -> Result<RegexMatcher, ValidationError> {
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(input.case_insensitive.unwrap_or(false));
    if input.multiline.unwrap_or(false) {
        b.multi_line(true).dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&input.pattern).map_err(|e| {
        ValidationError::rejected(format!(
            "`pattern` is not a valid regular expression: {e}\nGrep uses Rust regex syntax (like ripgrep). Escape characters that are literal in your search with `\\`, e.g. `interface\\{{\\}}` to find `interface{{}}` or `fn main\\(` to find `fn main(`."
        ))
    })
}

fn filters(
    input: &GrepInput,
    base: &Path,
) -> Result<
    (
        Option<ignore::overrides::Override>,
        Option<ignore::types::Types>,
    ),
    ValidationError,
> {
    let overrides = match &input.glob {
        None => None,
        Some(glob) => {
            let mut ob = ignore::overrides::OverrideBuilder::new(base);
            // rg -g: `{a,b}` alternatives within one flag.
            ob.add(glob).map_err(|e| {
                ValidationError::rejected(format!(
                    "`glob` is not a valid glob ({e}). Write e.g. `*.rs` or `src/**/*.{{ts,tsx}}`."
                ))
            })?;
            Some(ob.build().map_err(|e| {
                ValidationError::rejected(format!("`glob` is not a valid glob ({e})."))
            })?)
        }
    };
    let types = match &input.file_type {
        None => None,
        Some(t) => {
            let mut tb = ignore::types::TypesBuilder::new();
            tb.add_defaults();
            let known = tb.definitions().iter().any(|d| d.name() == t);
            if !known {
                return Err(ValidationError::rejected(format!(
                    "`type` `{t}` is not a ripgrep file type. Use a name such as rust, py, js, ts, go, java, c, cpp, md, json, yaml, or use `glob` (e.g. `*.ext`) instead."
                )));
            }
            tb.select(t);
            Some(tb.build().map_err(|e| {
                ValidationError::rejected(format!("`type` could not be used ({e})."))
            })?)
        }
    };
    Ok((overrides, types))
}

fn base_path(input: &GrepInput, ctx: &ToolContext) -> PathBuf {
    match &input.path {
        Some(p) => ctx.resolve(p),
        None => ctx.env.cwd.clone(),
    }
}

struct Search {
    files: Vec<FileHits>,
    searched: u64,
    /// Files not searched because they may hold secrets, sorted.
    secrets: Vec<PathBuf>,
}

/// Names of skipped secret files shown at most.
const SECRETS_NAMED: usize = 5;

/// Whether the permission chain treats reading `path` as touching a secret
/// (`.env`, key files, credential directories): it asks before a Read.
fn holds_secrets(path: &Path) -> bool {
    riot_permissions::paths::classify(&path.to_string_lossy(), None)
        .is_some_and(|s| s.applies_to_reads())
}

fn run_search(
    input: &GrepInput,
    base: &Path,
    matcher: &RegexMatcher,
    cancel: &CancellationToken,
) -> Result<Search, ValidationError> {
    let (overrides, types) = filters(input, base)?;
    let mode = input.output_mode.unwrap_or_default();
    let (before, after) = match mode {
        OutputMode::Content => (
            input.before.or(input.context).unwrap_or(0),
            input.after.or(input.context).unwrap_or(0),
        ),
        _ => (0, 0),
    };
    let builder = {
        let mut b = SearcherBuilder::new();
        b.line_number(true)
            .before_context(before)
            .after_context(after)
            .multi_line(input.multiline.unwrap_or(false))
            .binary_detection(BinaryDetection::quit(b'\x00'));
        b
    };
    let mut wb = walker(base, false);
    if let Some(o) = overrides {
        wb.overrides(o);
    }
    if let Some(t) = types {
        wb.types(t);
    }
    // Walk and search in parallel like rg, then sort: the order the model
    // sees must not depend on thread timing (docs/design.md §6.5: by path).
    let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let searched = AtomicU64::new(0);
    // A recursive search never shows a secret's contents: the permission
    // chain asks before a Read of one, and a walk would go around that.
    // Named as `path` (or inside a secret directory named as `path`), the
    // chain asked about it already.
    let skip_secrets = !holds_secrets(base);
    let secrets: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let keep_lines = mode == OutputMode::Content;
    wb.threads(0).build_parallel().run(|| {
        let mut searcher: Searcher = builder.build();
        let found = &found;
        let searched = &searched;
        let secrets = &secrets;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if skip_secrets && entry.depth() > 0 && holds_secrets(entry.path()) {
                secrets
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(entry.into_path());
                return WalkState::Continue;
            }
            searched.fetch_add(1, Ordering::Relaxed);
            let mut sink = HitSink::new(keep_lines);
            // An unreadable file is skipped, as rg does (with a message there).
            if searcher
                .search_path(matcher, entry.path(), &mut sink)
                .is_ok()
                && sink.count > 0
            {
                let hits = sink.finish(entry.into_path());
                found.lock().unwrap_or_else(|e| e.into_inner()).push(hits);
            }
            WalkState::Continue
        })
    });
    let mut files = found.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut secrets = secrets.into_inner().unwrap_or_else(|e| e.into_inner());
    secrets.sort();
    Ok(Search {
        files,
        searched: searched.into_inner(),
        secrets,
    })
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn cut_line(text: &str) -> String {
    if text.chars().count() > MAX_LINE_CHARS {
        let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
        format!("{kept}… [line cut at {MAX_LINE_CHARS} characters]")
    } else {
        text.to_owned()
    }
}

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Searches file contents with a ripgrep regex `pattern`. `output_mode`: files_with_matches (default), content (matching lines; -n line numbers, -A/-B/-C context), count. Narrow with `path`, `glob` (`*.rs`) or `type` (`rust`); -i ignores case; `multiline` spans lines. `head_limit` (default 250, 0 for all) and `offset` page the results. Ignored, hidden and binary files are skipped.\nNEVER search with grep, rg or find in Bash.";

#[async_trait]
impl Tool for Grep {
    type Input = GrepInput;

    fn name(&self) -> &str {
        "Grep"
    }

    fn input_schema(&self) -> Value {
        schema_of::<GrepInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Searches file contents with a regular expression, with ripgrep's engine and rules.\n\n\
             - `pattern` is Rust regex syntax (like rg): escape literal `{ } ( ) [ ] . * + ?` with `\\`.\n\
             - `output_mode`: `files_with_matches` (default: paths only), `content` (matching lines; `-n` line numbers, on by default; `-A`/`-B`/`-C` context lines), `count` (matching lines per file).\n\
             - Filter with `glob` (e.g. `*.rs`, `src/**/*.{ts,tsx}`) or `type` (rust, py, js, …); `-i` ignores case; `multiline: true` lets patterns span lines and `.` match newlines.\n\
             - Files ignored by .gitignore, hidden files and binary files are skipped, as rg does. Files that may hold secrets (`.env`, key files, credentials) are skipped too and listed; name one as `path` to search it (the person is asked).\n\
             - Results are sorted by path; at most `head_limit` entries (default 250; 0 for all) after skipping `offset`; when more exist the result says so, and how to get the rest.\n",
        );
        if cx.has_tool("Glob") {
            p.push_str("\nGrep searches inside files; to find files by name use Glob.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - run `grep` or `rg` through Bash; use Grep.\n\
             - treat no matches as proof: the file may be ignored by .gitignore or hidden.\n\
             - request `content` over a whole large tree without `glob`/`type` or `head_limit`; start with files_with_matches.\n",
        );
        p
    }

    fn describe(&self, input: &GrepInput) -> String {
        match &input.path {
            Some(path) => format!("Grep \"{}\" in {path}", input.pattern),
            None => format!("Grep \"{}\"", input.pattern),
        }
    }

    fn is_read_only(&self, _input: &GrepInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &GrepInput) -> bool {
        true
    }

    fn classifier_input(&self, input: &GrepInput) -> Option<String> {
        Some(self.describe(input))
    }

    fn permission_target(&self, input: &GrepInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: base_path(input, ctx),
            access: PathAccess::Read,
        }
    }

    async fn validate_input(
        &self,
        input: &GrepInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.pattern.is_empty() {
            return Err(ValidationError::rejected(
                "`pattern` must not be empty. To list files use Glob.",
            ));
        }
        // docs/design.md §6.3: the regex is compiled before anything runs.
        matcher(input)?;
        let base = base_path(input, ctx);
        filters(input, &base)?;
        if ctx.env.fs.metadata(&base).await.is_err() {
            return Err(ValidationError::rejected(format!(
                "{} does not exist. Check `path`, or omit it to search the project.",
                base.display()
            )));
        }
        Ok(())
    }

    async fn call(&self, input: GrepInput, ctx: &ToolContext) -> ToolOutcome {
        let m = match matcher(&input) {
            Ok(m) => m,
            Err(e) => return ToolOutcome::failed(e.message),
        };
        let base = base_path(&input, ctx);
        let cancel = ctx.cancel.clone();
        let search_input = input.clone();
        let search_base = base.clone();
        let searched = tokio::task::spawn_blocking(move || {
            run_search(&search_input, &search_base, &m, &cancel)
        })
        .await;
        let search = match searched {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return ToolOutcome::failed(e.message),
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "The search stopped unexpectedly ({e}). Retry it."
                ));
            }
        };
        if ctx.cancel.is_cancelled() {
            return ToolOutcome::Cancelled;
        }
        render(&input, ctx, &base, search)
    }
}

/// The closing line about skipped secret files, if any were skipped.
fn secrets_note(ctx: &ToolContext, secrets: &[PathBuf]) -> Option<String> {
    let (count, first) = match secrets {
        [] => return None,
        [_] => ("1 file".to_owned(), "name it"),
        many => (format!("{} files", many.len()), "name one"),
    };
    let mut names: Vec<String> = secrets
        .iter()
        .take(SECRETS_NAMED)
        .map(|p| display_path(ctx, p))
        .collect();
    if secrets.len() > SECRETS_NAMED {
        names.push(format!("and {} more", secrets.len() - SECRETS_NAMED));
    }
    Some(format!(
        "(skipped {count} that may hold secrets: {} — {first} as `path` to search it)",
        names.join(", ")
    ))
}

/// One listed entry: its line of text for the model, and its match for
/// the UI.
type Entry = (String, SearchMatch);

/// The entries of a search's files in `mode` (paths, counts or lines),
/// and the number of matching lines in all.
fn entries(
    ctx: &ToolContext,
    files: &[FileHits],
    mode: OutputMode,
    numbers: bool,
) -> (Vec<Entry>, u64) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut total_lines = 0u64;
    for file in files {
        let path = display_path(ctx, &file.path);
        total_lines += file.count;
        match mode {
            OutputMode::FilesWithMatches => entries.push((
                path.clone(),
                SearchMatch {
                    path,
                    line: None,
                    text: None,
                    count: None,
                },
            )),
            OutputMode::Count => entries.push((
                format!("{path}:{}", file.count),
                SearchMatch {
                    path,
                    line: None,
                    text: None,
                    count: Some(file.count),
                },
            )),
            OutputMode::Content => push_lines(&mut entries, &path, file, numbers),
        }
    }
    (entries, total_lines)
}

/// Adds a file's matching and context lines (`content` mode), with a
/// `--` between groups of lines that are not adjacent.
fn push_lines(entries: &mut Vec<Entry>, path: &str, file: &FileHits, numbers: bool) {
    let mut prev: Option<u64> = None;
    for Line {
        number,
        text,
        is_match,
    } in &file.lines
    {
        if let Some(p) = prev
            && *number > p + 1
        {
            entries.push((
                "--".to_owned(),
                SearchMatch {
                    path: path.to_owned(),
                    line: None,
                    text: None,
                    count: None,
                },
            ));
        }
        prev = Some(*number);
        let sep = if *is_match { ':' } else { '-' };
        let shown = cut_line(text);
        let line = if numbers {
            format!("{path}{sep}{number}{sep}{shown}")
        } else {
            format!("{path}{sep}{shown}")
        };
        entries.push((
            line,
            SearchMatch {
                path: path.to_owned(),
                line: Some(*number),
                text: Some(shown),
                count: None,
            },
        ));
    }
}

/// The result of a search that matched nothing, with the usual reason a
/// file that exists was not found.
fn no_matches(
    input: &GrepInput,
    ctx: &ToolContext,
    base: &Path,
    searched: u64,
    secrets: Option<String>,
) -> ToolOutcome {
    let mut text = format!(
        "No matches for `{}` in {} ({} files searched). Files ignored by .gitignore, hidden files and binary files are not searched, as with ripgrep; that is the usual reason a file that exists was not found.",
        input.pattern,
        display_path(ctx, base),
        searched
    );
    if let Some(note) = secrets {
        text.push_str("\n\n");
        text.push_str(&note);
    }
    ToolOutcome::text(
        text,
        Some(UiPayload::SearchResults {
            pattern: input.pattern.clone(),
            matches: vec![],
            total: 0,
            truncated: false,
        }),
    )
}

/// Adds the closing lines: which entries are shown and how to get the
/// next ones when not all are, then the note about skipped secret files.
fn push_footer(
    text: &mut String,
    skip: usize,
    shown: usize,
    total: usize,
    truncated: bool,
    secrets: Option<&str>,
) {
    if truncated || skip > 0 {
        let first = skip + 1;
        let last = skip + shown;
        text.push_str(&format!("\n\n(Showing entries {first}-{last} of {total}."));
        if truncated {
            text.push_str(&format!(" Use offset={last} for the next ones, or narrow the search with `glob`, `type` or `path`."));
        }
        text.push(')');
        if let Some(note) = secrets {
            text.push('\n');
            text.push_str(note);
        }
    } else if let Some(note) = secrets {
        text.push_str("\n\n");
        text.push_str(note);
    }
}

/// The result of a search: a header, the page of entries asked for and
/// the closing lines, with the matches for the UI.
fn render(input: &GrepInput, ctx: &ToolContext, base: &Path, search: Search) -> ToolOutcome {
    let secrets = secrets_note(ctx, &search.secrets);
    let mode = input.output_mode.unwrap_or_default();
    // 0 means no limit, as Claude Code's Grep reads it; the result budget
    // still spills what is too big to send.
    let limit = match input.head_limit {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => DEFAULT_HEAD_LIMIT,
    };
    let skip = input.offset.unwrap_or(0);
    let numbers = input.line_numbers.unwrap_or(true);
    let (entries, total_lines) = entries(ctx, &search.files, mode, numbers);
    let total = entries.len();
    let shown: Vec<Entry> = entries.into_iter().skip(skip).take(limit).collect();
    let truncated = skip + shown.len() < total;
    if search.files.is_empty() {
        return no_matches(input, ctx, base, search.searched, secrets);
    }
    let files = plural(search.files.len() as u64, "file", "files");
    let header = match mode {
        OutputMode::FilesWithMatches => format!("Found {files}"),
        OutputMode::Count | OutputMode::Content => {
            format!(
                "{} in {files}",
                plural(total_lines, "matching line", "matching lines")
            )
        }
    };
    let mut text = header;
    text.push('\n');
    text.push_str(
        &shown
            .iter()
            .map(|(l, _)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    push_footer(
        &mut text,
        skip,
        shown.len(),
        total,
        truncated,
        secrets.as_deref(),
    );
    let matches = shown
        .into_iter()
        .map(|(_, m)| m)
        .filter(|m| m.line.is_some() || m.text.is_none())
        .collect();
    ToolOutcome::text(
        text,
        Some(UiPayload::SearchResults {
            pattern: input.pattern.clone(),
            matches,
            total: total as u64,
            truncated,
        }),
    )
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
