//! `riot permissions check` through the real binary (docs/interfaces.md): the
//! decision and reason kind of the chain with the real tools' facts, the
//! JSON shape, rules from flags and settings, and usage errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use serde_json::{Value, json};
use support::{World, run};

async fn check(
    world: &World,
    extra: &[&str],
    tool: &str,
    input: Value,
) -> (Option<i32>, Value, String) {
    let input = input.to_string();
    let mut args = vec![
        "permissions",
        "check",
        "--tool",
        tool,
        "--input",
        input.as_str(),
    ];
    args.extend_from_slice(extra);
    let out = run(world.bare(&args)).await;
    let value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    (out.code, value, out.stderr)
}

#[tokio::test]
async fn decisions_and_reasons_match_the_design() {
    let world = World::new();
    let cases: Vec<(&[&str], &str, Value, &str, &str)> = vec![
        (&[], "Bash", json!({"command": "ls -la"}), "allow", "mode"),
        (
            &[],
            "Bash",
            json!({"command": "git log --oneline"}),
            "allow",
            "mode",
        ),
        (
            &[],
            "Bash",
            json!({"command": "rm -rf build"}),
            "ask",
            "unverifiable",
        ),
        (
            &[],
            "Bash",
            json!({"command": "sed -i s/a/b/ f"}),
            "ask",
            "unverifiable",
        ),
        (
            &[],
            "Bash",
            json!({"command": "echo x >> ~/.zshrc"}),
            "ask",
            "safety",
        ),
        (
            &["--permission-mode", "bypass"],
            "Bash",
            json!({"command": "echo x >> ~/.zshrc"}),
            "ask",
            "safety",
        ),
        (
            &["--permission-mode", "bypass"],
            "Bash",
            json!({"command": "echo $HOME"}),
            "allow",
            "mode",
        ),
        (&[], "Read", json!({"file_path": ".env"}), "ask", "safety"),
        (
            &[],
            "Read",
            json!({"file_path": "src/main.rs"}),
            "allow",
            "mode",
        ),
        (
            &[],
            "Write",
            json!({"file_path": "a.txt", "content": "x"}),
            "ask",
            "mode",
        ),
        (
            &["--permission-mode", "accept-edits"],
            "Write",
            json!({"file_path": "a.txt", "content": "x"}),
            "allow",
            "mode",
        ),
        (
            &["--permission-mode", "plan"],
            "Write",
            json!({"file_path": "a.txt", "content": "x"}),
            "deny",
            "mode",
        ),
        (
            &["--allow", "Bash(npm run test *)"],
            "Bash",
            json!({"command": "npm run test -- --watch"}),
            "allow",
            "rule",
        ),
        (
            &["--allow", "Bash(npm run test *)"],
            "Bash",
            json!({"command": "npm run test; rm -rf /"}),
            "ask",
            "unverifiable",
        ),
        (
            &["--deny", "Bash(git push *)", "--permission-mode", "bypass"],
            "Bash",
            json!({"command": "git push origin main"}),
            "deny",
            "rule",
        ),
    ];
    for (flags, tool, input, decision, kind) in cases {
        let (code, out, stderr) = check(&world, flags, tool, input.clone()).await;
        assert_eq!(code, Some(0), "{tool} {input} {flags:?}: {stderr}");
        assert_eq!(
            out["decision"],
            json!(decision),
            "{tool} {input} {flags:?}: {out}"
        );
        assert_eq!(
            out["reason"]["kind"],
            json!(kind),
            "{tool} {input} {flags:?}: {out}"
        );
        assert!(
            out["reason"]["detail"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{out}"
        );
        assert!(
            out["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{out}"
        );
        let keys: Vec<&str> = out
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, vec!["decision", "reason", "message"]);
    }
}

#[tokio::test]
async fn a_deny_rule_in_user_settings_holds_even_in_bypass() {
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"permissions": {"deny": ["Read(./secrets/**)"]}}"#,
    )
    .unwrap();
    let (code, out, _) = check(
        &world,
        &["--permission-mode", "bypass"],
        "Read",
        json!({"file_path": "secrets/token.txt"}),
    )
    .await;
    assert_eq!(code, Some(0));
    assert_eq!(out["decision"], json!("deny"), "{out}");
    assert_eq!(out["reason"]["kind"], json!("rule"), "{out}");
}

