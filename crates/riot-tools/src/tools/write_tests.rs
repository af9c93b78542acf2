use riot_protocol::ToolOutcome;

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::read::{Read, ReadInput};

fn write(path: &str, content: &str) -> WriteInput {
    WriteInput {
        file_path: path.into(),
        content: content.into(),
    }
}

async fn read(p: &TempProject, path: &str, offset: Option<u64>, limit: Option<u64>) {
    let out = Read
        .call(
            ReadInput {
                file_path: path.into(),
                offset,
                limit,
                pages: None,
                range: None,
            },
            &p.ctx(),
        )
        .await;
    assert!(!out.is_failed(), "{}", text_of(&out));
}

#[tokio::test]
async fn creates_a_file_with_its_parent_directories() {
    let p = TempProject::new();
    let input = write("src/deep/new.rs", "fn main() {}\n");
    Write.validate_input(&input, &p.ctx()).await.unwrap();
    let out = Write.call(input, &p.ctx()).await;
    assert_eq!(text_of(&out), "Created src/deep/new.rs (1 lines).");
    assert_eq!(p.read("src/deep/new.rs"), b"fn main() {}\n".to_vec());
    let ToolOutcome::Ok {
        ui_payload: Some(UiPayload::FileDiff { created, path, .. }),
        ..
    } = out
    else {
        panic!("no diff")
    };
    assert!(created);
    assert_eq!(path, "src/deep/new.rs");
    // What we wrote counts as read: a second Write needs no Read.
    assert!(
        !Write
            .call(write("src/deep/new.rs", "fn main() { }\n"), &p.ctx())
            .await
            .is_failed()
    );
}

#[tokio::test]
async fn overwriting_needs_a_full_unchanged_read() {
    let p = TempProject::new();
    let body: String = (1..=10).map(|i| format!("{i}\n")).collect();
    p.write("o.txt", &body);
    let e = Write
        .validate_input(&write("o.txt", "x"), &p.ctx())
        .await
        .unwrap_err();
    assert_eq!(e.code, Some("not_read"));
    read(&p, "o.txt", Some(1), Some(3)).await;
    let e = Write
        .validate_input(&write("o.txt", "x"), &p.ctx())
        .await
        .unwrap_err();
    assert_eq!(e.code, Some("partially_read"));
    read(&p, "o.txt", None, None).await;
    let input = write("o.txt", "replaced\n");
    Write.validate_input(&input, &p.ctx()).await.unwrap();
    p.write("o.txt", "the person's version\n");
    let out = Write.call(input, &p.ctx()).await;
    assert!(text_of(&out).contains("has changed on disk since you last read it"));
    assert_eq!(p.read("o.txt"), b"the person's version\n".to_vec());
}

#[tokio::test]
async fn a_rewrite_keeps_the_bom_and_crlf_of_the_file() {
    let p = TempProject::new();
    p.write("w.txt", b"\xef\xbb\xbfa\r\nb\r\n");
    read(&p, "w.txt", None, None).await;
    let out = Write.call(write("w.txt", "a\nc\n"), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Replaced the content of w.txt (2 lines); the file kept its UTF-8 BOM and kept its CRLF line endings."
    );
    assert_eq!(p.read("w.txt"), b"\xef\xbb\xbfa\r\nc\r\n".to_vec());
}

#[tokio::test]
async fn the_question_previews_a_new_file_whole_and_an_existing_one_as_a_diff() {
    let p = TempProject::new();
    let content: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let Some(UiPayload::FileDiff {
        path,
        created,
        hunks,
    }) = Write.preview(&write("big.txt", &content), &p.ctx()).await
    else {
        panic!("no preview")
    };
    assert_eq!((path.as_str(), created), ("big.txt", true));
    assert_eq!(hunks.len(), 1);
    assert_eq!((hunks[0].new_start, hunks[0].new_lines), (1, 300));
    assert_eq!(hunks[0].lines[299].text, "line 300");
    assert!(
        !p.root().join("big.txt").exists(),
        "a preview writes nothing"
    );

    p.write("o.txt", "a\nb\nc\nd\ne\nf\ng\nh\n");
    read(&p, "o.txt", None, None).await;
    let Some(UiPayload::FileDiff { created, hunks, .. }) = Write
        .preview(&write("o.txt", "a\nb\nc\nd\nE\nf\ng\nh\n"), &p.ctx())
        .await
    else {
        panic!("no preview")
    };
    assert!(!created);
    assert_eq!(hunks.len(), 1);
    assert_eq!(
        (hunks[0].old_start, hunks[0].old_lines, hunks[0].new_start),
        (2, 7, 2),
        "three lines of context on each side"
    );
    let changed: Vec<_> = hunks[0]
        .lines
        .iter()
        .filter(|l| l.kind != riot_protocol::DiffLineKind::Context)
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        changed,
        [
            (riot_protocol::DiffLineKind::Removed, "e"),
            (riot_protocol::DiffLineKind::Added, "E")
        ]
    );
    // An existing file that was not read: refused, so nothing to preview.
    p.write("unread.txt", "x\n");
    assert!(
        Write
            .preview(&write("unread.txt", "y\n"), &p.ctx())
            .await
            .is_none()
    );
}
