//! Read: numbered lines of a text file, or an image (docs/design.md §6.4).

use async_trait::async_trait;
use riot_protocol::{
    FileView, PathAccess, PermissionTarget, PromptContext, ResultBudget, Tool, ToolContext,
    ToolOutcome, UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::freshness::{display_path, record_hash, resolve_path};
use crate::tools::notebook;
use crate::tools::read_image;
use crate::tools::read_office::{self, Format};
use crate::tools::read_pdf;
use crate::tools::read_scan::{ScanError, Window, scan};
use crate::tools::schema_of;

pub use super::read_limits::{
    DEFAULT_LIMIT, MAX_LINE_CHARS, MAX_OUTPUT_CHARS, MAX_WHOLE_FILE_BYTES,
};
/// Of [`MAX_OUTPUT_CHARS`], kept for the closing note.
const NOTE_ROOM: usize = 200;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// Absolute path, or relative to the project directory.
    pub file_path: String,
    /// 1-based line to start at.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Number of lines to show (default 2000).
    #[serde(default)]
    pub limit: Option<u64>,
    /// PDF pages or .pptx slides to read: one ("3") or a range ("1-5"), at most 20.
    #[serde(default)]
    pub pages: Option<String>,
    /// .xlsx: a sheet and/or cells, e.g. "Sheet2!A1:F100".
    #[serde(default)]
    pub range: Option<String>,
}

