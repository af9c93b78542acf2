//! The dangerous-construct scan (docs/design.md §9.3): `eval`, `source`,
//! variables that change what runs, git options that run code, credential
//! files named as arguments, protected paths handed to a command that
//! writes or redirected into.
//!
//! It fails closed. Words are resolved first (variables set earlier in the
//! line, `$HOME`, `$RIOT_HOME`, `$PWD`, ANSI-C strings, `~`, the directory
//! `cd` moved to); a word that stays unknown is assumed to name a
//! protected path, and a glob is settled against the disk by the policy.
//! Where that assumption is only about writing (a run-time word given to
//! a command that may write, a redirect into one, a relative path after a
//! `cd` to an unknown directory), the finding is recorded apart
//! ([`CommandAnalysis::runtime_unknown`]): an OS sandbox that keeps the
//! protected paths as they were enforces it instead. Reading through such
//! a word (`cat "$f"`, `< "$f"`) stays dangerous: it could print a
//! credential.
//! Commands run by other commands (`bash -c`, `find -exec`, `xargs`,
//! `watch`, `busybox`) are judged as commands of their own. Findings are
//! recorded on the analysis; the scan never stops early.

mod commands;
mod recursive;

use std::path::PathBuf;

use super::pending::PendingGlob;
use super::resolve::Scope;
use super::{CommandAnalysis, Context, SimpleCommand, Word};
use super::{is_dangerous_var, strip_runners};
use crate::paths;
use commands::{judge_by_name, judge_xargs};
use recursive::recursive_reader;

/// Commands that open no file and run nothing, whatever their arguments:
/// an argument only known when they run cannot reach a protected path.
const NO_FILE_COMMANDS: &[&str] = &[
    "echo", "printf", "true", "false", "test", "[", ":", "sleep", "basename", "dirname", "seq",
    "expr", "exit", "return", "shift", "kill", "wait", "cd", "pushd", "popd", "type", "which",
];

/// Judges every subcommand in order, including the ones judging adds
/// (commands run by other commands).
pub(super) fn judge(analysis: &mut CommandAnalysis, ctx: &Context, depth: usize) {
    let mut scope = Scope::new(ctx);
    let assignments = std::mem::take(&mut analysis.assignments);
    let mut next_assignment = 0;
    let mut i = 0;
    while i < analysis.subcommands.len() {
        while let Some((before, name, value)) = assignments.get(next_assignment)
            && *before <= i
        {
            let resolved = scope.resolve(value);
            scope.assign(name, resolved);
            next_assignment += 1;
        }
        let mut sub = analysis.subcommands[i].clone();
        resolve_words(&mut sub, &scope);
        analysis.subcommands[i] = sub.clone();
        if sub.ast_verified {
            judge_subcommand(&sub, analysis, &mut scope, ctx, depth);
        } else {
            legacy_arguments(&sub, analysis);
        }
        i += 1;
    }
    let nested = std::mem::take(&mut analysis.nested);
    analysis.subcommands.extend(nested);
}

fn resolve_words(sub: &mut SimpleCommand, scope: &Scope) {
    for word in &mut sub.words {
        if word.resolved.is_none() || sub.ast_verified {
            word.resolved = scope.resolve(word);
        }
    }
    for redirect in &mut sub.redirects {
        redirect.target.resolved = scope.resolve(&redirect.target);
    }
}

/// The fallback splitter's words are untrusted text: judged by name only.
fn legacy_arguments(sub: &SimpleCommand, analysis: &mut CommandAnalysis) {
    for word in sub.words.iter().skip(1) {
        if let Some(s) = paths::classify(&word.text, None)
            && s.applies_to_reads()
        {
            analysis.note_dangerous(format!(
                "names a credential file as an argument: {}",
                s.detail()
            ));
        }
    }
}

fn name_of(word: &Word) -> Option<&str> {
    let name = word.resolved.as_deref()?;
    Some(super::resolve::program_name(name))
}

fn judge_subcommand(
    sub: &SimpleCommand,
    analysis: &mut CommandAnalysis,
    scope: &mut Scope,
    ctx: &Context,
    depth: usize,
) {
    // Look through every command-running prefix (`sudo`, `command`,
    // `exec`, `xargs`, `env -i`...): `sudo eval x` is still eval.
    let runs = strip_runners(&sub.words);
    note_loader_variables(sub, runs.len(), analysis);
    let runs = strip_multicall(runs);
    let Some(first) = runs.first() else {
        judge_redirects(sub, analysis, scope, ctx);
        return;
    };
    let name = name_of(first).filter(|_| !first.unquoted_glob);
    let Some(name) = name else {
        analysis.note_dangerous(format!(
            "the command name `{}` is only known when it runs, so it could be anything",
            first.text
        ));
        judge_redirects(sub, analysis, scope, ctx);
        return;
    };
    let name = name.to_owned();
    let args = &runs[1..];
    judge_by_name(&name, args, analysis, ctx, depth);
    judge_xargs(sub, analysis);
    // `cd .git && echo x > config` writes into .git through a harmless-
    // looking redirect: entering a protected directory is itself a finding.
    if matches!(name.as_str(), "cd" | "pushd") {
        change_directory(args, analysis, scope, ctx);
    }
    judge_arguments(sub, &name, args, analysis, scope, ctx);
    recursive_reader(&name, args, &sub.text, analysis, scope, ctx);
    judge_redirects(sub, analysis, scope, ctx);
}

