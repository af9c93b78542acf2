use lopdf::{Document, Object, dictionary};
use riot_protocol::{Tool, ToolOutcome, ToolResultContent, UiPayload, ValidationError};

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

/// A valid PDF of `n` pages; page `i` says "Page i of the test document".
fn pdf(n: u32) -> Vec<u8> {
    riot_testkit::pdf::pdf(n)
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
    let bad = |s: &str| parse_pages(s).unwrap_err().to_string();
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

/// A document block's PDF bytes, page count and text.
type Sent = (Vec<u8>, u32, String);

/// The outcome's blocks: the text blocks, and the one document block.
fn parts(out: &ToolOutcome) -> (Vec<String>, Option<Sent>) {
    use base64::Engine as _;
    let ToolOutcome::Ok { model_content, .. } = out else {
        panic!("read failed: {}", text_of(out))
    };
    let mut texts = Vec::new();
    let mut document = None;
    for c in model_content {
        match c {
            ToolResultContent::Text { text } => texts.push(text.clone()),
            ToolResultContent::Document {
                source,
                pages,
                text,
            } => {
                assert_eq!(source.media_type, "application/pdf");
                assert!(document.is_none(), "one document block");
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(&source.data)
                    .unwrap();
                document = Some((bytes, *pages, text.clone()));
            }
            ToolResultContent::Image { .. } => panic!("no image in a PDF read"),
        }
    }
    (texts, document)
}

/// Each page's text of a PDF, in page order.
fn page_texts(bytes: &[u8]) -> Vec<String> {
    riot_testkit::pdf::page_texts(bytes).expect("a readable PDF")
}

#[tokio::test]
async fn a_page_range_goes_as_a_pdf_of_just_those_pages_between_the_header_and_the_note() {
    let p = TempProject::new();
    let original = pdf(5);
    p.write("doc.pdf", original.clone());
    let out = Read.call(input("doc.pdf", Some("2-3")), &p.ctx()).await;
    let (texts, document) = parts(&out);
    let (bytes, pages, text) = document.expect("a document block");
    assert_eq!(
        texts,
        [
            "doc.pdf: pages 2-3 of 5 (PDF text).\n",
            "(Continue with pages=\"4-5\".)"
        ]
    );
    assert_eq!(pages, 2);
    assert_eq!(
        page_texts(&bytes),
        ["Page 2 of the test document", "Page 3 of the test document"]
    );
    assert!(bytes.len() < original.len(), "the other pages are gone");
    assert!(text.starts_with("--- Page 2 ---\nPage 2 of the test document"));
    assert!(text.contains("\n--- Page 3 ---\nPage 3 of the test document"));
    assert!(!text.contains("Page 4"), "{text}");
    // Joined as a text-only model reads it, the blocks are the text result.
    let joined = text_of(&out);
    assert_eq!(
        joined,
        format!("doc.pdf: pages 2-3 of 5 (PDF text).\n\n{text}\n(Continue with pages=\"4-5\".)")
    );
}

#[tokio::test]
async fn a_whole_short_pdf_goes_as_the_file_itself() {
    let p = TempProject::new();
    let original = pdf(3);
    p.write("doc.pdf", original.clone());
    let out = Read.call(input("doc.pdf", None), &p.ctx()).await;
    let (texts, document) = parts(&out);
    let (bytes, pages, _) = document.expect("a document block");
    assert_eq!(texts, ["doc.pdf: pages 1-3 of 3 (PDF text).\n"]);
    assert_eq!(pages, 3);
    assert_eq!(bytes, original);
}

#[tokio::test]
async fn one_page_is_a_one_page_pdf() {
    let p = TempProject::new();
    p.write("doc.pdf", pdf(3));
    let out = Read.call(input("doc.pdf", Some("3")), &p.ctx()).await;
    let (_, document) = parts(&out);
    let (bytes, pages, text) = document.expect("a document block");
    assert_eq!(pages, 1);
    assert_eq!(page_texts(&bytes), ["Page 3 of the test document"]);
    assert_eq!(text.lines().next(), Some("--- Page 3 ---"));
}

/// `pdf(n)` with an outline whose one entry points at page `n`, page
/// labels and an open action on page `n`.
fn pdf_with_outline(n: u32) -> Vec<u8> {
    let mut doc = Document::load_mem(&pdf(n)).unwrap();
    let last = *doc.get_pages().get(&n).unwrap();
    let outlines_id = doc.new_object_id();
    let item_id = doc.add_object(dictionary! {
        "Title" => Object::string_literal("The last page"),
        "Parent" => outlines_id,
        "Dest" => vec![last.into(), "Fit".into()],
    });
    doc.objects.insert(
        outlines_id,
        Object::Dictionary(dictionary! {
            "Type" => "Outlines",
            "First" => item_id,
            "Last" => item_id,
            "Count" => 1,
        }),
    );
    let catalog = doc.catalog_mut().unwrap();
    catalog.set("Outlines", outlines_id);
    catalog.set("OpenAction", vec![last.into(), "Fit".into()]);
    catalog.set(
        "PageLabels",
        dictionary! { "Nums" => vec![0.into(), dictionary! { "S" => "r" }.into()] },
    );
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[test]
fn the_cut_pdf_drops_what_points_at_other_pages_and_keeps_only_its_own() {
    let original = pdf_with_outline(5);
    let contains =
        |hay: &[u8], needle: &str| hay.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(contains(&original, "Page 5 of the test document"));
    let mut doc = Document::load_mem(&original).unwrap();
    let cut = keep_pages(&mut doc, 5, 2, 3, MAX_DOCUMENT_BYTES).expect("a cut PDF");
    assert_eq!(
        page_texts(&cut),
        ["Page 2 of the test document", "Page 3 of the test document"]
    );
    for page in [1, 4, 5] {
        assert!(
            !contains(&cut, &format!("Page {page} of the test document")),
            "page {page}'s content is not in the cut PDF"
        );
    }
    assert!(!contains(&cut, "The last page"), "the outline is gone");
    let reloaded = Document::load_mem(&cut).unwrap();
    let catalog = reloaded.catalog().unwrap();
    for key in ["Outlines", "OpenAction", "PageLabels"] {
        assert!(!catalog.has(key.as_bytes()), "{key} is dropped");
    }
}

#[test]
fn a_cut_pdf_over_the_size_limit_is_not_made() {
    // The same cut is made under the real limit, and is over 200 bytes…
    let mut doc = Document::load_mem(&pdf(5)).unwrap();
    let made = keep_pages(&mut doc, 5, 2, 3, MAX_DOCUMENT_BYTES).unwrap();
    assert!(made.len() > 200, "{} bytes", made.len());
    // …so a 200-byte limit is what refuses it.
    let mut doc = Document::load_mem(&pdf(5)).unwrap();
    assert_eq!(keep_pages(&mut doc, 5, 2, 3, 200), None);
}
