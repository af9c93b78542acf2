use riot_protocol::file_state::content_hash;
use riot_protocol::{FileState, ToolOutcome};

use super::*;
use crate::testing::{TempProject, text_of};

fn input(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadInput {
    ReadInput {
        file_path: path.into(),
        offset,
        limit,
    }
}

#[tokio::test]
async fn shows_numbered_lines_cat_n_style_and_records_a_full_view() {
    let p = TempProject::new();
    p.write("a.txt", "first\n\tsecond\n");
    let out = Read.call(input("a.txt", None, None), &p.ctx()).await;
    assert_eq!(text_of(&out), "     1\tfirst\n     2\t\tsecond");
    let state = p.env.file_state.get(&p.path("a.txt")).unwrap();
    assert_eq!(state.view, FileView::Full);
    assert_eq!(state.content_hash, content_hash(b"first\n\tsecond\n"));
    let ToolOutcome::Ok { ui_payload, .. } = out else {
        panic!("read failed")
    };
    assert_eq!(
        ui_payload,
        Some(UiPayload::FileRead {
            path: "a.txt".into(),
            start_line: 1,
            lines: 2,
            total_lines: 2,
            truncated: false
        })
    );
}

#[tokio::test]
async fn crlf_and_bom_are_not_shown_as_content() {
    let p = TempProject::new();
    p.write("w.txt", b"\xef\xbb\xbfone\r\ntwo\r\n");
    let out = Read.call(input("w.txt", None, None), &p.ctx()).await;
    assert_eq!(text_of(&out), "     1\tone\n     2\ttwo");
}

#[tokio::test]
async fn a_range_states_the_cut_and_ranges_accumulate() {
    let p = TempProject::new();
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    p.write("r.txt", &body);
    let out = Read.call(input("r.txt", Some(3), Some(2)), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Continue with offset=5.)"
    );
    Read.call(input("r.txt", Some(5), Some(3)), &p.ctx()).await;
    let state: FileState = p.env.file_state.get(&p.path("r.txt")).unwrap();
    assert_eq!(
        state.view,
        FileView::Partial {
            ranges: vec![(3, 7)]
        }
    );
    let past = Read.call(input("r.txt", Some(11), None), &p.ctx()).await;
    assert_eq!(
        text_of(&past),
        "`offset` 11 is past the end: r.txt has 10 lines. Use an offset between 1 and 10."
    );
}

#[tokio::test]
async fn binary_and_invalid_utf8_are_refused_and_not_recorded() {
    let p = TempProject::new();
    p.write("bin.dat", b"ab\0cd");
    p.write("latin1.txt", b"caf\xe9\n");
    let bin = Read.call(input("bin.dat", None, None), &p.ctx()).await;
    assert!(bin.is_failed());
    assert!(
        text_of(&bin).contains("binary file (it contains a NUL byte at offset 2)"),
        "{}",
        text_of(&bin)
    );
    let latin = Read.call(input("latin1.txt", None, None), &p.ctx()).await;
    assert!(
        text_of(&latin).contains("is not valid UTF-8 (invalid byte sequence at byte offset 3)")
    );
    assert!(
        p.env.file_state.get(&p.path("latin1.txt")).is_none(),
        "a refused file is not 'read'"
    );
}

#[tokio::test]
async fn large_files_need_a_range() {
    let p = TempProject::new();
    let big = "x".repeat(100) + "\n";
    p.write("big.txt", big.repeat(3000)); // ~300 KB
    let whole = Read.call(input("big.txt", None, None), &p.ctx()).await;
    assert!(
        text_of(&whole).contains("over the 256 KB limit"),
        "{}",
        text_of(&whole)
    );
    let ranged = Read
        .call(input("big.txt", Some(1), Some(2)), &p.ctx())
        .await;
    assert!(!ranged.is_failed());
    assert!(text_of(&ranged).ends_with("(Showing lines 1-2 of 3000. Continue with offset=3.)"));
}

#[tokio::test]
async fn missing_files_directories_and_empty_files_say_what_they_are() {
    let p = TempProject::new();
    p.write("dir/inner.txt", "");
    let missing = Read.call(input("nope.txt", None, None), &p.ctx()).await;
    assert_eq!(
        text_of(&missing),
        "nope.txt does not exist. Check the path; Glob finds files by name."
    );
    let dir = Read.call(input("dir", None, None), &p.ctx()).await;
    assert!(text_of(&dir).starts_with("dir is a directory"));
    let empty = Read
        .call(input("dir/inner.txt", None, None), &p.ctx())
        .await;
    assert_eq!(
        text_of(&empty),
        "dir/inner.txt exists but is empty (0 lines)."
    );
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    let p = TempProject::new();
    p.write("pic.png", b"\x89PNG\r\n\x1a\n\0\0");
    let out = Read.call(input("pic.png", None, None), &p.ctx()).await;
    let ToolOutcome::Ok { model_content, .. } = out else {
        panic!("image read failed")
    };
    assert_eq!(
        model_content,
        vec![ToolResultContent::Image {
            source: ImageSource {
                media_type: "image/png".into(),
                data: "iVBORw0KGgoAAA==".into()
            }
        }]
    );
}

#[tokio::test]
async fn zero_offset_and_limit_are_rejected_before_running() {
    let p = TempProject::new();
    let e = Read
        .validate_input(&input("a", Some(0), None), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("1-based"));
    let e = Read
        .validate_input(&input("a", None, Some(0)), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("at least 1"));
}
