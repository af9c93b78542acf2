//! File-system capability (ARCHITECTURE §3: injected, so the deterministic
//! crates never touch `std::fs` directly). The real implementation, with
//! atomic writes, lives in `riot-runtime`.

use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;

/// Facts about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    pub kind: FileKind,
    pub len: u64,
    /// Modification time in Unix milliseconds, when the platform reports it.
    pub modified_ms: Option<u64>,
    /// Unix permission bits, when the platform has them.
    pub mode: Option<u32>,
}

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub path: PathBuf,
    pub kind: FileKind,
}

/// The file system as tools see it.
#[async_trait]
pub trait FileSystem: Send + Sync + std::fmt::Debug {
    /// The whole file.
    async fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Metadata, following symlinks.
    async fn metadata(&self, path: &Path) -> io::Result<FileMeta>;

    /// Metadata of the path itself (a symlink is reported as one).
    async fn symlink_metadata(&self, path: &Path) -> io::Result<FileMeta>;

    /// Replaces (or creates) the file atomically: a temporary file in the
    /// same directory, then a rename. An existing file keeps its permissions.
    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<()>;

    /// [`write_atomic`](Self::write_atomic) for a secret (credentials):
    /// readable and writable by the owner only (mode 0600 on Unix) from
    /// the moment it exists, whatever the file had before. File systems
    /// without permissions just write it.
    async fn write_atomic_private(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.write_atomic(path, contents).await
    }

    /// Creates a directory and its missing parents.
    async fn create_dir_all(&self, path: &Path) -> io::Result<()>;

    /// Removes a file.
    async fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// The absolute path with symlinks resolved.
    async fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;

    /// Entries of a directory, sorted by path.
    async fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
}
