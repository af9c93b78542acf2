#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! One test per named mutant of docs/testing.md ("Mutation testing"). Each
//! asserts the **reason**, not only the decision, so a mutant that reaches
//! the right decision for the wrong reason still dies. The hand mutants
//! themselves live in `.riot/skills/mutate/hand_mutants.py`.

mod support;

use riot_permissions::{analyze_command, nobody_can_answer, resolve_answer};
use riot_protocol::RuleBehavior::{Allow, Deny};
use riot_protocol::RuleSource::{CliFlag, Session, User};
use riot_protocol::{
    DecisionReason, PermissionMode, PermissionOutcome, PermissionPolicy, PermissionResult,
    RuleBehavior,
};
use support::{policy, query, rule};

/// Mutant: "a tool's Allow returns before the safety checks".
#[tokio::test]
async fn a_tools_allow_does_not_skip_the_safety_checks() {
    let p = policy(vec![]);
    let tool_allow = PermissionResult::Allow {
        reason: DecisionReason::Consent {
            detail: "the tool approves".into(),
        },
        updated_input: None,
    };
    for (tool, arg, mode) in [
        ("Read", ".env", PermissionMode::Default),
        ("Read", "/home/me/.ssh/id_rsa", PermissionMode::AcceptEdits),
        ("Write", ".git/hooks/pre-commit", PermissionMode::Bypass),
        ("Bash", "echo x >> ~/.zshrc", PermissionMode::Bypass),
    ] {
        let mut q = query(tool, arg, mode);
        q.tool_verdict = tool_allow.clone();
        let result = p.decide(&q).await;
        assert!(
            matches!(
                &result,
                PermissionResult::Ask {
                    reason: DecisionReason::Safety { .. },
                    ..
                }
            ),
            "{tool} {arg} in {mode}: a tool's Allow must not pass the safety checks, got {result:?}"
        );
    }
}

/// Mutant: "Ask with no one to answer becomes Allow".
#[tokio::test]
async fn an_ask_nobody_can_answer_is_a_denial() {
    let p = policy(vec![]);
    // dont-ask mode: the chain itself turns the ask into a denial and
    // keeps the reason of the question.
    let result = p
        .decide(&query("Bash", "rm -rf build", PermissionMode::DontAsk))
        .await;
    assert!(
        matches!(
            &result,
            PermissionResult::Deny {
                reason: DecisionReason::Unverifiable { .. },
                ..
            }
        ),
        "got {result:?}"
    );
    let result = p
        .decide(&query("Read", ".env", PermissionMode::DontAsk))
        .await;
    assert!(
        matches!(
            &result,
            PermissionResult::Deny {
                reason: DecisionReason::Safety { .. },
                ..
            }
        ),
        "got {result:?}"
    );
    // A timeout or cancelled question (the scheduler's gate).
    let asked = p
        .decide(&query("Bash", "npm install", PermissionMode::Default))
        .await;
    assert!(matches!(asked, PermissionResult::Ask { .. }));
    let result = nobody_can_answer(asked, "cancelled");
    let PermissionResult::Deny {
        reason: DecisionReason::NoAnswer { asked, .. },
        ..
    } = &result
    else {
        panic!("nobody answering must deny, got {result:?}");
    };
    assert_eq!(asked.kind(), "unverifiable");
    // The gate's timeout and cancellation, through the person's-answer path.
    let asked = p
        .decide(&query("Read", ".env", PermissionMode::Bypass))
        .await;
    for outcome in [PermissionOutcome::TimedOut, PermissionOutcome::Cancelled] {
        let result = resolve_answer(&p, &asked, &outcome);
        let PermissionResult::Deny {
            reason: DecisionReason::NoAnswer { asked, .. },
            ..
        } = &result
        else {
            panic!("{outcome:?} must deny, got {result:?}");
        };
        assert_eq!(asked.kind(), "safety");
    }
}

/// Mutant: "AST walk skips anonymous nodes". `&` is an anonymous node;
/// skipping it would make `ls &` a plain read-only `ls`.
#[tokio::test]
async fn the_ast_allow_list_sees_anonymous_nodes() {
    let analysis = analyze_command("ls &");
    assert!(!analysis.is_read_only());
    assert!(
        analysis.unverifiable().is_some_and(|u| u.contains('&')),
        "{:?}",
        analysis.unverifiable()
    );
    let p = policy(vec![]);
    for cmd in ["ls &", "sleep 1 & ls", "ls & cat README.md"] {
        let result = p.decide(&query("Bash", cmd, PermissionMode::Default)).await;
        let PermissionResult::Ask {
            reason: DecisionReason::Unverifiable { detail },
            ..
        } = &result
        else {
            panic!("{cmd}: expected an unverifiable ask, got {result:?}");
        };
        assert!(detail.contains("`&`"), "{cmd}: {detail}");
    }
}

/// Mutant: "`sudo` stripped as a wrapper". A rule for `rm` must not
/// cover `sudo rm`, and `sudo ls` is not a read-only `ls`.
#[tokio::test]
async fn sudo_is_never_a_wrapper() {
    let p = policy(vec![
        rule("Bash(rm *)", Allow, User),
        rule("Bash(ls *)", Allow, User),
    ]);
    for cmd in ["sudo rm -rf /", "sudo ls", "timeout 5 sudo rm x"] {
        let result = p.decide(&query("Bash", cmd, PermissionMode::Default)).await;
        assert!(
            matches!(
                &result,
                PermissionResult::Ask {
                    reason: DecisionReason::Unverifiable { .. },
                    ..
                }
            ),
            "{cmd}: sudo must not be stripped, got {result:?}"
        );
    }
    assert_eq!(
        analyze_command("sudo ls").subcommands[0].stripped_match_text(),
        None
    );
    // Control: the real wrappers are stripped.
    let result = p
        .decide(&query("Bash", "timeout 5 rm x", PermissionMode::Default))
        .await;
    assert!(matches!(
        result,
        PermissionResult::Allow {
            reason: DecisionReason::Rule { .. },
            ..
        }
    ));
}

/// Mutant: "source priority decides deny vs allow". A session or
/// command-line allow (the most specific sources) never beats a user deny.
#[tokio::test]
async fn source_priority_never_decides_between_deny_and_allow() {
    for allow_source in [Session, CliFlag] {
        let p = policy(vec![
            rule("Bash(git push *)", Deny, User),
            rule("Bash(git push *)", Allow, allow_source),
        ]);
        let result = p
            .decide(&query("Bash", "git push", PermissionMode::Default))
            .await;
        let PermissionResult::Deny {
            reason: DecisionReason::Rule {
                behavior, source, ..
            },
            ..
        } = &result
        else {
            panic!("expected a rule denial, got {result:?}");
        };
        assert_eq!((*behavior, *source), (RuleBehavior::Deny, User));
    }
    // The same with the allow remembered during the session.
    let p = policy(vec![rule("Read(./secrets/**)", Deny, User)]);
    p.remember(rule("Read(./secrets/**)", Allow, Session));
    let result = p
        .decide(&query("Read", "secrets/a", PermissionMode::Bypass))
        .await;
    assert!(
        matches!(
            &result,
            PermissionResult::Deny {
                reason: DecisionReason::Rule {
                    behavior: RuleBehavior::Deny,
                    ..
                },
                ..
            }
        ),
        "got {result:?}"
    );
}
