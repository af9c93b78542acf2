use riot_protocol::{Tool, ToolOutcome, UiPayload, ValidationError};
use riot_testkit::office::{self, Cell, Slide, w_list_item, w_paragraph, w_table};

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

fn input(path: &str) -> ReadInput {
    serde_json::from_value(serde_json::json!({ "file_path": path })).unwrap()
}

async fn read_ok(p: &TempProject, input: ReadInput) -> (String, String) {
    let out = Read.call(input, &p.ctx()).await;
    let text = text_of(&out);
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed: {text}")
    };
    let Some(UiPayload::DocumentRead { summary, .. }) = ui_payload else {
        panic!("no document payload: {ui_payload:?}")
    };
    (text, summary)
}

async fn read_err(p: &TempProject, input: ReadInput) -> String {
    let out = Read.call(input, &p.ctx()).await;
    assert!(matches!(out, ToolOutcome::Failed { .. }), "{out:?}");
    text_of(&out)
}

fn sample_docx() -> Vec<u8> {
    office::docx(
        &[
            w_paragraph(Some("Heading1"), "Quarterly report"),
            w_paragraph(None, "Sales grew & costs fell."),
            w_paragraph(Some("Heading2"), "Highlights"),
            w_list_item(1, 0, "New office"),
            w_list_item(1, 1, "Opened in May"),
            w_list_item(1, 0, "Two hires"),
            w_paragraph(Some("Heading2"), "Steps"),
            w_list_item(2, 0, "Plan"),
            w_list_item(2, 0, "Build"),
            w_table(&[&["Region", "Sales"], &["North", "10 | 12"], &["South", "7"]]),
            w_paragraph(None, "The end."),
        ]
        .concat(),
    )
}

#[tokio::test]
async fn a_word_document_reads_as_markdown_with_headings_lists_and_tables_in_order() {
    let p = TempProject::new();
    p.write("report.docx", sample_docx());
    let (text, summary) = read_ok(&p, input("report.docx")).await;
    assert_eq!(
        text,
        "report.docx (Word document as Markdown, 21 lines):\n\n\
         # Quarterly report\n\n\
         Sales grew & costs fell.\n\n\
         ## Highlights\n\n\
         - New office\n  - Opened in May\n- Two hires\n\n\
         ## Steps\n\n\
         1. Plan\n2. Build\n\n\
         | Region | Sales |\n|---|---|\n| North | 10 \\| 12 |\n| South | 7 |\n\n\
         The end.\n"
    );
    assert_eq!(summary, "10 paragraphs, 1 table");
}

#[tokio::test]
async fn offset_and_limit_window_a_word_documents_markdown_and_say_how_to_go_on() {
    let p = TempProject::new();
    p.write("report.docx", sample_docx());
    let mut window = input("report.docx");
    window.offset = Some(3);
    window.limit = Some(2);
    let (text, _) = read_ok(&p, window).await;
    assert_eq!(
        text,
        "report.docx (Word document as Markdown, lines 3-4 of 21):\n\n\
         Sales grew & costs fell.\n\n\
         \n(Continue with offset=5: offset and limit count the lines of this Markdown.)"
    );
}

fn sales_book(rows: usize) -> Vec<u8> {
    let mut sales: Vec<Vec<Cell>> = vec![vec!["Item".into(), "Qty".into(), "Price".into()]];
    for i in 1..rows {
        sales.push(vec![
            Cell::Text(format!("item {i}")),
            Cell::Number(i as f64),
            Cell::Number(1.5),
        ]);
    }
    office::xlsx(&[
        ("Sales", sales),
        (
            "Costs",
            vec![
                vec!["Rent".into(), 900.0.into()],
                vec![Cell::Empty, Cell::Empty],
                vec!["Power".into(), 120.25.into()],
            ],
        ),
    ])
}

#[tokio::test]
async fn a_workbook_shows_each_sheet_as_a_table_with_cell_references() {
    let p = TempProject::new();
    p.write("book.xlsx", sales_book(3));
    let (text, summary) = read_ok(&p, input("book.xlsx")).await;
    assert_eq!(
        text,
        "book.xlsx (workbook, 2 sheets: \"Sales\", \"Costs\"):\n\n\
         ## Sheet \"Sales\" (A1:C3)\n\n\
         |   | A | B | C |\n|---|---|---|---|\n\
         | 1 | Item | Qty | Price |\n\
         | 2 | item 1 | 1 | 1.5 |\n\
         | 3 | item 2 | 2 | 1.5 |\n\n\
         ## Sheet \"Costs\" (A1:B3)\n\n\
         |   | A | B |\n|---|---|---|\n\
         | 1 | Rent | 900 |\n\
         | 3 | Power | 120.25 |\n"
    );
    assert_eq!(summary, "Sales: A1:C3; Costs: A1:B3");
}

