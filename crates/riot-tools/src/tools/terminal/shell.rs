//! Whether what is typed into a terminal reaches a shell: its foreground
//! program, or the command it was opened with, reads typed text as command
//! lines.

use riot_protocol::{TerminalForeground, Terminals};

/// Programs that read what is typed into them as shell command lines.
const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "fish", "ksh", "mksh", "ash", "busybox", "tcsh", "csh", "nu",
    "elvish", "xonsh", "pwsh", "rbash", "oksh", "lksh", "posh", "yash",
];

/// Programs that hand what is typed on to a shell they run where the
/// terminal does not see it: on a pseudo-terminal of their own, as another
/// user, on another machine or in a container.
const SHELL_RELAYS: &[&str] = &[
    "tmux",
    "screen",
    "zellij",
    "script",
    "expect",
    "unbuffer",
    "su",
    "sudo",
    "doas",
    "runuser",
    "login",
    "ssh",
    "mosh-client",
    "telnet",
    "docker",
    "podman",
    "kubectl",
    "nsenter",
    "chroot",
    "machinectl",
    "distrobox",
    "toolbox",
];

/// Programs that start the terminal's program and hold the terminal until
/// it takes it: what is typed meanwhile waits for a program not known
/// yet. The OS sandbox's `bwrap` and Riot's own helper (`riot
/// __sandbox-exec`).
const STARTERS: &[&str] = &["bwrap", "riot"];

/// Whether a program by this name reads typed text as shell command
/// lines: a shell, also by a versioned name (`ksh93`, `zsh-5.9`), a
/// program that hands it to one (`tmux`, `ssh`), or one still starting
/// the terminal's program (fail closed).
fn reads_typed_commands(program: &str) -> bool {
    let bare = program.trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-'));
    SHELLS.contains(&program)
        || SHELLS.contains(&bare)
        || SHELL_RELAYS.contains(&program)
        || STARTERS.contains(&program)
}

/// Whether text typed into terminal `name` now reaches a shell, so that
/// it is judged as command lines: its foreground program reads typed
/// commands, or cannot be told (fail closed). Where the system does not
/// say which programs run, the command the terminal was opened with is
/// judged instead.
pub(super) fn types_into_a_shell(terminals: &dyn Terminals, name: &str) -> bool {
    match terminals.foreground(name) {
        TerminalForeground::Programs(names) => names.iter().any(|n| reads_typed_commands(n)),
        TerminalForeground::NotReported => terminals
            .list()
            .iter()
            .find(|t| t.name == name)
            .is_none_or(|t| opens_a_shell(&t.command)),
        TerminalForeground::Unknown => true,
    }
}

/// Whether an opening command line could leave a shell reading what is
/// typed: anything but one plain command (`python3 -q`, `node`) whose
/// program, past `sudo`, `env` and the like, is no shell.
fn opens_a_shell(command: &str) -> bool {
    let analysis = riot_permissions::analyze_command(command);
    let [only] = analysis.subcommands.as_slice() else {
        return true;
    };
    if !analysis.is_verified() || !only.is_literal() || !only.env.is_empty() {
        return true;
    }
    match riot_permissions::bash::strip_runners(&only.words).first() {
        Some(program) => {
            let path = program.text.as_str();
            reads_typed_commands(path.rsplit('/').next().unwrap_or(path))
        }
        None => true,
    }
}
