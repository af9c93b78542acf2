//! A finished tool call as rows: a header with the call's one-line
//! description, then a compact rendering of its structured payload — a diff
//! with +/- lines for Edit and Write, a command's exit code and the tail of
//! its output, search results, file lists, the todo list.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use riot_protocol::{
    Diagnostic, DiffHunk, DiffLineKind, NotebookCell, SearchMatch, Todo, TodoStatus, ToolResultUi,
    UiPayload, WebResult,
};

use crate::theme::Theme;
use crate::wrap::{hard_wrap, plural, truncate, wrap};

/// Rows of a diff shown before "… N more lines".
pub const DIFF_ROWS: usize = 12;
/// Lines of command output shown (the last ones).
pub const OUTPUT_ROWS: usize = 5;
/// Paths and matches shown before "… N more".
pub const LIST_ROWS: usize = 5;

/// What is known about one finished call.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    /// The tool's name (`Write`).
    pub name: &'a str,
    /// The one-line description, when the call got as far as having one.
    pub describe: &'a str,
    pub ui: Option<&'a ToolResultUi>,
    pub is_error: bool,
    /// What the model was told (first text block): the reason of a
    /// refusal or error.
    pub text: &'a str,
}

/// The rows of a finished call, each at most `width` columns.
pub fn finished(call: Finished<'_>, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let describe = call
        .ui
        .map(|u| u.describe.as_str())
        .filter(|d| !d.is_empty())
        .unwrap_or(if call.describe.is_empty() {
            call.name
        } else {
            call.describe
        });
    let bullet = if call.is_error {
        Span::styled("● ", theme.error())
    } else {
        Span::styled("● ", theme.tool())
    };
    let mut out = wrap(
        &Line::from(Span::styled(
            describe.to_owned(),
            theme
                .dim()
                .remove_modifier(Modifier::DIM)
                .add_modifier(Modifier::BOLD),
        )),
        width,
        &[bullet],
        &[Span::raw("  ")],
    );
    let mut details = Details::new(width, theme);
    match call.ui.and_then(|u| u.payload.as_ref()) {
        Some(payload) => payload_rows(payload, call, &mut details, theme),
        None if call.is_error => {
            let why = call.text.lines().next().unwrap_or("failed");
            details.push(Line::from(Span::styled(why.to_owned(), theme.error())));
        }
        None => {}
    }
    out.extend(details.rows);
    out
}

/// Rows under a header: `⎿ ` before the first, spaces before the rest.
struct Details {
    rows: Vec<Line<'static>>,
    width: usize,
    theme: Theme,
}

impl Details {
    fn new(width: usize, theme: Theme) -> Self {
        Self {
            rows: Vec::new(),
            width,
            theme,
        }
    }

    fn lead(&self) -> Vec<Span<'static>> {
        if self.rows.is_empty() {
            vec![Span::styled("  ⎿ ", self.theme.dim())]
        } else {
            vec![Span::raw("    ")]
        }
    }

    /// A line of words.
    fn push(&mut self, line: Line<'static>) {
        let lead = self.lead();
        self.rows
            .extend(wrap(&line, self.width, &lead, &[Span::raw("    ")]));
    }

    /// A line of code or output, cut to one row.
    fn push_code(&mut self, line: Line<'static>) {
        let lead = self.lead();
        let mut rows = hard_wrap(&line, self.width, &lead, &[Span::raw("    ")]);
        rows.truncate(1);
        self.rows.extend(rows);
    }

    fn more(&mut self, n: usize, what: &str) {
        if n > 0 {
            let dim = self.theme.dim();
            self.push(Line::from(Span::styled(format!("… {n} more {what}"), dim)));
        }
    }
}

/// The first [`DIFF_ROWS`] lines of a diff, and how many more there are.
fn diff_rows(hunks: &[DiffHunk], d: &mut Details, theme: Theme) {
    let lines = crate::preview::diff_lines(hunks, theme);
    let shown = lines.len().min(DIFF_ROWS);
    for line in lines.iter().take(shown) {
        d.push_code(line.line.clone());
    }
    d.more(lines.len() - shown, "lines");
}

