//! NotebookEdit: replace, insert or delete one cell of a Jupyter notebook
//! (docs/design.md §6.4). Read-before-write and permissions as for Edit;
//! the bytes outside the edited cell are kept as they were
//! (the `notebook` module finds each cell's bytes).

use std::path::PathBuf;

use async_trait::async_trait;
use riot_protocol::file_state::content_hash;
use riot_protocol::{
    FileView, InterruptBehavior, PathAccess, PermissionTarget, PromptContext, Tool, ToolContext,
    ToolOutcome, UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::diff::{hunks, whole};
use crate::freshness::{
    Need, check_fresh, code, display_path, read_existing, resolve_path, write_and_record,
};
use crate::tools::notebook::{
    Notebook, cell_id, indent_before, is_notebook, parse, source_lines, text_of, to_json,
};
use crate::tools::schema_of;

/// What to do with the cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditMode {
    /// Replace the cell's source (the default).
    #[default]
    Replace,
    /// Insert a new cell after `cell_id` (at the top when `cell_id` is "").
    Insert,
    /// Delete the cell.
    Delete,
}

/// A cell's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellType {
    Code,
    Markdown,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// Path of the .ipynb file, absolute or relative to the project directory.
    pub notebook_path: String,
    /// The cell's id as Read shows it; for insert, the cell the new one
    /// follows ("" for the top).
    pub cell_id: String,
    /// The cell's new source (ignored for delete).
    pub new_source: String,
    /// The cell's type: required for insert; for replace, changes it.
    #[serde(default)]
    pub cell_type: Option<CellType>,
    /// replace (default), insert or delete.
    #[serde(default)]
    pub edit_mode: Option<EditMode>,
}

/// The NotebookEdit tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct NotebookEdit;

/// The change, decided against the notebook as it is now.
struct Planned {
    path: PathBuf,
    display: String,
    old: String,
    new: String,
    summary: String,
    /// The cell changed (an inserted cell's new id).
    cell_id: String,
    /// The cell's source before ("" for an insert) and after ("" for a
    /// delete).
    before: String,
    after: String,
}

fn rejected(message: String) -> ValidationError {
    ValidationError::rejected(message)
}

async fn plan(ctx: &ToolContext, input: &NotebookEditInput) -> Result<Planned, ValidationError> {
    if !is_notebook(&input.notebook_path) {
        return Err(rejected(format!(
            "{} is not a Jupyter notebook (.ipynb). Use Edit for other files.",
            input.notebook_path
        )));
    }
    let mode = input.edit_mode.unwrap_or_default();
    let path = resolve_path(ctx, &input.notebook_path).await;
    let display = display_path(ctx, &path);
    let Some(bytes) = read_existing(ctx, &path, &display).await? else {
        return Err(rejected(format!(
            "{display} does not exist. Check the path (Glob finds files by name); NotebookEdit changes existing notebooks."
        ))
        .with_code(code::NOT_FOUND));
    };
    check_fresh(ctx, &path, &display, &bytes, Need::AnyView, "NotebookEdit")?;
    let Ok(old) = String::from_utf8(bytes) else {
        return Err(rejected(format!(
            "{display} is not valid UTF-8, so it is not a notebook NotebookEdit can change."
        ))
        .with_code(code::NOT_TEXT));
    };
    let nb = parse(old.as_bytes()).map_err(|why| {
        rejected(format!(
            "{display} is not a valid notebook: {why}. Fix it with Edit, or ask the person."
        ))
    })?;
    let ids: Vec<String> = (0..nb.cells.len())
        .map(|i| cell_id(&nb.cells[i], i))
        .collect();
    let index = ids.iter().position(|id| *id == input.cell_id);
    let top = mode == EditMode::Insert && input.cell_id.is_empty();
    if index.is_none() && !top {
        return Err(rejected(format!(
            "{display} has no cell with id {:?}. Its cells are: {}. Read it again to see them.",
            input.cell_id,
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            }
        )));
    }
    let source = |i: usize| text_of(nb.cells[i].get("source"));
    let (new, summary, cell_id, before, after) = match (mode, index) {
        (EditMode::Insert, after) => {
            let Some(kind) = input.cell_type else {
                return Err(rejected(
                    "Inserting a cell needs `cell_type` (\"code\" or \"markdown\").".to_owned(),
                ));
            };
            let (new, id) = insert(&old, &nb, after, kind, &input.new_source);
            let place = match after {
                Some(_) => format!("after cell {}", input.cell_id),
                None => "at the top".to_owned(),
            };
            let summary = format!("inserted {} cell {id} {place}", kind.as_str());
            (new, summary, id, String::new(), input.new_source.clone())
        }
        (EditMode::Delete, Some(i)) => (
            delete(&old, &nb, i),
            format!("deleted cell {}", input.cell_id),
            input.cell_id.clone(),
            source(i),
            String::new(),
        ),
        (_, Some(i)) => (
            replace(&old, &nb, i, input),
            format!("replaced the source of cell {}", input.cell_id),
            input.cell_id.clone(),
            source(i),
            input.new_source.clone(),
        ),
        (_, None) => {
            return Err(rejected(
                "`cell_id` is empty: give the id of the cell to change (Read shows them)."
                    .to_owned(),
            ));
        }
    };
    Ok(Planned {
        path,
        display,
        old,
        new,
        summary,
        cell_id,
        before,
        after,
    })
}

