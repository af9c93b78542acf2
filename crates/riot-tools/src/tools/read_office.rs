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

/// Office files over this size are refused before they are opened.
pub const MAX_OFFICE_BYTES: u64 = 64 * 1024 * 1024;
/// One XML part, uncompressed, at most.
const MAX_PART_BYTES: u64 = 64 * 1024 * 1024;
/// Characters one Read returns at most (as for text files).
const MAX_TEXT_CHARS: usize = crate::tools::read_limits::MAX_OUTPUT_CHARS - 400;
/// Rows of a sheet one Read shows at most, however short they are.
const MAX_ROWS_PER_READ: u32 = 2000;

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

/// Parses `range`; the error is the sentence the model reads.
pub(crate) fn parse_range(range: &str) -> Result<CellRange, String> {
    let range = range.trim();
    let bad = || {
        format!(
            "`range` must name a sheet and/or cells, e.g. \"Sheet2!A1:D50\", \"Sheet2\" or \"A1:D50\", not {range:?}."
        )
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
    fn open(bytes: Vec<u8>) -> Result<Self, String> {
        zip::ZipArchive::new(Cursor::new(bytes))
            .map(|zip| Self { zip })
            .map_err(|e| format!("it is not an Office Open XML package ({e})"))
    }

    /// The text of part `name`, `None` when the package has none.
    fn part(&mut self, name: &str) -> Result<Option<String>, String> {
        let file = match self.zip.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(format!("its part {name} could not be read ({e})")),
        };
        let mut text = String::new();
        file.take(MAX_PART_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("its part {name} could not be read ({e})"))?;
        if u64::try_from(text.len()).unwrap_or(u64::MAX) > MAX_PART_BYTES {
            return Err(format!(
                "its part {name} is over {} MB uncompressed",
                MAX_PART_BYTES / (1024 * 1024)
            ));
        }
        Ok(Some(text))
    }

    /// The relationships of part `source` (`""` for the package's own),
    /// as id → (type, resolved target).
    fn relationships(&mut self, source: &str) -> Result<HashMap<String, (String, String)>, String> {
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
    fn main_part(&mut self, fallback: &str) -> Result<String, String> {
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

fn parse<'a>(xml: &'a str, name: &str) -> Result<roxmltree::Document<'a>, String> {
    roxmltree::Document::parse(xml).map_err(|e| format!("its part {name} is not valid XML ({e})"))
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

// ---------------------------------------------------------------- Word

/// How a paragraph style reads: a heading level, or none.
struct Styles {
    heading: HashMap<String, usize>,
}

impl Styles {
    fn parse(xml: Option<&str>) -> Self {
        let mut heading = HashMap::new();
        if let Some(doc) = xml.and_then(|x| roxmltree::Document::parse(x).ok()) {
            for style in doc.descendants().filter(|n| n.has_tag_name_local("style")) {
                let Some(id) = attr(style, "styleId") else {
                    continue;
                };
                let name = child(style, "name").and_then(|n| attr(n, "val"));
                let outline = child(style, "pPr")
                    .and_then(|p| child(p, "outlineLvl"))
                    .and_then(|o| attr(o, "val"))
                    .and_then(|v| v.parse::<usize>().ok());
                if let Some(level) = name.and_then(heading_of_name).or(outline.map(|o| o + 1)) {
                    heading.insert(id.to_owned(), level.min(6));
                }
            }
        }
        Self { heading }
    }

    fn level(&self, style: &str) -> Option<usize> {
        self.heading
            .get(style)
            .copied()
            .or_else(|| heading_of_name(style))
    }
}

/// `heading 2`, `Heading2` → 2; `Title` → 1.
fn heading_of_name(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase().replace(' ', "");
    if lower == "title" {
        return Some(1);
    }
    let level: usize = lower.strip_prefix("heading")?.parse().ok()?;
    (1..=9).contains(&level).then_some(level.min(6))
}

/// Numbering: whether list `num_id`'s level `ilvl` is bulleted.
struct Numbering {
    /// numId → abstractNumId.
    nums: HashMap<String, String>,
    /// (abstractNumId, ilvl) → numFmt.
    formats: HashMap<(String, u32), String>,
}

impl Numbering {
    fn parse(xml: Option<&str>) -> Self {
        let mut nums = HashMap::new();
        let mut formats = HashMap::new();
        if let Some(doc) = xml.and_then(|x| roxmltree::Document::parse(x).ok()) {
            for n in doc.descendants() {
                if n.has_tag_name_local("num")
                    && let (Some(id), Some(abs)) = (
                        attr(n, "numId"),
                        child(n, "abstractNumId").and_then(|a| attr(a, "val")),
                    )
                {
                    nums.insert(id.to_owned(), abs.to_owned());
                }
                if n.has_tag_name_local("abstractNum")
                    && let Some(abs) = attr(n, "abstractNumId")
                {
                    for lvl in children(n, "lvl") {
                        let ilvl = attr(lvl, "ilvl").and_then(|v| v.parse().ok()).unwrap_or(0);
                        if let Some(fmt) = child(lvl, "numFmt").and_then(|f| attr(f, "val")) {
                            formats.insert((abs.to_owned(), ilvl), fmt.to_owned());
                        }
                    }
                }
            }
        }
        Self { nums, formats }
    }

    fn bulleted(&self, num_id: &str, ilvl: u32) -> bool {
        self.nums
            .get(num_id)
            .and_then(|abs| self.formats.get(&(abs.clone(), ilvl)))
            .is_none_or(|fmt| fmt == "bullet" || fmt == "none")
    }
}

struct WordWriter<'s> {
    styles: &'s Styles,
    numbering: &'s Numbering,
    /// (numId, ilvl) → the last number given.
    counters: HashMap<(String, u32), u32>,
    blocks: Vec<String>,
    /// Whether the last block was a list item (items are not separated
    /// by a blank line).
    in_list: bool,
    paragraphs: usize,
    tables: usize,
}

impl WordWriter<'_> {
    /// The body's paragraphs and tables, in order (content controls
    /// looked into).
    fn blocks(&mut self, parent: Node<'_, '_>) {
        for node in parent.children().filter(Node::is_element) {
            match node.tag_name().name() {
                "p" => self.paragraph(node),
                "tbl" => self.table(node),
                "sdt" => {
                    if let Some(content) = child(node, "sdtContent") {
                        self.blocks(content);
                    }
                }
                _ => {}
            }
        }
    }

    fn paragraph(&mut self, p: Node<'_, '_>) {
        let text = paragraph_text(p);
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        self.paragraphs += 1;
        let props = child(p, "pPr");
        let style = props
            .and_then(|pp| child(pp, "pStyle"))
            .and_then(|s| attr(s, "val"));
        let outline = props
            .and_then(|pp| child(pp, "outlineLvl"))
            .and_then(|o| attr(o, "val"))
            .and_then(|v| v.parse::<usize>().ok())
            .map(|o| (o + 1).min(6));
        let level = outline.or_else(|| style.and_then(|s| self.styles.level(s)));
        let list = props.and_then(|pp| child(pp, "numPr")).and_then(|np| {
            let id = child(np, "numId").and_then(|n| attr(n, "val"))?;
            let ilvl = child(np, "ilvl")
                .and_then(|l| attr(l, "val"))
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(0);
            (id != "0").then(|| (id.to_owned(), ilvl))
        });
        if let (Some(level), None) = (level, &list) {
            self.push(format!("{} {text}", "#".repeat(level)), false);
            return;
        }
        let Some((id, ilvl)) = list else {
            self.push(text.to_owned(), false);
            return;
        };
        let indent = "  ".repeat(usize::try_from(ilvl).unwrap_or(0));
        let marker = if self.numbering.bulleted(&id, ilvl) {
            "-".to_owned()
        } else {
            // A shallower item restarts the deeper levels' numbers.
            self.counters
                .retain(|(other, l), _| *other != id || *l <= ilvl);
            let n = self.counters.entry((id, ilvl)).or_insert(0);
            *n += 1;
            format!("{n}.")
        };
        self.push(format!("{indent}{marker} {text}"), true);
    }

    fn table(&mut self, tbl: Node<'_, '_>) {
        let rows: Vec<Vec<String>> = children(tbl, "tr")
            .map(|tr| {
                let mut cells = Vec::new();
                for tc in children(tr, "tc") {
                    let text: Vec<String> = tc
                        .descendants()
                        .filter(|n| n.has_tag_name_local("p"))
                        .map(|p| paragraph_text(p).trim().to_owned())
                        .filter(|t| !t.is_empty())
                        .collect();
                    cells.push(text.join("<br>"));
                    let span = child(tc, "tcPr")
                        .and_then(|pr| child(pr, "gridSpan"))
                        .and_then(|g| attr(g, "val"))
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(1);
                    cells.extend(std::iter::repeat_n(String::new(), span.saturating_sub(1)));
                }
                cells
            })
            .collect();
        if rows.is_empty() {
            return;
        }
        self.tables += 1;
        self.push(markdown_table(&rows).trim_end().to_owned(), false);
    }

    fn push(&mut self, block: String, list_item: bool) {
        if list_item && self.in_list {
            if let Some(last) = self.blocks.last_mut() {
                last.push('\n');
                last.push_str(&block);
            }
        } else {
            self.blocks.push(block);
        }
        self.in_list = list_item;
    }
}

