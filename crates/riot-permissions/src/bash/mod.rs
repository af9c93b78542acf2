//! Shell command analysis (docs/design.md §9.3).
//!
//! [`analyze_command`] parses a command line with tree-sitter-bash, refuses
//! any node kind (named **or anonymous**) outside an allow-list, splits the
//! line into simple commands, and grades what it finds:
//!
//! - *unverifiable* (variables, `$(...)`, loops, a redirect into an ordinary
//!   file, a shape it does not understand): an Ask that bypass mode waves
//!   through;
//! - *dangerous* (`eval`, `source`, `LD_PRELOAD=`/`PATH=` prefixes, a
//!   redirect into a sensitive path, a credential file named as an
//!   argument): an Ask that bypass mode does **not** wave through;
//! - *only known when it runs* (a word, a redirect target or a working
//!   directory Riot cannot work out, given to something that may write:
//!   `cp "$f" "$f.bak"`): assumed to name a protected path, so asked like a
//!   dangerous finding — unless the command runs in an OS sandbox that
//!   keeps the protected paths as they were, which decides instead
//!   ([`CommandAnalysis::runtime_unknown`]).
//!
//! The scan keeps the first finding of each grade and never stops at an
//! unverifiable one, so a later dangerous construct is never hidden.
//!
//! ```
//! use riot_permissions::analyze_command;
//!
//! assert!(analyze_command("git log --oneline | head -5").is_read_only());
//! assert!(!analyze_command("sed -i s/a/b/ x").is_read_only());
//! assert!(analyze_command("echo x >> ~/.zshrc").dangerous().is_some());
//! ```

mod danger;
mod fallback;
mod git;
pub(crate) mod pending;
mod readonly;
mod resolve;
mod walk;
mod wrappers;

pub use pending::{PendingGlob, PendingTree};
pub use resolve::{Context, HOLE};

pub use wrappers::{strip_runners, strip_wrappers};

/// At most this many simple commands are judged one by one; more → Ask.
pub const MAX_SUBCOMMANDS: usize = 50;

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word's value with quotes and escapes removed; expansions in it
    /// keep their source text (`$HOME/x`, `$(cmd)`).
    pub text: String,
    /// No expansion of any kind: the shell passes `text` as is (a leading
    /// `~` is kept as written).
    pub literal: bool,
    /// Contains an unquoted `*`, `?` or `[`, which the shell expands.
    pub unquoted_glob: bool,
    /// The word's pieces, for resolving variables in it.
    pub parts: Vec<Part>,
    /// The value the shell will pass, when the analysis could work it out
    /// (variables set earlier in the line, `$HOME`, `$RIOT_HOME`, `$PWD`,
    /// ANSI-C strings, `~`). `None`: only known when it runs.
    pub resolved: Option<String>,
}

/// One piece of a [`Word`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text the shell passes as is.
    Lit(String),
    /// A leading `~` in an unquoted word: the home directory.
    Home,
    /// `$NAME` or `${NAME}`.
    Var(String),
    /// A command substitution, a special parameter, an expansion with an
    /// operator: unknown until it runs.
    Unknown,
}

impl Word {
    /// A word with known text (derived commands, tests).
    pub fn known(text: impl Into<String>) -> Self {
        let text = text.into();
        Word {
            parts: vec![Part::Lit(text.clone())],
            resolved: Some(text.clone()),
            text,
            literal: true,
            unquoted_glob: false,
        }
    }

    /// A word only known when the command runs (`{}` of `find -exec`,
    /// the items `xargs` reads).
    pub fn unknown(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            literal: false,
            unquoted_glob: false,
            parts: vec![Part::Unknown],
            resolved: None,
        }
    }
}

/// A redirect of a simple command, judged once words are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Where it reads from or writes to.
    pub target: Word,
    /// Output (`>`, `>>`, `&>`...) rather than input (`<`).
    pub writes: bool,
}

/// One simple command: `NAME=value ... cmd args ... redirects`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The source text, for display.
    pub text: String,
    /// `NAME=value` prefixes.
    pub env: Vec<(String, String)>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Files this command's output is redirected into (not `/dev/null`).
    pub redirect_writes: Vec<String>,
    /// Every file redirect, input and output, for the safety checks.
    pub redirects: Vec<Redirect>,
    /// Found by the AST walk (as opposed to the fallback splitter).
    pub ast_verified: bool,
    /// Not written as a command of its own but run by one: the script of
    /// `bash -c`, the command of `find -exec`, `xargs` or `watch`.
    pub derived: bool,
}

