#![allow(clippy::disallowed_methods)] // tests set file times on disk directly

use std::time::{Duration, UNIX_EPOCH};

use riot_protocol::ToolOutcome;

use super::*;
use crate::testing::{TempProject, text_of};

fn glob(pattern: &str, path: Option<&str>) -> GlobInput {
    GlobInput {
        pattern: pattern.into(),
        path: path.map(str::to_owned),
    }
}

fn set_mtime(p: &TempProject, rel: &str, secs: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(p.path(rel))
        .unwrap();
    f.set_modified(UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[tokio::test]
async fn newest_first_then_by_path_with_gitignore_and_hidden_rules() {
    let p = TempProject::new();
    std::fs::create_dir(p.path(".git")).unwrap();
    p.write(".gitignore", "target/\n");
    p.write("src/a.rs", "");
    p.write("src/b.rs", "");
    p.write("src/deep/c.rs", "");
    p.write("target/gen.rs", "");
    p.write(".hidden/h.rs", "");
    set_mtime(&p, "src/a.rs", 1_000);
    set_mtime(&p, "src/b.rs", 1_000);
    set_mtime(&p, "src/deep/c.rs", 2_000);
    let out = Glob.call(glob("**/*.rs", None), &p.ctx()).await;
    assert_eq!(text_of(&out), "src/deep/c.rs\nsrc/a.rs\nsrc/b.rs");
    let top = Glob.call(glob("*.rs", Some("src")), &p.ctx()).await;
    assert_eq!(
        text_of(&top),
        "src/a.rs\nsrc/b.rs",
        "`*` does not cross directories"
    );
    let hidden = Glob.call(glob(".hidden/*.rs", None), &p.ctx()).await;
    assert_eq!(
        text_of(&hidden),
        ".hidden/h.rs",
        "naming a hidden dir searches it"
    );
}

#[tokio::test]
async fn the_cap_is_stated_with_the_total() {
    let p = TempProject::new();
    for i in 0..120 {
        p.write(&format!("f{i:03}.txt"), "");
    }
    let out = Glob.call(glob("*.txt", None), &p.ctx()).await;
    let text = text_of(&out);
    assert_eq!(text.lines().filter(|l| l.ends_with(".txt")).count(), 100);
    assert!(text.ends_with("(Showing the 100 most recently modified of 120 matching files. Narrow the pattern or `path` to see the rest.)"));
    let ToolOutcome::Ok {
        ui_payload: Some(UiPayload::FileList {
            total, truncated, ..
        }),
        ..
    } = out
    else {
        panic!("no file list")
    };
    assert_eq!((total, truncated), (120, true));
}

#[tokio::test]
async fn bad_patterns_and_paths_are_corrected_before_running() {
    let p = TempProject::new();
    let e = Glob
        .validate_input(&glob("src/[a", None), &p.ctx())
        .await
        .unwrap_err();
    assert!(
        e.message.starts_with("`pattern` is not a valid glob"),
        "{}",
        e.message
    );
    let e = Glob
        .validate_input(&glob("*", Some("missing")), &p.ctx())
        .await
        .unwrap_err();
    assert!(e.message.contains("does not exist"));
    let none = Glob.call(glob("**/*.zig", None), &p.ctx()).await;
    assert!(text_of(&none).contains(".gitignore"), "{}", text_of(&none));
}
