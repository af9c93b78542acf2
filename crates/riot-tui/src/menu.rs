//! The completion menus under the composer: `/` lists commands and skills,
//! `@` the project's files.

/// One entry of a menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What is inserted (without the sigil): `review`, `src/main.rs`.
    pub name: String,
    /// Shown beside the name.
    pub description: String,
    /// The command takes arguments (`<file>`): Enter completes instead of
    /// sending.
    pub takes_arguments: bool,
}

/// Which menu is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `/`: commands and skills.
    Commands,
    /// `@`: files of the project.
    Files,
}

/// An open menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    pub kind: Kind,
    pub entries: Vec<Entry>,
    pub selected: usize,
    /// Byte offset in the composer of the word being completed.
    pub start: usize,
}

impl Menu {
    pub fn up(&mut self) {
        if !self.entries.is_empty() {
            self.selected = (self.selected + self.entries.len() - 1) % self.entries.len();
        }
    }

    pub fn down(&mut self) {
        if !self.entries.is_empty() {
            self.selected = (self.selected + 1) % self.entries.len();
        }
    }

    pub fn chosen(&self) -> Option<&Entry> {
        self.entries.get(self.selected)
    }
}

/// The entries of `all` whose name matches `query` as a subsequence,
/// names starting with it first, then by where the match begins.
pub fn filter(all: &[Entry], query: &str) -> Vec<Entry> {
    let query = query.to_lowercase();
    let mut scored: Vec<(usize, usize, &Entry)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let name = e.name.to_lowercase();
            let score = if name.starts_with(&query) {
                0
            } else if let Some(at) = name.find(&query) {
                1 + at
            } else if subsequence(&name, &query) {
                1000
            } else {
                return None;
            };
            Some((score, i, e))
        })
        .collect();
    scored.sort_by_key(|(score, i, _)| (*score, *i));
    scored.into_iter().map(|(_, _, e)| e.clone()).collect()
}

fn subsequence(name: &str, query: &str) -> bool {
    let mut chars = name.chars();
    query.chars().all(|q| chars.any(|c| c == q))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> Entry {
        Entry {
            name: name.into(),
            description: String::new(),
            takes_arguments: false,
        }
    }

    #[test]
    fn prefix_matches_come_first_then_substrings_then_subsequences() {
        let all = [
            entry("compact"),
            entry("cost"),
            entry("clear"),
            entry("model"),
            entry("status"),
        ];
        let names =
            |q: &str| -> Vec<String> { filter(&all, q).into_iter().map(|e| e.name).collect() };
        assert_eq!(names("co"), ["compact", "cost"]);
        assert_eq!(names("st"), ["status", "cost"]);
        assert_eq!(names("cst"), ["cost"]);
        assert_eq!(names("").len(), 5);
    }
}
