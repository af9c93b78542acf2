//! PDF files built in tests with `lopdf`: plain pages of one line of text
//! each, and a way to read the text back page by page.

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};

/// What page `i` of [`pdf`] says.
pub fn page_line(i: u32) -> String {
    format!("Page {i} of the test document")
}

/// A valid, uncompressed PDF of `pages` pages; page `i` says
/// [`page_line`]`(i)` in Helvetica.
// Encoding a content stream and writing into memory fail only on a bug
// here; the test stops.
#[allow(clippy::expect_used)]
pub fn pdf(pages: u32) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for i in 1..=pages {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(page_line(i))]),
                Operation::new("ET", vec![]),
            ],
        };
        let encoded = content.encode().expect("a content stream");
        let content_id = doc.add_object(Stream::new(dictionary! {}, encoded));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(page_id.into());
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => i64::from(pages),
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("a PDF in memory");
    out
}

/// Each page's text, trimmed, in page order; `None` when `bytes` is not a
/// PDF lopdf can read.
pub fn page_texts(bytes: &[u8]) -> Option<Vec<String>> {
    let doc = Document::load_mem(bytes).ok()?;
    doc.get_pages()
        .keys()
        .map(|n| doc.extract_text(&[*n]).ok().map(|t| t.trim().to_owned()))
        .collect()
}
