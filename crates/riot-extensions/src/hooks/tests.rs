#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests write real hook scripts and run them

use std::path::Path;
use std::sync::Arc;

use riot_core::{StopHooks, StopVerdict};
use riot_protocol::{
    HookDecisionKind, Message, MessageId, ToolCall, ToolCallResult, ToolHooks, ToolResultContent,
    ToolUseId, UserBlock, UserMessage,
};
use riot_runtime::RealProcessRunner;
use serde_json::{Value, json};

use super::*;
use riot_config::{self as config, Layer};

fn groups(value: Value) -> Vec<HookGroup> {
    parse_hooks(Path::new("/p/.riot/hooks.json"), &value).unwrap()
}

#[test]
fn both_file_shapes_parse_to_the_same_hooks() {
    let object = r#"{"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "./check.sh", "timeout": 5}]}]}"#;
    let wrapped = format!(r#"{{"description": "x", "hooks": {object}}}"#);
    for text in [object.to_owned(), wrapped] {
        let g = parse_hooks_file(Path::new("/p/.riot/hooks.json"), &text).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].event, HookEvent::PreToolUse);
        assert_eq!(
            g[0].hooks,
            vec![CommandHook {
                command: "./check.sh".into(),
                timeout_ms: 5_000
            }]
        );
        assert!(g[0].matcher.matches("Bash"));
        assert!(!g[0].matcher.matches("Read"));
    }
}

#[test]
fn a_settings_files_hooks_key_is_read_with_the_default_timeout() {
    let file = config::parse_settings(
        Path::new("/home/.riot/settings.json"),
        Layer::User,
        r#"{"model": "m", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    let mut config = HookConfig::default();
    config
        .add(&file.path, file.json.get("hooks").unwrap())
        .unwrap();
    assert!(config.has(HookEvent::Stop));
    assert_eq!(
        config.matching(HookEvent::Stop, None)[0].timeout_ms,
        DEFAULT_TIMEOUT_SECS * 1000
    );
}

#[test]
fn matcher_forms() {
    let m = |s: &str| Matcher::parse(s).unwrap();
    assert!(m("").matches("Bash") && m("*").matches("Write"));
    assert!(m("Edit|Write").matches("Write"));
    assert!(!m("Edit|Write").matches("MultiEdit"), "names are exact");
    assert!(m("mcp__.*").matches("mcp__github__create_issue"));
    assert!(!m("mcp__.*").matches("Bash"));
    assert!(!m("Bas").matches("Bash"), "a name is not a prefix");
    assert!(Matcher::parse("(unclosed").is_err());
}

#[test]
fn duplicates_run_once_and_unmatched_groups_do_not_run() {
    let config = HookConfig {
        groups: groups(json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]},
            {"matcher": "Read", "hooks": [{"type": "command", "command": "c"}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "d"}]}]
        })),
        skipped: Vec::new(),
    };
    let commands: Vec<String> = config
        .matching(HookEvent::PreToolUse, Some("Bash"))
        .into_iter()
        .map(|h| h.command)
        .collect();
    assert_eq!(commands, ["a", "b"]);
}

#[test]
fn bad_json_names_the_file_and_line() {
    let err = parse_hooks_file(
        Path::new("/p/.riot/hooks.json"),
        "{\n  \"PreToolUse\": [\n    {\"matcher\": \"Bash\",,}\n  ]\n}",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("/p/.riot/hooks.json:3:"), "{text}");
}

#[test]
fn a_wrong_shape_names_the_key() {
    let err = parse_hooks(
        Path::new("/p/settings.json"),
        &json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("/p/settings.json") && text.contains("hooks.PreToolUse[0].hooks[0].command"),
        "{text}"
    );
    let err = parse_hooks(
        Path::new("/p/s.json"),
        &json!({"PreToolUse": [{"matcher": "(", "hooks": []}]}),
    )
    .unwrap_err();
    assert!(err.to_string().contains("matcher"), "{err}");
}

/// A temporary project with hook scripts.
struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> std::path::PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// Writes an executable script and returns the command that runs it.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.path().join(name);
        std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("./{name}")
    }

    fn runner(&self, hooks: Value) -> HookRunner {
        let config = HookConfig {
            groups: parse_hooks(&self.path().join("hooks.json"), &hooks).unwrap(),
            skipped: Vec::new(),
        };
        HookRunner::new(
            config,
            Arc::new(RealProcessRunner::new()),
            self.path(),
            // HOME stands in for a model key: it is surely set in the test process.
            vec!["HOME".into()],
            "s-1",
        )
    }
}

fn on(event: &str, matcher: &str, command: &str) -> Value {
    json!({ event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 10}]}] })
}

fn bash_call(command: &str) -> ToolCall {
    ToolCall {
        id: ToolUseId::new("t1"),
        name: "Bash".into(),
        input: json!({"command": command}),
    }
}