impl SimpleCommand {
    /// The words as strings.
    pub fn argv(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }

    /// The text rules match against: the words joined by single spaces.
    pub fn match_text(&self) -> String {
        join(&self.words)
    }

    /// The match text with known wrappers (`timeout 30`, `nice -n 5`,
    /// `nohup`, `time`, `env VAR=x`) removed, when that differs.
    pub fn stripped_match_text(&self) -> Option<String> {
        let stripped = strip_wrappers(&self.words);
        (stripped.words.len() != self.words.len()).then(|| join(stripped.words))
    }

    /// The match text with every command-running prefix removed, `sudo`
    /// included (`sudo -u root rm -rf /` → `rm -rf /`). Only deny and ask
    /// rules use it: they may over-match, an allow rule must not.
    pub fn runner_stripped_match_text(&self) -> Option<String> {
        let stripped = strip_runners(&self.words);
        (stripped.len() != self.words.len()).then(|| join(stripped))
    }

    /// The texts deny and ask rules are matched against when parts of the
    /// command are only known when it runs: resolved words as their
    /// values, unknown ones (and the expanding part of a glob) as a
    /// [`HOLE`] that may stand for anything. Also with command-running
    /// prefixes removed, an absolute program path cut to its name and
    /// `busybox`/`toybox` looked through. Over-matching only narrows.
    pub fn deny_match_texts(&self) -> Vec<String> {
        resolve::deny_match_texts(self)
    }

    /// Whether every word is free of expansions.
    pub fn is_literal(&self) -> bool {
        self.words.iter().all(|w| w.literal)
    }

    /// Read-only: a command on the allow-list whose every flag is on its
    /// safe list, with no expansions, unquoted globs, env prefixes or
    /// output redirects.
    pub fn is_read_only(&self) -> bool {
        self.env.is_empty() && self.redirect_writes.is_empty() && self.command_only_reads()
    }

    /// The command and its arguments only read (env prefixes and
    /// redirects aside): whether a protected path it names is only read.
    pub(crate) fn command_only_reads(&self) -> bool {
        if self.words.iter().any(|w| !w.literal || w.unquoted_glob) {
            return false;
        }
        let stripped = strip_wrappers(&self.words);
        if stripped.used_env {
            return false;
        }
        let argv: Vec<&str> = stripped.words.iter().map(|w| w.text.as_str()).collect();
        readonly::is_read_only_argv(&argv)
    }
}

fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The result of [`analyze_command`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandAnalysis {
    /// The command line as given.
    pub source: String,
    /// Simple commands in source order, including those nested inside
    /// `$(...)`, loops and subshells.
    pub subcommands: Vec<SimpleCommand>,
    /// Why the split cannot be trusted (parse failure, a node kind outside
    /// the allow-list, loops, too many subcommands). When set, content
    /// allow rules do not apply.
    pub structure: Option<String>,
    /// Globs whose matches must be looked up on disk before the call is
    /// judged (the policy does it; without a file system it assumes the
    /// worst).
    pub pending_globs: Vec<PendingGlob>,
    /// Directories a recursive reader (`grep -r`, `rg --hidden`) would
    /// print every file of: the policy looks for secret files in them.
    pub pending_trees: Vec<PendingTree>,
    /// `NAME=value` statements: (index of the next subcommand, name, value).
    pub(crate) assignments: Vec<(usize, String, Word)>,
    /// Commands of nested scripts, judged already, added at the end.
    pub(crate) nested: Vec<SimpleCommand>,
    unverifiable: Option<String>,
    dangerous: Option<String>,
    runtime_unknown: Option<String>,
}

impl CommandAnalysis {
    /// The first unverifiable finding, if any.
    pub fn unverifiable(&self) -> Option<&str> {
        self.unverifiable.as_deref()
    }

    /// The first dangerous finding, if any.
    pub fn dangerous(&self) -> Option<&str> {
        self.dangerous.as_deref()
    }

    /// The first finding that exists only because something is known only
    /// when the command runs — a word, a redirect target, the directory a
    /// `cd` went to — handed to a command that may write: it could name a
    /// protected path. A safety finding like [`Self::dangerous`], except
    /// where the command runs in an OS sandbox that keeps the protected
    /// paths as they were (`Policy::with_protecting_sandbox`). Reading a
    /// credential through such a word stays a dangerous finding.
    pub fn runtime_unknown(&self) -> Option<&str> {
        self.runtime_unknown.as_deref()
    }

    /// Whether the split into subcommands came from a clean AST walk.
    pub fn is_verified(&self) -> bool {
        self.structure.is_none()
    }

    /// True only when every subcommand is read-only and nothing was found.
    /// A wrong `true` lets a command run in every mode, so this fails closed.
    pub fn is_read_only(&self) -> bool {
        self.structure.is_none()
            && self.unverifiable.is_none()
            && self.dangerous.is_none()
            && self.runtime_unknown.is_none()
            && !self.subcommands.is_empty()
            && self.subcommands.iter().all(SimpleCommand::is_read_only)
    }

    /// A short reason why the command is not read-only, for messages.
    pub fn not_read_only_reason(&self) -> String {
        if let Some(d) = &self.dangerous {
            return d.clone();
        }
        if let Some(s) = &self.structure {
            return s.clone();
        }
        if let Some(u) = &self.unverifiable {
            return u.clone();
        }
        if let Some(r) = &self.runtime_unknown {
            return r.clone();
        }
        match self.subcommands.iter().find(|s| !s.is_read_only()) {
            Some(sub) => format!("`{}` is not a known read-only command", sub.text),
            None if self.subcommands.is_empty() => "the command is empty".into(),
            None => "the command is read-only".into(),
        }
    }

    pub(crate) fn note_unverifiable(&mut self, detail: impl Into<String>) {
        if self.unverifiable.is_none() {
            self.unverifiable = Some(detail.into());
        }
    }

    /// Records a dangerous finding (the policy's disk checks add theirs).
    pub fn note_dangerous(&mut self, detail: impl Into<String>) {
        if self.dangerous.is_none() {
            self.dangerous = Some(detail.into());
        }
    }

    /// Records a finding that exists only because a word, a redirect
    /// target or a directory is known only when the command runs, and that
    /// is about writing a protected path ([`Self::runtime_unknown`]).
    pub(crate) fn note_runtime_unknown(&mut self, detail: impl Into<String>) {
        if self.runtime_unknown.is_none() {
            self.runtime_unknown = Some(detail.into());
        }
    }

    pub(crate) fn note_structure(&mut self, detail: impl Into<String>) {
        let detail = detail.into();
        self.note_unverifiable(detail.clone());
        if self.structure.is_none() {
            self.structure = Some(detail);
        }
    }
}

/// Analyzes a shell command line. Never fails: what cannot be understood
/// is reported as unverifiable. Without a [`Context`], `$HOME` and the
/// like are unknown, and so fail closed.
pub fn analyze_command(command: &str) -> CommandAnalysis {
    analyze_command_in(command, &Context::default())
}

/// [`analyze_command`] knowing the home directory, Riot's home and the
/// working directory, so `$HOME/.bashrc`, `$RIOT_HOME/settings.json`, `cd
/// ~/.config && ...` and `~/bin/x` are judged by where they lead.
pub fn analyze_command_in(command: &str, ctx: &Context) -> CommandAnalysis {
    analyze_at_depth(command, 0, ctx)
}

/// `bash -c '...'` strings are analyzed as commands of their own, this
/// deep at most.
const MAX_NESTED_SHELLS: usize = 3;

fn analyze_at_depth(command: &str, depth: usize, ctx: &Context) -> CommandAnalysis {
    let mut analysis = CommandAnalysis {
        source: command.to_owned(),
        ..CommandAnalysis::default()
    };
    if !walk::analyze(command, &mut analysis) {
        fallback::analyze(command, &mut analysis);
    }
    danger::judge(&mut analysis, ctx, depth);
    if analysis.subcommands.len() > MAX_SUBCOMMANDS {
        analysis.note_structure(format!(
            "the command has {} subcommands; at most {MAX_SUBCOMMANDS} are checked one by one",
            analysis.subcommands.len()
        ));
    }
    analysis
}

/// Variables that change what a command runs or loads.
const DANGEROUS_VARS: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "PATH",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "IFS",
    "SHELLOPTS",
    "PS4",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_ASKPASS",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "EDITOR",
    "VISUAL",
    "PAGER",
];

/// Whether setting this variable can change what a command executes.
pub fn is_dangerous_var(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name) || name.starts_with("DYLD_") || name.starts_with("GIT_CONFIG_")
}

#[cfg(test)]
mod tests;