/// A Word paragraph's text: its runs, tabs and breaks, in order (deleted
/// text and field codes left out).
fn paragraph_text(p: Node<'_, '_>) -> String {
    let mut out = String::new();
    for n in p.descendants().filter(Node::is_element) {
        match n.tag_name().name() {
            "t" => out.push_str(n.text().unwrap_or("")),
            "tab" if n.parent().is_some_and(|r| r.has_tag_name_local("r")) => out.push('\t'),
            "br" | "cr" => out.push('\n'),
            _ => {}
        }
    }
    out
}

fn word(bytes: Vec<u8>, display: &str, lines: Option<(u64, u64)>) -> Result<Converted, String> {
    let mut pkg = Package::open(bytes)?;
    let main = pkg.main_part("word/document.xml")?;
    let xml = pkg
        .part(&main)?
        .ok_or_else(|| format!("it has no document part ({main})"))?;
    let dir = main.rsplit_once('/').map_or("", |(d, _)| d);
    let join = |f: &str| {
        if dir.is_empty() {
            f.to_owned()
        } else {
            format!("{dir}/{f}")
        }
    };
    let styles = Styles::parse(pkg.part(&join("styles.xml"))?.as_deref());
    let numbering = Numbering::parse(pkg.part(&join("numbering.xml"))?.as_deref());
    let doc = parse(&xml, &main)?;
    let body = doc
        .descendants()
        .find(|n| n.has_tag_name_local("body"))
        .ok_or("its document part has no body")?;
    let mut writer = WordWriter {
        styles: &styles,
        numbering: &numbering,
        counters: HashMap::new(),
        blocks: Vec::new(),
        in_list: false,
        paragraphs: 0,
        tables: 0,
    };
    writer.blocks(body);
    let markdown = writer.blocks.join("\n\n");
    let all: Vec<&str> = markdown.lines().collect();
    let total = u64::try_from(all.len()).unwrap_or(u64::MAX);
    let summary = format!(
        "{} paragraph{}, {} table{}",
        writer.paragraphs,
        plural(writer.paragraphs),
        writer.tables,
        plural(writer.tables)
    );
    if total == 0 {
        return Ok(Converted {
            text: format!("{display} is a Word document with no text."),
            summary,
        });
    }
    let (start, limit) = lines.unwrap_or((1, u64::MAX));
    if start > total {
        return Err(format!(
            "`offset` {start} is past the end: as Markdown it has {total} lines"
        ));
    }
    let mut body = String::new();
    let mut end = start - 1;
    for line in all
        .iter()
        .skip(usize::try_from(start - 1).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
    {
        if body.len() + line.len() + 1 > MAX_TEXT_CHARS && end >= start {
            break;
        }
        body.push_str(line);
        body.push('\n');
        end += 1;
    }
    let mut text = if start == 1 && end == total {
        format!("{display} (Word document as Markdown, {total} lines):\n\n")
    } else {
        format!("{display} (Word document as Markdown, lines {start}-{end} of {total}):\n\n")
    };
    text.push_str(&body);
    if end < total {
        let _ = write!(
            text,
            "\n(Continue with offset={}: offset and limit count the lines of this Markdown.)",
            end + 1
        );
    }
    Ok(Converted { text, summary })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

// ---------------------------------------------------------------- workbook

/// Refuses a package with a part over `limit` bytes uncompressed, before
/// a reader that takes the zip itself (calamine) inflates it: the sizes
/// the zip declares are what its reader lets out.
fn check_part_sizes(bytes: &[u8], limit: u64) -> Result<(), String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| format!("it is not an Office Open XML package ({e})"))?;
    for i in 0..zip.len() {
        let part = zip
            .by_index_raw(i)
            .map_err(|e| format!("its part {i} could not be read ({e})"))?;
        if part.size() > limit {
            let name = part
                .name()
                .map_or_else(|_| format!("#{i}"), |n| n.into_owned());
            let bound = if limit >= 1024 * 1024 {
                format!("{} MB", limit / (1024 * 1024))
            } else {
                format!("{} KB", limit / 1024)
            };
            return Err(format!("its part {name} is over {bound} uncompressed"));
        }
    }
    Ok(())
}