#[tokio::test]
async fn bad_input_unknown_tools_and_broken_settings_are_usage_errors() {
    let world = World::new();
    let (code, _, stderr) = check(&world, &[], "Read", json!({"path": "a"})).await;
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("file_path"),
        "the schema hint names the field: {stderr}"
    );

    let (code, _, stderr) = check(&world, &[], "Frobnicate", json!({})).await;
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("built-in tools: Read, Write, Edit"),
        "{stderr}"
    );

    std::fs::write(
        world.home.path().join("settings.json"),
        "{\n  \"model\": oops\n}",
    )
    .unwrap();
    let (code, _, stderr) = check(&world, &[], "Read", json!({"file_path": "a"})).await;
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("settings.json:2:"),
        "which file and line: {stderr}"
    );
}

/// The escapes an outside attack found in bypass mode, on a real disk: the
/// globs are expanded by looking at the project, `$RIOT_HOME` is the
/// effective one, and a deny rule holds against other spellings.
#[tokio::test]
async fn bypass_holds_against_the_reported_escapes_on_a_real_disk() {
    let world = World::new();
    let root = world.project.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/description"), "x").unwrap();
    std::fs::write(root.join(".git/config"), "[core]").unwrap();
    std::fs::write(root.join(".env"), "API_KEY=not-a-real-key").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
    let bypass = ["--permission-mode", "bypass"];
    for (command, because) in [
        ("echo INJECTED > .gi[t]/description", ".git/description"),
        ("echo '[core]' >> .g*/config", ".git/config"),
        (
            "cp settings.json .riot/ && cp settings.json $RIOT_HOME/settings.json",
            ".riot",
        ),
        (
            "cp settings.json $RIOT_HOME/settings.json",
            "Riot's own configuration",
        ),
        ("cat $RIOT_HOME/credentials.json", "API keys"),
        (
            "git -c core.fsmonitor=\"touch PWNED; false\" status",
            "core.fsmonitor",
        ),
        ("echo x > ~/.config/git/config", ".config/git"),
        ("grep -r API_KEY .", ".env"),
        ("rg -uu API_KEY", ".env"),
    ] {
        let (code, out, stderr) = check(&world, &bypass, "Bash", json!({"command": command})).await;
        assert_eq!(code, Some(0), "{command}: {stderr}");
        assert_eq!(out["decision"], json!("ask"), "{command}: {out}");
        assert_eq!(out["reason"]["kind"], json!("safety"), "{command}: {out}");
        let detail = out["reason"]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(because), "{command}: {detail}");
    }
    // Nothing protected is reached: bypass allows.
    for command in ["echo x > src/*.rs", "grep -rn main src"] {
        let (_, out, _) = check(&world, &bypass, "Bash", json!({"command": command})).await;
        assert_eq!(out["decision"], json!("allow"), "{command}: {out}");
    }
    let deny = ["--deny", "Bash(rm *)", "--permission-mode", "bypass"];
    for command in [
        "/bin/rm -rf src",
        "$'\\x72\\x6d' -rf src",
        "bash -c 'rm -rf src'",
        "busybox rm -rf src",
        "x=rm; $x -rf src",
        "find . -exec rm -rf {} +",
        "watch rm -rf src",
    ] {
        let (_, out, _) = check(&world, &deny, "Bash", json!({"command": command})).await;
        assert_eq!(out["decision"], json!("deny"), "{command}: {out}");
        assert_eq!(out["reason"]["kind"], json!("rule"), "{command}: {out}");
    }
    // Nothing was run: the checks only judged.
    assert_eq!(
        std::fs::read_to_string(root.join(".git/description")).unwrap(),
        "x"
    );
    assert!(root.join("src/main.rs").exists());
}
