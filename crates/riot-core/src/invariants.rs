//! The loop's invariants (docs/testing.md L2) and where each is checked.
//! Checks that providers and tools also need live in
//! `riot_protocol::invariants`; this module adds the loop-only ones. In
//! debug builds a violation panics; in release it is logged and the session
//! goes on.
//!
//! | id | checked in |
//! |---|---|
//! | INV-1 pairing | the loop's `Request` step before each request (`check_tool_pairing`), `apply_compaction`, and [`check_results_match`] after each tool batch |
//! | INV-2 no text between tool_use and results | `check_tool_pairing` before each request |
//! | INV-3 parallel batch safe | the scheduler (`riot_protocol::invariants::check_parallel_batch`) |
//! | INV-4 Done once and last | [`crate::done_guard::DoneGuard`] around `run_agent` |
//! | INV-5 recovery counters monotonic within an iteration | [`RecoveryWatch::check`] after each recovery state change |
//! | INV-6 no stop hook after an API error | [`check_stop_hook_entry`] at hook entry, given whether the last model request ended in an API error (recorded when each reply stream ends) |
//! | INV-7 no System message in a request | `check_no_system_messages` before each request |
//! | INV-8 breakpoint budget | `check_cache_breakpoints` at request build |
//! | INV-9 thinking bound to its model | `check_thinking_model` before each request |

use riot_protocol::invariants::{Violation, enforce};
use riot_protocol::{ToolCall, ToolCallResult, ToolResultContent};

use crate::interrupted::INTERRUPTED_RESULT;
use crate::state::RecoveryState;

/// INV-5: within one iteration (between `advance_turn` calls) the recovery
/// guards only grow. The compaction-failure streak is excluded: it resets
/// when a compaction succeeds, by design.
#[derive(Debug, Clone)]
pub struct RecoveryWatch {
    snapshot: RecoveryState,
}

impl RecoveryWatch {
    /// Starts watching from the current state.
    pub fn new(state: &RecoveryState) -> Self {
        Self {
            snapshot: state.clone(),
        }
    }

    /// A new iteration began (`advance_turn` reset the guards).
    pub fn reset(&mut self, state: &RecoveryState) {
        self.snapshot = state.clone();
    }

    /// Checks the guards against the snapshot, then moves it forward.
    pub fn check(&mut self, state: &RecoveryState) {
        enforce(recovery_monotonic(&self.snapshot, state));
        self.snapshot = state.clone();
    }
}

/// The comparison behind [`RecoveryWatch`].
pub fn recovery_monotonic(before: &RecoveryState, after: &RecoveryState) -> Result<(), Violation> {
    let pairs = [
        (
            "reactive_compact_attempted",
            u32::from(before.reactive_compact_attempted),
            u32::from(after.reactive_compact_attempted),
        ),
        (
            "output_limit_hits",
            before.output_limit_hits,
            after.output_limit_hits,
        ),
        ("continuations", before.continuations, after.continuations),
        (
            "stop_hook_retries",
            before.stop_hook_retries,
            after.stop_hook_retries,
        ),
    ];
    if before.epoch != after.epoch {
        return Err(Violation {
            id: "INV-5",
            detail: "recovery state changed iteration without RecoveryWatch::reset".into(),
        });
    }
    for (name, was, is) in pairs {
        if is < was {
            return Err(Violation {
                id: "INV-5",
                detail: format!("{name} decreased from {was} to {is} within an iteration"),
            });
        }
    }
    Ok(())
}

/// INV-6: stop hooks never run after an API error. `after_api_error` is
/// what the loop recorded when the last reply stream ended (a provider
/// error, a cut stream, the output limit, or overloads that moved to the
/// fallback model), not what the route to the hooks implies.
pub fn check_stop_hook_entry(after_api_error: bool) {
    enforce(stop_hook_entry(after_api_error));
}

/// The check behind [`check_stop_hook_entry`].
pub fn stop_hook_entry(after_api_error: bool) -> Result<(), Violation> {
    if after_api_error {
        return Err(Violation {
            id: "INV-6",
            detail: "a stop hook was about to run after an API error".into(),
        });
    }
    Ok(())
}

/// INV-1 at the scheduler boundary: the runner must return exactly one
/// result per call, in call order. A runner that breaks the contract is a
/// bug (panics in debug); in release the results are repaired so the
/// history stays valid: missing ones are synthesized, strays dropped.
pub fn check_results_match(
    calls: &[ToolCall],
    results: Vec<ToolCallResult>,
) -> Vec<ToolCallResult> {
    let in_order = results.len() == calls.len()
        && results
            .iter()
            .zip(calls)
            .all(|(r, c)| r.tool_use_id == c.id);
    if in_order {
        return results;
    }
    enforce(Err(Violation {
        id: "INV-1",
        detail: format!(
            "the tool runner returned {} results for {} calls or out of order",
            results.len(),
            calls.len()
        ),
    }));
    let mut results = results;
    calls
        .iter()
        .map(
            |call| match results.iter().position(|r| r.tool_use_id == call.id) {
                Some(i) => results.remove(i),
                None => ToolCallResult {
                    tool_use_id: call.id.clone(),
                    content: vec![ToolResultContent::text(INTERRUPTED_RESULT)],
                    is_error: true,
                    ui: None,
                    side_messages: Vec::new(),
                },
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use riot_protocol::ToolUseId;
    use serde_json::json;

    use super::*;

    #[test]
    #[should_panic(expected = "INV-5: output_limit_hits decreased")]
    fn inv5_fires_when_a_counter_goes_down_within_an_iteration() {
        let mut state = RecoveryState {
            output_limit_hits: 1,
            ..RecoveryState::default()
        };
        let mut watch = RecoveryWatch::new(&state);
        state.output_limit_hits = 0;
        watch.check(&state);
    }

    #[test]
    fn inv5_allows_the_reset_of_a_new_iteration() {
        let mut state = RecoveryState {
            output_limit_hits: 1,
            ..RecoveryState::default()
        };
        let mut watch = RecoveryWatch::new(&state);
        state.output_limit_hits = 0;
        state.epoch += 1;
        watch.reset(&state);
        watch.check(&state);
    }

    #[test]
    #[should_panic(expected = "INV-6")]
    fn inv6_fires_for_a_stop_hook_after_an_api_error() {
        check_stop_hook_entry(true);
    }

    #[test]
    #[should_panic(expected = "INV-1: the tool runner returned 1 results for 2 calls")]
    fn inv1_fires_when_the_runner_loses_a_result() {
        let calls: Vec<ToolCall> = ["a", "b"]
            .iter()
            .map(|id| ToolCall {
                id: ToolUseId::new(*id),
                name: "Read".into(),
                input: json!({}),
            })
            .collect();
        let results = vec![ToolCallResult {
            tool_use_id: ToolUseId::new("a"),
            content: vec![],
            is_error: false,
            ui: None,
            side_messages: vec![],
        }];
        check_results_match(&calls, results);
    }
}
