//! Read on office documents (Office Open XML packages): a Word document
//! as Markdown, each sheet of a workbook as a table with cell references,
//! a presentation's slides with their notes.
//!
//! Parsed on a blocking thread, as PDFs are. Every XML part is read
//! through a size bound (a zip bomb stops at `MAX_PART_BYTES`) and
//! parsed with roxmltree, which refuses DTDs, so no entity is expanded.
//! Workbooks are read with calamine, after a check that no part of the
//! zip is declared larger than that bound (the zip reader lets out no
//! more than a part declares).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Cursor, Read as _};
use std::path::Path;

use riot_protocol::{ToolContext, ToolOutcome, UiPayload};
use roxmltree::Node;

use crate::tools::read_pdf::PageRange;

mod docx;
mod pptx;
mod xlsx;

use docx::word;
use pptx::slides;
use xlsx::workbook;
#[cfg(test)]
use xlsx::{check_part_sizes, excel_date};

/// Office files over this size are refused before they are opened.
pub const MAX_OFFICE_BYTES: u64 = 64 * 1024 * 1024;
/// One XML part, uncompressed, at most.
const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;
/// Characters one Read returns at most (as for text files).
const MAX_TEXT_CHARS: usize = crate::tools::read_limits::MAX_OUTPUT_CHARS - 400;

/// The kinds of office document Read understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `.docx`
    Word,
    /// `.xlsx`, `.xlsm`
    Workbook,
    /// `.pptx`
    Slides,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Word => "Word document",
            Format::Workbook => "workbook",
            Format::Slides => "presentation",
        }
    }
}

/// Which office format `path` is, by its extension.
pub(crate) fn format_of(path: &str) -> Option<Format> {
    let (_, ext) = path.rsplit_once('.')?;
    match ext.to_ascii_lowercase().as_str() {
        "docx" => Some(Format::Word),
        "xlsx" | "xlsm" => Some(Format::Workbook),
        "pptx" => Some(Format::Slides),
        _ => None,
    }
}

/// What part of the document to show.
#[derive(Debug, Default, Clone)]
pub(crate) struct Want {
    /// Lines of a Word document's Markdown: first (1-based) and how many.
    pub lines: Option<(u64, u64)>,
    /// Slides of a presentation.
    pub slides: Option<PageRange>,
    /// A workbook's sheet and cells.
    pub cells: Option<CellRange>,
}

/// A sheet and/or a rectangle of cells, as `range` gives them:
/// `Sheet2!A1:D50`, `Sheet2`, `A1:D50` (the first sheet), `'My sheet'!B2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellRange {
    pub sheet: Option<String>,
    /// 0-based (row, column) of the top-left and bottom-right cells.
    pub cells: Option<((u32, u32), (u32, u32))>,
}

/// A `range` that names no sheet or cells; the message is the sentence
/// the model reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`range` must name a sheet and/or cells, e.g. \"Sheet2!A1:D50\", \"Sheet2\" or \"A1:D50\", not {range:?}."
)]
pub(crate) struct RangeError {
    /// The range as given, trimmed.
    range: String,
}

/// Parses `range`.
pub(crate) fn parse_range(range: &str) -> Result<CellRange, RangeError> {
    let range = range.trim();
    let bad = || RangeError {
        range: range.to_owned(),
    };
    if range.is_empty() {
        return Err(bad());
    }
    let (sheet, cells) = match range.rsplit_once('!') {
        Some((sheet, cells)) => (Some(unquote(sheet)), Some(cells)),
        None if parse_cells(range).is_some() => (None, Some(range)),
        None => (Some(unquote(range)), None),
    };
    // Excel's sheet names cannot hold these characters.
    if sheet
        .as_deref()
        .is_some_and(|s| s.is_empty() || s.contains(['\\', '/', '?', '*', '[', ']', ':']))
    {
        return Err(bad());
    }
    let cells = match cells {
        Some(c) => Some(parse_cells(c).ok_or_else(bad)?),
        None => None,
    };
    Ok(CellRange { sheet, cells })
}

fn unquote(sheet: &str) -> String {
    let sheet = sheet.trim();
    sheet
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .map_or_else(|| sheet.to_owned(), |s| s.replace("''", "'"))
}

/// `A1` or `A1:D50` as 0-based corners, the first above and left of the
/// second.
fn parse_cells(cells: &str) -> Option<((u32, u32), (u32, u32))> {
    let (a, b) = match cells.split_once(':') {
        Some((a, b)) => (a, b),
        None => (cells, cells),
    };
    let (a, b) = (parse_cell(a)?, parse_cell(b)?);
    Some(((a.0.min(b.0), a.1.min(b.1)), (a.0.max(b.0), a.1.max(b.1))))
}

