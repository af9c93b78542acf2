//! `riot tools list` and `riot tools call` (docs/interfaces.md): the tools a
//! session in this directory declares, in the exact order sent to the model
//! (MCP tools once their servers have settled), and one call through a
//! session's full pipeline (validation, PreToolUse hooks, permission
//! decision, the tool, PostToolUse hooks, budget). A permission question is
//! answered "no" unless `--yes`. `riot diagnostics` is a Diagnostics call
//! the same way.

use std::sync::Arc;

use futures::StreamExt;
use riot_protocol::{
    AgentEvent, CancelScope, ExecuteOptions, IdGen, PermissionGate, PermissionOutcome,
    PermissionRequestDetail, RequestId, SessionId, Severity, ToolCall, ToolResultContent,
    ToolRunEvent, ToolRunner, ToolUseId, UiPayload,
};

use crate::cli::SharedOptions;
use crate::cli::flag_layer;
use crate::out::{errln, outln};
use crate::world;
use riot_kernel::error::EXIT_USAGE;

/// Answers every question the same way, as `--yes` says.
#[derive(Debug)]
struct FixedAnswer {
    allow: bool,
}

#[async_trait::async_trait]
impl PermissionGate for FixedAnswer {
    fn can_answer(&self) -> bool {
        true
    }

    async fn ask(
        &self,
        _request_id: RequestId,
        detail: PermissionRequestDetail,
    ) -> PermissionOutcome {
        errln!("riot tools call: {}", detail.message);
        if self.allow {
            errln!("riot tools call: allowed (--yes)");
            PermissionOutcome::AllowOnce
        } else {
            PermissionOutcome::RejectOnce {
                feedback: Some("answered no by `riot tools call`; pass --yes to allow it".into()),
            }
        }
    }
}

fn fail(command: &str, message: &str, code: i32) -> i32 {
    errln!("riot {command}: {message}");
    code
}

async fn harness(
    shared: &SharedOptions,
    allow: bool,
    session: Option<&SessionId>,
) -> Result<(riot_kernel::tools::ToolHarness, Arc<dyn IdGen>), (String, i32)> {
    let env = world::environment();
    let home = world::riot_home(&env).map_err(|e| (e.to_string(), e.exit_code()))?;
    let cwd =
        world::project_dir(shared.cwd.as_ref()).map_err(|e| (e.to_string(), e.exit_code()))?;
    let caps = world::capabilities();
    let ids = Arc::clone(&caps.ids);
    let kernel = riot_kernel::Kernel::new(caps, home)
        .with_language_servers(Arc::new(riot_lsp::LspHost))
        .with_browsers(world::browsers());
    let flags = flag_layer(shared);
    let at = riot_kernel::tools::Inspect {
        cwd: &cwd,
        env: &env,
        flags: &flags,
        trust_project: shared.trust_project,
    };
    let harness = kernel
        .tools(at, Arc::new(FixedAnswer { allow }), session)
        .await
        .map_err(|e| (e.to_string(), e.exit_code()))?;
    Ok((harness, ids))
}

/// The bytes one declaration takes in a request: its name, description
/// and schema as JSON.
fn declared_bytes(spec: &riot_protocol::ToolSpec) -> usize {
    serde_json::to_string(spec).map_or(0, |s| s.len())
}

