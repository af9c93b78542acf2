//! The pure recovery decision (docs/design.md §5.4): given a withheld error
//! and the recovery guards, retry with a transition or surface the error.
//! No I/O and no state changes here, so every branch is a unit test.

use riot_protocol::{AgentError, ErrorKind, ProviderError, ProviderErrorKind, Transition};

use crate::state::RecoveryState;

/// Consecutive failed compactions that trip the breaker.
pub const COMPACTION_BREAKER: u32 = 3;
/// Continuation prompts per turn after repeated output-limit hits.
pub const MAX_CONTINUATIONS: u32 = 3;

/// What recovery may do with the current request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoveryLimits {
    /// `max_tokens` of the request that failed.
    pub current_max_tokens: u32,
    /// The model's maximum output (the escalation target).
    pub model_max_tokens: u32,
}

/// How to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryPlan {
    /// Compact the context and send the same request again.
    ReactiveCompact,
    /// Send the same request with a higher output limit.
    EscalateOutputLimit { max_tokens: u32 },
    /// Keep the partial reply and ask the model to continue.
    ContinueAfterOutputLimit,
}

impl RetryPlan {
    /// The transition the next `RequestStart` carries.
    pub fn transition(self) -> Transition {
        match self {
            RetryPlan::ReactiveCompact => Transition::ReactiveCompactRetry,
            RetryPlan::EscalateOutputLimit { .. } => Transition::OutputLimitEscalation,
            RetryPlan::ContinueAfterOutputLimit => Transition::OutputLimitContinue,
        }
    }
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryDecision {
    Retry(RetryPlan),
    Surface(AgentError),
}

/// Decides what to do with a provider error that ended a request.
pub fn attempt_recovery(
    error: &ProviderError,
    recovery: &RecoveryState,
    limits: RecoveryLimits,
) -> RecoveryDecision {
    match error.kind {
        ProviderErrorKind::ContextOverflow => {
            if recovery.compaction_failures >= COMPACTION_BREAKER {
                surface(
                    ErrorKind::ContextOverflow,
                    format!(
                        "The conversation is too long for the model and compaction failed {} times in a row. Start a new session or run /compact with a focus.",
                        recovery.compaction_failures
                    ),
                )
            } else if recovery.reactive_compact_attempted {
                surface(
                    ErrorKind::ContextOverflow,
                    "The conversation is still too long for the model after compacting it. Start a new session or remove large attachments.".to_owned(),
                )
            } else {
                RecoveryDecision::Retry(RetryPlan::ReactiveCompact)
            }
        }
        ProviderErrorKind::OutputLimit => {
            if recovery.output_limit_hits == 0
                && limits.model_max_tokens > limits.current_max_tokens
            {
                RecoveryDecision::Retry(RetryPlan::EscalateOutputLimit {
                    max_tokens: limits.model_max_tokens,
                })
            } else if recovery.continuations < MAX_CONTINUATIONS {
                RecoveryDecision::Retry(RetryPlan::ContinueAfterOutputLimit)
            } else {
                surface(
                    ErrorKind::OutputLimit,
                    format!(
                        "The reply kept hitting the output-token limit ({} tokens) after {MAX_CONTINUATIONS} continuations. Ask for a smaller step.",
                        limits.current_max_tokens
                    ),
                )
            }
        }
        ProviderErrorKind::MediaTooLarge => surface(
            ErrorKind::ContextOverflow,
            format!(
                "An image or document is too large for the model: {}. Remove it or use a smaller one.",
                error.message
            ),
        ),
        _ => surface(error.error_kind(), describe(error)),
    }
}

fn surface(kind: ErrorKind, message: String) -> RecoveryDecision {
    RecoveryDecision::Surface(AgentError { kind, message })
}

/// A provider error worded for people, with what to do next.
pub fn describe(error: &ProviderError) -> String {
    let status = error
        .status
        .map(|s| format!(" (HTTP {s})"))
        .unwrap_or_default();
    let hint = match error.kind {
        ProviderErrorKind::Auth => " Check that the key is valid and belongs to this endpoint.",
        ProviderErrorKind::QuotaExhausted | ProviderErrorKind::Payment => {
            " The account has no quota or balance left."
        }
        // A wait beyond what Riot takes on its own is already in the
        // message, with the time to retry.
        ProviderErrorKind::RateLimit
            if error
                .retry_after_ms
                .is_some_and(|ms| ms > riot_protocol::MAX_RETRY_WAIT_MS) =>
        {
            ""
        }
        ProviderErrorKind::RateLimit => " The endpoint is rate limiting; try again shortly.",
        ProviderErrorKind::Overloaded => {
            " The model is overloaded; try again or configure a fallback_model."
        }
        ProviderErrorKind::Network => " Check the base URL and that the server is reachable.",
        ProviderErrorKind::Unreachable => {
            " Check --base-url (or RIOT_BASE_URL) and that the server is running."
        }
        ProviderErrorKind::Stalled => {
            " The stream stalled; RIOT_STREAM_IDLE_TIMEOUT_MS sets the idle limit."
        }
        _ => "",
    };
    format!(
        "Model request failed{status}: {}.{hint}",
        error.message.trim_end_matches('.')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: RecoveryLimits = RecoveryLimits {
        current_max_tokens: 8_192,
        model_max_tokens: 64_000,
    };

    fn err(kind: ProviderErrorKind) -> ProviderError {
        ProviderError::new(kind, "boom")
    }

    #[test]
    fn a_rate_limit_says_try_again_shortly_unless_the_wait_was_too_long_to_take() {
        let short = ProviderError {
            retry_after_ms: Some(2_000),
            ..ProviderError::new(ProviderErrorKind::RateLimit, "slow down")
        };
        assert_eq!(
            describe(&short),
            "Model request failed: slow down. The endpoint is rate limiting; try again shortly."
        );
        let long = ProviderError {
            retry_after_ms: Some(86_400_000),
            ..ProviderError::new(
                ProviderErrorKind::RateLimit,
                "the provider asked to wait 24 h (retry after 2026-12-02T12:00:00Z)",
            )
        };
        assert_eq!(
            describe(&long),
            "Model request failed: the provider asked to wait 24 h (retry after 2026-12-02T12:00:00Z)."
        );
    }

    #[test]
    fn overflow_compacts_once_per_iteration() {
        let fresh = RecoveryState::default();
        assert_eq!(
            attempt_recovery(&err(ProviderErrorKind::ContextOverflow), &fresh, LIMITS),
            RecoveryDecision::Retry(RetryPlan::ReactiveCompact)
        );
        let tried = RecoveryState {
            reactive_compact_attempted: true,
            ..fresh
        };
        let RecoveryDecision::Surface(e) =
            attempt_recovery(&err(ProviderErrorKind::ContextOverflow), &tried, LIMITS)
        else {
            panic!("a second overflow in one iteration must surface");
        };
        assert_eq!(e.kind, ErrorKind::ContextOverflow);
        assert!(e.message.contains("after compacting"), "{}", e.message);
    }

    #[test]
    fn the_breaker_trips_at_three_failures() {
        let broken = RecoveryState {
            compaction_failures: 3,
            ..RecoveryState::default()
        };
        let RecoveryDecision::Surface(e) =
            attempt_recovery(&err(ProviderErrorKind::ContextOverflow), &broken, LIMITS)
        else {
            panic!("breaker must surface");
        };
        assert!(e.message.contains("failed 3 times"), "{}", e.message);
        let two = RecoveryState {
            compaction_failures: 2,
            ..RecoveryState::default()
        };
        assert_eq!(
            attempt_recovery(&err(ProviderErrorKind::ContextOverflow), &two, LIMITS),
            RecoveryDecision::Retry(RetryPlan::ReactiveCompact)
        );
    }

    #[test]
    fn output_limit_escalates_once_then_continues_then_surfaces() {
        let e = err(ProviderErrorKind::OutputLimit);
        let fresh = RecoveryState::default();
        assert_eq!(
            attempt_recovery(&e, &fresh, LIMITS),
            RecoveryDecision::Retry(RetryPlan::EscalateOutputLimit { max_tokens: 64_000 })
        );
        let escalated = RecoveryState {
            output_limit_hits: 1,
            ..fresh.clone()
        };
        let raised = RecoveryLimits {
            current_max_tokens: 64_000,
            ..LIMITS
        };
        assert_eq!(
            attempt_recovery(&e, &escalated, raised),
            RecoveryDecision::Retry(RetryPlan::ContinueAfterOutputLimit)
        );
        let exhausted = RecoveryState {
            output_limit_hits: 1,
            continuations: MAX_CONTINUATIONS,
            ..fresh
        };
        let RecoveryDecision::Surface(s) = attempt_recovery(&e, &exhausted, raised) else {
            panic!("must surface");
        };
        assert_eq!(s.kind, ErrorKind::OutputLimit);
    }

    #[test]
    fn no_escalation_when_already_at_the_model_maximum() {
        let at_max = RecoveryLimits {
            current_max_tokens: 64_000,
            model_max_tokens: 64_000,
        };
        assert_eq!(
            attempt_recovery(
                &err(ProviderErrorKind::OutputLimit),
                &RecoveryState::default(),
                at_max
            ),
            RecoveryDecision::Retry(RetryPlan::ContinueAfterOutputLimit)
        );
    }

    #[test]
    fn other_errors_surface_with_a_next_step() {
        let mut auth = err(ProviderErrorKind::Auth);
        auth.status = Some(401);
        let RecoveryDecision::Surface(e) =
            attempt_recovery(&auth, &RecoveryState::default(), LIMITS)
        else {
            panic!("auth must surface");
        };
        assert_eq!(e.kind, ErrorKind::Auth);
        assert_eq!(
            e.message,
            "Model request failed (HTTP 401): boom. Check that the key is valid and belongs to this endpoint."
        );
    }
}
