//! The working set re-attached after a summary (docs/design.md §10): the
//! five most recently changed files this session read, re-read from disk
//! (≤ 5k tokens each, ≤ 50k in total, and at most an eighth of the window:
//! `riot_core::compaction::working_set_chars`). Memory files need no re-injection:
//! they live in the session section of the system prompt, which compaction
//! never touches. The todo list comes after the files.

use std::sync::Arc;

use async_trait::async_trait;
use riot_core::WorkingSet;
use riot_protocol::file_state::content_hash;
use riot_protocol::{FileState, FileStateStore, FileSystem, FileView, UserBlock};

/// Files re-read after a summary.
pub const MAX_FILES: usize = 5;
/// Characters per file (≈5k tokens).
pub const MAX_FILE_CHARS: usize = 20_000;
/// Characters in total (≈50k tokens).
pub const MAX_TOTAL_CHARS: usize = 200_000;

/// Re-reads recently read files.
#[derive(Debug)]
pub struct RecentFiles {
    pub fs: Arc<dyn FileSystem>,
    pub files: Arc<FileStateStore>,
    /// The session's todo list, re-attached after the files.
    pub todos: Option<riot_tools::tools::todo_write::TodoList>,
}

#[async_trait]
impl WorkingSet for RecentFiles {
    async fn restore(&self, budget_chars: usize) -> Vec<UserBlock> {
        let mut known = self.files.snapshot();
        // Most recently modified first; the path keeps the order stable.
        known.sort_by(|a, b| b.1.mtime_ms.cmp(&a.1.mtime_ms).then_with(|| a.0.cmp(&b.0)));
        let mut out = Vec::new();
        let mut budget = MAX_TOTAL_CHARS.min(budget_chars);
        for (path, _) in known.into_iter().take(MAX_FILES) {
            let Ok(bytes) = self.fs.read(&path).await else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes.clone()) else {
                continue;
            };
            let mut numbered = String::new();
            let mut lines_shown = 0u64;
            let mut truncated = false;
            for (i, line) in text.lines().enumerate() {
                let entry = format!("{:>6}\t{line}\n", i + 1);
                if numbered.len() + entry.len() > MAX_FILE_CHARS.min(budget) {
                    truncated = true;
                    break;
                }
                numbered.push_str(&entry);
                lines_shown += 1;
            }
            if numbered.is_empty() && !text.is_empty() {
                continue;
            }
            budget -= numbered.len();
            if truncated {
                numbered.push_str(&format!(
                    "… (cut after line {lines_shown}; Read the rest with offset={})\n",
                    lines_shown + 1
                ));
            }
            let meta = self.fs.metadata(&path).await.ok();
            self.files.set(
                path.clone(),
                FileState {
                    content_hash: content_hash(&bytes),
                    mtime_ms: meta.and_then(|m| m.modified_ms),
                    view: if truncated {
                        FileView::Partial {
                            ranges: vec![(1, lines_shown.max(1))],
                        }
                    } else {
                        FileView::Full
                    },
                },
            );
            out.push(UserBlock::Attachment {
                title: format!("{} (re-read after compaction)", path.display()),
                text: numbered,
            });
        }
        if let Some(todo) = self
            .todos
            .as_ref()
            .and_then(riot_tools::tools::todo_write::TodoList::attachment)
        {
            out.push(todo);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests write real files

    use std::path::PathBuf;

    use super::*;

    fn state(mtime: u64) -> FileState {
        FileState {
            content_hash: 0,
            mtime_ms: Some(mtime),
            view: FileView::Full,
        }
    }

    #[tokio::test]
    async fn the_most_recent_files_come_back_numbered_and_are_marked_read() {
        let dir = tempfile::tempdir().unwrap();
        let files = Arc::new(FileStateStore::default());
        let mut paths: Vec<PathBuf> = Vec::new();
        for i in 0..7u64 {
            let p = dir.path().join(format!("f{i}.rs"));
            std::fs::write(&p, format!("line one of {i}\nline two\n")).unwrap();
            files.set(p.clone(), state(i));
            paths.push(p);
        }
        let ws = RecentFiles {
            fs: Arc::new(riot_runtime::RealFs),
            files: Arc::clone(&files),
            todos: None,
        };
        let blocks = ws.restore(MAX_TOTAL_CHARS).await;
        let titles: Vec<String> = blocks
            .iter()
            .map(|b| match b {
                UserBlock::Attachment { title, .. } => title.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(titles.len(), MAX_FILES);
        assert!(titles[0].starts_with(&paths[6].display().to_string()));
        assert!(titles[4].starts_with(&paths[2].display().to_string()));
        let UserBlock::Attachment { text, .. } = &blocks[0] else {
            unreachable!()
        };
        assert_eq!(text, "     1\tline one of 6\n     2\tline two\n");
        // The re-read counts as a read of the current content.
        let after = files.get(&paths[6]).unwrap();
        assert_eq!(
            after.content_hash,
            content_hash(b"line one of 6\nline two\n")
        );
    }
}