/// Notes the variables set for the command (`NAME=value cmd`, or as a
/// prefix's argument, `env NAME=value cmd`) that change what it runs or
/// loads. `runs_len` is how many words are left after the prefixes.
fn note_loader_variables(sub: &SimpleCommand, runs_len: usize, analysis: &mut CommandAnalysis) {
    for (name, _) in &sub.env {
        if is_dangerous_var(name) {
            analysis.note_dangerous(format!(
                "`{name}=` changes what `{}` runs or loads",
                sub.text
            ));
        }
    }
    for word in sub.words.iter().take(sub.words.len() - runs_len) {
        if let Some((name, _)) = word.text.split_once('=')
            && is_dangerous_var(name)
        {
            analysis.note_dangerous(format!("`{name}=...` changes what the command loads"));
        }
    }
}

/// The words left once multi-call binaries and the prefixes after them
/// are looked through.
fn strip_multicall(mut runs: &[Word]) -> &[Word] {
    // `busybox rm` is `rm`.
    while runs.len() > 1
        && name_of(&runs[0]).is_some_and(|n| super::resolve::MULTICALL.contains(&n))
    {
        runs = strip_runners(&runs[1..]);
    }
    runs
}

/// Follows a `cd`/`pushd` into its directory, noting a directory of
/// secrets.
fn change_directory(
    args: &[Word],
    analysis: &mut CommandAnalysis,
    scope: &mut Scope,
    ctx: &Context,
) {
    let back = args.iter().any(|w| w.resolved.as_deref() == Some("-"));
    let dir = args.iter().find(|w| !w.text.starts_with('-'));
    let target = match dir {
        _ if back => None,
        None => scope.home().flatten(),
        Some(w) if w.unquoted_glob => Some(w.text.clone()),
        Some(w) => w.resolved.clone(),
    };
    // Later paths are judged from where it leads; entering a
    // directory of secrets is a finding of its own.
    if let Some(t) = &target
        && let Some(s) = judge_path(t, scope, ctx)
            .into_iter()
            .flatten()
            .find(paths::Sensitivity::applies_to_reads)
    {
        analysis.note_dangerous(format!(
            "changes into a directory of secrets: {}",
            s.detail()
        ));
    }
    scope.enter(target.as_deref());
}

/// Notes the arguments that name (or, only known when the command runs,
/// could name) a credential file or a protected path it may change.
fn judge_arguments(
    sub: &SimpleCommand,
    name: &str,
    args: &[Word],
    analysis: &mut CommandAnalysis,
    scope: &Scope,
    ctx: &Context,
) {
    let command_name_only_reads = NO_FILE_COMMANDS.contains(&name);
    let read_only = sub.command_only_reads() || command_name_only_reads;
    // A reader (`cat "$f"`) prints what a run-time word names: that could
    // be a credential, which no sandbox keeps from being read. Given to a
    // command that may write (`cp "$f" "$f.bak"`), the word could name a
    // protected path to change, which a protecting sandbox keeps as it was.
    let prints_what_it_reads = reads_whatever_the_words(name, args);
    for word in sub.words.iter().skip(1) {
        let Some(value) = word.resolved.as_deref() else {
            if !command_name_only_reads {
                if prints_what_it_reads {
                    analysis.note_dangerous(format!(
                        "`{}` is only known when it runs, so it could name a credential file",
                        word.text
                    ));
                } else {
                    analysis.note_runtime_unknown(format!(
                        "`{}` is only known when it runs, so it could name a protected path",
                        word.text
                    ));
                }
            }
            continue;
        };
        if word.unquoted_glob {
            if !command_name_only_reads {
                pend_glob(analysis, &word.text, value, scope, !read_only);
            }
            continue;
        }
        // `--flag=value`, `NAME=value`, `host:path` and `REV:path` name
        // paths too (`scp host:.ssh/id_rsa .`, `git show HEAD:.env`).
        for candidate in path_candidates(value) {
            for s in judge_path(candidate, scope, ctx).into_iter().flatten() {
                if s.applies_to_reads() {
                    analysis.note_dangerous(format!(
                        "names a credential file as an argument: {}",
                        s.detail()
                    ));
                } else if !read_only {
                    analysis.note_dangerous(format!(
                        "`{}` may change a protected path: {}",
                        sub.text,
                        s.detail()
                    ));
                }
            }
        }
        if !read_only && scope.lost && !value.starts_with('/') && !value.starts_with('-') {
            analysis.note_runtime_unknown(format!(
                "`{}` runs in a directory only known when it runs, so `{value}` could be a protected path",
                sub.text
            ));
        }
    }
}

