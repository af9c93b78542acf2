//! Language-server feedback on edits: [`LspHooks`] wraps a session's tool
//! hooks, and after each successful Write, Edit or NotebookEdit asks the
//! session's [`LanguageServers`] about the edited file; errors the server
//! had not reported for that file before are appended to the tool's
//! result, after the PostToolUse hooks' text (the scheduler runs it after
//! the result budget, so it is never spilled). After each Bash call the
//! servers re-read the documents they have open
//! ([`LanguageServers::after_command`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_protocol::{
    Diagnostic, EditDiagnostics, HookVerdict, LanguageServers, Severity, ToolCall, ToolCallResult,
    ToolHooks,
};
/// The tools whose successful calls change one file's text.
const EDIT_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// The tools whose calls run commands that may change any file.
const COMMAND_TOOLS: &[&str] = &["Bash"];

/// At most this many new diagnostics are listed after an edit.
const MAX_LISTED: usize = 20;

/// A session's tool hooks, then its language servers.
#[derive(Debug)]
pub struct LspHooks {
    inner: Arc<dyn ToolHooks>,
    servers: Arc<dyn LanguageServers>,
    cwd: PathBuf,
    home: Option<PathBuf>,
    /// Per file, the errors last reported to the model.
    reported: Mutex<HashMap<PathBuf, Vec<Diagnostic>>>,
}

impl LspHooks {
    /// `inner`'s hooks with `servers`' feedback after edits in `cwd`.
    pub fn new(
        inner: Arc<dyn ToolHooks>,
        servers: Arc<dyn LanguageServers>,
        cwd: PathBuf,
        home: Option<PathBuf>,
    ) -> Self {
        Self {
            inner,
            servers,
            cwd,
            home,
            reported: Mutex::new(HashMap::new()),
        }
    }

    /// The file a successful edit call changed, as the tool resolved it.
    fn edited_file(&self, call: &ToolCall, result: &ToolCallResult) -> Option<PathBuf> {
        if result.is_error {
            return None;
        }
        let key = EDIT_TOOLS
            .iter()
            .find(|(name, _)| *name == call.name)
            .map(|(_, key)| *key)?;
        let path = call.input.get(key)?.as_str()?;
        if path == "~" || path.starts_with("~/") {
            let rest = path.trim_start_matches('~').trim_start_matches('/');
            return Some(self.home.as_ref()?.join(rest));
        }
        let p = Path::new(path);
        Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        })
    }

    /// What the model reads about `path` after the edit, if anything.
    async fn feedback(&self, path: &Path) -> Option<String> {
        match self.servers.after_edit(path).await {
            EditDiagnostics::NoServer => None,
            EditDiagnostics::NoAnswer { server, detail } => Some(format!(
                "(The language server {server} did not answer about this file: {detail}. The edit itself succeeded.)"
            )),
            EditDiagnostics::Reported {
                server,
                diagnostics,
            } => {
                let errors: Vec<Diagnostic> = diagnostics
                    .into_iter()
                    .filter(|d| d.severity == Severity::Error)
                    .collect();
                let before = self
                    .reported
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(path.to_path_buf(), errors.clone())
                    .unwrap_or_default();
                let new = new_errors(&before, &errors);
                if new.is_empty() {
                    return None;
                }
                let mut text = format!("New diagnostics after this edit ({server}):");
                for d in new.iter().take(MAX_LISTED) {
                    text.push('\n');
                    text.push_str(&d.one_line());
                }
                if new.len() > MAX_LISTED {
                    text.push_str(&format!(
                        "\n… and {} more; run Diagnostics for the whole list.",
                        new.len() - MAX_LISTED
                    ));
                }
                Some(text)
            }
        }
    }
}

/// The errors in `after` that `before` did not have: told apart by code
/// and message, not position (an edit above moves the old ones), counted
/// (two identical errors where there was one is one new).
fn new_errors(before: &[Diagnostic], after: &[Diagnostic]) -> Vec<Diagnostic> {
    let mut old: Vec<(&Option<String>, &str)> = before
        .iter()
        .map(|d| (&d.code, d.message.as_str()))
        .collect();
    let mut out = Vec::new();
    for d in after {
        let key = (&d.code, d.message.as_str());
        if let Some(i) = old.iter().position(|k| *k == key) {
            old.swap_remove(i);
        } else {
            out.push(d.clone());
        }
    }
    out
}

#[async_trait]
impl ToolHooks for LspHooks {
    async fn pre_tool_use(&self, call: &ToolCall) -> HookVerdict {
        self.inner.pre_tool_use(call).await
    }

    async fn before_change(&self, call: &ToolCall, target: &riot_protocol::PermissionTarget) {
        self.inner.before_change(call, target).await;
    }

    async fn after_change(&self, call: &ToolCall) {
        self.inner.after_change(call).await;
    }

    async fn post_tool_use(&self, call: &ToolCall, result: &ToolCallResult) -> Option<String> {
        let hooks = self.inner.post_tool_use(call, result).await;
        // A command may have changed files the servers have open, failed
        // or not: they hear of it before the next edit asks them.
        if COMMAND_TOOLS.contains(&call.name.as_str()) {
            self.servers.after_command().await;
        }
        let lsp = match self.edited_file(call, result) {
            Some(path) => self.feedback(&path).await,
            None => None,
        };
        match (hooks, lsp) {
            (Some(h), Some(l)) => Some(format!("{h}\n\n{l}")),
            (h, l) => h.or(l),
        }
    }
}

