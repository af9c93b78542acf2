//! Read-before-write (docs/design.md §6.4). Edit and Write run these checks
//! in `validate_input` for early feedback and again inside `call`, by
//! content: a permission dialog may have waited minutes, and mtime
//! granularity can hide a same-second save.

use std::io;
use std::path::{Path, PathBuf};

use riot_protocol::file_state::content_hash;
use riot_protocol::{FileState, FileView, ToolContext, ValidationError};

/// Stable reason codes, asserted by tests and shown by faces.
pub(crate) mod code {
    pub const NOT_READ: &str = "not_read";
    pub const CHANGED_SINCE_READ: &str = "changed_since_read";
    pub const PARTIALLY_READ: &str = "partially_read";
    pub const REGION_NOT_READ: &str = "region_not_read";
    pub const NOT_FOUND: &str = "not_found";
    pub const NOT_TEXT: &str = "not_text";
    pub const NOT_A_FILE: &str = "not_a_file";
    pub const IO: &str = "io_error";
}

/// How much of an existing file must have been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Write replaces everything: the whole file must have been shown.
    WholeFile,
    /// Edit: some read; the region is checked once the match is found.
    AnyView,
}

/// The absolute path a model-supplied path names, symlinks resolved when
/// the file exists, so Read and Edit agree on the key of the file state.
pub(crate) async fn resolve_path(ctx: &ToolContext, path: &str) -> PathBuf {
    let resolved = ctx.resolve(path);
    match ctx.env.fs.canonicalize(&resolved).await {
        Ok(canonical) => canonical,
        Err(_) => resolved,
    }
}

/// Reads the file if it exists (`None` if it does not).
pub(crate) async fn read_existing(
    ctx: &ToolContext,
    path: &Path,
    display: &str,
) -> Result<Option<Vec<u8>>, ValidationError> {
    if let Ok(meta) = ctx.env.fs.metadata(path).await
        && meta.kind == riot_protocol::FileKind::Dir
    {
        return Err(ValidationError::rejected(format!(
            "{display} is a directory. Give the path of a file inside it."
        ))
        .with_code(code::NOT_A_FILE));
    }
    match ctx.env.fs.read(path).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ValidationError::rejected(format!(
            "{display} could not be read ({e}). Check the path and its permissions."
        ))
        .with_code(code::IO)),
    }
}

/// Checks that `current` (the file's bytes now) is what this session last
/// read, and that enough of it was shown. Returns the recorded state.
pub(crate) fn check_fresh(
    ctx: &ToolContext,
    path: &Path,
    display: &str,
    current: &[u8],
    need: Need,
    tool: &str,
) -> Result<FileState, ValidationError> {
    let Some(state) = ctx.env.file_state.get(path) else {
        return Err(ValidationError::rejected(format!(
            "{display} has not been read in this session. Read it with Read first, then retry the {tool}."
        ))
        .with_code(code::NOT_READ));
    };
    if content_hash(current) != state.content_hash {
        return Err(ValidationError::rejected(format!(
            "{display} has changed on disk since you last read it (the person or another program modified it). Read it again and redo your change against the current content; do not overwrite their change."
        ))
        .with_code(code::CHANGED_SINCE_READ));
    }
    if need == Need::WholeFile && state.view != FileView::Full {
        return Err(ValidationError::rejected(format!(
            "Only part of {display} was read, and Write replaces the whole file. Read it without offset/limit first, or use Edit for a targeted change."
        ))
        .with_code(code::PARTIALLY_READ));
    }
    Ok(state)
}

/// Checks that lines `start..=end` were shown by a Read.
pub(crate) fn check_region(
    state: &FileState,
    display: &str,
    start: u64,
    end: u64,
) -> Result<(), ValidationError> {
    if state.view.covers(start, end) {
        Ok(())
    } else {
        Err(ValidationError::rejected(format!(
            "Lines {start}-{end} of {display} (where old_string is) were not shown by your Read. Read that range (offset={start}) first, then retry the Edit."
        ))
        .with_code(code::REGION_NOT_READ))
    }
}

/// A file could not be written; the message is the one the model reads.
#[derive(Debug, thiserror::Error)]
#[error("Could not write {display} ({source}). Check the path and its permissions.")]
pub(crate) struct WriteError {
    /// The path as the model sees it.
    display: String,
    source: io::Error,
}

/// Writes `bytes` atomically, then records them as what the session knows
/// (`view`).
pub(crate) async fn write_and_record(
    ctx: &ToolContext,
    path: &Path,
    display: &str,
    bytes: &[u8],
    view: FileView,
) -> Result<(), WriteError> {
    if let Err(source) = ctx.env.fs.write_atomic(path, bytes).await {
        return Err(WriteError {
            display: display.to_owned(),
            source,
        });
    }
    record(ctx, path, bytes, view).await;
    Ok(())
}

/// Records what the session now knows after reading or writing `bytes`.
pub(crate) async fn record(ctx: &ToolContext, path: &Path, bytes: &[u8], view: FileView) {
    record_hash(ctx, path, content_hash(bytes), view).await;
}

/// [`record`] for a file whose bytes were hashed as they streamed by.
pub(crate) async fn record_hash(ctx: &ToolContext, path: &Path, hash: u64, view: FileView) {
    let mtime_ms = ctx
        .env
        .fs
        .metadata(path)
        .await
        .ok()
        .and_then(|m| m.modified_ms);
    ctx.env.file_state.set(
        path.to_path_buf(),
        FileState {
            content_hash: hash,
            mtime_ms,
            view,
        },
    );
}

/// How a path is shown to the model: relative to the project when inside
/// it, absolute otherwise.
pub(crate) fn display_path(ctx: &ToolContext, path: &Path) -> String {
    match path.strip_prefix(&ctx.env.cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}
