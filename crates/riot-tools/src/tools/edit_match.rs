//! Finding `old_string` in a file and, when it is not there, saying why
//! (docs/design.md §6.4: the four mismatch explanations).

use riot_protocol::ValidationError;

use crate::encoding::{LineEndings, crlf_to_lf, lf_to_crlf, line_endings, line_of};

/// Reason codes of an Edit that cannot be applied.
pub(crate) mod code {
    pub const NOT_UNIQUE: &str = "not_unique";
    pub const LINE_NUMBER_PREFIX: &str = "line_number_prefix";
    pub const LINE_ENDINGS: &str = "line_endings_mismatch";
    pub const WHITESPACE: &str = "whitespace_mismatch";
    pub const ABSENT: &str = "not_found_in_file";
}

/// An edit that can be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub new_text: String,
    pub count: usize,
    /// Inclusive 1-based line ranges of every replaced occurrence.
    pub ranges: Vec<(u64, u64)>,
    /// Set when `old_string`/`new_string` were adapted to the file's line
    /// endings.
    pub adapted: Option<&'static str>,
}

/// Where `needle` occurs (non-overlapping, like `str::replace`).
fn positions(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle).map(|(i, _)| i).collect()
}

fn line_range(text: &str, pos: usize, len: usize) -> (u64, u64) {
    let start = line_of(text, pos);
    let end = if len == 0 {
        start
    } else {
        line_of(text, pos + len - 1)
    };
    (start, end)
}

/// Plans replacing `old` by `new` in `text`.
pub(crate) fn plan(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    display: &str,
) -> Result<Plan, ValidationError> {
    let endings = line_endings(text);
    // The file's own line ending for lines new_string adds, when the file
    // is uniform (mixed files are left exactly as the model wrote them).
    let (old_a, new_a, adapted) = match endings {
        LineEndings::Crlf if old.contains('\n') && line_endings(old) != LineEndings::Crlf => {
            (lf_to_crlf(old), lf_to_crlf(new), Some("CRLF"))
        }
        LineEndings::Lf if old.contains("\r\n") => (crlf_to_lf(old), crlf_to_lf(new), Some("LF")),
        LineEndings::Crlf => (old.to_owned(), lf_to_crlf(new), None),
        LineEndings::Lf => (old.to_owned(), crlf_to_lf(new), None),
        LineEndings::None | LineEndings::Mixed => (old.to_owned(), new.to_owned(), None),
    };
    let mut found = positions(text, old);
    let (old_used, new_used, adapted) = if !found.is_empty() {
        let new_used = if adapted.is_some() {
            new.to_owned()
        } else {
            new_a
        };
        (old.to_owned(), new_used, None)
    } else {
        found = positions(text, &old_a);
        (old_a, new_a, if found.is_empty() { None } else { adapted })
    };
    if found.is_empty() {
        return Err(explain_mismatch(text, old, display));
    }
    if found.len() > 1 && !replace_all {
        let lines: Vec<String> = found
            .iter()
            .take(5)
            .map(|p| line_of(text, *p).to_string())
            .collect();
        let more = if found.len() > 5 { ", …" } else { "" };
        return Err(ValidationError::rejected(format!(
            "old_string occurs {} times in {display} (at lines {}{more}); an Edit must name exactly one. Include more surrounding lines in old_string to make it unique, or set replace_all to true to change every occurrence.",
            found.len(),
            lines.join(", ")
        ))
        .with_code(code::NOT_UNIQUE));
    }
    let ranges = found
        .iter()
        .map(|p| line_range(text, *p, old_used.len()))
        .collect();
    let new_text = if replace_all {
        text.replace(&old_used, &new_used)
    } else {
        text.replacen(&old_used, &new_used, 1)
    };
    Ok(Plan {
        new_text,
        count: found.len(),
        ranges,
        adapted,
    })
}

/// Read output copied verbatim: spaces, digits, a tab.
fn has_line_number_prefix(line: &str) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && trimmed.as_bytes().get(digits) == Some(&b'\t')
}

