#![allow(clippy::disallowed_methods)] // the real process runner: builds and spawns OS processes
#![allow(unsafe_code)] // pre_exec (PR_SET_PDEATHSIG) and killpg are libc calls

//! Spawning a child in its own process group, and killing that group.

use std::process::Stdio;

use riot_protocol::{ProcessError, ProcessSpec};
use tokio::process::{Child, Command};

/// Sends SIGKILL to a whole process group. A group that is already gone
/// is not an error.
pub(crate) fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return; // never signal "every process" or init's group
    }
    // SAFETY: killpg has no memory effects; a stale pgid yields ESRCH.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// A child's exit status as its exit code and the signal that ended it
/// (each `None` when it does not apply, both when the status is unknown).
pub(crate) fn split_status(status: Option<std::process::ExitStatus>) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => (s.code(), s.signal()),
        None => (None, None),
    }
}

/// Kills the group when dropped: whoever spawns a child owns its whole
/// tree (docs/design.md §2), on every exit path including panics and dropped
/// futures. While it lives, a [`Watchdog`] kills the group if the kernel
/// itself is SIGKILLed.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<u32>,
    _watchdog: Option<Watchdog>,
}

impl GroupGuard {
    /// Guards the group `pgid` of a child already running, starting its
    /// watchdog now (a terminal's or browser's program, or an MCP stdio
    /// server through `spawn_with_stdin`). Until it starts, a killed Riot
    /// leaves the child unwatched; [`spawn_watched`] has no such moment.
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        Self {
            pgid,
            _watchdog: pgid.and_then(Watchdog::start),
        }
    }

    /// Guards the group of a child [`spawn_watched`] started.
    pub(crate) fn watched(pgid: Option<u32>, watchdog: Option<Watchdog>) -> Self {
        Self {
            pgid,
            _watchdog: watchdog,
        }
    }

    pub(crate) fn kill_now(&self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Kills a process group when the kernel dies, even by SIGKILL.
///
/// `PR_SET_PDEATHSIG` reaches only the direct child: the grandchildren of
/// `bash -c "a; b"` would outlive a SIGKILLed kernel. The watchdog is a
/// tiny `sh` blocked reading a pipe whose only write end the kernel holds.
/// When the kernel dies the OS closes that end, the read returns, and the
/// watchdog kills the group. Either the watchdog leads the group itself
/// and the tool's command joins it ([`Watchdog::lead`]: the group id
/// cannot be reused while the watchdog lives), or it watches a group a
/// program made ([`Watchdog::start`]); then on a normal end the kernel
/// kills the watchdog first (dropping it), so it never signals a group id
/// that may have been reused.
#[derive(Debug)]
pub(crate) struct Watchdog {
    // kill_on_drop: dropping kills the watchdog before its stdin closes.
    _child: Child,
}

impl Watchdog {
    /// A watchdog leading a new process group of its own, for a child to
    /// join ([`spawn_watched`]): it watches the child from before the
    /// child exists. Started after the child, a riot killed in between
    /// left the child unwatched — and bubblewrap's PID 1, which sets its
    /// own death signal late, running on with the command.
    pub(crate) fn lead() -> Option<(Self, u32)> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            // `kill -KILL 0`: every process in the watchdog's own group.
            .arg("read _ignored; kill -KILL 0 2>/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0);
        match cmd.spawn() {
            Ok(child) => {
                let pid = child.id()?;
                Some((Self { _child: child }, pid))
            }
            Err(e) => {
                tracing::warn!(error = %e, "no process-group watchdog: a SIGKILLed riot may leave tool processes behind");
                None
            }
        }
    }

    /// A watchdog for the existing group `pgid`.
    pub(crate) fn start(pgid: u32) -> Option<Self> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            // `kill -KILL -PGID` (dash and bash both take a negative pid
            // after the signal; dash rejects `--`).
            .arg("read _ignored; kill -KILL -\"$0\" 2>/dev/null")
            .arg(pgid.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0);
        match cmd.spawn() {
            Ok(child) => Some(Self { _child: child }),
            Err(e) => {
                tracing::warn!(error = %e, "no process-group watchdog: a SIGKILLed riot may leave tool processes behind");
                None
            }
        }
    }
}

/// Spawns `spec` with stdin `/dev/null` (or a pipe when `spec.stdin` is
/// set; the caller writes it), stdout and stderr piped, in the process
/// group of a [`Watchdog`] started first ([`Watchdog::lead`]): returns the
/// child, the group's id and the watchdog (without one, the child leads a
/// group of its own).
pub(crate) fn spawn_watched(
    spec: &ProcessSpec,
) -> Result<(Child, Option<u32>, Option<Watchdog>), ProcessError> {
    let stdin = if spec.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let (watchdog, group) = match Watchdog::lead() {
        Some((watchdog, pid)) => (Some(watchdog), Some(pid)),
        None => (None, None),
    };
    let child = spawn_in(spec, stdin, group)?;
    let pgid = group.or_else(|| child.id());
    Ok((child, pgid, watchdog))
}

/// Spawns `spec` with the given stdin, stdout and stderr piped, in a new
/// process group whose id is the child's pid.
pub(crate) fn spawn_with_stdin(spec: &ProcessSpec, stdin: Stdio) -> Result<Child, ProcessError> {
    spawn_in(spec, stdin, None)
}

/// [`spawn_with_stdin`] joining the process group `group` when given.
fn spawn_in(spec: &ProcessSpec, stdin: Stdio, group: Option<u32>) -> Result<Child, ProcessError> {
    let group = group.and_then(|g| i32::try_from(g).ok()).unwrap_or(0);
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(group);
    for key in &spec.env_remove {
        cmd.env_remove(key);
    }
    for (key, value) in &spec.env_set {
        cmd.env(key, value);
    }
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        // SAFETY: between fork and exec only async-signal-safe calls are
        // made (prctl, getppid); nothing allocates.
        unsafe {
            cmd.pre_exec(move || {
                // A SIGKILLed kernel must not leave its children running.
                // (Linux ties this to the spawning *thread*; tokio's worker
                // threads live as long as the runtime, so that is the kernel.)
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(std::io::Error::other("parent exited during spawn"));
                }
                // Only stdin, stdout and stderr reach the command: a
                // descriptor the kernel holds without close-on-exec (a
                // pipe end of another group's watchdog) must not be kept
                // open by a tool process, or that watchdog would never see
                // the kernel die. Marked close-on-exec rather than closed,
                // so std's pipe reporting a failed exec still works (Linux
                // 5.11+; on older kernels this does nothing).
                const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
                libc::syscall(
                    libc::SYS_close_range,
                    3 as libc::c_uint,
                    libc::c_uint::MAX,
                    CLOSE_RANGE_CLOEXEC,
                );
                Ok(())
            });
        }
    }
    cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: spec.program.clone(),
        source,
    })
}
