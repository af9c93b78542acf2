//! What hooks are configured: events, matchers, the file shapes, and
//! loading them from every layer with the trust rule.

use std::fmt;
use std::path::{Path, PathBuf};

use riot_protocol::FileSystem;
use serde_json::Value;

use riot_config::{self as config, ConfigError, Layer, SettingsFile};

/// Seconds a hook may run when its entry gives no `timeout`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The events hooks can attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
    PreCompact,
}

impl HookEvent {
    const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SessionStart,
        HookEvent::PreCompact,
    ];

    /// The name used in files and in the event's `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the group's matcher applies (tool events match the tool
    /// name, SessionStart the source, PreCompact the trigger).
    fn uses_matcher(self) -> bool {
        !matches!(self, HookEvent::UserPromptSubmit | HookEvent::Stop)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which subjects (tool names) a group applies to.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// `*`, an empty string or no matcher.
    All,
    /// `Bash` or `Edit|Write`: exact names.
    Names(Vec<String>),
    /// Anything else is a regular expression matched against the whole name.
    Regex(regex::Regex),
}

impl Matcher {
    /// Parses a matcher; a bad regular expression is an error.
    pub fn parse(text: &str) -> Result<Self, BadMatcher> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if text.split('|').all(plain) {
            return Ok(Matcher::Names(text.split('|').map(str::to_owned).collect()));
        }
        regex::Regex::new(&format!("^(?:{text})$"))
            .map(Matcher::Regex)
            .map_err(BadMatcher)
    }

    /// Whether `subject` is matched.
    pub fn matches(&self, subject: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == subject),
            Matcher::Regex(re) => re.is_match(subject),
        }
    }
}

/// A matcher that is neither a tool name, `A|B` nor a regular expression
/// that compiles. The message follows the key (`….matcher is not …`).
#[derive(Debug, Clone, thiserror::Error)]
#[error("is not a tool name, `A|B` or a valid regular expression: {0}")]
pub struct BadMatcher(#[source] pub regex::Error);

/// One command hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandHook {
    pub command: String,
    pub timeout_ms: u64,
}

/// A matcher and its hooks, for one event, from one file.
#[derive(Debug, Clone)]
pub struct HookGroup {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub hooks: Vec<CommandHook>,
    /// The file it came from (for logs).
    pub source: PathBuf,
}

/// Every configured hook, in layer order.
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    pub groups: Vec<HookGroup>,
    /// Hooks skipped because Riot does not run them (an event it does not
    /// have, a hook type other than `command`), each naming its file: files
    /// written for other agents may hold them. Shown by `riot config show`.
    pub skipped: Vec<String>,
}

