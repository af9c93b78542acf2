//! The retry policy of docs/design.md §11: up to 10 attempts, 500 ms ×
//! 2^(n−1) capped at 32 s, plus 0–25 % jitter drawn from an injected
//! source so tests can assert every delay; `Retry-After` wins — up to
//! [`MAX_RETRY_WAIT_MS`]. A server asking for a longer wait ends the
//! request at once with an error saying when to try again
//! ([`wait_too_long`]): `riot exec` must not sit silent for a day because
//! a server answered `retry-after: 86400`.

use std::sync::atomic::{AtomicU64, Ordering};

use riot_protocol::{ProviderError, ProviderErrorKind};

/// Where jitter comes from (injected: tests pass a fixed seed or a
/// constant source and assert exact delays).
pub trait Jitter: Send + Sync + std::fmt::Debug {
    /// A well-mixed 64-bit value.
    fn next_u64(&self) -> u64;
}

/// SplitMix64: a tiny, well-mixed generator; the same seed always yields
/// the same sequence.
#[derive(Debug)]
pub struct SplitMix64 {
    state: AtomicU64,
}

impl SplitMix64 {
    /// A generator from `seed` (the kernel seeds it from its entropy source).
    pub fn new(seed: u64) -> Self {
        Self {
            state: AtomicU64::new(seed),
        }
    }
}

impl Jitter for SplitMix64 {
    fn next_u64(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The longest single wait between two attempts (riot-protocol's, 60 s).
/// Above the longest backoff (32 s + 25 % jitter = 40 s), so it only ever
/// limits what a server asks for in `Retry-After`.
pub use riot_protocol::MAX_RETRY_WAIT_MS;

/// Retry limits; [`RetryPolicy::default`] is the policy of §11.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_attempts: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
    /// The longest single wait, whoever asks for it
    /// ([`MAX_RETRY_WAIT_MS`] by default).
    pub max_wait_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 10,
            base_delay_ms: 500,
            max_delay_ms: 32_000,
            max_wait_ms: MAX_RETRY_WAIT_MS,
        }
    }
}

impl RetryPolicy {
    /// The delay after failed attempt `attempt` (1-based), before jitter.
    pub fn base_delay(&self, attempt: u32) -> u64 {
        let exp = attempt.saturating_sub(1).min(32);
        self.base_delay_ms
            .saturating_mul(1u64 << exp)
            .min(self.max_delay_ms)
    }

    /// The delay after failed attempt `attempt`: the base delay plus
    /// 0–25 % jitter.
    pub fn delay(&self, attempt: u32, jitter: &dyn Jitter) -> u64 {
        let base = self.base_delay(attempt);
        // `next_u64 % 2501` in ten-thousandths: 0 ..= 25 %.
        let extra = base.saturating_mul(jitter.next_u64() % 2_501) / 10_000;
        base + extra
    }
}

/// What the transport does after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then try again.
    Retry { delay_ms: u64 },
    /// Surface the error.
    GiveUp,
    /// The server asked to wait `wait_ms`, longer than the policy's
    /// `max_wait_ms`: surface the error at once, saying when to retry
    /// ([`wait_too_long`]).
    WaitTooLong { wait_ms: u64 },
}

/// Attempts, the first included, at an endpoint that cannot be reached at
/// all: a wrong base URL or a server that is not running should fail in
/// seconds with a fix, not after minutes of backoff.
pub const UNREACHABLE_ATTEMPTS: u32 = 3;

/// Per-request retry bookkeeping.
#[derive(Debug, Default)]
pub struct RetryState {
    /// Failed attempts so far.
    pub failures: u32,
}

impl RetryState {
    /// Decides after a failed attempt. `background` requests (titles,
    /// summaries, the classifier) give up on overload.
    pub fn decide(
        &mut self,
        policy: &RetryPolicy,
        error: &ProviderError,
        background: bool,
        jitter: &dyn Jitter,
    ) -> Decision {
        self.failures += 1;
        if !error.is_retryable() || self.failures >= policy.max_attempts {
            return Decision::GiveUp;
        }
        // A refused key (401/403) is never retried: `is_retryable` is false
        // for it, so it was surfaced above — the same key would be refused
        // again, and the person should hear so at once.
        match error.kind {
            ProviderErrorKind::Overloaded if background => return Decision::GiveUp,
            ProviderErrorKind::Unreachable if self.failures >= UNREACHABLE_ATTEMPTS => {
                return Decision::GiveUp;
            }
            _ => {}
        }
        let delay_ms = match error.retry_after_ms {
            Some(ms) if ms > policy.max_wait_ms => return Decision::WaitTooLong { wait_ms: ms },
            Some(ms) => ms,
            // Our own backoff is shortened to the cap, never refused.
            None => policy.delay(self.failures, jitter).min(policy.max_wait_ms),
        };
        Decision::Retry { delay_ms }
    }
}

