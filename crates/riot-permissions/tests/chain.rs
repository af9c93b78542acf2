#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The chain's inputs beyond rules: hook decisions, the tool's own
//! verdict, the classifier; the `permissions check` JSON.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use riot_permissions::{
    CheckReport, Classifier, ClassifierRequest, ClassifierUnavailable, ClassifierVerdict,
    HookDecision, Policy, builtin_query, nobody_can_answer,
};
use riot_protocol::RuleBehavior::{Allow, Ask, Deny};
use riot_protocol::RuleSource::User;
use riot_protocol::{
    DecisionReason, PermissionMode, PermissionPolicy, PermissionResult, RuleBehavior, RuleSource,
};
use serde_json::json;
use support::{PROJECT, policy, query, rule, verdict};

fn hook(kind: &str) -> HookDecision {
    let (hook, reason) = ("guard.sh".to_owned(), format!("hook says {kind}"));
    match kind {
        "allow" => HookDecision::Allow { hook, reason },
        "ask" => HookDecision::Ask { hook, reason },
        _ => HookDecision::Deny { hook, reason },
    }
}

#[tokio::test]
async fn hook_decisions_enter_the_chain_at_their_places() {
    let p = policy(vec![
        rule("Bash(rm *)", Ask, User),
        rule("Bash(git push *)", Deny, User),
        rule("Bash(cargo *)", Allow, User),
    ]);
    let cases = [
        // (command, mode, hook, expected)
        ("npm install", "default", "allow", ("allow", "hook")),
        ("npm install", "default", "ask", ("ask", "hook")),
        ("npm install", "bypass", "ask", ("ask", "hook")),
        ("npm install", "bypass", "deny", ("deny", "hook")),
        ("cargo build", "default", "deny", ("deny", "hook")),
        ("cargo build", "default", "ask", ("ask", "hook")),
        // A hook's allow cannot override an ask rule, a deny rule, safety.
        ("rm x", "default", "allow", ("ask", "rule")),
        ("git push", "default", "allow", ("deny", "rule")),
        ("cat .env", "default", "allow", ("ask", "safety")),
        ("echo x >> ~/.zshrc", "bypass", "allow", ("ask", "safety")),
        // An allow rule is quoted before the hook's allow (both allow).
        ("cargo build", "default", "allow", ("allow", "rule")),
        // Plan mode cannot ask: the hook's ask becomes a denial.
        ("npm install", "plan", "ask", ("deny", "hook")),
    ];
    for (cmd, mode, h, expected) in cases {
        let q = query("Bash", cmd, mode.parse().unwrap());
        let got = verdict(&p.decide_with_hook(&q, Some(&hook(h))).await);
        assert_eq!(got, expected, "{cmd} in {mode} with hook {h}");
    }
}

#[tokio::test]
async fn the_tools_own_verdict() {
    let p = policy(vec![]);
    let consent = PermissionResult::Ask {
        reason: DecisionReason::Consent {
            detail: "this tool always asks".into(),
        },
        message: "ok?".into(),
    };
    let safety = PermissionResult::Ask {
        reason: DecisionReason::Safety {
            detail: "tool-specific finding".into(),
        },
        message: "careful".into(),
    };
    let tool_deny = PermissionResult::Deny {
        reason: DecisionReason::Safety {
            detail: "refused".into(),
        },
        message: "no".into(),
    };
    let tool_allow = PermissionResult::Allow {
        reason: DecisionReason::Consent {
            detail: "tool knows this is fine".into(),
        },
        updated_input: None,
    };
    let cases = [
        (consent.clone(), "default", ("ask", "consent")),
        (consent.clone(), "bypass", ("allow", "mode")),
        (consent.clone(), "dont-ask", ("deny", "consent")),
        (safety.clone(), "bypass", ("ask", "safety")),
        (safety.clone(), "unattended", ("allow", "mode")),
        (tool_deny.clone(), "bypass", ("deny", "safety")),
        (tool_allow.clone(), "default", ("allow", "consent")),
    ];
    for (tool_verdict, mode, expected) in cases {
        let mut q = query("Bash", "npm install", mode.parse().unwrap());
        q.tool_verdict = tool_verdict.clone();
        assert_eq!(
            verdict(&p.decide(&q).await),
            expected,
            "{tool_verdict:?} in {mode}"
        );
    }
}

