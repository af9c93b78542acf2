//! What `riot sessions list` costs as transcripts grow: 300 sessions of
//! about 2 MB each against 300 short ones, listed the same way. Listing
//! reads each transcript's index entry, not the transcript, so the ratio
//! should be about 1×.
//!
//! Run: `cargo bench -p riot-store --bench list_cost`
//!
//! It also prints what a list costs with no index (the first list after
//! the index was lost: every transcript read once, its entry rebuilt) and
//! the list right after, for reference.

// A benchmark measures real time on real files and prints its numbers.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::path::Path;
use std::time::{Duration, Instant};

use riot_protocol::{
    AssistantBlock, AssistantMessage, Message, MessageId, MessageOrigin, SessionId, StopReason,
    ToolResultContent, ToolUseId, UserBlock, UserMessage,
};
use riot_store::{SessionMeta, SessionStore};

const SESSIONS: usize = 300;
const RUNS: usize = 11;

/// Writes `SESSIONS` transcripts of a prompt and `turns` Read calls whose
/// results are `result_bytes` long; returns the bytes written.
fn fill(dir: &Path, turns: u64, result_bytes: usize) -> u64 {
    let store = SessionStore::new(dir.join("sessions"));
    let text = "lorem ipsum dolor sit amet ".repeat(result_bytes / 27 + 1);
    let text = &text[..result_bytes];
    for s in 0..SESSIONS {
        let id = SessionId::new(format!("ses_{s:04}"));
        let meta = SessionMeta::new(id, "/work/project".into(), "model", 1_000 + s as u64);
        let mut w = store.create(&meta).unwrap();
        let mut at = 2_000 + s as u64 * 1_000;
        w.message(
            &Message::user_text(MessageId::new("u0"), format!("task number {s}")),
            at,
        )
        .unwrap();
        for t in 0..turns {
            at += 1;
            let call = Message::Assistant(AssistantMessage {
                id: MessageId::new(format!("a{t}")),
                content: vec![AssistantBlock::ToolUse {
                    id: ToolUseId::new(format!("t{t}")),
                    name: "Read".into(),
                    input: serde_json::json!({"file_path": format!("src/file{t}.rs")}),
                }],
                model: "model".into(),
                stop_reason: Some(StopReason::ToolUse),
                interrupted: false,
            });
            let result = Message::User(UserMessage {
                id: MessageId::new(format!("r{t}")),
                content: vec![UserBlock::ToolResult {
                    tool_use_id: ToolUseId::new(format!("t{t}")),
                    content: vec![ToolResultContent::text(text)],
                    is_error: false,
                    ui: None,
                }],
                origin: MessageOrigin::ToolResults,
            });
            w.message(&call, at).unwrap();
            w.message(&result, at).unwrap();
        }
    }
    std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// One `list()`, checked to have found every session.
fn list_once(dir: &Path) -> Duration {
    let store = SessionStore::new(dir.join("sessions"));
    let start = Instant::now();
    let listed = store.list().unwrap();
    let took = start.elapsed();
    assert_eq!(listed.len(), SESSIONS);
    took
}

/// The medians of `RUNS` lists of each directory, taken in turns so both
/// see the same machine.
fn median_lists(long: &Path, short: &Path) -> (Duration, Duration) {
    let (mut a, mut b): (Vec<Duration>, Vec<Duration>) = (0..RUNS)
        .map(|_| (list_once(long), list_once(short)))
        .unzip();
    a.sort();
    b.sort();
    (a[RUNS / 2], b[RUNS / 2])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

fn main() {
    let big = tempfile::tempdir().unwrap();
    let small = tempfile::tempdir().unwrap();
    // 100 turns of a 20 KB result: about 2 MB a transcript.
    let big_bytes = fill(big.path(), 100, 20_000);
    let small_bytes = fill(small.path(), 1, 200);
    println!(
        "transcripts: {SESSIONS} long of {:.2} MB on average, {SESSIONS} short of {:.1} KB",
        big_bytes as f64 / SESSIONS as f64 / 1e6,
        small_bytes as f64 / SESSIONS as f64 / 1e3,
    );

    let (long, short) = median_lists(big.path(), small.path());
    println!(
        "list (median of {RUNS}): long {:.2} ms, short {:.2} ms, ratio {:.2}x",
        ms(long),
        ms(short),
        long.as_secs_f64() / short.as_secs_f64()
    );

    // Without the index: every transcript is read once, and the index
    // rebuilt.
    for dir in [big.path(), small.path()] {
        std::fs::remove_dir_all(dir.join("sessions-index")).unwrap();
    }
    let long_cold = list_once(big.path());
    let short_cold = list_once(small.path());
    println!(
        "list with no index (rebuilds it): long {:.2} ms, short {:.2} ms, ratio {:.2}x",
        ms(long_cold),
        ms(short_cold),
        long_cold.as_secs_f64() / short_cold.as_secs_f64()
    );
    let (long, short) = median_lists(big.path(), small.path());
    println!(
        "list after the rebuild (median of {RUNS}): long {:.2} ms, short {:.2} ms, ratio {:.2}x",
        ms(long),
        ms(short),
        long.as_secs_f64() / short.as_secs_f64()
    );
}
