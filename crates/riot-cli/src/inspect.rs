//! `riot sessions …` and `riot config show`.

use riot_config::{Config, Sourced};
use riot_kernel::Kernel;
use riot_kernel::kernel::LoadedConfig;
use riot_kernel::sandbox::SessionSandbox;
use riot_protocol::{Message, SessionId, UserBlock};
use riot_tools::tools::SearchBackend;
use serde_json::json;

use crate::cli::SharedOptions;
use crate::cli::flag_layer;
use crate::out::{errln, outln};
use crate::world;
use riot_kernel::error::EXIT_USAGE;

/// A kernel in Riot's home as `env` names it.
fn kernel(env: &std::collections::BTreeMap<String, String>) -> Result<Kernel, world::WorldError> {
    let home = world::riot_home(env)?;
    Ok(Kernel::new(world::capabilities(), home))
}

fn fail(command: &str, message: &str, code: i32) -> i32 {
    errln!("riot {command}: {message}");
    code
}

/// `riot sessions list [--json]`.
pub fn sessions_list(json_out: bool) -> i32 {
    let kernel = match kernel(&world::environment()) {
        Ok(k) => k,
        Err(e) => return fail("sessions list", &e.to_string(), e.exit_code()),
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
                // Unknown (a model without a price, or no request
                // recorded with its cost) is null, never 0.
                let cost_usd = s.cost.as_ref().and_then(|c| c.usd);
                json!({"id": s.id, "title": s.title, "cwd": s.cwd, "created_ms": s.created_ms,
                       "updated_ms": s.updated_ms, "messages": s.messages, "model": s.model,
                       "cost_usd": cost_usd, "worktree": s.worktree})
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows));
    } else if sessions.is_empty() {
        outln!("No sessions yet.");
    } else {
        for s in sessions {
            let worktree = s
                .worktree
                .as_ref()
                .map(|w| format!("  [worktree {}, {}]", w.name, w.branch))
                .unwrap_or_default();
            outln!(
                "{}  {}  {}  {}  {}  {}{worktree}",
                s.id,
                utc_minute(s.updated_ms),
                s.cwd.display(),
                count(s.messages, "message"),
                riot_protocol::format_usd(s.cost.as_ref().and_then(|c| c.usd)),
                s.title
            );
        }
    }
    0
}

/// Unix milliseconds as a UTC date and time to the minute, labelled so
/// nobody takes it for local time: `2026-12-01 12:34 UTC`.
pub(crate) fn utc_minute(ms: u64) -> String {
    let minutes = ms / 60_000 % (24 * 60);
    format!(
        "{} {:02}:{:02} UTC",
        riot_kernel::prompt::date_of(ms),
        minutes / 60,
        minutes % 60
    )
}

