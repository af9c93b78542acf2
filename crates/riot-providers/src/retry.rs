//! The retry policy of ARCHITECTURE §11: up to 10 attempts, 500 ms ×
//! 2^(n−1) capped at 32 s, plus 0–25 % jitter drawn from an injected
//! source so tests can assert every delay; `Retry-After` wins.

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

/// Retry limits; [`RetryPolicy::default`] is the policy of §11.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_attempts: u32,
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 10,
            base_delay_ms: 500,
            max_delay_ms: 32_000,
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
    auth_retried: bool,
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
        match error.kind {
            // A wrong key fails fast: one retry (a key being rotated), then
            // surfaced.
            ProviderErrorKind::Auth if self.auth_retried => return Decision::GiveUp,
            ProviderErrorKind::Auth => self.auth_retried = true,
            ProviderErrorKind::Overloaded if background => return Decision::GiveUp,
            ProviderErrorKind::Unreachable if self.failures >= UNREACHABLE_ATTEMPTS => {
                return Decision::GiveUp;
            }
            _ => {}
        }
        let delay_ms = match error.retry_after_ms {
            Some(ms) => ms,
            None => policy.delay(self.failures, jitter),
        };
        Decision::Retry { delay_ms }
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
    fn auth_is_retried_once_background_gives_up_on_overload_quota_never() {
        let policy = RetryPolicy::default();
        let j = Constant(0);
        let mut state = RetryState::default();
        let auth = err(ProviderErrorKind::Auth);
        assert_eq!(
            state.decide(&policy, &auth, false, &j),
            Decision::Retry { delay_ms: 500 }
        );
        assert_eq!(state.decide(&policy, &auth, false, &j), Decision::GiveUp);
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
