//! The read-only judgement: a command on the allow-list **and** every flag
//! on that command's safe list (docs/design.md §9.3). Read-only commands run
//! without asking in every mode, so every entry here is a promise that the
//! command with these flags can neither change state nor run other code.
//! When in doubt, leave it out: a missing entry costs a question, a wrong
//! one is a hole.

/// A command's safe flags.
struct Spec {
    name: &'static str,
    /// Safe single-letter flags (may be bundled: `-la`).
    short: &'static str,
    /// Short flags that take a value (`-n 5`, `-n5`).
    short_value: &'static str,
    /// Safe long flags without a value.
    long: &'static [&'static str],
    /// Long flags that take a value (`--max-count 5`, `--max-count=5`).
    long_value: &'static [&'static str],
    /// `-20` style numeric flags (head, tail).
    numeric: bool,
    /// At most this many positional arguments (`uniq IN OUT` writes OUT).
    max_positional: Option<usize>,
}

const fn spec(name: &'static str, short: &'static str) -> Spec {
    Spec {
        name,
        short,
        short_value: "",
        long: &[],
        long_value: &[],
        numeric: false,
        max_positional: None,
    }
}

#[rustfmt::skip]
const SPECS: &[Spec] = &[
    Spec {
        long: &[
            "--all", "--almost-all", "--classify", "--human-readable", "--recursive", "--reverse",
            "--directory", "--inode", "--size", "--literal", "--numeric-uid-gid",
            "--group-directories-first", "--full-time", "--dereference", "--color", "--si",
        ],
        long_value: &[
            "--color", "--sort", "--time-style", "--format", "--quoting-style", "--width",
        ],
        short_value: "w",
        ..spec("ls", "1aAbBcCdfFghHiklLmnNopqQrRsStuUvxXZ")
    },
    Spec {
        long: &[
            "--number", "--show-all", "--number-nonblank", "--squeeze-blank", "--show-ends",
            "--show-tabs",
        ],
        ..spec("cat", "AbeEnstTuv")
    },
    Spec {
        short_value: "cn",
        long: &["--quiet", "--silent", "--verbose", "--zero-terminated"],
        long_value: &["--lines", "--bytes"],
        numeric: true,
        ..spec("head", "qvz")
    },
    // No -f/-F/--follow: it never ends.
    Spec {
        short_value: "cn",
        long: &["--quiet", "--silent", "--verbose", "--zero-terminated"],
        long_value: &["--lines", "--bytes"],
        numeric: true,
        ..spec("tail", "qvzr")
    },
    Spec {
        long: &[
            "--lines", "--words", "--chars", "--bytes", "--max-line-length",
        ],
        ..spec("wc", "clmwL")
    },
    Spec {
        short_value: "ABCefmd",
        long: &[
            "--extended-regexp", "--fixed-strings", "--basic-regexp", "--perl-regexp",
            "--ignore-case", "--no-ignore-case", "--word-regexp", "--line-regexp",
            "--invert-match", "--count", "--files-with-matches", "--files-without-match",
            "--line-number", "--no-filename", "--with-filename", "--only-matching", "--quiet",
            "--silent", "--no-messages", "--recursive", "--dereference-recursive", "--null",
            "--text", "--byte-offset", "--color", "--colour",
        ],
        long_value: &[
            "--after-context", "--before-context", "--context", "--regexp", "--file",
            "--max-count", "--include", "--exclude", "--exclude-dir", "--color", "--colour",
            "--binary-files", "--directories", "--devices", "--label",
        ],
        ..spec("grep", "EFGPiywxvcLlnhHobqsrRZzaIUT")
    },
    // No --pre (runs a program on each file), no -z/--search-zip
    // (spawns decompressors).
    Spec {
        short_value: "ABCegtTmMEfjd",
        long: &[
            "--ignore-case", "--smart-case", "--case-sensitive", "--word-regexp", "--line-regexp",
            "--invert-match", "--count", "--count-matches", "--files-with-matches",
            "--files-without-match", "--line-number", "--no-line-number", "--no-filename",
            "--with-filename", "--only-matching", "--quiet", "--hidden", "--no-ignore",
            "--no-ignore-vcs", "--follow", "--files", "--json", "--fixed-strings", "--multiline",
            "--heading", "--no-heading", "--vimgrep", "--sort-files", "--stats", "--type-list",
            "--color", "--null", "--trim", "--column", "--no-messages", "--unrestricted",
            "--pcre2", "--crlf", "--text", "--byte-offset",
        ],
        long_value: &[
            "--after-context", "--before-context", "--context", "--regexp", "--glob", "--iglob",
            "--type", "--type-not", "--max-count", "--max-depth", "--max-filesize", "--color",
            "--sort", "--sortr", "--threads", "--encoding", "--file", "--max-columns",
            "--context-separator", "--field-match-separator", "--replace",
        ],
        ..spec("rg", "iSswvcnNlHhoqFxuULbaIPr0")
    },
    spec("echo", "neE"),
    spec("pwd", "LP"),
    // Each call is a fresh shell, so `cd` only steers the commands after it
    // (which are judged on their own; cd into a protected dir is a finding).
    Spec { max_positional: Some(1), ..spec("cd", "LPe") },
    Spec { max_positional: Some(1), ..spec("pushd", "n") },
    spec("popd", "n"),
    spec("true", ""),
    spec("false", ""),
    spec("whoami", ""),
    spec("basename", "asz"),
    spec("dirname", "z"),
    Spec {
        long: &["--all", "--kernel-name", "--machine"],
        ..spec("uname", "asnrvmpio")
    },
    Spec {
        short_value: "",
        ..spec("which", "as")
    },
    Spec {
        long: &["--relative-to", "--canonicalize-missing"],
        long_value: &["--relative-to", "--relative-base"],
        ..spec("realpath", "eLmPqsz")
    },
    spec("readlink", "fmenqsvz"),
    Spec {
        short_value: "c",
        long: &["--dereference", "--terse"],
        long_value: &["--format", "--printf"],
        ..spec("stat", "LfT")
    },
    Spec {
        long: &["--brief", "--mime", "--mime-type", "--dereference"],
        ..spec("file", "bLhiz")
    },
    Spec {
        short_value: "dBt",
        long: &[
            "--human-readable", "--summarize", "--all", "--apparent-size", "--total", "--si",
        ],
        long_value: &["--max-depth", "--exclude", "--block-size"],
        ..spec("du", "ahsckmbxLPSl0")
    },
    Spec {
        long: &[
            "--human-readable", "--si", "--all", "--local", "--print-type", "--inodes",
        ],
        long_value: &["--output", "--type", "--block-size"],
        ..spec("df", "hHTiklaP")
    },
    // No -o (writes its output to a file).
    Spec {
        short_value: "LIPH",
        long: &["--noreport", "--dirsfirst", "--gitignore"],
        long_value: &["--charset"],
        ..spec("tree", "adfilpsughDFrtvJACnQN")
    },
    Spec {
        short_value: "UCIFxX",
        long: &[
            "--unified", "--brief", "--recursive", "--new-file", "--text", "--ignore-case",
            "--ignore-all-space", "--ignore-space-change", "--ignore-blank-lines",
            "--side-by-side", "--report-identical-files", "--color", "--stat", "--minimal",
        ],
        long_value: &["--unified", "--context", "--color", "--exclude", "--label"],
        ..spec("diff", "uNaqrsyiwbBcdpte")
    },
    Spec {
        short_value: "in",
        long: &["--verbose", "--silent", "--print-bytes"],
        ..spec("cmp", "bls")
    },
    spec("comm", "123iz"),
    Spec {
        short_value: "bcdf",
        long: &["--complement", "--only-delimited"],
        long_value: &[
            "--bytes", "--characters", "--delimiter", "--fields", "--output-delimiter",
        ],
        ..spec("cut", "sz")
    },
    // No -o/--output, no --compress-program.
    Spec {
        short_value: "tkS",
        long: &[
            "--reverse", "--numeric-sort", "--human-numeric-sort", "--unique", "--ignore-case",
            "--version-sort", "--general-numeric-sort", "--month-sort", "--stable", "--check",
            "--zero-terminated", "--ignore-leading-blanks", "--dictionary-order",
        ],
        long_value: &["--field-separator", "--key", "--buffer-size", "--parallel"],
        ..spec("sort", "bdfgiMhnRrsuVzcC")
    },
    Spec {
        short_value: "fsw",
        max_positional: Some(1),
        long: &["--count", "--repeated", "--unique", "--ignore-case"],
        ..spec("uniq", "cdDiuz")
    },
    spec("tr", "cdst"),
    Spec {
        short_value: "bvwsn",
        ..spec("nl", "p")
    },
    Spec {
        short_value: "AjNtw",
        ..spec("od", "bcdfilosxv")
    },
    // No -r (reverse mode writes its second positional).
    Spec {
        short_value: "clgsoC",
        max_positional: Some(1),
        ..spec("xxd", "pbeiuE")
    },
    Spec {
        short_value: "nse",
        ..spec("hexdump", "bcCdox")
    },
    Spec {
        short_value: "f",
        long: &[
            "--raw-output", "--compact-output", "--slurp", "--sort-keys", "--null-input", "--tab",
            "--exit-status", "--join-output", "--ascii-output", "--color-output",
            "--monochrome-output",
        ],
        long_value: &["--indent"],
        ..spec("jq", "cnrsjaSeCM")
    },
    Spec {
        short_value: "opUuGgt",
        ..spec("ps", "aAefFlujwxHTM")
    },
    Spec {
        max_positional: Some(0),
        ..spec("date", "uR")
    },
    spec("id", "gGnruz"),
    spec("groups", ""),
    Spec {
        max_positional: Some(0),
        ..spec("hostname", "")
    },
    spec("nproc", ""),
    spec("uptime", ""),
    spec("tac", "bs"),
    spec("rev", ""),
    spec("column", "tsnx"),
    spec("fold", "bsw"),
    spec("expand", "it"),
    spec("sha256sum", "bctz"),
    spec("sha1sum", "bctz"),
    spec("md5sum", "bctz"),
    spec("cksum", ""),
    spec("seq", "sfw"),
    spec("sleep", ""),
];