/// `C12` as 0-based (row 11, column 2); `$` anchors are allowed.
fn parse_cell(cell: &str) -> Option<(u32, u32)> {
    let cell = cell.trim().replace('$', "");
    let split = cell.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = cell.split_at(split);
    if letters.is_empty() || letters.len() > 3 || !letters.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let row: u32 = digits.parse().ok()?;
    let col = letters.chars().fold(0u32, |n, c| {
        n * 26 + (c.to_ascii_uppercase() as u32 - 'A' as u32 + 1)
    });
    Some((row.checked_sub(1)?, col - 1))
}

/// Column letters for a 0-based column: 0 → `A`, 27 → `AB`.
fn column_name(col: u32) -> String {
    let mut n = col + 1;
    let mut name = Vec::new();
    while n > 0 {
        let rem = (n - 1) % 26;
        name.push(char::from(b'A' + u8::try_from(rem).unwrap_or(0)));
        n = (n - 1) / 26;
    }
    name.iter().rev().collect()
}

fn cell_name((row, col): (u32, u32)) -> String {
    format!("{}{}", column_name(col), row + 1)
}

/// Why an office document could not be converted; the message follows
/// "could not be read as a Word document: ".
#[derive(Debug, thiserror::Error)]
enum OfficeError {
    /// The file is not a zip package.
    #[error("it is not an Office Open XML package ({0})")]
    NotAPackage(#[source] zip::result::ZipError),
    /// A part's entry in the zip could not be opened.
    #[error("its part {name} could not be read ({source})")]
    PartEntry {
        name: String,
        #[source]
        source: zip::result::ZipError,
    },
    /// A part's bytes could not be read (or are not UTF-8).
    #[error("its part {name} could not be read ({source})")]
    PartRead {
        name: String,
        #[source]
        source: std::io::Error,
    },
    /// A part is larger than `limit` bytes uncompressed.
    #[error("its part {name} is over {} uncompressed", size_bound(*.limit))]
    PartTooLarge { name: String, limit: u64 },
    /// A part another part points at is not in the package.
    #[error("its part {0} is missing")]
    PartMissing(String),
    /// A part is not well-formed XML.
    #[error("its part {name} is not valid XML ({source})")]
    Xml {
        name: String,
        #[source]
        source: roxmltree::Error,
    },
    /// A Word document without its main part.
    #[error("it has no document part ({0})")]
    NoDocument(String),
    /// A Word document's main part without a body.
    #[error("its document part has no body")]
    NoBody,
    /// `offset` is past a Word document's last Markdown line.
    #[error("`offset` {start} is past the end: as Markdown it has {total} lines")]
    OffsetPastEnd { start: u64, total: u64 },
    /// A presentation without its main part.
    #[error("it has no presentation part ({0})")]
    NoPresentation(String),
    /// `pages` starts past a presentation's last slide.
    #[error(
        "`pages` starts past the end: it has {total} slide{}",
        plural(usize::try_from(*.total).unwrap_or(0))
    )]
    SlidesPastEnd { total: u32 },
    /// calamine could not open the workbook.
    #[error("it could not be opened ({0})")]
    Workbook(#[source] calamine::XlsxError),
    /// A workbook without sheets.
    #[error("it has no sheets")]
    NoSheets,
    /// No sheet of the name asked for.
    #[error(
        "it has no sheet named {sheet:?}; its sheets are {}",
        .sheets.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
    )]
    NoSuchSheet { sheet: String, sheets: Vec<String> },
    /// A sheet could not be read.
    #[error("its sheet {name:?} could not be read ({source})")]
    Sheet {
        name: String,
        #[source]
        source: calamine::XlsxError,
    },
}

/// A part size bound as the messages give it: MB, or KB under a megabyte.
fn size_bound(limit: u64) -> String {
    if limit >= 1024 * 1024 {
        format!("{} MB", limit / (1024 * 1024))
    } else {
        format!("{} KB", limit / 1024)
    }
}

/// What a conversion gives back: the text the model reads and a line for
/// the faces.
struct Converted {
    text: String,
    summary: String,
}

/// Read's answer for an office document at `path` (a file of `len`
/// bytes).
pub(crate) async fn read(
    ctx: &ToolContext,
    path: &Path,
    display: String,
    len: u64,
    format: Format,
    want: Want,
) -> ToolOutcome {
    if len > MAX_OFFICE_BYTES {
        return ToolOutcome::failed(format!(
            "{display} is {} MB, over the {} MB limit for office documents. Ask the person for the part you need.",
            len / (1024 * 1024),
            MAX_OFFICE_BYTES / (1024 * 1024)
        ));
    }
    let bytes = match ctx.env.fs.read(path).await {
        Ok(b) => b,
        Err(e) => return ToolOutcome::failed(format!("{display} could not be read ({e}).")),
    };
    let shown = display.clone();
    let converted = tokio::task::spawn_blocking(move || match format {
        Format::Word => word(bytes, &shown, want.lines),
        Format::Workbook => workbook(bytes, &shown, want.cells.as_ref()),
        Format::Slides => slides(bytes, &shown, want.slides),
    })
    .await;
    let name = format.name();
    match converted {
        Ok(Ok(c)) => ToolOutcome::text(
            c.text,
            Some(UiPayload::DocumentRead {
                path: display,
                summary: c.summary,
            }),
        ),
        Ok(Err(reason)) => ToolOutcome::failed(format!(
            "{display} could not be read as a {name}: {reason}."
        )),
        Err(_) => ToolOutcome::failed(format!(
            "{display} could not be read as a {name}: the file is malformed."
        )),
    }
}

