#![allow(clippy::disallowed_methods)] // the real process runner: tokio's timer enforces a job's timeout

//! Background jobs: started, read incrementally, killed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use riot_protocol::{BackgroundOutput, ProcessError, ProcessSpec};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::group::{self, kill_group, split_status};

/// Unread bytes of one stream, capped: the oldest are dropped first.
#[derive(Debug, Default)]
struct Pending {
    bytes: Vec<u8>,
}

#[derive(Debug, Default)]
struct JobState {
    stdout: Pending,
    stderr: Pending,
    dropped: u64,
    exit_code: Option<i32>,
    running: bool,
}

/// One background job; its process group is killed when the job is killed
/// or the runner is dropped.
#[derive(Debug)]
pub(crate) struct Job {
    pgid: Option<u32>,
    state: Arc<Mutex<JobState>>,
}

fn lock(state: &Mutex<JobState>) -> std::sync::MutexGuard<'_, JobState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

async fn pump<R: AsyncRead + Unpin>(
    reader: Option<R>,
    state: Arc<Mutex<JobState>>,
    cap: usize,
    is_stdout: bool,
) {
    let Some(mut reader) = reader else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut st = lock(&state);
                let pending = if is_stdout {
                    &mut st.stdout
                } else {
                    &mut st.stderr
                };
                pending.bytes.extend_from_slice(&buf[..n]);
                let over = pending.bytes.len().saturating_sub(cap);
                if over > 0 {
                    pending.bytes.drain(..over);
                    st.dropped += over as u64;
                }
            }
        }
    }
}

/// Takes the decodable prefix of `pending`, leaving an incomplete trailing
/// character for the next read.
fn take_text(pending: &mut Pending, finished: bool) -> String {
    let cut = match std::str::from_utf8(&pending.bytes) {
        Ok(_) => pending.bytes.len(),
        Err(e) if e.error_len().is_none() && !finished => e.valid_up_to(),
        Err(_) => pending.bytes.len(),
    };
    let taken: Vec<u8> = pending.bytes.drain(..cut).collect();
    // As a screen shows it, like captured output (plain.rs).
    crate::plain::plain_text(&String::from_utf8_lossy(&taken))
}

impl Job {
    pub(crate) fn start(spec: &ProcessSpec, cap: usize) -> Result<Arc<Self>, ProcessError> {
        let (mut child, pgid, watchdog) = group::spawn_watched(spec)?;
        // Background jobs get no input: a piped stdin is closed at once.
        drop(child.stdin.take());
        let state = Arc::new(Mutex::new(JobState {
            running: true,
            ..JobState::default()
        }));
        let out = tokio::spawn(pump(child.stdout.take(), Arc::clone(&state), cap, true));
        let err = tokio::spawn(pump(child.stderr.take(), Arc::clone(&state), cap, false));
        let timeout_ms = spec.timeout_ms;
        let waiter_state = Arc::clone(&state);
        tokio::spawn(async move {
            let status = match timeout_ms {
                Some(ms) => {
                    match tokio::time::timeout(Duration::from_millis(ms), child.wait()).await {
                        Ok(status) => status,
                        Err(_) => {
                            if let Some(pgid) = pgid {
                                kill_group(pgid);
                            }
                            child.wait().await
                        }
                    }
                }
                None => child.wait().await,
            };
            if let Some(pgid) = pgid {
                kill_group(pgid); // what the leader left behind; closes the pipes
            }
            drop(watchdog); // after the group is gone: it must not outlive it
            let _ = out.await;
            let _ = err.await;
            let (code, _signal) = split_status(status.ok());
            let mut st = lock(&waiter_state);
            st.exit_code = code;
            st.running = false;
        });
        Ok(Arc::new(Self { pgid, state }))
    }

    pub(crate) fn take_output(&self) -> BackgroundOutput {
        let mut st = lock(&self.state);
        let finished = !st.running;
        let stdout = take_text(&mut st.stdout, finished);
        let stderr = take_text(&mut st.stderr, finished);
        let dropped = std::mem::take(&mut st.dropped);
        BackgroundOutput {
            stdout,
            stderr,
            exit_code: st.exit_code,
            running: st.running,
            dropped_bytes: dropped,
        }
    }

    pub(crate) fn kill(&self) {
        if lock(&self.state).running
            && let Some(pgid) = self.pgid
        {
            kill_group(pgid);
        }
    }
}
