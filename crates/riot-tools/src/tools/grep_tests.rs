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
async fn head_limit_zero_shows_every_entry_past_the_default_limit() {
    let p = TempProject::new();
    std::fs::create_dir(p.path(".git")).unwrap();
    for i in 0..300 {
        p.write(&format!("src/f{i:03}.rs"), "// NEEDLE\n");
    }
    let mut input = grep("NEEDLE");
    input.head_limit = Some(0);
    assert_eq!(Grep.validate_input(&input, &p.ctx()).await, Ok(()));
    let out = text_of(&Grep.call(input.clone(), &p.ctx()).await);
    let listed: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(out.lines().next(), Some("Found 300 files"));
    assert_eq!(listed.len(), 300, "{out}");
    assert_eq!((listed[0], listed[299]), ("src/f000.rs", "src/f299.rs"));
    assert!(!out.contains("Showing entries"), "nothing is cut: {out}");
    // Omitted: the default 250, and the cut is stated.
    input.head_limit = None;
    let out = text_of(&Grep.call(input, &p.ctx()).await);
    assert!(out.contains("(Showing entries 1-250 of 300."), "{out}");
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

/// A project with two secrets and one source file, all holding a key.
fn secrets_project() -> TempProject {
    let p = TempProject::new();
    p.write(".env", "API_KEY=from-dotenv\n");
    p.write("server.key", "API_KEY=from-server-key\n");
    p.write("src/a.rs", "const API_KEY: &str = \"API_KEY=from-a\";\n");
    p
}

fn shown_paths(out: &ToolOutcome) -> Vec<String> {
    let ToolOutcome::Ok {
        ui_payload: Some(UiPayload::SearchResults { matches, .. }),
        ..
    } = out
    else {
        panic!("no search results: {}", text_of(out))
    };
    matches.iter().map(|m| m.path.clone()).collect()
}

const TWO_SKIPPED: &str =
    "(skipped 2 files that may hold secrets: .env, server.key — name one as `path` to search it)";

#[tokio::test]
async fn a_recursive_search_skips_files_that_may_hold_secrets_in_every_output_mode() {
    let p = secrets_project();
    // `glob: "*"` lets hidden files in (rg -g '*' does too): `.env` is
    // walked, and skipped for what it is.
    let mut input = grep("API_KEY=");
    input.glob = Some("*".into());
    let files = Grep.call(input.clone(), &p.ctx()).await;
    assert_eq!(
        text_of(&files),
        format!("Found 1 file\nsrc/a.rs\n\n{TWO_SKIPPED}")
    );
    assert_eq!(shown_paths(&files), ["src/a.rs"]);

    input.output_mode = Some(OutputMode::Content);
    let content = Grep.call(input.clone(), &p.ctx()).await;
    assert_eq!(
        text_of(&content),
        format!(
            "1 matching line in 1 file\nsrc/a.rs:1:const API_KEY: &str = \"API_KEY=from-a\";\n\n{TWO_SKIPPED}"
        )
    );
    assert_eq!(shown_paths(&content), ["src/a.rs"]);

    input.output_mode = Some(OutputMode::Count);
    let count = Grep.call(input.clone(), &p.ctx()).await;
    assert_eq!(
        text_of(&count),
        format!("1 matching line in 1 file\nsrc/a.rs:1\n\n{TWO_SKIPPED}")
    );
    assert_eq!(shown_paths(&count), ["src/a.rs"]);

    for out in [&files, &content, &count] {
        assert!(!text_of(out).contains("from-dotenv"));
        assert!(!text_of(out).contains("from-server-key"));
    }
}

#[tokio::test]
async fn the_skip_note_follows_a_cut_and_a_miss_and_counts_what_was_walked() {
    let p = secrets_project();
    p.write("src/b.rs", "API_KEY=from-b\n");
    // Without a glob `.env` is hidden, not walked, so not counted.
    let mut input = grep("API_KEY=");
    input.head_limit = Some(1);
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "Found 2 files\nsrc/a.rs\n\n(Showing entries 1-1 of 2. Use offset=1 for the next ones, or narrow the search with `glob`, `type` or `path`.)\n(skipped 1 file that may hold secrets: server.key — name it as `path` to search it)"
    );
    let miss = Grep.call(grep("from-server-key"), &p.ctx()).await;
    let miss = text_of(&miss);
    assert!(
        miss.starts_with("No matches for `from-server-key`"),
        "{miss}"
    );
    assert!(
        miss.ends_with(
            "\n\n(skipped 1 file that may hold secrets: server.key — name it as `path` to search it)"
        ),
        "{miss}"
    );
}

