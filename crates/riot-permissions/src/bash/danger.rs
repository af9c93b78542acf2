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

use std::path::PathBuf;

use super::pending::{PendingGlob, PendingTree};
use super::resolve::Scope;
use super::{CommandAnalysis, Context, MAX_NESTED_SHELLS, SimpleCommand, Word, analyze_at_depth};
use super::{is_dangerous_var, strip_runners};
use crate::paths;

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh"];

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

/// Notes what a command is dangerous for by its name alone (`eval`,
/// `source`, a shell, `git`, `find`, `env`, `shopt`), judging the
/// commands it runs.
fn judge_by_name(
    name: &str,
    args: &[Word],
    analysis: &mut CommandAnalysis,
    ctx: &Context,
    depth: usize,
) {
    match name {
        "eval" => {
            analysis.note_dangerous("`eval` runs a string as shell code");
            let script: Option<Vec<&str>> = args.iter().map(|w| w.resolved.as_deref()).collect();
            nested_script(
                "eval",
                script.map(|s| s.join(" ")).as_deref(),
                analysis,
                ctx,
                depth,
            );
        }
        "source" | "." => {
            analysis.note_dangerous(format!("`{name}` runs another file's code in this shell"))
        }
        shell if SHELLS.contains(&shell) => nested_shell(name, args, analysis, ctx, depth),
        "git" => {
            if let Some(finding) = super::git::runs_code(args) {
                analysis.note_dangerous(finding);
            }
        }
        "find" => find_exec(args, analysis),
        // `env -S 'cmd args'` splits a string into a command.
        "env" => env_split(args, analysis, ctx, depth),
        "shopt" => {
            let values: Vec<&str> = args.iter().filter_map(|w| w.resolved.as_deref()).collect();
            let changes_globs = values
                .iter()
                .any(|v| matches!(*v, "dotglob" | "globstar" | "nocaseglob" | "extglob"));
            if changes_globs || values.len() != args.len() {
                analysis.note_dangerous(
                    "`shopt` changes what later globs expand to, which Riot cannot follow",
                );
            }
        }
        _ => {}
    }
}

