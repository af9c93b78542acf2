//! A presentation's slides: each one's title, text and tables, with its
//! notes.

use std::fmt::Write as _;

use roxmltree::Node;

use super::{
    Converted, LocalName as _, MAX_TEXT_CHARS, OfficeError, Package, attr, child, children,
    markdown_table, parse,
};
use crate::tools::read_pdf::PageRange;

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

fn slide_part(
    pkg: &mut Package,
    part: &str,
    slide: &mut Slide,
    notes: bool,
) -> Result<(), OfficeError> {
    let Some(xml) = pkg.part(part)? else {
        return Err(OfficeError::PartMissing(part.to_owned()));
    };
    let doc = parse(&xml, part)?;
    if let Some(tree) = doc.descendants().find(|n| n.has_tag_name_local("spTree")) {
        shapes(tree, slide, notes);
    }
    Ok(())
}

pub(super) fn slides(
    bytes: Vec<u8>,
    display: &str,
    want: Option<PageRange>,
) -> Result<Converted, OfficeError> {
    let mut pkg = Package::open(bytes)?;
    let main = pkg.main_part("ppt/presentation.xml")?;
    let xml = pkg
        .part(&main)?
        .ok_or_else(|| OfficeError::NoPresentation(main.clone()))?;
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
            return Err(OfficeError::SlidesPastEnd { total });
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