#[tokio::test]
async fn a_range_reads_one_sheets_cells() {
    let p = TempProject::new();
    p.write("book.xlsx", sales_book(10));
    let mut one = input("book.xlsx");
    one.range = Some("Sales!B4:C5".into());
    let (text, _) = read_ok(&p, one).await;
    assert!(
        text.ends_with(
            "## Sheet \"Sales\" (A1:C10)\n\n|   | B | C |\n|---|---|---|\n| 4 | 3 | 1.5 |\n| 5 | 4 | 1.5 |\n"
        ),
        "{text}"
    );
    let mut costs = input("book.xlsx");
    costs.range = Some("costs".into());
    let (text, _) = read_ok(&p, costs).await;
    assert!(text.contains("| 3 | Power | 120.25 |"), "{text}");
    assert!(!text.contains("item 1"), "{text}");
    let mut missing = input("book.xlsx");
    missing.range = Some("Budget!A1".into());
    assert_eq!(
        read_err(&p, missing).await,
        "book.xlsx could not be read as a workbook: it has no sheet named \"Budget\"; its sheets are \"Sales\", \"Costs\"."
    );
}

#[tokio::test]
async fn a_100000_row_sheet_is_cut_with_the_range_that_continues_it() {
    let p = TempProject::new();
    p.write("big.xlsx", sales_book(100_000));
    let (text, _) = read_ok(&p, input("big.xlsx")).await;
    let rows = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("|   |"))
        .count();
    assert_eq!(rows, 2000, "one Read shows at most 2000 rows");
    assert!(
        text.contains("| 2000 | item 1999 | 1999 | 1.5 |\n"),
        "{text}"
    );
    assert!(!text.contains("| 2001 |"), "{text}");
    assert!(
        text.contains(
            "(Sheet \"Sales\" is cut: rows 1-2000 of 100000 shown; one Read shows at most 2000 rows and 99600 characters. Continue with range=\"Sales!A2001:C4000\".)"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("(Not shown: sheet \"Costs\". Read each with range=\"SHEET\".)"),
        "{text}"
    );
    // The range it gives reads on from there.
    let mut next = input("big.xlsx");
    next.range = Some("Sales!A2001:C4000".into());
    let (text, _) = read_ok(&p, next).await;
    assert!(
        text.contains("| 2001 | item 2000 | 2000 | 1.5 |\n"),
        "{text}"
    );
    assert!(text.contains("| 4000 | item 3999 |"), "{text}");
    assert!(!text.contains("is cut"), "{text}");
}

fn deck() -> Vec<u8> {
    office::pptx(&[
        Slide {
            title: "Welcome".into(),
            body: vec!["Agenda".into(), "Numbers".into()],
            notes: Some("Greet everyone.".into()),
        },
        Slide {
            title: "Numbers".into(),
            body: vec!["Up 12%".into()],
            notes: Some("Pause here for questions.".into()),
        },
        Slide {
            title: "Thanks".into(),
            body: vec![],
            notes: None,
        },
    ])
}

#[tokio::test]
async fn a_presentation_reads_slide_by_slide_with_titles_text_and_notes() {
    let p = TempProject::new();
    p.write("deck.pptx", deck());
    let (text, summary) = read_ok(&p, input("deck.pptx")).await;
    assert_eq!(
        text,
        "deck.pptx: slides 1-3 of 3.\n\
         \n--- Slide 1 of 3: Welcome ---\nAgenda\nNumbers\nNotes: Greet everyone.\n\
         \n--- Slide 2 of 3: Numbers ---\nUp 12%\nNotes: Pause here for questions.\n\
         \n--- Slide 3 of 3: Thanks ---\n"
    );
    assert_eq!(summary, "slides 1-3 of 3");
    let mut two = input("deck.pptx");
    two.pages = Some("2".into());
    let (text, _) = read_ok(&p, two).await;
    assert_eq!(
        text,
        "deck.pptx: slide 2 of 3.\n\n--- Slide 2 of 3: Numbers ---\nUp 12%\nNotes: Pause here for questions.\n"
    );
}