#[derive(Debug)]
struct FixedClassifier {
    answer: Result<ClassifierVerdict, ClassifierUnavailable>,
    calls: AtomicUsize,
}

#[async_trait]
impl Classifier for FixedClassifier {
    async fn classify(
        &self,
        request: &ClassifierRequest,
    ) -> Result<ClassifierVerdict, ClassifierUnavailable> {
        assert!(!request.input.is_empty());
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.answer.clone()
    }
}

fn classifier(answer: Result<ClassifierVerdict, ClassifierUnavailable>) -> Arc<FixedClassifier> {
    Arc::new(FixedClassifier {
        answer,
        calls: AtomicUsize::new(0),
    })
}

#[tokio::test]
async fn auto_mode_asks_the_classifier_only_what_rules_and_modes_left_open() {
    let yes = classifier(Ok(ClassifierVerdict::Allow {
        reason: "routine build".into(),
    }));
    let p = policy(vec![rule("Bash(git push *)", Deny, User)]).with_classifier(yes.clone());
    let auto = PermissionMode::Auto;
    assert_eq!(
        verdict(&p.decide(&query("Bash", "npm install", auto)).await),
        ("allow", "classifier")
    );
    assert_eq!(
        verdict(&p.decide(&query("Write", "/tmp/x", auto)).await),
        ("allow", "classifier")
    );
    assert_eq!(yes.calls.load(Ordering::SeqCst), 2);
    // Read-only calls, in-project edits, rules and safety never reach it.
    assert_eq!(
        verdict(&p.decide(&query("Bash", "ls", auto)).await),
        ("allow", "mode")
    );
    assert_eq!(
        verdict(&p.decide(&query("Write", "src/a.rs", auto)).await),
        ("allow", "mode")
    );
    assert_eq!(
        verdict(&p.decide(&query("Bash", "git push", auto)).await),
        ("deny", "rule")
    );
    assert_eq!(
        verdict(&p.decide(&query("Bash", "cat .env", auto)).await),
        ("ask", "safety")
    );
    assert_eq!(yes.calls.load(Ordering::SeqCst), 2);

    let no = classifier(Ok(ClassifierVerdict::Deny {
        reason: "deletes data".into(),
    }));
    let p = policy(vec![]).with_classifier(no);
    assert_eq!(
        verdict(&p.decide(&query("Bash", "rm -rf x", auto)).await),
        ("deny", "classifier")
    );

    let down = classifier(Err(ClassifierUnavailable("timeout".into())));
    let p = policy(vec![]).with_classifier(down);
    assert_eq!(
        verdict(&p.decide(&query("Bash", "rm -rf x", auto)).await),
        ("ask", "classifier")
    );

    // A tool with no classifier input always needs a person.
    let yes = classifier(Ok(ClassifierVerdict::Allow {
        reason: "ok".into(),
    }));
    let p = policy(vec![]).with_classifier(yes.clone());
    let mut q = query("Bash", "npm install", auto);
    q.classifier_input = None;
    assert_eq!(verdict(&p.decide(&q).await), ("ask", "classifier"));
    assert_eq!(yes.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn nobody_answering_turns_an_ask_into_a_denial_that_remembers_the_question() {
    let p = policy(vec![]);
    let asked = p
        .decide(&query("Bash", "echo x >> ~/.zshrc", PermissionMode::Bypass))
        .await;
    let result = nobody_can_answer(asked, "the question timed out after 60 s");
    let PermissionResult::Deny { reason, message } = result else {
        panic!("expected a denial, got {result:?}");
    };
    let DecisionReason::NoAnswer { asked, .. } = &reason else {
        panic!("expected no_answer, got {reason:?}");
    };
    assert_eq!(asked.kind(), "safety");
    assert!(message.contains("timed out"), "{message}");
    // Allow and Deny pass through unchanged.
    let allowed = p
        .decide(&query("Bash", "ls", PermissionMode::Default))
        .await;
    assert_eq!(nobody_can_answer(allowed.clone(), "x"), allowed);
}

/// The report `riot permissions check` prints for a built-in tool's call.
async fn check(
    policy: &Policy,
    tool_name: &str,
    input: &serde_json::Value,
    cwd: &Path,
    mode: PermissionMode,
) -> CheckReport {
    let query = builtin_query(tool_name, input, cwd, mode);
    CheckReport {
        result: policy.decide(&query).await,
    }
}

#[tokio::test]
async fn permissions_check_prints_the_interfaces_json() {
    let p = policy(vec![rule("Bash(git push *)", Deny, User)]);
    let cwd = Path::new(PROJECT);
    let report = check(
        &p,
        "Bash",
        &json!({"command": "git push"}),
        cwd,
        PermissionMode::Default,
    )
    .await;
    let out = report.to_json();
    assert_eq!(out["decision"], "deny");
    assert_eq!(out["reason"]["kind"], "rule");
    assert!(
        out["reason"]["detail"]
            .as_str()
            .unwrap()
            .contains("Bash(git push *)")
    );
    assert!(out["message"].as_str().unwrap().contains("denied"));
    assert_eq!(out.as_object().unwrap().len(), 3);

    let report = check(
        &p,
        "Bash",
        &json!({"command": "rm -rf build"}),
        cwd,
        PermissionMode::Default,
    )
    .await;
    assert_eq!(report.to_json()["decision"], "ask");
    assert_eq!(report.to_json()["reason"]["kind"], "unverifiable");

    let report = check(
        &p,
        "Read",
        &json!({"file_path": ".env"}),
        cwd,
        PermissionMode::Bypass,
    )
    .await;
    assert_eq!(report.decision(), "ask");
    assert_eq!(report.to_json()["reason"]["kind"], "safety");

    // dont-ask reports the chain's final word: a denial.
    let report = check(
        &p,
        "Write",
        &json!({"file_path": "a.rs", "content": ""}),
        cwd,
        PermissionMode::DontAsk,
    )
    .await;
    assert_eq!(report.to_json()["decision"], "deny");
    assert_eq!(report.to_json()["reason"]["kind"], "mode");
}

/// "Allow always" offers a rule only when that rule would stick, and the
/// rule it offers really silences the question.
#[tokio::test]
async fn allow_always_offers_a_rule_that_sticks_or_none() {
    use riot_permissions::suggested_rule;
    use riot_protocol::{PermissionRule, RulePattern};

    let project = Path::new(PROJECT);
    let cases = [
        ("Bash", "npm install", Some("Bash(npm install)")),
        ("Bash", "timeout 30 npm test", Some("Bash(npm test)")),
        ("Write", "src/a.rs", Some("Edit(./src/a.rs)")),
        ("Write", "/tmp/report.txt", Some("Edit(/tmp/report.txt)")),
        (
            "WebFetch",
            "https://docs.rs/serde",
            Some("WebFetch(domain:docs.rs)"),
        ),
        ("mcp__db__query", "", Some("mcp__db__query")),
        // Compound or unverifiable lines: no rule would match their parts.
        ("Bash", "npm install; rm x", None),
        ("Bash", "echo $HOME > out", None),
        // Safety findings cannot be silenced by an allow rule.
        ("Bash", "echo x >> ~/.zshrc", None),
        ("Write", ".git/config", None),
    ];
    for (tool, arg, expected) in cases {
        let p = policy(vec![]);
        let q = query(tool, arg, PermissionMode::Default);
        let asked = p.decide(&q).await;
        assert_eq!(verdict(&asked).0, "ask", "{tool} {arg}");
        let offered = suggested_rule(&asked, &q, project);
        assert_eq!(offered.as_deref(), expected, "{tool} {arg}");
        if let Some(text) = offered {
            p.remember(PermissionRule {
                pattern: RulePattern::parse(&text).unwrap(),
                behavior: RuleBehavior::Allow,
                source: RuleSource::Session,
            });
            assert_eq!(
                verdict(&p.decide(&q).await),
                ("allow", "rule"),
                "{tool} {arg} after {text}"
            );
        }
    }
    // A user's ask rule wins over any allow, so none is offered.
    let p = policy(vec![rule("Bash(npm *)", Ask, User)]);
    let q = query("Bash", "npm install", PermissionMode::Default);
    let asked = p.decide(&q).await;
    assert_eq!(verdict(&asked), ("ask", "rule"));
    assert_eq!(suggested_rule(&asked, &q, project), None);
}

/// The person's answer becomes the result; "always" sticks; nobody
/// answering is a denial.
#[tokio::test]
async fn answers_resolve_asks_and_always_answers_stick() {
    use riot_permissions::resolve_answer;
    use riot_protocol::PermissionOutcome;

    let p = policy(vec![]);
    let q = query("Bash", "npm install", PermissionMode::Default);
    let asked = p.decide(&q).await;
    assert_eq!(verdict(&asked), ("ask", "unverifiable"));

    for (outcome, expected) in [
        (PermissionOutcome::TimedOut, ("deny", "no_answer")),
        (PermissionOutcome::Cancelled, ("deny", "no_answer")),
        (
            PermissionOutcome::RejectOnce {
                feedback: Some("use pnpm".into()),
            },
            ("deny", "user"),
        ),
        (PermissionOutcome::AllowOnce, ("allow", "user")),
    ] {
        assert_eq!(
            verdict(&resolve_answer(&p, &asked, &outcome)),
            expected,
            "{outcome:?}"
        );
    }
    // Nothing was remembered by the once-answers.
    assert_eq!(verdict(&p.decide(&q).await), ("ask", "unverifiable"));

    let always = PermissionOutcome::AllowAlways {
        rule: "Bash(npm install)".into(),
    };
    assert_eq!(
        verdict(&resolve_answer(&p, &asked, &always)),
        ("allow", "user")
    );
    assert_eq!(verdict(&p.decide(&q).await), ("allow", "rule"));

    let q = query("Bash", "git push", PermissionMode::Bypass);
    let never = PermissionOutcome::RejectAlways {
        rule: "Bash(git push *)".into(),
    };
    let asked = p
        .decide(&query("Bash", "git push", PermissionMode::Default))
        .await;
    assert_eq!(
        verdict(&resolve_answer(&p, &asked, &never)),
        ("deny", "user")
    );
    assert_eq!(
        verdict(&p.decide(&q).await),
        ("deny", "rule"),
        "even in bypass"
    );

    // A result that was not a question passes through.
    let allowed = p
        .decide(&query("Bash", "ls", PermissionMode::Default))
        .await;
    assert_eq!(
        resolve_answer(&p, &allowed, &PermissionOutcome::TimedOut),
        allowed
    );
}

/// §9.5: three classifier denials in a row, or twenty in a session, hand
/// the decision back to a person.
#[tokio::test]
async fn repeated_classifier_denials_hand_control_back_to_the_person() {
    use riot_permissions::{MAX_DENIALS_IN_A_ROW, MAX_DENIALS_PER_SESSION};

    let no = classifier(Ok(ClassifierVerdict::Deny {
        reason: "risky".into(),
    }));
    let p = policy(vec![]).with_classifier(no.clone());
    let q = query("Bash", "npm install", PermissionMode::Auto);
    for _ in 0..MAX_DENIALS_IN_A_ROW {
        assert_eq!(verdict(&p.decide(&q).await), ("deny", "classifier"));
    }
    let paused = p.decide(&q).await;
    assert_eq!(verdict(&paused), ("ask", "classifier"));
    let PermissionResult::Ask { reason, .. } = &paused else {
        unreachable!()
    };
    assert!(reason.detail().contains("paused"), "{}", reason.detail());
    assert_eq!(
        no.calls.load(Ordering::SeqCst),
        MAX_DENIALS_IN_A_ROW as usize
    );

    // The person answering resets the streak, not the session total.
    let mut denied = MAX_DENIALS_IN_A_ROW;
    while denied < MAX_DENIALS_PER_SESSION {
        p.reset_classifier_streak();
        assert_eq!(verdict(&p.decide(&q).await), ("deny", "classifier"));
        denied += 1;
    }
    p.reset_classifier_streak();
    assert_eq!(verdict(&p.decide(&q).await), ("ask", "classifier"));
}

/// WebFetch's own questions (docs/web.md): a local address is asked in
/// every mode unless an allow rule names the host; a metadata address is
/// refused whatever the rules; a public host's first fetch is asked in the
/// default mode with the full URL.
#[tokio::test]
async fn web_fetch_local_addresses_are_asked_in_every_mode_unless_a_rule_names_the_host() {
    let local = PermissionResult::Ask {
        reason: DecisionReason::Safety {
            detail: "127.0.0.1 resolves to 127.0.0.1, on this machine or its private network"
                .into(),
        },
        message: "Riot wants to fetch http://127.0.0.1:8080/: …".into(),
    };
    let metadata = PermissionResult::Deny {
        reason: DecisionReason::Safety {
            detail: "a link-local or cloud-metadata address".into(),
        },
        message: "refused".into(),
    };
    let named = policy(vec![rule("WebFetch(domain:127.0.0.1)", Allow, User)]);
    let other_host = policy(vec![rule("WebFetch(domain:docs.rs)", Allow, User)]);
    let whole_tool = policy(vec![rule("WebFetch", Allow, User)]);
    let url_glob = policy(vec![rule("WebFetch(http://127.0.0.1*)", Allow, User)]);
    let with_ask = policy(vec![
        rule("WebFetch(domain:127.0.0.1)", Allow, User),
        rule("WebFetch(domain:127.0.0.1)", Ask, User),
    ]);
    let none = policy(vec![]);
    let url = "http://127.0.0.1:8080/status";
    let cases = [
        (&none, &local, "default", ("ask", "safety")),
        (&none, &local, "bypass", ("ask", "safety")),
        (&none, &local, "accept-edits", ("ask", "safety")),
        (&none, &local, "dont-ask", ("deny", "safety")),
        (&other_host, &local, "bypass", ("ask", "safety")),
        (&whole_tool, &local, "default", ("ask", "safety")),
        (&url_glob, &local, "default", ("ask", "safety")),
        (&named, &local, "default", ("allow", "rule")),
        (&named, &local, "bypass", ("allow", "mode")),
        (&with_ask, &local, "default", ("ask", "rule")),
        (&named, &metadata, "default", ("deny", "safety")),
        (&named, &metadata, "bypass", ("deny", "safety")),
        (&whole_tool, &metadata, "unattended", ("deny", "safety")),
    ];
    for (p, tool_verdict, mode, expected) in cases {
        let mut q = query("WebFetch", url, mode.parse().unwrap());
        q.tool_verdict = tool_verdict.clone();
        assert_eq!(
            verdict(&p.decide(&q).await),
            expected,
            "{tool_verdict:?} in {mode} with {:?}",
            p
        );
    }
}

#[tokio::test]
async fn a_public_hosts_first_fetch_is_asked_with_the_full_url_then_allowed_by_its_domain_rule() {
    let url = "https://docs.rs/serde/latest/serde/?search=flatten";
    let q = query("WebFetch", url, PermissionMode::Default);
    let PermissionResult::Ask { message, .. } = policy(vec![]).decide(&q).await else {
        panic!("a first fetch is asked");
    };
    assert!(message.contains(url), "{message}");
    let allowed = policy(vec![rule("WebFetch(domain:docs.rs)", Allow, User)]);
    assert_eq!(
        decide_kind(&allowed, url, "default").await,
        ("allow", "rule")
    );
    let sub = policy(vec![rule("WebFetch(domain:*.github.com)", Allow, User)]);
    assert_eq!(
        decide_kind(&sub, "https://api.github.com/x", "default").await,
        ("allow", "rule")
    );
    assert_eq!(
        decide_kind(&sub, "https://github.com/x", "default").await,
        ("ask", "mode")
    );
}

async fn decide_kind(p: &Policy, url: &str, mode: &str) -> (&'static str, &'static str) {
    verdict(
        &p.decide(&query("WebFetch", url, mode.parse().unwrap()))
            .await,
    )
}

#[tokio::test]
async fn bash_rules_judge_what_the_terminal_tool_starts_and_types() {
    let p = policy(vec![
        rule("Bash(git push *)", Deny, User),
        rule("Bash(npm run dev)", Allow, User),
    ]);
    let terminal = |action: &str, text: &str| {
        let input = match action {
            "open" => json!({"action": "open", "name": "t", "command": text}),
            "write" => json!({"action": "write", "name": "t", "input": text}),
            other => json!({"action": other, "name": "t"}),
        };
        builtin_query(
            "Terminal",
            &input,
            Path::new(PROJECT),
            PermissionMode::Default,
        )
    };
    let cases = [
        ("open", "npm run dev", ("allow", "rule")),
        ("open", "git push origin main", ("deny", "rule")),
        ("write", "git push --force<Enter>", ("deny", "rule")),
        // No rule: asked as Bash would be (an interpreter runs anything).
        ("open", "python3 -q", ("ask", "unverifiable")),
        ("write", "cat .env<Enter>", ("ask", "safety")),
        // Looking is allowed.
        ("read", "", ("allow", "mode")),
        ("wait", "", ("allow", "mode")),
    ];
    for (action, text, expected) in cases {
        let got = verdict(&p.decide(&terminal(action, text)).await);
        assert_eq!(got, expected, "Terminal {action} {text:?}");
    }
}

/// The Browser tool's navigation is decided on the URL's host with
/// `Browser(domain:…)` rules, like WebFetch; reading the page is read-only.
#[tokio::test]
async fn browser_navigation_follows_domain_rules_and_reading_the_page_is_read_only() {
    let browse = |action: &str, url: &str| {
        riot_permissions::builtin_query(
            "Browser",
            &json!({"action": action, "url": url}),
            Path::new(PROJECT),
            PermissionMode::Default,
        )
    };
    let url = "https://docs.rs/serde/";
    let p = policy(vec![]);
    assert_eq!(
        verdict(&p.decide(&browse("navigate", url)).await),
        ("ask", "mode")
    );
    assert_eq!(
        verdict(&p.decide(&browse("snapshot", url)).await).0,
        "allow"
    );
    assert_eq!(
        verdict(&p.decide(&browse("click", url)).await),
        ("ask", "mode")
    );
    let allowed = policy(vec![rule("Browser(domain:docs.rs)", Allow, User)]);
    assert_eq!(
        verdict(&allowed.decide(&browse("navigate", url)).await),
        ("allow", "rule")
    );
    let denied = policy(vec![rule("Browser(domain:docs.rs)", Deny, User)]);
    assert_eq!(
        verdict(&denied.decide(&browse("navigate", url)).await),
        ("deny", "rule")
    );
    // A WebFetch rule does not answer for the browser.
    let web = policy(vec![rule("WebFetch(domain:docs.rs)", Allow, User)]);
    assert_eq!(
        verdict(&web.decide(&browse("navigate", url)).await),
        ("ask", "mode")
    );
}
