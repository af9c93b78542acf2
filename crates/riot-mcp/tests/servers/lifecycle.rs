//! Startup, failure, restart, shutdown and drop: statuses say why, and no
//! process outlives its hub.

use std::sync::Arc;

use riot_mcp::{HubError, McpHub, ServerConfig, ServerStatus, Transport};
use riot_protocol::ToolOutcome;
use riot_tools::testing::TempProject;
use serde_json::json;

use crate::support::{
    self, PATIENCE, call, ctx_with_progress, group_gone, group_members, options, text, tool,
    wait_for,
};

fn failed_reason(hub: &McpHub, name: &str) -> String {
    match hub.status(name) {
        Some(ServerStatus::Failed { reason }) => reason,
        other => panic!("{name}: expected failed, got {other:?}"),
    }
}

fn with_env(mut config: ServerConfig, key: &str, value: &str) -> ServerConfig {
    if let Transport::Stdio { env, .. } = &mut config.transport {
        env.insert(key.to_owned(), value.to_owned());
    }
    config
}

/// Waits until the server has a pid and its group has `n` live members.
async fn pgid_with_members(hub: &McpHub, name: &str, n: usize) -> u32 {
    wait_for("the server's pid", || hub.pid(name).is_some()).await;
    let pgid = hub.pid(name).unwrap();
    wait_for("the group's processes", || group_members(pgid).len() >= n).await;
    pgid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_initialize_fails_after_the_timeout_without_blocking() {
    let project = TempProject::new();
    // Reads requests forever and answers none; a grandchild shares its group.
    let silent = support::stdio("silent", "sh", &["-c", "sleep 300 & exec cat > /dev/null"]);
    let hub = McpHub::new(
        vec![silent],
        options(project.root()).with_startup_timeout_ms(1_500),
    );
    hub.start().unwrap();
    // The caller was not made to wait: the server is still starting and
    // there are simply no tools yet.
    assert_eq!(hub.status("silent"), Some(ServerStatus::Connecting));
    assert!(hub.tools().is_empty());
    let pgid = pgid_with_members(&hub, "silent", 2).await;

    assert!(hub.wait_settled(PATIENCE.as_millis() as u64).await);
    assert_eq!(
        failed_reason(&hub, "silent"),
        "did not answer `initialize` within 1500 ms (the startup timeout); check the command or URL"
    );
    assert!(hub.tools().is_empty());
    // The shell and its `sleep` were killed with their group.
    group_gone(pgid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_or_exits_says_why() {
    let project = TempProject::new();
    let hub = McpHub::new(
        vec![
            support::stdio("missing", "riot-no-such-mcp-server", &[]),
            support::stdio(
                "crashing",
                "sh",
                &["-c", "echo 'boom: no config' >&2; exit 3"],
            ),
            ServerConfig {
                disabled: true,
                ..support::stdio("off", "sh", &[])
            },
            // `${VAR}` comes from the hub's environment map.
            support::stdio("expanded", "${SH}", &["-c", "echo via-${WHO} >&2; exit 4"]),
            with_env(
                support::stdio("unset", "sh", &[]),
                "TOKEN",
                "${RIOT_TEST_NEVER_SET}",
            ),
        ],
        options(project.root()).with_env(
            [("SH", "sh"), ("WHO", "the-env-map")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        ),
    );
    hub.start().unwrap();
    assert!(hub.wait_settled(PATIENCE.as_millis() as u64).await);
    let missing = failed_reason(&hub, "missing");
    assert!(
        missing.starts_with("could not start `riot-no-such-mcp-server`")
            && missing.ends_with("check `command` and that it is installed"),
        "{missing}"
    );
    let crashing = failed_reason(&hub, "crashing");
    assert!(
        crashing.contains("the server process exited (exit status: 3)")
            && crashing.ends_with("its last output: boom: no config"),
        "{crashing}"
    );
    let expanded = failed_reason(&hub, "expanded");
    assert!(
        expanded.contains("(exit status: 4)")
            && expanded.ends_with("its last output: via-the-env-map"),
        "{expanded}"
    );
    assert_eq!(
        failed_reason(&hub, "unset"),
        "its configuration cannot be used: `${RIOT_TEST_NEVER_SET}` in `env.TOKEN` is not set; set it in the environment or write `${RIOT_TEST_NEVER_SET:-default}`"
    );
    assert_eq!(hub.status("off"), Some(ServerStatus::Disabled));
    assert_eq!(
        hub.restart("off").await,
        Err(HubError::Disabled("off".into()))
    );
    assert_eq!(
        hub.restart("nope").await,
        Err(HubError::UnknownServer("nope".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hubs_variables_reach_a_stdio_server_under_its_own_env() {
    let project = TempProject::new();
    let hub = McpHub::new(
        vec![with_env(
            support::stdio(
                "env",
                "sh",
                &["-c", "echo \"$RIOT_T_HUB-$RIOT_T_BOTH\" >&2; exit 4"],
            ),
            "RIOT_T_BOTH",
            "server",
        )],
        options(project.root()).with_env_set(vec![
            ("RIOT_T_HUB".to_owned(), "hub".to_owned()),
            ("RIOT_T_BOTH".to_owned(), "hub".to_owned()),
        ]),
    );
    hub.start().unwrap();
    assert!(hub.wait_settled(PATIENCE.as_millis() as u64).await);
    let reason = failed_reason(&hub, "env");
    assert!(reason.ends_with("its last output: hub-server"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_stdio_server_mid_call_fails_the_call_and_the_server() {
    let Some(installed) = support::installed("killing_a_stdio_server_mid_call") else {
        return;
    };
    let project = TempProject::new();
    let everything = installed.everything.display().to_string();
    let hub = support::ready_hub(
        vec![support::stdio(
            "everything",
            "node",
            &[&everything, "stdio"],
        )],
        project.root(),
    )
    .await;
    let pid = hub.pid("everything").unwrap();
    let long = tool(&hub, "mcp__everything__trigger-long-running-operation");
    let (ctx, progress) = ctx_with_progress(&project);
    let running = tokio::spawn({
        let long = Arc::clone(&long);
        async move { call(&long, json!({"duration": 600, "steps": 600}), &ctx).await }
    });
    progress.first().await;
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());

    let out = tokio::time::timeout(PATIENCE, running)
        .await
        .expect("the in-flight call ends")
        .unwrap();
    let ToolOutcome::Failed {
        error_for_model, ..
    } = &out
    else {
        panic!("{out:?}")
    };
    assert!(
        error_for_model.starts_with("The MCP server `everything` stopped during the call")
            && error_for_model.ends_with(
                "mcp__everything__trigger-long-running-operation did not complete and its effects are unknown."
            ),
        "{error_for_model}"
    );
    wait_for("the server to be marked failed", || {
        matches!(hub.status("everything"), Some(ServerStatus::Failed { .. }))
    })
    .await;
    let reason = failed_reason(&hub, "everything");
    assert!(
        reason.contains("signal: 9 (SIGKILL)") || reason == "the server closed the connection",
        "{reason}"
    );
    assert!(hub.tools().is_empty());
    // A tool taken before says so instead of hanging.
    let after = call(&long, json!({"duration": 1, "steps": 1}), &project.ctx()).await;
    assert!(
        text(&after).starts_with("The MCP server `everything` is not connected (failed: "),
        "{}",
        text(&after)
    );
    group_gone(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_restart_and_drop_leave_no_process_behind() {
    let Some(installed) = support::installed("shutdown_restart_and_drop") else {
        return;
    };
    let project = TempProject::new();
    // Three processes in the group: sh, tee and node.
    let script = format!(
        "tee /dev/null | exec node '{}' stdio",
        installed.everything.display()
    );
    let config = support::stdio("everything", "sh", &["-c", &script]);

    // Restart: a new group, the old one gone, tools taken before still work.
    let hub = support::ready_hub(vec![config.clone()], project.root()).await;
    let first = pgid_with_members(&hub, "everything", 3).await;
    let echo = tool(&hub, "mcp__everything__echo");
    hub.restart("everything").await.unwrap();
    group_gone(first).await;
    assert!(hub.wait_settled(PATIENCE.as_millis() as u64).await);
    assert!(matches!(
        hub.status("everything"),
        Some(ServerStatus::Ready { .. })
    ));
    let second = pgid_with_members(&hub, "everything", 3).await;
    assert_ne!(first, second);
    let out = call(&echo, json!({"message": "again"}), &project.ctx()).await;
    assert_eq!(text(&out), "Echo: again");

    // Shutdown: waits until the group is gone, and says so in the status.
    hub.shutdown().await;
    group_gone(second).await;
    assert_eq!(
        hub.status("everything"),
        Some(ServerStatus::Failed {
            reason: "the MCP hub was shut down".into()
        })
    );

    // Drop without shutdown: the group is killed all the same.
    let hub = support::ready_hub(vec![config], project.root()).await;
    let third = pgid_with_members(&hub, "everything", 3).await;
    drop(hub);
    group_gone(third).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_is_picked_up() {
    let Some(installed) = support::installed("a_changed_tool_list_is_picked_up") else {
        return;
    };
    let project = TempProject::new();
    let script = installed
        .fixtures
        .join("changing-tools.mjs")
        .display()
        .to_string();
    let hub = support::ready_hub(
        vec![support::stdio("changing", "node", &[&script])],
        project.root(),
    )
    .await;
    let names =
        |hub: &McpHub| -> Vec<String> { hub.tools().iter().map(|t| t.name().to_owned()).collect() };
    assert_eq!(names(&hub), ["mcp__changing__add_tool"]);
    let mut changes = hub.changes();
    changes.borrow_and_update();
    let add = tool(&hub, "mcp__changing__add_tool");
    assert_eq!(
        text(&call(&add, json!({}), &project.ctx()).await),
        "added extra_1"
    );
    tokio::time::timeout(PATIENCE, async {
        while names(&hub).len() < 2 {
            changes.changed().await.unwrap();
        }
    })
    .await
    .expect("the new tool appears");
    assert_eq!(
        names(&hub),
        ["mcp__changing__add_tool", "mcp__changing__extra_1"]
    );
    assert_eq!(
        hub.status("changing"),
        Some(ServerStatus::Ready { tools: 2 })
    );
    let extra = tool(&hub, "mcp__changing__extra_1");
    assert_eq!(
        text(&call(&extra, json!({}), &project.ctx()).await),
        "extra_1 ran"
    );
    let pgid = hub.pid("changing").unwrap();
    hub.shutdown().await;
    group_gone(pgid).await;
}
