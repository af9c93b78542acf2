//! Black-box tests of hooks (docs/design.md §13) through `riot exec`: a
//! project's `.riot/hooks.json` runs only once the project is trusted, and
//! a trusted project's hooks reach the model through the real binary and
//! the strict mock server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes

mod support;

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::{World, bodies, run, tool_call};

/// A project whose `.riot/hooks.json` has a SessionStart hook that leaves
/// a marker and prints context, and a PreToolUse hook that blocks Bash.
fn project_with_hooks(world: &World) {
    let riot = world.project.path().join(".riot");
    std::fs::create_dir_all(&riot).unwrap();
    let hooks = json!({
        "SessionStart": [{"hooks": [{"type": "command",
            "command": "touch hook-marker; echo 'project context: the release branch is frozen'"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "cat > /dev/null; echo 'the project hook forbids shell commands' >&2; exit 2"}]}]
    });
    std::fs::write(riot.join("hooks.json"), hooks.to_string()).unwrap();
}

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_projects_hooks_do_not_run_and_the_notice_says_so() {
    let world = World::new();
    project_with_hooks(&world);
    let server = server(vec![Reply::Text("Hello.".into())]).await;
    let out = run(world.exec(&server, Wire::Anthropic, &["Say hello"])).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !world.cwd().join("hook-marker").exists(),
        "the SessionStart hook did not run"
    );
    let notice = out
        .stderr
        .lines()
        .find(|l| l.contains("not trusted"))
        .unwrap_or_else(|| panic!("no trust notice: {}", out.stderr));
    assert!(notice.contains("hooks"), "{notice}");
    assert!(notice.contains(".riot/hooks.json"), "{notice}");
    assert!(notice.contains("--trust-project"), "{notice}");
    let body = bodies(&server)[0].to_string();
    assert!(!body.contains("project context"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_trust_project_the_hooks_run_and_reach_the_model() {
    let world = World::new();
    project_with_hooks(&world);
    let server = server(vec![
        tool_call("call_bash_1", "Bash", json!({"command": "touch shell-ran"})),
        Reply::Text("I will not use the shell.".into()),
    ])
    .await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &[
            "--trust-project",
            "--permission-mode",
            "bypass",
            "Touch a file",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!out.stderr.contains("not trusted"), "{}", out.stderr);
    assert!(
        world.cwd().join("hook-marker").exists(),
        "the SessionStart hook ran"
    );
    assert!(
        !world.cwd().join("shell-ran").exists(),
        "the PreToolUse hook blocked the command"
    );
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    let first = bodies[0]["messages"][0].to_string();
    assert!(
        first.contains("project context: the release branch is frozen"),
        "the SessionStart context goes with the first prompt: {first}"
    );
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"]
            .to_string()
            .contains("the project hook forbids shell commands"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_prompt_submit_hook_in_settings_blocks_the_prompt_before_the_model_sees_it() {
    let world = World::new();
    let riot = world.project.path().join(".riot");
    std::fs::create_dir_all(&riot).unwrap();
    let settings = json!({
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "grep -q password && { echo 'prompts must not contain secrets' >&2; exit 2; }; exit 0"}]}]}
    });
    std::fs::write(riot.join("settings.json"), settings.to_string()).unwrap();
    let server = server(vec![]).await;
    let out = run(world.exec(
        &server,
        Wire::Anthropic,
        &["--trust-project", "my password is hunter2"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains(
            "A UserPromptSubmit hook blocked this prompt: prompts must not contain secrets"
        ),
        "{}",
        out.stderr
    );
    assert!(bodies(&server).is_empty(), "the model never saw the prompt");
}
