//! The built-in tools, one module each, and [`builtin`].

use std::sync::Arc;

use riot_protocol::DynTool;
use schemars::JsonSchema;
use serde_json::Value;

pub mod bash;
pub mod bash_output;
pub mod browser;
pub mod diagnostics;
mod diagnostics_parse;
pub mod edit;
mod edit_match;
pub mod glob;
pub mod grep;
mod grep_sink;
pub mod kill_shell;
mod notebook;
pub mod notebook_edit;
pub mod read;
pub mod read_image;
mod read_limits;
pub mod read_office;
pub mod read_pdf;
mod read_scan;
pub mod terminal;
pub mod todo_write;
pub mod tool_search;
mod web_address;
pub mod web_fetch;
mod web_page;
pub mod web_search;
pub mod write;

#[cfg(test)]
mod home_tests;

pub use bash::Bash;
pub use bash_output::BashOutput;
pub use browser::Browser;
pub use diagnostics::{Diagnostics, DiagnosticsInput};
pub use edit::Edit;
pub use glob::Glob;
pub use grep::Grep;
pub use kill_shell::KillShell;
pub use notebook_edit::NotebookEdit;
pub use read::Read;
pub use terminal::Terminal;
pub use web_fetch::{AnswerError, PageQuestion, WebFetch, WebFetchInput, WebFetchLimits};
pub use web_search::{SearchBackend, WebSearch, WebSearchInput};
pub use write::Write;

/// The built-in tools in the order sent to the model.
///
/// **Append only** (docs/design.md §6.7): this order is part of the cached
/// prompt prefix; inserting in the middle invalidates every live session's
/// cache. New tools go at the end.
pub fn builtin() -> Vec<Arc<dyn DynTool>> {
    vec![
        Arc::new(Read),
        Arc::new(Write),
        Arc::new(Edit),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(Bash),
        Arc::new(BashOutput),
        Arc::new(KillShell),
        Arc::new(NotebookEdit),
        Arc::new(Diagnostics),
        Arc::new(Terminal),
        Arc::new(Browser::default()),
    ]
}

/// [`builtin`] without the tools whose capability `env` lacks
/// (docs/design.md §6.7): Terminal needs [`ToolEnv::terminals`], Browser
/// [`ToolEnv::browser`].
///
/// [`ToolEnv::terminals`]: riot_protocol::ToolEnv::terminals
/// [`ToolEnv::browser`]: riot_protocol::ToolEnv::browser
pub fn declared(env: &riot_protocol::ToolEnv) -> Vec<Arc<dyn DynTool>> {
    builtin()
        .into_iter()
        .filter(|t| t.name() != "Terminal" || env.terminals.available())
        .filter(|t| t.name() != "Browser" || env.browser.available())
        .collect()
}

/// The JSON Schema of a tool's input type.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

/// A walker with ripgrep's default filters: .gitignore/.ignore respected
/// (gitignore only inside a git repository, as rg does), hidden files
/// skipped unless asked for, the .git directory never searched. Callers
/// sort what they found (walk order is not stable, least of all in
/// parallel).
pub(crate) fn walker(base: &std::path::Path, hidden: bool) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(base);
    builder
        .standard_filters(true)
        .hidden(!hidden)
        .filter_entry(|e| e.file_name() != ".git");
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_order_is_the_append_only_list() {
        let names: Vec<String> = builtin().iter().map(|t| t.name().to_owned()).collect();
        assert_eq!(
            names,
            [
                "Read",
                "Write",
                "Edit",
                "Glob",
                "Grep",
                "Bash",
                "BashOutput",
                "KillShell",
                "NotebookEdit",
                "Diagnostics",
                "Terminal",
                "Browser"
            ]
        );
    }

    #[test]
    fn terminal_is_declared_only_with_terminals() {
        let mut env = crate::testing::null_env(riot_protocol::FixedClock::new());
        let names = |env: &riot_protocol::ToolEnv| -> Vec<String> {
            declared(env).iter().map(|t| t.name().to_owned()).collect()
        };
        assert!(!names(&env).contains(&"Terminal".to_owned()));
        assert!(!names(&env).contains(&"Browser".to_owned()));
        assert_eq!(names(&env).len(), builtin().len() - 2);
        env.terminals = Arc::new(riot_runtime::PtyTerminals::default());
        assert_eq!(names(&env).last().map(String::as_str), Some("Terminal"));
        env.browser = Arc::new(riot_runtime::ChromiumBrowser::new(
            "/usr/bin/chromium".into(),
            true,
        ));
        assert_eq!(names(&env).last().map(String::as_str), Some("Browser"));
    }

    #[test]
    fn every_schema_is_an_object_that_rejects_unknown_fields() {
        for tool in builtin() {
            let schema = tool.input_schema();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            assert_eq!(
                schema["additionalProperties"],
                Value::Bool(false),
                "{} must deny unknown fields",
                tool.name()
            );
        }
    }

    #[test]
    fn every_prompt_has_a_never_list() {
        let cx = riot_protocol::PromptContext {
            cwd: "/p".into(),
            platform: "linux".into(),
            tool_names: builtin().iter().map(|t| t.name().to_owned()).collect(),
            compact: false,
        };
        for tool in builtin() {
            let prompt = tool.prompt(&cx);
            assert!(
                prompt.contains("NEVER"),
                "{} prompt lacks a NEVER list",
                tool.name()
            );
            assert!(prompt.len() > 200, "{} prompt is too thin", tool.name());
        }
    }
}
