#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! File tools through the whole chain: sensitive paths by component,
//! credentials for reads too, path shapes, the project boundary, symlinks.

mod support;

use std::path::PathBuf;
use std::sync::Arc;

use riot_protocol::{PathAccess, PermissionMode, PermissionTarget};
use support::{HOME, PROJECT, TreeFs, decide, policy, query, run_table};

const A: &str = "allow";
const Q: &str = "ask";
const D: &str = "deny";

#[tokio::test]
async fn default_mode_paths() {
    let rows: &[(&str, &str, &str, &str)] = &[
        // reads
        ("Read", "README.md", A, "mode"),
        ("Read", "src/main.rs", A, "mode"),
        ("Read", "/etc/hosts", A, "mode"),
        ("Read", "/home/me/.ssh/id_rsa", Q, "safety"),
        ("Read", "/home/me/.ssh/id_ed25519", Q, "safety"),
        ("Read", ".env", Q, "safety"),
        ("Read", "config/.env.production", Q, "safety"),
        ("Read", "./.env.local", Q, "safety"),
        ("Read", ".env.example", A, "mode"),
        ("Read", ".environment.md", A, "mode"),
        ("Read", "/home/me/.aws/credentials", Q, "safety"),
        ("Read", "/home/me/.aws/config", Q, "safety"),
        ("Read", "/home/me/.netrc", Q, "safety"),
        ("Read", "/home/me/.git-credentials", Q, "safety"),
        ("Read", "/home/me/.docker/config.json", Q, "safety"),
        ("Read", "/home/me/.kube/config", Q, "safety"),
        (
            "Read",
            "/home/me/.gnupg/private-keys-v1.d/x.key",
            Q,
            "safety",
        ),
        ("Read", "certs/server.pem", Q, "safety"),
        ("Read", "certs/server.key", Q, "safety"),
        ("Read", "keystore.p12", Q, "safety"),
        ("Read", ".git/config", A, "mode"),
        ("Read", ".git/HEAD", A, "mode"),
        ("Read", "/home/me/.bashrc", A, "mode"),
        ("Read", "/home/me/.zshrc", A, "mode"),
        ("Read", "/home/me/.ssh/id_rsa.pub", A, "mode"),
        ("Read", "/home/me/.ssh/known_hosts", A, "mode"),
        (
            "Read",
            "/home/me/.config/riot/credentials.json",
            Q,
            "safety",
        ),
        ("Read", "/home/me/.config/riot/settings.json", A, "mode"),
        ("Read", ".riot/settings.json", A, "mode"),
        ("Read", "src/legit.git-helper.rs", A, "mode"),
        ("Read", "docs/.gitignore", A, "mode"),
        ("Read", "src/../.env", Q, "safety"),
        ("Glob", ".", A, "mode"),
        ("Glob", "/home/me/.ssh", Q, "safety"),
        ("Grep", "src", A, "mode"),
        ("Grep", "/home/me/.aws", Q, "safety"),
        // writes inside the project
        ("Write", "src/main.rs", Q, "mode"),
        ("Edit", "src/lib.rs", Q, "mode"),
        ("Write", "src/legit.git-helper.rs", Q, "mode"),
        ("Write", ".github/workflows/ci.yml", Q, "mode"),
        ("Write", ".gitignore", Q, "mode"),
        ("Write", "src/nullable.rs", Q, "mode"),
        ("Write", "src/console.rs", Q, "mode"),
        // sensitive writes
        ("Write", ".git/config", Q, "safety"),
        ("Write", ".git/hooks/pre-commit", Q, "safety"),
        ("Edit", "sub/module/.git/config", Q, "safety"),
        ("Write", ".git", Q, "safety"),
        ("Write", "/home/me/.zshrc", Q, "safety"),
        ("Write", "/home/me/.bashrc", Q, "safety"),
        ("Write", "/home/me/.profile", Q, "safety"),
        ("Write", "/home/me/.config/fish/config.fish", Q, "safety"),
        ("Write", "/home/me/.gitconfig", Q, "safety"),
        ("Write", "/home/me/.ssh/config", Q, "safety"),
        ("Write", "/home/me/.ssh/authorized_keys", Q, "safety"),
        ("Write", ".riot/settings.json", Q, "safety"),
        ("Write", ".riot/settings.local.json", Q, "safety"),
        ("Write", ".riot/hooks.json", Q, "safety"),
        ("Write", ".claude/settings.json", Q, "safety"),
        ("Write", ".mcp.json", Q, "safety"),
        ("Write", "/home/me/.config/riot/settings.json", Q, "safety"),
        ("Write", "/home/me/.config/riot/agents/x.md", Q, "safety"),
        ("Write", ".env", Q, "safety"),
        ("Edit", "deploy/.env.prod", Q, "safety"),
        // outside the project
        ("Write", "/tmp/out.txt", Q, "mode"),
        ("Write", "../other/x.rs", Q, "mode"),
        ("Write", "/work/project-sibling/x", Q, "mode"),
        // path shapes (Windows meanings, checked on every platform)
        ("Write", "src/a.txt:stream", Q, "safety"),
        ("Read", "src/a.txt::$DATA", Q, "safety"),
        ("Write", "PROGRA~1/x", Q, "safety"),
        ("Write", "src/SETTIN~2.JSO", Q, "safety"),
        ("Write", "src/file.txt.", Q, "safety"),
        ("Write", "src/file.txt ", Q, "safety"),
        ("Write", "src/con.txt", Q, "safety"),
        ("Write", "src/NUL", Q, "safety"),
        ("Write", "src/lpt1", Q, "safety"),
        ("Read", "src/aux.rs", Q, "safety"),
        ("Write", "\\\\?\\C:\\Windows\\x", Q, "safety"),
        ("Write", "\\\\.\\PhysicalDrive0", Q, "safety"),
        ("Write", "src/a\0b", Q, "safety"),
    ];
    run_table(&policy(vec![]), "default", rows).await;
}

