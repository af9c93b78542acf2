use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use riot_protocol::{Tool, ToolOutcome, UiPayload, ValidationError};

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

/// A valid PDF of `n` pages; page `i` says "Page i of the test document".
fn pdf(n: u32) -> Vec<u8> {
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
    for i in 1..=n {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new(
                    "Tj",
                    vec![Object::string_literal(format!(
                        "Page {i} of the test document"
                    ))],
                ),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
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
            "Count" => n as i64,
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
    doc.save_to(&mut out).unwrap();
    out
}

fn input(path: &str, pages: Option<&str>) -> ReadInput {
    ReadInput {
        file_path: path.into(),
        offset: None,
        limit: None,
        pages: pages.map(str::to_owned),
        range: None,
    }
}

async fn read_ok(p: &TempProject, path: &str, pages: Option<&str>) -> (String, UiPayload) {
    let out = Read.call(input(path, pages), &p.ctx()).await;
    let text = text_of(&out);
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed: {text}")
    };
    (text, ui_payload.unwrap())
}

#[tokio::test]
async fn a_page_range_reads_those_pages_text_in_order() {
    let p = TempProject::new();
    p.write("doc.pdf", pdf(5));
    let (text, ui) = read_ok(&p, "doc.pdf", Some("2-4")).await;
    let pages: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("--- Page "))
        .collect();
    assert_eq!(
        pages,
        ["--- Page 2 ---", "--- Page 3 ---", "--- Page 4 ---"]
    );
    assert!(
        text.starts_with("doc.pdf: pages 2-4 of 5 (PDF text).\n"),
        "{text}"
    );
    for i in 2..=4 {
        assert!(
            text.contains(&format!("Page {i} of the test document")),
            "page {i} text missing: {text}"
        );
    }
    assert!(!text.contains("Page 1 of the test document"), "{text}");
    assert!(!text.contains("Page 5 of the test document"), "{text}");
    assert!(text.ends_with("(Continue with pages=\"5-5\".)"), "{text}");
    assert_eq!(
        ui,
        UiPayload::PdfRead {
            path: "doc.pdf".into(),
            first_page: 2,
            last_page: 4,
            total_pages: 5
        }
    );
}

#[tokio::test]
async fn one_page_and_a_short_pdf_whole() {
    let p = TempProject::new();
    p.write("doc.pdf", pdf(3));
    let (text, _) = read_ok(&p, "doc.pdf", Some("3")).await;
    assert!(
        text.starts_with("doc.pdf: page 3 of 3 (PDF text).\n"),
        "{text}"
    );
    assert!(text.contains("Page 3 of the test document"), "{text}");
    assert!(!text.contains("Page 2 of the test document"), "{text}");
    let (text, ui) = read_ok(&p, "doc.pdf", None).await;
    assert!(
        text.starts_with("doc.pdf: pages 1-3 of 3 (PDF text).\n"),
        "{text}"
    );
    for i in 1..=3 {
        assert!(text.contains(&format!("Page {i} of the test document")));
    }
    assert_eq!(
        ui,
        UiPayload::PdfRead {
            path: "doc.pdf".into(),
            first_page: 1,
            last_page: 3,
            total_pages: 3
        }
    );
}

#[tokio::test]
async fn a_range_past_the_last_page_is_cut_at_the_end() {
    let p = TempProject::new();
    p.write("doc.pdf", pdf(3));
    let (text, ui) = read_ok(&p, "doc.pdf", Some("2-9")).await;
    assert!(
        text.starts_with("doc.pdf: pages 2-3 of 3 (PDF text).\n"),
        "{text}"
    );
    assert!(!text.contains("Continue"), "{text}");
    assert_eq!(
        ui,
        UiPayload::PdfRead {
            path: "doc.pdf".into(),
            first_page: 2,
            last_page: 3,
            total_pages: 3
        }
    );
    let out = Read.call(input("doc.pdf", Some("4")), &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Failed { .. }));
    assert_eq!(
        text_of(&out),
        "`pages` starts past the end: doc.pdf has 3 pages. Use pages between 1 and 3."
    );
}

#[tokio::test]
async fn a_large_pdf_without_pages_gives_its_page_count_and_asks_for_a_range() {
    let p = TempProject::new();
    p.write("big.pdf", pdf(25));
    let out = Read.call(input("big.pdf", None), &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Failed { .. }));
    assert_eq!(
        text_of(&out),
        "big.pdf is a PDF of 25 pages, too many to read at once. Read a range with `pages` (e.g. pages=\"1-20\"); at most 20 pages a call."
    );
    let (text, _) = read_ok(&p, "big.pdf", Some("21-25")).await;
    assert!(text.contains("Page 25 of the test document"), "{text}");
}

#[tokio::test]
async fn a_corrupt_pdf_is_a_clear_error() {
    let p = TempProject::new();
    p.write("bad.pdf", b"%PDF-1.5\nthis is not a pdf at all\n%%EOF\n");
    let out = Read.call(input("bad.pdf", Some("1")), &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Failed { .. }));
    let text = text_of(&out);
    assert!(
        text.starts_with("bad.pdf could not be read as a PDF: ")
            && text.ends_with("Check that it is a valid, unencrypted PDF."),
        "{text}"
    );
}

#[test]
fn pages_parse_one_page_or_a_range() {
    assert_eq!(parse_pages("3"), Ok(PageRange { first: 3, last: 3 }));
    assert_eq!(parse_pages("1-5"), Ok(PageRange { first: 1, last: 5 }));
    assert_eq!(parse_pages(" 2 - 4 "), Ok(PageRange { first: 2, last: 4 }));
    assert_eq!(parse_pages("1-20"), Ok(PageRange { first: 1, last: 20 }));
}

#[test]
fn bad_page_ranges_say_what_to_send() {
    let bad = |s: &str| parse_pages(s).unwrap_err();
    assert_eq!(
        bad("0"),
        "`pages` must be one page (\"3\") or a range (\"1-5\"), not \"0\". Pages are numbered from 1."
    );
    assert_eq!(
        bad("a-b"),
        "`pages` must be one page (\"3\") or a range (\"1-5\"), not \"a-b\". Pages are numbered from 1."
    );
    assert!(bad("1,2").starts_with("`pages` must be one page"));
    assert!(bad("-3").starts_with("`pages` must be one page"));
    assert_eq!(
        bad("5-2"),
        "`pages` \"5-2\" ends before it starts. Give the first page, then the last (\"2-5\")."
    );
    assert_eq!(
        bad("1-21"),
        "`pages` \"1-21\" asks for 21 pages; one Read returns at most 20. Read \"1-20\" first, then continue."
    );
}

#[tokio::test]
async fn pages_are_refused_for_a_file_that_is_not_a_pdf_and_checked_before_reading() {
    let p = TempProject::new();
    p.write("a.txt", "x\n");
    let err: ValidationError = Read
        .validate_input(&input("a.txt", Some("1")), &p.ctx())
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "`pages` applies to PDF files and .pptx slides only. Use `offset` and `limit` for a text file."
    );
    let err = Read
        .validate_input(&input("doc.pdf", Some("3-1")), &p.ctx())
        .await
        .unwrap_err();
    assert!(
        err.message.contains("ends before it starts"),
        "{}",
        err.message
    );
}

#[test]
fn pdf_is_known_by_its_extension() {
    assert!(is_pdf("a/b/Spec.PDF"));
    assert!(is_pdf("x.pdf"));
    assert!(!is_pdf("pdf"));
    assert!(!is_pdf("x.pdf.txt"));
}