/// Predicates `find` may use: no `-exec`, `-execdir`, `-ok`, `-okdir`,
/// `-delete`, `-fprint*`, `-fls`.
#[rustfmt::skip]
const FIND_FLAGS: &[&str] = &[
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-type", "-xtype",
    "-maxdepth", "-mindepth", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-size", "-print", "-print0", "-prune", "-not", "-o", "-a", "-and", "-or", "-empty", "-L",
    "-H", "-P", "-regex", "-iregex", "-user", "-group", "-perm", "-links", "-depth", "-ls",
    "-follow", "-xdev", "-mount", "-readable", "-writable", "-executable", "-true", "-false",
    "-samefile", "-inum", "-nouser", "-nogroup", "-regextype", "-printf", "-quit", "-lname",
    "-ilname", "-uid", "-gid", "-used", "-newermt",
];

/// Flags of `find` that take a value (the value may start with `-`).
#[rustfmt::skip]
const FIND_VALUE_FLAGS: &[&str] = &[
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-type", "-xtype",
    "-maxdepth", "-mindepth", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-size", "-regex", "-iregex", "-user", "-group", "-perm", "-links", "-samefile", "-inum",
    "-regextype", "-printf", "-lname", "-ilname", "-uid", "-gid", "-used", "-newermt",
];