#[tokio::test]
async fn exit_2_denies_with_stderr_as_the_reason() {
    let dir = Dir::new();
    let cmd = dir.script(
        "block.sh",
        "input=$(cat)\necho \"$input\" > seen.json\necho 'no pushing on Fridays' >&2\nexit 2",
    );
    let runner = dir.runner(on("PreToolUse", "Bash", &cmd));
    let verdict = runner.pre_tool_use(&bash_call("git push")).await;
    let permission = verdict.permission.unwrap();
    assert_eq!(permission.decision, HookDecisionKind::Deny);
    assert_eq!(permission.reason, "no pushing on Fridays");
    assert_eq!(permission.hook, cmd, "the reason names the hook");
    // The hook read its event from stdin.
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "Bash");
    assert_eq!(seen["tool_input"]["command"], "git push");
    assert_eq!(seen["session_id"], "s-1");
    assert_eq!(seen["cwd"], dir.path().display().to_string());
}

#[tokio::test]
async fn a_hook_that_does_not_match_does_not_run() {
    let dir = Dir::new();
    let cmd = dir.script("block.sh", "touch ran\nexit 2");
    let runner = dir.runner(on("PreToolUse", "Write|Edit", &cmd));
    let verdict = runner.pre_tool_use(&bash_call("ls")).await;
    assert_eq!(verdict, HookVerdict::default());
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn json_output_carries_decision_updated_input_and_context() {
    let dir = Dir::new();
    let cmd = dir.script(
        "json.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check the branch", "updatedInput": {"command": "git status"}, "additionalContext": "the main branch is protected"}}'"#,
    );
    let runner = dir.runner(on("PreToolUse", "*", &cmd));
    let verdict = runner.pre_tool_use(&bash_call("git push")).await;
    let permission = verdict.permission.unwrap();
    assert_eq!(permission.decision, HookDecisionKind::Ask);
    assert_eq!(permission.reason, "check the branch");
    assert_eq!(
        verdict.updated_input,
        Some(json!({"command": "git status"}))
    );
    assert_eq!(
        verdict.additional_context.as_deref(),
        Some("the main branch is protected")
    );
}

#[tokio::test]
async fn deny_beats_allow_across_hooks() {
    let dir = Dir::new();
    let allow = dir.script(
        "allow.sh",
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "fine"}}'"#,
    );
    let deny = dir.script(
        "deny.sh",
        r#"echo '{"decision": "block", "reason": "not this one"}'"#,
    );
    let runner = dir.runner(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": allow}, {"type": "command", "command": deny}]}]}));
    let permission = runner
        .pre_tool_use(&bash_call("ls"))
        .await
        .permission
        .unwrap();
    assert_eq!(permission.decision, HookDecisionKind::Deny);
    assert_eq!(permission.reason, "not this one");
}

#[tokio::test]
async fn other_exit_codes_crashes_and_timeouts_have_no_opinion() {
    let dir = Dir::new();
    let fail = dir.script("fail.sh", "echo 'oops' >&2\nexit 1");
    let crash = dir.script("crash.sh", "kill -SEGV $$");
    let hang = dir.script("hang.sh", "sleep 30");
    let runner = dir.runner(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": fail},
        {"type": "command", "command": crash},
        {"type": "command", "command": hang, "timeout": 0.3},
        {"type": "command", "command": "no-such-program-riot-test"}
    ]}]}));
    let runs = runner
        .run(HookEvent::PreToolUse, Some("Bash"), Map::new())
        .await;
    assert_eq!(runs.len(), 4);
    for run in &runs {
        assert_eq!(run.outcome, HookOutcome::NoOpinion, "{}", run.command);
    }
    assert_eq!(
        runner.pre_tool_use(&bash_call("ls")).await,
        HookVerdict::default()
    );
}

#[tokio::test]
async fn model_keys_are_scrubbed_and_the_project_dir_is_set() {
    let dir = Dir::new();
    let cmd = dir.script(
        "env.sh",
        r#"echo "key=${HOME:-unset} dir=$RIOT_PROJECT_DIR pwd=$(pwd)""#,
    );
    let runner = dir.runner(on("UserPromptSubmit", "", &cmd));
    assert!(std::env::var_os("HOME").is_some());
    let runs = runner
        .run(HookEvent::UserPromptSubmit, None, Map::new())
        .await;
    let HookOutcome::Text(text) = &runs[0].outcome else {
        panic!("{:?}", runs[0].outcome);
    };
    let root = dir.path().display().to_string();
    assert_eq!(text, &format!("key=unset dir={root} pwd={root}"));
}

#[tokio::test]
async fn post_tool_use_block_and_context_are_text_for_the_model() {
    let dir = Dir::new();
    let ctx = dir.script(
        "ctx.sh",
        r#"input=$(cat)
case "$input" in *'"is_error":false'*) ;; *) exit 1;; esac
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted with rustfmt"}}'"#,
    );
    let blk = dir.script("blk.sh", "echo 'lint failed: unused import' >&2\nexit 2");
    let runner = dir.runner(json!({"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": ctx}, {"type": "command", "command": blk}]}]}));
    let result = ToolCallResult {
        tool_use_id: ToolUseId::new("t1"),
        content: vec![ToolResultContent::text("ok")],
        is_error: false,
        ui: None,
        side_messages: Vec::new(),
    };
    let text = runner
        .post_tool_use(&bash_call("ls"), &result)
        .await
        .unwrap();
    assert_eq!(
        text,
        "A PostToolUse hook reported: lint failed: unused import\n\nformatted with rustfmt"
    );
}