/// The rows of a call's structured payload, then the reason of an error
/// (a command's failure shows in its status line instead).
fn payload_rows(payload: &UiPayload, call: Finished<'_>, d: &mut Details, theme: Theme) {
    let dim = theme.dim();
    match payload {
        UiPayload::FileRead {
            start_line,
            lines,
            total_lines,
            truncated,
            ..
        } => {
            let text = file_read_summary(*start_line, *lines, *total_lines, *truncated);
            d.push(Line::from(Span::styled(text, dim)));
        }
        UiPayload::ImageRead {
            media_type, bytes, ..
        } => {
            let kb = (*bytes as f64) / 1024.0;
            d.push(Line::from(Span::styled(
                format!("{media_type}, {kb:.1} KB"),
                dim,
            )));
        }
        UiPayload::NotebookRead { cells, .. } => {
            d.push(Line::from(Span::styled(notebook_read_summary(cells), dim)));
        }
        UiPayload::PdfRead {
            first_page,
            last_page,
            total_pages,
            ..
        } => {
            let text = pdf_read_summary(*first_page, *last_page, *total_pages);
            d.push(Line::from(Span::styled(text, dim)));
        }
        UiPayload::DocumentRead { summary, .. } => {
            d.push(Line::from(Span::styled(format!("Read {summary}"), dim)));
        }
        UiPayload::FileDiff {
            path,
            created,
            hunks,
        } => file_diff_rows(path, *created, hunks, d, theme),
        UiPayload::NotebookCellDiff { cell_id, hunks, .. } => {
            // A question's preview; shown the same way should a tool
            // report one.
            d.push(Line::from(Span::styled(format!("Cell {cell_id}"), dim)));
            diff_rows(hunks, d, theme);
        }
        UiPayload::Command {
            exit_code,
            stdout,
            stderr,
            truncated,
            timed_out,
            background_id,
            ..
        } => {
            let status = command_status(background_id.as_deref(), *timed_out, *exit_code);
            let failed = call.is_error || *timed_out || exit_code.is_some_and(|c| c != 0);
            let style = if failed { theme.error() } else { dim };
            output_rows(status, style, (stdout, stderr), *truncated, d);
        }
        UiPayload::FileList {
            paths,
            total,
            truncated,
            ..
        } => file_list_rows(paths, *total, *truncated, d, dim),
        UiPayload::SearchResults {
            matches,
            total,
            truncated,
            ..
        } => search_rows(matches, *total, *truncated, d, theme),
        UiPayload::Todos { todos } => todo_rows(todos, d, theme),
        UiPayload::Text { text } => text_rows(text, d),
        UiPayload::WebPage {
            status,
            bytes,
            title,
            redirect,
            truncated,
            cached,
            ..
        } => {
            let head = web_page_head(*status, *bytes, redirect.as_deref(), *truncated, *cached);
            d.push(Line::from(Span::styled(head, dim)));
            if let Some(title) = title {
                d.push(Line::from(Span::raw(title.clone())));
            }
        }
        UiPayload::WebResults { results, .. } => web_results_rows(results, d, dim),
        UiPayload::Diagnostics {
            diagnostics, total, ..
        } => diagnostics_rows(diagnostics, *total, d, theme),
    }
    if call.is_error && !matches!(payload, UiPayload::Command { .. }) {
        let why = call.text.lines().next().unwrap_or("failed");
        d.push(Line::from(Span::styled(why.to_owned(), theme.error())));
    }
}

/// What a read of a file's lines showed: `Read 3 lines (lines 1–3 of 9)`.
fn file_read_summary(start_line: u64, lines: u64, total_lines: u64, truncated: bool) -> String {
    let end = start_line + lines.saturating_sub(1);
    let mut text = format!(
        "Read {} (lines {start_line}–{end} of {total_lines})",
        plural(lines, "line", "lines")
    );
    if truncated {
        text.push_str(", cut short");
    }
    text
}

/// What a read of a notebook showed: its cells, and how many of them are
/// code.
fn notebook_read_summary(cells: &[NotebookCell]) -> String {
    let code = cells.iter().filter(|c| c.cell_type == "code").count() as u64;
    format!(
        "Read {} ({code} code)",
        plural(cells.len() as u64, "cell", "cells")
    )
}

/// What a read of a PDF showed: the page or pages, of how many.
fn pdf_read_summary(first_page: u32, last_page: u32, total_pages: u32) -> String {
    if first_page == last_page {
        format!("Read page {first_page} of {total_pages} (PDF)")
    } else {
        format!("Read pages {first_page}–{last_page} of {total_pages} (PDF)")
    }
}

