//! Jupyter notebooks (`.ipynb`, nbformat 4): Read's view of the cells and
//! the byte spans NotebookEdit splices (docs/design.md §6.4).
//!
//! The notebook is parsed with serde_json to read it; edits never
//! re-serialize the whole file. A small scanner finds the byte span of
//! each cell in the `cells` array (the document is known to be valid JSON
//! by then), and an edit replaces, inserts or removes exactly one span, so
//! every byte outside the edited cell stays as it was. The edited cell is
//! written in the file's own style: the indent unit of its first line
//! (nbformat writes one space), keys in the order they had (sorted for a
//! new cell, as nbformat writes them).

use serde_json::{Map, Value};

/// Characters of one output's text shown at most.
const MAX_OUTPUT_CHARS: usize = 4000;

/// Whether Read and NotebookEdit treat `path` as a notebook.
pub(crate) fn is_notebook(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("ipynb"))
}

/// A parsed notebook and where its cells are in the bytes.
#[derive(Debug)]
pub(crate) struct Notebook {
    pub cells: Vec<Map<String, Value>>,
    /// Byte span of each cell's object, in order.
    pub spans: Vec<(usize, usize)>,
    /// Byte span of the `cells` array, brackets included.
    pub array: (usize, usize),
    /// The language of the kernel, when the metadata names one.
    pub language: Option<String>,
    /// The indent unit (`None`: the file is written on one line).
    pub unit: Option<String>,
    /// Whether cells carry ids (nbformat 4.5 and later).
    pub has_ids: bool,
}

/// What is wrong with a notebook, for a sentence about the file ("… is
/// not a valid Jupyter notebook: it is not JSON (…)").
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotebookError {
    /// The file is not JSON.
    #[error("it is not JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    /// The JSON is not an object.
    #[error("its top level is not a JSON object")]
    NotAnObject,
    /// The object has no `cells` array.
    #[error("it has no `cells` list")]
    NoCells,
    /// A cell is not an object.
    #[error("cell {0} is not a JSON object")]
    BadCell(usize),
    /// The scanner did not find the cells' byte spans.
    #[error("its `cells` list could not be located")]
    CellsNotLocated,
}

/// Parses `bytes`.
pub(crate) fn parse(bytes: &[u8]) -> Result<Notebook, NotebookError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(NotebookError::NotJson)?;
    let Some(top) = doc.as_object() else {
        return Err(NotebookError::NotAnObject);
    };
    let Some(cells) = top.get("cells").and_then(Value::as_array) else {
        return Err(NotebookError::NoCells);
    };
    let mut objects = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        match cell.as_object() {
            Some(o) => objects.push(o.clone()),
            None => return Err(NotebookError::BadCell(i)),
        }
    }
    let (array, spans) = cell_spans(bytes).ok_or(NotebookError::CellsNotLocated)?;
    if spans.len() != objects.len() {
        return Err(NotebookError::CellsNotLocated);
    }
    let language = top
        .get("metadata")
        .and_then(|m| {
            m.pointer("/language_info/name")
                .or_else(|| m.pointer("/kernelspec/language"))
        })
        .and_then(Value::as_str)
        .map(str::to_owned);
    let minor = top.get("nbformat_minor").and_then(Value::as_u64);
    let has_ids = objects.iter().any(|c| c.contains_key("id")) || minor.is_some_and(|m| m >= 5);
    Ok(Notebook {
        cells: objects,
        spans,
        array,
        language,
        unit: indent_unit(bytes),
        has_ids,
    })
}

/// The id a cell is known by: its `id`, or `cell-N` (0-based) for a cell
/// without one (nbformat before 4.5).
pub(crate) fn cell_id(cell: &Map<String, Value>, index: usize) -> String {
    match cell.get("id").and_then(Value::as_str) {
        Some(id) => id.to_owned(),
        None => format!("cell-{index}"),
    }
}

/// A cell's source as one string (nbformat allows a string or a list of
/// lines).
pub(crate) fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// Image outputs sent to the model from one Read, at most; the text says
/// how many more there were.
pub const MAX_NOTEBOOK_IMAGES: usize = 10;

/// An image output of a cell (PNG, JPEG, GIF or WebP), numbered from 1 in
/// the order Read shows them.
#[derive(Debug, Clone)]
pub(crate) struct OutputImage {
    pub number: usize,
    pub cell: String,
    pub source: riot_protocol::ImageSource,
}

