//! ToolSearch (docs/interfaces.md; docs/design.md §6.7): when the MCP servers'
//! tools would take a large share of the context window, they are deferred —
//! only their names are listed, in this tool's description — and the model
//! loads the schemas it needs by searching. A loaded tool is offered from
//! the next request on, after the others, so the cached prefix before it
//! stays as it was.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_protocol::{PromptContext, Tool, ToolContext, ToolOutcome, ToolSpec, ValidationError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Tools a keyword search returns at most.
pub const MAX_MATCHES: usize = 5;

/// The deferred tools and the ones the model loaded, shared by the tool
/// and the session's runner.
#[derive(Debug, Clone, Default)]
pub struct Deferred {
    inner: Arc<Mutex<DeferredState>>,
}

#[derive(Debug, Default)]
struct DeferredState {
    /// Deferred tools, sorted by name; empty when nothing is deferred.
    specs: Vec<ToolSpec>,
    /// Names loaded by a search, in the order they were loaded.
    loaded: Vec<String>,
}

impl Deferred {
    fn state(&self) -> std::sync::MutexGuard<'_, DeferredState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets what is deferred now (an empty list: nothing is).
    pub fn set(&self, specs: Vec<ToolSpec>) {
        self.state().specs = specs;
    }

    /// Whether tools are being deferred.
    pub fn active(&self) -> bool {
        !self.state().specs.is_empty()
    }

    /// The loaded tools' names, in load order.
    pub fn loaded(&self) -> Vec<String> {
        self.state().loaded.clone()
    }

    /// The deferred tools' names.
    pub fn names(&self) -> Vec<String> {
        self.state().specs.iter().map(|s| s.name.clone()).collect()
    }

    /// Marks the deferred tools among `names` loaded: a model that calls
    /// a deferred tool without searching (its name is listed) gets it
    /// declared from the next request on, as if it had searched.
    pub fn load_called<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let mut state = self.state();
        for name in names {
            let deferred = state.specs.iter().any(|s| s.name == name);
            if deferred && !state.loaded.iter().any(|l| l == name) {
                state.loaded.push(name.to_owned());
            }
        }
    }

    /// The specs matching `query`, marked loaded.
    fn search(&self, query: &str) -> Vec<ToolSpec> {
        let mut state = self.state();
        let found: Vec<ToolSpec> = match query.trim().strip_prefix("select:") {
            Some(list) => {
                let wanted: Vec<&str> = list.split(',').map(str::trim).collect();
                state
                    .specs
                    .iter()
                    .filter(|s| wanted.contains(&s.name.as_str()))
                    .cloned()
                    .collect()
            }
            None => {
                let words: Vec<String> = query
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_lowercase)
                    .collect();
                let mut scored: Vec<(usize, &ToolSpec)> = state
                    .specs
                    .iter()
                    .map(|s| {
                        let name = s.name.to_lowercase();
                        let description = s.description.to_lowercase();
                        let score = words
                            .iter()
                            .map(|w| {
                                2 * usize::from(name.contains(w.as_str()))
                                    + usize::from(description.contains(w.as_str()))
                            })
                            .sum::<usize>();
                        (score, s)
                    })
                    .filter(|(score, _)| *score > 0)
                    .collect();
                scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
                scored
                    .into_iter()
                    .take(MAX_MATCHES)
                    .map(|(_, s)| s.clone())
                    .collect()
            }
        };
        for spec in &found {
            if !state.loaded.contains(&spec.name) {
                state.loaded.push(spec.name.clone());
            }
        }
        found
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// Keywords for what the tool should do ("create github issue"), or
    /// `select:NAME,NAME` for exact names from the list.
    pub query: String,
}

/// The ToolSearch tool.
#[derive(Debug, Clone)]
pub struct ToolSearch {
    pub deferred: Deferred,
}

#[async_trait]
impl Tool for ToolSearch {
    type Input = ToolSearchInput;

    fn name(&self) -> &str {
        "ToolSearch"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(ToolSearchInput).to_value()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return format!(
                "Declares tools you have but cannot see yet: `query` is `select:NAME,NAME` or keywords for what the tool should do. Call a loaded tool from your next step on.\nNot yet declared: {}.",
                self.deferred.names().join(", ")
            );
        }
        format!(
            "Loads tools that are available but not yet declared to you, so they do not fill your context. Search by what the tool should do, or select exact names; the result gives each tool's description and input schema, and you can call the tools from your next step on.\n\n\
Deferred tools:\n{}\n\n\
How it differs from the other tools: it only declares tools; it runs nothing.\n\n\
NEVER:\n- call a deferred tool before loading it;\n- load tools you do not need for the task at hand.",
            self.deferred.names().join("\n")
        )
    }

    fn describe(&self, input: &ToolSearchInput) -> String {
        format!("Search tools: {}", input.query)
    }

    fn is_read_only(&self, _input: &ToolSearchInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &ToolSearchInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &ToolSearchInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.query.trim().is_empty() {
            return Err(ValidationError::rejected(
                "The query is empty; describe what the tool should do, or use select:NAME.",
            ));
        }
        Ok(())
    }

    async fn call(&self, input: ToolSearchInput, _ctx: &ToolContext) -> ToolOutcome {
        let found = self.deferred.search(&input.query);
        if found.is_empty() {
            let names = self.deferred.names();
            return ToolOutcome::text(
                if names.is_empty() {
                    "No tools are deferred: every available tool is already declared to you."
                        .to_owned()
                } else {
                    format!(
                        "No deferred tool matches `{}`. The deferred tools are: {}.",
                        input.query,
                        names.join(", ")
                    )
                },
                None,
            );
        }
        let mut text = format!(
            "{} tool{} loaded; call {} from your next step on:\n",
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.len() == 1 { "it" } else { "them" }
        );
        for spec in &found {
            text.push_str(&format!(
                "\n## {}\n{}\nInput schema: {}\n",
                spec.name, spec.description, spec.input_schema
            ));
        }
        ToolOutcome::text(text, None)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object"}),
        }
    }

    #[test]
    fn keywords_rank_names_over_descriptions_and_selected_names_load_in_order() {
        let deferred = Deferred::default();
        deferred.set(vec![
            spec("mcp__gh__create_issue", "Create an issue"),
            spec("mcp__gh__list_issues", "List issues of a repository"),
            spec("mcp__docs__search", "Search the docs for an issue"),
        ]);
        let found: Vec<String> = deferred
            .search("issue")
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            found,
            [
                "mcp__gh__create_issue",
                "mcp__gh__list_issues",
                "mcp__docs__search"
            ]
        );
        let deferred = Deferred::default();
        deferred.set(vec![spec("a", "x"), spec("b", "y"), spec("c", "z")]);
        let found: Vec<String> = deferred
            .search("select:c, a")
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(found, ["a", "c"]);
        assert_eq!(deferred.loaded(), ["a", "c"]);
        deferred.search("select:a");
        assert_eq!(deferred.loaded(), ["a", "c"], "loaded once");
        assert!(deferred.search("nothing-like-it").is_empty());
    }
}