// ---------------------------------------------------------------- package

/// An OPC package: a zip of XML parts.
struct Package {
    zip: zip::ZipArchive<Cursor<Vec<u8>>>,
}

impl Package {
    fn open(bytes: Vec<u8>) -> Result<Self, OfficeError> {
        zip::ZipArchive::new(Cursor::new(bytes))
            .map(|zip| Self { zip })
            .map_err(OfficeError::NotAPackage)
    }

    /// The text of part `name`, `None` when the package has none.
    fn part(&mut self, name: &str) -> Result<Option<String>, OfficeError> {
        let file = match self.zip.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(source) => {
                return Err(OfficeError::PartEntry {
                    name: name.to_owned(),
                    source,
                });
            }
        };
        let mut text = String::new();
        file.take(MAX_PART_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|source| OfficeError::PartRead {
                name: name.to_owned(),
                source,
            })?;
        if u64::try_from(text.len()).unwrap_or(u64::MAX) > MAX_PART_BYTES {
            return Err(OfficeError::PartTooLarge {
                name: name.to_owned(),
                limit: MAX_PART_BYTES,
            });
        }
        Ok(Some(text))
    }

    /// The relationships of part `source` (`""` for the package's own),
    /// as id → (type, resolved target).
    fn relationships(
        &mut self,
        source: &str,
    ) -> Result<HashMap<String, (String, String)>, OfficeError> {
        let (dir, file) = source.rsplit_once('/').unwrap_or(("", source));
        let rels = if dir.is_empty() {
            format!("_rels/{file}.rels")
        } else {
            format!("{dir}/_rels/{file}.rels")
        };
        let Some(xml) = self.part(&rels)? else {
            return Ok(HashMap::new());
        };
        let doc = parse(&xml, &rels)?;
        Ok(doc
            .descendants()
            .filter(|n| n.has_tag_name_local("Relationship"))
            .filter(|n| attr(*n, "TargetMode") != Some("External"))
            .filter_map(|n| {
                Some((
                    attr(n, "Id")?.to_owned(),
                    (
                        attr(n, "Type")?.to_owned(),
                        resolve(dir, attr(n, "Target")?),
                    ),
                ))
            })
            .collect())
    }

    /// The package's main part (the target of its officeDocument
    /// relationship), or `fallback`.
    fn main_part(&mut self, fallback: &str) -> Result<String, OfficeError> {
        let rels = self.relationships("")?;
        Ok(rels
            .values()
            .find(|(kind, _)| kind.ends_with("/officeDocument"))
            .map_or_else(|| fallback.to_owned(), |(_, target)| target.clone()))
    }
}

/// A relationship's target resolved against the directory of its source.
fn resolve(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = if let Some(absolute) = target.strip_prefix('/') {
        return normalize(absolute.split('/').collect());
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    parts.extend(target.split('/'));
    normalize(parts)
}

fn normalize(parts: Vec<&str>) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in parts {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

fn parse<'a>(xml: &'a str, name: &str) -> Result<roxmltree::Document<'a>, OfficeError> {
    roxmltree::Document::parse(xml).map_err(|source| OfficeError::Xml {
        name: name.to_owned(),
        source,
    })
}

trait LocalName {
    fn has_tag_name_local(&self, name: &str) -> bool;
}

impl LocalName for Node<'_, '_> {
    fn has_tag_name_local(&self, name: &str) -> bool {
        self.is_element() && self.tag_name().name() == name
    }
}

/// An attribute by its local name, whatever its namespace (the
/// transitional and strict schemas name theirs differently).
fn attr<'a>(node: Node<'a, '_>, local: &str) -> Option<&'a str> {
    node.attributes()
        .find(|a| a.name() == local)
        .map(|a| a.value())
}

fn child<'a, 'i>(node: Node<'a, 'i>, local: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.has_tag_name_local(local))
}

fn children<'a, 'i>(node: Node<'a, 'i>, local: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(move |n| n.has_tag_name_local(local))
}

/// Text for a Markdown table cell: on one line, `|` escaped.
fn table_cell(text: &str) -> String {
    text.trim()
        .replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace(['\n', '\r'], "<br>")
}

/// A Markdown table; the first row is its header.
fn markdown_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        out.push('|');
        for c in 0..width {
            let cell = row.get(c).map_or("", String::as_str);
            let _ = write!(out, " {} |", table_cell(cell));
        }
        out.push('\n');
        if i == 0 {
            out.push('|');
            out.push_str(&"---|".repeat(width));
            out.push('\n');
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
#[path = "read_office_tests.rs"]
mod tests;