fn count(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// `riot sessions show ID [--json]`.
pub fn sessions_show(id: &str, json_out: bool) -> i32 {
    let kernel = match kernel(&world::environment()) {
        Ok(k) => k,
        Err(e) => return fail("sessions show", &e.to_string(), e.exit_code()),
    };
    let id = SessionId::new(id);
    if json_out {
        return match kernel.store().records(&id) {
            Ok(records) => {
                for r in records {
                    outln!("{}", serde_json::to_string(&r).unwrap_or_default());
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
    let endpoint = match (&session.meta.provider, &session.meta.base_url) {
        (Some(provider), Some(base_url)) => format!(" ({provider} at {base_url})"),
        (Some(provider), None) => format!(" ({provider})"),
        _ => String::new(),
    };
    outln!(
        "session {}  model {}{endpoint}  {}",
        session.meta.id,
        session.model,
        session.meta.cwd.display()
    );
    for shown in &session.shown {
        match &shown.message {
            Message::User(u) => {
                for b in &u.content {
                    match b {
                        UserBlock::Text { text } => outln!("\n> {text}"),
                        UserBlock::ToolResult {
                            tool_use_id,
                            is_error,
                            ui,
                            ..
                        } => {
                            let what = ui.as_ref().map_or("", |u| u.describe.as_str());
                            let mark = if *is_error { "failed" } else { "done" };
                            outln!("  [{tool_use_id}] {mark} {what}");
                        }
                        UserBlock::Image { .. } => outln!("> [image]"),
                        UserBlock::Attachment { title, .. } => outln!("> [attached {title}]"),
                    }
                }
                if shown.interrupted {
                    outln!("  (interrupted before any reply; not sent to the model again)");
                }
                if shown.rewound {
                    outln!("  (withdrawn by a rewind; not sent to the model again)");
                }
            }
            Message::Assistant(a) => {
                let text = a.text();
                if !text.is_empty() {
                    outln!("\n{text}");
                }
                for t in a.tool_uses() {
                    outln!("  → {} {}", t.name, t.input);
                }
                if a.interrupted {
                    outln!("  (interrupted)");
                }
            }
            Message::System(s) => outln!("\n[riot] {}", s.text),
        }
    }
    0
}

/// `riot sessions delete ID`.
pub fn sessions_delete(id: &str) -> i32 {
    let kernel = match kernel(&world::environment()) {
        Ok(k) => k,
        Err(e) => return fail("sessions delete", &e.to_string(), e.exit_code()),
    };
    let session = SessionId::new(id);
    match kernel.store().delete(&session) {
        Ok(()) => {
            // What the session had read goes with it.
            let _ =
                std::fs::remove_file(riot_kernel::tools::file_state_path(kernel.home(), &session));
            outln!("Deleted session {id}.");
            0
        }
        Err(e) => fail("sessions delete", &e.to_string(), 1),
    }
}

/// `riot config show [--json]`.
pub async fn config_show(shared: &SharedOptions, json_out: bool) -> i32 {
    let env = world::environment();
    let kernel = match kernel(&env) {
        Ok(k) => k,
        Err(e) => return fail("config show", &e.to_string(), e.exit_code()),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return fail("config show", &e.to_string(), e.exit_code()),
    };
    let loaded = match kernel
        .load_config(&cwd, &env, &flag_layer(shared), shared.trust_project)
        .await
    {
        Ok(l) => l,
        Err(e) => return fail("config show", &e.to_string(), e.exit_code()),
    };
    let config = &loaded.config;
    let hooks = hook_rows(&loaded);
    let shown = Shown {
        loaded: &loaded,
        hooks: &hooks,
        // Which service WebSearch asks, or why it is not declared.
        search: riot_kernel::web::search_backend(config, &env).map_err(Undeclared::WebSearch),
        // What the OS sandbox enforces for this project (probed).
        sandbox: kernel.session_sandbox(config, &cwd, &env),
        browser: browser_status(config),
    };
    if json_out {
        print_config_json(&shown);
        return 0;
    }
    print_endpoint_rows(config, &shown.search);
    print_sandbox_row(&shown.sandbox);
    print_browser_row(config, &shown.browser);
    print_permission_rows(config, &hooks);
    print_project_rows(&loaded);
    0
}

/// What `riot config show` shows beside the settings themselves.
struct Shown<'a> {
    loaded: &'a LoadedConfig,
    /// Every hook as (event, command, source).
    hooks: &'a [(String, String, String)],
    search: Result<SearchBackend, Undeclared>,
    sandbox: SessionSandbox,
    /// Which Chromium the Browser tool would drive and whether headless,
    /// or why it is not declared ([`browser_status`]).
    browser: Result<(std::path::PathBuf, bool), Undeclared>,
}

/// Every configured hook as (event, command, the file it came from).
fn hook_rows(loaded: &LoadedConfig) -> Vec<(String, String, String)> {
    loaded
        .hooks
        .groups
        .iter()
        .flat_map(|g| {
            g.hooks.iter().map(|h| {
                (
                    g.event.name().to_owned(),
                    h.command.clone(),
                    g.source.display().to_string(),
                )
            })
        })
        .collect()
}

/// `riot config show --json`: the settings as one JSON object, with what
/// else is shown beside them.
fn print_config_json(shown: &Shown<'_>) {
    let loaded = shown.loaded;
    let config = &loaded.config;
    let mut value = serde_json::to_value(config).unwrap_or_default();
    value["project_root"] = json!(loaded.project_root);
    value["trusted"] = json!(loaded.trusted);
    value["notes"] = json!(config.endpoint_notes());
    value["hooks"] = shown
        .hooks
        .iter()
        .map(|(event, command, source)| {
            json!({"event": event, "command": command, "source": source})
        })
        .collect();
    value["hooks_skipped"] = json!(loaded.hooks.skipped);
    value["web_search_unavailable"] = json!(shown.search.as_ref().err().map(ToString::to_string));
    value["sandbox_status"] = crate::sandbox_cmd::status_json(&shown.sandbox);
    value["browser_status"] = match &shown.browser {
        Ok((path, headless)) => json!({"executable": path, "headless": headless}),
        Err(why) => json!({"unavailable": why.to_string()}),
    };
    outln!("{value}");
}

/// One row of `riot config show` for a setting: its value and where the
/// value came from, or that it is not set.
fn setting_row<T: ToString>(key: &str, setting: Option<&Sourced<T>>) {
    match setting.map(|v| (v.value.to_string(), v.source.to_string())) {
        Some((v, s)) => outln!("{key:<24} {v:<40} ({s})"),
        None => outln!("{key:<24} (not set)"),
    }
}

/// The rows of the model endpoint and its limits, with WebSearch's
/// backend (or why it is not declared).
fn print_endpoint_rows(config: &Config, search: &Result<SearchBackend, Undeclared>) {
    let notes = config.endpoint_notes();
    setting_row("provider", config.provider.as_ref());
    setting_row("base_url", config.base_url.as_ref());
    for note in &notes {
        outln!("{:<24} {note}", "");
    }
    setting_row("model", config.model.as_ref());
    setting_row("api_key_env", config.api_key_env.as_ref());
    setting_row("fallback_model", config.fallback_model.as_ref());
    setting_row("small_model", config.small_model.as_ref());
    match search {
        Ok(backend) => {
            let source = config
                .web_search
                .as_ref()
                .map_or_else(|| "$BRAVE_API_KEY".to_owned(), |s| s.source.to_string());
            outln!("{:<24} {:<40} ({source})", "web_search", backend.describe());
        }
        Err(why) => outln!("{:<24} WebSearch is not declared: {why}", "web_search"),
    }
    setting_row("context_window", config.context_window.as_ref());
    setting_row("max_output_tokens", config.max_output_tokens.as_ref());
    setting_row(
        "stream_idle_timeout_ms",
        config.stream_idle_timeout_ms.as_ref(),
    );
}

/// The row of what the OS sandbox enforces, or why it enforces nothing.
fn print_sandbox_row(sandbox: &SessionSandbox) {
    let network = if sandbox.status.network {
        "allowed"
    } else {
        "off"
    };
    let auto_allow = if sandbox.allows_unasked() {
        ", auto-allow on"
    } else {
        ""
    };
    let why = sandbox
        .status
        .reason
        .as_deref()
        .unwrap_or("no reason was given");
    if sandbox.enforced() {
        outln!(
            "{:<24} enforced by {}, network {network}{auto_allow}",
            "sandbox",
            sandbox.status.mechanism.as_str(),
        );
    } else {
        outln!("{:<24} not enforced: {why}", "sandbox");
    }
}

/// The row of the Chromium the Browser tool would drive, or why the tool
/// is not declared.
fn print_browser_row(config: &Config, browser: &Result<(std::path::PathBuf, bool), Undeclared>) {
    let browser_source = config.browser.as_ref().map_or_else(
        || "found on the system".to_owned(),
        |b| b.source.to_string(),
    );
    match browser {
        Ok((path, headless)) => {
            let window = if *headless {
                "headless"
            } else {
                "with a window"
            };
            outln!(
                "{:<24} {:<40} ({browser_source})",
                "browser",
                format!("{} ({window})", path.display())
            );
        }
        Err(why) => outln!("{:<24} Browser is not declared: {why}", "browser"),
    }
}

/// The rows of notifications, the permission mode and rules, the
/// additional directories, the `env` names and the hooks.
fn print_permission_rows(config: &Config, hooks: &[(String, String, String)]) {
    outln!(
        "{:<24} {:<40} ({})",
        "notifications",
        config.notifications.describe(),
        config
            .notifications
            .source
            .as_ref()
            .map_or("default".to_owned(), ToString::to_string)
    );
    outln!(
        "{:<24} {:<40} ({})",
        "permission mode",
        config.mode(),
        config
            .default_mode
            .as_ref()
            .map_or("default".to_owned(), |m| m.source.to_string())
    );
    for rule in &config.rules {
        let written = rule
            .written
            .as_ref()
            .map_or_else(String::new, |w| format!(", written {w}"));
        outln!(
            "{:<24} {:<40} ({}{written})",
            format!("rule: {:?}", rule.behavior).to_lowercase(),
            rule.rule,
            rule.from
        );
    }
    for dir in &config.additional_directories {
        outln!(
            "{:<24} {:<40} ({})",
            "additional directory",
            dir.value.display(),
            dir.source
        );
    }
    // Names only: `env` values are often tokens.
    for (name, var) in &config.env {
        outln!("{:<24} {:<40} ({})", "env", name, var.source);
    }
    for (event, command, source) in hooks {
        outln!(
            "{:<24} {:<40} ({source})",
            format!("hook: {event}"),
            command
        );
    }
}

/// The project and its trust, then the warnings and notes about the
/// settings read.
fn print_project_rows(loaded: &LoadedConfig) {
    let config = &loaded.config;
    outln!("{:<24} {}", "project", loaded.project_root.display());
    outln!("{:<24} {}", "trusted", loaded.trusted);
    if let Some(notice) = config.trust_notice() {
        outln!("\n{notice}");
    }
    for warning in &config.warnings {
        outln!("warning: {warning}");
    }
    for key in &config.unknown_keys {
        outln!("warning: unknown settings key {key}");
    }
    for skipped in &loaded.hooks.skipped {
        outln!("warning: {skipped}");
    }
    for key in &config.unused_keys {
        outln!("note: Claude Code setting Riot does not use: {key}");
    }
}

/// Why `riot config show` finds WebSearch or Browser not declared.
#[derive(Debug, thiserror::Error)]
enum Undeclared {
    /// WebSearch has no service: the kernel's reason.
    #[error(transparent)]
    WebSearch(#[from] riot_kernel::web::NoSearch),
    /// `RIOT_BROWSER=off` turns the browser off.
    #[error("RIOT_BROWSER=off")]
    BrowserOff,
    /// The `browser` setting cannot be used: the reason riot-config gives.
    #[error(transparent)]
    BrowserSetting(#[from] riot_config::BrowserSettingError),
    /// `browser.executable` names something that is not a file.
    #[error("browser.executable {} is not a file", path.display())]
    NotAFile {
        /// The executable as set.
        path: std::path::PathBuf,
    },
    /// No executable is set and no Chromium is installed.
    #[error("no Chromium found (install chromium or set browser.executable)")]
    NoChromium,
}

/// Which Chromium the Browser tool would drive and whether headless, or
/// why the tool is not declared (docs/browser.md).
fn browser_status(config: &riot_config::Config) -> Result<(std::path::PathBuf, bool), Undeclared> {
    if std::env::var("RIOT_BROWSER").is_ok_and(|v| v == "off") {
        return Err(Undeclared::BrowserOff);
    }
    let options = match &config.browser {
        Some(setting) => {
            riot_config::browser_options(&setting.value).map_err(Undeclared::BrowserSetting)?
        }
        None => riot_protocol::BrowserOptions::default(),
    };
    match options.executable {
        Some(path) if path.is_file() => Ok((path, options.headless)),
        Some(path) => Err(Undeclared::NotAFile { path }),
        None => riot_runtime::find_chromium()
            .map(|path| (path, options.headless))
            .ok_or(Undeclared::NoChromium),
    }
}

/// `riot permissions check --tool NAME --input JSON`: the chain's decision
/// as JSON; nothing is executed. An Ask stays an Ask here (a face with
/// nobody to answer turns it into a Deny at the gate).
pub async fn permissions_check(shared: &SharedOptions, tool: &str, input: &str) -> i32 {
    let env = world::environment();
    let kernel = match kernel(&env) {
        Ok(k) => k,
        Err(e) => return fail("permissions check", &e.to_string(), e.exit_code()),
    };
    let cwd = match world::project_dir(shared.cwd.as_ref()) {
        Ok(d) => d,
        Err(e) => return fail("permissions check", &e.to_string(), e.exit_code()),
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
    let flags = flag_layer(shared);
    let at = riot_kernel::tools::Inspect {
        cwd: &cwd,
        env: &env,
        flags: &flags,
        trust_project: shared.trust_project,
    };
    match kernel.check_permission(at, tool, input).await {
        Ok(result) => {
            outln!("{}", riot_permissions::CheckReport { result }.to_json());
            0
        }
        Err(e) => fail("permissions check", &e.to_string(), e.exit_code()),
    }
}
