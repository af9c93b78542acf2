//! Issue 8 "Done when": how much of each request a provider cache can
//! reuse. A scripted 30-turn session (29 Reads, then the answer) runs
//! through the real `riot` binary against the strict mock in a window large
//! enough that nothing is compacted. For every request after the first it
//! prints the share of the previous request that is byte-identical at the
//! start of this one, the way Anthropic's prompt cache reuses a prefix:
//! tools, then system blocks, then messages, each entry serialized on its
//! own with the `cache_control` markers removed and compared with the
//! same-index entry of the next request, up to the first difference. The
//! raw share (markers kept) is printed for information: the moving
//! message-level marker makes the previous last message differ.
//!
//! Run: `cargo nextest run -p riot-cli --test cache_prefix --no-capture`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stdout)] // the measurement is printed

mod support;

use riot_testkit::{MockServer, Reply, Script, UsageRule, Wire};
use serde_json::{Value, json};
use support::{World, run};

/// Model turns of the session: 29 Reads, then the answer.
const TURNS: usize = 30;
const FILES: usize = 10;
const ANSWER: &str = "Read all thirty.";

fn file_name(i: usize) -> String {
    format!("src/part_{i:02}.rs")
}

fn script() -> Script {
    let mut replies: Vec<Reply> = (0..TURNS - 1)
        .map(|turn| Reply::ToolCall {
            id: format!("toolu_{turn:03}"),
            name: "Read".into(),
            arguments: json!({"file_path": file_name(turn % FILES)}).to_string(),
            // Some turns say something before calling the tool.
            text: if turn % 3 == 0 {
                format!("Reading part {} next.", turn % FILES)
            } else {
                String::new()
            },
        })
        .collect();
    replies.push(Reply::Text(ANSWER.into()));
    Script::new(Wire::Anthropic, replies).usage(UsageRule::RequestSize)
}

/// `value` without any `cache_control` key, at any depth.
fn without_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), without_markers(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_markers).collect()),
        other => other.clone(),
    }
}

/// The cacheable entries of a request in cache order, serialized one by
/// one: tools, system blocks, messages.
fn entries(body: &Value, strip: bool) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["tools", "system", "messages"] {
        for entry in body[key].as_array().into_iter().flatten() {
            let entry = if strip {
                without_markers(entry)
            } else {
                entry.clone()
            };
            out.push(format!("{key}: {entry}"));
        }
    }
    out
}

/// How much of `prev` the start of `next` repeats: bytes of the leading
/// entries that are identical, the total bytes of `prev`, and the first
/// entry that differs (index, previous, next), if any.
struct Reuse {
    same: usize,
    total: usize,
    first_difference: Option<(usize, String, String)>,
}

impl Reuse {
    fn of(prev: &Value, next: &Value, strip: bool) -> Self {
        let (a, b) = (entries(prev, strip), entries(next, strip));
        let total = a.iter().map(String::len).sum();
        let mut same = 0;
        for (i, entry) in a.iter().enumerate() {
            match b.get(i) {
                Some(other) if other == entry => same += entry.len(),
                other => {
                    return Self {
                        same,
                        total,
                        first_difference: Some((
                            i,
                            entry.clone(),
                            other.cloned().unwrap_or_default(),
                        )),
                    };
                }
            }
        }
        Self {
            same,
            total,
            first_difference: None,
        }
    }

    fn percent(&self) -> f64 {
        100.0 * self.same as f64 / self.total as f64
    }
}

/// The first byte where two strings differ, with some context.
fn where_they_differ(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = a.floor_char_boundary(at.saturating_sub(80));
    format!(
        "at byte {at}:\n  prev …{}\n  next …{}",
        &a[from..a.floor_char_boundary((at + 80).min(a.len()))],
        &b[b.floor_char_boundary(from.min(b.len()))..b.floor_char_boundary((at + 80).min(b.len()))]
    )
}

