//! `riot mcp list|add|remove` (docs/interfaces.md): the MCP servers of the user
//! configuration (and of the project, once trusted) and their status.
//! `list` starts each server to learn its status, waits for all of them to
//! settle (at most the startup timeout), and stops them again.

use std::collections::BTreeMap;
use std::sync::Arc;

use riot_kernel::Kernel;
use riot_mcp::{HubOptions, McpHub, ServerConfig, ServerStatus, Transport};
use serde_json::json;

use crate::cli::SharedOptions;
use crate::cli::flag_layer;
use crate::out::{errln, outln};
use crate::world;
use riot_kernel::error::EXIT_USAGE;

fn fail(command: &str, message: &str, code: i32) -> i32 {
    errln!("riot mcp {command}: {message}");
    code
}

/// How a server is reached, in one line.
fn target(server: &ServerConfig) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http { url, .. } => url.clone(),
    }
}

fn status_text(status: &ServerStatus) -> String {
    match status {
        ServerStatus::Connecting => "still connecting".into(),
        ServerStatus::Ready { tools } => format!("ready ({tools} tools)"),
        ServerStatus::Failed { reason } => format!("failed: {reason}"),
        ServerStatus::Disabled => "disabled".into(),
    }
}

/// `riot mcp list [--json]`.
pub async fn list(shared: &SharedOptions, json_out: bool) -> i32 {
    let env = world::environment();
    let home = match world::riot_home(&env) {
        Ok(h) => h,
        Err(e) => return fail("list", &e.to_string(), e.exit_code()),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return fail("list", &e.to_string(), e.exit_code()),
    };
    let caps = world::capabilities();
    let kernel = Kernel::new(caps.clone(), home.clone());
    let loaded = match kernel
        .load_config(&cwd, &env, &flag_layer(shared), shared.trust_project)
        .await
    {
        Ok(l) => l,
        Err(e) => return fail("list", &e.to_string(), e.exit_code()),
    };
    let config = riot_mcp::config::load(
        caps.fs.as_ref(),
        &home,
        &loaded.project_root,
        loaded.trusted,
    )
    .await;
    for error in &config.errors {
        errln!("riot mcp list: {error}");
    }
    for warning in &config.warnings {
        errln!("riot mcp list: {warning}");
    }
    let mut options = HubOptions::new(Arc::clone(&caps.clock), &loaded.project_root)
        .with_env(env.clone())
        .with_env_remove(kernel.scrubbed_env(&loaded.config));
    if let Some(ms) = env
        .get("RIOT_MCP_STARTUP_TIMEOUT_MS")
        .and_then(|v| v.parse().ok())
    {
        options = options.with_startup_timeout_ms(ms);
    }
    let timeout = options.startup_timeout_ms;
    let hub = McpHub::new(config.servers.clone(), options);
    if let Err(e) = hub.start() {
        return fail("list", &e.to_string(), 1);
    }
    // A little beyond the startup timeout: every server has settled by then.
    hub.wait_settled(timeout + 1_000).await;
    let statuses: BTreeMap<String, ServerStatus> = hub.statuses();
    hub.shutdown().await;

    if json_out {
        let mut rows: Vec<serde_json::Value> = config
            .servers
            .iter()
            .map(|s| {
                let status = statuses
                    .get(&s.name)
                    .cloned()
                    .unwrap_or(ServerStatus::Connecting);
                let (state, tools, reason) = match &status {
                    ServerStatus::Connecting => ("connecting", None, None),
                    ServerStatus::Ready { tools } => ("ready", Some(*tools), None),
                    ServerStatus::Failed { reason } => ("failed", None, Some(reason.clone())),
                    ServerStatus::Disabled => ("disabled", None, None),
                };
                json!({
                    "name": s.name,
                    "scope": s.scope.to_string(),
                    "transport": s.transport.kind(),
                    "target": target(s),
                    "status": state,
                    "tools": tools,
                    "reason": reason,
                })
            })
            .collect();
        rows.extend(config.untrusted.iter().map(|name| {
            json!({"name": name, "scope": "project", "status": "untrusted",
                   "reason": "the project is not trusted; rerun with --trust-project"})
        }));
        outln!("{}", serde_json::Value::Array(rows));
        return 0;
    }
    if config.servers.is_empty() && config.untrusted.is_empty() {
        outln!(
            "No MCP servers configured. Add one with `riot mcp add NAME COMMAND [ARGS...]` or `riot mcp add NAME URL`."
        );
        return 0;
    }
    for s in &config.servers {
        let status = statuses
            .get(&s.name)
            .cloned()
            .unwrap_or(ServerStatus::Connecting);
        outln!(
            "{}  {}  {}  {}  {}",
            s.name,
            s.scope,
            s.transport.kind(),
            target(s),
            status_text(&status)
        );
    }
    if let Some(notice) = config.trust_notice() {
        outln!("{notice}");
    }
    0
}

