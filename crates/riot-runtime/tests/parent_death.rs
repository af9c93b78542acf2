#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // spawns itself, reads /proc and sleeps for real

//! docs/design.md §2: a SIGKILLed kernel must not leave its children running
//! (PR_SET_PDEATHSIG on Linux). The test re-runs this test binary as a
//! stand-in kernel that starts `sleep 60` through `RealProcessRunner`,
//! SIGKILLs it, and checks that the `sleep` died too.

use std::path::Path;
use std::time::Duration;

use riot_protocol::{CaptureLimit, ProcessRunner, ProcessSpec};
use riot_runtime::RealProcessRunner;
use tokio_util::sync::CancellationToken;

const PIDFILE_VAR: &str = "RIOT_TEST_PDEATHSIG_PIDFILE";

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            state != Some("Z") && state != Some("X")
        }
        Err(_) => false,
    }
}

/// The stand-in kernel: only does something when the parent test runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stand_in_kernel() {
    let Ok(pidfile) = std::env::var(PIDFILE_VAR) else {
        return;
    };
    let runner = RealProcessRunner::new();
    let spec = ProcessSpec {
        program: "bash".into(),
        args: vec!["-c".into(), format!("echo $$ > {pidfile}; exec sleep 60")],
        cwd: std::env::temp_dir(),
        env_set: vec![],
        env_remove: vec![],
        timeout_ms: None,
        capture: CaptureLimit::default(),
        stdin: None,
        undoable_only: false,
    };
    // Runs until the parent SIGKILLs this whole process.
    let _ = runner.run(spec, CancellationToken::new(), None).await;
}

#[cfg(target_os = "linux")]
#[test]
fn a_sigkilled_kernel_does_not_leave_its_child_running() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let mut kernel = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "stand_in_kernel", "--nocapture"])
        .env(PIDFILE_VAR, &pidfile)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let child = wait_for_pid(&pidfile);
    assert!(alive(child), "the child runs while its kernel does");
    kernel.kill().unwrap(); // SIGKILL: no destructor, no cleanup
    kernel.wait().unwrap();
    for _ in 0..200 {
        if !alive(child) {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("child {child} outlived its SIGKILLed kernel");
}

fn wait_for_pid(file: &Path) -> u32 {
    for _ in 0..400 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the stand-in kernel never started its child");
}