/// A file's diff: how many lines were added and removed (or that the file
/// was created), then its first lines.
fn file_diff_rows(path: &str, created: bool, hunks: &[DiffHunk], d: &mut Details, theme: Theme) {
    let dim = theme.dim();
    let count = |kind: DiffLineKind| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.kind == kind)
            .count()
    };
    let (added, removed) = (count(DiffLineKind::Added), count(DiffLineKind::Removed));
    let summary = if created {
        format!("Created {path} (+{added})")
    } else {
        format!("Updated {path}: +{added} −{removed}")
    };
    d.push(Line::from(vec![Span::styled(summary, dim)]));
    diff_rows(hunks, d, theme);
}

/// How a command ended: its exit code, a timeout, a signal, or that it
/// runs in the background.
fn command_status(background_id: Option<&str>, timed_out: bool, exit_code: Option<i32>) -> String {
    match (background_id, timed_out, exit_code) {
        (Some(id), _, _) => format!("running in the background ({id})"),
        (None, true, _) => "timed out".to_owned(),
        (None, false, Some(0)) => "exit code 0".to_owned(),
        (None, false, Some(code)) => format!("exit code {code}"),
        (None, false, None) => "ended by a signal".to_owned(),
    }
}

/// A command's `status` in `style` with how much of its output shows,
/// then the last [`OUTPUT_ROWS`] non-blank lines of its stdout and
/// stderr.
fn output_rows(
    status: String,
    style: ratatui::style::Style,
    (stdout, stderr): (&str, &str),
    truncated: bool,
    d: &mut Details,
) {
    let output: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &output[output.len().saturating_sub(OUTPUT_ROWS)..];
    let mut head = status;
    if output.len() > tail.len() || truncated {
        head.push_str(&format!("; last {} of {} lines", tail.len(), output.len()));
    } else if output.is_empty() {
        head.push_str(", no output");
    }
    d.push(Line::from(Span::styled(head, style)));
    for line in tail {
        d.push_code(Line::from(Span::raw((*line).to_owned())));
    }
}

/// The files a pattern found: how many, then the first [`LIST_ROWS`].
fn file_list_rows(
    paths: &[String],
    total: u64,
    truncated: bool,
    d: &mut Details,
    dim: ratatui::style::Style,
) {
    let mut head = format!("Found {}", plural(total, "file", "files"));
    if truncated {
        head.push_str(" (list cut short)");
    }
    d.push(Line::from(Span::styled(head, dim)));
    for path in paths.iter().take(LIST_ROWS) {
        d.push_code(Line::from(Span::raw(path.clone())));
    }
    d.more(paths.len().saturating_sub(LIST_ROWS), "files");
}

/// A content search's matches: how many, then the first [`LIST_ROWS`]
/// with their line, text or count.
fn search_rows(
    matches: &[SearchMatch],
    total: u64,
    truncated: bool,
    d: &mut Details,
    theme: Theme,
) {
    let dim = theme.dim();
    let mut head = format!("Found {}", plural(total, "match", "matches"));
    if truncated {
        head.push_str(" (list cut short)");
    }
    d.push(Line::from(Span::styled(head, dim)));
    for m in matches.iter().take(LIST_ROWS) {
        let mut spans = vec![Span::styled(m.path.clone(), theme.code())];
        if let Some(line) = m.line {
            spans.push(Span::styled(format!(":{line}"), dim));
        }
        if let Some(text) = &m.text {
            spans.push(Span::raw(format!("  {}", text.trim())));
        }
        if let Some(count) = m.count {
            spans.push(Span::styled(format!("  ({count})"), dim));
        }
        d.push_code(Line::from(spans));
    }
    d.more(matches.len().saturating_sub(LIST_ROWS), "matches");
}

/// The todo list, each item marked and styled by its status.
fn todo_rows(todos: &[Todo], d: &mut Details, theme: Theme) {
    let dim = theme.dim();
    for todo in todos {
        let (mark, style) = match todo.status {
            TodoStatus::Pending => ("☐ ", ratatui::style::Style::new()),
            TodoStatus::InProgress => ("◐ ", theme.question()),
            TodoStatus::Completed => ("☒ ", dim.add_modifier(Modifier::CROSSED_OUT)),
        };
        d.push(Line::from(vec![
            Span::styled(mark, style),
            Span::styled(todo.content.clone(), style),
        ]));
    }
}

/// Plain text: its first [`LIST_ROWS`] lines, each cut to one row.
fn text_rows(text: &str, d: &mut Details) {
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(LIST_ROWS) {
        d.push_code(Line::from(Span::raw(truncate(line, 400))));
    }
    d.more(lines.len().saturating_sub(LIST_ROWS), "lines");
}

