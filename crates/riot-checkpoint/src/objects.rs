//! The object store: every recorded file version once, named by the
//! SHA-256 of its bytes (`objects/ab/cdef…`), written to a temporary file
//! and renamed into place, so a reader never sees half an object and two
//! writers of the same content agree.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: this crate is the file-system side of checkpoints, outside the deterministic crates

use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Content-addressed files under one directory.
#[derive(Debug)]
pub(crate) struct Objects {
    dir: PathBuf,
    /// Makes temporary names unique within the process.
    counter: AtomicU64,
}

/// The hex SHA-256 of `bytes`.
pub(crate) fn id_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn valid_id(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| HEX.contains(&b))
}

impl Objects {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            counter: AtomicU64::new(0),
        }
    }

    pub(crate) fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(&id[..2]).join(&id[2..])
    }

    /// Stores `bytes` (once) and returns their id.
    pub(crate) fn put(&self, bytes: &[u8]) -> io::Result<String> {
        let id = id_of(bytes);
        let path = self.path_of(&id);
        if path.is_file() {
            return Ok(id);
        }
        let parent = self.dir.join(&id[..2]);
        fs::create_dir_all(&parent)?;
        let tmp = parent.join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            self.counter.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = fs::File::create(&tmp)?;
            file.write_all(bytes)?;
            fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map(|()| id)
    }

    /// The bytes stored under `id`, checked against it.
    pub(crate) fn get(&self, id: &str) -> io::Result<Vec<u8>> {
        if !valid_id(id) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{id:?} is not a checkpoint object id"),
            ));
        }
        let bytes = fs::read(self.path_of(id))?;
        if id_of(&bytes) != id {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the checkpoint object {id} is damaged"),
            ));
        }
        Ok(bytes)
    }

    /// Every stored object: its id, size and modification time (seconds
    /// since the epoch).
    pub(crate) fn all(&self) -> io::Result<Vec<(String, u64, u64)>> {
        let mut out = Vec::new();
        let top = match fs::read_dir(&self.dir) {
            Ok(top) => top,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for fan in top {
            let fan = fan?;
            let prefix = fan.file_name().to_string_lossy().into_owned();
            if prefix.len() != 2 || !fan.file_type()?.is_dir() {
                continue;
            }
            for object in fs::read_dir(fan.path())? {
                let object = object?;
                let rest = object.file_name().to_string_lossy().into_owned();
                let id = format!("{prefix}{rest}");
                if !valid_id(&id) {
                    continue;
                }
                let meta = object.metadata()?;
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                out.push((id, meta.len(), mtime));
            }
        }
        Ok(out)
    }

    pub(crate) fn remove(&self, id: &str) -> io::Result<()> {
        match fs::remove_file(self.path_of(id)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}
