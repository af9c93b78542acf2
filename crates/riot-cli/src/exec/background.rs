//! A prompt's turns when background agents outlive them: waiting for
//! their results (`RIOT_EXEC_BACKGROUND_WAIT_MS`), telling the person
//! about them, and stopping them when the wait runs out.

use std::collections::BTreeMap;

use riot_kernel::{SessionHandle, Turn};
use riot_protocol::{CancelReason, TerminalReason};

use super::result::Tally;
use super::{Outputs, Run, consume};

/// The prompt's turn; then, when asked to wait
/// (RIOT_EXEC_BACKGROUND_WAIT_MS), one more for each batch of
/// background agents' results that arrives after it, until they
/// have all ended or the wait runs out: then the agents still
/// running are stopped and the model hears so in one last turn.
/// One result line covers them all: their events add up in `tally`.
pub(super) async fn run_turns(run: &Run<'_>, mut turn: Turn, out: &mut Outputs, tally: &mut Tally) {
    let mut waited_since: Option<u64> = None;
    let mut ceiling_passed = false;
    loop {
        run.interrupt.set_running(Some(run.session.clone()));
        if run.interrupt.seen() {
            run.session.cancel(CancelReason::User);
        }
        consume(turn, out, tally).await;
        run.interrupt.set_running(None);
        if let Some(r) = out.report.as_mut() {
            r.finish();
        }
        if run.interrupt.seen() && tally.reason() == TerminalReason::Completed {
            // Ctrl-C as the turn ended: the run ends interrupted (exit
            // 130), and its result says so rather than success.
            tally.reason = Some(TerminalReason::Aborted {
                by: riot_protocol::AbortSource::User,
            });
        }
        if tally.reason() != TerminalReason::Completed || run.interrupt.seen() || ceiling_passed {
            break;
        }
        let running = running_agents(run.session);
        if out.report.is_some() && !running.is_empty() {
            tell_running_agents(&running, run.background_wait_ms.is_some());
        }
        // Not asked to wait: the agents stop with the run's
        // session, and the person is told how to wait for them.
        let Some(ceiling_ms) = run.background_wait_ms else {
            break;
        };
        let since = *waited_since.get_or_insert_with(|| run.clock.now_ms());
        let left = ceiling_ms.saturating_sub(run.clock.now_ms().saturating_sub(since));
        let ceiling = run.clock.sleep_ms(left);
        let arrived = tokio::select! {
            arrived = run.session.background_result() => arrived,
            () = run.interrupt.wake.notified() => {
                // Stopped while waiting: the result says so, not success.
                tally.reason = Some(TerminalReason::Aborted {
                    by: riot_protocol::AbortSource::User,
                });
                false
            }
            () = ceiling => {
                ceiling_passed = true;
                stop_running_agents(run.session, ceiling_ms);
                // Their results (`stopped`) arrive at once.
                run.session.background_result().await
            }
        };
        if !arrived {
            break;
        }
        turn = match run.session.deliver() {
            Ok(Some(turn)) => turn,
            Ok(None) => break,
            Err(e) => {
                eprintln!("riot exec: {e}");
                break;
            }
        };
    }
}

/// The ids of the session's background agents still running.
fn running_agents(session: &SessionHandle) -> Vec<String> {
    session
        .tasks()
        .into_iter()
        .filter(|t| t.state == riot_kernel::background::TaskState::Running)
        .map(|t| t.id)
        .collect()
}

/// Tells the person about the background agents still `running` as a
/// turn ends: that the run waits for them, or, not asked to wait, that
/// they stop with the run's session and how to wait for them.
fn tell_running_agents(running: &[String], waiting: bool) {
    let plural = if running.len() == 1 { "" } else { "s" };
    let them = if running.len() == 1 { "it" } else { "them" };
    if waiting {
        eprintln!(
            "riot: waiting for {} background agent{plural} ({}) to finish; Ctrl-C stops {them}",
            running.len(),
            running.join(", "),
        );
    } else {
        eprintln!(
            "riot: stopping background agent{plural} {} as the run ends; set RIOT_EXEC_BACKGROUND_WAIT_MS to wait for {them}",
            running.join(", "),
        );
    }
}

/// Stops the background agents still running once the wait of
/// `ceiling_ms` has run out, and says so on stderr.
fn stop_running_agents(session: &SessionHandle, ceiling_ms: u64) {
    let stopped = running_agents(session);
    for id in &stopped {
        session.stop_task(id, riot_kernel::Stopper::Riot);
    }
    let waited = ceiling_ms;
    let waited = if waited.is_multiple_of(1000) {
        format!("{} s", waited / 1000)
    } else {
        format!("{waited} ms")
    };
    // (All may have ended just before: nothing to say then.)
    if !stopped.is_empty() {
        eprintln!(
            "riot: stopped background agent{} {} after waiting {waited} for {} (RIOT_EXEC_BACKGROUND_WAIT_MS)",
            if stopped.len() == 1 { "" } else { "s" },
            stopped.join(", "),
            if stopped.len() == 1 { "it" } else { "them" },
        );
    }
}

/// How long a prompt's run waits for its background agents after the
/// turn, from `RIOT_EXEC_BACKGROUND_WAIT_MS`: `None` (unset or `0`) does
/// not wait — they stop with the run's session, as the agents of any
/// session do when it ends.
pub(super) fn background_wait(
    env: &BTreeMap<String, String>,
) -> Result<Option<u64>, BadBackgroundWait> {
    match env.get("RIOT_EXEC_BACKGROUND_WAIT_MS").map(|v| v.trim()) {
        None | Some("") => Ok(None),
        Some(value) => match value.parse::<u64>() {
            Ok(0) => Ok(None),
            Ok(ms) => Ok(Some(ms)),
            Err(source) => Err(BadBackgroundWait {
                value: value.to_owned(),
                source,
            }),
        },
    }
}

/// `RIOT_EXEC_BACKGROUND_WAIT_MS` is not a whole number of milliseconds:
/// a usage error.
#[derive(Debug, thiserror::Error)]
#[error(
    "RIOT_EXEC_BACKGROUND_WAIT_MS must be a whole number of milliseconds (0: do not wait), not `{value}`"
)]
pub(super) struct BadBackgroundWait {
    /// The value as set, trimmed.
    value: String,
    #[source]
    source: std::num::ParseIntError,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_background_wait_is_whole_milliseconds_and_zero_does_not_wait() {
        let env =
            |v: &str| BTreeMap::from([("RIOT_EXEC_BACKGROUND_WAIT_MS".to_owned(), v.to_owned())]);
        assert_eq!(background_wait(&BTreeMap::new()).unwrap(), None);
        assert_eq!(background_wait(&env(" 0 ")).unwrap(), None);
        assert_eq!(background_wait(&env("1500")).unwrap(), Some(1500));
        assert_eq!(
            background_wait(&env("10m")).unwrap_err().to_string(),
            "RIOT_EXEC_BACKGROUND_WAIT_MS must be a whole number of milliseconds (0: do not wait), not `10m`"
        );
    }
}