#[tokio::test]
async fn stop_hook_block_continues_and_sees_whether_it_is_active() {
    let dir = Dir::new();
    let cmd = dir.script(
        "stop.sh",
        r#"input=$(cat)
case "$input" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision": "block", "reason": "run the tests first"}'"#,
    );
    let runner = dir.runner(on("Stop", "", &cmd));
    let person = Message::user_text(MessageId::new("m1"), "fix it");
    assert_eq!(
        runner.on_stop(std::slice::from_ref(&person)).await,
        StopVerdict::Continue {
            reason: "run the tests first".into()
        }
    );
    let hook_feedback = Message::User(UserMessage {
        id: MessageId::new("m2"),
        content: vec![UserBlock::Text {
            text: "run the tests first".into(),
        }],
        origin: MessageOrigin::Hook,
    });
    assert_eq!(
        runner.on_stop(&[person, hook_feedback]).await,
        StopVerdict::Allow
    );
}

#[tokio::test]
async fn user_prompt_submit_blocks_or_adds_context_and_session_start_adds_context() {
    let dir = Dir::new();
    let guard = dir.script(
        "guard.sh",
        r#"input=$(cat)
case "$input" in *password*) echo 'prompts must not contain secrets' >&2; exit 2;; esac
echo "today's sprint: hooks""#,
    );
    let start = dir.script("start.sh", "echo 'branch: main'");
    let mut hooks = on("UserPromptSubmit", "", &guard);
    hooks["SessionStart"] =
        json!([{"matcher": "startup", "hooks": [{"type": "command", "command": start}]}]);
    let runner = dir.runner(hooks);
    assert_eq!(
        runner.user_prompt_submit("my password is hunter2").await,
        PromptVerdict::Block {
            reason: "prompts must not contain secrets".into()
        }
    );
    assert_eq!(
        runner.user_prompt_submit("plan the week").await,
        PromptVerdict::Context(vec!["today's sprint: hooks".into()])
    );
    assert_eq!(runner.session_start("startup").await, vec!["branch: main"]);
    assert!(runner.session_start("resume").await.is_empty());
}

#[tokio::test]
async fn claude_code_settings_hooks_load_with_the_trust_rule_and_say_what_was_skipped() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let claude_file = project.path().join(".claude/settings.json");
    std::fs::create_dir_all(claude_file.parent().unwrap()).unwrap();
    std::fs::write(
        &claude_file,
        json!({
            "hooks": {
                "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [
                    {"type": "command", "command": "npx prettier --write ."},
                    {"type": "prompt", "prompt": "Check the edit"}
                ]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
            }
        })
        .to_string(),
    )
    .unwrap();
    let riot_file = project.path().join(".riot/settings.json");
    std::fs::create_dir_all(riot_file.parent().unwrap()).unwrap();
    std::fs::write(
        &riot_file,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./stop.sh"}]}]}}"#,
    )
    .unwrap();
    let fs = riot_runtime::RealFs;
    let settings = config::read_settings(&fs, home.path(), None, project.path())
        .await
        .unwrap();

    let mut ignored = Vec::new();
    let loaded = load(
        &fs,
        home.path(),
        project.path(),
        &settings,
        true,
        &mut ignored,
    )
    .await
    .unwrap();
    assert!(ignored.is_empty());
    let groups: Vec<(HookEvent, Vec<String>, &Path)> = loaded
        .groups
        .iter()
        .map(|g| {
            (
                g.event,
                g.hooks.iter().map(|h| h.command.clone()).collect(),
                g.source.as_path(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![
            (
                HookEvent::PostToolUse,
                vec!["npx prettier --write .".to_owned()],
                claude_file.as_path()
            ),
            (
                HookEvent::Stop,
                vec!["./stop.sh".to_owned()],
                riot_file.as_path()
            ),
        ]
    );
    assert!(
        !loaded
            .matching(HookEvent::PostToolUse, Some("Edit"))
            .is_empty()
    );
    assert_eq!(
        loaded.skipped,
        vec![
            format!(
                "{}: hooks.PostToolUse[0].hooks[1] skipped: a `prompt` hook; Riot runs only `command` hooks",
                claude_file.display()
            ),
            format!(
                "{}: hooks.Notification skipped: Riot has no Notification event (it runs PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact)",
                claude_file.display()
            ),
        ]
    );

    // Untrusted: none of the project's hooks (the settings keys are named
    // by the configuration's trust notice).
    let loaded = load(
        &fs,
        home.path(),
        project.path(),
        &settings,
        false,
        &mut ignored,
    )
    .await
    .unwrap();
    assert!(loaded.is_empty());
    assert!(loaded.skipped.is_empty());
}