#[tokio::test]
async fn more_than_five_skipped_secrets_are_counted_not_all_named() {
    let p = TempProject::new();
    for name in ["a", "b", "c", "d", "e", "f", "g"] {
        p.write(&format!("keys/{name}.pem"), "SECRET\n");
    }
    p.write("notes.txt", "no secret here\n");
    let out = Grep.call(grep("SECRET"), &p.ctx()).await;
    assert!(
        text_of(&out).ends_with(
            "(skipped 7 files that may hold secrets: keys/a.pem, keys/b.pem, keys/c.pem, keys/d.pem, keys/e.pem, and 2 more — name one as `path` to search it)"
        ),
        "{}",
        text_of(&out)
    );
}

/// The real permission chain's answer for Grep over `input`.
async fn chain_answer(
    p: &TempProject,
    input: &GrepInput,
    mode: riot_protocol::PermissionMode,
) -> riot_protocol::PermissionResult {
    use riot_protocol::PermissionPolicy as _;
    let policy = riot_permissions::Policy::new(p.root(), None);
    let query = riot_protocol::PermissionQuery {
        tool_name: "Grep".into(),
        input: serde_json::json!({"pattern": input.pattern, "path": input.path}),
        is_read_only: true,
        target: Grep.permission_target(input, &p.ctx()),
        tool_verdict: riot_protocol::PermissionResult::Passthrough,
        classifier_input: None,
        mode,
        hook: None,
    };
    policy.decide(&query).await
}

#[tokio::test]
async fn a_secret_named_as_path_is_a_read_of_it_that_the_chain_asks_about() {
    use riot_protocol::{DecisionReason, PermissionMode, PermissionResult};
    let p = secrets_project();
    let mut input = grep("API_KEY=");
    input.path = Some(".env".into());
    assert_eq!(
        Grep.permission_target(&input, &p.ctx()),
        PermissionTarget::Path {
            path: p.path(".env"),
            access: PathAccess::Read
        }
    );
    // Even in bypass mode the chain's safety check asks the person…
    let answer = chain_answer(&p, &input, PermissionMode::Bypass).await;
    assert!(
        matches!(
            &answer,
            PermissionResult::Ask {
                reason: DecisionReason::Safety { .. },
                ..
            }
        ),
        "{answer:?}"
    );
    // …while the project-wide search is allowed without a question, which
    // is why its walk must skip the secret itself.
    let answer = chain_answer(&p, &grep("API_KEY="), PermissionMode::Bypass).await;
    assert!(
        matches!(answer, PermissionResult::Allow { .. }),
        "{answer:?}"
    );
    // Once the person agreed, the named file is searched.
    input.output_mode = Some(OutputMode::Content);
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(
        text_of(&out),
        "1 matching line in 1 file\n.env:1:API_KEY=from-dotenv"
    );
}

#[tokio::test]
async fn inside_a_secret_directory_named_as_path_nothing_is_skipped() {
    use riot_protocol::{DecisionReason, PermissionMode, PermissionResult};
    let p = TempProject::new();
    p.write("home/.aws/credentials", "aws_secret_access_key = abc\n");
    let mut input = grep("aws_secret");
    input.path = Some("home/.aws".into());
    let answer = chain_answer(&p, &input, PermissionMode::Bypass).await;
    assert!(
        matches!(
            &answer,
            PermissionResult::Ask {
                reason: DecisionReason::Safety { .. },
                ..
            }
        ),
        "the chain asks about the directory: {answer:?}"
    );
    let out = Grep.call(input, &p.ctx()).await;
    assert_eq!(text_of(&out), "Found 1 file\nhome/.aws/credentials");
    // Searched from above, the same file is skipped.
    let mut from_top = grep("aws_secret");
    from_top.glob = Some("*".into());
    let out = Grep.call(from_top, &p.ctx()).await;
    assert!(
        text_of(&out).ends_with(
            "(skipped 1 file that may hold secrets: home/.aws/credentials — name it as `path` to search it)"
        ),
        "{}",
        text_of(&out)
    );
}

#[test]
fn an_explicit_null_for_an_optional_field_is_still_accepted() {
    // Declared schemas drop the `null` alternative of optional fields
    // (scheduler/lean.rs); a model that sends null anyway is not refused.
    let input: GrepInput = serde_json::from_value(serde_json::json!({
        "pattern": "x", "head_limit": null, "output_mode": null, "-i": null
    }))
    .unwrap();
    assert_eq!(
        (input.head_limit, input.output_mode, input.case_insensitive),
        (None, None, None)
    );
}
