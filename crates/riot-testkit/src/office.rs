//! Office Open XML files built in tests: just the parts Word, Excel and
//! PowerPoint need to open them (content types, relationships, the main
//! part), written with the `zip` crate. Text is XML-escaped here; the
//! Word body is given as WordprocessingML.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const PKG_RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_DOC: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";
const S: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
const P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";

/// `text` with XML's five special characters escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

// Writing a zip into memory fails only on a bug here; the test stops.
#[allow(clippy::expect_used)]
fn package(parts: &[(String, String)]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        zip.start_file(name.as_str(), options).expect("zip entry");
        zip.write_all(text.as_bytes()).expect("zip write");
    }
    zip.finish().expect("zip finish").into_inner()
}

fn content_types(overrides: &[(&str, &str)]) -> String {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>"#,
    );
    for (part, kind) in overrides {
        xml.push_str(&format!(
            r#"<Override PartName="/{part}" ContentType="{kind}"/>"#
        ));
    }
    xml.push_str("</Types>");
    xml
}

fn relationships(rels: &[(&str, &str, &str)]) -> String {
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{PKG_RELS}">"#
    );
    for (id, kind, target) in rels {
        xml.push_str(&format!(
            r#"<Relationship Id="{id}" Type="{kind}" Target="{target}"/>"#
        ));
    }
    xml.push_str("</Relationships>");
    xml
}

/// A Word paragraph of `text`, in style `style` when given.
pub fn w_paragraph(style: Option<&str>, text: &str) -> String {
    let props = style.map_or(String::new(), |s| {
        format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#)
    });
    format!(
        r#"<w:p>{props}<w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
        escape(text)
    )
}

/// A list item of list `num_id` at level `ilvl`.
pub fn w_list_item(num_id: u32, ilvl: u32, text: &str) -> String {
    format!(
        r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num_id}"/></w:numPr></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>"#,
        escape(text)
    )
}

/// A Word table of text cells.
pub fn w_table(rows: &[&[&str]]) -> String {
    let mut xml = String::from("<w:tbl>");
    for row in rows {
        xml.push_str("<w:tr>");
        for cell in *row {
            xml.push_str(&format!(
                "<w:tc><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:tc>",
                escape(cell)
            ));
        }
        xml.push_str("</w:tr>");
    }
    xml.push_str("</w:tbl>");
    xml
}

/// A `.docx` whose body is `body` (WordprocessingML). List 1 is
/// bulleted and list 2 numbered; styles `Heading1`…`Heading3` are
/// headings by their names.
pub fn docx(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    let mut styles = format!(r#"<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="{W}">"#);
    for level in 1..=3 {
        styles.push_str(&format!(
            r#"<w:style w:type="paragraph" w:styleId="Heading{level}"><w:name w:val="heading {level}"/></w:style>"#
        ));
    }
    styles.push_str("</w:styles>");
    let numbering = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:numbering xmlns:w="{W}"><w:abstractNum w:abstractNumId="10"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="20"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="20"/></w:num></w:numbering>"#
    );
    let main = "application/vnd.openxmlformats-officedocument.wordprocessingml";
    package(&[
        (
            "[Content_Types].xml".into(),
            content_types(&[
                ("word/document.xml", &format!("{main}.document.main+xml")),
                ("word/styles.xml", &format!("{main}.styles+xml")),
                ("word/numbering.xml", &format!("{main}.numbering+xml")),
            ]),
        ),
        (
            "_rels/.rels".into(),
            relationships(&[("rId1", OFFICE_DOC, "word/document.xml")]),
        ),
        (
            "word/_rels/document.xml.rels".into(),
            relationships(&[
                (
                    "rId1",
                    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles",
                    "styles.xml",
                ),
                (
                    "rId2",
                    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering",
                    "numbering.xml",
                ),
            ]),
        ),
        ("word/document.xml".into(), document),
        ("word/styles.xml".into(), styles),
        ("word/numbering.xml".into(), numbering),
    ])
}

/// A cell of a test workbook.
#[derive(Debug, Clone)]
pub enum Cell {
    Text(String),
    Number(f64),
    Empty,
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::Text(s.to_owned())
    }
}

impl From<f64> for Cell {
    fn from(n: f64) -> Self {
        Cell::Number(n)
    }
}

fn column(col: usize) -> String {
    let mut n = col + 1;
    let mut name = Vec::new();
    while n > 0 {
        name.push(char::from(b'A' + u8::try_from((n - 1) % 26).unwrap_or(0)));
        n = (n - 1) / 26;
    }
    name.iter().rev().collect()
}

