//! File-system capability (docs/design.md §3: injected, so the deterministic
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

    /// Up to `len` bytes of the file from byte `offset`: fewer only at the
    /// end of the file, none from its end on. For reading a file of any
    /// size in bounded memory, a chunk at a time. The default reads the
    /// whole file and slices it; real file systems override it.
    async fn read_range(&self, path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let bytes = self.read(path).await?;
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        let end = start.saturating_add(len).min(bytes.len());
        Ok(bytes[start..end].to_vec())
    }

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

    /// Where a symlink points, as written in the link (possibly relative
    /// to the link's directory). Used to follow a link whose target does
    /// not exist, which `canonicalize` cannot. The default says the file
    /// system has no links.
    async fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let _ = path;
        Err(io::ErrorKind::Unsupported.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One file in memory; only `read` is real.
    #[derive(Debug)]
    struct OneFile(Vec<u8>);

    #[async_trait]
    impl FileSystem for OneFile {
        async fn read(&self, _path: &Path) -> io::Result<Vec<u8>> {
            Ok(self.0.clone())
        }
        async fn metadata(&self, _path: &Path) -> io::Result<FileMeta> {
            Err(io::ErrorKind::Unsupported.into())
        }
        async fn symlink_metadata(&self, _path: &Path) -> io::Result<FileMeta> {
            Err(io::ErrorKind::Unsupported.into())
        }
        async fn write_atomic(&self, _path: &Path, _contents: &[u8]) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }
        async fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }
        async fn remove_file(&self, _path: &Path) -> io::Result<()> {
            Err(io::ErrorKind::Unsupported.into())
        }
        async fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
            Ok(path.to_path_buf())
        }
        async fn read_dir(&self, _path: &Path) -> io::Result<Vec<DirEntry>> {
            Err(io::ErrorKind::Unsupported.into())
        }
    }

    #[tokio::test]
    async fn the_default_read_range_slices_and_is_empty_from_the_end_on() {
        let fs = OneFile(b"0123456789".to_vec());
        let p = Path::new("f");
        assert_eq!(fs.read_range(p, 0, 4).await.unwrap(), b"0123");
        assert_eq!(fs.read_range(p, 8, 4).await.unwrap(), b"89");
        assert_eq!(fs.read_range(p, 10, 4).await.unwrap(), b"");
        assert_eq!(fs.read_range(p, u64::MAX, usize::MAX).await.unwrap(), b"");
        assert_eq!(fs.read_range(p, 3, usize::MAX).await.unwrap(), b"3456789");
    }
}
