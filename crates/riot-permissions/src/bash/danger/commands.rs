//! The commands judged by their name: `eval`, `source`, the shells,
//! `git`, `find -exec`, `env -S`, `shopt`, and the commands that run other
//! commands (`bash -c`, `find -exec`, `xargs`), added to the analysis as
//! commands of their own.

use super::name_of;
use crate::bash::{
    CommandAnalysis, Context, MAX_NESTED_SHELLS, SimpleCommand, Word, analyze_at_depth,
    strip_runners,
};

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh"];

/// Notes what a command is dangerous for by its name alone (`eval`,
/// `source`, a shell, `git`, `find`, `env`, `shopt`), judging the
/// commands it runs.
pub(super) fn judge_by_name(
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
            if let Some(finding) = crate::bash::git::runs_code(args) {
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
pub(super) fn judge_xargs(sub: &SimpleCommand, analysis: &mut CommandAnalysis) {
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
