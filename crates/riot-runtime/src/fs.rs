#![allow(clippy::disallowed_methods)] // the real file system: this module is what the FileSystem trait stands for

//! [`RealFs`]: the real [`FileSystem`], with atomic writes.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use async_trait::async_trait;
use riot_protocol::{DirEntry, FileKind, FileMeta, FileSystem};

/// The real file system. Blocking calls run on tokio's blocking pool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn kind_of(ft: std::fs::FileType) -> FileKind {
    if ft.is_symlink() {
        FileKind::Symlink
    } else if ft.is_dir() {
        FileKind::Dir
    } else if ft.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

fn meta_of(m: &std::fs::Metadata) -> FileMeta {
    FileMeta {
        kind: kind_of(m.file_type()),
        len: m.len(),
        modified_ms: m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        mode: Some(m.permissions().mode()),
    }
}

async fn blocking<T, F>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| io::Error::other(format!("file-system task failed: {e}")))?
}

/// Writes `contents` to `path` through a temporary sibling and a rename, so
/// readers see the old or the new file, never half of one. A symlink is
/// written through (its target is replaced, the link stays).
/// `private`: the new file is created with mode 0600 and keeps it.
fn write_atomic_blocking(path: &Path, contents: &[u8], private: bool) -> io::Result<()> {
    let target: PathBuf = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let existing_mode = if private {
        Some(0o600)
    } else {
        std::fs::metadata(&target)
            .ok()
            .map(|m| m.permissions().mode())
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned());
    let tmp = dir.join(format!(
        ".{name}.riot-tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        if private {
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(contents)?;
        if let Some(mode) = existing_mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[async_trait]
impl FileSystem for RealFs {
    async fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        tokio::fs::read(path).await
    }

    async fn read_range(&self, path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let path = path.to_path_buf();
        blocking(move || {
            let mut file = std::fs::File::open(&path)?;
            file.seek(SeekFrom::Start(offset))?;
            // Grows as bytes arrive: `len` may be far more than the file holds.
            let mut buf = Vec::with_capacity(len.min(1 << 20));
            file.take(u64::try_from(len).unwrap_or(u64::MAX))
                .read_to_end(&mut buf)?;
            Ok(buf)
        })
        .await
    }

    async fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        tokio::fs::metadata(path).await.map(|m| meta_of(&m))
    }

    async fn symlink_metadata(&self, path: &Path) -> io::Result<FileMeta> {
        tokio::fs::symlink_metadata(path).await.map(|m| meta_of(&m))
    }

    async fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let path = path.to_path_buf();
        let contents = contents.to_vec();
        blocking(move || write_atomic_blocking(&path, &contents, false)).await
    }

    async fn write_atomic_private(&self, path: &Path, contents: &[u8]) -> io::Result<()> {
        let path = path.to_path_buf();
        let contents = contents.to_vec();
        blocking(move || write_atomic_blocking(&path, &contents, true)).await
    }

    async fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        tokio::fs::create_dir_all(path).await
    }

    async fn remove_file(&self, path: &Path) -> io::Result<()> {
        tokio::fs::remove_file(path).await
    }

    async fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        tokio::fs::read_link(path).await
    }

    async fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        tokio::fs::canonicalize(path).await
    }

    async fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let path = path.to_path_buf();
        blocking(move || {
            let mut entries = Vec::new();
            for entry in std::fs::read_dir(&path)? {
                let entry = entry?;
                entries.push(DirEntry {
                    path: entry.path(),
                    kind: kind_of(entry.file_type()?),
                });
            }
            entries.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(entries)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn atomic_write_replaces_content_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();

        RealFs
            .write_atomic(&path, b"#!/bin/sh\necho new\n")
            .await
            .unwrap();

        assert_eq!(std::fs::read(&path).unwrap(), b"#!/bin/sh\necho new\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750, "an existing file keeps its permissions");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
    }

    #[tokio::test]
    async fn a_private_write_is_owner_only_new_or_replacing() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("credentials.json");
        RealFs.write_atomic_private(&fresh, b"{}").await.unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        let open = dir.path().join("was-public.json");
        std::fs::write(&open, b"old").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        RealFs.write_atomic_private(&open, b"new").await.unwrap();
        assert_eq!(std::fs::read(&open).unwrap(), b"new");
        let mode = std::fs::metadata(&open).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a secret never keeps a wider mode");
    }

    #[tokio::test]
    async fn atomic_write_through_a_symlink_replaces_the_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&target, b"a").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();

        RealFs.write_atomic(&link, b"b").await.unwrap();

        assert_eq!(std::fs::read(&target).unwrap(), b"b");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[tokio::test]
    async fn a_failed_atomic_write_leaves_the_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails, even for root.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside.txt"), b"kept").unwrap();
        let err = RealFs.write_atomic(&target, b"new").await.unwrap_err();
        assert_ne!(err.kind(), io::ErrorKind::NotFound, "{err}");
        assert_eq!(std::fs::read(target.join("inside.txt")).unwrap(), b"kept");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("taken")],
            "no temporary file left"
        );
    }

    #[tokio::test]
    async fn read_range_reads_a_slice_and_nothing_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(RealFs.read_range(&path, 2, 3).await.unwrap(), b"234");
        assert_eq!(RealFs.read_range(&path, 7, 100).await.unwrap(), b"789");
        assert_eq!(RealFs.read_range(&path, 10, 4).await.unwrap(), b"");
        assert_eq!(RealFs.read_range(&path, 99, 4).await.unwrap(), b"");
        assert_eq!(
            RealFs.read_range(&path, 0, usize::MAX).await.unwrap(),
            b"0123456789"
        );
        let missing = RealFs
            .read_range(&dir.path().join("nope"), 0, 1)
            .await
            .unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[tokio::test]
    async fn metadata_read_dir_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        RealFs
            .create_dir_all(&dir.path().join("b/c"))
            .await
            .unwrap();
        RealFs
            .write_atomic(&dir.path().join("a.txt"), b"12345")
            .await
            .unwrap();
        let meta = RealFs.metadata(&dir.path().join("a.txt")).await.unwrap();
        assert_eq!((meta.kind, meta.len), (FileKind::File, 5));
        assert!(meta.modified_ms.is_some());
        let listed = RealFs.read_dir(dir.path()).await.unwrap();
        let names: Vec<_> = listed
            .iter()
            .map(|e| {
                (
                    e.path.file_name().unwrap().to_string_lossy().into_owned(),
                    e.kind,
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("a.txt".to_owned(), FileKind::File),
                ("b".to_owned(), FileKind::Dir)
            ]
        );
        let missing = RealFs.read(&dir.path().join("nope")).await.unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
