#![allow(clippy::disallowed_methods)] // the sandbox helper: replaces itself with the command (exec)
#![allow(clippy::print_stderr, clippy::print_stdout)] // the helper speaks to the person on stderr (and to the probe on stdout)
#![allow(unsafe_code)] // setsid, setpgid, tcsetpgrp, ioctl and signal are libc calls

//! The helper Riot runs in front of a sandboxed command (`riot
//! __sandbox-exec FLAGS -- PROGRAM ARGS…`): it applies Landlock (read and
//! execute everywhere, write only where granted) and a seccomp filter (no
//! new IPv4/IPv6 sockets and no io_uring when the network is off; no
//! `setsid`/`setpgid`, and no taking a terminal's foreground or a
//! controlling terminal, when there is no PID namespace to hold the
//! command's processes; no `TIOCSTI` or `TIOCLINUX` anywhere), then execs
//! the command. Inside
//! bubblewrap it runs after the namespaces are set up; alone it is the
//! whole sandbox. Inside bubblewrap it also detaches the command from any
//! terminal (a new session: a Bash command) or makes it the foreground job
//! of its terminal (a Terminal tool's program), so bubblewrap's own
//! processes stay in the process group Riot kills. Alone, a Bash
//! command gives up riot's controlling terminal but keeps its group.

use std::ffi::OsString;
use std::path::PathBuf;

/// The name of the hidden subcommand the `riot` binary answers.
pub const SUBCOMMAND: &str = "__sandbox-exec";

/// Exit code of the helper when it could not set the sandbox up (the
/// command did not run).
pub const SETUP_FAILED: i32 = 125;

/// Why the helper's arguments could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// `--write` was the last argument.
    #[error("--write needs a path")]
    WriteWithoutPath,
    /// `--` ended the arguments with nothing after it.
    #[error("no command after --")]
    EmptyCommand,
    /// A flag the helper does not know.
    #[error("unknown argument {arg}")]
    Unknown {
        /// The argument as given (lossily decoded).
        arg: String,
    },
    /// The arguments ended without `--`.
    #[error("no command: give `-- PROGRAM ARGS…`")]
    NoCommand,
}

/// What the helper applies before running the command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelperOptions {
    /// Paths (and everything below them) the command may write.
    pub write: Vec<PathBuf>,
    /// Whether network sockets may be opened.
    pub network: bool,
    /// Refuse `setsid` and `setpgid`, so the process group the runner
    /// kills holds everything the command starts (no PID namespace).
    pub hold_group: bool,
    /// Fail (exit [`SETUP_FAILED`]) unless Landlock is enforced.
    pub require_landlock: bool,
    /// Print `landlock=full|partial|none` on stdout before the command
    /// runs (the probe reads it).
    pub report: bool,
    /// Start the command in a new session, without a controlling terminal
    /// (`setsid`; bubblewrap's `--new-session`, done here so that
    /// bubblewrap's PID 1 stays in the group Riot kills).
    pub new_session: bool,
    /// Put the command in a process group of its own and make it the
    /// foreground job of the terminal on stdin (a Terminal tool's program
    /// inside bubblewrap: Ctrl+C reaches the program, not bubblewrap).
    pub foreground: bool,
    /// Give up the controlling terminal without leaving the process group
    /// (`TIOCNOTTY` on `/dev/tty`; a Bash command under Landlock alone,
    /// which must stay in the group Riot kills but must not reach the
    /// person's terminal).
    pub drop_tty: bool,
}

impl HelperOptions {
    /// The arguments after the helper's path: the subcommand, the flags,
    /// `--`, then `command`.
    pub fn to_args(&self, command: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut args = vec![SUBCOMMAND.to_owned()];
        for path in &self.write {
            args.push("--write".into());
            args.push(path.to_string_lossy().into_owned());
        }
        if !self.network {
            args.push("--no-network".into());
        }
        if self.hold_group {
            args.push("--hold-group".into());
        }
        if self.require_landlock {
            args.push("--require-landlock".into());
        }
        if self.report {
            args.push("--report".into());
        }
        if self.new_session {
            args.push("--new-session".into());
        }
        if self.foreground {
            args.push("--foreground".into());
        }
        if self.drop_tty {
            args.push("--drop-tty".into());
        }
        args.push("--".into());
        args.extend(command);
        args
    }

