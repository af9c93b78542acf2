//! Time as an injected capability (docs/design.md §1.5, §3).
//!
//! `riot-core`, `riot-tools`, `riot-permissions`, `riot-providers` and
//! `riot-kernel` never read the system clock or sleep directly; they use a
//! [`Clock`]. Tests use [`FixedClock`], whose `sleep_ms` advances time
//! instantly, so backoff and idle timeouts are asserted without waiting.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::{BoxFuture, Either};

/// Wall-clock time and sleeping.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;

    /// Completes after `ms` milliseconds of this clock's time.
    fn sleep_ms(&self, ms: u64) -> BoxFuture<'static, ()>;
}

/// The deadline passed before the future completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("timed out after {0} ms")]
pub struct Elapsed(pub u64);

/// `timeout` for any clock (kept off the trait so `Clock` stays object-safe).
pub trait ClockExt: Clock {
    /// Runs `fut` until it completes or `ms` of this clock's time pass. The
    /// future is polled first, so one that is already ready always wins.
    fn timeout<F>(&self, ms: u64, fut: F) -> impl Future<Output = Result<F::Output, Elapsed>> + Send
    where
        F: Future + Send,
    {
        let sleep = self.sleep_ms(ms);
        async move {
            let fut = std::pin::pin!(fut);
            match futures::future::select(fut, sleep).await {
                Either::Left((out, _)) => Ok(out),
                Either::Right(((), _)) => Err(Elapsed(ms)),
            }
        }
    }
}

impl<C: Clock + ?Sized> ClockExt for C {}

/// A test clock: starts at a fixed instant and moves only when slept on or
/// advanced. A `sleep_ms` future advances time by `ms` when first polled
/// and completes at once.
#[derive(Debug, Clone)]
pub struct FixedClock {
    now: Arc<AtomicU64>,
}

impl FixedClock {
    /// 2026-01-01T00:00:00Z, an arbitrary but stable start.
    pub const DEFAULT_START_MS: u64 = 1_767_225_600_000;

    /// A clock at [`Self::DEFAULT_START_MS`].
    pub fn new() -> Self {
        Self::at(Self::DEFAULT_START_MS)
    }

    /// A clock at the given instant.
    pub fn at(now_ms: u64) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(now_ms)),
        }
    }

    /// Moves time forward without sleeping.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Default for FixedClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for FixedClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn sleep_ms(&self, ms: u64) -> BoxFuture<'static, ()> {
        let now = Arc::clone(&self.now);
        Box::pin(async move {
            now.fetch_add(ms, Ordering::SeqCst);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fixed_clock_sleep_advances_time_without_waiting() {
        let clock = FixedClock::at(1_000);
        clock.sleep_ms(250).await;
        assert_eq!(clock.now_ms(), 1_250);
    }

    #[tokio::test]
    async fn timeout_lets_a_ready_future_win_and_times_out_a_pending_one() {
        let clock = FixedClock::at(0);
        assert_eq!(clock.timeout(10, async { 7 }).await, Ok(7));
        assert_eq!(
            clock.now_ms(),
            0,
            "a ready future does not consume the deadline"
        );
        let never = futures::future::pending::<()>();
        assert_eq!(clock.timeout(10, never).await, Err(Elapsed(10)));
        assert_eq!(clock.now_ms(), 10);
    }
}
