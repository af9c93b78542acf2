//! The dangerous-construct scan of one simple command (ARCHITECTURE §9.3):
//! `eval`, `source`, variables that change what runs, credential files
//! named as arguments, protected paths handed to a command that writes.
//! Findings are recorded on the analysis; the scan never stops early.

use super::{CommandAnalysis, MAX_NESTED_SHELLS, SimpleCommand, Word, analyze_at_depth};
use super::{is_dangerous_var, strip_runners, strip_wrappers};
use crate::paths;

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];

pub(super) fn judge_subcommand(sub: &SimpleCommand, analysis: &mut CommandAnalysis, depth: usize) {
    for (name, _) in &sub.env {
        if is_dangerous_var(name) {
            analysis.note_dangerous(format!(
                "`{name}=` changes what `{}` runs or loads",
                sub.text
            ));
        }
    }
    let stripped = strip_wrappers(&sub.words);
    if let Some(first) = stripped.words.first()
        && !first.literal
    {
        analysis.note_unverifiable(format!(
            "the command name `{}` is only known when it runs",
            first.text
        ));
    }
    // Look through every command-running prefix (`sudo`, `command`,
    // `exec`, `xargs`, `env -i`...): `sudo eval x` is still eval.
    let runs = strip_runners(&sub.words);
    for word in sub.words.iter().take(sub.words.len() - runs.len()) {
        if let Some((name, _)) = word.text.split_once('=')
            && is_dangerous_var(name)
        {
            analysis.note_dangerous(format!("`{name}=...` changes what the command loads"));
        }
    }
    if let Some(first) = runs.first() {
        match first.text.as_str() {
            "eval" => analysis.note_dangerous("`eval` runs a string as shell code"),
            "source" | "." => analysis.note_dangerous(format!(
                "`{}` runs another file's code in this shell",
                first.text
            )),
            shell if SHELLS.contains(&shell) => nested_shell(runs, analysis, depth),
            "git" => {
                let args: Vec<&str> = runs[1..].iter().map(|w| w.text.as_str()).collect();
                if let Some(finding) = super::git::config_runs_code(&args) {
                    analysis.note_dangerous(finding);
                }
            }
            _ => {}
        }
    }
    // `cd .git && echo x > config` writes into .git through a harmless-
    // looking redirect: entering a protected directory is itself a finding.
    if let Some(first) = runs.first()
        && matches!(first.text.as_str(), "cd" | "pushd")
        && let Some(dir) = runs.get(1)
        && let Some(s) = paths::classify(&dir.text, None)
    {
        analysis.note_dangerous(format!(
            "changes into a protected directory: {}",
            s.detail()
        ));
    }
    let read_only = sub.command_only_reads();
    for word in sub.words.iter().skip(1) {
        // Non-literal words are judged by their text too: `$HOME/.ssh/id_rsa`
        // still names a private key.
        for candidate in path_candidates(&word.text) {
            match paths::classify(candidate, None) {
                Some(s) if s.applies_to_reads() => {
                    analysis.note_dangerous(format!(
                        "names a credential file as an argument: {}",
                        s.detail()
                    ));
                }
                Some(s) if !read_only => {
                    analysis.note_dangerous(format!(
                        "`{}` may change a protected path: {}",
                        sub.text,
                        s.detail()
                    ));
                }
                _ => {}
            }
        }
    }
}

/// `bash -c 'script'`: the script is a command line of its own.
fn nested_shell(words: &[Word], analysis: &mut CommandAnalysis, depth: usize) {
    let Some(pos) = words.iter().position(|w| w.text == "-c") else {
        return;
    };
    let Some(script) = words.get(pos + 1) else {
        return;
    };
    if !script.literal || depth >= MAX_NESTED_SHELLS {
        analysis.note_unverifiable(format!(
            "`{} -c` runs a script Riot cannot read",
            words[0].text
        ));
        return;
    }
    let inner = analyze_at_depth(&script.text, depth + 1);
    if let Some(d) = inner.dangerous() {
        analysis.note_dangerous(format!("inside `{} -c`: {d}", words[0].text));
    }
    if let Some(u) = inner.unverifiable() {
        analysis.note_unverifiable(format!("inside `{} -c`: {u}", words[0].text));
    }
}

/// The parts of an argument that may be paths: the word itself, the value
/// of `--flag=value` / `NAME=value`, and what follows `host:` or `REV:`
/// (`scp host:.ssh/id_rsa .`, `git show HEAD:.env`).
fn path_candidates(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    if let Some((_, value)) = word.split_once('=')
        && !value.is_empty()
    {
        out.push(value);
    }
    if let Some((_, rest)) = word.rsplit_once(':')
        && !rest.is_empty()
    {
        out.push(rest);
    }
    out
}
