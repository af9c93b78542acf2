#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Rules through the whole chain: matching per tool family, precedence
//! across sources, the Bash wildcard and wrapper stripping.

mod support;

use riot_protocol::RuleBehavior::{Allow, Ask, Deny};
use riot_protocol::RuleSource::{CliFlag, Local, Project, Session, User};
use riot_protocol::{
    DecisionReason, PermissionMode, PermissionPolicy, PermissionResult, RuleSource,
};
use support::{decide, policy, query, rule, run_table};

const A: &str = "allow";
const Q: &str = "ask";
const D: &str = "deny";

#[tokio::test]
async fn bash_deny_rules_hold_in_every_shape_and_mode() {
    let p = policy(vec![rule("Bash(git push *)", Deny, User)]);
    let rows = &[
        ("Bash", "git push", D, "rule"),
        ("Bash", "git push origin main", D, "rule"),
        ("Bash", "git  push   origin", D, "rule"),
        ("Bash", "\"git\" push", D, "rule"),
        ("Bash", "cd x && git push", D, "rule"),
        ("Bash", "ls; git push --force", D, "rule"),
        ("Bash", "git status | git push", D, "rule"),
        ("Bash", "timeout 30 git push", D, "rule"),
        ("Bash", "timeout -k 5 30 git push origin", D, "rule"),
        ("Bash", "nice -n 5 nohup git push", D, "rule"),
        ("Bash", "env GIT_TRACE=1 git push", D, "rule"),
        ("Bash", "echo $(git push)", D, "rule"),
        ("Bash", "for r in a; do git push $r; done", D, "rule"),
        ("Bash", "git push 'unterminated", D, "rule"),
        ("Bash", "git status", A, "mode"),
        ("Bash", "git pushx", Q, "unverifiable"),
        ("Bash", "echo git push", A, "mode"),
    ];
    for mode in [
        "default",
        "accept-edits",
        "bypass",
        "unattended",
        "auto",
        "plan",
        "dont-ask",
    ] {
        let rows: Vec<_> = rows
            .iter()
            .map(|&(t, c, d, k)| {
                // Only the deny rows are the point in every mode.
                if d == D {
                    (t, c, d, k)
                } else {
                    (t, c, "skip", k)
                }
            })
            .filter(|r| r.2 != "skip")
            .collect();
        run_table(&p, mode, &rows).await;
    }
    run_table(&p, "default", rows).await;
}

#[tokio::test]
async fn deny_rules_look_through_sudo_and_other_runners() {
    let p = policy(vec![rule("Bash(rm *)", Deny, User)]);
    let rows = &[
        ("Bash", "sudo rm -rf /", D, "rule"),
        ("Bash", "sudo -u root rm -rf /", D, "rule"),
        ("Bash", "doas rm x", D, "rule"),
        ("Bash", "command rm x", D, "rule"),
        ("Bash", "ls | xargs rm", D, "rule"),
        ("Bash", "find . | xargs -I{} rm {}", D, "rule"),
        ("Bash", "exec rm x", D, "rule"),
        ("Bash", "env -i rm x", D, "rule"),
        ("Bash", "git commit -m 'rm stuff'", Q, "unverifiable"),
        ("Bash", "echo rm x", A, "mode"),
    ];
    run_table(&p, "default", rows).await;
    run_table(&p, "bypass", &rows[..8]).await;
}

#[tokio::test]
async fn bash_allow_rules_cover_only_what_they_say() {
    let p = policy(vec![rule("Bash(npm run test *)", Allow, Project)]);
    run_table(
        &p,
        "default",
        &[
            ("Bash", "npm run test", A, "rule"),
            ("Bash", "npm run test --watch", A, "rule"),
            ("Bash", "npm run test -- 'a; b'", A, "rule"),
            ("Bash", "npm run test && ls", A, "rule"),
            ("Bash", "timeout 60 npm run test", A, "rule"),
            ("Bash", "FOO=1 npm run test", A, "rule"),
            ("Bash", "npm run testing", Q, "unverifiable"),
            ("Bash", "npm run test; rm -rf /", Q, "unverifiable"),
            ("Bash", "npm run test > out.txt", Q, "unverifiable"),
            ("Bash", "npm run test $(rm -rf ~)", Q, "safety"),
            ("Bash", "npm run test & rm x", Q, "unverifiable"),
            (
                "Bash",
                "for i in 1; do npm run test; done",
                Q,
                "unverifiable",
            ),
            ("Bash", "npm run test 'unterminated", Q, "unverifiable"),
            ("Bash", "LD_PRELOAD=x npm run test", Q, "safety"),
            ("Bash", "npm run test .env", Q, "safety"),
            ("Bash", "sudo npm run test", Q, "unverifiable"),
        ],
    )
    .await;
}