/// Read's text for a notebook, and its image outputs.
pub(crate) fn render(display: &str, nb: &Notebook) -> (String, Vec<OutputImage>) {
    let mut images = Vec::new();
    let lang = nb.language.as_deref().unwrap_or("python");
    let mut out = format!(
        "{display}: Jupyter notebook, {} cell{} ({lang}).\n",
        nb.cells.len(),
        if nb.cells.len() == 1 { "" } else { "s" }
    );
    for (i, cell) in nb.cells.iter().enumerate() {
        let kind = cell
            .get("cell_type")
            .and_then(Value::as_str)
            .unwrap_or("code");
        out.push_str(&format!(
            "\n<cell id=\"{}\" type=\"{kind}\">\n",
            cell_id(cell, i)
        ));
        let source = text_of(cell.get("source"));
        out.push_str(&source);
        if !source.is_empty() && !source.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("</cell>\n");
        let outputs = cell
            .get("outputs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for output in outputs {
            out.push_str("<output>\n");
            out.push_str(&render_output(output, &cell_id(cell, i), &mut images));
            out.push_str("</output>\n");
        }
    }
    (out, images)
}

/// An image output's data as one base64 string (nbformat allows a list of
/// lines; base64 there may be wrapped).
fn image_data(value: &Value) -> String {
    text_of(Some(value))
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect()
}

fn render_output(output: &Value, cell: &str, images: &mut Vec<OutputImage>) -> String {
    let mut text = match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => text_of(output.get("text")),
        Some("error") => {
            let name = output.get("ename").and_then(Value::as_str).unwrap_or("");
            let value = output.get("evalue").and_then(Value::as_str).unwrap_or("");
            format!("{name}: {value}")
        }
        Some("execute_result" | "display_data") => {
            let data = output.get("data").and_then(Value::as_object);
            let plain = data
                .and_then(|d| d.get("text/plain"))
                .map(|v| text_of(Some(v)));
            let kinds: Vec<&str> = data
                .map(|d| {
                    d.keys()
                        .filter(|k| k.starts_with("image/"))
                        .map(String::as_str)
                        .collect()
                })
                .unwrap_or_default();
            let mut t = String::new();
            for kind in kinds {
                let raster = ["image/png", "image/jpeg", "image/gif", "image/webp"];
                match data.and_then(|d| d.get(kind)) {
                    Some(value) if raster.contains(&kind) => {
                        let number = images.len() + 1;
                        images.push(OutputImage {
                            number,
                            cell: cell.to_owned(),
                            source: riot_protocol::ImageSource {
                                media_type: kind.to_owned(),
                                data: image_data(value),
                            },
                        });
                        t.push_str(&format!("[image output {number}: {kind}]\n"));
                    }
                    _ => t.push_str(&format!("[image output: {kind}]\n")),
                }
            }
            if let Some(p) = plain {
                t.push_str(&p);
            }
            t
        }
        _ => String::new(),
    };
    if text.chars().count() > MAX_OUTPUT_CHARS {
        text = text.chars().take(MAX_OUTPUT_CHARS).collect();
        text.push_str("\n… [output cut]");
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// nbformat's `source`: the lines, each but the last keeping its `\n`.
pub(crate) fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|l| Value::String(l.to_owned()))
            .collect(),
    )
}

/// `value` as JSON in the file's style, its first line at `indent`
/// (already in the file) and the following ones indented from it.
pub(crate) fn to_json(value: &Value, unit: Option<&str>, indent: &str) -> String {
    let Some(unit) = unit else {
        return serde_json::to_string(value).unwrap_or_default();
    };
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return String::new();
    }
    let text = String::from_utf8(buf).unwrap_or_default();
    // JSON strings hold no raw newline: every line break is layout.
    text.replace('\n', &format!("\n{indent}"))
}

/// The whitespace before byte `at` on its line.
pub(crate) fn indent_before(bytes: &[u8], at: usize) -> String {
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let ws = &bytes[start..at];
    if ws.iter().all(|b| *b == b' ' || *b == b'\t') {
        String::from_utf8_lossy(ws).into_owned()
    } else {
        String::new()
    }
}

