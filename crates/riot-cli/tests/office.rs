//! Office documents through `riot exec` against the strict mock: the
//! model Reads a `.docx`, an `.xlsx` and a `.pptx` built here, and each
//! tool result it is sent holds the document's pieces in order — a Word
//! document's headings, list and table as Markdown; both sheets of a
//! workbook as tables with cell references; both slides' titles, text
//! and speaker notes — and a 100,000-row sheet is cut with the range that
//! reads on.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::office::{self, Cell, Slide, w_list_item, w_paragraph, w_table};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

/// The text of the tool result answering `id` in the last request.
fn result_text(server: &MockServer, id: &str) -> String {
    support::tool_result_text(bodies(server).last().unwrap(), id)
}

/// Each piece found in `text`, one after the other.
fn in_order(text: &str, pieces: &[&str]) {
    let mut at = 0;
    for piece in pieces {
        match text[at..].find(piece) {
            Some(found) => at += found + piece.len(),
            None => panic!("{piece:?} not found after byte {at} in:\n{text}"),
        }
    }
}

async fn read_through_riot(world: &World, calls: &[(&str, Value)]) -> MockServer {
    let mut replies: Vec<Reply> = calls
        .iter()
        .map(|(id, input)| tool_call(id, "Read", input.clone()))
        .collect();
    replies.push(Reply::Text("Read them.".into()));
    let server = MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap();
    let out = run(world.exec(&server, Wire::Anthropic, &["read the documents"])).await;
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn word_workbook_and_presentation_reach_the_model_as_text_in_order() {
    let world = World::new();
    let project = world.project.path();
    let docx = office::docx(
        &[
            w_paragraph(Some("Heading1"), "Release plan"),
            w_paragraph(None, "Ship in two steps."),
            w_paragraph(Some("Heading2"), "Steps"),
            w_list_item(2, 0, "Freeze the branch"),
            w_list_item(2, 0, "Tag the release"),
            w_table(&[&["Owner", "Task"], &["Ana", "Notes"], &["Bo", "Build"]]),
        ]
        .concat(),
    );
    std::fs::write(project.join("plan.docx"), docx).unwrap();
    let book = office::xlsx(&[
        (
            "Budget",
            vec![
                vec!["Item".into(), "Cost".into()],
                vec!["Laptops".into(), 4200.0.into()],
            ],
        ),
        (
            "People",
            vec![vec!["Name".into()], vec!["Ana".into()], vec!["Bo".into()]],
        ),
    ]);
    std::fs::write(project.join("budget.xlsx"), book).unwrap();
    let deck = office::pptx(&[
        Slide {
            title: "Kick-off".into(),
            body: vec!["Goals".into()],
            notes: Some("Introduce the team.".into()),
        },
        Slide {
            title: "Timeline".into(),
            body: vec!["June: beta".into()],
            notes: Some("Mention the holiday freeze.".into()),
        },
    ]);
    std::fs::write(project.join("kickoff.pptx"), deck).unwrap();

    let server = read_through_riot(
        &world,
        &[
            ("call_docx", json!({"file_path": "plan.docx"})),
            ("call_xlsx", json!({"file_path": "budget.xlsx"})),
            ("call_pptx", json!({"file_path": "kickoff.pptx"})),
        ],
    )
    .await;
    in_order(
        &result_text(&server, "call_docx"),
        &[
            "plan.docx (Word document as Markdown",
            "# Release plan\n",
            "Ship in two steps.\n",
            "## Steps\n",
            "1. Freeze the branch\n2. Tag the release\n",
            "| Owner | Task |\n|---|---|\n| Ana | Notes |\n| Bo | Build |",
        ],
    );
    in_order(
        &result_text(&server, "call_xlsx"),
        &[
            "budget.xlsx (workbook, 2 sheets: \"Budget\", \"People\")",
            "## Sheet \"Budget\" (A1:B2)",
            "|   | A | B |",
            "| 1 | Item | Cost |",
            "| 2 | Laptops | 4200 |",
            "## Sheet \"People\" (A1:A3)",
            "| 2 | Ana |",
            "| 3 | Bo |",
        ],
    );
    in_order(
        &result_text(&server, "call_pptx"),
        &[
            "kickoff.pptx: slides 1-2 of 2.",
            "--- Slide 1 of 2: Kick-off ---\nGoals\nNotes: Introduce the team.",
            "--- Slide 2 of 2: Timeline ---\nJune: beta\nNotes: Mention the holiday freeze.",
        ],
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100000_row_sheet_is_cut_with_a_note_and_its_range_reads_on() {
    let world = World::new();
    let mut rows: Vec<Vec<Cell>> = vec![vec!["Id".into(), "Value".into()]];
    rows.extend(
        (1..100_000).map(|i| vec![Cell::Number(f64::from(i)), Cell::Text(format!("v{i}"))]),
    );
    std::fs::write(
        world.project.path().join("big.xlsx"),
        office::xlsx(&[("Data", rows)]),
    )
    .unwrap();
    let server = read_through_riot(
        &world,
        &[
            ("call_big", json!({"file_path": "big.xlsx"})),
            (
                "call_next",
                json!({"file_path": "big.xlsx", "range": "Data!A2001:B4000"}),
            ),
        ],
    )
    .await;
    let first = result_text(&server, "call_big");
    assert!(first.contains("| 2000 | 1999 | v1999 |"), "{first}");
    assert!(!first.contains("| 2001 |"), "{first}");
    assert!(
        first.contains("Continue with range=\"Data!A2001:B4000\".)"),
        "{first}"
    );
    let next = result_text(&server, "call_next");
    in_order(
        &next,
        &["| 2001 | 2000 | v2000 |", "| 4000 | 3999 | v3999 |"],
    );
    assert!(!next.contains("| 4001 |"), "{next}");
    server.shutdown().await;
}