fn workbook(bytes: Vec<u8>, display: &str, want: Option<&CellRange>) -> Result<Converted, String> {
    use calamine::Reader as _;
    check_part_sizes(&bytes, MAX_PART_BYTES)?;
    let mut book = calamine::Xlsx::new(Cursor::new(bytes))
        .map_err(|e| format!("it could not be opened ({e})"))?;
    let names = book.sheet_names();
    if names.is_empty() {
        return Err("it has no sheets".to_owned());
    }
    let chosen: Vec<String> = match want.and_then(|w| w.sheet.as_ref()) {
        Some(sheet) => {
            let Some(found) = names.iter().find(|n| n.eq_ignore_ascii_case(sheet)) else {
                return Err(format!(
                    "it has no sheet named {sheet:?}; its sheets are {}",
                    names
                        .iter()
                        .map(|n| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            vec![found.clone()]
        }
        // Cells alone are the first sheet's.
        None if want.is_some_and(|w| w.cells.is_some()) => vec![names[0].clone()],
        None => names.clone(),
    };
    let cells = want.and_then(|w| w.cells);
    let mut text = format!(
        "{display} (workbook, {} sheet{}: {}):\n",
        names.len(),
        plural(names.len()),
        names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut summaries = Vec::new();
    let mut left: Vec<String> = Vec::new();
    for (i, name) in chosen.iter().enumerate() {
        if text.len() >= MAX_TEXT_CHARS {
            left.push(name.clone());
            continue;
        }
        let range = book
            .worksheet_range(name)
            .map_err(|e| format!("its sheet {name:?} could not be read ({e})"))?;
        let room = MAX_TEXT_CHARS - text.len();
        let (sheet_text, summary, cut) = sheet(name, &range, cells, room);
        text.push('\n');
        text.push_str(&sheet_text);
        summaries.push(summary);
        if cut && i + 1 < chosen.len() {
            left.extend(chosen[i + 1..].iter().cloned());
            break;
        }
    }
    if !left.is_empty() {
        let _ = write!(
            text,
            "\n(Not shown: {}. Read each with range=\"SHEET\".)",
            left.iter()
                .map(|n| format!("sheet {n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(Converted {
        text,
        summary: summaries.join("; "),
    })
}

/// One sheet as a table with column letters and row numbers, within
/// `room` characters: (text, summary, whether it was cut).
fn sheet(
    name: &str,
    range: &calamine::Range<calamine::Data>,
    want: Option<((u32, u32), (u32, u32))>,
    room: usize,
) -> (String, String, bool) {
    let (Some(first), Some(last)) = (range.start(), range.end()) else {
        return (
            format!("## Sheet {name:?}: empty\n"),
            format!("{name}: empty"),
            false,
        );
    };
    let extent = format!("{}:{}", cell_name(first), cell_name(last));
    let (top, bottom) = match want {
        Some((a, b)) => (
            (a.0.max(first.0), a.1.max(first.1)),
            (b.0.min(last.0), b.1.min(last.1)),
        ),
        None => (first, last),
    };
    if top.0 > bottom.0 || top.1 > bottom.1 {
        return (
            format!("## Sheet {name:?} ({extent}): nothing in the range asked for\n"),
            format!("{name}: {extent}"),
            false,
        );
    }
    let columns: Vec<u32> = (top.1..=bottom.1).collect();
    let mut out = format!("## Sheet {name:?} ({extent})\n\n|   |");
    for c in &columns {
        let _ = write!(out, " {} |", column_name(*c));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    out.push('\n');
    let mut shown_last = None;
    let mut rows_shown = 0u32;
    let mut cut_at = None;
    for row in top.0..=bottom.0 {
        let values: Vec<String> = columns
            .iter()
            .map(|c| {
                range
                    .get_value((row, *c))
                    .map(cell_text)
                    .unwrap_or_default()
            })
            .collect();
        if values.iter().all(String::is_empty) {
            continue;
        }
        let mut line = format!("| {} |", row + 1);
        for v in &values {
            let _ = write!(line, " {} |", table_cell(v));
        }
        line.push('\n');
        if rows_shown >= MAX_ROWS_PER_READ || (out.len() + line.len() > room && rows_shown > 0) {
            cut_at = Some(row);
            break;
        }
        out.push_str(&line);
        rows_shown += 1;
        shown_last = Some(row);
    }
    let summary = format!("{name}: {extent}");
    let Some(next) = cut_at else {
        return (out, summary, false);
    };
    let shown = shown_last.map_or(String::new(), |r| format!("rows {}-{} ", top.0 + 1, r + 1));
    let span = shown_last.map_or(MAX_ROWS_PER_READ, |r| r - top.0 + 1);
    let until = (next + span - 1).min(bottom.0);
    let _ = write!(
        out,
        "\n(Sheet {name:?} is cut: {shown}of {} shown; one Read shows at most {MAX_ROWS_PER_READ} rows and {MAX_TEXT_CHARS} characters. Continue with range=\"{}!{}:{}\".)\n",
        bottom.0 + 1,
        quote_sheet(name),
        cell_name((next, top.1)),
        cell_name((until, bottom.1))
    );
    (out, summary, true)
}

fn quote_sheet(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name.to_owned()
    } else {
        format!("'{}'", name.replace('\'', "''"))
    }
}

/// A cell's value as shown: numbers without a needless `.0`, dates as
/// ISO dates.
fn cell_text(value: &calamine::Data) -> String {
    use calamine::Data;
    match value {
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        Data::DateTime(d) if d.is_datetime() => excel_date(d.as_f64()),
        other => other.to_string(),
    }
}

/// An Excel serial date (days since 1899-12-30, the 1900 date system) as
/// `YYYY-MM-DD`, with `HH:MM:SS` when it has a time of day.
fn excel_date(serial: f64) -> String {
    if !serial.is_finite() || !(0.0..3_000_000.0).contains(&serial) {
        return serial.to_string();
    }
    // The integer part of a finite serial in range fits in i64.
    #[allow(clippy::cast_possible_truncation)]
    let days = serial.trunc() as i64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let seconds = ((serial - serial.trunc()) * 86_400.0).round() as u64;
    // Serial 25,569 is 1970-01-01.
    let (y, m, d) = riot_protocol::civil_from_days(days - 25_569);
    let date = format!("{y:04}-{m:02}-{d:02}");
    if seconds == 0 || seconds >= 86_400 {
        date
    } else {
        format!(
            "{date} {:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        )
    }
}

// ---------------------------------------------------------------- slides

/// A slide's title, text and notes.
#[derive(Default)]
struct Slide {
    title: Option<String>,
    text: Vec<String>,
    notes: Vec<String>,
}

/// The paragraphs of a DrawingML text body, indented by level.
fn text_body(body: Node<'_, '_>, out: &mut Vec<String>) {
    for p in children(body, "p") {
        let mut line = String::new();
        for n in p.descendants().filter(Node::is_element) {
            match n.tag_name().name() {
                "t" => line.push_str(n.text().unwrap_or("")),
                "br" => line.push('\n'),
                _ => {}
            }
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let level = child(p, "pPr")
            .and_then(|pp| attr(pp, "lvl"))
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(0);
        out.push(format!("{}{line}", "  ".repeat(level)));
    }
}

/// A placeholder's type (`title`, `body`, `sldNum`…), `None` for a plain
/// shape.
fn placeholder<'a>(shape: Node<'a, '_>) -> Option<&'a str> {
    let ph = shape.descendants().find(|n| n.has_tag_name_local("ph"))?;
    Some(attr(ph, "type").unwrap_or("body"))
}

/// Shapes, tables and groups of a shape tree, in order.
fn shapes(tree: Node<'_, '_>, slide: &mut Slide, notes: bool) {
    for node in tree.children().filter(Node::is_element) {
        match node.tag_name().name() {
            "sp" => {
                let kind = placeholder(node);
                let Some(body) = child(node, "txBody") else {
                    continue;
                };
                if notes {
                    // A notes page holds the slide's image, its number and
                    // the notes; only the notes are wanted.
                    if kind == Some("body") {
                        text_body(body, &mut slide.notes);
                    }
                    continue;
                }
                match kind {
                    Some("title" | "ctrTitle") if slide.title.is_none() => {
                        let mut lines = Vec::new();
                        text_body(body, &mut lines);
                        let title = lines.join(" ");
                        if !title.is_empty() {
                            slide.title = Some(title);
                        }
                    }
                    Some("sldNum" | "dt" | "ftr") => {}
                    _ => text_body(body, &mut slide.text),
                }
            }
            "grpSp" => shapes(node, slide, notes),
            "graphicFrame" if !notes => {
                for tbl in node.descendants().filter(|n| n.has_tag_name_local("tbl")) {
                    let rows: Vec<Vec<String>> = children(tbl, "tr")
                        .map(|tr| {
                            children(tr, "tc")
                                .map(|tc| {
                                    let mut lines = Vec::new();
                                    if let Some(body) = child(tc, "txBody") {
                                        text_body(body, &mut lines);
                                    }
                                    lines.join("<br>")
                                })
                                .collect()
                        })
                        .collect();
                    slide.text.push(markdown_table(&rows).trim_end().to_owned());
                }
            }
            _ => {}
        }
    }
}

fn slide_part(pkg: &mut Package, part: &str, slide: &mut Slide, notes: bool) -> Result<(), String> {
    let Some(xml) = pkg.part(part)? else {
        return Err(format!("its part {part} is missing"));
    };
    let doc = parse(&xml, part)?;
    if let Some(tree) = doc.descendants().find(|n| n.has_tag_name_local("spTree")) {
        shapes(tree, slide, notes);
    }
    Ok(())
}

fn slides(bytes: Vec<u8>, display: &str, want: Option<PageRange>) -> Result<Converted, String> {
    let mut pkg = Package::open(bytes)?;
    let main = pkg.main_part("ppt/presentation.xml")?;
    let xml = pkg
        .part(&main)?
        .ok_or_else(|| format!("it has no presentation part ({main})"))?;
    let rels = pkg.relationships(&main)?;
    let order: Vec<String> = {
        let doc = parse(&xml, &main)?;
        doc.descendants()
            .filter(|n| n.has_tag_name_local("sldId"))
            // `<p:sldId id="256" r:id="rId2"/>`: the relationship is the
            // namespaced `id`.
            .filter_map(|n| {
                n.attributes()
                    .find(|a| a.name() == "id" && a.namespace().is_some())
                    .map(|a| a.value())
            })
            .filter_map(|id| rels.get(id).map(|(_, target)| target.clone()))
            .collect()
    };
    let total = u32::try_from(order.len()).unwrap_or(u32::MAX);
    if total == 0 {
        return Ok(Converted {
            text: format!("{display} is a presentation with no slides."),
            summary: "no slides".to_owned(),
        });
    }
    let range = match want {
        Some(r) if r.first > total => {
            return Err(format!(
                "`pages` starts past the end: it has {total} slide{}",
                plural(usize::try_from(total).unwrap_or(0))
            ));
        }
        Some(r) => PageRange {
            first: r.first,
            last: r.last.min(total),
        },
        None => PageRange {
            first: 1,
            last: total,
        },
    };
    let mut body = String::new();
    let mut shown_last = range.first;
    let mut cut = None;
    for number in range.first..=range.last {
        let part = &order[usize::try_from(number - 1).unwrap_or(0)];
        let mut slide = Slide::default();
        slide_part(&mut pkg, part, &mut slide, false)?;
        let notes_part = pkg
            .relationships(part)?
            .into_values()
            .find(|(kind, _)| kind.ends_with("/notesSlide"))
            .map(|(_, target)| target);
        if let Some(notes) = notes_part {
            slide_part(&mut pkg, &notes, &mut slide, true)?;
        }
        let mut block = format!("\n--- Slide {number} of {total}");
        if let Some(title) = &slide.title {
            let _ = write!(block, ": {title}");
        }
        block.push_str(" ---\n");
        for text in &slide.text {
            block.push_str(text);
            block.push('\n');
        }
        if !slide.notes.is_empty() {
            let _ = writeln!(block, "Notes: {}", slide.notes.join("\n"));
        }
        if body.len() + block.len() > MAX_TEXT_CHARS && number > range.first {
            cut = Some(number);
            break;
        }
        body.push_str(&block);
        shown_last = number;
    }
    let mut text = if range.first == shown_last {
        format!("{display}: slide {} of {total}.\n", range.first)
    } else {
        format!(
            "{display}: slides {}-{shown_last} of {total}.\n",
            range.first
        )
    };
    text.push_str(&body);
    if let Some(next) = cut {
        let _ = write!(
            text,
            "\n(One Read shows at most {MAX_TEXT_CHARS} characters. Continue with pages=\"{next}-{}\".)",
            range.last
        );
    }
    Ok(Converted {
        text,
        summary: format!("slides {}-{shown_last} of {total}", range.first),
    })
}

#[cfg(test)]
#[path = "read_office_tests.rs"]
mod tests;
