//! `~/` in a model-supplied path names the person's home directory in every
//! file tool — for the call and for the permission chain (the target) —
//! never a directory called `~` in the project.

#![allow(clippy::disallowed_methods)] // tests set up and inspect a real home directory

use serde_json::{Value, json};

use riot_protocol::{PathAccess, PermissionTarget, Tool, ToolOutcome};

use super::{Edit, Glob, Grep, Read, Write};
use crate::testing::{TempProject, text_of};

fn input<T: Tool>(_: &T, value: Value) -> T::Input {
    serde_json::from_value(value).unwrap()
}

/// A project with a decoy `<project>/~/x.txt` and a home with `x.txt`.
fn project_and_home() -> (TempProject, tempfile::TempDir, std::path::PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let home_path = std::fs::canonicalize(home.path()).unwrap();
    std::fs::write(home_path.join("x.txt"), "from home\n").unwrap();
    let p = TempProject::with_home(&home_path);
    p.write("~/x.txt", "decoy in the project\n");
    (p, home, home_path)
}

#[tokio::test]
async fn read_edit_and_write_expand_a_leading_tilde_against_the_home() {
    let (p, _home, home) = project_and_home();
    let ctx = p.ctx();

    let read = input(&Read, json!({"file_path": "~/x.txt"}));
    assert_eq!(
        Read.permission_target(&read, &ctx),
        PermissionTarget::Path {
            path: home.join("x.txt"),
            access: PathAccess::Read
        }
    );
    let out = Read.call(read, &ctx).await;
    assert_eq!(text_of(&out), "     1\tfrom home");

    let edit = input(
        &Edit,
        json!({"file_path": "~/x.txt", "old_string": "from home", "new_string": "edited"}),
    );
    assert_eq!(
        Edit.permission_target(&edit, &ctx),
        PermissionTarget::Path {
            path: home.join("x.txt"),
            access: PathAccess::Write
        }
    );
    let out = Edit.call(edit, &ctx).await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    assert_eq!(
        std::fs::read_to_string(home.join("x.txt")).unwrap(),
        "edited\n"
    );

    let write = input(
        &Write,
        json!({"file_path": "~/new.txt", "content": "new\n"}),
    );
    assert_eq!(
        Write.permission_target(&write, &ctx),
        PermissionTarget::Path {
            path: home.join("new.txt"),
            access: PathAccess::Write
        }
    );
    let out = Write.call(write, &ctx).await;
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{}", text_of(&out));
    assert_eq!(
        std::fs::read_to_string(home.join("new.txt")).unwrap(),
        "new\n"
    );

    // The decoy in the project was never touched, and no `~` appeared.
    assert_eq!(p.read("~/x.txt"), b"decoy in the project\n");
    assert!(!p.path("~/new.txt").exists());
}

#[tokio::test]
async fn glob_and_grep_search_the_home_for_a_leading_tilde() {
    let (p, _home, home) = project_and_home();
    let ctx = p.ctx();

    let glob = input(&Glob, json!({"pattern": "~/*.txt"}));
    assert_eq!(
        Glob.permission_target(&glob, &ctx),
        PermissionTarget::Path {
            path: home.clone(),
            access: PathAccess::Read
        }
    );
    let out = Glob.call(glob, &ctx).await;
    assert_eq!(text_of(&out), home.join("x.txt").display().to_string());

    let glob_in = input(&Glob, json!({"pattern": "*.txt", "path": "~"}));
    let out = Glob.call(glob_in, &ctx).await;
    assert_eq!(text_of(&out), home.join("x.txt").display().to_string());

    let grep = input(
        &Grep,
        json!({"pattern": "from", "path": "~/", "output_mode": "files_with_matches"}),
    );
    assert_eq!(
        Grep.permission_target(&grep, &ctx),
        PermissionTarget::Path {
            path: home.join(""),
            access: PathAccess::Read
        }
    );
    let out = Grep.call(grep, &ctx).await;
    let text = text_of(&out);
    assert!(
        text.contains(&home.join("x.txt").display().to_string()),
        "{text}"
    );
    assert!(!text.contains("decoy"), "{text}");
}

#[tokio::test]
async fn without_a_known_home_the_tilde_is_an_ordinary_name() {
    let p = TempProject::new();
    p.write("~/x.txt", "in the project\n");
    let out = Read
        .call(input(&Read, json!({"file_path": "~/x.txt"})), &p.ctx())
        .await;
    assert_eq!(text_of(&out), "     1\tin the project");
}