/// Whether `argv` (wrappers already stripped) is a read-only command.
pub(super) fn is_read_only_argv(argv: &[&str]) -> bool {
    let Some((&name, args)) = argv.split_first() else {
        return false;
    };
    match name {
        "git" => super::git::git_read_only(args),
        "find" => find_read_only(args),
        "sed" => sed_read_only(args),
        // `date +%s` formats; `date 0101` would set the clock.
        "date" => args
            .iter()
            .all(|a| a.starts_with('+') || matches!(*a, "-u" | "-R" | "--utc")),
        _ => match SPECS.iter().find(|s| s.name == name) {
            Some(spec) => flags_ok(spec, args),
            None => false,
        },
    }
}

fn flags_ok(spec: &Spec, args: &[&str]) -> bool {
    let mut positional = 0;
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            positional += 1;
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (flag, has_value) = match long.split_once('=') {
                Some((f, _)) => (f, true),
                None => (long, false),
            };
            let flag = format!("--{flag}");
            if has_value {
                if !spec.long_value.contains(&flag.as_str()) {
                    return false;
                }
            } else if spec.long.contains(&flag.as_str()) {
                // A flag listed in both lists takes an optional `=value`
                // only; a bare one needs nothing more.
            } else if spec.long_value.contains(&flag.as_str()) {
                if i >= args.len() {
                    return false;
                }
                i += 1;
            } else {
                return false;
            }
            continue;
        }
        let bundle = &arg[1..];
        if spec.numeric && bundle.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for (pos, c) in bundle.char_indices() {
            if spec.short_value.contains(c) {
                // The rest of the bundle is the value, or the next word is.
                if pos + c.len_utf8() == bundle.len() {
                    if i >= args.len() {
                        return false;
                    }
                    i += 1;
                }
                break;
            }
            if !spec.short.contains(c) {
                return false;
            }
        }
    }
    spec.max_positional.is_none_or(|max| positional <= max)
}

