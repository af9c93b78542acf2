//! `riot sessions …` and `riot config show`.

use riot_kernel::Kernel;
use riot_protocol::{Message, SessionId, UserBlock};
use serde_json::json;

use crate::cli::SharedOptions;
use crate::exec::{EXIT_USAGE, flag_layer};
use crate::world;

fn kernel() -> Result<(Kernel, std::collections::BTreeMap<String, String>), String> {
    let env = world::environment();
    let home = world::riot_home(&env)?;
    Ok((Kernel::new(world::capabilities(), home), env))
}

fn fail(command: &str, message: &str, code: i32) -> i32 {
    eprintln!("riot {command}: {message}");
    code
}

/// `riot sessions list [--json]`.
pub fn sessions_list(json_out: bool) -> i32 {
    let (kernel, _) = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("sessions list", &e, EXIT_USAGE),
    };
    let sessions = match kernel.store().list() {
        Ok(s) => s,
        Err(e) => return fail("sessions list", &e.to_string(), 1),
    };
    // Subagent transcripts belong to their parent session; `sessions show
    // ID` still opens one.
    let sessions: Vec<_> = sessions
        .into_iter()
        .filter(|s| s.parent.is_none())
        .collect();
    if json_out {
        let rows: Vec<_> = sessions
            .iter()
            .map(|s| {
                json!({"id": s.id, "title": s.title, "cwd": s.cwd, "created_ms": s.created_ms,
                       "updated_ms": s.updated_ms, "messages": s.messages, "model": s.model})
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else if sessions.is_empty() {
        println!("No sessions yet.");
    } else {
        for s in sessions {
            println!(
                "{}  {}  {}  {} messages  {}",
                s.id,
                s.updated_ms,
                s.cwd.display(),
                s.messages,
                s.title
            );
        }
    }
    0
}

/// `riot sessions show ID [--json]`.
pub fn sessions_show(id: &str, json_out: bool) -> i32 {
    let (kernel, _) = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("sessions show", &e, EXIT_USAGE),
    };
    let id = SessionId::new(id);
    if json_out {
        return match kernel.store().records(&id) {
            Ok(records) => {
                for r in records {
                    println!("{}", serde_json::to_string(&r).unwrap_or_default());
                }
                0
            }
            Err(e) => fail("sessions show", &e.to_string(), 1),
        };
    }
    let session = match kernel.store().load(&id) {
        Ok(s) => s,
        Err(e) => return fail("sessions show", &e.to_string(), 1),
    };
    println!(
        "session {}  model {}  {}",
        session.meta.id,
        session.model,
        session.meta.cwd.display()
    );
    for m in &session.messages {
        match m {
            Message::User(u) => {
                for b in &u.content {
                    match b {
                        UserBlock::Text { text } => println!("\n> {text}"),
                        UserBlock::ToolResult {
                            tool_use_id,
                            is_error,
                            ui,
                            ..
                        } => {
                            let what = ui.as_ref().map_or("", |u| u.describe.as_str());
                            let mark = if *is_error { "failed" } else { "done" };
                            println!("  [{tool_use_id}] {mark} {what}");
                        }
                        UserBlock::Image { .. } => println!("> [image]"),
                        UserBlock::Attachment { title, .. } => println!("> [attached {title}]"),
                    }
                }
            }
            Message::Assistant(a) => {
                let text = a.text();
                if !text.is_empty() {
                    println!("\n{text}");
                }
                for t in a.tool_uses() {
                    println!("  → {} {}", t.name, t.input);
                }
                if a.interrupted {
                    println!("  (interrupted)");
                }
            }
            Message::System(s) => println!("\n[riot] {}", s.text),
        }
    }
    0
}

/// `riot sessions delete ID`.
pub fn sessions_delete(id: &str) -> i32 {
    let (kernel, _) = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("sessions delete", &e, EXIT_USAGE),
    };
    let session = SessionId::new(id);
    match kernel.store().delete(&session) {
        Ok(()) => {
            // What the session had read goes with it.
            let _ =
                std::fs::remove_file(riot_kernel::tools::file_state_path(kernel.home(), &session));
            println!("Deleted session {id}.");
            0
        }
        Err(e) => fail("sessions delete", &e.to_string(), 1),
    }
}

