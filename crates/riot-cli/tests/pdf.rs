//! PDFs through `riot exec` against the strict mock (docs/interfaces.md,
//! Read): a Read of pages 2-3 of a five-page PDF reaches a model that
//! reads documents as one Anthropic document block holding just those
//! pages; with `documents` off, and on the OpenAI wires, the same pages go
//! as text and no PDF is sent; the PDF is kept beside the transcript and a
//! resumed session sends the same document again.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use base64::Engine as _;
use riot_testkit::pdf::{page_line, page_texts, pdf};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

/// A world whose settings give `mock-model` vision and `documents`, with
/// a five-page `doc.pdf` in its project.
fn world_with(documents: bool) -> World {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"models": {"mock-model": {"vision": true, "documents": documents}}}).to_string(),
    )
    .unwrap();
    std::fs::write(world.project.path().join("doc.pdf"), pdf(5)).unwrap();
    world
}

/// A model that reads pages 2-3 of doc.pdf, then answers.
async fn model_reading_pages(wire: Wire, more: Vec<Reply>) -> MockServer {
    let mut replies = vec![
        tool_call(
            "call_pdf_1",
            "Read",
            json!({"file_path": "doc.pdf", "pages": "2-3"}),
        ),
        Reply::Text("It is a test document.".into()),
    ];
    replies.extend(more);
    MockServer::start(Script::new(wire, replies)).await.unwrap()
}

/// Every `document` block anywhere in a request body, in order.
fn documents(v: &Value) -> Vec<Value> {
    match v {
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("document") => {
            vec![v.clone()]
        }
        Value::Object(m) => m.values().flat_map(documents).collect(),
        Value::Array(a) => a.iter().flat_map(documents).collect(),
        _ => Vec::new(),
    }
}

/// The PDF bytes of a document block, after checking its source's shape.
fn pdf_of(document: &Value) -> Vec<u8> {
    assert_eq!(document["source"]["type"], "base64");
    assert_eq!(document["source"]["media_type"], "application/pdf");
    base64::engine::general_purpose::STANDARD
        .decode(document["source"]["data"].as_str().unwrap())
        .unwrap()
}

const HEADER: &str = "doc.pdf: pages 2-3 of 5 (PDF text).\n";
const NOTE: &str = "(Continue with pages=\"4-5\".)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_reaches_an_anthropic_model_as_a_document_block_with_only_the_requested_pages() {
    let wire = Wire::Anthropic;
    let world = world_with(true);
    let server = model_reading_pages(wire, vec![]).await;
    let out = run(world.exec(&server, wire, &["What is in doc.pdf?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "It is a test document.");
    let all = bodies(&server);
    assert_eq!(all.len(), 2, "the strict mock accepted both requests");

    let found = documents(&all[1]);
    assert_eq!(found.len(), 1, "one document block");
    let pages = pdf_of(&found[0]);
    assert_eq!(
        page_texts(&pages).unwrap(),
        [page_line(2), page_line(3)],
        "a PDF of pages 2 and 3 only"
    );
    // The result: the header, the document, where to continue.
    let result = support::tool_result(&all[1], "call_pdf_1");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{result}");
    assert_eq!(content[0], json!({"type": "text", "text": HEADER}));
    assert_eq!(content[1], found[0]);
    assert_eq!(content[2], json!({"type": "text", "text": NOTE}));
    // No other page reaches the model, neither as text nor in the PDF; the
    // requested pages come only inside the PDF.
    let body = all[1].to_string();
    let pdf_text = String::from_utf8_lossy(&pages);
    for other in [1, 4, 5] {
        assert!(
            !body.contains(&page_line(other)),
            "page {other} in the body"
        );
        assert!(
            !pdf_text.contains(&page_line(other)),
            "page {other} in the PDF"
        );
    }
    assert!(
        !body.contains(&page_line(2)),
        "page 2 is not also sent as text"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_documents_off_the_pages_go_as_text_and_no_pdf_is_sent() {
    let wire = Wire::Anthropic;
    let world = world_with(false);
    let server = model_reading_pages(wire, vec![]).await;
    let out = run(world.exec(&server, wire, &["What is in doc.pdf?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let all = bodies(&server);
    assert_eq!(all.len(), 2);
    let body = all[1].to_string();
    assert!(!body.contains("application/pdf"), "{body:.2000}");
    assert!(documents(&all[1]).is_empty());
    let result = support::tool_result(&all[1], "call_pdf_1");
    let texts: Vec<&str> = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "text");
            c["text"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        texts,
        [
            HEADER,
            &format!(
                "--- Page 2 ---\n{}\n\n--- Page 3 ---\n{}\n",
                page_line(2),
                page_line(3)
            ),
            NOTE
        ]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_wires_get_the_pages_text_and_no_pdf_even_for_a_model_that_reads_documents() {
    let pages_text = format!(
        "{HEADER}\n--- Page 2 ---\n{}\n\n--- Page 3 ---\n{}\n\n{NOTE}",
        page_line(2),
        page_line(3)
    );
    for wire in [Wire::Openai, Wire::OpenaiResponses] {
        let world = world_with(true);
        let server = model_reading_pages(wire, vec![]).await;
        let out = run(world.exec(&server, wire, &["What is in doc.pdf?"])).await;
        assert_eq!(out.code, Some(0), "{wire:?}: {out:?}");
        let all = bodies(&server);
        assert_eq!(all.len(), 2, "{wire:?}");
        let body = all[1].to_string();
        assert!(!body.contains("application/pdf"), "{wire:?}: {body:.2000}");
        let output = match wire {
            Wire::Openai => all[1]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_pdf_1")
                .map(|m| m["content"].clone()),
            _ => all[1]["input"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["type"] == "function_call_output" && i["call_id"] == "call_pdf_1")
                .map(|i| i["output"].clone()),
        };
        assert_eq!(output, Some(Value::from(pages_text.as_str())), "{wire:?}");
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_sends_the_same_document_and_the_transcript_holds_no_pdf() {
    let wire = Wire::Anthropic;
    let world = world_with(true);
    let server =
        model_reading_pages(wire, vec![Reply::Text("Still a test document.".into())]).await;
    let out = run(world.exec(&server, wire, &["What is in doc.pdf?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let first = bodies(&server);
    assert_eq!(first.len(), 2);
    let sent = documents(&first[1]);
    assert_eq!(sent.len(), 1);
    let data = sent[0]["source"]["data"].as_str().unwrap().to_owned();

    // The transcript names a stored file; the PDF is a file of its own.
    let id = support::only_session(&world);
    let transcript = std::fs::read_to_string(world.transcript(&id)).unwrap();
    assert!(
        !transcript.contains(&data),
        "the transcript holds no PDF data"
    );
    assert!(transcript.contains("\"riot-image:"), "{transcript:.2000}");
    let stored: Vec<_> = std::fs::read_dir(world.home.path().join("sessions-images").join(&id))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].extension().unwrap(), "pdf");
    assert_eq!(std::fs::read(&stored[0]).unwrap(), pdf_of(&sent[0]));

    // Resumed, the same document goes to the model again.
    let out = run(world.exec(&server, wire, &["--continue", "and now?"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout.trim(), "Still a test document.");
    let all = bodies(&server);
    assert_eq!(all.len(), 3);
    assert_eq!(documents(&all[2]), sent);
    server.shutdown().await;
}
