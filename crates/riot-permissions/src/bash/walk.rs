//! The tree-sitter-bash walk: an allow-list check over every node (named
//! and anonymous), then extraction of simple commands and findings.

mod words;

use tree_sitter::{Node, Parser};

use super::{CommandAnalysis, Redirect, SimpleCommand, Word};

/// Node kinds the analysis understands. Anything else — a function
/// definition, `case`, arithmetic, `&` (background), brace expansion — is
/// too complex to verify. Anonymous kinds are listed too: `&` is one, and a
/// walk that skipped anonymous nodes would wave `cmd &` through.
const ALLOWED_KINDS: &[&str] = &[
    // structure
    "program",
    "list",
    "pipeline",
    "negated_command",
    "redirected_statement",
    "command",
    "command_name",
    "comment",
    // words
    "word",
    "number",
    "string",
    "string_content",
    "raw_string",
    "concatenation",
    "ansi_c_string",
    // expansions (unverifiable, but understood)
    "simple_expansion",
    "expansion",
    "variable_name",
    "special_variable_name",
    "command_substitution",
    "process_substitution",
    "variable_assignment",
    // redirects
    "file_redirect",
    "file_descriptor",
    "heredoc_redirect",
    "heredoc_start",
    "heredoc_body",
    "heredoc_content",
    "heredoc_end",
    "herestring_redirect",
    // loops and groups (unverifiable, but their commands are still checked)
    "for_statement",
    "while_statement",
    "do_group",
    "if_statement",
    "elif_clause",
    "else_clause",
    "compound_statement",
    "subshell",
    // anonymous: separators and operators
    "&&",
    "||",
    "|",
    "|&",
    ";",
    "\"",
    "$",
    "${",
    "}",
    "{",
    "$(",
    "(",
    ")",
    "`",
    "=",
    ">",
    ">>",
    "<",
    "&>",
    "&>>",
    ">&",
    "<&",
    ">&-",
    "<&-",
    ">|",
    "<<",
    "<<-",
    "<<<",
    "<(",
    ">(",
    "!",
    "for",
    "in",
    "do",
    "done",
    "while",
    "until",
    "if",
    "then",
    "elif",
    "else",
    "fi",
];

/// Deepest nesting walked; deeper input is too complex (and would risk
/// the stack).
const MAX_DEPTH: usize = 64;

/// Returns false when the parser could not produce a clean tree, so the
/// caller falls back to word splitting.
pub(super) fn analyze(source: &str, analysis: &mut CommandAnalysis) -> bool {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return false;
    }
    let Some(tree) = parser.parse(source, None) else {
        return false;
    };
    let root = tree.root_node();
    if root.has_error() {
        return false;
    }
    if let Some(kind) = first_disallowed(root, 0) {
        analysis.note_structure(format!(
            "the command uses `{kind}`, which Riot cannot verify"
        ));
        // Keep scanning so a dangerous construct is still reported.
        super::fallback::scan_tokens(source, analysis);
    }
    let mut walker = Walker {
        src: source.as_bytes(),
        analysis,
        depth: 0,
    };
    walker.statement(root);
    true
}

/// The first node kind not on the allow-list, visiting **every** child.
pub(super) fn first_disallowed(node: Node<'_>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some("deep nesting".into());
    }
    if node.is_error() || node.is_missing() || !ALLOWED_KINDS.contains(&node.kind()) {
        return Some(node.kind().to_owned());
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if let Some(kind) = first_disallowed(child, depth + 1) {
            return Some(kind);
        }
    }
    None
}

