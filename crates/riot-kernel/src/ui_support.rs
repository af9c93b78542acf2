//! What a UI asks of the kernel besides running sessions: the project's
//! files for `@` mentions and naming saved sessions.

use std::path::Path;

use riot_protocol::SessionId;

use crate::error::KernelError;
use crate::kernel::Kernel;

/// How many files a mention search walks at most: enough for large
/// repositories, bounded so a home directory does not stall the UI.
const WALK_LIMIT: usize = 50_000;

impl Kernel {
    /// Up to `limit` files under `root` (project-relative, ignored and
    /// hidden files left out) best matching `query`, best first.
    pub async fn project_files(
        &self,
        root: &Path,
        query: &str,
        limit: usize,
    ) -> Result<Vec<String>, KernelError> {
        let root = root.to_path_buf();
        let query = query.to_owned();
        tokio::task::spawn_blocking(move || {
            let files = riot_tools::project_files::list(&root, WALK_LIMIT);
            riot_tools::project_files::rank(&files, &query, limit)
        })
        .await
        .map_err(|e| KernelError::Failed(format!("listing the project's files failed: {e}")))
    }

    /// Names a saved session; returns the name as stored (one line).
    pub fn rename_session(&self, id: &SessionId, title: &str) -> Result<String, KernelError> {
        let now = self.capabilities().clock.now_ms();
        self.store()
            .rename(id, title, now)
            .map_err(KernelError::from)
    }
}
