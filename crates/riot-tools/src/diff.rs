//! Line diffs for `UiPayload::FileDiff` (people see hunks; the model gets a
//! short confirmation).

use riot_protocol::{DiffHunk, DiffLine, DiffLineKind};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// Unified-diff hunks between two texts; line terminators are dropped
/// from the lines.
pub(crate) fn hunks(old: &str, new: &str) -> Vec<DiffHunk> {
    hunks_with_context(old, new, CONTEXT)
}

/// One hunk holding both texts whole: every unchanged line as context
/// (a notebook cell before and after). Empty when both are empty.
pub(crate) fn whole(old: &str, new: &str) -> Vec<DiffHunk> {
    let lines = old.lines().count().max(new.lines().count());
    hunks_with_context(old, new, lines + 1)
}

fn hunks_with_context(old: &str, new: &str, context: usize) -> Vec<DiffHunk> {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_lines = last.old_range().end - old_start;
        let new_lines = last.new_range().end - new_start;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffLineKind::Context,
                    ChangeTag::Insert => DiffLineKind::Added,
                    ChangeTag::Delete => DiffLineKind::Removed,
                };
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                lines.push(DiffLine {
                    kind,
                    text: text.to_owned(),
                });
            }
        }
        out.push(DiffHunk {
            // 1-based like unified diffs; an empty side starts at 0.
            old_start: if old_lines == 0 {
                old_start as u64
            } else {
                old_start as u64 + 1
            },
            old_lines: old_lines as u64,
            new_start: if new_lines == 0 {
                new_start as u64
            } else {
                new_start as u64 + 1
            },
            new_lines: new_lines as u64,
            lines,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_gives_one_hunk_with_context() {
        let h = hunks("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(h.len(), 1);
        assert_eq!(
            (
                h[0].old_start,
                h[0].old_lines,
                h[0].new_start,
                h[0].new_lines
            ),
            (1, 3, 1, 3)
        );
        let kinds: Vec<_> = h[0]
            .lines
            .iter()
            .map(|l| (l.kind, l.text.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (DiffLineKind::Context, "a"),
                (DiffLineKind::Removed, "b"),
                (DiffLineKind::Added, "B"),
                (DiffLineKind::Context, "c"),
            ]
        );
    }

    #[test]
    fn a_whole_diff_keeps_every_unchanged_line() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
        let h = whole(old, &old.replace('e', "E"));
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].old_start, h[0].old_lines, h[0].new_lines), (1, 9, 9));
        assert_eq!(h[0].lines.len(), 10, "eight kept, one removed, one added");
        assert!(whole("", "").is_empty());
    }

    #[test]
    fn creating_a_file_is_all_added() {
        let h = hunks("", "x\r\ny\r\n");
        assert_eq!(h.len(), 1);
        assert_eq!((h[0].old_start, h[0].old_lines, h[0].new_lines), (0, 0, 2));
        assert_eq!(h[0].lines[0].text, "x", "CR is not part of the shown line");
    }
}