/// `riot tools list [--json]`: the declarations of a session's first
/// request for the configured (or `--model`) model, each with its size in
/// bytes; the text form ends with the total and what waits behind
/// ToolSearch.
pub async fn list(shared: &SharedOptions, json_out: bool) -> i32 {
    let (harness, _) = match harness(shared, false, None).await {
        Ok(h) => h,
        Err((e, code)) => return fail("tools list", &e, code),
    };
    // What a session's first request declares once its servers are up.
    harness.stack.mcp_settled().await;
    let specs = harness.runner().specs();
    let declared: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let held: Vec<String> = harness
        .runner()
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|n| !declared.contains(&n.as_str()))
        .collect();
    let (model, window) = (harness.model.clone(), harness.context_window);
    harness.close().await;
    let total: usize = specs.iter().map(declared_bytes).sum();
    if json_out {
        let listed: Vec<serde_json::Value> = specs
            .iter()
            .map(|spec| {
                let mut v = serde_json::to_value(spec).unwrap_or_default();
                v["bytes"] = declared_bytes(spec).into();
                v
            })
            .collect();
        outln!("{}", serde_json::Value::Array(listed));
    } else {
        for spec in &specs {
            let first = spec.description.lines().next().unwrap_or_default();
            outln!("{:<12} {first}", spec.name);
        }
        outln!(
            "\n{} declared in {total} bytes for {} (window: {window} tokens){}",
            plural(specs.len(), "tool"),
            model.as_deref().unwrap_or("an unconfigured model"),
            if held.is_empty() {
                String::new()
            } else {
                format!("; through ToolSearch: {}", held.join(", "))
            }
        );
    }
    0
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `riot tools call NAME --input JSON [--yes] [--session ID]`.
pub async fn call(
    shared: &SharedOptions,
    name: &str,
    input: &str,
    yes: bool,
    session: Option<&str>,
) -> i32 {
    let input: serde_json::Value = match serde_json::from_str(input) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                "tools call",
                &format!("--input is not valid JSON: {e}"),
                EXIT_USAGE,
            );
        }
    };
    let session = session.map(|s| SessionId::new(s.to_owned()));
    let (harness, ids) = match harness(shared, yes, session.as_ref()).await {
        Ok(h) => h,
        Err((e, code)) => return fail("tools call", &e, code),
    };
    let call = ToolCall {
        id: ToolUseId::generate(ids.as_ref()),
        name: name.to_owned(),
        input,
    };
    let options = ExecuteOptions {
        cancel: CancelScope::new(),
        mode: harness.mode,
    };
    let mut events = harness.runner().execute(vec![call], options);
    let mut result = None;
    while let Some(event) = events.next().await {
        match event {
            ToolRunEvent::Result(r) => result = Some(r),
            ToolRunEvent::Event(AgentEvent::ToolStarted { describe, .. }) => {
                errln!("• {describe}");
            }
            ToolRunEvent::Event(_) => {}
        }
    }
    drop(events);
    if let Err(e) = harness.save().await {
        errln!("riot tools call: could not save the session's file state: {e}");
    }
    harness.close().await;
    let Some(result) = result else {
        return fail("tools call", "the tool produced no result", 1);
    };
    for block in &result.content {
        match block {
            ToolResultContent::Text { text } => outln!("{text}"),
            ToolResultContent::Image { source } => {
                outln!(
                    "[image {} ({} bytes of base64)]",
                    source.media_type,
                    source.data.len()
                );
            }
            ToolResultContent::Document {
                source,
                pages,
                text,
            } => {
                outln!(
                    "[document {}: {pages} page{} ({} bytes of base64); as text:]",
                    source.media_type,
                    if *pages == 1 { "" } else { "s" },
                    source.data.len()
                );
                outln!("{text}");
            }
        }
    }
    i32::from(result.is_error)
}

/// `riot diagnostics [PATH…] [--json]`: one Diagnostics call through a
/// session's pipeline; the list on stdout (one `path:line:col: severity
/// [code]: message` line each, or the payload as JSON). Exit code 1 when
/// an error was found or the call failed, else 0.
pub async fn diagnostics(shared: &SharedOptions, paths: &[String], json_out: bool) -> i32 {
    let (harness, ids) = match harness(shared, false, None).await {
        Ok(h) => h,
        Err((e, code)) => return fail("diagnostics", &e, code),
    };
    let input = if paths.is_empty() {
        serde_json::json!({})
    } else {
        serde_json::json!({ "paths": paths })
    };
    let call = ToolCall {
        id: ToolUseId::generate(ids.as_ref()),
        name: "Diagnostics".to_owned(),
        input,
    };
    let options = ExecuteOptions {
        cancel: CancelScope::new(),
        mode: harness.mode,
    };
    let mut events = harness.runner().execute(vec![call], options);
    let mut result = None;
    while let Some(event) = events.next().await {
        if let ToolRunEvent::Result(r) = event {
            result = Some(r);
        }
    }
    drop(events);
    harness.close().await;
    let Some(result) = result else {
        return fail("diagnostics", "the tool produced no result", 1);
    };
    let payload = result.ui.as_ref().and_then(|ui| ui.payload.as_ref());
    let Some(UiPayload::Diagnostics {
        checkers,
        diagnostics,
        total,
        truncated,
    }) = payload
    else {
        let why = result
            .content
            .iter()
            .find_map(|c| match c {
                ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                    Some(text.as_str())
                }
                ToolResultContent::Image { .. } => None,
            })
            .unwrap_or("no diagnostics were produced");
        return fail("diagnostics", why, 1);
    };
    if json_out {
        let out = serde_json::json!({
            "checkers": checkers,
            "diagnostics": diagnostics,
            "total": total,
            "truncated": truncated,
        });
        outln!("{out}");
    } else {
        for d in diagnostics {
            outln!("{}", d.one_line());
        }
        // The summary and any note about a checker that failed.
        for block in &result.content {
            if let ToolResultContent::Text { text } = block {
                let mut lines = text.lines();
                if let Some(first) = lines.next() {
                    errln!("{first}");
                }
                for note in text.split("\n\nNote: ").skip(1) {
                    errln!("Note: {note}");
                }
            }
        }
    }
    let errors = diagnostics.iter().any(|d| d.severity == Severity::Error);
    i32::from(errors || result.is_error)
}
