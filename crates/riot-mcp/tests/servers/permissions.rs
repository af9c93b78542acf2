//! `@modelcontextprotocol/server-filesystem` through the real scheduler
//! and permission chain: a `readOnlyHint` does not skip the question;
//! rules on the tool name decide.

use std::sync::Arc;

use futures::StreamExt;
use riot_mcp::McpHub;
use riot_permissions::Policy;
use riot_protocol::{
    CancelScope, DecisionReason, ExecuteOptions, PermissionMode, PermissionRule, RuleBehavior,
    RulePattern, RuleSource, ToolCall, ToolCallResult, ToolResultContent, ToolRunEvent, ToolRunner,
    ToolUseId,
};
use riot_tools::testing::{ScriptedGate, TempProject};
use riot_tools::{Scheduler, SchedulerConfig};
use serde_json::json;

use crate::support;

fn rule(pattern: &str, behavior: RuleBehavior) -> PermissionRule {
    PermissionRule {
        pattern: RulePattern::parse(pattern).unwrap(),
        behavior,
        source: RuleSource::User,
    }
}

/// Runs one `list_directory` call through a scheduler over the hub's
/// tools, with `rules`, in default mode.
async fn list(
    hub: &McpHub,
    project: &TempProject,
    rules: Vec<PermissionRule>,
    gate: Arc<ScriptedGate>,
) -> ToolCallResult {
    let policy = Arc::new(Policy::new(project.root(), None).with_rules(rules));
    let scheduler = Scheduler::new(
        hub.tools(),
        Arc::clone(&project.env),
        policy,
        gate,
        SchedulerConfig::default(),
    );
    let call = ToolCall {
        id: ToolUseId::new("toolu_ls"),
        name: "mcp__fs__list_directory".into(),
        input: json!({"path": project.path("listed").display().to_string()}),
    };
    let mut stream = scheduler.execute(
        vec![call],
        ExecuteOptions {
            cancel: CancelScope::new(),
            mode: PermissionMode::Default,
        },
    );
    let mut results = Vec::new();
    while let Some(item) = stream.next().await {
        if let ToolRunEvent::Result(result) = item {
            results.push(result);
        }
    }
    assert_eq!(results.len(), 1);
    results.remove(0)
}

fn listing(result: &ToolCallResult) -> Vec<String> {
    assert!(!result.is_error, "{:?}", result.content);
    let ToolResultContent::Text { text } = &result.content[0] else {
        panic!("{:?}", result.content)
    };
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_hint_still_asks_and_tool_name_rules_decide() {
    let Some(installed) = support::installed("a_read_only_hint_still_asks") else {
        return;
    };
    let project = TempProject::new();
    project.write("listed/a.txt", "a");
    project.write("listed/sub/b.txt", "b");
    let filesystem = installed.filesystem.display().to_string();
    let root = project.root().display().to_string();
    let hub = support::ready_hub(
        vec![support::stdio("fs", "node", &[&filesystem, &root])],
        project.root(),
    )
    .await;
    let expected = ["[DIR] sub", "[FILE] a.txt"];

    // The server marks list_directory read-only; Riot still asks in
    // default mode, naming the tool.
    let gate = Arc::new(ScriptedGate::answering(vec![]));
    let asked = list(&hub, &project, vec![], Arc::clone(&gate)).await;
    let questions = gate.asked();
    assert_eq!(questions.len(), 1);
    assert_eq!(questions[0].1.tool_name, "mcp__fs__list_directory");
    assert_eq!(
        questions[0].1.reason,
        DecisionReason::Mode {
            detail: "default mode asks before mcp__fs__list_directory runs".into(),
            mode: PermissionMode::Default,
        }
    );
    assert_eq!(listing(&asked), expected, "allowed once by the person");

    // Nobody to answer: the ask becomes a denial and nothing runs.
    let denied = list(&hub, &project, vec![], Arc::new(ScriptedGate::nobody())).await;
    assert!(denied.is_error);

    // An allow rule for the tool, or for every tool of the server, decides
    // without a question.
    for pattern in ["mcp__fs__list_directory", "mcp__fs__*", "mcp__fs"] {
        let gate = Arc::new(ScriptedGate::answering(vec![]));
        let allowed = list(
            &hub,
            &project,
            vec![rule(pattern, RuleBehavior::Allow)],
            Arc::clone(&gate),
        )
        .await;
        assert_eq!(gate.asked(), vec![], "{pattern} allows without asking");
        assert_eq!(listing(&allowed), expected, "{pattern}");
    }

    // A rule for another tool of the server does not.
    let gate = Arc::new(ScriptedGate::answering(vec![]));
    list(
        &hub,
        &project,
        vec![rule("mcp__fs__read_text_file", RuleBehavior::Allow)],
        Arc::clone(&gate),
    )
    .await;
    assert_eq!(gate.asked().len(), 1);

    // A deny rule on the server wins over an allow rule on the tool.
    let gate = Arc::new(ScriptedGate::answering(vec![]));
    let refused = list(
        &hub,
        &project,
        vec![
            rule("mcp__fs__list_directory", RuleBehavior::Allow),
            rule("mcp__fs__*", RuleBehavior::Deny),
        ],
        Arc::clone(&gate),
    )
    .await;
    assert!(refused.is_error);
    assert_eq!(gate.asked(), vec![]);

    let pgid = hub.pid("fs").unwrap();
    hub.shutdown().await;
    support::group_gone(pgid).await;
}
