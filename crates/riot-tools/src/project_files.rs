//! The project's files for a UI's `@` mentions: walked with the same
//! filters as Glob and Grep (.gitignore, hidden files skipped, never
//! `.git`), then ranked against what the person typed.

use std::path::Path;

/// Up to `max` project-relative paths of files under `root`, sorted. The
/// walk runs on the caller's thread (it reads the disk: call it from a
/// blocking task).
pub fn list(root: &Path, max: usize) -> Vec<String> {
    let mut files = Vec::new();
    for entry in crate::tools::walker(root, false).build().flatten() {
        if files.len() >= max {
            break;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(root)
            && let Some(text) = relative.to_str()
        {
            files.push(text.to_owned());
        }
    }
    files.sort();
    files
}

/// How well `path` matches `query`: `None` unless every character of the
/// query appears in the path in order (ignoring case). Higher is better:
/// matches in the file name, at the start of a word, and in runs score
/// more; long paths less.
pub fn score(path: &str, query: &str) -> Option<i64> {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let chars: Vec<(usize, char)> = path.char_indices().collect();
    let mut total = 0i64;
    let mut at = 0usize;
    let mut previous: Option<usize> = None;
    for wanted in query.chars().filter(|c| !c.is_whitespace()) {
        let wanted = wanted.to_ascii_lowercase();
        let found = (at..chars.len()).find(|&i| chars[i].1.to_ascii_lowercase() == wanted)?;
        let (byte, _) = chars[found];
        let mut points = 1;
        if found == 0 || matches!(chars[found - 1].1, '/' | '_' | '-' | '.' | ' ') {
            points += 8;
        }
        if previous.is_some_and(|p| p + 1 == found) {
            points += 6;
        }
        if byte >= name_start {
            points += 4;
        }
        total += points;
        previous = Some(found);
        at = found + 1;
    }
    Some(total * 100 - i64::try_from(path.len()).unwrap_or(i64::MAX / 2))
}

/// The `limit` best matches of `query` among `files`, best first; for an
/// empty query, the shallowest and shortest paths.
pub fn rank(files: &[String], query: &str, limit: usize) -> Vec<String> {
    let mut scored: Vec<(i64, &String)> = if query.trim().is_empty() {
        files
            .iter()
            .map(|f| {
                let depth = i64::try_from(f.matches('/').count()).unwrap_or(i64::MAX / 2);
                let len = i64::try_from(f.len()).unwrap_or(i64::MAX / 2);
                (-(depth * 1000 + len), f)
            })
            .collect()
    } else {
        files
            .iter()
            .filter_map(|f| score(f, query).map(|s| (s, f)))
            .collect()
    };
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, f)| f.clone())
        .collect()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // builds a real project tree to walk
mod tests {
    use super::*;

    fn files(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn every_query_character_must_appear_in_order() {
        assert!(score("src/main.rs", "mai").is_some());
        assert!(
            score("src/main.rs", "SMR").is_some(),
            "case does not matter"
        );
        assert_eq!(score("src/main.rs", "rsm"), None);
        assert_eq!(score("src/main.rs", "x"), None);
    }

    #[test]
    fn file_names_and_word_starts_rank_first() {
        let all = files(&[
            "docs/maintainers/notes.md",
            "src/domain.rs",
            "src/main.rs",
            "tests/main_test.rs",
        ]);
        assert_eq!(
            rank(&all, "main", 4),
            [
                "src/main.rs",
                "tests/main_test.rs",
                "src/domain.rs",
                "docs/maintainers/notes.md"
            ]
        );
        assert_eq!(
            rank(&all, "dom", 10),
            ["src/domain.rs", "docs/maintainers/notes.md"]
        );
    }

    #[test]
    fn an_empty_query_lists_shallow_short_paths_first() {
        let all = files(&["a/b/c.rs", "README.md", "src/lib.rs", "Cargo.toml"]);
        assert_eq!(rank(&all, "", 3), ["README.md", "Cargo.toml", "src/lib.rs"]);
    }

    #[test]
    fn the_walk_skips_ignored_and_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(root.join("target/out.o"), "x").unwrap();
        std::fs::write(root.join(".env"), "SECRET=1").unwrap();
        assert_eq!(list(root, 100), ["src/main.rs"]);
    }
}