/// Whether the command only reads with its run-time words taken as plain
/// arguments (`cat "$f"`, `grep x $f`, `xargs cat`): such a word is then
/// something it reads and prints.
fn reads_whatever_the_words(name: &str, args: &[Word]) -> bool {
    let argv: Vec<&str> = std::iter::once(name)
        .chain(args.iter().map(|w| w.resolved.as_deref().unwrap_or("word")))
        .collect();
    super::readonly::is_read_only_argv(&argv)
}

fn judge_redirects(
    sub: &SimpleCommand,
    analysis: &mut CommandAnalysis,
    scope: &Scope,
    ctx: &Context,
) {
    for redirect in &sub.redirects {
        let target = &redirect.target;
        let Some(value) = target.resolved.as_deref() else {
            let finding = format!(
                "redirects {} `{}`, which is only known when it runs, so it could be a protected file",
                if redirect.writes { "into" } else { "from" },
                target.text
            );
            // Reading from it could feed a credential to the command.
            if redirect.writes {
                analysis.note_runtime_unknown(finding);
            } else {
                analysis.note_dangerous(finding);
            }
            continue;
        };
        if target.unquoted_glob {
            pend_glob(analysis, &target.text, value, scope, redirect.writes);
            continue;
        }
        if redirect.writes && scope.lost && !value.starts_with('/') {
            analysis.note_runtime_unknown(format!(
                "redirects into `{value}` in a directory only known when it runs, so it could be a protected file"
            ));
        }
        for s in judge_path(value, scope, ctx).into_iter().flatten() {
            if !redirect.writes {
                if s.applies_to_reads() {
                    analysis.note_dangerous(format!("reads a credential file: {}", s.detail()));
                }
            } else {
                analysis.note_dangerous(format!(
                    "redirects output into `{}`: {}",
                    target.text,
                    s.detail()
                ));
            }
        }
    }
}

/// The sensitivity of a path as the command will see it: by its text,
/// and joined to every directory the command may be in.
fn judge_path(text: &str, scope: &Scope, ctx: &Context) -> Vec<Option<paths::Sensitivity>> {
    let home = ctx.home.as_deref();
    let riot_home = ctx.riot_home.as_deref();
    let mut out = vec![paths::classify_for(text, home, riot_home)];
    if !text.starts_with('/') {
        for cwd in scope.cwds.iter().flatten() {
            let joined = paths::normalize(&cwd.join(text));
            out.push(paths::classify_for(
                &joined.to_string_lossy(),
                home,
                riot_home,
            ));
        }
    } else {
        let normal = paths::normalize(&PathBuf::from(text));
        out.push(paths::classify_for(
            &normal.to_string_lossy(),
            home,
            riot_home,
        ));
    }
    // The strongest first: a credential over a write-only finding.
    out.sort_by_key(|s| match s {
        Some(s) if s.applies_to_reads() => 0,
        Some(_) => 1,
        None => 2,
    });
    out
}

fn pend_glob(analysis: &mut CommandAnalysis, raw: &str, value: &str, scope: &Scope, write: bool) {
    let mut patterns = Vec::new();
    if value.starts_with('/') {
        patterns.push(value.to_owned());
    } else {
        for cwd in &scope.cwds {
            let pattern = match cwd {
                Some(c) => c.join(value).to_string_lossy().into_owned(),
                None => value.to_owned(),
            };
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
    }
    analysis.pending_globs.push(PendingGlob {
        raw: raw.to_owned(),
        patterns,
        write,
    });
}

/// The parts of an argument that may be paths: the word itself, the value
/// of `--flag=value` / `NAME=value`, and what follows `host:` or `REV:`
/// (`scp host:.ssh/id_rsa .`, `git show HEAD:.env`).
fn path_candidates(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    // `-t.git/hooks`, `-o.git/hooks/pre-commit`: a short flag's value.
    if let Some(rest) = word.strip_prefix('-')
        && !rest.starts_with('-')
        && let Some((i, _)) = rest.char_indices().nth(1)
    {
        out.push(&rest[i..]);
    }
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