/// What fetching a page got: its HTTP status and size (or the redirect not
/// followed), cut short or cached.
fn web_page_head(
    status: u16,
    bytes: u64,
    redirect: Option<&str>,
    truncated: bool,
    cached: bool,
) -> String {
    let mut head = match redirect {
        Some(to) => format!("HTTP {status}: redirects to {to} (not followed)"),
        None => format!("HTTP {status}, {}", plural(bytes, "byte", "bytes")),
    };
    if truncated {
        head.push_str(" (cut at the download limit)");
    }
    if cached {
        head.push_str(" (cached)");
    }
    head
}

/// A web search's results: how many, then the first [`LIST_ROWS`] titles
/// with their addresses.
fn web_results_rows(results: &[WebResult], d: &mut Details, dim: ratatui::style::Style) {
    d.push(Line::from(Span::styled(
        format!(
            "Found {}",
            plural(results.len() as u64, "result", "results")
        ),
        dim,
    )));
    for r in results.iter().take(LIST_ROWS) {
        d.push(Line::from(vec![
            Span::raw(truncate(&r.title, 200)),
            Span::styled(format!("  {}", r.url), dim),
        ]));
    }
    d.more(results.len().saturating_sub(LIST_ROWS), "results");
}

/// What the checkers found: errors and warnings counted, then the first
/// [`LIST_ROWS`] findings coloured by severity.
fn diagnostics_rows(diagnostics: &[Diagnostic], total: u64, d: &mut Details, theme: Theme) {
    let dim = theme.dim();
    let errors = diagnostics
        .iter()
        .filter(|x| x.severity == riot_protocol::Severity::Error)
        .count() as u64;
    let warnings = diagnostics
        .iter()
        .filter(|x| x.severity == riot_protocol::Severity::Warning)
        .count() as u64;
    d.push(Line::from(Span::styled(
        format!(
            "{}, {}",
            plural(errors, "error", "errors"),
            plural(warnings, "warning", "warnings")
        ),
        dim,
    )));
    for x in diagnostics.iter().take(LIST_ROWS) {
        let style = match x.severity {
            riot_protocol::Severity::Error => theme.error(),
            riot_protocol::Severity::Warning => theme.warning(),
            _ => dim,
        };
        let place = match (x.line, x.column) {
            (0, _) => x.path.clone(),
            (l, 0) => format!("{}:{l}", x.path),
            (l, c) => format!("{}:{l}:{c}", x.path),
        };
        let code = x
            .code
            .as_ref()
            .map_or_else(String::new, |c| format!("[{c}]"));
        d.push(Line::from(vec![
            Span::styled(place, theme.code()),
            Span::styled(format!(" {}{code}", x.severity.as_str()), style),
            Span::raw(format!(" {}", truncate(&x.message, 200))),
        ]));
    }
    d.more(
        (total as usize).saturating_sub(LIST_ROWS.min(diagnostics.len())),
        "diagnostics",
    );
}

#[cfg(test)]
mod diagnostics_tests {
    use riot_protocol::{Diagnostic, Severity};

    use super::*;

    #[test]
    fn diagnostics_list_each_finding_coloured_by_severity() {
        let d = |line, severity, message: &str| Diagnostic {
            path: "src/main.rs".into(),
            line,
            column: 18,
            severity,
            code: Some("E0308".into()),
            message: message.into(),
            source: "cargo".into(),
        };
        let ui = ToolResultUi {
            describe: "Diagnostics".into(),
            payload: Some(UiPayload::Diagnostics {
                checkers: vec!["cargo check".into()],
                diagnostics: vec![
                    d(2, Severity::Error, "mismatched types"),
                    d(5, Severity::Warning, "unused variable"),
                ],
                total: 2,
                truncated: false,
            }),
            duration_ms: 10,
        };
        let call = Finished {
            name: "Diagnostics",
            describe: "Diagnostics",
            ui: Some(&ui),
            is_error: false,
            text: "",
        };
        let theme = Theme::from_no_color(None);
        let rows = finished(call, 80, theme);
        let text: Vec<String> = rows
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(
            text,
            [
                "● Diagnostics",
                "  ⎿ 1 error, 1 warning",
                "    src/main.rs:2:18 error[E0308] mismatched types",
                "    src/main.rs:5:18 warning[E0308] unused variable",
            ]
        );
        let severity = |row: &Line<'_>| {
            row.spans
                .iter()
                .find(|s| s.content.contains("error") || s.content.contains("warning"))
                .map(|s| s.style)
        };
        assert_eq!(severity(&rows[2]), Some(theme.error()));
        assert_eq!(severity(&rows[3]), Some(theme.warning()));
    }
}
