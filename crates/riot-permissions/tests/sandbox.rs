#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! An enforced OS sandbox with `sandbox.auto_allow` (docs/sandbox.md):
//! a command that is not read-only but raises no safety finding is
//! allowed in default, accept-edits and auto mode, with the reason kind
//! `sandbox`; rules, safety findings, plan and dont-ask work as before,
//! and a tool's own `sandbox` question (leaving the sandbox) is final in
//! every mode.

mod support;

use riot_protocol::RuleBehavior::{Allow, Ask, Deny};
use riot_protocol::RuleSource::User;
use riot_protocol::{DecisionReason, PermissionMode, PermissionResult};
use support::{decide, policy, query, rule, verdict};

#[tokio::test]
async fn an_enforced_sandbox_allows_what_raises_no_safety_finding() {
    let rules = || {
        vec![
            rule("Bash(git push *)", Deny, User),
            rule("Bash(rm *)", Ask, User),
            rule("Bash(npm run *)", Allow, User),
        ]
    };
    let plain = policy(rules());
    let sandboxed = policy(rules()).with_enforced_sandbox("bubblewrap-landlock-seccomp");
    // (A part only known when it runs is assumed to match the deny rule.)
    let cases = [
        // (command, mode, without the sandbox, with it)
        (
            "touch new.txt",
            "default",
            ("ask", "unverifiable"),
            ("allow", "sandbox"),
        ),
        (
            "cargo build",
            "accept-edits",
            ("ask", "unverifiable"),
            ("allow", "sandbox"),
        ),
        ("touch new.txt", "plan", ("deny", "mode"), ("deny", "mode")),
        (
            "touch new.txt",
            "dont-ask",
            ("deny", "unverifiable"),
            ("deny", "unverifiable"),
        ),
        (
            "touch new.txt",
            "bypass",
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        ("ls -la", "default", ("allow", "mode"), ("allow", "mode")),
        (
            "git push origin main",
            "default",
            ("deny", "rule"),
            ("deny", "rule"),
        ),
        ("rm -rf build", "default", ("ask", "rule"), ("ask", "rule")),
        (
            "npm run test",
            "default",
            ("allow", "rule"),
            ("allow", "rule"),
        ),
        (
            "echo x >> ~/.zshrc",
            "default",
            ("ask", "safety"),
            ("ask", "safety"),
        ),
        ("cat .env", "default", ("ask", "safety"), ("ask", "safety")),
        (
            "sh -c \"$(printf 'rm -rf ~')\"",
            "default",
            ("deny", "rule"),
            ("deny", "rule"),
        ),
    ];
    for (command, mode, without, with) in cases {
        let mode: PermissionMode = mode.parse().unwrap();
        let q = query("Bash", command, mode);
        assert_eq!(
            decide(&plain, &q).await,
            without,
            "{command} in {mode} without"
        );
        assert_eq!(
            decide(&sandboxed, &q).await,
            with,
            "{command} in {mode} with"
        );
    }
    let q = query("Bash", "touch new.txt", PermissionMode::Default);
    let PermissionResult::Allow { reason, .. } = sandboxed.decide_with_hook(&q, None).await else {
        panic!("allowed");
    };
    assert_eq!(
        reason.detail(),
        "the command runs in the OS sandbox (bubblewrap-landlock-seccomp): it can write only inside the project and the sandbox's writable paths"
    );
    // Only Bash runs sandboxed: another tool's command is judged as before.
    let mut q = query("Bash", "touch new.txt", PermissionMode::Default);
    q.tool_name = "Terminal".into();
    assert_eq!(decide(&sandboxed, &q).await, ("ask", "unverifiable"));
    // Files are not commands: a Write still asks in default mode.
    let q = query("Write", "a.txt", PermissionMode::Default);
    assert_eq!(decide(&sandboxed, &q).await, ("ask", "mode"));
}

#[tokio::test]
async fn leaving_the_sandbox_is_asked_in_every_mode() {
    let sandboxed = policy(vec![rule("Bash", Allow, User)])
        .with_enforced_sandbox("bubblewrap-landlock-seccomp");
    for mode in ["default", "accept-edits", "auto", "bypass", "unattended"] {
        let mut q = query("Bash", "curl https://example.com", mode.parse().unwrap());
        q.tool_verdict = PermissionResult::Ask {
            reason: DecisionReason::Sandbox {
                detail: "asks to run outside the OS sandbox: needs the network".into(),
            },
            message: "outside".into(),
        };
        assert_eq!(
            verdict(&sandboxed.decide_with_hook(&q, None).await),
            ("ask", "sandbox"),
            "{mode}"
        );
    }
    let mut q = query("Bash", "curl https://example.com", PermissionMode::Bypass);
    q.tool_verdict = PermissionResult::Ask {
        reason: DecisionReason::Sandbox { detail: "x".into() },
        message: "outside".into(),
    };
    // A deny rule still comes first.
    let denying = policy(vec![rule("Bash(curl *)", Deny, User)]);
    assert_eq!(
        verdict(&denying.decide_with_hook(&q, None).await),
        ("deny", "rule")
    );
}
