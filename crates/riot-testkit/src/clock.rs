//! A test clock for tests that go through real sockets.
//!
//! `FixedClock` completes every sleep at once, which would fire an idle
//! watchdog while bytes are still on their way. [`TestClock`] records every
//! sleep and completes short ones at once (backoff delays are asserted, not
//! waited for) while a sleep of at least `long_ms` — a watchdog window —
//! waits a short real time instead, so a real stall still trips it.

#![allow(clippy::disallowed_methods)] // test support: real sleeping stands in for watchdog windows

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use riot_protocol::Clock;

/// Records sleeps; see the module docs.
#[derive(Debug, Clone)]
pub struct TestClock {
    now: Arc<AtomicU64>,
    sleeps: Arc<Mutex<Vec<u64>>>,
    long_ms: u64,
    real_wait: Duration,
}

impl TestClock {
    /// Sleeps of `long_ms` or more wait `real_wait` of real time (and are
    /// not recorded); shorter ones are recorded and complete at once.
    pub fn new(long_ms: u64, real_wait: Duration) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(1_767_225_600_000)),
            sleeps: Arc::new(Mutex::new(Vec::new())),
            long_ms,
            real_wait,
        }
    }

    /// The short sleeps so far (retry delays), in order.
    pub fn sleeps(&self) -> Vec<u64> {
        self.sleeps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Clock for TestClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn sleep_ms(&self, ms: u64) -> BoxFuture<'static, ()> {
        if ms >= self.long_ms {
            let real = self.real_wait;
            let now = Arc::clone(&self.now);
            return Box::pin(async move {
                tokio::time::sleep(real).await;
                now.fetch_add(ms, Ordering::SeqCst);
            });
        }
        self.sleeps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ms);
        self.now.fetch_add(ms, Ordering::SeqCst);
        Box::pin(async {})
    }
}