/// `riot mcp add [--transport KIND] [-e K=V]... [-H 'N: V']... NAME TARGET [ARGS...]`.
pub async fn add(
    transport: Option<&str>,
    env_pairs: &[String],
    header_lines: &[String],
    name: &str,
    target: &[String],
) -> i32 {
    let env = world::environment();
    let home = match world::riot_home(&env) {
        Ok(h) => h,
        Err(e) => return fail("add", &e.to_string(), e.exit_code()),
    };
    let Some((first, args)) = target.split_first() else {
        return fail("add", "give the command or URL after the name", EXIT_USAGE);
    };
    let looks_like_url = first.starts_with("http://") || first.starts_with("https://");
    let kind = match transport {
        Some(k @ ("stdio" | "http")) => k,
        Some("streamable-http") => "http",
        Some(other) => {
            return fail(
                "add",
                &format!("unknown transport `{other}`; use stdio or http"),
                EXIT_USAGE,
            );
        }
        None if looks_like_url => "http",
        None => "stdio",
    };
    let transport = if kind == "http" {
        if !args.is_empty() {
            return fail(
                "add",
                "an HTTP server takes one URL and no arguments",
                EXIT_USAGE,
            );
        }
        if !env_pairs.is_empty() {
            return fail(
                "add",
                "-e sets a stdio server's environment; use -H for HTTP headers",
                EXIT_USAGE,
            );
        }
        let mut headers = BTreeMap::new();
        for line in header_lines {
            let Some((key, value)) = line.split_once(':') else {
                return fail(
                    "add",
                    &format!("header `{line}` is not `Name: value`"),
                    EXIT_USAGE,
                );
            };
            headers.insert(key.trim().to_owned(), value.trim().to_owned());
        }
        Transport::Http {
            url: first.clone(),
            headers,
        }
    } else {
        if !header_lines.is_empty() {
            return fail(
                "add",
                "-H sets an HTTP server's headers; use -e for a stdio server's environment",
                EXIT_USAGE,
            );
        }
        let mut vars = BTreeMap::new();
        for pair in env_pairs {
            let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                return fail("add", &format!("`{pair}` is not KEY=VALUE"), EXIT_USAGE);
            };
            vars.insert(key.to_owned(), value.to_owned());
        }
        Transport::Stdio {
            command: first.clone(),
            args: args.to_vec(),
            env: vars,
            cwd: None,
        }
    };
    let mut server = ServerConfig::session(name, transport);
    server.scope = riot_mcp::ConfigScope::User;
    let fs = world::capabilities().fs;
    match riot_mcp::config::add_server(fs.as_ref(), &home, &server).await {
        Ok(path) => {
            outln!(
                "Added MCP server `{name}` ({kind}) to {}. Its tools are named mcp__{name}__<tool>.",
                path.display()
            );
            0
        }
        Err(e) => fail("add", &e.to_string(), EXIT_USAGE),
    }
}

/// `riot mcp remove NAME`.
pub async fn remove(name: &str) -> i32 {
    let env = world::environment();
    let home = match world::riot_home(&env) {
        Ok(h) => h,
        Err(e) => return fail("remove", &e.to_string(), e.exit_code()),
    };
    let fs = world::capabilities().fs;
    match riot_mcp::config::remove_server(fs.as_ref(), &home, name).await {
        Ok(true) => {
            outln!(
                "Removed MCP server `{name}` from {}.",
                home.join("mcp.json").display()
            );
            0
        }
        Ok(false) => fail(
            "remove",
            &format!(
                "no MCP server `{name}` in {}; `riot mcp list` shows the configured ones",
                home.join("mcp.json").display()
            ),
            EXIT_USAGE,
        ),
        Err(e) => fail("remove", &e.to_string(), 1),
    }
}
