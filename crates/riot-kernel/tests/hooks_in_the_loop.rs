//! L5 hooks (docs/design.md §6.3 steps 5 and 9, §5 Stop hooks, §9.2):
//! `run_agent` → the real scheduler with the kernel's hook runner → real
//! tools, the real permission chain and real shell-script hooks on a
//! temporary project. What is asserted is what the model receives.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // tests create and read real files

mod support;

use std::sync::Arc;

use futures::StreamExt;
use riot_core::testing::{ScriptItem, ScriptedProvider};
use riot_core::{AgentDeps, AgentState, NoCompaction, NoQueue, NoTranscript};
use riot_extensions::hooks::{HookConfig, HookRunner, parse_hooks};
use riot_kernel::NobodyAnswers;
use riot_protocol::*;
use riot_runtime::{RealFs, RealProcessRunner, SystemClock};
use riot_tools::{Scheduler, SchedulerConfig};
use serde_json::{Value, json};
use support::{Project, final_reply, tool_reply};

struct Run {
    events: Vec<AgentEvent>,
    provider: Arc<ScriptedProvider>,
}

async fn run(
    project: &Project,
    mode: PermissionMode,
    rules: &[(&str, RuleBehavior)],
    hooks: Value,
    scripts: Vec<Vec<ScriptItem>>,
) -> Run {
    let root = project.root();
    let ids: Arc<dyn IdGen> = Arc::new(SequentialIds::new());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let proc: Arc<dyn ProcessRunner> = Arc::new(RealProcessRunner::new());
    let env = ToolEnv::new(
        root.clone(),
        root.join(".spill"),
        Arc::new(RealFs),
        Arc::clone(&proc),
        Arc::clone(&clock),
        Arc::clone(&ids),
    );
    let rules = rules.iter().map(|(pattern, behavior)| PermissionRule {
        pattern: RulePattern::parse(pattern).unwrap(),
        behavior: *behavior,
        source: RuleSource::Project,
    });
    let policy = riot_permissions::Policy::new(root.clone(), None)
        .with_file_system(Arc::new(RealFs))
        .with_rules(rules);
    let config = HookConfig {
        groups: parse_hooks(&root.join(".riot/hooks.json"), &hooks).unwrap(),
        skipped: Vec::new(),
    };
    let hooks = Arc::new(HookRunner::new(
        config,
        proc,
        root.clone(),
        vec!["ANTHROPIC_API_KEY".into()],
        "ses_hooks",
    ));
    let scheduler = Arc::new(
        Scheduler::new(
            riot_tools::builtin(),
            Arc::new(env),
            Arc::new(policy),
            Arc::new(NobodyAnswers),
            SchedulerConfig::default(),
        )
        .with_hooks(hooks.clone()),
    );
    let provider = Arc::new(ScriptedProvider::new(scripts));
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: scheduler.clone(),
        compactor: Arc::new(NoCompaction),
        transcript: Arc::new(NoTranscript),
        hooks,
        queue: Arc::new(NoQueue),
        clock,
        ids,
    };
    let mut state = AgentState::new(
        SessionId::new("ses_hooks"),
        "m",
        SystemPrompt::stable("test"),
    );
    state.tools = scheduler.specs();
    state.mode = mode;
    let prompt = Message::user_text(MessageId::new("p"), "go");
    let mut events = Vec::new();
    {
        let mut stream = std::pin::pin!(riot_core::run_agent(
            &mut state,
            Some(prompt),
            &deps,
            CancelScope::new()
        ));
        while let Some(event) = stream.next().await {
            events.push(event);
        }
    }
    invariants::check_tool_pairing(&state.messages).unwrap();
    Run { events, provider }
}

/// The tool result for `id` as the model received it in the next request.
fn result_sent(run: &Run, id: &str) -> (String, bool) {
    run.provider
        .requests()
        .iter()
        .find_map(|r| support::tool_result(&r.messages, id))
        .unwrap_or_else(|| panic!("no request carried a result for {id}"))
}

fn done(run: &Run) -> &TerminalReason {
    support::done(&run.events)
}

fn started(run: &Run) -> usize {
    run.events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolStarted { .. }))
        .count()
}

#[tokio::test]
async fn a_pre_tool_use_exit_2_blocks_bash_and_the_model_gets_the_reason() {
    let project = Project::new();
    let guard = project.hook(
        "no-push.sh",
        r#"input=$(cat)
case "$input" in *'git push'*) echo 'pushing is blocked on Fridays; open a PR instead' >&2; exit 2;; esac
exit 0"#,
    );
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}]});
    let run = run(
        &project,
        PermissionMode::Bypass,
        &[],
        hooks,
        vec![
            tool_reply(&[("t1", "Bash", json!({"command": "touch pushed && git push"}))]),
            tool_reply(&[("t2", "Bash", json!({"command": "touch listed"}))]),
            final_reply("I will open a PR."),
        ],
    )
    .await;
    assert_eq!(done(&run), &TerminalReason::Completed);
    let (text, is_error) = result_sent(&run, "t1");
    assert!(is_error);
    assert!(
        text.contains("pushing is blocked on Fridays; open a PR instead"),
        "{text}"
    );
    assert!(
        !project.root().join("pushed").exists(),
        "the blocked command did not run"
    );
    // The hook has no opinion on other commands: bypass lets them run.
    let (text, is_error) = result_sent(&run, "t2");
    assert!(!is_error, "{text}");
    assert!(project.root().join("listed").exists());
    assert_eq!(started(&run), 1);
}

