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

/// Kills the group when dropped unless disarmed: whoever spawns a child owns
/// its whole tree (ARCHITECTURE §2), on every exit path including panics
/// and dropped futures.
#[derive(Debug)]
pub(crate) struct GroupGuard {
    pgid: Option<u32>,
}

impl GroupGuard {
    pub(crate) fn new(pgid: Option<u32>) -> Self {
        Self { pgid }
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

/// Spawns `spec` with stdin `/dev/null`, stdout and stderr piped, in a new
/// process group whose id is the child's pid.
pub(crate) fn spawn(spec: &ProcessSpec) -> Result<Child, ProcessError> {
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .current_dir(&spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
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
                Ok(())
            });
        }
    }
    cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: spec.program.clone(),
        source,
    })
}