/// An `.xlsx` of `sheets`, each a name and rows of cells from `A1`
/// (strings inline, no shared-strings part).
pub fn xlsx(sheets: &[(&str, Vec<Vec<Cell>>)]) -> Vec<u8> {
    let main = "application/vnd.openxmlformats-officedocument.spreadsheetml";
    let mut types = vec![(
        "xl/workbook.xml".to_owned(),
        format!("{main}.sheet.main+xml"),
    )];
    let mut workbook = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{S}" xmlns:r="{R}"><sheets>"#
    );
    let mut rels = Vec::new();
    let mut parts = Vec::new();
    for (i, (name, rows)) in sheets.iter().enumerate() {
        let n = i + 1;
        workbook.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            escape(name)
        ));
        rels.push((format!("rId{n}"), format!("worksheets/sheet{n}.xml")));
        types.push((
            format!("xl/worksheets/sheet{n}.xml"),
            format!("{main}.worksheet+xml"),
        ));
        let mut xml =
            format!(r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{S}"><sheetData>"#);
        for (r, row) in rows.iter().enumerate() {
            xml.push_str(&format!(r#"<row r="{}">"#, r + 1));
            for (c, cell) in row.iter().enumerate() {
                let at = format!("{}{}", column(c), r + 1);
                match cell {
                    Cell::Text(t) => xml.push_str(&format!(
                        r#"<c r="{at}" t="inlineStr"><is><t>{}</t></is></c>"#,
                        escape(t)
                    )),
                    Cell::Number(v) => xml.push_str(&format!(r#"<c r="{at}"><v>{v}</v></c>"#)),
                    Cell::Empty => {}
                }
            }
            xml.push_str("</row>");
        }
        xml.push_str("</sheetData></worksheet>");
        parts.push((format!("xl/worksheets/sheet{n}.xml"), xml));
    }
    workbook.push_str("</sheets></workbook>");
    let type_refs: Vec<(&str, &str)> = types
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let rel_refs: Vec<(&str, &str, &str)> = rels
        .iter()
        .map(|(id, target)| {
            (
                id.as_str(),
                "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet",
                target.as_str(),
            )
        })
        .collect();
    let mut all = vec![
        ("[Content_Types].xml".to_owned(), content_types(&type_refs)),
        (
            "_rels/.rels".to_owned(),
            relationships(&[("rId1", OFFICE_DOC, "xl/workbook.xml")]),
        ),
        ("xl/workbook.xml".to_owned(), workbook),
        (
            "xl/_rels/workbook.xml.rels".to_owned(),
            relationships(&rel_refs),
        ),
    ];
    all.extend(parts);
    package(&all)
}

/// A slide of a test presentation.
#[derive(Debug, Clone, Default)]
pub struct Slide {
    pub title: String,
    /// The body placeholder's paragraphs.
    pub body: Vec<String>,
    /// The speaker notes, if any.
    pub notes: Option<String>,
}

fn shape(id: u32, placeholder: &str, paragraphs: &[String]) -> String {
    let mut body = String::new();
    for p in paragraphs {
        body.push_str(&format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", escape(p)));
    }
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="Shape {id}"/><p:cNvSpPr/><p:nvPr><p:ph type="{placeholder}"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{body}</p:txBody></p:sp>"#
    )
}

fn slide_xml(shapes: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>{shapes}</p:spTree></p:cSld></p:sld>"#
    )
}

/// A `.pptx` of `slides`, in order, each with its notes page when it has
/// notes. The parts are named in reverse (the last slide is
/// `slide1.xml`), so the order must come from the presentation's list.
pub fn pptx(slides: &[Slide]) -> Vec<u8> {
    let main = "application/vnd.openxmlformats-officedocument.presentationml";
    let rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let mut types = vec![(
        "ppt/presentation.xml".to_owned(),
        format!("{main}.presentation.main+xml"),
    )];
    let mut list = String::new();
    let mut pres_rels = Vec::new();
    let mut parts = Vec::new();
    let count = slides.len();
    for (i, slide) in slides.iter().enumerate() {
        let file = count - i;
        let rid = format!("rId{}", i + 1);
        list.push_str(&format!(r#"<p:sldId id="{}" r:id="{rid}"/>"#, 256 + i));
        pres_rels.push((rid, format!("slides/slide{file}.xml")));
        types.push((
            format!("ppt/slides/slide{file}.xml"),
            format!("{main}.slide+xml"),
        ));
        let shapes = format!(
            "{}{}{}",
            shape(2, "title", std::slice::from_ref(&slide.title)),
            shape(3, "body", &slide.body),
            shape(4, "sldNum", &[format!("{}", i + 1)])
        );
        parts.push((format!("ppt/slides/slide{file}.xml"), slide_xml(&shapes)));
        if let Some(notes) = &slide.notes {
            parts.push((
                format!("ppt/slides/_rels/slide{file}.xml.rels"),
                relationships(&[(
                    "rId1",
                    &format!("{rel}/notesSlide"),
                    &format!("../notesSlides/notesSlide{file}.xml"),
                )]),
            ));
            types.push((
                format!("ppt/notesSlides/notesSlide{file}.xml"),
                format!("{main}.notesSlide+xml"),
            ));
            let shapes = format!(
                "{}{}",
                shape(2, "sldImg", &[]),
                shape(3, "body", std::slice::from_ref(notes))
            );
            parts.push((
                format!("ppt/notesSlides/notesSlide{file}.xml"),
                slide_xml(&shapes)
                    .replace("<p:sld ", "<p:notes ")
                    .replace("</p:sld>", "</p:notes>"),
            ));
        }
    }
    let presentation = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><p:presentation xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}"><p:sldIdLst>{list}</p:sldIdLst></p:presentation>"#
    );
    let type_refs: Vec<(&str, &str)> = types
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let slide_rel = format!("{rel}/slide");
    let rel_refs: Vec<(&str, &str, &str)> = pres_rels
        .iter()
        .map(|(id, target)| (id.as_str(), slide_rel.as_str(), target.as_str()))
        .collect();
    let mut all = vec![
        ("[Content_Types].xml".to_owned(), content_types(&type_refs)),
        (
            "_rels/.rels".to_owned(),
            relationships(&[("rId1", OFFICE_DOC, "ppt/presentation.xml")]),
        ),
        ("ppt/presentation.xml".to_owned(), presentation),
        (
            "ppt/_rels/presentation.xml.rels".to_owned(),
            relationships(&rel_refs),
        ),
    ];
    all.extend(parts);
    package(&all)
}