impl HookConfig {
    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Whether any hook listens to `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.groups.iter().any(|g| g.event == event)
    }

    /// The commands to run for `event` and `subject`, each once, in
    /// configuration order.
    pub fn matching(&self, event: HookEvent, subject: Option<&str>) -> Vec<CommandHook> {
        let mut out: Vec<CommandHook> = Vec::new();
        for group in self.groups.iter().filter(|g| g.event == event) {
            let applies = !event.uses_matcher()
                || match subject {
                    Some(s) => group.matcher.matches(s),
                    None => true,
                };
            if !applies {
                continue;
            }
            for hook in &group.hooks {
                if !out.iter().any(|h| h.command == hook.command) {
                    out.push(hook.clone());
                }
            }
        }
        out
    }

    /// Adds the groups of one `hooks` object (the value of a settings
    /// file's `hooks` key, or a whole `hooks.json`).
    pub fn add(&mut self, path: &Path, hooks: &Value) -> Result<(), ConfigError> {
        let groups = parse_hooks_noting(path, hooks, &mut self.skipped)?;
        self.groups.extend(groups);
        Ok(())
    }
}

fn bad(path: &Path, key: String, problem: impl Into<String>) -> ConfigError {
    ConfigError::BadValue {
        path: path.to_path_buf(),
        key,
        problem: problem.into(),
    }
}

/// Parses a `hooks` object. Unknown events and hook types other than
/// `command` are skipped with a warning (files written for other agents
/// may have them); a wrong shape is an error naming the file and key.
pub fn parse_hooks(path: &Path, hooks: &Value) -> Result<Vec<HookGroup>, ConfigError> {
    parse_hooks_noting(path, hooks, &mut Vec::new())
}

/// [`parse_hooks`], saying in `skipped` what was skipped.
fn parse_hooks_noting(
    path: &Path,
    hooks: &Value,
    skipped: &mut Vec<String>,
) -> Result<Vec<HookGroup>, ConfigError> {
    let Value::Object(events) = hooks else {
        return Err(bad(
            path,
            "hooks".into(),
            "must be an object keyed by event name",
        ));
    };
    let mut groups = Vec::new();
    for (name, entries) in events {
        let Some(event) = HookEvent::parse(name) else {
            tracing::warn!(file = %path.display(), event = %name, "unknown hook event; skipped");
            skipped.push(format!(
                "{}: hooks.{name} skipped: Riot has no {name} event (it runs {})",
                path.display(),
                HookEvent::ALL.map(HookEvent::name).join(", ")
            ));
            continue;
        };
        let Value::Array(entries) = entries else {
            return Err(bad(
                path,
                format!("hooks.{name}"),
                "must be a list of {\"matcher\", \"hooks\"} objects",
            ));
        };
        for (i, entry) in entries.iter().enumerate() {
            let key = format!("hooks.{name}[{i}]");
            let Value::Object(entry) = entry else {
                return Err(bad(path, key, "must be an object with `hooks`"));
            };
            let matcher = match entry.get("matcher") {
                None | Some(Value::Null) => Matcher::All,
                Some(Value::String(m)) => Matcher::parse(m)
                    .map_err(|p| bad(path, format!("{key}.matcher"), p.to_string()))?,
                Some(_) => return Err(bad(path, format!("{key}.matcher"), "must be a string")),
            };
            let Some(Value::Array(list)) = entry.get("hooks") else {
                return Err(bad(
                    path,
                    format!("{key}.hooks"),
                    "must be a list of {\"type\": \"command\", \"command\": ...} objects",
                ));
            };
            let mut hooks = Vec::new();
            for (j, hook) in list.iter().enumerate() {
                let key = format!("{key}.hooks[{j}]");
                let Value::Object(hook) = hook else {
                    return Err(bad(path, key, "must be an object"));
                };
                match hook.get("type").and_then(Value::as_str) {
                    Some("command") | None => {}
                    Some(other) => {
                        tracing::warn!(file = %path.display(), hook = %key, kind = %other, "only command hooks are supported; skipped");
                        skipped.push(format!(
                            "{}: {key} skipped: a `{other}` hook; Riot runs only `command` hooks",
                            path.display()
                        ));
                        continue;
                    }
                }
                let Some(command) = hook.get("command").and_then(Value::as_str) else {
                    return Err(bad(path, format!("{key}.command"), "must be a string"));
                };
                let timeout_ms = match hook.get("timeout") {
                    None | Some(Value::Null) => DEFAULT_TIMEOUT_SECS * 1000,
                    Some(v) => match v.as_f64() {
                        Some(secs) if secs > 0.0 && secs.is_finite() => {
                            // Whole milliseconds; a day is far beyond any sane hook.
                            (secs.min(86_400.0) * 1000.0).round() as u64
                        }
                        _ => {
                            return Err(bad(
                                path,
                                format!("{key}.timeout"),
                                "must be a positive number of seconds",
                            ));
                        }
                    },
                };
                hooks.push(CommandHook {
                    command: command.to_owned(),
                    timeout_ms,
                });
            }
            groups.push(HookGroup {
                event,
                matcher,
                hooks,
                source: path.to_path_buf(),
            });
        }
    }
    Ok(groups)
}

/// Parses a `hooks.json` file: the hooks object itself, or (as in Claude
/// Code plugins) an object whose `hooks` key holds it. Bad JSON is an
/// error naming the file and line.
pub fn parse_hooks_file(path: &Path, text: &str) -> Result<Vec<HookGroup>, ConfigError> {
    parse_hooks_file_noting(path, text, &mut Vec::new())
}

fn parse_hooks_file_noting(
    path: &Path,
    text: &str,
    skipped: &mut Vec<String>,
) -> Result<Vec<HookGroup>, ConfigError> {
    let file = config::parse_settings(path, Layer::User, text)?;
    match file.json.get("hooks") {
        Some(inner @ Value::Object(_)) => parse_hooks_noting(path, inner, skipped),
        _ => parse_hooks_noting(path, &Value::Object(file.json), skipped),
    }
}

/// Reads every layer's hooks: the `hooks` key of the settings files
/// already read (the user's, then the project's in the order of
/// [`config::settings_locations`] — Claude Code's `.claude/settings*.json`
/// among them), and the `hooks.json` files. A project's hooks count only
/// when `trusted`; an untrusted project's `hooks.json` is named in
/// `ignored` (the settings keys are reported by [`config::layer`]).
pub async fn load(
    fs: &dyn FileSystem,
    home: &Path,
    project_root: &Path,
    settings: &[SettingsFile],
    trusted: bool,
    ignored: &mut Vec<String>,
) -> Result<HookConfig, ConfigError> {
    let mut config = HookConfig::default();
    let user_file = home.join("hooks.json");
    let project_file = project_root.join(".riot/hooks.json");
    for file in settings.iter().filter(|f| f.layer == Layer::User) {
        if let Some(hooks) = file.json.get("hooks") {
            config.add(&file.path, hooks)?;
        }
    }
    if let Some(text) = read_text(fs, &user_file).await? {
        let groups = parse_hooks_file_noting(&user_file, &text, &mut config.skipped)?;
        config.groups.extend(groups);
    }
    if trusted {
        for file in settings.iter().filter(|f| f.layer != Layer::User) {
            if let Some(hooks) = file.json.get("hooks") {
                config.add(&file.path, hooks)?;
            }
        }
    }
    if let Some(text) = read_text(fs, &project_file).await? {
        if trusted {
            let groups = parse_hooks_file_noting(&project_file, &text, &mut config.skipped)?;
            config.groups.extend(groups);
        } else {
            ignored.push(format!("hooks (from {})", project_file.display()));
        }
    }
    Ok(config)
}

async fn read_text(fs: &dyn FileSystem, path: &Path) -> Result<Option<String>, ConfigError> {
    match fs.read(path).await {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ConfigError::Unreadable {
                path: path.to_path_buf(),
                reason: "not UTF-8 text".into(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}
