#![allow(clippy::disallowed_methods)] // the real process runner: tokio's timer enforces the timeout

//! [`RealProcessRunner`]: the real [`ProcessRunner`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use riot_protocol::process::OutputCallback;
use riot_protocol::{
    BackgroundOutput, CaptureLimit, CapturedOutput, OutputStream, ProcessError, ProcessOutput,
    ProcessRunner, ProcessSpec,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::background::Job;
use crate::capture::Capture;
use crate::group::{self, GroupGuard, split_status};

/// Runs subprocesses, each in its own process group. Dropping the runner
/// kills every background job it started.
#[derive(Debug)]
pub struct RealProcessRunner {
    jobs: Mutex<BTreeMap<String, Arc<Job>>>,
    next_job: AtomicU64,
    /// Unread output kept per stream of a background job.
    background_buffer_bytes: usize,
}

impl Default for RealProcessRunner {
    fn default() -> Self {
        Self::new()
    }
}

impl RealProcessRunner {
    /// A runner keeping up to 1 MiB of unread output per background stream.
    pub fn new() -> Self {
        Self::with_background_buffer(1024 * 1024)
    }

    /// A runner with a custom cap on unread background output per stream;
    /// older output is dropped (and counted) beyond it.
    pub fn with_background_buffer(bytes: usize) -> Self {
        Self {
            jobs: Mutex::new(BTreeMap::new()),
            next_job: AtomicU64::new(1),
            background_buffer_bytes: bytes.max(1),
        }
    }

    fn job(&self, id: &str) -> Result<Arc<Job>, ProcessError> {
        self.lock_jobs()
            .get(id)
            .cloned()
            .ok_or_else(|| ProcessError::UnknownJob(id.to_owned()))
    }

    fn lock_jobs(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Job>>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for RealProcessRunner {
    fn drop(&mut self) {
        for job in self.lock_jobs().values() {
            job.kill();
        }
    }
}

async fn read_stream<R: AsyncRead + Unpin>(
    reader: Option<R>,
    limit: CaptureLimit,
    stream: OutputStream,
    on_output: Option<OutputCallback>,
) -> CapturedOutput {
    let mut capture = Capture::new(limit);
    if let Some(mut reader) = reader {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    capture.push(&buf[..n]);
                    if let Some(cb) = &on_output {
                        cb(stream, &buf[..n]);
                    }
                }
            }
        }
    }
    capture.finish()
}

enum Ending {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
}

#[async_trait]
impl ProcessRunner for RealProcessRunner {
    async fn run(
        &self,
        spec: ProcessSpec,
        cancel: CancellationToken,
        on_output: Option<OutputCallback>,
    ) -> Result<ProcessOutput, ProcessError> {
        let (mut child, pgid, watchdog) = group::spawn_watched(&spec)?;
        let guard = GroupGuard::watched(pgid, watchdog);
        // The input is written alongside the readers (a child that does
        // not read it must not block us); a closed pipe is not an error.
        let writer = {
            let stdin = child.stdin.take();
            let input = spec.stdin.clone();
            async move {
                if let (Some(mut pipe), Some(bytes)) = (stdin, input) {
                    let _ = pipe.write_all(&bytes).await;
                    let _ = pipe.shutdown().await;
                }
            }
        };
        let readers = futures::future::join(
            read_stream(
                child.stdout.take(),
                spec.capture,
                OutputStream::Stdout,
                on_output.clone(),
            ),
            read_stream(
                child.stderr.take(),
                spec.capture,
                OutputStream::Stderr,
                on_output,
            ),
        );
        let waiter = async {
            let deadline = async {
                match spec.timeout_ms {
                    Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                    None => futures::future::pending::<()>().await,
                }
            };
            let ending = tokio::select! {
                status = child.wait() => Ending::Exited(status),
                () = deadline => Ending::TimedOut,
                () = cancel.cancelled() => Ending::Cancelled,
            };
            let (status, timed_out, cancelled) = match ending {
                Ending::Exited(status) => (status, false, false),
                Ending::TimedOut => {
                    guard.kill_now();
                    (child.wait().await, true, false)
                }
                Ending::Cancelled => {
                    guard.kill_now();
                    (child.wait().await, false, true)
                }
            };
            // The leader is gone; what it left running in its group is
            // killed too, which also closes the pipes for the readers.
            guard.kill_now();
            (status, timed_out, cancelled)
        };
        let ((status, timed_out, cancelled), (stdout, stderr), ()) =
            futures::future::join3(waiter, readers, writer).await;
        let status = status.map_err(ProcessError::Io)?;
        let (exit_code, signal) = split_status(Some(status));
        Ok(ProcessOutput {
            exit_code,
            signal,
            stdout,
            stderr,
            timed_out,
            cancelled,
        })
    }

    async fn spawn_background(&self, spec: ProcessSpec) -> Result<String, ProcessError> {
        let id = format!("bash_{}", self.next_job.fetch_add(1, Ordering::Relaxed));
        let job = Job::start(&spec, self.background_buffer_bytes)?;
        self.lock_jobs().insert(id.clone(), job);
        Ok(id)
    }

    async fn read_background(&self, id: &str) -> Result<BackgroundOutput, ProcessError> {
        Ok(self.job(id)?.take_output())
    }

    async fn kill_background(&self, id: &str) -> Result<(), ProcessError> {
        self.job(id)?.kill();
        Ok(())
    }

    /// Starts the spec as given.
    fn prepare(&self, spec: ProcessSpec) -> ProcessSpec {
        spec
    }
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