#[test]
fn the_measure_stops_at_the_first_changed_entry_and_ignores_moved_markers() {
    let cc = json!({"type": "ephemeral"});
    let prev = json!({
        "tools": [{"name": "Read", "input_schema": {}}],
        "system": [{"type": "text", "text": "sys", "cache_control": cc}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
            {"role": "user", "content": [{"type": "text", "text": "c", "cache_control": cc}]}
        ]
    });
    let mut next = prev.clone();
    next["messages"][2]["content"][0]
        .as_object_mut()
        .unwrap()
        .remove("cache_control");
    next["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": [{"type": "text", "text": "d", "cache_control": cc}]}));
    let stripped = Reuse::of(&prev, &next, true);
    assert_eq!(stripped.same, stripped.total);
    assert!(stripped.first_difference.is_none());
    let raw = Reuse::of(&prev, &next, false);
    assert_eq!(
        raw.first_difference.unwrap().0,
        4,
        "the last message moved its marker"
    );

    next["messages"][1]["content"][0]["text"] = json!("B");
    let changed = Reuse::of(&prev, &next, true);
    let (index, a, b) = changed.first_difference.unwrap();
    assert_eq!(index, 3, "tools, system, then messages[1]");
    assert_eq!(
        changed.same,
        entries(&prev, true)[..3]
            .iter()
            .map(String::len)
            .sum::<usize>()
    );
    let at = a.find(r#""text":"b""#).unwrap() + r#""text":""#.len();
    let shown = where_they_differ(&a, &b);
    assert!(shown.starts_with(&format!("at byte {at}:")), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_repeats_the_previous_one_byte_for_byte() {
    let world = World::new();
    std::fs::create_dir_all(world.project.path().join("src")).unwrap();
    for i in 0..FILES {
        let body: String = (0..40)
            .map(|l| format!("pub const PART_{i:02}_ITEM_{l:02}: &str = \"item {l} ✓\";\n"))
            .collect();
        std::fs::write(world.project.path().join(file_name(i)), body).unwrap();
    }
    std::fs::write(
        world.home.path().join("settings.json"),
        r#"{"context_window": 1000000, "max_output_tokens": 8000}"#,
    )
    .unwrap();
    let server = MockServer::start(script()).await.unwrap();
    let cwd = world.project.path().to_str().unwrap().to_owned();
    let base = server.base_url();
    let out = run(world.bare(&[
        "exec",
        "--cwd",
        &cwd,
        "--provider",
        "anthropic",
        "--base-url",
        &base,
        "--model",
        "claude-test",
        "--output-format",
        "json",
        "Read every part under src/.",
    ]))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], ANSWER);
    let requests = server.requests();
    assert_eq!(requests.len(), TURNS, "one request per turn, no compaction");
    assert!(requests.iter().all(|r| r.status == 200));

    println!("turn  reusable prefix (markers removed)     raw prefix (markers kept)");
    let mut not_reused = Vec::new();
    for (i, pair) in requests.windows(2).enumerate() {
        let (prev, next) = (&pair[0].body, &pair[1].body);
        let stripped = Reuse::of(prev, next, true);
        let raw = Reuse::of(prev, next, false);
        println!(
            "{:>4}  {:>7.2} % ({:>6} / {:>6} bytes)   {:>7.2} % ({:>6} bytes)",
            i + 2,
            stripped.percent(),
            stripped.same,
            stripped.total,
            raw.percent(),
            raw.same,
        );
        // Parameters outside the prefix that would also void the cache.
        for key in ["model", "thinking"] {
            assert_eq!(prev[key], next[key], "{key} changed at turn {}", i + 2);
        }
        if let Some((index, a, b)) = stripped.first_difference {
            not_reused.push(format!(
                "turn {}: entry {index} differs {}",
                i + 2,
                where_they_differ(&a, &b)
            ));
        }
    }
    assert!(
        not_reused.is_empty(),
        "the cacheable prefix changed:\n{}",
        not_reused.join("\n")
    );
    server.shutdown().await;
}
