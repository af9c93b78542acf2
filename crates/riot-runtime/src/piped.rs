//! [`PipedChild`]: a long-lived child spoken to over its own stdin and
//! stdout (an MCP stdio server), owned like every other subprocess.

use std::process::{ExitStatus, Stdio};

use riot_protocol::{ProcessError, ProcessSpec};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::group::{self, GroupGuard};

/// A child whose stdin, stdout and stderr are pipes the caller owns, in
/// its own process group (docs/design.md §2: whoever spawns a child owns its
/// whole tree). On Linux it gets `PR_SET_PDEATHSIG` and a watchdog kills
/// the group if riot is SIGKILLed; dropping a `PipedChild` kills the group.
#[derive(Debug)]
pub struct PipedChild {
    child: Child,
    guard: GroupGuard,
}

impl PipedChild {
    /// Starts `spec.program`. `spec.timeout_ms`, `spec.capture` and
    /// `spec.stdin` do not apply: the three pipes are the caller's to read
    /// and write for as long as the child lives.
    pub fn spawn(spec: &ProcessSpec) -> Result<Self, ProcessError> {
        let child = group::spawn_with_stdin(spec, Stdio::piped())?;
        let guard = GroupGuard::new(child.id());
        Ok(Self { child, guard })
    }

    /// The child's pid, which is also its process-group id; `None` once it
    /// has been reaped.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The child's stdin (taken once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The child's stdout (taken once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The child's stderr (taken once). Whoever takes it must keep reading
    /// it, or a chatty child blocks on a full pipe.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Waits for the child to exit (and reaps it). What it left running in
    /// its group is killed then, and at the latest when this is dropped.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.guard.kill_now();
        status
    }

    /// Kills the whole group and reaps the child.
    pub async fn kill(&mut self) -> std::io::Result<ExitStatus> {
        self.guard.kill_now();
        let status = self.child.wait().await;
        // Anything that joined the group while the leader was dying.
        self.guard.kill_now();
        status
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::disallowed_methods)] // tests read /proc and poll with real sleeps

    use std::time::Duration;

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    use super::*;

    fn spec(script: &str) -> ProcessSpec {
        ProcessSpec {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::current_dir().unwrap(),
            env_set: vec![],
            env_remove: vec![],
            timeout_ms: None,
            capture: Default::default(),
            stdin: None,
            undoable_only: false,
        }
    }

    /// Live (not zombie) members of process group `pgid`.
    fn members(pgid: u32) -> Vec<u32> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let mut rest = stat.rsplit_once(')').unwrap().1.split_whitespace();
            let state = rest.next();
            if rest.nth(1).and_then(|g| g.parse().ok()) == Some(pgid) && state != Some("Z") {
                found.push(pid);
            }
        }
        found
    }

    async fn wait_until(mut done: impl FnMut() -> bool) -> bool {
        for _ in 0..400 {
            if done() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }

    #[tokio::test]
    async fn talks_over_its_pipes_and_dropping_kills_the_whole_group() {
        let mut child = PipedChild::spawn(&spec("sleep 60 & exec cat")).unwrap();
        let pgid = child.pid().unwrap();
        let mut stdin = child.take_stdin().unwrap();
        let mut stdout = tokio::io::BufReader::new(child.take_stdout().unwrap()).lines();
        stdin.write_all(b"ping\n").await.unwrap();
        assert_eq!(stdout.next_line().await.unwrap().as_deref(), Some("ping"));
        assert!(
            wait_until(|| members(pgid).len() == 2).await,
            "cat and sleep run"
        );
        drop(child);
        assert!(
            wait_until(|| members(pgid).is_empty()).await,
            "group {pgid} outlived its owner"
        );
    }

    #[tokio::test]
    async fn kill_reaps_the_child_and_its_group() {
        let mut child = PipedChild::spawn(&spec("sleep 60 & exec cat")).unwrap();
        let pgid = child.pid().unwrap();
        assert!(wait_until(|| members(pgid).len() == 2).await);
        let status = child.kill().await.unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        assert!(wait_until(|| members(pgid).is_empty()).await);
    }
}
