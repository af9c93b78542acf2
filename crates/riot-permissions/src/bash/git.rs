//! git's own read-only judgement (docs/design.md §9.3): a read-only
//! subcommand, harmless global options only (`-c` and `--exec-path` make
//! git run what they name), no flag that writes a file or runs a program,
//! and listing-only shapes for subcommands that can also change things
//! (`branch`, `tag`, `config`, `stash`...).

/// git subcommands that only read.
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "describe",
    "shortlog",
    "show-ref",
    "merge-base",
    "rev-list",
    "name-rev",
    "count-objects",
    "whatchanged",
    "diff-tree",
    "diff-files",
    "diff-index",
    "for-each-ref",
    "version",
    "grep",
    "check-ignore",
    "check-attr",
    "annotate",
    "cherry",
    "verify-commit",
    "var",
];

/// Flags that make an otherwise read-only git command write a file or run
/// a program.
const GIT_FORBIDDEN: &[&str] = &[
    "--output",
    "-o",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--ext-diff",
    "--open-files-in-pager",
    "-O",
];

pub(super) fn git_read_only(args: &[&str]) -> bool {
    let mut i = 0;
    // Global options: only harmless ones. `-c` (sets config, e.g. a pager
    // or an alias that runs code) and `--exec-path` are not.
    while let Some(&arg) = args.get(i) {
        match arg {
            "--no-pager" | "--no-optional-locks" | "--literal-pathspecs" | "--bare" => i += 1,
            "-C" => i += 2,
            _ if arg.starts_with('-') => return false,
            _ => break,
        }
    }
    let Some(&sub) = args.get(i) else {
        return false;
    };
    let rest = &args[i + 1..];
    if rest.iter().any(|a| {
        let flag = a.split_once('=').map_or(*a, |(f, _)| f);
        GIT_FORBIDDEN.contains(&flag)
    }) {
        return false;
    }
    let positional = || rest.iter().filter(|a| !a.starts_with('-')).count();
    match sub {
        _ if GIT_READ_ONLY.contains(&sub) => true,
        // Listing only: a positional would create or delete.
        "branch" => {
            rest.iter().all(|a| {
                matches!(
                    *a,
                    "-a" | "--all"
                        | "-r"
                        | "--remotes"
                        | "-v"
                        | "-vv"
                        | "--verbose"
                        | "--list"
                        | "-l"
                        | "--show-current"
                        | "--merged"
                        | "--no-merged"
                        | "--contains"
                        | "--no-color"
                        | "--color"
                )
            }) && positional() == 0
        }
        "tag" => rest.iter().all(|a| matches!(*a, "-l" | "--list")) && positional() == 0,
        "remote" => rest.iter().all(|a| matches!(*a, "-v" | "--verbose")),
        "stash" => matches!(rest, ["list", ..] | ["show", ..]),
        "reflog" => rest.is_empty() || matches!(rest.first(), Some(&"show")),
        "worktree" => matches!(rest, ["list", ..]),
        // Reading config: `--get`, `--list`, or a single key. A value sets it.
        "config" => {
            let getter = rest.iter().any(|a| {
                matches!(
                    *a,
                    "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "--show-origin"
                )
            });
            let setter = rest.iter().any(|a| {
                matches!(
                    *a,
                    "--add"
                        | "--unset"
                        | "--unset-all"
                        | "--replace-all"
                        | "--edit"
                        | "-e"
                        | "--rename-section"
                        | "--remove-section"
                )
            });
            !setter && (getter || positional() == 1) && positional() <= 1
        }
        _ => false,
    }
}

/// Config keys (lower case) whose value git runs as a program, uses to
/// pick one, or reads more configuration from. A key ending in `.`
/// covers its whole section.
const CODE_RUNNING_KEYS: &[&str] = &[
    "core.hookspath",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.gitproxy",
    "core.askpass",
    "core.worktree",
    "core.alternaterefscommand",
    "init.templatedir",
    "trailer.",
    "submodule.",
    "sequence.editor",
    "interactive.difffilter",
    "web.browser",
    "include.",
    "includeif.",
    "alias.",
    "filter.",
    "diff.",
    "difftool.",
    "merge.",
    "mergetool.",
    "pager.",
    "url.",
    "gpg.",
    "credential.",
    "browser.",
    "man.",
    "remote.",
    "sendemail.",
    "uploadpack.",
    "receive.",
    "protocol.",
    "ssh.",
];

fn key_runs_code(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    CODE_RUNNING_KEYS.iter().any(|k| {
        if k.ends_with('.') {
            lower.starts_with(k)
        } else {
            lower == *k
        }
    })
}

/// `-c KEY=VALUE` (git's own and `clone`'s): a finding when the key makes
/// git run code, or is only known when it runs.
fn config_pair_finding(option: &str, pair: Option<&str>) -> Option<String> {
    let Some(pair) = pair else {
        return Some(format!(
            "`git {option}` sets configuration only known when it runs, which could make git run code"
        ));
    };
    let key = pair.split_once('=').map_or(pair, |(k, _)| k);
    key_runs_code(key).then(|| {
        format!("`git {option} {key}=...` makes git run a program or read other configuration")
    })
}

