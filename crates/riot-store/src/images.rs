//! Images, and the PDFs of document blocks, live beside the transcript,
//! not in it.
//!
//! A screenshot or a PDF is megabytes of base64; written into every record
//! that carries it, it would make transcripts slow to list and resume. So
//! the writer stores each one once, as the decoded file
//! `sessions-images/<id>/<sha256>.<ext>` (beside `sessions/<id>.jsonl`),
//! and the record keeps
//! only a reference in the source's `data`: [`STORED_PREFIX`] followed by
//! the file name. Base64's alphabet has no `:`, so a reference can never be
//! mistaken for image data. Loading puts the bytes back, so a resumed
//! session sends them again; an image whose file is gone becomes a short
//! text saying so, and a document its pages' text, never a failed load.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use riot_protocol::{ImageSource, Message, ToolResultContent, UserBlock};
use sha2::{Digest as _, Sha256};

use crate::Record;

/// How a record's image `data` names its stored file.
pub const STORED_PREFIX: &str = "riot-image:";

/// The images directory of the transcript at `transcript`:
/// `sessions/<id>.jsonl` → `sessions-images/<id>/` (beside the
/// transcripts' directory, like the index, so it holds only transcripts).
pub fn dir_for(transcript: &Path) -> PathBuf {
    let id = transcript.file_stem().unwrap_or_default();
    let sessions = transcript.parent().unwrap_or(Path::new("."));
    let mut name = sessions.file_name().unwrap_or_default().to_os_string();
    name.push("-images");
    sessions.with_file_name(name).join(id)
}

/// The file extension for a media type; images of other types keep a
/// neutral one.
fn extension(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

/// Every image and document source a record holds, mutably, in order.
fn sources_mut(record: &mut Record) -> Vec<&mut ImageSource> {
    let messages: Vec<&mut Message> = match record {
        Record::Message { message, .. } => vec![message],
        Record::Compacted { messages, .. } => messages.iter_mut().collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for message in messages {
        let Message::User(user) = message else {
            continue;
        };
        for block in &mut user.content {
            match block {
                UserBlock::Image { source } => out.push(source),
                UserBlock::ToolResult { content, .. } => {
                    for part in content {
                        match part {
                            ToolResultContent::Image { source }
                            | ToolResultContent::Document { source, .. } => out.push(source),
                            ToolResultContent::Text { .. } => {}
                        }
                    }
                }
                UserBlock::Text { .. } | UserBlock::Attachment { .. } => {}
            }
        }
    }
    out
}

/// Whether a record carries inline image or document data (the common
/// case is not: then the record is written as it is, without a copy).
pub fn has_inline(record: &Record) -> bool {
    let messages: Vec<&Message> = match record {
        Record::Message { message, .. } => vec![message],
        Record::Compacted { messages, .. } => messages.iter().collect(),
        _ => return false,
    };
    messages.iter().any(|m| {
        m.as_user().is_some_and(|u| {
            u.content.iter().any(|b| match b {
                UserBlock::Image { source } => !is_stored(source),
                UserBlock::ToolResult { content, .. } => content.iter().any(|c| match c {
                    ToolResultContent::Image { source }
                    | ToolResultContent::Document { source, .. } => !is_stored(source),
                    ToolResultContent::Text { .. } => false,
                }),
                _ => false,
            })
        })
    })
}

fn is_stored(source: &ImageSource) -> bool {
    source.data.starts_with(STORED_PREFIX)
}

/// Writes each inline image of `record` to `dir` (once per content) and
/// replaces its data with the reference. An image whose data is not valid
/// base64 stays inline: it is written as it came rather than lost.
pub fn store(record: &mut Record, dir: &Path) -> std::io::Result<()> {
    for source in sources_mut(record) {
        if is_stored(source) {
            continue;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&source.data) else {
            tracing::warn!(
                "an image or document with invalid base64 data is kept inline in the transcript"
            );
            continue;
        };
        let digest = Sha256::digest(&bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let name = format!("{hex}.{}", extension(&source.media_type));
        let path = dir.join(&name);
        if !path.exists() {
            std::fs::create_dir_all(dir)?;
            // Written under a temporary name and renamed, so a crash never
            // leaves a truncated image under the final name.
            let partial = dir.join(format!(".{name}.partial"));
            std::fs::write(&partial, &bytes)?;
            std::fs::rename(&partial, &path)?;
        }
        source.data = format!("{STORED_PREFIX}{name}");
    }
    Ok(())
}

/// What an image whose file is missing becomes when loaded.
fn missing_text(name: &str) -> String {
    format!("[an image was attached here, but its file {name} is missing from the session]")
}

/// Puts the bytes of each stored image and document of `record` back from
/// `dir`.
pub fn load(record: &mut Record, dir: &Path) {
    let messages: Vec<&mut Message> = match record {
        Record::Message { message, .. } => vec![message],
        Record::Compacted { messages, .. } => messages.iter_mut().collect(),
        _ => return,
    };
    for message in messages {
        let Message::User(user) = message else {
            continue;
        };
        for block in &mut user.content {
            match block {
                UserBlock::Image { source } => {
                    if let Err(missing) = restore(source, dir) {
                        *block = UserBlock::Text {
                            text: missing_text(missing.name()),
                        };
                    }
                }
                UserBlock::ToolResult { content, .. } => {
                    for part in content.iter_mut() {
                        match part {
                            ToolResultContent::Image { source } => {
                                if let Err(missing) = restore(source, dir) {
                                    *part = ToolResultContent::text(missing_text(missing.name()));
                                }
                            }
                            // The pages' text is all a model would get
                            // without the PDF anyway.
                            ToolResultContent::Document { source, text, .. } => {
                                if restore(source, dir).is_err() {
                                    *part = ToolResultContent::text(std::mem::take(text));
                                }
                            }
                            ToolResultContent::Text { .. } => {}
                        }
                    }
                }
                UserBlock::Text { .. } | UserBlock::Attachment { .. } => {}
            }
        }
    }
}

/// Why a stored image or document could not be put back.
#[derive(Debug, thiserror::Error)]
enum Missing {
    /// The reference is not a plain file name in the images directory.
    #[error("{name} is not a stored file's name")]
    NotPlain { name: String },
    /// The file could not be read.
    #[error("{name} cannot be read: {source}")]
    Unreadable {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

impl Missing {
    /// The file name the record refers to.
    fn name(&self) -> &str {
        match self {
            Self::NotPlain { name } | Self::Unreadable { name, .. } => name,
        }
    }
}

/// Fills in a stored file's data; `Err` when its file cannot be read (or
/// the reference names something other than a plain file name).
fn restore(source: &mut ImageSource, dir: &Path) -> Result<(), Missing> {
    let Some(name) = source.data.strip_prefix(STORED_PREFIX) else {
        return Ok(());
    };
    let name = name.to_owned();
    let plain = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        && !name.starts_with('.');
    if !plain {
        return Err(Missing::NotPlain { name });
    }
    match std::fs::read(dir.join(&name)) {
        Ok(bytes) => {
            source.data = base64::engine::general_purpose::STANDARD.encode(bytes);
            Ok(())
        }
        Err(source) => {
            tracing::warn!(file = %name, error = %source, "a stored image or document cannot be read");
            Err(Missing::Unreadable { name, source })
        }
    }
}