fn squash_ws(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The 1-based line where `old`'s lines occur with whitespace ignored.
fn whitespace_insensitive_line(text: &str, old: &str) -> Option<u64> {
    let hay: Vec<String> = text.lines().map(squash_ws).collect();
    let needle: Vec<String> = old.lines().map(squash_ws).collect();
    let needle: Vec<&String> = needle.iter().collect();
    if needle.is_empty() || needle.iter().all(|l| l.is_empty()) {
        return None;
    }
    let n = needle.len();
    (0..hay.len().saturating_sub(n - 1)).find_map(|i| {
        let window = &hay[i..i + n];
        let matches = window.iter().zip(&needle).enumerate().all(|(k, (h, o))| {
            // First and last lines of old_string may be partial lines.
            if n == 1 {
                h.contains(o.as_str())
            } else if k == 0 {
                h.ends_with(o.as_str())
            } else if k == n - 1 {
                h.starts_with(o.as_str())
            } else {
                h == *o
            }
        });
        matches.then_some(i as u64 + 1)
    })
}

/// Why `old` does not occur in `text`, most specific reason first.
pub(crate) fn explain_mismatch(text: &str, old: &str, display: &str) -> ValidationError {
    let old_lines: Vec<&str> = old.lines().collect();
    if !old_lines.is_empty()
        && old_lines
            .iter()
            .filter(|l| has_line_number_prefix(l))
            .count()
            * 2
            >= old_lines.len().max(1)
        && old_lines.iter().any(|l| has_line_number_prefix(l))
    {
        return ValidationError::rejected(format!(
            "old_string was not found in {display}: its lines start with line-number prefixes copied from Read output (like `    12\\t`). Those numbers are not part of the file. Remove the number and the tab from the start of each line and retry."
        ))
        .with_code(code::LINE_NUMBER_PREFIX);
    }
    let norm_text = crlf_to_lf(text);
    let norm_old = crlf_to_lf(old);
    if let Some(pos) = norm_text.find(&norm_old) {
        let line = line_of(&norm_text, pos);
        let file_style = match line_endings(text) {
            LineEndings::Mixed => "mixes CRLF (\\r\\n) and LF (\\n) line endings",
            LineEndings::Crlf => "uses CRLF (\\r\\n) line endings",
            _ => "uses LF (\\n) line endings",
        };
        return ValidationError::rejected(format!(
            "old_string matches {display} at line {line} only if line endings are ignored: the file {file_style} and old_string's line endings differ from the file's at that place. Write old_string and new_string with exactly the file's line endings there (`\\r\\n` where the file has CRLF, `\\n` where it has LF) and retry."
        ))
        .with_code(code::LINE_ENDINGS);
    }
    if let Some(line) = whitespace_insensitive_line(text, old) {
        return ValidationError::rejected(format!(
            "old_string matches {display} at line {line} only if whitespace is ignored: the indentation or spacing differs (tabs versus spaces, or a different number of spaces). Copy the exact whitespace from the Read output (everything after the tab) and retry."
        ))
        .with_code(code::WHITESPACE);
    }
    ValidationError::rejected(format!(
        "old_string was not found in {display}. The file may differ from what you remember: Read it again and copy the exact text you want to replace, including whitespace."
    ))
    .with_code(code::ABSENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(r: Result<Plan, ValidationError>) -> &'static str {
        r.err().and_then(|e| e.code).unwrap_or("applied")
    }

    #[test]
    fn a_unique_match_is_replaced_once() {
        let p = plan("a\nb\nc\n", "b", "B", false, "f").unwrap();
        assert_eq!(p.new_text, "a\nB\nc\n");
        assert_eq!((p.count, p.ranges.clone()), (1, vec![(2, 2)]));
    }

    #[test]
    fn two_matches_are_refused_with_the_count_and_lines() {
        let e = plan("x\ny\nx\n", "x", "z", false, "f.txt").unwrap_err();
        assert_eq!(e.code, Some(code::NOT_UNIQUE));
        assert!(e.message.contains("occurs 2 times"), "{}", e.message);
        assert!(e.message.contains("lines 1, 3"), "{}", e.message);
        let all = plan("x\ny\nx\n", "x", "z", true, "f.txt").unwrap();
        assert_eq!(all.new_text, "z\ny\nz\n");
        assert_eq!(all.count, 2);
    }

    #[test]
    fn crlf_files_accept_lf_old_strings_and_get_crlf_new_lines() {
        let p = plan("a\r\nb\r\nc\r\n", "a\nb\n", "a\nX\nY\n", false, "f").unwrap();
        assert_eq!(p.new_text, "a\r\nX\r\nY\r\nc\r\n");
        assert_eq!(p.adapted, Some("CRLF"));
        let single = plan("a\r\nb\r\n", "b", "b\nb2", false, "f").unwrap();
        assert_eq!(
            single.new_text, "a\r\nb\r\nb2\r\n",
            "added lines follow the file"
        );
    }

    #[test]
    fn each_mismatch_has_its_own_explanation() {
        let text = "fn main() {\n    let x = 1;\n}\n";
        assert_eq!(
            code_of(plan(text, "     2\t    let x = 1;", "y", false, "f")),
            code::LINE_NUMBER_PREFIX
        );
        assert_eq!(
            code_of(plan(text, "\tlet x = 1;", "y", false, "f")),
            code::WHITESPACE
        );
        assert_eq!(
            code_of(plan(text, "let y = 2;", "y", false, "f")),
            code::ABSENT
        );
        let mixed = "a\r\nb\nc\r\n";
        assert_eq!(
            code_of(plan(mixed, "a\nb\n", "y", false, "f")),
            code::LINE_ENDINGS,
            "a mixed file is not guessed at"
        );
    }

    #[test]
    fn mixed_files_keep_every_other_line_ending() {
        let p = plan("a\r\nb\nc\r\n", "b\n", "B\n", false, "f").unwrap();
        assert_eq!(p.new_text, "a\r\nB\nc\r\n");
    }
}
