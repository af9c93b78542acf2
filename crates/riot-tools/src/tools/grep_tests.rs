#![allow(clippy::disallowed_methods)] // tests create a .git directory directly

use super::*;
use crate::testing::{TempProject, text_of};

fn grep(pattern: &str) -> GrepInput {
    GrepInput {
        pattern: pattern.into(),
        path: None,
        glob: None,
        file_type: None,
        output_mode: None,
        case_insensitive: None,
        line_numbers: None,
        after: None,
        before: None,
        context: None,
        multiline: None,
        head_limit: None,
        offset: None,
    }
}

fn project() -> TempProject {
    let p = TempProject::new();
    std::fs::create_dir(p.path(".git")).unwrap();
    p.write(".gitignore", "ignored/\n");
    p.write("b.rs", "fn beta() {}\n// TODO later\n");
    p.write("a.rs", "fn alpha() {}\nfn todo() {}\n// TODO now\n");
    p.write("notes.md", "TODO: write docs\n");
    p.write("ignored/x.rs", "TODO hidden by gitignore\n");
    p.write("blob.bin", b"TODO\0binary");
    p
}

#[tokio::test]
async fn files_with_matches_is_sorted_by_path_and_skips_ignored_and_binary() {
    let p = project();
    let out = Grep.call(grep("TODO"), &p.ctx()).await;
    assert_eq!(text_of(&out), "Found 3 files\na.rs\nb.rs\nnotes.md");
}

#[tokio::test]
async fn content_mode_shows_numbers_and_context_like_rg() {
    let p = project();
    let mut input = grep("TODO");
    input.output_mode = Some(OutputMode::Content);
    input.context = Some(1);
    input.file_type = Some("rust".into());
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "2 matching lines in 2 files\na.rs-2-fn todo() {}\na.rs:3:// TODO now\nb.rs-1-fn beta() {}\nb.rs:2:// TODO later"
    );
}

#[tokio::test]
async fn count_mode_case_insensitive_and_glob_filter() {
    let p = project();
    let mut input = grep("todo");
    input.output_mode = Some(OutputMode::Count);
    input.case_insensitive = Some(true);
    input.glob = Some("*.rs".into());
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(text_of(&out), "3 matching lines in 2 files\na.rs:2\nb.rs:1");
}

#[tokio::test]
async fn head_limit_and_offset_state_the_cut() {
    let p = project();
    let mut input = grep("TODO");
    input.head_limit = Some(2);
    let out = Grep.call(input.clone(), &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Found 3 files\na.rs\nb.rs\n\n(Showing entries 1-2 of 3. Use offset=2 for the next ones, or narrow the search with `glob`, `type` or `path`.)"
    );
    input.offset = Some(2);
    let rest = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&rest),
        "Found 3 files\nnotes.md\n\n(Showing entries 3-3 of 3.)"
    );
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let p = project();
    let mut input = grep(r"alpha\(\) \{\}\nfn todo");
    input.multiline = Some(true);
    input.output_mode = Some(OutputMode::Content);
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "2 matching lines in 1 file\na.rs:1:fn alpha() {}\na.rs:2:fn todo() {}"
    );
}

#[tokio::test]
async fn a_bad_regex_or_type_is_corrected_before_searching() {
    let p = project();
    let e = Grep
        .validate_input(&grep("fn main("), &p.ctx())
        .await
        .unwrap_err();
    assert!(
        e.message
            .starts_with("`pattern` is not a valid regular expression"),
        "{}",
        e.message
    );
    assert!(e.message.contains("fn main\\("), "{}", e.message);
    let mut typed = grep("x");
    typed.file_type = Some("rustlang".into());
    let e = Grep.validate_input(&typed, &p.ctx()).await.unwrap_err();
    assert!(
        e.message
            .starts_with("`type` `rustlang` is not a ripgrep file type")
    );
    let empty = Grep.validate_input(&grep(""), &p.ctx()).await.unwrap_err();
    assert_eq!(
        empty.message,
        "`pattern` must not be empty. To list files use Glob."
    );
}

#[tokio::test]
async fn no_match_is_not_an_error_and_mentions_gitignore() {
    let p = project();
    let out = Grep.call(grep("hidden by gitignore"), &p.ctx()).await;
    assert!(!out.is_failed());
    assert!(text_of(&out).starts_with("No matches for `hidden by gitignore`"));
    assert!(text_of(&out).contains(".gitignore"));
}

#[tokio::test]
async fn a_single_file_path_is_searched_directly() {
    let p = project();
    let mut input = grep("TODO");
    input.path = Some("ignored/x.rs".into());
    input.output_mode = Some(OutputMode::Content);
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "1 matching line in 1 file\nignored/x.rs:1:TODO hidden by gitignore",
        "an explicitly named file is searched even if ignored, as rg does"
    );
}
