#![allow(clippy::disallowed_methods)] // tests read /proc and poll with real sleeps

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::*;

fn spec(dir: &Path, script: &str) -> ProcessSpec {
    ProcessSpec {
        program: "bash".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env_set: vec![],
        env_remove: vec![],
        timeout_ms: None,
        capture: CaptureLimit::default(),
        stdin: None,
        undoable_only: false,
    }
}

/// Whether a pid names a live (non-zombie) process.
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

/// Waits (bounded) for a pid to die; returns whether it did.
async fn dies(pid: u32) -> bool {
    for _ in 0..200 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

async fn read_pid(file: &PathBuf) -> u32 {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the child never wrote its pid");
}

#[tokio::test]
async fn captures_both_streams_exit_code_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        "echo out; echo err >&2; echo \"set=$RIOT_T_SET unset=${RIOT_T_GONE:-none}\"; cat; pwd; exit 3",
    );
    s.env_set = vec![("RIOT_T_SET".into(), "yes".into())];
    s.env_remove = vec!["RIOT_T_GONE".into()];
    // SAFETY-free: set only in this process for the child to inherit.
    let out = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        out.stdout.head,
        format!("out\nset=yes unset=none\n{}\n", cwd.display()),
        "stdin is /dev/null, so `cat` ends at once"
    );
    assert_eq!(out.stderr.head, "err\n");
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out && !out.cancelled);
}

#[tokio::test]
async fn stdin_bytes_reach_the_child_and_are_closed_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(dir.path(), "cat; echo end");
    s.stdin = Some(b"{\"hook_event_name\": \"Stop\"}\n".to_vec());
    let out = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap();
    assert_eq!(out.stdout.head, "{\"hook_event_name\": \"Stop\"}\nend\n");
    assert_eq!(out.exit_code, Some(0));

    // A child that never reads its input still ends normally, even with
    // more input than a pipe holds.
    let mut s = spec(dir.path(), "echo done");
    s.stdin = Some(vec![b'x'; 1024 * 1024]);
    let out = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap();
    assert_eq!(out.stdout.head, "done\n");
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_and_returns_output_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("grandchild.pid");
    let mut s = spec(
        dir.path(),
        "echo started; sleep 60 & echo $! > grandchild.pid; wait",
    );
    // Long enough that a loaded machine still runs the script's first
    // lines inside it.
    s.timeout_ms = Some(2000);
    let out = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.stdout.head, "started\n");
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(libc::SIGKILL));
    let grandchild = read_pid(&pidfile).await;
    assert!(
        dies(grandchild).await,
        "grandchild {grandchild} was orphaned"
    );
}

#[tokio::test]
async fn cancellation_kills_the_group_and_keeps_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("gc.pid");
    let cancel = CancellationToken::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let seen2 = Arc::clone(&seen);
    let cancel2 = cancel.clone();
    let on_output: OutputCallback = Arc::new(move |_stream, bytes| {
        seen2
            .lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(bytes));
        cancel2.cancel();
    });
    let out = RealProcessRunner::new()
        .run(
            spec(
                dir.path(),
                "sleep 60 & echo $! > gc.pid; echo partial; wait",
            ),
            cancel,
            Some(on_output),
        )
        .await
        .unwrap();
    assert!(out.cancelled && !out.timed_out);
    assert_eq!(out.stdout.head, "partial\n");
    assert_eq!(seen.lock().unwrap().as_str(), "partial\n");
    let grandchild = read_pid(&pidfile).await;
    assert!(
        dies(grandchild).await,
        "grandchild {grandchild} was orphaned"
    );
}

#[tokio::test]
async fn dropping_the_run_future_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("gc.pid");
    let runner = RealProcessRunner::new();
    let run = runner.run(
        spec(dir.path(), "sleep 60 & echo $! > gc.pid; wait"),
        CancellationToken::new(),
        None,
    );
    let pid_wait = read_pid(&pidfile);
    let grandchild = tokio::select! {
        _ = run => panic!("the command cannot finish on its own"),
        pid = pid_wait => pid,
    };
    // `run` was dropped when select! returned.
    assert!(
        dies(grandchild).await,
        "grandchild {grandchild} was orphaned"
    );
}

