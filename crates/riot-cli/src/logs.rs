//! Log files for faces that own the terminal (docs/design.md §15):
//! `<riot home>/logs/riot.log`, rotated by size with a hard cap on the
//! total (5 files × 10 MB), so logs can never fill a disk. `RIOT_LOG` sets
//! the filter (default `info`). Secrets are never logged by the crates that
//! hold them; `tests/secrets.rs` greps a debug log of a whole session.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes per log file before rotating.
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Files kept: `riot.log` and `riot.log.1` … `riot.log.4`.
pub const MAX_FILES: usize = 5;

/// A size-rotating log file, shared by tracing's writers.
#[derive(Debug, Clone)]
pub struct RotatingFile {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    file: File,
    written: u64,
    max_bytes: u64,
}

impl RotatingFile {
    /// Opens (appends to) `<dir>/riot.log`.
    pub fn open(dir: &Path, max_bytes: u64) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("riot.log");
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let written = file.metadata()?.len();
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                path,
                file,
                written,
                max_bytes,
            })),
        })
    }
}

impl Inner {
    fn rotate(&mut self) -> io::Result<()> {
        let name = |i: usize| PathBuf::from(format!("{}.{i}", self.path.display()));
        let _ = std::fs::remove_file(name(MAX_FILES - 1));
        for i in (1..MAX_FILES - 1).rev() {
            let _ = std::fs::rename(name(i), name(i + 1));
        }
        std::fs::rename(&self.path, name(1))?;
        self.file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.written > 0 && inner.written + buf.len() as u64 > inner.max_bytes {
            inner.rotate()?;
        }
        inner.file.write_all(buf)?;
        inner.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .file
            .flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_caps_the_number_and_size_of_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = RotatingFile::open(dir.path(), 100).unwrap();
        for i in 0..40 {
            writeln!(log, "line {i:03} {}", "x".repeat(40)).unwrap();
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec![
                "riot.log",
                "riot.log.1",
                "riot.log.2",
                "riot.log.3",
                "riot.log.4"
            ]
        );
        for name in &names {
            let len = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert!(len <= 100, "{name} is {len} bytes");
        }
        let newest = std::fs::read_to_string(dir.path().join("riot.log")).unwrap();
        assert!(newest.contains("line 039"), "{newest}");
    }
}