/// The indent of the first member of the top-level object.
fn indent_unit(bytes: &[u8]) -> Option<String> {
    let open = bytes.iter().position(|&b| b == b'{')?;
    let rest = &bytes[open + 1..];
    let nl = rest.iter().position(|b| !b" \t\r".contains(b))?;
    if rest[nl] != b'\n' {
        return None;
    }
    let after = &rest[nl + 1..];
    let n = after
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    (n > 0).then(|| String::from_utf8_lossy(&after[..n]).into_owned())
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b" \t\r\n".contains(&b[i]) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON string starting at `i` (a `"`).
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end (exclusive) of the JSON value starting at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !b",}] \t\r\n".contains(&b[j]) {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The `cells` array of the top-level object and its elements' spans.
#[allow(clippy::type_complexity)]
fn cell_spans(b: &[u8]) -> Option<((usize, usize), Vec<(usize, usize)>)> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key: String = serde_json::from_slice(&b[i..key_end]).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        if key == "cells" {
            return Some(((i, end), elements(b, i)?));
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

fn elements(b: &[u8], open: usize) -> Option<Vec<(usize, usize)>> {
    if b.get(open) != Some(&b'[') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let end = value_end(b, i)?;
        out.push((i, end));
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Some(out),
            _ => return None,
        }
    }
}

/// Notebooks over this size are not shown as cells (read a range of the
/// JSON with `offset` and `limit` instead).
pub const MAX_NOTEBOOK_BYTES: u64 = 16 * 1024 * 1024;

/// Read's answer for a notebook at `path` (a file of `len` bytes): the
/// cells, and the whole file recorded as read for NotebookEdit.
pub(crate) async fn read(
    ctx: &riot_protocol::ToolContext,
    path: &std::path::Path,
    display: String,
    len: u64,
) -> riot_protocol::ToolOutcome {
    use riot_protocol::{FileView, ToolOutcome};
    if len > MAX_NOTEBOOK_BYTES {
        return ToolOutcome::failed(format!(
            "{display} is {} MB, over the {} MB limit for showing a notebook's cells. Read a range of its JSON with `offset` and `limit`.",
            len / (1024 * 1024),
            MAX_NOTEBOOK_BYTES / (1024 * 1024)
        ));
    }
    let bytes = match ctx.env.fs.read(path).await {
        Ok(b) => b,
        Err(e) => return ToolOutcome::failed(format!("{display} could not be read ({e}).")),
    };
    let nb = match parse(&bytes) {
        Ok(nb) => nb,
        Err(why) => {
            return ToolOutcome::failed(format!(
                "{display} is not a valid Jupyter notebook: {why}. Read its raw text with `offset` and `limit`."
            ));
        }
    };
    let (mut text, images) = render(&display, &nb);
    let max = crate::tools::read_limits::MAX_OUTPUT_CHARS - 200;
    if text.chars().count() > max {
        text = text.chars().take(max).collect();
        text.push_str("\n\n(Cut: one Read shows at most 100000 characters. Read a range of the notebook's JSON with `offset` and `limit` for the rest.)");
    }
    let mut model_content = vec![riot_protocol::ToolResultContent::text(text)];
    model_content.extend(output_images(images).await);
    crate::freshness::record(ctx, path, &bytes, FileView::Full).await;
    let cells = nb
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| riot_protocol::NotebookCell {
            id: cell_id(c, i),
            cell_type: c
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code")
                .to_owned(),
            lines: text_of(c.get("source")).lines().count() as u64,
            outputs: c
                .get("outputs")
                .and_then(Value::as_array)
                .map_or(0, |o| o.len() as u64),
        })
        .collect();
    ToolOutcome::Ok {
        model_content,
        ui_payload: Some(riot_protocol::UiPayload::NotebookRead {
            path: display,
            cells,
        }),
        side_messages: Vec::new(),
    }
}

/// The image outputs as the model gets them: each after a line naming it,
/// fitted to the model's limits like Read's images; one that cannot be
/// decoded is a line saying so.
async fn output_images(images: Vec<OutputImage>) -> Vec<riot_protocol::ToolResultContent> {
    use crate::tools::read_image::{ImageLimits, prepare_source};
    use riot_protocol::ToolResultContent;
    let limits = ImageLimits::default();
    let total = images.len();
    let mut out = Vec::new();
    for image in images.into_iter().take(MAX_NOTEBOOK_IMAGES) {
        let source = image.source.clone();
        // Decoding and resizing is CPU work: off the async threads.
        let prepared = tokio::task::spawn_blocking(move || prepare_source(&source, limits)).await;
        let name = format!("Image output {} (cell {})", image.number, image.cell);
        match prepared {
            Ok(Ok(p)) => {
                let (w, h) = p.original;
                let mut line = format!("{name}: {w}x{h} px");
                if p.downscaled {
                    let (sw, sh) = p.sent;
                    line.push_str(&format!(", downscaled to {sw}x{sh} px"));
                }
                line.push('.');
                out.push(ToolResultContent::text(line));
                out.push(ToolResultContent::Image { source: p.source() });
            }
            Ok(Err(reason)) => {
                out.push(ToolResultContent::text(format!(
                    "{name} is not shown: it {reason}."
                )));
            }
            Err(e) => out.push(ToolResultContent::text(format!(
                "{name} is not shown: it could not be decoded ({e})."
            ))),
        }
    }
    if total > MAX_NOTEBOOK_IMAGES {
        out.push(ToolResultContent::text(format!(
            "{} more image outputs are not shown (at most {MAX_NOTEBOOK_IMAGES} per Read).",
            total - MAX_NOTEBOOK_IMAGES
        )));
    }
    out
}