#[tokio::test]
async fn a_leader_exiting_does_not_leave_its_background_children() {
    let dir = tempfile::tempdir().unwrap();
    let out = RealProcessRunner::new()
        .run(
            // The child does not hold the pipes, so only the group kill
            // (not waiting for EOF) can end it.
            spec(dir.path(), "sleep 60 >/dev/null 2>&1 & echo $!"),
            CancellationToken::new(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    let pid: u32 = out.stdout.head.trim().parse().unwrap();
    assert!(
        dies(pid).await,
        "background child {pid} outlived its command"
    );
}

#[tokio::test]
async fn large_output_keeps_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(
        dir.path(),
        "printf 'HEAD'; head -c 300000 /dev/zero | tr '\\0' 'x'; printf 'TAIL'",
    );
    s.capture = CaptureLimit {
        head_bytes: 10,
        tail_bytes: 10,
    };
    let out = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap();
    assert_eq!(out.stdout.head, "HEADxxxxxx");
    assert_eq!(out.stdout.tail, "xxxxxxTAIL");
    assert_eq!(out.stdout.total_bytes, 300_008);
    assert_eq!(out.stdout.omitted_bytes, 299_988);
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec(dir.path(), "");
    s.program = "riot-no-such-program".into();
    let err = RealProcessRunner::new()
        .run(s, CancellationToken::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProcessError::Spawn { ref program, .. } if program == "riot-no-such-program")
    );
}

async fn read_until_done(runner: &RealProcessRunner, id: &str) -> BackgroundOutput {
    let mut all = BackgroundOutput::default();
    for _ in 0..400 {
        let part = runner.read_background(id).await.unwrap();
        all.stdout.push_str(&part.stdout);
        all.stderr.push_str(&part.stderr);
        all.dropped_bytes += part.dropped_bytes;
        all.exit_code = part.exit_code;
        all.running = part.running;
        if !part.running {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("background job never finished");
}

#[tokio::test]
async fn background_jobs_are_read_incrementally_and_report_their_exit() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RealProcessRunner::new();
    let id = runner
        .spawn_background(spec(dir.path(), "echo one; echo warn >&2; exit 4"))
        .await
        .unwrap();
    assert_eq!(id, "bash_1");
    let out = read_until_done(&runner, &id).await;
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str()),
        ("one\n", "warn\n")
    );
    assert_eq!(out.exit_code, Some(4));
    let again = runner.read_background(&id).await.unwrap();
    assert_eq!(again.stdout, "", "output is handed out once");
    assert!(matches!(
        runner.read_background("bash_99").await,
        Err(ProcessError::UnknownJob(_))
    ));
}

#[tokio::test]
async fn background_buffers_are_capped_and_count_what_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let runner = RealProcessRunner::with_background_buffer(1000);
    let id = runner
        .spawn_background(spec(dir.path(), "head -c 10000 /dev/zero | tr '\\0' 'y'"))
        .await
        .unwrap();
    // Each read hands out at most the cap and counts what was dropped
    // since the last; how many reads fall while it writes is the
    // machine's business.
    let (mut kept, mut dropped, mut reads) = (0u64, 0u64, 0u64);
    for _ in 0..400 {
        let part = runner.read_background(&id).await.unwrap();
        reads += 1;
        assert!(part.stdout.len() <= 1000, "{}", part.stdout.len());
        kept += part.stdout.len() as u64;
        dropped += part.dropped_bytes;
        if !part.running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(kept + dropped, 10_000);
    assert!(
        dropped >= 10_000u64.saturating_sub(1000 * reads),
        "dropped {dropped} in {reads} reads"
    );
    assert!(dropped > 0);
}

#[tokio::test]
async fn killing_a_background_job_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("gc.pid");
    let runner = RealProcessRunner::new();
    let id = runner
        .spawn_background(spec(dir.path(), "sleep 60 & echo $! > gc.pid; wait"))
        .await
        .unwrap();
    let grandchild = read_pid(&pidfile).await;
    runner.kill_background(&id).await.unwrap();
    let out = read_until_done(&runner, &id).await;
    assert_eq!(out.exit_code, None, "killed by a signal");
    assert!(dies(grandchild).await);
}

#[tokio::test]
async fn dropping_the_runner_kills_its_background_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("gc.pid");
    let runner = RealProcessRunner::new();
    runner
        .spawn_background(spec(dir.path(), "sleep 60 & echo $! > gc.pid; wait"))
        .await
        .unwrap();
    let grandchild = read_pid(&pidfile).await;
    drop(runner);
    assert!(dies(grandchild).await);
}

/// The command joins a group its watchdog already leads: a riot killed at
/// any moment after the spawn began leaves a watchdog to kill the group.
#[tokio::test]
async fn the_command_runs_in_the_group_its_watchdog_leads() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"read -r s < /proc/$$/stat; set -- ${s##*) }; [ "$3" != $$ ] && echo "own group: no"; tr '\0' ' ' < /proc/$3/cmdline"#;
    let out = RealProcessRunner::new()
        .run(spec(dir.path(), script), CancellationToken::new(), None)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        format!("{}{}", out.stdout.head, out.stdout.tail),
        "own group: no\n/bin/sh -c read _ignored; kill -KILL 0 2>/dev/null "
    );
}