#[tokio::test]
async fn a_hook_allow_does_not_beat_a_deny_rule_or_a_git_safety_check() {
    let project = Project::new();
    std::fs::create_dir_all(project.root().join(".git")).unwrap();
    std::fs::create_dir_all(project.root().join("keep")).unwrap();
    let allow = project.hook(
        "allow.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "the hook trusts everything"}}'"#,
    );
    let hooks =
        json!({"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": allow}]}]});
    let config = project.root().join(".git/config");
    let run = run(
        &project,
        PermissionMode::Default,
        &[("Bash(rm *)", RuleBehavior::Deny)],
        hooks,
        vec![
            tool_reply(&[("t1", "Bash", json!({"command": "rm -rf keep"}))]),
            tool_reply(&[(
                "t2",
                "Write",
                json!({"file_path": config.display().to_string(), "content": "[core]\n"}),
            )]),
            tool_reply(&[("t3", "Bash", json!({"command": "touch made"}))]),
            final_reply("done"),
        ],
    )
    .await;
    let (text, is_error) = result_sent(&run, "t1");
    assert!(is_error);
    assert!(project.root().join("keep").exists(), "rm did not run");
    assert!(
        text.contains("Bash(rm *)"),
        "the deny rule is quoted: {text}"
    );
    let (text, is_error) = result_sent(&run, "t2");
    assert!(is_error, "a .git/ write is never allowed by a hook: {text}");
    assert!(!config.exists(), "the git config was not written");
    // Where nothing else decides, the hook's allow counts (default mode
    // would otherwise ask, and nobody answers in this face).
    let (text, is_error) = result_sent(&run, "t3");
    assert!(!is_error, "{text}");
    assert!(project.root().join("made").exists());
}

#[tokio::test]
async fn post_tool_use_context_reaches_the_model_after_the_output() {
    let project = Project::new();
    let post = project.hook(
        "post.sh",
        r#"input=$(cat)
case "$input" in *'"tool_name":"Bash"'*) ;; *) exit 1;; esac
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "reminder: run cargo fmt before committing"}}'"#,
    );
    let hooks = json!({"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": post}]}]});
    let run = run(
        &project,
        PermissionMode::Bypass,
        &[],
        hooks,
        vec![
            tool_reply(&[("t1", "Bash", json!({"command": "echo hello-from-bash"}))]),
            final_reply("ok"),
        ],
    )
    .await;
    assert_eq!(done(&run), &TerminalReason::Completed);
    let (text, is_error) = result_sent(&run, "t1");
    assert!(!is_error);
    let output = text.find("hello-from-bash").expect(&text);
    let context = text
        .find("reminder: run cargo fmt before committing")
        .expect(&text);
    assert!(output < context, "the context follows the output: {text}");
}

#[tokio::test]
async fn a_stop_hook_block_sends_the_loop_round_once_with_its_reason() {
    let project = Project::new();
    let stop = project.hook(
        "stop.sh",
        r#"input=$(cat)
echo x >> stop-calls
case "$input" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision": "block", "reason": "run the test suite before finishing"}'"#,
    );
    let hooks = json!({"Stop": [{"hooks": [{"type": "command", "command": stop}]}]});
    let run = run(
        &project,
        PermissionMode::Default,
        &[],
        hooks,
        vec![final_reply("All done."), final_reply("Tests pass.")],
    )
    .await;
    assert_eq!(done(&run), &TerminalReason::Completed);
    let requests = run.provider.requests();
    assert_eq!(requests.len(), 2, "one extra round, not more");
    let last = requests[1].messages.last().unwrap();
    let Message::User(user) = last else {
        panic!("expected the hook's reason as a user message: {last:?}");
    };
    assert_eq!(user.origin, MessageOrigin::Hook);
    assert!(matches!(
        &user.content[..],
        [UserBlock::Text { text }] if text.contains("run the test suite before finishing")
    ));
    assert_eq!(
        std::fs::read_to_string(project.root().join("stop-calls")).unwrap(),
        "x\nx\n",
        "the hook ran at both stops"
    );
}

#[tokio::test]
async fn an_updated_input_is_what_runs() {
    let project = Project::new();
    let rewrite = project.hook(
        "rewrite.sh",
        r#"cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "touch rewritten"}}}'"#,
    );
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}]});
    let run = run(
        &project,
        PermissionMode::Bypass,
        &[],
        hooks,
        vec![
            tool_reply(&[("t1", "Bash", json!({"command": "touch original"}))]),
            final_reply("ok"),
        ],
    )
    .await;
    let (text, is_error) = result_sent(&run, "t1");
    assert!(!is_error, "{text}");
    assert!(project.root().join("rewritten").exists());
    assert!(!project.root().join("original").exists());
}

#[tokio::test]
async fn crashing_failing_and_hanging_hooks_change_nothing() {
    let project = Project::new();
    let crash = project.hook("crash.sh", "kill -SEGV $$");
    let fail = project.hook("fail.sh", "echo 'not a reason' >&2\nexit 1");
    let hang = project.hook("hang.sh", "sleep 60");
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": crash},
            {"type": "command", "command": fail},
            {"type": "command", "command": hang, "timeout": 0.5}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": crash}]}],
        "Stop": [{"hooks": [{"type": "command", "command": fail}]}]
    });
    let run = run(
        &project,
        PermissionMode::Bypass,
        &[],
        hooks,
        vec![
            tool_reply(&[("t1", "Bash", json!({"command": "echo ran > made"}))]),
            final_reply("ok"),
        ],
    )
    .await;
    assert_eq!(done(&run), &TerminalReason::Completed);
    let (text, is_error) = result_sent(&run, "t1");
    assert!(!is_error, "{text}");
    assert!(!text.contains("not a reason"), "{text}");
    assert_eq!(
        std::fs::read_to_string(project.root().join("made")).unwrap(),
        "ran\n"
    );
    assert_eq!(
        run.provider.requests().len(),
        2,
        "the failing Stop hook did not send the loop round"
    );
}