/// `error` reworded for a server that asked to wait `wait_ms` — more than
/// `max_wait_ms` — from `now_ms` (the injected clock): its message keeps
/// the server's words and adds how long it asked for and when that is.
pub fn wait_too_long(
    mut error: ProviderError,
    wait_ms: u64,
    max_wait_ms: u64,
    now_ms: u64,
) -> ProviderError {
    let server = error.message.trim_end_matches(['.', ' ']);
    let until = crate::classify::utc_timestamp(now_ms.saturating_add(wait_ms));
    error.message = format!(
        "{server}; the provider asked to wait {} (retry after {until}), longer than Riot waits on its own ({})",
        human_duration(wait_ms),
        human_duration(max_wait_ms),
    );
    error
}

/// A duration for people: `45 s`, `1 min 30 s`, `24 h`, `2 h 5 min`
/// (seconds rounded up; under an hour to the second, above to the minute).
pub fn human_duration(ms: u64) -> String {
    let secs = ms.div_ceil(1_000);
    let (h, m, s) = (secs / 3_600, secs / 60 % 60, secs % 60);
    match (h, m, s) {
        (0, 0, s) => format!("{s} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Constant(u64);
    impl Jitter for Constant {
        fn next_u64(&self) -> u64 {
            self.0
        }
    }

    fn err(kind: ProviderErrorKind) -> ProviderError {
        ProviderError::new(kind, "x")
    }

    #[test]
    fn an_unreachable_endpoint_is_given_up_after_three_attempts() {
        let policy = RetryPolicy::default();
        let mut state = RetryState::default();
        let e = err(ProviderErrorKind::Unreachable);
        assert!(matches!(
            state.decide(&policy, &e, false, &Constant(0)),
            Decision::Retry { delay_ms: 500 }
        ));
        assert!(matches!(
            state.decide(&policy, &e, false, &Constant(0)),
            Decision::Retry { delay_ms: 1000 }
        ));
        assert_eq!(
            state.decide(&policy, &e, false, &Constant(0)),
            Decision::GiveUp
        );
    }

    #[test]
    fn backoff_doubles_from_500ms_caps_at_32s_and_jitter_adds_up_to_25_percent() {
        let policy = RetryPolicy::default();
        let none = Constant(0);
        let max = Constant(2_500);
        let delays: Vec<u64> = (1..=9).map(|n| policy.delay(n, &none)).collect();
        assert_eq!(
            delays,
            [
                500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 32_000, 32_000
            ]
        );
        let delays: Vec<u64> = (1..=8).map(|n| policy.delay(n, &max)).collect();
        assert_eq!(
            delays,
            [625, 1_250, 2_500, 5_000, 10_000, 20_000, 40_000, 40_000]
        );
    }

    #[test]
    fn ten_attempts_at_most_and_retry_after_wins() {
        let policy = RetryPolicy::default();
        let mut state = RetryState::default();
        let mut retries = 0;
        while let Decision::Retry { .. } = state.decide(
            &policy,
            &err(ProviderErrorKind::RateLimit),
            false,
            &Constant(0),
        ) {
            retries += 1;
        }
        assert_eq!(retries, 9, "10 attempts in total");
        let mut limited = err(ProviderErrorKind::RateLimit);
        limited.retry_after_ms = Some(7_000);
        assert_eq!(
            RetryState::default().decide(&policy, &limited, false, &Constant(2_500)),
            Decision::Retry { delay_ms: 7_000 }
        );
    }

    #[test]
    fn a_retry_after_up_to_the_cap_is_waited_and_a_longer_one_is_refused() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.max_wait_ms, MAX_RETRY_WAIT_MS);
        assert_eq!(MAX_RETRY_WAIT_MS, 60_000);
        let limited = |ms| {
            let mut e = err(ProviderErrorKind::RateLimit);
            e.retry_after_ms = Some(ms);
            e
        };
        let decide = |ms| RetryState::default().decide(&policy, &limited(ms), false, &Constant(0));
        assert_eq!(decide(60_000), Decision::Retry { delay_ms: 60_000 });
        assert_eq!(decide(60_001), Decision::WaitTooLong { wait_ms: 60_001 });
        assert_eq!(
            decide(86_400_000),
            Decision::WaitTooLong {
                wait_ms: 86_400_000
            }
        );
        // Overloaded servers are held to the same cap.
        let mut overloaded = err(ProviderErrorKind::Overloaded);
        overloaded.retry_after_ms = Some(120_000);
        assert_eq!(
            RetryState::default().decide(&policy, &overloaded, false, &Constant(0)),
            Decision::WaitTooLong { wait_ms: 120_000 }
        );
    }

    #[test]
    fn a_backoff_longer_than_the_cap_is_shortened_to_it() {
        let policy = RetryPolicy {
            max_delay_ms: 500_000,
            ..RetryPolicy::default()
        };
        let mut state = RetryState::default();
        let e = err(ProviderErrorKind::Server);
        let delays: Vec<Decision> = (0..9)
            .map(|_| state.decide(&policy, &e, false, &Constant(0)))
            .collect();
        let delays: Vec<u64> = delays
            .into_iter()
            .map(|d| match d {
                Decision::Retry { delay_ms } => delay_ms,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            delays,
            [
                500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000
            ]
        );
    }

    #[test]
    fn durations_read_as_people_say_them() {
        let cases: &[(u64, &str)] = &[
            (0, "0 s"),
            (1, "1 s"),
            (45_000, "45 s"),
            (60_000, "1 min"),
            (61_000, "1 min 1 s"),
            (90_500, "1 min 31 s"),
            (3_600_000, "1 h"),
            (7_500_000, "2 h 5 min"),
            (86_400_000, "24 h"),
        ];
        for (ms, text) in cases {
            assert_eq!(human_duration(*ms), *text, "{ms} ms");
        }
    }

    #[test]
    fn a_refused_wait_names_the_duration_and_the_time_to_retry() {
        let mut e = err(ProviderErrorKind::RateLimit).with_status(429);
        e.message = "Rate limit reached.".into();
        e.retry_after_ms = Some(86_400_000);
        // 2026-01-01T00:00:00Z.
        let e = wait_too_long(e, 86_400_000, MAX_RETRY_WAIT_MS, 1_767_225_600_000);
        assert_eq!(
            e.message,
            "Rate limit reached; the provider asked to wait 24 h (retry after \
             2026-01-02T00:00:00Z), longer than Riot waits on its own (1 min)"
        );
        assert_eq!(
            (e.kind, e.status, e.retry_after_ms),
            (ProviderErrorKind::RateLimit, Some(429), Some(86_400_000))
        );
    }

    #[test]
    fn auth_is_never_retried_background_gives_up_on_overload_quota_never() {
        let policy = RetryPolicy::default();
        let j = Constant(0);
        let auth = err(ProviderErrorKind::Auth);
        assert_eq!(
            RetryState::default().decide(&policy, &auth, false, &j),
            Decision::GiveUp
        );
        // Not even when the server asks to retry after a while.
        let mut auth = err(ProviderErrorKind::Auth).with_status(401);
        auth.retry_after_ms = Some(1_000);
        assert_eq!(
            RetryState::default().decide(&policy, &auth, false, &j),
            Decision::GiveUp
        );
        let overloaded = err(ProviderErrorKind::Overloaded);
        assert_eq!(
            RetryState::default().decide(&policy, &overloaded, true, &j),
            Decision::GiveUp
        );
        assert!(matches!(
            RetryState::default().decide(&policy, &overloaded, false, &j),
            Decision::Retry { .. }
        ));
        let quota = err(ProviderErrorKind::QuotaExhausted);
        assert_eq!(
            RetryState::default().decide(&policy, &quota, false, &j),
            Decision::GiveUp
        );
    }

    #[test]
    fn a_seeded_generator_is_reproducible_and_spreads_jitter() {
        let a = SplitMix64::new(42);
        let b = SplitMix64::new(42);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (0..200).map(|_| policy.delay(1, &a)).collect();
        assert!(delays.iter().all(|d| (500..=625).contains(d)));
        let distinct: std::collections::HashSet<_> = delays.iter().collect();
        assert!(
            distinct.len() > 50,
            "jitter is well mixed: {}",
            distinct.len()
        );
    }
}