/// Adds the command an `xargs` prefix runs, with the items it reads as
/// an unknown argument.
fn judge_xargs(sub: &SimpleCommand, analysis: &mut CommandAnalysis) {
    // `xargs CMD` runs CMD with arguments read from its input.
    let prefixes = &sub.words[..sub.words.len() - strip_runners(&sub.words).len()];
    if let Some(pos) = prefixes.iter().position(|w| name_of(w) == Some("xargs"))
        && pos + 1 < sub.words.len()
    {
        let inner = strip_runners(&sub.words[pos..]);
        if !inner.is_empty() && inner.len() < sub.words.len() - pos {
            let mut words = inner.to_vec();
            words.push(Word::unknown("(items xargs reads)"));
            derive(analysis, &sub.text, words);
        }
    }
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

/// `bash -c 'script'`: the script is a command line of its own.
fn nested_shell(
    shell: &str,
    args: &[Word],
    analysis: &mut CommandAnalysis,
    ctx: &Context,
    depth: usize,
) {
    // `-c` alone or bundled (`-xc`, `-lc`); the script is the first word
    // after it that is not an option (`bash -c -e 'script'`).
    let is_c = |w: &Word| {
        w.resolved
            .as_deref()
            .is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'))
    };
    let not_option = |w: &&Word| {
        w.resolved
            .as_deref()
            .is_none_or(|t| !t.starts_with('-') && !t.starts_with('+'))
    };
    let Some(pos) = args.iter().position(is_c) else {
        // No `-c`: a script file runs (unverifiable, like any program), or
        // with no file the shell runs whatever arrives on its input.
        if !args.iter().any(|w| not_option(&w)) {
            let label = format!("{shell} reading its input");
            nested_script(&label, None, analysis, ctx, depth);
        }
        return;
    };
    let script = args[pos + 1..]
        .iter()
        .find(not_option)
        .and_then(|w| w.resolved.clone());
    let label = format!("{shell} -c");
    nested_script(&label, script.as_deref(), analysis, ctx, depth);
}

/// A script some command runs: analyzed as a command line of its own, its
/// commands judged with the outer ones (so deny rules see them). A script
/// only known when it runs could do anything.
fn nested_script(
    label: &str,
    script: Option<&str>,
    analysis: &mut CommandAnalysis,
    ctx: &Context,
    depth: usize,
) {
    let Some(script) = script.filter(|_| depth < MAX_NESTED_SHELLS) else {
        analysis.note_dangerous(format!(
            "`{label}` runs a script Riot cannot read, so it could do anything"
        ));
        derive(analysis, label, vec![Word::unknown("(script)")]);
        return;
    };
    let inner = analyze_at_depth(script, depth + 1, ctx);
    if let Some(d) = inner.dangerous() {
        analysis.note_dangerous(format!("inside `{label}`: {d}"));
    }
    if let Some(r) = inner.runtime_unknown() {
        analysis.note_runtime_unknown(format!("inside `{label}`: {r}"));
    }
    if let Some(u) = inner.unverifiable() {
        analysis.note_unverifiable(format!("inside `{label}`: {u}"));
    }
    if let Some(s) = &inner.structure {
        analysis.note_unverifiable(format!("inside `{label}`: {s}"));
    }
    analysis.pending_globs.extend(inner.pending_globs);
    analysis.pending_trees.extend(inner.pending_trees);
    // Already judged inside; added after the outer commands are judged,
    // for rule matching.
    for mut sub in inner.subcommands {
        sub.derived = true;
        analysis.nested.push(sub);
    }
}

/// `env -S 'cmd args'` (`--split-string`) runs a string as a command.
fn env_split(args: &[Word], analysis: &mut CommandAnalysis, ctx: &Context, depth: usize) {
    let Some(pos) = args.iter().position(|w| {
        w.resolved
            .as_deref()
            .is_some_and(|t| t == "-S" || t.starts_with("--split-string"))
    }) else {
        return;
    };
    let script = match args[pos].resolved.as_deref() {
        Some(t) if t.starts_with("--split-string=") => {
            Some(t["--split-string=".len()..].to_owned())
        }
        _ => args.get(pos + 1).and_then(|w| w.resolved.clone()),
    };
    nested_script("env -S", script.as_deref(), analysis, ctx, depth);
}

/// `find ... -exec CMD ARGS {} ;` runs CMD on what it finds.
fn find_exec(args: &[Word], analysis: &mut CommandAnalysis) {
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].resolved.as_deref().unwrap_or("");
        if matches!(flag, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let mut words = Vec::new();
            let mut j = i + 1;
            while let Some(w) = args.get(j) {
                match w.resolved.as_deref() {
                    Some(";" | "+") => break,
                    // find replaces `{}` anywhere in a word.
                    Some(t) if t.contains("{}") => words.push(Word::unknown(t)),
                    _ => words.push(w.clone()),
                }
                j += 1;
            }
            if !words.is_empty() {
                derive(analysis, &format!("find {flag}"), words);
            }
            i = j;
        }
        i += 1;
    }
}

/// Adds a command another command runs; it is judged like the others.
fn derive(analysis: &mut CommandAnalysis, by: &str, words: Vec<Word>) {
    let text = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    analysis.subcommands.push(SimpleCommand {
        text: format!("{text} (run by `{by}`)"),
        env: Vec::new(),
        words,
        redirect_writes: Vec::new(),
        redirects: Vec::new(),
        ast_verified: true,
        derived: true,
    });
}