fn find_read_only(args: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if matches!(arg, "(" | ")" | "!" | ",") {
            continue;
        }
        if arg.starts_with('-') {
            if !FIND_FLAGS.contains(&arg) {
                return false;
            }
            if FIND_VALUE_FLAGS.contains(&arg) {
                i += 1;
            }
        }
    }
    true
}

/// `sed` without `-i`, and a script that cannot write (`w`, `W`), read
/// (`r`, `R`) or execute (`e`). Letters are judged anywhere in the script:
/// `sed -n '/error/p'` is asked about, which costs a question, not a hole.
fn sed_read_only(args: &[&str]) -> bool {
    let mut scripts = Vec::new();
    let mut i = 0;
    let mut saw_e = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        match arg {
            "-n" | "--quiet" | "--silent" | "-E" | "-r" | "--regexp-extended" | "-s"
            | "--separate" | "-u" | "--unbuffered" | "-z" | "--null-data" => {}
            "-e" | "--expression" => {
                saw_e = true;
                match args.get(i) {
                    Some(s) => scripts.push(*s),
                    None => return false,
                }
                i += 1;
            }
            _ if arg.starts_with('-') => return false,
            _ => {
                if !saw_e && scripts.is_empty() {
                    scripts.push(arg);
                }
            }
        }
    }
    !scripts.is_empty()
        && scripts
            .iter()
            .all(|s| !s.contains(['w', 'W', 'r', 'R', 'e']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ro(cmd: &str) -> bool {
        let argv: Vec<&str> = cmd.split_whitespace().collect();
        is_read_only_argv(&argv)
    }

    #[test]
    fn flags_are_judged_one_by_one() {
        assert!(ro("ls -la"));
        assert!(ro("ls --color=auto -lh src"));
        assert!(!ro("ls --weird"));
        assert!(ro("head -n 5 x"));
        assert!(ro("head -n5 x"));
        assert!(ro("head -20 x"));
        assert!(!ro("tail -f log"));
        assert!(!ro("tail -qf log"));
        assert!(!ro("tail --follow=name log"));
        assert!(!ro("sort -o out x"));
        assert!(!ro("sort --output=out x"));
        assert!(ro("sort -rn x"));
        assert!(!ro("uniq a b"));
        assert!(ro("grep --max-count=3 -rn foo src"));
        assert!(!ro("rg --pre cat foo"));
    }

    #[test]
    fn find_sed_and_git() {
        assert!(ro("find . -name x -type f"));
        assert!(!ro("find . -delete"));
        assert!(!ro("find . -exec rm {} ;"));
        assert!(!ro("find . -fprintf out %p"));
        assert!(ro("sed -n 1,5p f"));
        assert!(!ro("sed -i s/a/b/ f"));
        assert!(!ro("sed s/a/b/w out f"));
        assert!(ro("git status"));
        assert!(ro("git -C sub log --oneline"));
        assert!(!ro("git -c core.pager=x log"));
        assert!(!ro("git --exec-path=/x status"));
        assert!(ro("git config user.name"));
        assert!(!ro("git config user.name bob"));
        assert!(!ro("git push"));
        assert!(!ro("git branch new"));
        assert!(!ro("git diff --output=x"));
    }
}
