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

/// The proleptic Gregorian date `(year, month, day)` of a day counted
/// from 1970-01-01 (Howard Hinnant's published algorithm: eras of 400
/// years starting on 0000-03-01). The one date computation every crate
/// uses; [`days_from_civil`] is its inverse.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // A month and a day of the month are small and positive.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (year, month as u32, day as u32)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (`month` 1–12).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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

#[cfg(test)]
mod date_tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip_and_land_on_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_790), (2026, 12, 3));
        // Spreadsheet serial 61 (its day 1 is 1900-01-01, counting a
        // 1900-02-29 that never was), 25,569 days before 1970.
        assert_eq!(civil_from_days(61 - 25_569), (1900, 3, 1));
        assert_eq!(days_from_civil(2026, 12, 3), 20_790);
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }
}
