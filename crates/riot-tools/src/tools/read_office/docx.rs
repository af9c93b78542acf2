//! A Word document as Markdown: headings by style or outline level,
//! bulleted and numbered lists, tables.

use std::collections::HashMap;
use std::fmt::Write as _;

use roxmltree::Node;

use super::{
    Converted, LocalName as _, MAX_TEXT_CHARS, OfficeError, Package, attr, child, children,
    markdown_table, parse, plural,
};

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

pub(super) fn word(
    bytes: Vec<u8>,
    display: &str,
    lines: Option<(u64, u64)>,
) -> Result<Converted, OfficeError> {
    let mut pkg = Package::open(bytes)?;
    let main = pkg.main_part("word/document.xml")?;
    let xml = pkg
        .part(&main)?
        .ok_or_else(|| OfficeError::NoDocument(main.clone()))?;
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
        .ok_or(OfficeError::NoBody)?;
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
        return Err(OfficeError::OffsetPastEnd { start, total });
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
