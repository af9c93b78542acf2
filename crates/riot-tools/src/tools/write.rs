//! Write: create or fully replace a file (docs/design.md §6.4).

use async_trait::async_trait;
use riot_protocol::{
    FileView, InterruptBehavior, PathAccess, PermissionTarget, PromptContext, Tool, ToolContext,
    ToolOutcome, UiPayload, ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::diff::hunks;
use crate::encoding::{BOM, LineEndings, decode, lf_to_crlf, line_endings};
use crate::freshness::{
    Need, check_fresh, display_path, read_existing, record, resolve_path, write_and_record,
};
use crate::tools::schema_of;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// Absolute path, or relative to the project directory.
    pub file_path: String,
    /// The complete new content of the file.
    pub content: String,
}

/// The Write tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Write;

/// What an existing file looked like, so its BOM and line endings survive
/// a full rewrite (the model never sees either in Read output).
struct Existing {
    bytes: Vec<u8>,
    text: String,
    bom: bool,
}

/// Re-runs the read-before-write checks against the file as it is now.
async fn check(
    ctx: &ToolContext,
    input: &WriteInput,
) -> Result<(std::path::PathBuf, String, Option<Existing>), ValidationError> {
    if input.file_path.trim().is_empty() {
        return Err(ValidationError::rejected(
            "`file_path` must not be empty. Give the path of the file to write.",
        ));
    }
    let path = resolve_path(ctx, &input.file_path).await;
    let display = display_path(ctx, &path);
    let existing = match read_existing(ctx, &path, &display).await? {
        None => None,
        Some(bytes) => {
            check_fresh(ctx, &path, &display, &bytes, Need::WholeFile, "Write")?;
            // A file that was read is text (Read refuses anything else).
            let decoded = decode(&bytes).map_err(|e| {
                ValidationError::rejected(e.explain(&display))
                    .with_code(crate::freshness::code::NOT_TEXT)
            })?;
            Some(Existing {
                bytes,
                text: decoded.text,
                bom: decoded.bom,
            })
        }
    };
    Ok((path, display, existing))
}

/// The text a write puts in the file: `content`, with an existing file's
/// CRLF line endings kept; whether its BOM is kept; what was kept, for
/// the model.
fn planned(content: &str, existing: Option<&Existing>) -> (String, bool, Vec<&'static str>) {
    let mut notes = Vec::new();
    let mut text = content.to_owned();
    let mut bom = false;
    if let Some(old) = existing {
        if old.bom && !text.starts_with(BOM) {
            bom = true;
            notes.push("kept its UTF-8 BOM");
        }
        if line_endings(&old.text) == LineEndings::Crlf && line_endings(&text) == LineEndings::Lf {
            text = lf_to_crlf(&text);
            notes.push("kept its CRLF line endings");
        }
    }
    (text, bom, notes)
}

/// The diff a write makes: against the existing file, or a new file's
/// every line as added.
fn diff(display: String, existing: Option<&Existing>, text: &str) -> UiPayload {
    let old_text = existing.map_or("", |e| e.text.as_str());
    UiPayload::FileDiff {
        path: display,
        created: existing.is_none(),
        hunks: hunks(old_text, text),
    }
}

/// What a small window declares (docs/windows.md): the job, the fields
/// and the rule models break most.
const COMPACT_PROMPT: &str = "Writes `content` as the whole file at `file_path`: creates it, or replaces an existing file you have read in full this session. Prefer Edit for part of a file.\nNEVER write files with echo or cat in Bash.";

#[async_trait]
impl Tool for Write {
    type Input = WriteInput;

    fn name(&self) -> &str {
        "Write"
    }

    fn input_schema(&self) -> Value {
        schema_of::<WriteInput>()
    }

    fn prompt(&self, cx: &PromptContext) -> String {
        if cx.compact {
            return COMPACT_PROMPT.to_owned();
        }
        let mut p = String::from(
            "Writes a file: creates it (with missing parent directories) or replaces its whole content.\n\n\
             - `content` is the complete new file; nothing of the old content is kept.\n\
             - An existing file must have been read in full with Read in this session, and must not have changed since; otherwise the write is refused so nobody's work is overwritten.\n\
             - An existing file keeps its UTF-8 BOM, its CRLF line endings and its permissions.\n\
             - The write is atomic: readers see the old or the new file, never half of one.\n",
        );
        if cx.has_tool("Edit") {
            p.push_str("\nPrefer Edit to change part of an existing file: it sends only the change and cannot drop unrelated lines. Use Write for new files or complete rewrites.\n");
        }
        p.push_str(
            "\nNEVER:\n\
             - write a file you have not read (existing files) — Read it first.\n\
             - use Bash `echo >`, `cat <<EOF` or `sed -i` to write files; use Write or Edit.\n\
             - create documentation or README files nobody asked for.\n\
             - include Read's line-number prefixes in `content`.\n",
        );
        p
    }

    fn describe(&self, input: &WriteInput) -> String {
        format!("Write {}", input.file_path)
    }

    fn classifier_input(&self, input: &WriteInput) -> Option<String> {
        Some(format!(
            "Write {} ({} bytes)",
            input.file_path,
            input.content.len()
        ))
    }

    fn permission_target(&self, input: &WriteInput, ctx: &ToolContext) -> PermissionTarget {
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
        input: &WriteInput,
        ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        check(ctx, input).await.map(|_| ())
    }

    async fn preview(&self, input: &WriteInput, ctx: &ToolContext) -> Option<UiPayload> {
        let (_, display, existing) = check(ctx, input).await.ok()?;
        let (text, _, _) = planned(&input.content, existing.as_ref());
        Some(diff(display, existing.as_ref(), &text))
    }

    async fn call(&self, input: WriteInput, ctx: &ToolContext) -> ToolOutcome {
        // Again, by content: the file may have changed while permission was asked.
        let (path, display, existing) = match check(ctx, &input).await {
            Ok(checked) => checked,
            Err(e) => return ToolOutcome::failed(e.message),
        };
        let (text, bom, notes) = planned(&input.content, existing.as_ref());
        let mut bytes = Vec::with_capacity(text.len() + 3);
        if bom {
            bytes.extend_from_slice(BOM.as_bytes());
        }
        bytes.extend_from_slice(text.as_bytes());
        if existing.is_none()
            && let Some(parent) = path.parent()
            && let Err(e) = ctx.env.fs.create_dir_all(parent).await
        {
            return ToolOutcome::failed(format!(
                "Could not create the directory for {display} ({e}). Check the path."
            ));
        }
        if existing.as_ref().is_some_and(|old| old.bytes == bytes) {
            record(ctx, &path, &bytes, FileView::Full).await;
            return ToolOutcome::text(
                format!("{display} already has exactly this content; nothing was changed."),
                None,
            );
        }
        if let Err(message) = write_and_record(ctx, &path, &display, &bytes, FileView::Full).await {
            return ToolOutcome::failed(message.to_string());
        }
        let lines = text.lines().count();
        let verb = if existing.is_some() {
            "Replaced the content of"
        } else {
            "Created"
        };
        let mut msg = format!("{verb} {display} ({lines} lines)");
        if !notes.is_empty() {
            msg.push_str(&format!("; the file {}", notes.join(" and ")));
        }
        msg.push('.');
        ToolOutcome::text(msg, Some(diff(display, existing.as_ref(), &text)))
    }
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
