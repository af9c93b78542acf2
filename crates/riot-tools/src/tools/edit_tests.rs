#![allow(clippy::disallowed_methods)] // tests inspect file modes on disk directly

use std::os::unix::fs::PermissionsExt;

use riot_protocol::file_state::content_hash;
use riot_protocol::{FileState, ToolOutcome};

use super::*;
use crate::testing::{TempProject, text_of};
use crate::tools::edit_match::code as mismatch;
use crate::tools::read::{Read, ReadInput};

fn edit(path: &str, old: &str, new: &str) -> EditInput {
    EditInput {
        file_path: path.into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
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

async fn refusal(p: &TempProject, input: &EditInput) -> ValidationError {
    Edit.validate_input(input, &p.ctx())
        .await
        .expect_err("the edit should be refused")
}

#[tokio::test]
async fn a_crlf_file_with_a_bom_edited_in_the_middle_keeps_both_byte_for_byte() {
    let p = TempProject::new();
    p.write("w.cs", b"\xef\xbb\xbfclass A {\r\n    int x = 1;\r\n}\r\n");
    read(&p, "w.cs", None, None).await;
    // The model writes LF, as it sees no CR in Read output.
    let input = edit(
        "w.cs",
        "class A {\n    int x = 1;\n",
        "class A {\n    int x = 2;\n    int y = 3;\n",
    );
    Edit.validate_input(&input, &p.ctx()).await.unwrap();
    let out = Edit.call(input, &p.ctx()).await;
    assert!(!out.is_failed(), "{}", text_of(&out));
    assert_eq!(
        p.read("w.cs"),
        b"\xef\xbb\xbfclass A {\r\n    int x = 2;\r\n    int y = 3;\r\n}\r\n".to_vec()
    );
    assert!(
        text_of(&out).contains("CRLF line endings"),
        "{}",
        text_of(&out)
    );
}

#[tokio::test]
async fn mixed_line_endings_are_not_normalised() {
    let p = TempProject::new();
    p.write("m.txt", b"one\r\ntwo\nthree\r\nfour\n");
    read(&p, "m.txt", None, None).await;
    let out = Edit.call(edit("m.txt", "three", "THREE"), &p.ctx()).await;
    assert!(!out.is_failed(), "{}", text_of(&out));
    assert_eq!(p.read("m.txt"), b"one\r\ntwo\nTHREE\r\nfour\n".to_vec());
}

#[tokio::test]
async fn two_matches_are_refused_with_the_count_and_the_file_is_untouched() {
    let p = TempProject::new();
    p.write("d.rs", "let a = 1;\nlet b = 2;\nlet a = 1;\n");
    read(&p, "d.rs", None, None).await;
    let e = refusal(&p, &edit("d.rs", "let a = 1;", "let a = 9;")).await;
    assert_eq!(e.code, Some(mismatch::NOT_UNIQUE));
    assert!(
        e.message
            .starts_with("old_string occurs 2 times in d.rs (at lines 1, 3)"),
        "{}",
        e.message
    );
    let out = Edit
        .call(edit("d.rs", "let a = 1;", "let a = 9;"), &p.ctx())
        .await;
    assert!(out.is_failed());
    assert_eq!(
        p.read("d.rs"),
        b"let a = 1;\nlet b = 2;\nlet a = 1;\n".to_vec()
    );

    let mut all = edit("d.rs", "let a = 1;", "let a = 9;");
    all.replace_all = true;
    let out = Edit.call(all, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Edited d.rs: replaced 2 occurrences (first at line 1)."
    );
    assert_eq!(
        p.read("d.rs"),
        b"let a = 9;\nlet b = 2;\nlet a = 9;\n".to_vec()
    );
}

#[tokio::test]
async fn an_unread_file_is_refused_as_not_read() {
    let p = TempProject::new();
    p.write("n.txt", "hello\n");
    let e = refusal(&p, &edit("n.txt", "hello", "bye")).await;
    assert_eq!(e.code, Some(crate::freshness::code::NOT_READ));
    let out = Edit.call(edit("n.txt", "hello", "bye"), &p.ctx()).await;
    assert!(text_of(&out).contains("has not been read in this session"));
    assert_eq!(p.read("n.txt"), b"hello\n".to_vec());
}

#[tokio::test]
async fn an_external_change_is_refused_as_changed_since_read_not_as_not_read() {
    let p = TempProject::new();
    p.write("c.txt", "alpha\nbeta\n");
    read(&p, "c.txt", None, None).await;
    p.write("c.txt", "alpha\nbeta\ngamma\n"); // the person saves
    let e = refusal(&p, &edit("c.txt", "beta", "BETA")).await;
    assert_eq!(e.code, Some(crate::freshness::code::CHANGED_SINCE_READ));
    assert!(!e.message.contains("has not been read"));
}

#[tokio::test]
async fn call_rechecks_by_content_after_validate_input_passed() {
    let p = TempProject::new();
    p.write("race.txt", "v1\n");
    read(&p, "race.txt", None, None).await;
    let input = edit("race.txt", "v1", "model");
    Edit.validate_input(&input, &p.ctx()).await.unwrap();
    // The person saves while the permission dialog is open; same length,
    // so only the content tells the difference.
    p.write("race.txt", "v2\n");
    let out = Edit.call(input, &p.ctx()).await;
    assert!(out.is_failed());
    assert!(
        text_of(&out).contains("has changed on disk since you last read it"),
        "{}",
        text_of(&out)
    );
    assert_eq!(
        p.read("race.txt"),
        b"v2\n".to_vec(),
        "the person's save survives"
    );
}

#[tokio::test]
async fn invalid_utf8_is_refused_and_the_file_untouched() {
    let p = TempProject::new();
    let bytes = b"caf\xe9 = 1\n";
    p.write("l1.txt", bytes);
    // Read refuses the file, so an Edit is refused as not read ...
    let out = Read
        .call(
            ReadInput {
                file_path: "l1.txt".into(),
                offset: None,
                limit: None,
                pages: None,
                range: None,
            },
            &p.ctx(),
        )
        .await;
    assert!(out.is_failed());
    assert_eq!(
        refusal(&p, &edit("l1.txt", "caf", "tea")).await.code,
        Some("not_read")
    );
    // ... and even with a recorded state it is never decoded lossily.
    p.env.file_state.set(
        p.path("l1.txt"),
        FileState {
            content_hash: content_hash(bytes),
            mtime_ms: None,
            view: FileView::Full,
        },
    );
    assert_eq!(
        refusal(&p, &edit("l1.txt", "caf", "tea")).await.code,
        Some("not_text")
    );
    assert!(
        Edit.call(edit("l1.txt", "caf", "tea"), &p.ctx())
            .await
            .is_failed()
    );
    assert_eq!(p.read("l1.txt"), bytes.to_vec());
}

#[tokio::test]
async fn the_region_of_old_string_must_have_been_shown() {
    let p = TempProject::new();
    let body: String = (1..=20).map(|i| format!("row {i}\n")).collect();
    p.write("big.txt", &body);
    read(&p, "big.txt", Some(1), Some(5)).await;
    let e = refusal(&p, &edit("big.txt", "row 15\n", "ROW 15\n")).await;
    assert_eq!(e.code, Some(crate::freshness::code::REGION_NOT_READ));
    assert!(e.message.contains("Lines 15-15"), "{}", e.message);
    read(&p, "big.txt", Some(14), Some(3)).await;
    let out = Edit
        .call(edit("big.txt", "row 15\n", "ROW 15\n"), &p.ctx())
        .await;
    assert!(!out.is_failed(), "{}", text_of(&out));
}

#[tokio::test]
async fn mismatches_name_their_cause() {
    let p = TempProject::new();
    p.write("f.py", "def f():\n    return 1\n");
    read(&p, "f.py", None, None).await;
    let prefix = refusal(&p, &edit("f.py", "     2\t    return 1", "x")).await;
    assert_eq!(prefix.code, Some(mismatch::LINE_NUMBER_PREFIX));
    let ws = refusal(&p, &edit("f.py", "def f():\n  return 1", "x")).await;
    assert_eq!(ws.code, Some(mismatch::WHITESPACE));
    assert!(
        ws.message
            .contains("at line 1 only if whitespace is ignored"),
        "{}",
        ws.message
    );
    let absent = refusal(&p, &edit("f.py", "return 2", "x")).await;
    assert_eq!(absent.code, Some(mismatch::ABSENT));
    p.write("mix.txt", b"a\r\nb\nc\r\n");
    read(&p, "mix.txt", None, None).await;
    let eol = refusal(&p, &edit("mix.txt", "a\nb\n", "x")).await;
    assert_eq!(eol.code, Some(mismatch::LINE_ENDINGS));
}

#[tokio::test]
async fn edits_keep_permissions_and_can_follow_each_other() {
    let p = TempProject::new();
    p.write("run.sh", "#!/bin/sh\necho a\n");
    std::fs::set_permissions(p.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    read(&p, "run.sh", None, None).await;
    assert!(
        !Edit
            .call(edit("run.sh", "echo a", "echo b"), &p.ctx())
            .await
            .is_failed()
    );
    let out = Edit
        .call(edit("run.sh", "echo b", "echo c"), &p.ctx())
        .await;
    assert!(
        !out.is_failed(),
        "our own write does not count as an external change: {}",
        text_of(&out)
    );
    assert_eq!(p.read("run.sh"), b"#!/bin/sh\necho c\n".to_vec());
    let mode = std::fs::metadata(p.path("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o755);
    let ToolOutcome::Ok {
        ui_payload: Some(UiPayload::FileDiff { hunks, created, .. }),
        ..
    } = out
    else {
        panic!("no diff payload")
    };
    assert!(!created);
    assert_eq!(hunks.len(), 1);
}

#[tokio::test]
async fn an_empty_old_string_creates_a_missing_file_only() {
    let p = TempProject::new();
    let out = Edit
        .call(edit("new/dir/x.txt", "", "fresh\n"), &p.ctx())
        .await;
    assert_eq!(text_of(&out), "Created new/dir/x.txt.");
    assert_eq!(p.read("new/dir/x.txt"), b"fresh\n".to_vec());
    let missing = refusal(&p, &edit("absent.txt", "a", "b")).await;
    assert_eq!(missing.code, Some(crate::freshness::code::NOT_FOUND));
    let same = refusal(&p, &edit("new/dir/x.txt", "fresh", "fresh")).await;
    assert!(same.message.contains("identical"));
}

#[tokio::test]
async fn the_question_previews_every_hunk_of_the_edit() {
    let p = TempProject::new();
    let body: String = (1..=30)
        .map(|i| {
            if i == 5 || i == 25 {
                "old\n".to_owned()
            } else {
                format!("{i}\n")
            }
        })
        .collect();
    p.write("m.txt", &body);
    read(&p, "m.txt", None, None).await;
    let mut input = edit("m.txt", "old", "new");
    input.replace_all = true;
    let Some(UiPayload::FileDiff { created, hunks, .. }) = Edit.preview(&input, &p.ctx()).await
    else {
        panic!("no preview")
    };
    assert!(!created);
    let starts: Vec<_> = hunks.iter().map(|h| (h.old_start, h.new_start)).collect();
    assert_eq!(
        starts,
        [(2, 2), (22, 22)],
        "two places, three lines of context"
    );
    assert_eq!(
        p.read("m.txt"),
        body.into_bytes(),
        "a preview changes nothing"
    );
    // A new file made by an empty old_string: all of it added.
    let Some(UiPayload::FileDiff { created, hunks, .. }) = Edit
        .preview(&edit("fresh.txt", "", "one\ntwo\n"), &p.ctx())
        .await
    else {
        panic!("no preview")
    };
    assert!(created);
    assert_eq!(hunks[0].new_lines, 2);
}
