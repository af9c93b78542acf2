//! Word building: an argument node turned into a [`Word`] (quotes and
//! escapes removed, expansions and globs noted, command substitutions
//! walked into).

use tree_sitter::Node;

use super::Walker;
use crate::bash::{Part, Word};

impl Walker<'_> {
    /// Turns an argument node into a [`Word`], noting expansions and
    /// walking into command substitutions.
    pub(super) fn word(&mut self, node: Node<'_>) -> Word {
        let raw = self.text(node);
        match node.kind() {
            "word" => unquoted_word(&raw),
            "number" | "variable_name" => Word {
                literal: node.kind() == "number",
                ..Word::known(raw)
            },
            "raw_string" => Word::known(
                raw.strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or(&raw),
            ),
            "string" => self.double_quoted_word(node),
            "concatenation" => self.concatenated_word(node),
            "simple_expansion" | "expansion" => self.expansion_word(node, raw),
            "command_substitution" | "process_substitution" => self.substitution_word(node, raw),
            "ansi_c_string" => {
                self.analysis
                    .note_unverifiable(format!("`{raw}` is an ANSI-C quoted string"));
                match crate::bash::resolve::decode_ansi_c(&raw) {
                    Some(decoded) => Word {
                        parts: vec![Part::Lit(decoded)],
                        ..non_literal(raw)
                    },
                    None => non_literal(raw),
                }
            }
            "heredoc_body" => {
                for part in Self::named_children(node) {
                    if part.kind() != "heredoc_content" {
                        self.word(part);
                    }
                }
                Word::known(raw)
            }
            other => {
                self.analysis.note_structure(format!(
                    "the command uses `{other}`, which Riot cannot verify"
                ));
                self.inside_unknown(node);
                non_literal(raw)
            }
        }
    }

    /// The [`Word`] of a double-quoted `"..."` string, walking into the
    /// expansions inside it.
    fn double_quoted_word(&mut self, node: Node<'_>) -> Word {
        let mut literal = true;
        let mut text = String::new();
        let mut parts = Vec::new();
        for part in Self::named_children(node) {
            if part.kind() == "string_content" {
                let content = unescape_dquoted(&self.text(part));
                text.push_str(&content);
                parts.push(Part::Lit(content));
            } else {
                let w = self.word(part);
                literal &= w.literal;
                text.push_str(&w.text);
                // `"~/x"` is not the home directory.
                parts.extend(w.parts.into_iter().map(|p| match p {
                    Part::Home => Part::Lit("~".into()),
                    other => other,
                }));
            }
        }
        Word {
            text,
            literal,
            unquoted_glob: false,
            parts,
            resolved: None,
        }
    }

    /// The [`Word`] of pieces written side by side (`a"$b"c`), noting a
    /// glob or brace expansion among them.
    fn concatenated_word(&mut self, node: Node<'_>) -> Word {
        let mut literal = true;
        let mut glob = false;
        let mut text = String::new();
        let mut parts = Vec::new();
        for (i, part) in Self::named_children(node).into_iter().enumerate() {
            // `{a,b}` arrives as the words `{`, `a,b`, `}`.
            if part.kind() == "word" && self.text(part).contains(['{', '}']) {
                glob = true;
            }
            let w = self.word(part);
            literal &= w.literal;
            glob |= w.unquoted_glob;
            text.push_str(&w.text);
            parts.extend(w.parts.into_iter().map(|p| match p {
                Part::Home if i > 0 => Part::Lit("~".into()),
                other => other,
            }));
        }
        Word {
            text,
            literal,
            unquoted_glob: glob,
            parts,
            resolved: None,
        }
    }

    /// The [`Word`] of a `$NAME` / `${...}` expansion: a variable when it
    /// is a plain one, unknown otherwise.
    fn expansion_word(&mut self, node: Node<'_>, raw: String) -> Word {
        self.analysis
            .note_unverifiable(format!("`{raw}` is a variable, only known when it runs"));
        let children = Self::named_children(node);
        for part in &children {
            if !matches!(part.kind(), "variable_name" | "special_variable_name") {
                self.word(*part);
            }
        }
        // Only a plain `$NAME` / `${NAME}` can be worked out.
        let plain = match children.as_slice() {
            [only] if only.kind() == "variable_name" => {
                let inner = self.text(*only);
                (raw == format!("${inner}") || raw == format!("${{{inner}}}")).then_some(inner)
            }
            _ => None,
        };
        Word {
            parts: vec![plain.map_or(Part::Unknown, Part::Var)],
            ..non_literal(raw)
        }
    }

    /// The [`Word`] of a `$(...)` or `<(...)` substitution, walking the
    /// commands inside it.
    fn substitution_word(&mut self, node: Node<'_>, raw: String) -> Word {
        self.analysis.note_unverifiable(format!(
            "`{raw}` runs a command whose output is only known when it runs"
        ));
        for child in Self::named_children(node) {
            self.statement(child);
        }
        // `<(cmd)` passes a pipe's name, never a file of the project;
        // its command is judged on its own.
        if node.kind() == "process_substitution" {
            return Word {
                parts: vec![Part::Lit("/dev/fd/63".into())],
                ..non_literal(raw)
            };
        }
        non_literal(raw)
    }
}

/// The [`Word`] of an unquoted word: escapes removed, a glob noted, and
/// a leading `~` taken as the home directory.
fn unquoted_word(raw: &str) -> Word {
    let (text, glob) = unescape_word(raw);
    // An unquoted leading `~` is the home directory.
    let parts = match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            vec![Part::Home, Part::Lit(rest.to_owned())]
        }
        _ => vec![Part::Lit(text.clone())],
    };
    Word {
        text,
        literal: true,
        unquoted_glob: glob,
        parts,
        resolved: None,
    }
}

fn non_literal(raw: String) -> Word {
    Word::unknown(raw)
}

/// Removes backslash escapes from an unquoted word and reports whether an
/// unescaped glob or brace-expansion character remains.
fn unescape_word(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut glob = false;
    let mut brace_open = false;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '*' | '?' | '[' => {
                glob = true;
                out.push(c);
            }
            // Brace expansion (`{a,b}`, `{1..9}`) also makes new words.
            '{' => {
                brace_open = true;
                out.push(c);
            }
            '}' if brace_open => {
                glob = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    (out, glob)
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\`.
fn unescape_dquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '"' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}