#[cfg(test)]
mod tests {
    use riot_protocol::{NoToolHooks, ToolResultContent, ToolUseId};
    use serde_json::json;

    use super::*;

    /// Servers answering from a script, one answer per edit, recording
    /// which files they were asked about.
    #[derive(Debug, Default)]
    struct Scripted {
        answers: Mutex<Vec<EditDiagnostics>>,
        asked: Mutex<Vec<PathBuf>>,
    }

    #[async_trait]
    impl LanguageServers for Scripted {
        async fn after_edit(&self, path: &Path) -> EditDiagnostics {
            self.asked.lock().unwrap().push(path.to_path_buf());
            self.answers.lock().unwrap().remove(0)
        }
        async fn shutdown(&self) {}
    }

    fn error(line: u64, message: &str) -> Diagnostic {
        Diagnostic {
            path: "calc.py".into(),
            line,
            column: 7,
            severity: Severity::Error,
            code: Some("reportUndefinedVariable".into()),
            message: message.into(),
            source: "Pyright".into(),
        }
    }

    fn reported(diagnostics: Vec<Diagnostic>) -> EditDiagnostics {
        EditDiagnostics::Reported {
            server: "pyright-langserver".into(),
            diagnostics,
        }
    }

    fn call(name: &str, input: serde_json::Value) -> ToolCall {
        ToolCall {
            id: ToolUseId::new("toolu_1"),
            name: name.into(),
            input,
        }
    }

    fn ok() -> ToolCallResult {
        ToolCallResult {
            tool_use_id: ToolUseId::new("toolu_1"),
            content: vec![ToolResultContent::text("ok")],
            is_error: false,
            ui: None,
            side_messages: Vec::new(),
        }
    }

    fn hooks(answers: Vec<EditDiagnostics>) -> (LspHooks, Arc<Scripted>) {
        let servers = Arc::new(Scripted {
            answers: Mutex::new(answers),
            asked: Mutex::default(),
        });
        let hooks = LspHooks::new(
            Arc::new(NoToolHooks),
            servers.clone(),
            PathBuf::from("/p"),
            Some(PathBuf::from("/home/me")),
        );
        (hooks, servers)
    }

    #[tokio::test]
    async fn only_new_errors_are_appended_and_a_fix_appends_nothing() {
        let warning = Diagnostic {
            severity: Severity::Warning,
            ..error(1, "unused import")
        };
        let (h, servers) = hooks(vec![
            reported(vec![
                warning.clone(),
                error(4, "\"tripple\" is not defined"),
            ]),
            // An edit above moved the old error; a second one appeared.
            reported(vec![
                error(5, "\"tripple\" is not defined"),
                error(9, "\"quad\" is not defined"),
            ]),
            reported(vec![warning]),
        ]);
        let edit = call(
            "Edit",
            json!({"file_path": "calc.py", "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(
            h.post_tool_use(&edit, &ok()).await.as_deref(),
            Some(
                "New diagnostics after this edit (pyright-langserver):\ncalc.py:4:7: error[reportUndefinedVariable]: \"tripple\" is not defined"
            ),
            "warnings are not news"
        );
        assert_eq!(
            h.post_tool_use(&edit, &ok()).await.as_deref(),
            Some(
                "New diagnostics after this edit (pyright-langserver):\ncalc.py:9:7: error[reportUndefinedVariable]: \"quad\" is not defined"
            )
        );
        assert_eq!(
            h.post_tool_use(&edit, &ok()).await,
            None,
            "fixed: nothing to say"
        );
        assert_eq!(
            servers.asked.lock().unwrap().as_slice(),
            vec![PathBuf::from("/p/calc.py"); 3]
        );
    }

    #[tokio::test]
    async fn a_silent_server_is_named_and_the_edit_still_stands() {
        let (h, _) = hooks(vec![EditDiagnostics::NoAnswer {
            server: "fake".into(),
            detail: "it did not report diagnostics within 300 ms".into(),
        }]);
        let write = call("Write", json!({"file_path": "/abs/x.fake", "content": ""}));
        assert_eq!(
            h.post_tool_use(&write, &ok()).await.as_deref(),
            Some(
                "(The language server fake did not answer about this file: it did not report diagnostics within 300 ms. The edit itself succeeded.)"
            )
        );
    }

    #[tokio::test]
    async fn failed_edits_and_other_tools_ask_no_server() {
        let (h, servers) = hooks(vec![reported(vec![error(1, "x")])]);
        let mut failed = ok();
        failed.is_error = true;
        let edit = call("Edit", json!({"file_path": "calc.py"}));
        assert_eq!(h.post_tool_use(&edit, &failed).await, None);
        let read = call("Read", json!({"file_path": "calc.py"}));
        assert_eq!(h.post_tool_use(&read, &ok()).await, None);
        assert!(servers.asked.lock().unwrap().is_empty());
        let nb = call(
            "NotebookEdit",
            json!({"notebook_path": "~/n.ipynb", "new_source": ""}),
        );
        assert!(h.post_tool_use(&nb, &ok()).await.is_some());
        assert_eq!(
            servers.asked.lock().unwrap().as_slice(),
            [PathBuf::from("/home/me/n.ipynb")]
        );
    }
}