#[tokio::test]
async fn exact_prefix_and_legacy_patterns() {
    let p = policy(vec![
        rule("Bash(cargo check)", Allow, User),
        rule("Bash(make:*)", Allow, User),
        rule("Bash(rm *)", Ask, User),
    ]);
    run_table(
        &p,
        "default",
        &[
            ("Bash", "cargo check", A, "rule"),
            ("Bash", "cargo check --all", Q, "unverifiable"),
            ("Bash", "make", A, "rule"),
            ("Bash", "make test", A, "rule"),
            ("Bash", "maketest", Q, "unverifiable"),
            ("Bash", "rm x", Q, "rule"),
        ],
    )
    .await;
    // A content ask rule holds in bypass; unattended does not waive it.
    run_table(&p, "bypass", &[("Bash", "rm x", Q, "rule")]).await;
    run_table(&p, "unattended", &[("Bash", "rm x", Q, "rule")]).await;
}

#[tokio::test]
async fn plan_mode_stays_read_only_whatever_allows() {
    let p = policy(vec![
        rule("Bash(npm test *)", Allow, User),
        rule("Edit(./src/**)", Allow, User),
        rule("Bash(ls *)", Allow, User),
        rule("mcp__db", Allow, User),
    ]);
    run_table(
        &p,
        "plan",
        &[
            ("Bash", "npm test", D, "mode"),
            ("Write", "src/main.rs", D, "mode"),
            ("mcp__db__drop", "", D, "mode"),
            ("Bash", "ls -la", A, "rule"),
            ("Read", "src/main.rs", A, "mode"),
        ],
    )
    .await;
}

#[tokio::test]
async fn empty_pattern_matches_only_the_empty_command() {
    let p = policy(vec![rule("Bash()", Deny, User)]);
    run_table(
        &p,
        "default",
        &[
            ("Bash", "", D, "rule"),
            ("Bash", "ls", A, "mode"),
            ("Bash", "rm x", Q, "unverifiable"),
        ],
    )
    .await;
}

#[tokio::test]
async fn whole_tool_rules() {
    run_table(
        &policy(vec![rule("Bash", Ask, User)]),
        "default",
        &[("Bash", "ls", Q, "rule"), ("Read", "README.md", A, "mode")],
    )
    .await;
    run_table(
        &policy(vec![rule("Bash", Deny, Local)]),
        "bypass",
        &[("Bash", "ls", D, "rule")],
    )
    .await;
    // A whole-tool allow does not get past content ask rules or safety.
    let p = policy(vec![
        rule("Bash", Allow, User),
        rule("Bash(rm *)", Ask, User),
    ]);
    run_table(
        &p,
        "default",
        &[
            ("Bash", "cargo build", A, "rule"),
            ("Bash", "rm x", Q, "rule"),
            ("Bash", "cat .env", Q, "safety"),
            ("Bash", "echo x >> ~/.zshrc", Q, "safety"),
        ],
    )
    .await;
}

#[tokio::test]
async fn file_rules_match_path_components_per_family() {
    let p = policy(vec![
        rule("Read(./secrets/**)", Deny, Project),
        rule("Edit(./src/**)", Allow, User),
        rule("Write(/tmp/**)", Allow, CliFlag),
        rule("Read(~/notes/**)", Ask, User),
        rule("Edit(*.lock)", Deny, User),
    ]);
    run_table(
        &p,
        "default",
        &[
            ("Read", "secrets/api.txt", D, "rule"),
            ("Read", "./secrets/deep/a", D, "rule"),
            ("Read", "/work/proj/secrets/x", D, "rule"),
            ("Grep", "secrets", D, "rule"),
            ("Glob", "secrets/sub", D, "rule"),
            ("Read", "secretsx/a", A, "mode"),
            ("Read", "other/secrets/a", A, "mode"),
            ("Write", "src/main.rs", A, "rule"),
            ("Edit", "src/deep/mod.rs", A, "rule"),
            ("Write", "docs/x.md", Q, "mode"),
            ("Write", "src/.git/config", Q, "safety"),
            ("Write", "src/../.env", Q, "safety"),
            ("Write", "/tmp/x", A, "rule"),
            ("Read", "/home/me/notes/a.md", Q, "rule"),
            ("Write", "Cargo.lock", D, "rule"),
            ("Edit", "sub/yarn.lock", D, "rule"),
            ("NotebookEdit", "src/analysis.ipynb", A, "rule"),
            ("NotebookEdit", "docs/n.ipynb", Q, "mode"),
            ("NotebookEdit", "src/.git/n.ipynb", Q, "safety"),
        ],
    )
    .await;
    run_table(
        &p,
        "accept-edits",
        &[("NotebookEdit", "docs/n.ipynb", A, "mode")],
    )
    .await;
    run_table(&p, "bypass", &[("Read", "secrets/a", D, "rule")]).await;
}