/// `riot config show [--json]`.
pub async fn config_show(shared: &SharedOptions, json_out: bool) -> i32 {
    let (kernel, env) = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("config show", &e, EXIT_USAGE),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return fail("config show", &e, EXIT_USAGE),
    };
    let loaded = match kernel
        .load_config(&cwd, &env, &flag_layer(shared), shared.trust_project)
        .await
    {
        Ok(l) => l,
        Err(e) => return fail("config show", &e.to_string(), EXIT_USAGE),
    };
    let config = &loaded.config;
    if json_out {
        let mut value = serde_json::to_value(config).unwrap_or_default();
        value["project_root"] = json!(loaded.project_root);
        value["trusted"] = json!(loaded.trusted);
        println!("{value}");
        return 0;
    }
    let row = |key: &str, value: Option<String>, source: Option<String>| match (value, source) {
        (Some(v), Some(s)) => println!("{key:<24} {v:<40} ({s})"),
        _ => println!("{key:<24} (not set)"),
    };
    row(
        "provider",
        config.provider.as_ref().map(|v| v.value.clone()),
        config.provider.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "base_url",
        config.base_url.as_ref().map(|v| v.value.clone()),
        config.base_url.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "model",
        config.model.as_ref().map(|v| v.value.clone()),
        config.model.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "api_key_env",
        config.api_key_env.as_ref().map(|v| v.value.clone()),
        config.api_key_env.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "fallback_model",
        config.fallback_model.as_ref().map(|v| v.value.clone()),
        config.fallback_model.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "context_window",
        config.context_window.as_ref().map(|v| v.value.to_string()),
        config.context_window.as_ref().map(|v| v.source.to_string()),
    );
    row(
        "max_output_tokens",
        config
            .max_output_tokens
            .as_ref()
            .map(|v| v.value.to_string()),
        config
            .max_output_tokens
            .as_ref()
            .map(|v| v.source.to_string()),
    );
    row(
        "stream_idle_timeout_ms",
        config
            .stream_idle_timeout_ms
            .as_ref()
            .map(|v| v.value.to_string()),
        config
            .stream_idle_timeout_ms
            .as_ref()
            .map(|v| v.source.to_string()),
    );
    println!(
        "{:<24} {:<40} ({})",
        "permission mode",
        config.mode(),
        config
            .default_mode
            .as_ref()
            .map_or("default".to_owned(), |m| m.source.to_string())
    );
    for rule in &config.rules {
        println!(
            "{:<24} {:<40} ({})",
            format!("rule: {:?}", rule.behavior).to_lowercase(),
            rule.rule,
            rule.from
        );
    }
    println!("{:<24} {}", "project", loaded.project_root.display());
    println!("{:<24} {}", "trusted", loaded.trusted);
    if let Some(notice) = config.trust_notice() {
        println!("\n{notice}");
    }
    for warning in &config.warnings {
        println!("warning: {warning}");
    }
    for key in &config.unknown_keys {
        println!("warning: unknown settings key {key}");
    }
    0
}

/// `riot permissions check --tool NAME --input JSON`: the chain's decision
/// as JSON; nothing is executed. An Ask stays an Ask here (a face with
/// nobody to answer turns it into a Deny at the gate).
pub async fn permissions_check(shared: &SharedOptions, tool: &str, input: &str) -> i32 {
    let (kernel, env) = match kernel() {
        Ok(k) => k,
        Err(e) => return fail("permissions check", &e, EXIT_USAGE),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return fail("permissions check", &e, EXIT_USAGE),
    };
    let input: serde_json::Value = match serde_json::from_str(input) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                "permissions check",
                &format!("--input is not valid JSON: {e}"),
                EXIT_USAGE,
            );
        }
    };
    match kernel
        .check_permission(
            &cwd,
            &env,
            &flag_layer(shared),
            shared.trust_project,
            tool,
            input,
        )
        .await
    {
        Ok(result) => {
            println!("{}", riot_permissions::CheckReport { result }.to_json());
            0
        }
        Err(e) => fail("permissions check", &e.to_string(), EXIT_USAGE),
    }
}
