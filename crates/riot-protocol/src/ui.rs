//! Structured tool payloads for people (docs/design.md §6.2).
//!
//! A tool returns two independent channels: `model_content` for the model and
//! a [`UiPayload`] that each face renders its own way (a diff view, a
//! terminal pane, a todo list). Neither is a fallback for the other.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a tool shows people about a finished call, or about a call a
/// permission question asks about (`PermissionRequestDetail::preview`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UiPayload {
    /// Lines of a file were shown to the model.
    FileRead {
        path: String,
        /// First line shown, 1-based.
        start_line: u64,
        /// Number of lines shown.
        lines: u64,
        /// Lines in the whole file.
        total_lines: u64,
        truncated: bool,
    },
    /// An image file was read.
    ImageRead {
        path: String,
        media_type: String,
        bytes: u64,
    },
    /// Pages of a PDF were read as text.
    PdfRead {
        path: String,
        /// First page read, 1-based.
        first_page: u32,
        /// Last page read.
        last_page: u32,
        /// Pages in the document.
        total_pages: u32,
    },
    /// An office document (Word, workbook, presentation) was read as text.
    DocumentRead {
        path: String,
        /// What was read, in a few words: "12 paragraphs, 1 table",
        /// "Sales: A1:C40", "slides 1-2 of 2".
        summary: String,
    },
    /// A Jupyter notebook's cells were read.
    NotebookRead {
        path: String,
        cells: Vec<NotebookCell>,
    },
    /// A file was created or changed.
    FileDiff {
        path: String,
        /// The file did not exist before.
        created: bool,
        hunks: Vec<DiffHunk>,
    },
    /// A notebook cell about to change (NotebookEdit's permission
    /// question): the cell's source before and after as one hunk with the
    /// whole cell as context, numbered within the cell. An inserted cell
    /// is all added lines, a deleted one all removed.
    NotebookCellDiff {
        path: String,
        /// The cell's id (an inserted cell's new id).
        cell_id: String,
        hunks: Vec<DiffHunk>,
    },
    /// A shell command ran (or was started in the background).
    Command {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        stdout: String,
        stderr: String,
        truncated: bool,
        timed_out: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        background_id: Option<String>,
    },
    /// File paths found by a pattern.
    FileList {
        pattern: String,
        paths: Vec<String>,
        /// Matches before the cap.
        total: u64,
        truncated: bool,
    },
    /// Matches of a content search.
    SearchResults {
        pattern: String,
        matches: Vec<SearchMatch>,
        total: u64,
        truncated: bool,
    },
    /// The session's todo list after a TodoWrite.
    Todos { todos: Vec<Todo> },
    /// Plain text, for tools without a richer shape (MCP tools).
    Text { text: String },
    /// A page was fetched (WebFetch).
    WebPage {
        url: String,
        status: u16,
        /// Bytes downloaded (at most the download limit).
        bytes: u64,
        /// The `Content-Type`, if the server sent one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
        /// The HTML page's `<title>`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// A redirect to another host that was not followed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redirect: Option<String>,
        /// The download stopped at the size limit.
        truncated: bool,
        /// Served from the 15-minute cache.
        cached: bool,
    },
    /// What a web search found (WebSearch), after the domain filters.
    WebResults {
        query: String,
        results: Vec<WebResult>,
    },
    /// What the project's checkers found (Diagnostics).
    Diagnostics {
        /// The commands that ran, in order.
        checkers: Vec<String>,
        diagnostics: Vec<crate::diagnostics::Diagnostic>,
        /// Diagnostics before the cap (and before the `paths` filter's
        /// cap, not before the filter).
        total: u64,
        truncated: bool,
    },
}

/// One cell of a notebook, as Read showed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NotebookCell {
    /// The id NotebookEdit takes (`cell-N` for a cell without one).
    pub id: String,
    /// `code`, `markdown` or `raw`.
    pub cell_type: String,
    /// Lines of source.
    pub lines: u64,
    /// Outputs the cell holds.
    pub outputs: u64,
}

/// One web search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WebResult {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffHunk {
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    pub lines: Vec<DiffLine>,
}

/// One line of a diff hunk, without its line terminator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffLine {
    pub kind: DiffLineKind,
    pub text: String,
}

/// Whether a diff line is kept, added or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiffLineKind {
    Context,
    Added,
    Removed,
}

/// A search hit: a file, or a line in a file (`content` mode), or a count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchMatch {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// One entry of the todo list (docs/interfaces.md: TodoWrite).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// Progress of a todo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// Live progress of a running tool, forwarded as `AgentEvent::Progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProgressPayload {
    /// New output of a running command.
    Output { stream: OutputStream, text: String },
    /// A short status line ("searched 1200 files").
    Status { text: String },
}

/// Which pipe output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}