struct Walker<'a> {
    src: &'a [u8],
    analysis: &'a mut CommandAnalysis,
    depth: usize,
}

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src).unwrap_or_default().to_owned()
    }

    fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor).collect()
    }

    fn statement(&mut self, node: Node<'_>) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        match node.kind() {
            "program" | "list" | "pipeline" | "negated_command" => {
                for child in Self::named_children(node) {
                    self.statement(child);
                }
            }
            "do_group" | "compound_statement" | "subshell" | "else_clause" => {
                self.analysis
                    .note_structure(format!("the command uses a `{}` block", node.kind()));
                for child in Self::named_children(node) {
                    self.statement(child);
                }
            }
            "for_statement" | "while_statement" | "if_statement" | "elif_clause" => {
                self.analysis
                    .note_structure("the command uses a loop or conditional".to_owned());
                for child in Self::named_children(node) {
                    if is_statement(child.kind()) {
                        self.statement(child);
                    } else {
                        self.word(child);
                    }
                }
            }
            "redirected_statement" => {
                let children = Self::named_children(node);
                let (redirects, body): (Vec<_>, Vec<_>) =
                    children.into_iter().partition(|c| is_redirect(c.kind()));
                let text = self.text(node);
                match body.as_slice() {
                    [cmd] if cmd.kind() == "command" => self.command(*cmd, &redirects, text),
                    _ => {
                        for b in body {
                            self.statement(b);
                        }
                        // `{ ...; } > file`: the redirect is judged as a
                        // command of its own.
                        let mut orphan = empty_command(text);
                        for r in redirects {
                            self.redirect(r, &mut orphan);
                        }
                        self.analysis.subcommands.push(orphan);
                    }
                }
            }
            "command" => {
                let text = self.text(node);
                self.command(node, &[], text);
            }
            "variable_assignment" => {
                // Walking the value also collects commands it substitutes.
                let (name, value) = self.assignment(node);
                let next = self.analysis.subcommands.len();
                self.analysis.assignments.push((next, name.clone(), value));
                if super::is_dangerous_var(&name) {
                    self.analysis
                        .note_dangerous(format!("`{name}=` changes what later commands run"));
                }
                self.analysis
                    .note_unverifiable(format!("`{}` sets a shell variable", self.text(node)));
            }
            "comment" => {}
            other => {
                self.analysis.note_structure(format!(
                    "the command uses `{other}`, which Riot cannot verify"
                ));
                // The commands inside are still judged (`case`, function
                // bodies, `export X=$(...)`).
                self.inside_unknown(node);
            }
        }
        self.depth -= 1;
    }

    /// Walks a construct the analysis does not understand, judging every
    /// command and assignment found in it.
    fn inside_unknown(&mut self, node: Node<'_>) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        for child in Self::named_children(node) {
            match child.kind() {
                k if is_statement(k) => self.statement(child),
                "word"
                | "string"
                | "raw_string"
                | "concatenation"
                | "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "process_substitution"
                | "ansi_c_string"
                | "number" => {
                    self.word(child);
                }
                _ => self.inside_unknown(child),
            }
        }
        self.depth -= 1;
    }

    fn assignment(&mut self, node: Node<'_>) -> (String, Word) {
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n))
            .unwrap_or_default();
        let value = match node.child_by_field_name("value") {
            Some(v) => self.word(v),
            None => Word::known(""),
        };
        (name, value)
    }

    fn command(&mut self, node: Node<'_>, outer_redirects: &[Node<'_>], text: String) {
        let mut sc = empty_command(text);
        for child in Self::named_children(node) {
            match child.kind() {
                "variable_assignment" => {
                    let (name, value) = self.assignment(child);
                    sc.env.push((name, value.text));
                }
                "command_name" => {
                    for part in Self::named_children(child) {
                        let w = self.word(part);
                        sc.words.push(w);
                    }
                }
                k if is_redirect(k) => self.redirect(child, &mut sc),
                "comment" => {}
                _ => {
                    let w = self.word(child);
                    sc.words.push(w);
                }
            }
        }
        for r in outer_redirects {
            self.redirect(*r, &mut sc);
        }
        self.analysis.subcommands.push(sc);
    }

    fn redirect(&mut self, node: Node<'_>, sc: &mut SimpleCommand) {
        match node.kind() {
            "file_redirect" => {
                let mut cursor = node.walk();
                let op = node
                    .children(&mut cursor)
                    .find(|c| !c.is_named())
                    .map(|c| c.kind().to_owned())
                    .unwrap_or_default();
                let Some(dest) = node.child_by_field_name("destination") else {
                    self.analysis
                        .note_unverifiable(format!("`{}` has no target", self.text(node)));
                    return;
                };
                let is_number = dest.kind() == "number";
                let target = self.word(dest);
                self.grade_redirect(&op, &target, is_number, sc);
            }
            "herestring_redirect" => {
                for part in Self::named_children(node) {
                    self.word(part);
                }
            }
            "heredoc_redirect" => {
                for part in Self::named_children(node) {
                    match part.kind() {
                        "heredoc_start" | "heredoc_end" => {}
                        "heredoc_body" => {
                            self.word(part);
                        }
                        k if is_redirect(k) => self.redirect(part, sc),
                        k if is_statement(k) => self.statement(part),
                        _ => {
                            self.word(part);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Records a redirect; whether its target is protected is judged
    /// once words are resolved.
    fn grade_redirect(&mut self, op: &str, target: &Word, is_number: bool, sc: &mut SimpleCommand) {
        let reads = matches!(op, "<" | "<&" | "<&-");
        let dup = matches!(op, ">&" | "<&" | ">&-" | "<&-") && (is_number || target.text == "-");
        if dup {
            return;
        }
        let discarded = target.literal
            && matches!(
                target.text.as_str(),
                "/dev/null" | "/dev/stdout" | "/dev/stderr"
            );
        if discarded {
            return;
        }
        if !reads {
            if target.literal {
                self.analysis
                    .note_unverifiable(format!("writes to the file `{}`", target.text));
            } else {
                self.analysis.note_unverifiable(format!(
                    "redirects to `{}`, which is only known when it runs",
                    target.text
                ));
            }
            sc.redirect_writes.push(target.text.clone());
        }
        sc.redirects.push(Redirect {
            target: target.clone(),
            writes: !reads,
        });
    }
}

fn empty_command(text: String) -> SimpleCommand {
    SimpleCommand {
        text,
        env: Vec::new(),
        words: Vec::new(),
        redirect_writes: Vec::new(),
        redirects: Vec::new(),
        ast_verified: true,
        derived: false,
    }
}

fn is_redirect(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

fn is_statement(kind: &str) -> bool {
    matches!(
        kind,
        "command"
            | "list"
            | "pipeline"
            | "negated_command"
            | "redirected_statement"
            | "variable_assignment"
            | "for_statement"
            | "while_statement"
            | "if_statement"
            | "elif_clause"
            | "else_clause"
            | "do_group"
            | "compound_statement"
            | "subshell"
            | "comment"
    )
}
