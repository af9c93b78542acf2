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

/// A sandbox that keeps the protected paths as they were decides what a
/// word only known when it runs may change (`Policy::with_protecting_sandbox`):
/// such a word given to a command that may write no longer asks on its
/// own. A protected path written literally, a credential read (also
/// through such a word: a reader prints it) and dangerous constructs still
/// ask. Without that sandbox, nothing changes.
#[tokio::test]
async fn a_protecting_sandbox_decides_what_run_time_words_may_change() {
    let plain = policy(Vec::new());
    let protecting = policy(Vec::new()).with_protecting_sandbox();
    let auto_allowing = policy(Vec::new())
        .with_protecting_sandbox()
        .with_enforced_sandbox("bubblewrap-landlock-seccomp");
    let copy_loop = r#"for f in *.txt; do cp "$f" "$f.bak"; done"#;
    let fmt_loop = "for f in *.rs; do rustfmt $f; done";
    let safety = ("ask", "safety");
    let cases = [
        // (command, mode, without it, with it, with it and auto-allow)
        (
            copy_loop,
            "default",
            safety,
            ("ask", "unverifiable"),
            ("allow", "sandbox"),
        ),
        (
            copy_loop,
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            fmt_loop,
            "default",
            safety,
            ("ask", "unverifiable"),
            ("allow", "sandbox"),
        ),
        (
            fmt_loop,
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            fmt_loop,
            "accept-edits",
            safety,
            ("ask", "unverifiable"),
            ("allow", "sandbox"),
        ),
        (
            fmt_loop,
            "plan",
            ("deny", "safety"),
            ("deny", "mode"),
            ("deny", "mode"),
        ),
        (
            "cd \"$D\" && echo x > config",
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            "cp $(cat list) dest/",
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            "echo x > \"$OUT\"",
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            "find . -name '*.rs' -exec rustfmt {} \\;",
            "bypass",
            safety,
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        (
            "unattended-only",
            "unattended",
            ("allow", "mode"),
            ("allow", "mode"),
            ("allow", "mode"),
        ),
        // Written literally: the parser sees the protected path.
        ("echo x > .git/config", "bypass", safety, safety, safety),
        ("echo x > .git/config", "default", safety, safety, safety),
        ("cp a .riot/settings.json", "bypass", safety, safety, safety),
        (
            "cp a .riot/settings.json",
            "default",
            safety,
            safety,
            safety,
        ),
        (
            "cp \"$f\" .git/hooks/pre-commit",
            "bypass",
            safety,
            safety,
            safety,
        ),
        // Credentials are read, which no sandbox keeps as it was.
        ("cat ~/.ssh/id_rsa", "bypass", safety, safety, safety),
        ("cp .env /tmp/x", "default", safety, safety, safety),
        (
            "for f in *.txt; do cat \"$f\"; done",
            "bypass",
            safety,
            safety,
            safety,
        ),
        ("wc -l < \"$f\"", "bypass", safety, safety, safety),
        // Dangerous constructs stay dangerous.
        ("eval \"$X\"", "bypass", safety, safety, safety),
        ("sh -c \"$X\"", "bypass", safety, safety, safety),
        ("$EDITOR notes.txt", "bypass", safety, safety, safety),
        ("git -c \"$K\"=x status", "bypass", safety, safety, safety),
    ];
    let mut failures = Vec::new();
    for (command, mode, without, with, auto) in cases {
        let command = if command == "unattended-only" {
            copy_loop
        } else {
            command
        };
        let q = query("Bash", command, mode.parse().unwrap());
        for (which, policy, want) in [
            ("without", &plain, without),
            ("protecting", &protecting, with),
            ("protecting+auto-allow", &auto_allowing, auto),
        ] {
            let got = decide(policy, &q).await;
            if got != want {
                failures.push(format!(
                    "{command} in {mode} {which}: want {want:?}, got {got:?}"
                ));
            }
        }
    }
    support::assert_rows(&failures, cases.len() * 3);

    // What each one says.
    let q = query("Bash", copy_loop, PermissionMode::Bypass);
    assert_eq!(
        plain.decide_with_hook(&q, None).await,
        PermissionResult::Ask {
            reason: DecisionReason::Safety {
                detail: "`$f` is only known when it runs, so it could name a protected path".into()
            },
            message: format!(
                "Riot wants to run `{copy_loop}`. Safety check: `$f` is only known when it runs, so it could name a protected path"
            ),
        }
    );
    let q = query("Bash", copy_loop, PermissionMode::Default);
    let PermissionResult::Ask { reason, .. } = protecting.decide_with_hook(&q, None).await else {
        panic!("default mode asks without auto-allow");
    };
    assert_eq!(
        reason,
        DecisionReason::Unverifiable {
            detail: "the command uses a loop or conditional".into()
        }
    );
    let PermissionResult::Allow { reason, .. } = auto_allowing.decide_with_hook(&q, None).await
    else {
        panic!("auto-allowed");
    };
    assert_eq!(
        reason.detail(),
        "the command runs in the OS sandbox (bubblewrap-landlock-seccomp): it can write only inside the project and the sandbox's writable paths"
    );
    let q = query(
        "Bash",
        "for f in *.txt; do cat \"$f\"; done",
        PermissionMode::Bypass,
    );
    let PermissionResult::Ask { reason, .. } = protecting.decide_with_hook(&q, None).await else {
        panic!("a reader of a run-time word asks");
    };
    assert_eq!(
        reason,
        DecisionReason::Safety {
            detail: "`$f` is only known when it runs, so it could name a credential file".into()
        }
    );
}
