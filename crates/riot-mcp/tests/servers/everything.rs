//! `@modelcontextprotocol/server-everything` over stdio and over
//! streamable HTTP: the same checks through both transports.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use riot_mcp::{McpHub, ServerStatus};
use riot_protocol::{ToolOutcome, ToolResultContent, UiPayload};
use riot_tools::testing::TempProject;
use serde_json::json;

use crate::support::{self, HttpEverything, PATIENCE, call, ctx_with_progress, text, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let Some(installed) = support::installed("everything_over_stdio") else {
        return;
    };
    let project = TempProject::new();
    // `tee` shows what the client sent, to see `notifications/cancelled`.
    let log = project.path("client-messages.jsonl");
    let script = format!(
        "tee '{}' | exec node '{}' stdio",
        log.display(),
        installed.everything.display()
    );
    let hub = support::ready_hub(
        vec![support::stdio("everything", "sh", &["-c", &script])],
        project.root(),
    )
    .await;
    exercise(&hub, &project, Some(&log)).await;
    let pgid = hub.pid("everything").expect("a stdio server has a pid");
    hub.shutdown().await;
    support::group_gone(pgid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let Some(installed) = support::installed("everything_over_streamable_http") else {
        return;
    };
    let server = HttpEverything::start(&installed).await;
    let project = TempProject::new();
    let hub = support::ready_hub(
        vec![support::http("everything", &server.url)],
        project.root(),
    )
    .await;
    assert_eq!(hub.pid("everything"), None, "nothing is spawned for HTTP");
    exercise(&hub, &project, None).await;
    hub.shutdown().await;
    // `server` is dropped here, or when a check above fails: its group dies.
}

async fn exercise(hub: &Arc<McpHub>, project: &TempProject, client_log: Option<&Path>) {
    lists_tools_in_order(hub);
    echo_returns_the_exact_text(hub, project).await;
    the_tiny_image_is_an_image_block(hub, project).await;
    progress_is_forwarded(hub, project).await;
    a_rejected_call_is_an_error_result(hub, project).await;
    a_long_call_is_cancelled_promptly(hub, project, client_log).await;
}

fn lists_tools_in_order(hub: &McpHub) {
    let tools = hub.tools();
    let names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-tiny-image",
        "mcp__everything__trigger-long-running-operation",
        "mcp__everything__get-sum",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} in {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by name");
    assert_eq!(
        hub.status("everything"),
        Some(ServerStatus::Ready { tools: names.len() })
    );
    let echo = tool(hub, "mcp__everything__echo");
    let schema = echo.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["message"]["type"], "string");
    assert!(
        echo.prompt(&prompt_cx())
            .starts_with("Echoes back the input string"),
        "{}",
        echo.prompt(&prompt_cx())
    );
    // readOnlyHint: parallel batches yes, read-only (no permission) no.
    let prepared = echo.prepare(json!({"message": "x"})).unwrap();
    assert!(prepared.is_concurrency_safe());
    assert!(!prepared.is_read_only());
    assert_eq!(
        prepared.describe(),
        "everything: Echo Tool {\"message\":\"x\"}"
    );
}

fn prompt_cx() -> riot_protocol::PromptContext {
    riot_protocol::PromptContext {
        cwd: "/p".into(),
        platform: "linux".into(),
        tool_names: vec![],
        compact: false,
    }
}

async fn echo_returns_the_exact_text(hub: &McpHub, project: &TempProject) {
    let echo = tool(hub, "mcp__everything__echo");
    let out = call(&echo, json!({"message": "hello riot ✓"}), &project.ctx()).await;
    assert_eq!(
        out,
        ToolOutcome::Ok {
            model_content: vec![ToolResultContent::text("Echo: hello riot ✓")],
            ui_payload: Some(UiPayload::Text {
                text: "Echo: hello riot ✓".into()
            }),
            side_messages: vec![],
        }
    );
}

async fn the_tiny_image_is_an_image_block(hub: &McpHub, project: &TempProject) {
    let image = tool(hub, "mcp__everything__get-tiny-image");
    let out = call(&image, json!({}), &project.ctx()).await;
    let ToolOutcome::Ok { model_content, .. } = &out else {
        panic!("{out:?}")
    };
    assert_eq!(model_content.len(), 3, "{model_content:?}");
    assert_eq!(
        model_content[0],
        ToolResultContent::text("Here's the image you requested:")
    );
    let ToolResultContent::Image { source } = &model_content[1] else {
        panic!("{:?}", model_content[1])
    };
    assert_eq!(source.media_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&source.data)
        .unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(
        model_content[2],
        ToolResultContent::text("The image above is the MCP logo.")
    );
}

async fn progress_is_forwarded(hub: &McpHub, project: &TempProject) {
    let long = tool(hub, "mcp__everything__trigger-long-running-operation");
    let (ctx, progress) = ctx_with_progress(project);
    let out = call(&long, json!({"duration": 1, "steps": 3}), &ctx).await;
    assert_eq!(
        text(&out),
        "Long running operation completed. Duration: 1 seconds, Steps: 3."
    );
    assert!(!out.is_failed());
    // In order, from the first. The last report travels right before the
    // result and may lose that race (rmcp hands each notification to a
    // task of its own), so the run may end one report short.
    let lines = progress.lines();
    let expected = ["1/3", "2/3", "3/3"].map(String::from);
    assert!(
        !lines.is_empty() && expected.starts_with(&lines),
        "{lines:?}"
    );
}

async fn a_rejected_call_is_an_error_result(hub: &McpHub, project: &TempProject) {
    let echo = tool(hub, "mcp__everything__echo");
    // Parses for Riot (an object), fails the server's own schema.
    let out = call(&echo, json!({"message": 42}), &project.ctx()).await;
    let ToolOutcome::Failed {
        error_for_model, ..
    } = &out
    else {
        panic!("{out:?}")
    };
    assert!(
        error_for_model.contains("Input validation error") && error_for_model.contains("echo"),
        "{error_for_model}"
    );
}

async fn a_long_call_is_cancelled_promptly(
    hub: &McpHub,
    project: &TempProject,
    client_log: Option<&Path>,
) {
    let long = tool(hub, "mcp__everything__trigger-long-running-operation");
    let (ctx, progress) = ctx_with_progress(project);
    let cancel = ctx.cancel.clone();
    let running = tokio::spawn({
        let long = Arc::clone(&long);
        async move { call(&long, json!({"duration": 600, "steps": 600}), &ctx).await }
    });
    progress.first().await;
    cancel.cancel();
    let out = tokio::time::timeout(PATIENCE, running)
        .await
        .expect("a cancelled call returns without waiting for the server")
        .unwrap();
    assert_eq!(out, ToolOutcome::Cancelled);
    if let Some(log) = client_log {
        support::wait_for("notifications/cancelled in the client log", || {
            std::fs::read_to_string(log).is_ok_and(|sent| {
                sent.lines().any(|line| {
                    line.contains("\"notifications/cancelled\"")
                        && line.contains("cancelled by the client")
                })
            })
        })
        .await;
    }
    // The connection is still good.
    echo_returns_the_exact_text(hub, project).await;
}