#[tokio::test]
async fn file_deny_and_ask_rules_hold_against_shell_commands() {
    let p = policy(vec![
        rule("Read(./secrets/**)", Deny, Project),
        rule("Edit(./vendor/**)", Ask, User),
        rule("Read(~/notes/**)", Deny, User),
    ]);
    let rows = &[
        ("Bash", "cat secrets/key.txt", D, "rule"),
        ("Bash", "cat ./secrets/../secrets/key.txt", D, "rule"),
        ("Bash", "grep -r token secrets", D, "rule"),
        ("Bash", "cp secrets/key.txt /tmp/x", D, "rule"),
        ("Bash", "cat /work/proj/secrets/a", D, "rule"),
        ("Bash", "cat ~/notes/diary.md", D, "rule"),
        ("Bash", "tar czf out.tgz --directory=secrets .", D, "rule"),
        ("Bash", "echo x > vendor/lib.rs", Q, "rule"),
        ("Bash", "cat secretsx/a", A, "mode"),
        ("Bash", "cat src/secrets.rs", A, "mode"),
    ];
    run_table(&p, "default", rows).await;
    run_table(&p, "bypass", &rows[..8]).await;
}

#[tokio::test]
async fn web_and_mcp_rules() {
    let p = policy(vec![
        rule("WebFetch(domain:docs.rs)", Allow, User),
        rule("WebFetch(domain:*.github.com)", Allow, User),
        rule("mcp__github__*", Allow, User),
        rule("mcp__danger", Deny, User),
    ]);
    run_table(
        &p,
        "default",
        &[
            ("WebFetch", "https://docs.rs/serde", A, "rule"),
            ("WebFetch", "https://DOCS.rs:443/x", A, "rule"),
            ("WebFetch", "https://api.github.com/repos", A, "rule"),
            ("WebFetch", "https://github.com/", Q, "mode"),
            ("WebFetch", "https://docs.rs.evil.com/", Q, "mode"),
            ("WebFetch", "https://evil.com/?docs.rs", Q, "mode"),
            ("WebFetch", "https://docs.rs@evil.com/", Q, "mode"),
            ("mcp__github__create_issue", "", A, "rule"),
            ("mcp__gitlab__create_issue", "", Q, "mode"),
            ("mcp__danger__anything", "", D, "rule"),
            ("Unknown", "", Q, "mode"),
        ],
    )
    .await;
}

#[tokio::test]
async fn deny_beats_ask_beats_allow_whatever_the_sources() {
    let sources = [User, Project, Local, CliFlag, Session];
    for deny_src in sources {
        for allow_src in sources {
            let p = policy(vec![
                rule("Bash(rm *)", Allow, allow_src),
                rule("Bash(rm *)", Deny, deny_src),
            ]);
            assert_eq!(
                decide(&p, &query("Bash", "rm x", PermissionMode::Default)).await,
                (D, "rule"),
                "deny from {deny_src:?} vs allow from {allow_src:?}"
            );
            let p = policy(vec![
                rule("Bash(rm *)", Ask, deny_src),
                rule("Bash(rm *)", Allow, allow_src),
            ]);
            assert_eq!(
                decide(&p, &query("Bash", "rm x", PermissionMode::Default)).await,
                (Q, "rule"),
                "ask from {deny_src:?} vs allow from {allow_src:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_quoted_rule_is_the_most_specific_source() {
    let p = policy(vec![
        rule("Bash(rm *)", Deny, User),
        rule("Bash(rm -rf *)", Deny, Local),
    ]);
    let result = p
        .decide(&query("Bash", "rm -rf x", PermissionMode::Default))
        .await;
    let PermissionResult::Deny {
        reason: DecisionReason::Rule { rule, source, .. },
        message,
    } = result
    else {
        panic!("expected a rule denial, got {result:?}");
    };
    assert_eq!(
        (rule.as_str(), source),
        ("Bash(rm -rf *)", RuleSource::Local)
    );
    assert!(message.contains("Bash(rm -rf *)"), "{message}");
}

#[tokio::test]
async fn allow_always_sticks_for_the_session() {
    let p = policy(vec![]);
    let q = query("Bash", "npm install", PermissionMode::Default);
    assert_eq!(decide(&p, &q).await, (Q, "unverifiable"));
    p.remember(rule("Bash(npm install)", Allow, Session));
    let result = p.decide(&q).await;
    assert!(matches!(
        result,
        PermissionResult::Allow {
            reason: DecisionReason::Rule {
                source: RuleSource::Session,
                ..
            },
            ..
        }
    ));
    // Remembering the same rule twice keeps one copy.
    p.remember(rule("Bash(npm install)", Allow, Session));
    assert_eq!(p.rules().rules().len(), 1);
    // A remembered allow never overrides a configured deny.
    let p = policy(vec![rule("Bash(npm *)", Deny, Project)]);
    p.remember(rule("Bash(npm install)", Allow, Session));
    assert_eq!(decide(&p, &q).await, (D, "rule"));
}