#[tokio::test]
async fn parameters_that_do_not_fit_the_format_are_refused_with_what_to_use() {
    let p = TempProject::new();
    let ctx = p.ctx();
    let refuse = |json: serde_json::Value| {
        let input: ReadInput = serde_json::from_value(json).unwrap();
        let ctx = ctx.clone();
        async move {
            match Read.validate_input(&input, &ctx).await {
                Err(ValidationError { message, .. }) => message,
                Ok(()) => panic!("accepted: {input:?}"),
            }
        }
    };
    assert_eq!(
        refuse(serde_json::json!({"file_path": "a.docx", "range": "A1"})).await,
        "`range` applies to .xlsx workbooks only. Use `offset` and `limit` for a text file, `pages` for a PDF or .pptx."
    );
    assert_eq!(
        refuse(serde_json::json!({"file_path": "a.xlsx", "range": "A1:"})).await,
        "`range` must name a sheet and/or cells, e.g. \"Sheet2!A1:D50\", \"Sheet2\" or \"A1:D50\", not \"A1:\"."
    );
    assert!(
        refuse(serde_json::json!({"file_path": "a.xlsx", "offset": 5}))
            .await
            .starts_with("`offset` and `limit` do not apply to a workbook. Use `range`")
    );
    assert!(
        refuse(serde_json::json!({"file_path": "a.docx", "pages": "2"}))
            .await
            .starts_with("`pages` applies to PDF files and .pptx slides only.")
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_package_is_a_clear_error() {
    let p = TempProject::new();
    p.write("fake.docx", b"just text");
    let message = read_err(&p, input("fake.docx")).await;
    assert!(
        message.starts_with(
            "fake.docx could not be read as a Word document: it is not an Office Open XML package ("
        ),
        "{message}"
    );
}

#[test]
fn ranges_parse_sheets_cells_and_quotes() {
    assert_eq!(
        parse_range("Sheet2!A1:D50").unwrap(),
        CellRange {
            sheet: Some("Sheet2".into()),
            cells: Some(((0, 0), (49, 3)))
        }
    );
    assert_eq!(
        parse_range("'My ''best'' sheet'!$B$2").unwrap(),
        CellRange {
            sheet: Some("My 'best' sheet".into()),
            cells: Some(((1, 1), (1, 1)))
        }
    );
    assert_eq!(
        parse_range("AA10:B2").unwrap().cells,
        Some(((1, 1), (9, 26)))
    );
    assert_eq!(
        parse_range("Totals").unwrap().sheet.as_deref(),
        Some("Totals")
    );
    assert!(parse_range("!A1").is_err());
    assert_eq!(column_name(0), "A");
    assert_eq!(column_name(25), "Z");
    assert_eq!(column_name(26), "AA");
    assert_eq!(column_name(701), "ZZ");
    assert_eq!(column_name(702), "AAA");
}

#[test]
fn excel_serial_dates_are_iso_dates() {
    assert_eq!(excel_date(45_292.0), "2024-01-01");
    assert_eq!(excel_date(45_292.5), "2024-01-01 12:00:00");
    assert_eq!(excel_date(61.0), "1900-03-01");
}

#[test]
fn a_workbook_part_over_the_bound_is_refused_before_it_is_inflated() {
    let book = sales_book(50);
    let check = |limit| check_part_sizes(&book, limit).map_err(|e| e.to_string());
    assert_eq!(check(MAX_PART_BYTES), Ok(()));
    // The sheet's XML is a few kilobytes: over a 1 KB bound it is refused.
    assert_eq!(
        check(1024),
        Err("its part xl/worksheets/sheet1.xml is over 1 KB uncompressed".to_owned())
    );
}

#[test]
fn office_errors_word_their_bounds_and_counts() {
    let too_large = OfficeError::PartTooLarge {
        name: "word/document.xml".into(),
        limit: MAX_PART_BYTES,
    };
    assert_eq!(
        too_large.to_string(),
        "its part word/document.xml is over 64 MB uncompressed"
    );
    assert_eq!(
        OfficeError::SlidesPastEnd { total: 1 }.to_string(),
        "`pages` starts past the end: it has 1 slide"
    );
    assert_eq!(
        OfficeError::SlidesPastEnd { total: 3 }.to_string(),
        "`pages` starts past the end: it has 3 slides"
    );
}