/// The Read tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Read;

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Reads a file with line numbers (`   12\\t` before each line; not part of the file). `file_path`: absolute or project-relative. Up to 2000 lines; `offset` (1-based) and `limit` read a range. Images come back as images, PDFs page by page (`pages`: \"3\" or \"1-5\"), .docx/.xlsx/.pptx as text (`range` for a sheet's cells, `pages` for slides). Read a file before you Edit or Write it.\nNEVER use cat, head or tail in Bash to read a file.";

#[async_trait]
impl Tool for Read {
    type Input = ReadInput;

    fn name(&self) -> &str {
        "Read"
    }

    fn input_schema(&self) -> Value {
        schema_of::<ReadInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Reads a file from the local file system and shows it with line numbers.\n\n\
             - `file_path` may be absolute or relative to the project directory.\n\
             - By default up to 2000 lines from the start are shown; use `offset` (1-based line) and `limit` to read a range. Files over 256 KB need a range.\n\
             - One Read shows at most 100000 characters; a longer range is cut, and the result says which `offset` continues it.\n\
             - Output is `cat -n` style: the line number right-aligned in six columns, a tab, then the line. The number and the tab are NOT part of the file.\n\
             - Images (PNG, JPEG, GIF, WebP) are returned as images.\n\
             - PDFs are returned page by page: as the PDF pages themselves to a model that reads documents, as their text otherwise. Give `pages` (\"3\" or \"1-5\", at most 20 pages a call) to choose the pages; a PDF of more than 10 pages needs it.\n\
             - Office documents are shown as text: .docx as Markdown (headings, lists, tables); .xlsx as one table per sheet with column letters and row numbers (`range`: \"Sheet2\", \"A1:F100\" or \"Sheet2!A1:F100\"; a big sheet is cut with the range that continues it); .pptx slide by slide with titles and speaker notes (`pages` chooses slides).\n\
             - Jupyter notebooks (.ipynb) are shown as their cells (id, type, source, text outputs); with `offset` or `limit` the raw JSON lines are shown instead. Change a cell with NotebookEdit.\n\
             - Binary files and files that are not valid UTF-8 are refused rather than shown garbled.\n\
             - Reading a file is what allows Edit and Write to change it later in this session.\n",
        );
        if cx.has_tool("Grep") || cx.has_tool("Glob") {
            p.push_str("\nUse Glob to find files by name and Grep to search contents; Read a file once you know which one you need.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - use Bash `cat`, `head` or `tail` to read a file; use Read.\n\
             - copy the line-number prefix (`    12\\t`) into an Edit's old_string.\n\
             - read a huge file whole; read the range you need.\n",
        );
        p
    }

    fn describe(&self, input: &ReadInput) -> String {
        if let Some(pages) = &input.pages {
            return format!("Read {} (pages {pages})", input.file_path);
        }
        if let Some(range) = &input.range {
            return format!("Read {} ({range})", input.file_path);
        }
        match (input.offset, input.limit) {
            (None, None) => format!("Read {}", input.file_path),
            (offset, limit) => {
                let start = offset.unwrap_or(1);
                let end = start
                    .saturating_add(limit.unwrap_or(DEFAULT_LIMIT))
                    .saturating_sub(1);
                format!("Read {} (lines {start}-{end})", input.file_path)
            }
        }
    }

    fn is_read_only(&self, _input: &ReadInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &ReadInput) -> bool {
        true
    }

    fn classifier_input(&self, input: &ReadInput) -> Option<String> {
        Some(format!("Read {}", input.file_path))
    }

    fn result_budget(&self) -> ResultBudget {
        // Read → spill file → Read would loop; Read limits itself.
        ResultBudget::Unlimited
    }

    fn permission_target(&self, input: &ReadInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: ctx.resolve(&input.file_path),
            access: PathAccess::Read,
        }
    }

    async fn validate_input(
        &self,
        input: &ReadInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.file_path.trim().is_empty() {
            return Err(ValidationError::rejected(
                "`file_path` must not be empty. Give the path of the file to read.",
            ));
        }
        if input.offset == Some(0) {
            return Err(ValidationError::rejected(
                "`offset` is 1-based: the first line is 1. Use offset=1 to start at the top.",
            ));
        }
        let office = read_office::format_of(&input.file_path);
        if let Some(pages) = &input.pages {
            if !read_pdf::is_pdf(&input.file_path) && office != Some(Format::Slides) {
                return Err(ValidationError::rejected(
                    "`pages` applies to PDF files and .pptx slides only. Use `offset` and `limit` for a text file.",
                ));
            }
            read_pdf::parse_pages(pages).map_err(|e| ValidationError::rejected(e.to_string()))?;
        }
        if let Some(range) = &input.range {
            if office != Some(Format::Workbook) {
                return Err(ValidationError::rejected(
                    "`range` applies to .xlsx workbooks only. Use `offset` and `limit` for a text file, `pages` for a PDF or .pptx.",
                ));
            }
            read_office::parse_range(range)
                .map_err(|e| ValidationError::rejected(e.to_string()))?;
        }
        if matches!(office, Some(Format::Workbook | Format::Slides))
            && (input.offset.is_some() || input.limit.is_some())
        {
            return Err(ValidationError::rejected(
                if office == Some(Format::Workbook) {
                    "`offset` and `limit` do not apply to a workbook. Use `range` (e.g. \"Sheet1!A1:F200\") to read part of a sheet."
                } else {
                    "`offset` and `limit` do not apply to a presentation. Use `pages` (e.g. \"3-5\") to read some slides."
                },
            ));
        }
        if input.limit == Some(0) {
            return Err(ValidationError::rejected(
                "`limit` must be at least 1, or omitted for up to 2000 lines.",
            ));
        }
        Ok(())
    }

    async fn call(&self, input: ReadInput, ctx: &ToolContext) -> ToolOutcome {
        let path = resolve_path(ctx, &input.file_path).await;
        let display = display_path(ctx, &path);
        let meta = match ctx.env.fs.metadata(&path).await {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return ToolOutcome::failed(format!(
                    "{display} does not exist. Check the path; Glob finds files by name."
                ));
            }
            Err(e) => {
                return ToolOutcome::failed(format!(
                    "{display} could not be read ({e}). Check the path and its permissions."
                ));
            }
        };
        if meta.kind == riot_protocol::FileKind::Dir {
            return ToolOutcome::failed(format!(
                "{display} is a directory, not a file. Use Glob (pattern `{display}/*`) to list it."
            ));
        }
        if read_pdf::is_pdf(&input.file_path) {
            return read_pdf::read(ctx, &path, display, meta.len, input.pages.as_deref()).await;
        }
        if let Some(format) = read_office::format_of(&input.file_path) {
            let want = read_office::Want {
                lines: (input.offset.is_some() || input.limit.is_some()).then(|| {
                    (
                        input.offset.unwrap_or(1),
                        input.limit.unwrap_or(DEFAULT_LIMIT),
                    )
                }),
                slides: input
                    .pages
                    .as_deref()
                    .and_then(|p| read_pdf::parse_pages(p).ok()),
                cells: input
                    .range
                    .as_deref()
                    .and_then(|r| read_office::parse_range(r).ok()),
            };
            return read_office::read(ctx, &path, display, meta.len, format, want).await;
        }
        if notebook::is_notebook(&input.file_path)
            && input.offset.is_none()
            && input.limit.is_none()
        {
            return notebook::read(ctx, &path, display, meta.len).await;
        }
        if let Some(media_type) = read_image::image_type(&input.file_path) {
            return read_image::read(ctx, &path, display, meta.len, media_type).await;
        }
        let ranged = input.offset.is_some() || input.limit.is_some();
        if meta.len > MAX_WHOLE_FILE_BYTES && !ranged {
            return ToolOutcome::failed(format!(
                "{display} is {} KB, over the 256 KB limit for reading a whole file. Read a range with `offset` and `limit` (e.g. offset=1, limit=500), or use Grep to find the lines you need.",
                meta.len / 1024
            ));
        }
        let start = input.offset.unwrap_or(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
        let window = Window {
            start,
            end: start.saturating_add(limit).saturating_sub(1),
            max_chars: MAX_OUTPUT_CHARS - NOTE_ROOM,
        };
        let scanned = match scan(ctx.env.fs.as_ref(), &path, window, &ctx.cancel).await {
            Ok(s) => s,
            Err(ScanError::NotText(e)) => return ToolOutcome::failed(e.explain(&display)),
            Err(ScanError::Io(e)) => {
                return ToolOutcome::failed(format!("{display} could not be read ({e})."));
            }
            Err(ScanError::Cancelled) => return ToolOutcome::Cancelled,
        };
        let total = scanned.total;
        if total == 0 {
            record_hash(ctx, &path, scanned.hash, FileView::Full).await;
            return ToolOutcome::text(
                format!("{display} exists but is empty (0 lines)."),
                Some(UiPayload::FileRead {
                    path: display,
                    start_line: 1,
                    lines: 0,
                    total_lines: 0,
                    truncated: false,
                }),
            );
        }
        let Some(end) = scanned.last_shown else {
            return ToolOutcome::failed(format!(
                "`offset` {start} is past the end: {display} has {total} lines. Use an offset between 1 and {total}."
            ));
        };
        let mut out = scanned.text;
        let cut = end < total || start > 1;
        if scanned.capped {
            out.push_str(&format!(
                "\n\n(Showing lines {start}-{end} of {total}: one Read shows at most {MAX_OUTPUT_CHARS} characters. Continue with offset={}.)",
                end + 1
            ));
        } else if end < total {
            out.push_str(&format!(
                "\n\n(Showing lines {start}-{end} of {total}. Continue with offset={}.)",
                end + 1
            ));
        } else if start > 1 {
            out.push_str(&format!(
                "\n\n(Showing lines {start}-{end} of {total}: the end of the file.)"
            ));
        }
        let view = if !cut {
            FileView::Full
        } else {
            // Ranges add up while the file is unchanged.
            let mut view = match ctx.env.file_state.get(&path) {
                Some(s) if s.content_hash == scanned.hash => s.view,
                _ => FileView::Partial { ranges: vec![] },
            };
            view.add_range(start, end);
            view
        };
        record_hash(ctx, &path, scanned.hash, view).await;
        ToolOutcome::text(
            out,
            Some(UiPayload::FileRead {
                path: display,
                start_line: start,
                lines: end - start + 1,
                total_lines: total,
                truncated: cut,
            }),
        )
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