/// Options and subcommands that make git run code of the command's
/// choosing — now (`-c core.fsmonitor=...`, `--exec-path=DIR`,
/// `--config-env`, `clone --upload-pack`) or later (`git config
/// core.hooksPath`, `init --template`): safety findings, like a write
/// into `.git/`. `args` are git's arguments, resolved where known.
pub(super) fn runs_code(args: &[super::Word]) -> Option<String> {
    let value = |i: usize| args.get(i).and_then(|w| w.resolved.as_deref());
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(arg) = word.resolved.as_deref() else {
            return Some(format!(
                "`{}` is only known when it runs and could be a git option that runs code",
                word.text
            ));
        };
        match arg {
            "-c" => {
                if let Some(f) = config_pair_finding("-c", value(i + 1)) {
                    return Some(f);
                }
                i += 2;
            }
            "-C" | "--namespace" | "--super-prefix" | "--list-cmds" => i += 2,
            _ if arg.starts_with("--config-env") => {
                return Some(
                    "`git --config-env` takes configuration from the environment, which Riot cannot see (it could make git run code)"
                        .into(),
                );
            }
            _ if arg.starts_with("--exec-path=") => {
                return Some("`git --exec-path=DIR` makes git run its commands from DIR".into());
            }
            "--git-dir" | "--work-tree" => i += 2,
            _ if arg.starts_with("--git-dir") || arg.starts_with("--work-tree") => i += 1,
            _ if arg.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = value(i)?;
    let rest = &args[i + 1..];
    let rest_values: Vec<Option<&str>> = rest.iter().map(|w| w.resolved.as_deref()).collect();
    let has = |pred: &dyn Fn(&str) -> bool| rest_values.iter().flatten().any(|a| pred(a));
    match sub {
        "config" => {
            let known: Option<Vec<&str>> = rest_values.iter().copied().collect();
            let Some(known) = known else {
                return Some(
                    "`git config` with a value only known when it runs could make git run code"
                        .into(),
                );
            };
            let mut full = vec!["config"];
            full.extend(&known);
            if git_read_only(&full) {
                return None;
            }
            // The key: the first word that is neither an option nor an
            // option's value, after the newer verbs (`git config set`).
            let mut positional = Vec::new();
            let mut k = 0;
            while let Some(a) = known.get(k) {
                match *a {
                    "--type" | "--file" | "-f" | "--blob" | "--default" | "--comment"
                    | "--value" => k += 2,
                    _ if a.starts_with('-') => k += 1,
                    _ => {
                        positional.push(*a);
                        k += 1;
                    }
                }
            }
            const VERBS: &[&str] = &[
                "set",
                "get",
                "unset",
                "list",
                "edit",
                "rename-section",
                "remove-section",
            ];
            let key = match positional.as_slice() {
                [verb, key, ..] if VERBS.contains(verb) => *key,
                [key, ..] => *key,
                [] => return None,
            };
            key_runs_code(key).then(|| {
                format!("`git config {key}` makes git run a program of the command's choosing")
            })
        }
        "init" | "clone" if has(&|a| a.starts_with("--template")) => Some(format!(
            "`git {sub} --template` copies hooks that git then runs"
        )),
        "clone" | "fetch" | "pull" | "ls-remote" | "archive" | "push" | "submodule"
            if has(&|a| {
                a.starts_with("--upload-pack")
                    || a.starts_with("--receive-pack")
                    || a.starts_with("--exec")
                    || (sub == "clone" && a == "-u")
            }) =>
        {
            Some(format!(
                "`git {sub}` with `--upload-pack`/`--receive-pack`/`--exec` runs a program of the command's choosing"
            ))
        }
        "clone" | "submodule" => {
            let mut j = 0;
            while j < rest_values.len() {
                match rest_values[j] {
                    Some("-c" | "--config") => {
                        if let Some(f) = config_pair_finding(
                            &format!("{sub} --config"),
                            rest_values.get(j + 1).copied().flatten(),
                        ) {
                            return Some(f);
                        }
                        j += 2;
                    }
                    Some(a) if a.starts_with("--config=") => {
                        if let Some(f) =
                            config_pair_finding(&format!("{sub} --config"), Some(&a[9..]))
                        {
                            return Some(f);
                        }
                        j += 1;
                    }
                    _ => j += 1,
                }
            }
            None
        }
        _ => None,
    }
}

impl super::SimpleCommand {
    /// Runs git (directly, or through `sudo`, `env`, `timeout`, …) in a
    /// way that may change the repository: any git command that is not
    /// read-only (`commit`, `reset`, `branch -D`, `stash drop`, `gc`, …).
    /// An argument only known when it runs counts as changing it; a
    /// program only known when it runs is not known to be git.
    pub fn changes_git(&self) -> bool {
        let words = super::strip_runners(&self.words);
        let Some(name) = words.first().and_then(|w| w.resolved.as_deref()) else {
            return false;
        };
        if super::resolve::program_name(name) != "git" {
            return false;
        }
        let args: Option<Vec<&str>> = words[1..].iter().map(|w| w.resolved.as_deref()).collect();
        args.is_none_or(|args| !git_read_only(&args))
    }
}