/// The cell's new object: the source replaced; a type change adds or
/// drops what code cells carry; a code cell's stale outputs are cleared.
fn replaced_cell(cell: &Map<String, Value>, input: &NotebookEditInput) -> Map<String, Value> {
    let mut cell = cell.clone();
    let kind = input.cell_type.map_or_else(
        || {
            cell.get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code")
                .to_owned()
        },
        |k| k.as_str().to_owned(),
    );
    cell.insert("cell_type".into(), Value::String(kind.clone()));
    cell.insert("source".into(), source_lines(&input.new_source));
    if kind == "code" {
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    } else {
        cell.shift_remove("execution_count");
        cell.shift_remove("outputs");
    }
    cell
}

fn splice(old: &str, start: usize, end: usize, with: &str) -> String {
    let mut s = String::with_capacity(old.len() + with.len());
    s.push_str(&old[..start]);
    s.push_str(with);
    s.push_str(&old[end..]);
    s
}

fn replace(old: &str, nb: &Notebook, i: usize, input: &NotebookEditInput) -> String {
    let (start, end) = nb.spans[i];
    let indent = indent_before(old.as_bytes(), start);
    let cell = Value::Object(replaced_cell(&nb.cells[i], input));
    splice(
        old,
        start,
        end,
        &to_json(&cell, nb.unit.as_deref(), &indent),
    )
}

fn delete(old: &str, nb: &Notebook, i: usize) -> String {
    let (start, end) = nb.spans[i];
    if let Some(&(next, _)) = nb.spans.get(i + 1) {
        splice(old, start, next, "")
    } else if i > 0 {
        splice(old, nb.spans[i - 1].1, end, "")
    } else {
        splice(old, nb.array.0, nb.array.1, "[]")
    }
}

/// A new cell's id: stable for the same notebook and source, unique in it.
fn new_id(nb: &Notebook, source: &str) -> String {
    let taken: Vec<String> = (0..nb.cells.len())
        .map(|i| cell_id(&nb.cells[i], i))
        .collect();
    let mut seed = format!("{}\u{0}{source}", taken.join("\u{0}"));
    loop {
        let id = format!("{:016x}", content_hash(seed.as_bytes()))[..8].to_owned();
        if !taken.contains(&id) {
            return id;
        }
        seed.push('+');
    }
}

