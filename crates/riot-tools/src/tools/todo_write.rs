//! TodoWrite (docs/interfaces.md; docs/design.md §6.7): the session's todo list.
//! A session-level tool, added by the kernel's assembly after the built-in
//! tools, because it needs the session's state. Faces get the list as the
//! `Todos` payload (ACP: a plan update); after a summary it is re-attached
//! with the working set.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use riot_protocol::{
    PromptContext, Todo, TodoStatus, Tool, ToolContext, ToolOutcome, UiPayload, UserBlock,
    ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The session's todo list, shared by the tool and the working set.
#[derive(Debug, Clone, Default)]
pub struct TodoList {
    inner: Arc<Mutex<Vec<Todo>>>,
}

impl TodoList {
    /// The current list.
    pub fn get(&self) -> Vec<Todo> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Empties the list (`/clear`).
    pub fn clear(&self) {
        self.set(Vec::new());
    }

    fn set(&self, todos: Vec<Todo>) {
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = todos;
    }

    /// The list as the model reads it, one line per item.
    pub fn render(todos: &[Todo]) -> String {
        todos
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mark = match t.status {
                    TodoStatus::Pending => "[ ]",
                    TodoStatus::InProgress => "[~]",
                    TodoStatus::Completed => "[x]",
                };
                format!("{}. {mark} {}", i + 1, t.content)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The list as an attachment after a summary (nothing when empty).
    pub fn attachment(&self) -> Option<UserBlock> {
        let todos = self.get();
        (!todos.is_empty()).then(|| UserBlock::Attachment {
            title: "Your todo list (kept across the summary)".into(),
            text: Self::render(&todos),
        })
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole list, replacing the previous one.
    pub todos: Vec<TodoInput>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoInput {
    /// What to do, in the imperative ("Run the tests").
    pub content: String,
    pub status: TodoStatus,
    /// The same in the present continuous ("Running the tests"), shown while
    /// in progress.
    #[serde(default, rename = "activeForm")]
    pub active_form: Option<String>,
}

/// The TodoWrite tool.
#[derive(Debug, Clone)]
pub struct TodoWrite {
    pub list: TodoList,
}

#[async_trait]
impl Tool for TodoWrite {
    type Input = TodoWriteInput;

    fn name(&self) -> &str {
        "TodoWrite"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(TodoWriteInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Keeps the todo list of the current task, shown to the person as your plan. Each call replaces the whole list.\n\n\
Use it for work with three or more steps, or when the person gives you several things to do: write the steps first, mark one `in_progress` before you start it, and mark it `completed` as soon as it is done — not in a batch at the end. Add steps you discover on the way.\n\n\
How it differs from the other tools: it changes nothing in the project; it only records your plan.\n\n\
NEVER:\n- have more than one item `in_progress` at a time;\n- mark an item `completed` when its work failed, is partial or is untested — keep it `in_progress` and add what blocks it;\n- use it for a single trivial step.".to_owned()
    }

    fn describe(&self, input: &TodoWriteInput) -> String {
        let done = input
            .todos
            .iter()
            .filter(|t| matches!(t.status, TodoStatus::Completed))
            .count();
        format!("Update todos ({done}/{} done)", input.todos.len())
    }

    /// Only Riot's own record of the plan changes: no file, process or
    /// network is touched, so it needs no permission in any mode.
    fn is_read_only(&self, _input: &TodoWriteInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &TodoWriteInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if input.todos.iter().any(|t| t.content.trim().is_empty()) {
            return Err(ValidationError::rejected(
                "Every todo needs a non-empty `content`. Remove empty items or describe them.",
            ));
        }
        let in_progress = input
            .todos
            .iter()
            .filter(|t| matches!(t.status, TodoStatus::InProgress))
            .count();
        if in_progress > 1 {
            return Err(ValidationError::rejected(format!(
                "{in_progress} items are `in_progress`; keep exactly one in progress at a time and mark the others `pending`."
            )));
        }
        Ok(())
    }

    async fn call(&self, input: TodoWriteInput, _ctx: &ToolContext) -> ToolOutcome {
        let todos: Vec<Todo> = input
            .todos
            .into_iter()
            .map(|t| Todo {
                content: t.content,
                status: t.status,
                active_form: t.active_form,
            })
            .collect();
        self.list.set(todos.clone());
        let text = if todos.is_empty() {
            "The todo list is now empty.".to_owned()
        } else {
            format!(
                "Todo list updated. Keep it current as you work:\n{}",
                TodoList::render(&todos)
            )
        };
        ToolOutcome::text(text, Some(UiPayload::Todos { todos }))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use riot_protocol::{
        DynTool, FileSystem, FixedClock, PermissionMode, ProcessRunner, SequentialIds, ToolEnv,
        ToolUseId,
    };
    use serde_json::json;
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn ctx() -> ToolContext {
        let fs: Arc<dyn FileSystem> = Arc::new(riot_runtime::RealFs);
        let proc: Arc<dyn ProcessRunner> = Arc::new(riot_runtime::RealProcessRunner::new());
        ToolContext {
            env: Arc::new(ToolEnv::new(
                "/p".into(),
                "/p/.spill".into(),
                fs,
                proc,
                Arc::new(FixedClock::new()),
                Arc::new(SequentialIds::new()),
            )),
            tool_use_id: ToolUseId::new("t"),
            mode: PermissionMode::Default,
            allowed_by: riot_protocol::AllowedBy::Riot,
            cancel: CancellationToken::new(),
            progress: None,
        }
    }

    #[tokio::test]
    async fn a_call_replaces_the_list_and_shows_it_to_model_and_faces() {
        let list = TodoList::default();
        let tool: Arc<dyn DynTool> = Arc::new(TodoWrite { list: list.clone() });
        let call = Arc::clone(&tool)
            .prepare(json!({"todos": [
                {"content": "Read the parser", "status": "completed"},
                {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
                {"content": "Run the tests", "status": "pending"}
            ]}))
            .unwrap();
        assert!(call.is_read_only());
        assert_eq!(call.describe(), "Update todos (1/3 done)");
        let ctx = ctx();
        assert_eq!(call.validate_input(&ctx).await, Ok(()));
        let ToolOutcome::Ok {
            model_content,
            ui_payload,
            ..
        } = call.call(&ctx).await
        else {
            panic!("ok expected");
        };
        assert_eq!(
            model_content,
            vec![riot_protocol::ToolResultContent::text(
                "Todo list updated. Keep it current as you work:\n1. [x] Read the parser\n2. [~] Fix the bug\n3. [ ] Run the tests"
            )]
        );
        let Some(UiPayload::Todos { todos }) = ui_payload else {
            panic!("todos payload");
        };
        assert_eq!(todos[1].active_form.as_deref(), Some("Fixing the bug"));
        assert_eq!(list.get(), todos);
        assert!(
            matches!(list.attachment(), Some(UserBlock::Attachment { text, .. }) if text.contains("[~] Fix the bug"))
        );
    }

    #[tokio::test]
    async fn two_items_in_progress_or_an_empty_item_are_refused_with_the_fix() {
        let tool: Arc<dyn DynTool> = Arc::new(TodoWrite {
            list: TodoList::default(),
        });
        let ctx = ctx();
        let two = Arc::clone(&tool)
            .prepare(json!({"todos": [
                {"content": "a", "status": "in_progress"},
                {"content": "b", "status": "in_progress"}
            ]}))
            .unwrap();
        let err = two.validate_input(&ctx).await.unwrap_err();
        assert!(
            err.message.starts_with("2 items are `in_progress`"),
            "{err}"
        );
        let empty = Arc::clone(&tool)
            .prepare(json!({"todos": [{"content": " ", "status": "pending"}]}))
            .unwrap();
        let err = empty.validate_input(&ctx).await.unwrap_err();
        assert!(
            err.message
                .starts_with("Every todo needs a non-empty `content`"),
            "{err}"
        );
        let bad_status =
            Arc::clone(&tool).prepare(json!({"todos": [{"content": "a", "status": "done"}]}));
        assert!(bad_status.is_err(), "unknown status is a schema error");
    }
}
