//! L4 chaos (docs/testing.md): 500 seeds of random faults over scripted
//! sessions, each seed in its own task, asserting only invariants — `Done`
//! exactly once and last, no invariant violation (they panic in debug, where
//! this runs), no orphan `tool_use` in a normally completed session, and a
//! transcript that replays to the history.
//!
//! Reproduce one seed: `CHAOS_SEED=123 cargo nextest run -p riot-core --test chaos`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report

mod support;

use std::collections::BTreeMap;

use riot_protocol::*;
use serde_json::{Value, json};
use support::{Case, ToolSpecJson, assert_paired, run_case, script_item};

/// SplitMix64: small, well mixed, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const TOOLS: &[&str] = &["Read", "Edit", "Bash", "Grep", "Ask"];

fn random_reply(rng: &mut Rng, request: usize) -> Vec<Value> {
    let usage = json!({"usage": {"input_tokens": 10 + request as u64, "output_tokens": 5, "cache_read_tokens": 0, "cache_write_tokens": 0}});
    let mut items = Vec::new();
    // Transport notices before any content.
    for attempt in 1..=rng.below(4) {
        let kind = if rng.chance(50) {
            "overloaded"
        } else {
            "rate_limit"
        };
        items.push(json!({"retrying": {"attempt": attempt, "delay_ms": 500, "kind": kind, "reason": kind}}));
    }
    match rng.below(20) {
        0 => {
            return vec![
                json!({"error": {"kind": "context_overflow", "message": "prompt is too long", "status": 400}}),
            ];
        }
        1 => return vec![json!({"error": {"kind": "auth", "message": "bad key", "status": 401}})],
        2 => {
            items.push(json!({"text": "cut"}));
            items.push(json!({"stop": "max_tokens"}));
            return items;
        }
        3 => {
            items.push(json!({"partial_text": "stalling"}));
            items.push(json!({"stall": true}));
            return items;
        }
        4 => {
            items.push(json!({"text": "half"}));
            return items; // cut before Stop
        }
        5 => {
            items.push(json!({"thinking": {"text": "hmm", "signature": "sig"}}));
        }
        _ => {}
    }
    if rng.chance(60) {
        for i in 0..=rng.below(3) {
            let tool = TOOLS[rng.below(TOOLS.len() as u64) as usize];
            items.push(json!({"tool_use": {"id": format!("toolu_{request}_{i}"), "name": tool, "input": {"n": i}}}));
        }
        items.push(usage);
        items.push(json!({"stop": "tool_use"}));
    } else {
        items.push(json!({"text": "done"}));
        items.push(usage);
        items.push(json!({"stop": "end_turn"}));
    }
    items
}

fn random_tool(rng: &mut Rng) -> ToolSpecJson {
    match rng.below(10) {
        0 => ToolSpecJson::Fail("failed".into()),
        1 => ToolSpecJson::Panic,
        2 => ToolSpecJson::Hang,
        3 => ToolSpecJson::Ask {
            allow: rng.chance(50),
            result: "ok".into(),
        },
        _ => ToolSpecJson::Ok("ok".into()),
    }
}

async fn one_seed(seed: u64) -> &'static str {
    let mut rng = Rng(seed);
    let mut tools: BTreeMap<String, ToolSpecJson> = BTreeMap::new();
    for name in TOOLS {
        tools.insert((*name).to_owned(), random_tool(&mut rng));
    }
    let case = Case {
        description: format!("chaos seed {seed}"),
        prompt: "chaos".into(),
        max_turns: Some(1 + rng.below(8) as u32),
        tools,
        // Sometimes the person presses stop at a random point; always when
        // a stream stalls or a tool hangs.
        cancel_after_events: rng.chance(30).then(|| 1 + rng.below(40) as usize),
        stop_when_stalled: true,
        fallback_model: rng.chance(50).then(|| "fallback".to_owned()),
        compactor: support::CompactorJson {
            proactive: rng.chance(20),
            failures: rng.below(3) as u32,
            keep: rng.below(3) as usize,
        },
        ..Case::default()
    };
    let replies: Vec<_> = (0..12)
        .map(|r| {
            random_reply(&mut rng, r)
                .iter()
                .flat_map(script_item)
                .collect()
        })
        .collect();
    let run = run_case(&case, replies).await;

    let dones = run
        .events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Done { .. }))
        .count();
    assert_eq!(dones, 1, "seed {seed}: Done count");
    let Some(AgentEvent::Done { reason }) = run.events.last() else {
        panic!("seed {seed}: Done is not last");
    };
    if !matches!(reason, TerminalReason::Error { .. }) {
        assert_paired(&run.state.messages);
    }
    assert_eq!(
        run.transcript.replay(),
        run.state.messages,
        "seed {seed}: transcript replay"
    );
    reason.name()
}

#[test]
fn chaos_500_seeds() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let seeds: Vec<u64> = match std::env::var("CHAOS_SEED") {
        Ok(s) => vec![s.parse().unwrap()],
        Err(_) => (0..500).collect(),
    };
    runtime.block_on(async {
        let handles: Vec<_> = seeds
            .iter()
            .map(|&seed| (seed, tokio::spawn(one_seed(seed))))
            .collect();
        let mut failed = Vec::new();
        let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
        for (seed, handle) in handles {
            match handle.await {
                Ok(reason) => *outcomes.entry(reason).or_default() += 1,
                Err(e) => failed.push(format!("seed {seed}: {e}")),
            }
        }
        assert!(
            failed.is_empty(),
            "{} seeds failed:\n{}",
            failed.len(),
            failed.join("\n")
        );
        if seeds.len() == 500 {
            // The fault mix must actually reach every way a turn can end.
            for reason in ["completed", "max_turns", "aborted", "error"] {
                assert!(
                    outcomes.get(reason).copied().unwrap_or(0) >= 10,
                    "chaos reached `{reason}` too rarely: {outcomes:?}"
                );
            }
        }
    });
}
