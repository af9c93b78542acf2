//! Project trust (docs/design.md §13): `<riot home>/trusted.json` lists the
//! directories whose `.riot/` files and `.mcp.json` the person trusted. A
//! directory is trusted when it or an ancestor is listed.

use std::path::{Path, PathBuf};

use riot_protocol::FileSystem;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustedFile {
    #[serde(default)]
    trusted: Vec<PathBuf>,
}

/// The trust list.
#[derive(Debug, Clone)]
pub struct Trust {
    path: PathBuf,
}

impl Trust {
    /// The list at `<home>/trusted.json`.
    pub fn new(home: &Path) -> Self {
        Self {
            path: home.join("trusted.json"),
        }
    }

    async fn read(&self, fs: &dyn FileSystem) -> TrustedFile {
        match fs.read(&self.path).await {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %self.path.display(), error = %e, "ignoring an unreadable trust list");
                TrustedFile::default()
            }),
            Err(_) => TrustedFile::default(),
        }
    }

    /// Whether `dir` (or an ancestor) is trusted.
    pub async fn is_trusted(&self, fs: &dyn FileSystem, dir: &Path) -> bool {
        let file = self.read(fs).await;
        file.trusted.iter().any(|t| dir.starts_with(t))
    }

    /// Remembers `dir` as trusted.
    pub async fn trust(&self, fs: &dyn FileSystem, dir: &Path) -> std::io::Result<()> {
        let mut file = self.read(fs).await;
        if file.trusted.iter().any(|t| t == dir) {
            return Ok(());
        }
        file.trusted.push(dir.to_path_buf());
        file.trusted.sort();
        let text = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
        if let Some(parent) = self.path.parent() {
            fs.create_dir_all(parent).await?;
        }
        fs.write_atomic(&self.path, &text).await
    }
}