#[tokio::test]
async fn paths_in_other_modes() {
    let p = policy(vec![]);
    run_table(
        &p,
        "accept-edits",
        &[
            ("Write", "src/main.rs", A, "mode"),
            ("Edit", "src/lib.rs", A, "mode"),
            ("Write", "/tmp/x", Q, "mode"),
            ("Write", "../x", Q, "mode"),
            ("Write", ".git/config", Q, "safety"),
            ("Read", ".env", Q, "safety"),
            ("Read", "src/main.rs", A, "mode"),
        ],
    )
    .await;
    run_table(
        &p,
        "bypass",
        &[
            ("Write", "src/main.rs", A, "mode"),
            ("Write", "/tmp/x", A, "mode"),
            ("Write", ".git/config", Q, "safety"),
            ("Write", "/home/me/.zshrc", Q, "safety"),
            ("Read", ".env", Q, "safety"),
            ("Read", "/home/me/.ssh/id_rsa", Q, "safety"),
            ("Write", "src/a.txt:x", Q, "safety"),
        ],
    )
    .await;
    run_table(
        &p,
        "plan",
        &[
            ("Write", "src/main.rs", D, "mode"),
            ("Write", "/tmp/x", D, "mode"),
            ("Read", "src/main.rs", A, "mode"),
            ("Read", ".env", D, "safety"),
        ],
    )
    .await;
    run_table(
        &p,
        "dont-ask",
        &[
            ("Write", "src/main.rs", D, "mode"),
            ("Write", "/tmp/x", D, "mode"),
            ("Read", ".env", D, "safety"),
            ("Read", "README.md", A, "mode"),
        ],
    )
    .await;
    run_table(
        &p,
        "unattended",
        &[
            ("Write", ".git/config", A, "mode"),
            ("Read", ".env", A, "mode"),
            ("Write", "/tmp/x", A, "mode"),
        ],
    )
    .await;
    run_table(
        &p,
        "auto",
        &[
            ("Write", "src/x.rs", A, "mode"),
            ("Write", "/tmp/x", Q, "classifier"),
            ("Write", ".git/config", Q, "safety"),
            ("Read", "README.md", A, "mode"),
        ],
    )
    .await;
}

/// `~/…` is the home directory, as the file tools read it: never a folder
/// called `~` inside the project (which would pass as a project path).
#[tokio::test]
async fn a_leading_tilde_is_the_home_directory_not_a_folder_in_the_project() {
    let p = policy(vec![]);
    run_table(
        &p,
        "default",
        &[
            ("Read", "~/.ssh/id_rsa", Q, "safety"),
            ("Glob", "~/.ssh", Q, "safety"),
            ("Grep", "~/.aws", Q, "safety"),
            ("Write", "~/.zshrc", Q, "safety"),
            ("Write", "~/notes.txt", Q, "mode"),
            ("Read", "~/notes.txt", A, "mode"),
            // Only a leading `~/` is the home.
            ("Read", "src/~/x", A, "mode"),
        ],
    )
    .await;
    run_table(
        &p,
        "accept-edits",
        &[
            // Outside the project: still asked.
            ("Write", "~/notes.txt", Q, "mode"),
            ("Write", "~", Q, "mode"),
            // `~other/` is a name in the project.
            ("Write", "~other/notes.txt", A, "mode"),
        ],
    )
    .await;
    // A rule on the home path matches the `~/` form the model wrote.
    let denied = support::policy(vec![support::rule(
        "Read(/home/me/.aws/**)",
        riot_protocol::RuleBehavior::Deny,
        riot_protocol::RuleSource::User,
    )]);
    run_table(&denied, "bypass", &[("Read", "~/.aws/config", D, "rule")]).await;
    // The question names the real path.
    let q = query("Read", "~/.ssh/id_rsa", PermissionMode::Default);
    let result = riot_protocol::PermissionPolicy::decide(&p, &q).await;
    let text = format!("{result:?}");
    assert!(text.contains("/home/me/.ssh/id_rsa"), "{text}");
    assert!(!text.contains(&format!("{PROJECT}/~")), "{text}");
}

