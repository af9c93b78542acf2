//! Edit: replace one exact occurrence of a string in a file
//! (docs/design.md §6.4).

use std::path::PathBuf;

use async_trait::async_trait;
use riot_protocol::{
    FileView, InterruptBehavior, PathAccess, PermissionTarget, PromptContext, Tool, ToolContext,
    ToolOutcome, UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::diff::hunks;
use crate::encoding::{Decoded, decode};
use crate::freshness::{
    Need, check_fresh, check_region, code, display_path, read_existing, resolve_path,
    write_and_record,
};
use crate::tools::edit_match::{Plan, plan};
use crate::tools::schema_of;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// Absolute path, or relative to the project directory.
    pub file_path: String,
    /// The exact text to replace (must occur once unless `replace_all`).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// The Edit tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Edit;

/// What `call` will do, decided against the file as it is now.
enum Change {
    Create {
        path: PathBuf,
        display: String,
    },
    Modify {
        path: PathBuf,
        display: String,
        decoded: Decoded,
        plan: Plan,
    },
}

impl Change {
    /// The diff this change makes: what the question shows and the
    /// finished call reports.
    fn diff(&self, new_string: &str) -> UiPayload {
        match self {
            Change::Create { display, .. } => UiPayload::FileDiff {
                path: display.clone(),
                created: true,
                hunks: hunks("", new_string),
            },
            Change::Modify {
                display,
                decoded,
                plan,
                ..
            } => UiPayload::FileDiff {
                path: display.clone(),
                created: false,
                hunks: hunks(&decoded.text, &plan.new_text),
            },
        }
    }
}

/// Every check of validate_input, against the current content.
async fn check(ctx: &ToolContext, input: &EditInput) -> Result<Change, ValidationError> {
    if input.file_path.trim().is_empty() {
        return Err(ValidationError::rejected(
            "`file_path` must not be empty. Give the path of the file to edit.",
        ));
    }
    if input.old_string == input.new_string {
        return Err(ValidationError::rejected(
            "old_string and new_string are identical, so this Edit would change nothing. Put the new text in new_string.",
        ));
    }
    let path = resolve_path(ctx, &input.file_path).await;
    let display = display_path(ctx, &path);
    let Some(bytes) = read_existing(ctx, &path, &display).await? else {
        if input.old_string.is_empty() {
            return Ok(Change::Create { path, display });
        }
        return Err(ValidationError::rejected(format!(
            "{display} does not exist. Check the path (Glob finds files by name); to create a new file use Write."
        ))
        .with_code(code::NOT_FOUND));
    };
    let state = check_fresh(ctx, &path, &display, &bytes, Need::AnyView, "Edit")?;
    let decoded = decode(&bytes)
        .map_err(|e| ValidationError::rejected(e.explain(&display)).with_code(code::NOT_TEXT))?;
    if input.old_string.is_empty() {
        if !decoded.text.is_empty() {
            return Err(ValidationError::rejected(format!(
                "old_string is empty, but {display} is not: an empty old_string only creates a new file. Copy the text to replace into old_string, or use Write to replace the whole file."
            )));
        }
        let plan = Plan {
            new_text: input.new_string.clone(),
            count: 1,
            ranges: vec![],
            adapted: None,
        };
        return Ok(Change::Modify {
            path,
            display,
            decoded,
            plan,
        });
    }
    let plan = plan(
        &decoded.text,
        &input.old_string,
        &input.new_string,
        input.replace_all,
        &display,
    )?;
    for &(start, end) in &plan.ranges {
        check_region(&state, &display, start, end)?;
    }
    Ok(Change::Modify {
        path,
        display,
        decoded,
        plan,
    })
}

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Replaces `old_string` with `new_string` in a file you have read this session. old_string must match the file exactly, once (add surrounding lines to make it unique, or set `replace_all`), without Read's line-number prefix. Empty old_string on a new path creates the file. A refusal says how to fix the call.\nNEVER edit with sed -i in Bash.";

#[async_trait]
impl Tool for Edit {
    type Input = EditInput;

    fn name(&self) -> &str {
        "Edit"
    }

    fn input_schema(&self) -> Value {
        schema_of::<EditInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Replaces exact text in a file: `old_string` becomes `new_string`.\n\n\
             - The file must have been read with Read in this session (at least the lines holding old_string) and must not have changed since.\n\
             - old_string must occur exactly once; include enough surrounding lines to make it unique, or set `replace_all` to change every occurrence (e.g. renaming a variable).\n\
             - Copy old_string exactly as the file has it, with its indentation, but WITHOUT the line-number prefix Read shows (the number and the tab before each line).\n\
             - The file's UTF-8 BOM, line endings (CRLF stays CRLF) and permissions are kept; new lines you add follow the file's line-ending style.\n\
             - An empty old_string with a path that does not exist creates the file with new_string.\n\
             - If the edit is refused, the reason says what to do: read the file (again), fix the whitespace, make old_string unique.\n",
        );
        if cx.has_tool("Write") {
            p.push_str("\nUse Edit for changes to existing files; use Write only for new files or complete rewrites.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - edit a file you have not read in this session.\n\
             - include Read's line-number prefixes in old_string or new_string.\n\
             - use Bash `sed -i` or `perl -pi` to edit files; use Edit.\n\
             - guess at whitespace: copy it from the Read output.\n",
        );
        p
    }

    fn describe(&self, input: &EditInput) -> String {
        if input.replace_all {
            format!("Edit {} (every occurrence)", input.file_path)
        } else {
            format!("Edit {}", input.file_path)
        }
    }

    fn classifier_input(&self, input: &EditInput) -> Option<String> {
        Some(format!("Edit {}", input.file_path))
    }

    fn permission_target(&self, input: &EditInput, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: ctx.resolve(&input.file_path),
            access: PathAccess::Write,
        }
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    async fn validate_input(
        &self,
        input: &EditInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        check(ctx, input).await.map(|_| ())
    }

    async fn preview(&self, input: &EditInput, ctx: &ToolContext) -> Option<UiPayload> {
        check(ctx, input)
            .await
            .ok()
            .map(|change| change.diff(&input.new_string))
    }

    async fn call(&self, input: EditInput, ctx: &ToolContext) -> ToolOutcome {
        // Again, by content: the person may have saved the file while the
        // permission question was open.
        let change = match check(ctx, &input).await {
            Ok(c) => c,
            Err(e) => return ToolOutcome::failed(e.message),
        };
        let diff = change.diff(&input.new_string);
        match change {
            Change::Create { path, display } => {
                if let Some(parent) = path.parent()
                    && let Err(e) = ctx.env.fs.create_dir_all(parent).await
                {
                    return ToolOutcome::failed(format!(
                        "Could not create the directory for {display} ({e})."
                    ));
                }
                let bytes = input.new_string.as_bytes();
                if let Err(message) =
                    write_and_record(ctx, &path, &display, bytes, FileView::Full).await
                {
                    return ToolOutcome::failed(message.to_string());
                }
                ToolOutcome::text(format!("Created {display}."), Some(diff))
            }
            Change::Modify {
                path,
                display,
                decoded,
                plan,
            } => {
                let bytes = decoded.to_bytes(&plan.new_text);
                // The model has not seen the new lines' numbers, but it
                // wrote them; keep the old view where it was partial.
                let view = match ctx.env.file_state.get(&path) {
                    Some(s) => s.view,
                    None => FileView::Full,
                };
                if let Err(message) = write_and_record(ctx, &path, &display, &bytes, view).await {
                    return ToolOutcome::failed(message.to_string());
                }
                let occurrences = if plan.count == 1 {
                    "1 occurrence".to_owned()
                } else {
                    format!("{} occurrences", plan.count)
                };
                let mut msg = format!("Edited {display}: replaced {occurrences}");
                if let Some(&(start, _)) = plan.ranges.first() {
                    msg.push_str(&format!(" (first at line {start})"));
                }
                msg.push('.');
                if let Some(style) = plan.adapted {
                    msg.push_str(&format!(" old_string and new_string were matched and written with the file's {style} line endings."));
                }
                ToolOutcome::text(msg, Some(diff))
            }
        }
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