fn insert(
    old: &str,
    nb: &Notebook,
    after: Option<usize>,
    kind: CellType,
    source: &str,
) -> (String, String) {
    // Keys sorted, as nbformat writes them.
    let mut cell = Map::new();
    cell.insert("cell_type".into(), Value::String(kind.as_str().into()));
    if kind == CellType::Code {
        cell.insert("execution_count".into(), Value::Null);
    }
    let id = if nb.has_ids {
        let id = new_id(nb, source);
        cell.insert("id".into(), Value::String(id.clone()));
        id
    } else {
        format!("cell-{}", after.map_or(0, |i| i + 1))
    };
    cell.insert("metadata".into(), Value::Object(Map::new()));
    if kind == CellType::Code {
        cell.insert("outputs".into(), Value::Array(Vec::new()));
    }
    cell.insert("source".into(), source_lines(source));
    let cell = Value::Object(cell);
    let unit = nb.unit.as_deref();
    let bytes = old.as_bytes();
    let new = if let Some(&(first, _)) = nb.spans.first() {
        let indent = indent_before(bytes, first);
        let json = to_json(&cell, unit, &indent);
        let sep = if unit.is_some() {
            format!(",\n{indent}")
        } else {
            ",".to_owned()
        };
        match after {
            Some(i) => splice(old, nb.spans[i].1, nb.spans[i].1, &format!("{sep}{json}")),
            None => splice(old, first, first, &format!("{json}{sep}")),
        }
    } else {
        // An empty list: lay it out as nbformat would.
        let (open, close) = nb.array;
        match unit {
            Some(unit) => {
                let outer = indent_before(bytes, open);
                let outer = if outer.is_empty() {
                    unit.to_owned()
                } else {
                    outer
                };
                let inner = format!("{outer}{unit}");
                let json = to_json(&cell, Some(unit), &inner);
                splice(old, open, close, &format!("[\n{inner}{json}\n{outer}]"))
            }
            None => splice(old, open, close, &format!("[{}]", to_json(&cell, None, ""))),
        }
    };
    (new, id)
}

#[async_trait]
impl Tool for NotebookEdit {
    type Input = NotebookEditInput;

    fn name(&self) -> &str {
        "NotebookEdit"
    }

    fn input_schema(&self) -> Value {
        schema_of::<NotebookEditInput>()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, or deletes it.\n\n\
         - The notebook must have been read with Read in this session and must not have changed since.\n\
         - `cell_id` is the id Read shows (`<cell id=\"...\">`); cells without an id are `cell-N`, counted from 0.\n\
         - `edit_mode`: `replace` (default) sets the cell's source to `new_source`; a code cell's outputs and execution count are cleared, since they no longer match. Give `cell_type` to change the cell's type.\n\
         - `insert` adds a new cell after `cell_id` (an empty `cell_id` puts it at the top); `cell_type` (`code` or `markdown`) is required.\n\
         - `delete` removes the cell; `new_source` is ignored.\n\
         - Everything outside the edited cell is kept byte for byte.\n\
         \nNEVER:\n\
         - edit a notebook you have not read in this session.\n\
         - use Edit or Write on a .ipynb file's JSON to change a cell; use NotebookEdit.\n\
         - put output in `new_source`: outputs come from running the notebook.\n"
            .to_owned()
    }

    fn describe(&self, input: &NotebookEditInput) -> String {
        let verb = match input.edit_mode.unwrap_or_default() {
            EditMode::Replace => "Edit",
            EditMode::Insert => "Insert a cell in",
            EditMode::Delete => "Delete a cell of",
        };
        format!("{verb} {} (cell {})", input.notebook_path, input.cell_id)
    }

    fn classifier_input(&self, input: &NotebookEditInput) -> Option<String> {
        Some(format!("NotebookEdit {}", input.notebook_path))
    }

    fn permission_target(&self, input: &NotebookEditInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: ctx.resolve(&input.notebook_path),
            access: PathAccess::Write,
        }
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    async fn validate_input(
        &self,
        input: &NotebookEditInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        plan(ctx, input).await.map(|_| ())
    }

    /// The cell before and after, whole.
    async fn preview(&self, input: &NotebookEditInput, ctx: &ToolContext) -> Option<UiPayload> {
        let planned = plan(ctx, input).await.ok()?;
        Some(UiPayload::NotebookCellDiff {
            path: planned.display,
            cell_id: planned.cell_id,
            hunks: whole(&planned.before, &planned.after),
        })
    }

    async fn call(&self, input: NotebookEditInput, ctx: &ToolContext) -> ToolOutcome {
        // Again, by content: the notebook may have been saved while the
        // permission question was open.
        let planned = match plan(ctx, &input).await {
            Ok(p) => p,
            Err(e) => return ToolOutcome::failed(e.message),
        };
        if let Err(message) = write_and_record(
            ctx,
            &planned.path,
            &planned.display,
            planned.new.as_bytes(),
            FileView::Full,
        )
        .await
        {
            return ToolOutcome::failed(message.to_string());
        }
        ToolOutcome::text(
            format!("Edited {}: {}.", planned.display, planned.summary),
            Some(UiPayload::FileDiff {
                path: planned.display,
                created: false,
                hunks: hunks(&planned.old, &planned.new),
            }),
        )
    }
}

#[cfg(test)]
#[path = "notebook_tests.rs"]
mod tests;
