#![allow(clippy::disallowed_methods)] // the real clock: reads system time and sleeps on tokio's timer

//! [`SystemClock`]: the real [`Clock`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use riot_protocol::Clock;

/// Wall-clock time; sleeping on tokio's timer (needs a tokio runtime with
/// the time driver enabled).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }

    fn sleep_ms(&self, ms: u64) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riot_protocol::ClockExt;

    #[tokio::test]
    async fn now_is_after_2025_and_timeout_fires_on_a_pending_future() {
        let clock = SystemClock;
        assert!(clock.now_ms() > 1_735_689_600_000, "clock reads real time");
        let never = futures::future::pending::<()>();
        assert!(clock.timeout(5, never).await.is_err());
        assert_eq!(clock.timeout(5_000, async { 3 }).await, Ok(3));
    }
}
