//! When tree-sitter cannot parse a command cleanly: split it into words
//! with `shell-words`, look for injection and dangerous patterns, and lean
//! to Ask — the split is never trusted, so content allow rules and the
//! read-only judgement do not apply.

use super::{CommandAnalysis, SimpleCommand, Word};
use crate::paths;

/// Separators a raw word may be or carry.
const SEPARATORS: &[&str] = &[";", "&&", "||", "|", "&", "|&", ";;", "\n"];

pub(super) fn analyze(source: &str, analysis: &mut CommandAnalysis) {
    analysis.note_structure("the command could not be parsed as shell syntax");
    scan_tokens(source, analysis);
    // One untrusted subcommand carrying the raw words, so deny rules still
    // get something to match against.
    let words = tokens(source)
        .into_iter()
        .map(|t| Word {
            literal: false,
            ..Word::known(t)
        })
        .collect();
    analysis.subcommands.push(SimpleCommand {
        text: source.to_owned(),
        env: Vec::new(),
        words,
        redirect_writes: Vec::new(),
        redirects: Vec::new(),
        ast_verified: false,
        derived: false,
    });
}

fn tokens(source: &str) -> Vec<String> {
    shell_words::split(source)
        .unwrap_or_else(|_| source.split_whitespace().map(str::to_owned).collect())
}

/// The injection and dangerous-pattern scan over raw tokens. Used for
/// parse failures and, as a second opinion, for commands the AST walk
/// found too complex.
pub(super) fn scan_tokens(source: &str, analysis: &mut CommandAnalysis) {
    if source.contains("$(") || source.contains('`') {
        analysis.note_unverifiable("the command contains command substitution");
    }
    if source.contains('$') {
        analysis.note_unverifiable("the command contains a variable expansion");
    }
    let toks = tokens(source);
    let mut at_command_start = true;
    let mut prev: Option<&str> = None;
    for tok in &toks {
        // Separators glued to words (`a;eval`) are split off here.
        for piece in tok.split([';', '&', '|', '(', ')', '\n']) {
            let piece = piece.trim();
            if piece.is_empty() {
                at_command_start = true;
                continue;
            }
            let bare = piece.trim_start_matches(['>', '<', '&', '0', '1', '2']);
            // Without a trustworthy parse, `eval`, `source` and dangerous
            // assignments count anywhere (`export PATH=...`, `f() { eval x; }`);
            // `.` only where a command starts.
            if let Some((name, _)) = piece.split_once('=')
                && super::is_dangerous_var(name)
            {
                analysis.note_dangerous(format!("`{name}=` changes what the command runs"));
            }
            if matches!(piece, "eval" | "source") || (at_command_start && piece == ".") {
                analysis.note_dangerous(format!("`{piece}` runs code from a string or file"));
            }
            let redirect_target = piece.starts_with('>')
                || matches!(prev, Some(p) if p.ends_with('>') || p.ends_with(">>"));
            // `{cp,x,.git/hooks/pre-commit}` is three words to the shell.
            let sensitivity = super::pending::expand_braces(bare)
                .iter()
                .find_map(|alt| paths::classify(alt, None));
            if let Some(s) = sensitivity {
                if s.applies_to_reads() {
                    analysis.note_dangerous(format!("names a credential file: {}", s.detail()));
                } else if redirect_target {
                    analysis
                        .note_dangerous(format!("redirects output into `{bare}`: {}", s.detail()));
                } else {
                    // Without a trustworthy parse, Riot cannot tell whether
                    // the command only reads it.
                    analysis.note_dangerous(format!(
                        "names a protected path in a command Riot cannot follow: {}",
                        s.detail()
                    ));
                }
            }
            at_command_start = piece.contains('=') && !piece.starts_with('-') && at_command_start;
            prev = Some(piece);
        }
        if SEPARATORS.contains(&tok.as_str()) || tok.ends_with(';') {
            at_command_start = true;
        }
    }
}
