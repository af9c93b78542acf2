//! The editor's file system: when the client advertises
//! `fs.readTextFile` / `fs.writeTextFile` in `initialize`, a session's
//! text files inside its project go through `fs/read_text_file` (so the
//! model sees unsaved buffers) and `fs/write_text_file` (so the editor
//! shows, and can undo, the edit). Everything else — binary and non-UTF-8
//! files, paths outside the project, metadata, directories, secrets — goes
//! to Riot's own file system. The tools' read-before-write and freshness
//! checks are unchanged: they hash what `read` returns, whichever side
//! served it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use async_trait::async_trait;
use riot_protocol::{DirEntry, FileMeta, FileSystem};

/// Which of the editor's file methods a client offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EditorFs {
    pub read: bool,
    pub write: bool,
}

impl EditorFs {
    /// What the client's `initialize` capabilities advertise.
    pub fn from_capabilities(capabilities: &ClientCapabilities) -> Self {
        Self {
            read: capabilities.fs.read_text_file,
            write: capabilities.fs.write_text_file,
        }
    }

    /// Whether a session needs a [`ClientFs`] at all.
    pub fn any(self) -> bool {
        self.read || self.write
    }
}

/// How many leading bytes decide that a file is binary (a NUL among them).
const SNIFF_BYTES: usize = 8000;

/// Whether `bytes` are text the editor can serve and take: UTF-8, no NUL
/// in the first [`SNIFF_BYTES`].
fn is_editor_text(bytes: &[u8]) -> bool {
    !bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// A session's file system: the editor's for text inside the project,
/// Riot's for the rest.
#[derive(Debug)]
pub struct ClientFs {
    real: Arc<dyn FileSystem>,
    connection: ConnectionTo<Client>,
    /// Set once the kernel has opened the session; until then (reading
    /// settings and memory files while opening) everything is Riot's.
    session_id: OnceLock<String>,
    /// The session's canonical project directory.
    root: PathBuf,
    offered: EditorFs,
    /// The text of the file whose chunks are being read (`read_range`
    /// from offset 0 fetches it from the editor; later chunks reuse it),
    /// so a chunked scan costs one request.
    scanning: Mutex<Option<(PathBuf, Arc<Vec<u8>>)>>,
}

impl ClientFs {
    pub fn new(
        real: Arc<dyn FileSystem>,
        connection: ConnectionTo<Client>,
        root: PathBuf,
        offered: EditorFs,
    ) -> Self {
        Self {
            real,
            connection,
            session_id: OnceLock::new(),
            root,
            offered,
            scanning: Mutex::new(None),
        }
    }

    /// Binds the file system to the session its requests name.
    pub fn bind(&self, session_id: &str) {
        let _ = self.session_id.set(session_id.to_owned());
    }

    /// The session to name when `path` is the editor's to serve.
    fn editor_session(&self, path: &Path, wanted: bool) -> Option<&str> {
        if !wanted || !path.is_absolute() || !path.starts_with(&self.root) {
            return None;
        }
        self.session_id.get().map(String::as_str)
    }

    /// The file's text as the editor has it, if the editor should serve
    /// it; `None` for what Riot reads itself.
    async fn editor_read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        let Some(session_id) = self.editor_session(path, self.offered.read) else {
            return Ok(None);
        };
        // The disk decides what exists and what is binary; a missing file
        // stays missing.
        let disk = self.real.read(path).await?;
        if !is_editor_text(&disk) {
            return Ok(Some(disk));
        }
        let request = ReadTextFileRequest::new(session_id.to_owned(), path.to_path_buf());
        match self.connection.send_request(request).block_task().await {
            Ok(response) => Ok(Some(response.content.into_bytes())),
            Err(e) => Err(io::Error::other(format!(
                "the editor could not read it: {}",
                e.message
            ))),
        }
    }
}

#[async_trait]
impl FileSystem for ClientFs {
    async fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.editor_read(path).await? {
            Some(bytes) => Ok(bytes),
            None => self.real.read(path).await,
        }
    }

    async fn read_range(&self, path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        if self.editor_session(path, self.offered.read).is_none() {
            return self.real.read_range(path, offset, len).await;
        }
        let cached = {
            let scanning = self.scanning.lock().unwrap_or_else(|e| e.into_inner());
            scanning
                .as_ref()
                .filter(|(p, _)| offset > 0 && p == path)
                .map(|(_, bytes)| Arc::clone(bytes))
        };
        let bytes = match cached {
            Some(bytes) => bytes,
            None => {
                let bytes = Arc::new(self.read(path).await?);
                *self.scanning.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((path.to_path_buf(), Arc::clone(&bytes)));
                bytes
            }
        };
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let end = start.saturating_add(len).min(bytes.len());
        Ok(bytes[start..end].to_vec())
    }

    async fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        self.real.metadata(path).await
    }

    async fn symlink_metadata(&self, path: &Path) -> io::Result<FileMeta> {
        self.real.symlink_metadata(path).await
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let Some(session_id) = self.editor_session(path, self.offered.write) else {
            return self.real.write_atomic(path, contents).await;
        };
        let Ok(text) = std::str::from_utf8(contents) else {
            return self.real.write_atomic(path, contents).await;
        };
        if !is_editor_text(contents) {
            return self.real.write_atomic(path, contents).await;
        }
        *self.scanning.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let request =
            WriteTextFileRequest::new(session_id.to_owned(), path.to_path_buf(), text.to_owned());
        match self.connection.send_request(request).block_task().await {
            Ok(_) => Ok(()),
            Err(e) => Err(io::Error::other(format!(
                "the editor could not write it: {}",
                e.message
            ))),
        }
    }

    async fn write_atomic_private(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        // Secrets never pass through the editor.
        self.real.write_atomic_private(path, contents).await
    }

    async fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.real.create_dir_all(path).await
    }

    async fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.real.remove_file(path).await
    }

    async fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.real.canonicalize(path).await
    }

    async fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.real.read_dir(path).await
    }

    async fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.real.read_link(path).await
    }
}

#[cfg(test)]
mod tests {
    use super::is_editor_text;

    #[test]
    fn text_is_utf8_without_nul() {
        assert!(is_editor_text(b"hello\nw\xc3\xb6rld\n"));
        assert!(is_editor_text(b""));
        assert!(!is_editor_text(b"PNG\0\x01"));
        // Latin-1 is left to Riot's own encoding handling.
        assert!(!is_editor_text(b"caf\xe9"));
    }
}
