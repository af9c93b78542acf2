//! A session's file state between processes: what it has read, so a
//! resumed session and `riot tools call --session ID` keep its
//! read-before-write knowledge.

use std::path::{Path, PathBuf};

use riot_protocol::{FileState, FileStateStore, FileSystem, SessionId};

/// Where a session's file state is kept between processes:
/// `<riot home>/file-state/<session id>.json`.
pub fn file_state_path(home: &Path, session: &SessionId) -> PathBuf {
    home.join("file-state")
        .join(format!("{}.json", session.as_str()))
}

/// Loads a persisted file state into `store` (missing or unreadable: empty).
pub async fn load_file_state(fs: &dyn FileSystem, path: &Path, store: &FileStateStore) {
    let Ok(bytes) = fs.read(path).await else {
        return;
    };
    match serde_json::from_slice::<Vec<(PathBuf, FileState)>>(&bytes) {
        Ok(entries) => {
            for (p, s) in entries {
                store.set(p, s);
            }
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable file state")
        }
    }
}

/// Persists `store` (atomically).
pub async fn save_file_state(
    fs: &dyn FileSystem,
    path: &Path,
    store: &FileStateStore,
) -> std::io::Result<()> {
    let text = serde_json::to_vec(&store.snapshot()).map_err(std::io::Error::other)?;
    if let Some(parent) = path.parent() {
        fs.create_dir_all(parent).await?;
    }
    fs.write_atomic(path, &text).await
}