/// Links out of the project: to a shell startup file, to /tmp, to the SSH
/// keys, to an alternate-stream path, and from `src/` to /etc.
fn link_fs() -> Arc<TreeFs> {
    Arc::new(TreeFs::new(
        &[
            "/work/proj/src/main.rs",
            "/home/me/.zshrc",
            "/home/me/.ssh/id_rsa",
            "/tmp/x.txt:hidden",
            "/etc/hostname",
        ],
        &[
            ("/work/proj/innocent.txt", "/home/me/.zshrc"),
            ("/work/proj/out", "/tmp"),
            ("/work/proj/keys", "/home/me/.ssh"),
            ("/work/proj/stream", "/tmp/x.txt:hidden"),
            ("/work/proj/src/escape", "/etc"),
        ],
    ))
}

#[tokio::test]
async fn symlinks_are_judged_by_where_they_lead() {
    let p = policy(vec![]).with_file_system(link_fs());
    for (tool, path, mode, expected) in [
        ("Write", "innocent.txt", "accept-edits", (Q, "safety")),
        ("Write", "innocent.txt", "bypass", (Q, "safety")),
        ("Read", "keys/id_rsa", "default", (Q, "safety")),
        ("Write", "out/new-file.txt", "accept-edits", (Q, "mode")),
        ("Write", "src/new-file.rs", "accept-edits", (A, "mode")),
        ("Write", "stream", "bypass", (Q, "safety")),
    ] {
        let m: PermissionMode = mode.parse().unwrap();
        assert_eq!(
            decide(&p, &query(tool, path, m)).await,
            expected,
            "{tool} {path} in {mode}"
        );
    }
}

#[tokio::test]
async fn an_allow_rule_must_cover_the_resolved_path_too() {
    use riot_protocol::RuleBehavior::Allow;
    use riot_protocol::RuleSource::User;
    let p = support::policy(vec![support::rule("Edit(./src/**)", Allow, User)])
        .with_file_system(link_fs());
    let m = PermissionMode::Default;
    assert_eq!(
        decide(&p, &query("Write", "src/new.rs", m)).await,
        (A, "rule")
    );
    // `src/escape` leads to /etc: the rule names src/, not /etc.
    assert_eq!(
        decide(&p, &query("Write", "src/escape/passwd", m)).await,
        (Q, "mode")
    );
}

#[tokio::test]
async fn a_write_outside_the_project_is_shown_with_its_resolved_absolute_path() {
    let p = policy(vec![]).with_file_system(link_fs());
    let q = query("Write", "out/report.txt", PermissionMode::AcceptEdits);
    let result = riot_protocol::PermissionPolicy::decide(&p, &q).await;
    let riot_protocol::PermissionResult::Ask { reason, message } = result else {
        panic!("expected an ask, got {result:?}");
    };
    assert_eq!(reason.kind(), "mode");
    assert!(message.contains("/tmp/report.txt"), "{message}");
    assert!(
        reason.detail().contains("outside the project"),
        "{}",
        reason.detail()
    );
}

#[tokio::test]
async fn relative_targets_resolve_against_the_project() {
    let p = policy(vec![]);
    let mut q = query("Write", "x", PermissionMode::AcceptEdits);
    q.target = PermissionTarget::Path {
        path: PathBuf::from("src/x.rs"),
        access: PathAccess::Write,
    };
    assert_eq!(decide(&p, &q).await, (A, "mode"));
    q.target = PermissionTarget::Path {
        path: PathBuf::from("../../etc/x"),
        access: PathAccess::Write,
    };
    assert_eq!(decide(&p, &q).await, (Q, "mode"));
    let _ = (HOME, PROJECT);
}

#[tokio::test]
async fn an_additional_directory_counts_as_the_project_for_the_modes_only() {
    let p = policy(vec![]).with_additional_dirs([PathBuf::from("/work/lib/./")]);
    let accept = PermissionMode::AcceptEdits;
    // accept-edits lets edits there through, as in the project.
    assert_eq!(
        decide(&p, &query("Write", "/work/lib/src/a.rs", accept)).await,
        (A, "mode")
    );
    assert_eq!(
        decide(&p, &query("Write", "/work/libx/a.rs", accept)).await,
        (Q, "mode")
    );
    // The default mode still asks, and safety checks still hold.
    assert_eq!(
        decide(
            &p,
            &query("Write", "/work/lib/src/a.rs", PermissionMode::Default)
        )
        .await,
        (Q, "mode")
    );
    assert_eq!(
        decide(&p, &query("Write", "/work/lib/.git/config", accept)).await,
        (Q, "safety")
    );
}
