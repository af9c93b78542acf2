//! git's own read-only judgement (ARCHITECTURE §9.3): a read-only
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

/// Config keys whose value git runs as a program or uses to pick one.
const CODE_RUNNING_KEYS: &[&str] = &[
    "core.hookspath",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.gitproxy",
    "core.askpass",
    "sequence.editor",
    "gpg.program",
    "credential.helper",
    "diff.external",
    "alias.",
    "filter.",
    "diff.",
    "merge.",
    "pager.",
    "url.",
];

/// `git config KEY VALUE` that makes git run code later (a hook path, a
/// pager, an alias, a filter...): a write to git's internal state that
/// bypass mode must not wave through, like a write into `.git/`.
pub(super) fn config_runs_code(args: &[&str]) -> Option<String> {
    let mut i = 0;
    while let Some(&arg) = args.get(i) {
        match arg {
            "-C" | "-c" => i += 2,
            _ if arg.starts_with('-') => i += 1,
            _ => break,
        }
    }
    if args.get(i) != Some(&"config") || git_read_only(args) {
        return None;
    }
    let key = args[i + 1..].iter().find(|a| !a.starts_with('-'))?;
    let lower = key.to_ascii_lowercase();
    CODE_RUNNING_KEYS
        .iter()
        .any(|k| {
            if k.ends_with('.') {
                lower.starts_with(k)
            } else {
                lower == *k
            }
        })
        .then(|| format!("`git config {key}` makes git run a program of the command's choosing"))
}
