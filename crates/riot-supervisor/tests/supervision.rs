//! The supervisor against stand-in servers: small shell scripts that
//! behave like `riot serve` does when it works, crashes, is misconfigured
//! or will not stop. (`riot-cli`'s `desktop_lifecycle` test runs the real
//! server through it.) Every script's process group is killed when its
//! test ends, pass or fail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // real files, processes and timers

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use riot_supervisor::{NotReady, Policy, ServeCommand, Status, Stopped, Supervisor};

/// How long any one wait in these tests may take before it is a failure.
const PATIENCE: Duration = Duration::from_secs(30);

/// A stand-in server: `body` as a `/bin/sh` script in a fresh directory.
struct Script {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl Script {
    fn new(body: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("riot");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir, path }
    }

    fn command(&self) -> ServeCommand {
        let mut command = ServeCommand::new(&self.path);
        command.cwd = Some(self.dir.path().to_owned());
        command
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Quick restarts, short waits.
fn quick() -> Policy {
    Policy {
        max_crashes: 5,
        first_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        stable_after: Duration::from_secs(3600),
        ready_timeout: Duration::from_secs(20),
        polite_timeout: Duration::from_millis(500),
        grace: Duration::from_millis(500),
    }
}

/// Every status the supervisor publishes, in order, until `last` holds.
async fn statuses_until(supervisor: &Supervisor, last: impl Fn(&Status) -> bool) -> Vec<Status> {
    let mut rx = supervisor.status();
    let mut seen = vec![rx.borrow_and_update().clone()];
    tokio::time::timeout(PATIENCE, async {
        while !last(seen.last().unwrap()) {
            rx.changed().await.unwrap();
            seen.push(rx.borrow_and_update().clone());
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no final status; saw {seen:?}"));
    seen
}

fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim().starts_with('Z'))
        })
        .unwrap_or(false)
}

fn pid_in(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Kills a process group when the test ends, whatever happens.
struct GroupGuard(Vec<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
    }
}

#[tokio::test]
async fn a_server_that_keeps_crashing_is_given_up_on_after_five_tries_with_its_last_words() {
    let script =
        Script::new("echo started >> starts\necho 'panicked at kernel.rs:1' >&2\nexit 101");
    let supervisor = Supervisor::start(script.command(), quick());
    let seen = statuses_until(&supervisor, |s| matches!(s, Status::GaveUp { .. })).await;
    let starts = std::fs::read_to_string(script.file("starts")).unwrap();
    assert_eq!(starts.lines().count(), 5, "five starts, then no more");
    let restarts: Vec<u32> = seen
        .iter()
        .filter_map(|s| match s {
            Status::Restarting { crashes, .. } => Some(*crashes),
            _ => None,
        })
        .collect();
    assert_eq!(restarts, [1, 2, 3, 4]);
    let Status::GaveUp { crashes, reason } = seen.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(*crashes, 5);
    assert!(
        reason.starts_with("riot serve crashed 5 times in a row; gave up."),
        "{reason}"
    );
    assert!(
        reason.contains("exited with code 101 before it was ready"),
        "{reason}"
    );
    assert!(reason.contains("panicked at kernel.rs:1"), "{reason}");
    assert_eq!(
        supervisor.ready().await,
        Err(NotReady::GaveUp {
            crashes: 5,
            reason: reason.clone()
        })
    );
    assert_eq!(supervisor.shutdown().await, Stopped::NotRunning);
}

#[tokio::test]
async fn a_configuration_error_is_given_up_on_at_once() {
    let script = Script::new(
        "echo started >> starts\necho 'riot serve: --ui-dir /x is not a directory' >&2\nexit 2",
    );
    let supervisor = Supervisor::start(script.command(), quick());
    let seen = statuses_until(&supervisor, |s| matches!(s, Status::GaveUp { .. })).await;
    assert_eq!(
        seen.last().unwrap(),
        &Status::GaveUp {
            crashes: 1,
            reason: "riot serve exited with code 2 before it was ready; its last output:\n\
                     riot serve: --ui-dir /x is not a directory"
                .into()
        }
    );
    let starts = std::fs::read_to_string(script.file("starts")).unwrap();
    assert_eq!(
        starts.lines().count(),
        1,
        "restarting cannot fix a bad configuration"
    );
    assert_eq!(supervisor.shutdown().await, Stopped::NotRunning);
}

#[tokio::test]
async fn a_server_that_dies_after_starting_is_restarted_with_the_new_address() {
    // The first two runs die once ready; the third stays until stdin closes.
    let script = Script::new(
        "echo x >> runs\nn=$(wc -l < runs)\necho $$ > pid\n\
         echo \"Riot is serving at http://127.0.0.1:1/?token=run$n\"\n\
         if [ \"$n\" -lt 3 ]; then exit 9; fi\n\
         cat > /dev/null\necho clean >> ends",
    );
    // It exits as soon as its stdin closes: no grace period to race.
    let policy = Policy {
        grace: PATIENCE,
        ..quick()
    };
    let supervisor = Supervisor::start(script.command(), policy);
    let seen = statuses_until(
        &supervisor,
        |s| matches!(s, Status::Ready { url, .. } if url.ends_with("run3")),
    )
    .await;
    let _guard = GroupGuard(vec![pid_in(&script.file("pid"))]);
    let urls: Vec<&str> = seen
        .iter()
        .filter_map(|s| match s {
            Status::Ready { url, .. } => Some(url.as_str()),
            _ => None,
        })
        .collect();
    // A watch channel may skip a status that is replaced at once, but the
    // restarts it reports must count up and give the reason.
    assert_eq!(urls.last(), Some(&"http://127.0.0.1:1/?token=run3"));
    for status in &seen {
        if let Status::Restarting {
            crashes, reason, ..
        } = status
        {
            assert!(*crashes <= 2, "{seen:?}");
            assert_eq!(reason, "riot serve exited with code 9", "{seen:?}");
        }
    }
    assert_eq!(
        supervisor.ready().await.unwrap(),
        "http://127.0.0.1:1/?token=run3"
    );
    // Nobody answers at port 1, so the polite request fails; closing stdin
    // ends the server by itself.
    assert_eq!(
        supervisor.shutdown().await,
        Stopped::Graceful { answered: false }
    );
    assert_eq!(
        std::fs::read_to_string(script.file("ends")).unwrap(),
        "clean\n"
    );
}

#[tokio::test]
async fn a_server_that_will_not_stop_is_killed_with_its_whole_group() {
    // Ignores SIGTERM and stdin, and has a child in its group.
    let script = Script::new(
        "trap '' TERM\nsleep 300 &\necho $! > child\necho $$ > pid\n\
         echo 'Riot is serving at http://127.0.0.1:1/?token=t'\n\
         while :; do sleep 1; done",
    );
    let supervisor = Supervisor::start(script.command(), quick());
    supervisor.ready().await.unwrap();
    let server = pid_in(&script.file("pid"));
    let _guard = GroupGuard(vec![server]);
    let child = pid_in(&script.file("child"));
    assert!(is_alive(server) && is_alive(child));
    assert_eq!(supervisor.shutdown().await, Stopped::Forced);
    assert!(!is_alive(server), "the server is reaped");
    // The group was killed: its other member goes too (reaped by init).
    tokio::time::timeout(PATIENCE, async {
        while is_alive(child) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server's child outlived the group kill");
}

#[tokio::test]
async fn a_server_that_prints_something_else_is_not_taken_for_ready() {
    let script = Script::new("echo 'Listening on 8080'\nsleep 300");
    let policy = Policy {
        max_crashes: 1,
        ..quick()
    };
    let supervisor = Supervisor::start(script.command(), policy);
    let seen = statuses_until(&supervisor, |s| matches!(s, Status::GaveUp { .. })).await;
    assert!(
        !seen.iter().any(|s| matches!(s, Status::Ready { .. })),
        "{seen:?}"
    );
    let Status::GaveUp { reason, .. } = seen.last().unwrap() else {
        unreachable!()
    };
    assert!(
        reason.contains("riot serve printed \"Listening on 8080\" instead of its address"),
        "{reason}"
    );
    assert_eq!(supervisor.shutdown().await, Stopped::NotRunning);
}

#[tokio::test]
async fn a_missing_program_is_reported_not_retried() {
    let supervisor = Supervisor::start(ServeCommand::new("/nonexistent/riot"), quick());
    let reason = supervisor.ready().await.unwrap_err().to_string();
    assert!(
        reason.starts_with("cannot start /nonexistent/riot: "),
        "{reason}"
    );
    assert_eq!(supervisor.shutdown().await, Stopped::NotRunning);
}
