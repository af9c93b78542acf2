//! `riot permissions check` (docs/interfaces.md): the chain's decision for one
//! call as JSON ([`CheckReport::to_json`]); the CLI gets the decision from
//! `Kernel::check_permission`, which asks the real tools for their facts.
//!
//! [`builtin_query`] derives those facts for the built-in tools from their
//! input the same way the tools do (file tools read `file_path`/`path`,
//! Bash is read-only exactly when [`analyze_command`](crate::analyze_command)
//! says so); it serves this crate's tests and examples, which have no tools.
//! An unknown tool is treated as one that writes (fail closed).

use std::path::{Path, PathBuf};

use riot_protocol::{
    PathAccess, PermissionMode, PermissionQuery, PermissionResult, PermissionTarget,
};
use serde_json::{Value, json};

use crate::bash::analyze_command;

/// The permission query for a built-in tool, derived from its input — a
/// fixture for this crate's tests and examples; the kernel asks the tools.
pub fn builtin_query(
    tool_name: &str,
    input: &Value,
    cwd: &Path,
    mode: PermissionMode,
) -> PermissionQuery {
    let text = |key: &str| input.get(key).and_then(Value::as_str);
    let path_of = |raw: &str| -> PathBuf {
        let p = Path::new(raw);
        // Windows absolute forms (`C:\x`, `\\server\x`, `\\?\x`) are never
        // project-relative, whatever platform judges them.
        let windows_absolute = raw.starts_with("\\\\")
            || (raw.len() > 2
                && raw.as_bytes()[1] == b':'
                && matches!(raw.as_bytes()[2], b'\\' | b'/'));
        if p.is_absolute() || windows_absolute {
            p.to_path_buf()
        } else if raw == "~" || raw.starts_with("~/") {
            // Left as given: the policy expands it against its home, as
            // the file tools do against theirs.
            p.to_path_buf()
        } else {
            cwd.join(p)
        }
    };
    let (is_read_only, target, classifier_input) = match tool_name {
        "Read" | "Glob" | "Grep" => {
            let key = if tool_name == "Read" {
                "file_path"
            } else {
                "path"
            };
            let path = text(key).map_or_else(|| cwd.to_path_buf(), path_of);
            let line = format!("{tool_name} {}", path.display());
            (
                true,
                PermissionTarget::Path {
                    path,
                    access: PathAccess::Read,
                },
                Some(line),
            )
        }
        "Write" | "Edit" | "NotebookEdit" => match text(if tool_name == "NotebookEdit" {
            "notebook_path"
        } else {
            "file_path"
        }) {
            Some(p) => {
                let path = path_of(p);
                let line = format!("{tool_name} {}", path.display());
                (
                    false,
                    PermissionTarget::Path {
                        path,
                        access: PathAccess::Write,
                    },
                    Some(line),
                )
            }
            None => (false, PermissionTarget::Opaque, None),
        },
        "Bash" => {
            let command = text("command").unwrap_or_default().to_owned();
            (
                analyze_command(&command).is_read_only(),
                PermissionTarget::Command {
                    command: command.clone(),
                },
                Some(format!("Bash: {command}")),
            )
        }
        // The Terminal tool: `open`'s command and `write`'s typed lines
        // are judged as Bash's command (riot-tools' terminal.rs).
        "Terminal" => match text("action") {
            Some("open") => {
                let command = text("command").unwrap_or_default().to_owned();
                (
                    false,
                    PermissionTarget::Command {
                        command: command.clone(),
                    },
                    Some(format!("Terminal open: {command}")),
                )
            }
            Some("write") => {
                let typed = text("input").unwrap_or_default().replace("<Enter>", "\n");
                (
                    false,
                    PermissionTarget::Command {
                        command: typed.clone(),
                    },
                    Some(format!("Terminal type: {typed}")),
                )
            }
            Some("read" | "wait") => (true, PermissionTarget::Opaque, None),
            _ => (false, PermissionTarget::Opaque, None),
        },
        // The Browser tool (riot-tools' browser.rs): navigation is judged
        // on the URL like WebFetch; reading the page is read-only.
        "Browser" => match text("action") {
            Some("navigate") => {
                let url = text("url").unwrap_or_default().to_owned();
                (
                    false,
                    PermissionTarget::Url { url: url.clone() },
                    Some(format!("Browser navigate {url}")),
                )
            }
            Some("snapshot" | "screenshot" | "console") => (true, PermissionTarget::Opaque, None),
            _ => (false, PermissionTarget::Opaque, None),
        },
        "WebFetch" => {
            let url = text("url").unwrap_or_default().to_owned();
            (
                false,
                PermissionTarget::Url { url: url.clone() },
                Some(format!("WebFetch {url}")),
            )
        }
        // Tools that only read session state or ask the person.
        "TodoWrite" | "AskUser" | "BashOutput" | "ToolSearch" | "ExitPlanMode" | "TaskOutput" => {
            (true, PermissionTarget::Opaque, None)
        }
        _ => (false, PermissionTarget::Opaque, None),
    };
    PermissionQuery {
        tool_name: tool_name.to_owned(),
        input: input.clone(),
        is_read_only,
        target,
        tool_verdict: PermissionResult::Passthrough,
        classifier_input,
        mode,
        hook: None,
    }
}

/// The decision for `permissions check`, serializable as docs/interfaces.md
/// describes.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub result: PermissionResult,
}

impl CheckReport {
    /// `allow`, `ask` or `deny`.
    pub fn decision(&self) -> &'static str {
        match self.result {
            PermissionResult::Allow { .. } => "allow",
            PermissionResult::Ask { .. } => "ask",
            PermissionResult::Deny { .. } | PermissionResult::Passthrough => "deny",
        }
    }

    /// `{"decision": ..., "reason": {"kind": ..., "detail": ...}, "message": ...}`.
    pub fn to_json(&self) -> Value {
        let (reason, message) = match &self.result {
            PermissionResult::Allow { reason, .. } => (Some(reason), reason.detail().to_owned()),
            PermissionResult::Ask { reason, message }
            | PermissionResult::Deny { reason, message } => (Some(reason), message.clone()),
            PermissionResult::Passthrough => (None, "no decision".to_owned()),
        };
        let reason = match reason {
            Some(r) => json!({"kind": r.kind(), "detail": r.detail()}),
            None => json!({"kind": "unverifiable", "detail": "no decision"}),
        };
        json!({"decision": self.decision(), "reason": reason, "message": message})
    }
}