    /// Parses the arguments after the subcommand: the options and the
    /// command.
    pub fn parse(args: &[OsString]) -> Result<(Self, Vec<OsString>), ArgsError> {
        let mut options = HelperOptions {
            network: true,
            ..HelperOptions::default()
        };
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.to_str() {
                Some("--write") => {
                    let path = it.next().ok_or(ArgsError::WriteWithoutPath)?;
                    options.write.push(PathBuf::from(path));
                }
                Some("--no-network") => options.network = false,
                Some("--hold-group") => options.hold_group = true,
                Some("--require-landlock") => options.require_landlock = true,
                Some("--report") => options.report = true,
                Some("--new-session") => options.new_session = true,
                Some("--foreground") => options.foreground = true,
                Some("--drop-tty") => options.drop_tty = true,
                Some("--") => {
                    let command: Vec<OsString> = it.cloned().collect();
                    if command.is_empty() {
                        return Err(ArgsError::EmptyCommand);
                    }
                    return Ok((options, command));
                }
                _ => {
                    return Err(ArgsError::Unknown {
                        arg: arg.to_string_lossy().into_owned(),
                    });
                }
            }
        }
        Err(ArgsError::NoCommand)
    }
}

/// The helper's entry point: `args` are the arguments after the
/// subcommand. Returns only on failure, with the exit code to use (the
/// reason is on stderr).
pub fn exec_main(args: &[OsString]) -> i32 {
    let (options, command) = match HelperOptions::parse(args) {
        Ok(parsed) => parsed,
        Err(why) => {
            eprintln!("riot sandbox: {why}");
            return SETUP_FAILED;
        }
    };
    #[cfg(target_os = "linux")]
    {
        linux::run(&options, &command)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (options, command);
        eprintln!("riot sandbox: the sandbox helper runs only on Linux");
        SETUP_FAILED
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;

    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
        path_beneath_rules,
    };
    use seccompiler::{
        BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
        SeccompFilter, SeccompRule, TargetArch,
    };

    use super::{HelperOptions, SETUP_FAILED};

    /// Why the command could not be detached or given its terminal.
    #[derive(Debug, thiserror::Error)]
    enum TerminalError {
        /// `setsid` failed.
        #[error("could not start a new session: {0}")]
        NewSession(#[source] std::io::Error),
        /// `setpgid` failed.
        #[error("could not make a process group: {0}")]
        ProcessGroup(#[source] std::io::Error),
        /// `tcsetpgrp` failed.
        #[error("could not take the terminal: {0}")]
        TakeTerminal(#[source] std::io::Error),
        /// `TIOCNOTTY` failed.
        #[error("could not give up the controlling terminal: {0}")]
        DropTerminal(#[source] std::io::Error),
    }

    /// Why the seccomp filter could not be built or installed.
    #[derive(Debug, thiserror::Error)]
    enum SeccompError {
        /// A rule or the filter could not be compiled.
        #[error(transparent)]
        Build(#[from] seccompiler::BackendError),
        /// The kernel did not take the filter.
        #[error(transparent)]
        Apply(#[from] seccompiler::Error),
    }

    /// Devices every command may write (output thrown away, its own
    /// controlling terminal). Not `/dev/pts`: see [`readable`].
    const DEVICES: [&str; 5] = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/shm",
    ];

    /// Whether `path` is the terminal end of a pseudo-terminal (character
    /// devices of majors 136 to 143, what `/dev/pts/N` are).
    fn is_pty_slave(path: &std::path::Path) -> bool {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        std::fs::symlink_metadata(path).is_ok_and(|m| {
            m.file_type().is_char_device() && (136..=143).contains(&libc::major(m.rdev()))
        })
    }

    /// What a command may read: everything but the pseudo-terminals under
    /// `/dev/pts`. Those are the person's terminals (riot's own among
    /// them): one opened by its path could read the keys the person types
    /// or write to their screen. A command's own terminal reaches it as
    /// open descriptors (and `/dev/tty`), which need no path. Landlock
    /// grants by hierarchy only, so `/` is granted child by child, and
    /// `/dev` too, leaving `pts` out. New pseudo-terminals cannot be made
    /// either (`/dev/ptmx` is left out with them): their other end is
    /// under `/dev/pts`.
    fn readable() -> Vec<std::path::PathBuf> {
        let children = |dir: &str, except: &[&str]| -> Vec<std::path::PathBuf> {
            std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        // A link is granted as where it leads, which may be
                        // no file Landlock takes (`/dev/stdin`, a pipe): the
                        // places links lead to are granted on their own.
                        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
                        .filter(|e| !except.iter().any(|x| e.file_name() == *x))
                        // A pseudo-terminal bound elsewhere (a container's
                        // `/dev/console` is often riot's own terminal):
                        // Landlock grants the device, not the name.
                        .filter(|e| !is_pty_slave(&e.path()))
                        .map(|e| e.path())
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut paths = children("/", &["dev"]);
        paths.extend(children("/dev", &["pts", "ptmx"]));
        paths
    }

    pub(super) fn run(options: &HelperOptions, command: &[OsString]) -> i32 {
        // Before seccomp, which may refuse setsid and setpgid.
        if let Err(why) = detach(options).and_then(|()| drop_tty(options)) {
            eprintln!("riot sandbox: {why}");
            return SETUP_FAILED;
        }
        let landlock = match landlock(options) {
            Ok(status) => status,
            Err(why) => {
                eprintln!("riot sandbox: Landlock could not be applied: {why}");
                return SETUP_FAILED;
            }
        };
        if options.require_landlock && landlock == RulesetStatus::NotEnforced {
            eprintln!(
                "riot sandbox: this kernel does not enforce Landlock (Linux 5.13 or later with Landlock enabled is needed)"
            );
            return SETUP_FAILED;
        }
        if let Err(why) = seccomp(options) {
            eprintln!("riot sandbox: the seccomp filter could not be applied: {why}");
            return SETUP_FAILED;
        }
        if options.report {
            let level = match landlock {
                RulesetStatus::FullyEnforced => "full",
                RulesetStatus::PartiallyEnforced => "partial",
                RulesetStatus::NotEnforced => "none",
            };
            let mut out = std::io::stdout();
            let _ = writeln!(out, "landlock={level}");
            let _ = out.flush();
        }
        let err = std::process::Command::new(&command[0])
            .args(&command[1..])
            .exec();
        eprintln!(
            "riot sandbox: could not run `{}`: {err}",
            command[0].to_string_lossy()
        );
        // The shell's "command not found" code, as without the sandbox.
        if err.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        }
    }

    /// `--new-session` and `--foreground`.
    fn detach(options: &HelperOptions) -> Result<(), TerminalError> {
        if options.new_session {
            // SAFETY: setsid has no memory effects.
            if unsafe { libc::setsid() } == -1 {
                return Err(TerminalError::NewSession(std::io::Error::last_os_error()));
            }
        }
        // Only when stdin is a terminal: otherwise there is no foreground
        // to take.
        // SAFETY: isatty only looks at the descriptor.
        if options.foreground && unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
            // SAFETY: plain process-group and terminal calls; the SIGTTOU
            // disposition is restored before the command starts.
            unsafe {
                if libc::setpgid(0, 0) != 0 {
                    return Err(TerminalError::ProcessGroup(std::io::Error::last_os_error()));
                }
                // A background group that takes the terminal is sent
                // SIGTTOU, which would stop it.
                let previous = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                let taken = libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpgrp());
                let error = std::io::Error::last_os_error();
                libc::signal(libc::SIGTTOU, previous);
                if taken != 0 {
                    return Err(TerminalError::TakeTerminal(error));
                }
            }
        }
        Ok(())
    }

    /// `--drop-tty`: no controlling terminal from here on, the process
    /// group kept. Without a controlling terminal there is nothing to give
    /// up; a session leader is left alone (`TIOCNOTTY` would hang up its
    /// whole session).
    fn drop_tty(options: &HelperOptions) -> Result<(), TerminalError> {
        if !options.drop_tty {
            return Ok(());
        }
        // SAFETY: getsid and getpid have no memory effects.
        if unsafe { libc::getsid(0) == libc::getpid() } {
            return Ok(());
        }
        let tty = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open("/dev/tty")
        {
            Ok(tty) => tty,
            // No controlling terminal (ENXIO), nothing to give up.
            Err(_) => return Ok(()),
        };
        // SAFETY: TIOCNOTTY takes no argument; the descriptor is open.
        if unsafe { libc::ioctl(tty.as_raw_fd(), libc::TIOCNOTTY) } != 0 {
            return Err(TerminalError::DropTerminal(std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Read and execute everywhere; write, create and remove only under
    /// `options.write` and the devices. Signals and abstract Unix sockets
    /// stay inside the sandbox where the kernel supports scopes.
    fn landlock(options: &HelperOptions) -> Result<RulesetStatus, landlock::RulesetError> {
        let abi = ABI::V5;
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))?
            .scope(Scope::from_all(ABI::V6))?
            .create()?
            .add_rules(path_beneath_rules(readable(), AccessFs::from_read(abi)))?
            // Listing any directory stays allowed (`ls /`, `ls /dev/pts`):
            // names only, no file opened.
            .add_rules(path_beneath_rules(["/"], AccessFs::ReadDir))?
            .add_rules(path_beneath_rules(&options.write, AccessFs::from_all(abi)))?
            .add_rules(path_beneath_rules(DEVICES, AccessFs::from_all(abi)))?
            .restrict_self()?;
        Ok(status.ruleset)
    }

    fn seccomp(options: &HelperOptions) -> Result<(), SeccompError> {
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        let rule = |arg: u8, value: u64| -> Result<SeccompRule, BackendError> {
            let condition =
                SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)?;
            SeccompRule::new(vec![condition])
        };
        // Typing into the person's terminal from inside (`TIOCLINUX` can
        // paste a console's selection).
        let mut ioctls = vec![rule(1, libc::TIOCSTI)?, rule(1, libc::TIOCLINUX)?];
        if options.hold_group {
            // Without a PID namespace the terminal may be the person's:
            // taking its foreground or making one the controlling
            // terminal is refused. (Under bubblewrap `/dev` is the
            // sandbox's own, and programs that run their own
            // pseudo-terminals keep working.)
            ioctls.extend([rule(1, libc::TIOCSPGRP)?, rule(1, libc::TIOCSCTTY)?]);
        }
        rules.insert(libc::SYS_ioctl, ioctls);
        if !options.network {
            rules.insert(
                libc::SYS_socket,
                vec![
                    rule(0, libc::AF_INET as u64)?,
                    rule(0, libc::AF_INET6 as u64)?,
                ],
            );
            // io_uring can open sockets without the socket syscall.
            rules.insert(libc::SYS_io_uring_setup, Vec::new());
        }
        if options.hold_group {
            rules.insert(libc::SYS_setsid, Vec::new());
            rules.insert(libc::SYS_setpgid, Vec::new());
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH)?;
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )?;
        let program = BpfProgram::try_from(filter)?;
        seccompiler::apply_filter(&program)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip() {
        let options = HelperOptions {
            write: vec![PathBuf::from("/p"), PathBuf::from("/t mp")],
            network: false,
            hold_group: true,
            require_landlock: true,
            report: false,
            new_session: true,
            foreground: true,
            drop_tty: true,
        };
        let args = options.to_args(["bash".to_owned(), "-c".to_owned(), "echo --".to_owned()]);
        assert_eq!(
            args,
            [
                SUBCOMMAND,
                "--write",
                "/p",
                "--write",
                "/t mp",
                "--no-network",
                "--hold-group",
                "--require-landlock",
                "--new-session",
                "--foreground",
                "--drop-tty",
                "--",
                "bash",
                "-c",
                "echo --"
            ]
        );
        let rest: Vec<OsString> = args[1..].iter().map(OsString::from).collect();
        let (parsed, command) = HelperOptions::parse(&rest).unwrap();
        assert_eq!(parsed, options);
        assert_eq!(command, ["bash", "-c", "echo --"]);
    }

    #[test]
    fn a_missing_command_or_unknown_flag_is_refused() {
        assert_eq!(
            HelperOptions::parse(&[OsString::from("--")])
                .unwrap_err()
                .to_string(),
            "no command after --"
        );
        assert_eq!(
            HelperOptions::parse(&[OsString::from("--wat")])
                .unwrap_err()
                .to_string(),
            "unknown argument --wat"
        );
        assert_eq!(
            HelperOptions::parse(&[OsString::from("--write")]).unwrap_err(),
            ArgsError::WriteWithoutPath
        );
        assert_eq!(
            HelperOptions::parse(&[]).unwrap_err().to_string(),
            "no command: give `-- PROGRAM ARGS…`"
        );
    }
}