/// `grep -r`, `rg --hidden`/`-uu`, `ag -u` print every file under a
/// directory: the policy looks for secret files there.
fn recursive_reader(
    name: &str,
    args: &[Word],
    text: &str,
    analysis: &mut CommandAnalysis,
    scope: &Scope,
    ctx: &Context,
) {
    let values: Vec<&str> = args.iter().filter_map(|w| w.resolved.as_deref()).collect();
    // Letters of a short-flag bundle up to the first that takes a value
    // (`rg -trust` is `-t rust`, no `-u`).
    let value_letters: &[char] = match name {
        "rg" => &[
            't', 'T', 'g', 'e', 'f', 'm', 'A', 'B', 'C', 'j', 'M', 'r', 'E', 'd',
        ],
        _ => &['e', 'f', 'm', 'A', 'B', 'C', 'd', 'D'],
    };
    let short_has = |v: &str, letters: &[char]| {
        if !v.starts_with('-') || v.starts_with("--") {
            return false;
        }
        for c in v[1..].chars() {
            if letters.contains(&c) {
                return true;
            }
            if value_letters.contains(&c) {
                return false;
            }
        }
        false
    };
    let recursive = match name {
        "grep" | "egrep" | "fgrep" => {
            values.iter().any(|v| {
                short_has(v, &['r', 'R'])
                    || matches!(
                        *v,
                        "--recursive" | "--dereference-recursive" | "--directories=recurse"
                    )
            }) || values
                .windows(2)
                .any(|w| matches!(w[0], "-d" | "--directories") && w[1] == "recurse")
        }
        "rg" => values.iter().any(|v| {
            short_has(v, &['u', '.'])
                || *v == "--hidden"
                || v.starts_with("--no-ignore")
                || *v == "--unrestricted"
        }),
        "ag" => values.iter().any(|v| {
            short_has(v, &['u', 'U'])
                || matches!(*v, "--unrestricted" | "--hidden" | "--skip-vcs-ignores")
        }),
        _ => false,
    };
    if !recursive {
        return;
    }
    // Name filters that keep to files no secret file is named like.
    let mut filters = Vec::new();
    let mut it = values.iter();
    let mut positional = Vec::new();
    let mut pattern_given = false;
    while let Some(v) = it.next() {
        match *v {
            "-e" | "--regexp" | "-f" | "--file" => {
                pattern_given = true;
                it.next();
            }
            _ if v.starts_with("--regexp=") || v.starts_with("--file=") => pattern_given = true,
            _ if (v.starts_with("-e") || v.starts_with("-f")) && v.len() > 2 => {
                pattern_given = true;
            }
            "-g" | "--glob" | "--include" => {
                if let Some(f) = it.next() {
                    filters.push(f.to_string());
                }
            }
            _ if v.starts_with("--include=") || v.starts_with("--glob=") => {
                filters.push(v.split_once('=').map_or("", |(_, f)| f).to_owned());
            }
            "-t"
            | "-T"
            | "--type"
            | "--type-not"
            | "-m"
            | "-A"
            | "-B"
            | "-C"
            | "--max-count"
            | "--context"
            | "-d"
            | "--directories"
            | "--exclude"
            | "--exclude-dir"
            | "-G"
            | "--file-search-regex" => {
                it.next();
            }
            _ if v.starts_with('-') => {}
            _ => positional.push(*v),
        }
    }
    let protect = super::pending::Protect {
        home: ctx.home.as_deref(),
        riot_home: ctx.riot_home.as_deref(),
    };
    if !filters.is_empty()
        && filters.iter().all(|f| {
            !f.starts_with('!')
                && super::pending::could_reach_by_name(f, &protect)
                    .is_none_or(|s| !s.applies_to_reads())
        })
    {
        return;
    }
    let roots: Vec<&str> = if pattern_given {
        positional
    } else {
        positional.into_iter().skip(1).collect()
    };
    let roots = if roots.is_empty() { vec!["."] } else { roots };
    for root in roots {
        let absolute: Vec<String> = if root.starts_with('/') {
            vec![root.to_owned()]
        } else {
            scope
                .cwds
                .iter()
                .map(|cwd| match cwd {
                    Some(c) => paths::normalize(&c.join(root))
                        .to_string_lossy()
                        .into_owned(),
                    None => root.to_owned(),
                })
                .collect()
        };
        for root in absolute {
            analysis.pending_trees.push(PendingTree {
                command: text.to_owned(),
                root,
            });
        }
    }
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
