//! How much the terminal UI writes to the terminal while a reply streams.
//!
//! Streams a 20 KB Markdown reply in 2,000 deltas from the strict mock
//! model through the real `riot` binary on a 100×30 pseudo-terminal and
//! prints the bytes written to the terminal per byte of reply (from the
//! prompt's Enter to the reply's last row) and the longest gap between two
//! writes in that time. Goal: at most 2 bytes per byte.
//!
//! `cargo bench -p riot-cli --bench tui_stream`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark
#![allow(clippy::disallowed_methods, clippy::print_stdout)] // real processes, time and output

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;

const DELTAS: usize = 2_000;
const LAST: &str = "END-OF-REPLY";

/// 2,000 pieces of about ten bytes: paragraphs, a list, a code block.
fn reply_pieces() -> Vec<String> {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 20_000 - 200 {
        match i % 12 {
            0 => text.push_str(&format!("## Section {i}\n\n")),
            5 => text.push_str("- an item of the list\n- another item here\n\n"),
            9 => text.push_str("```rust\nfn main() {\n    let x = 1;\n}\n```\n\n"),
            _ => text.push_str(
                "Some words of the reply that wrap across the width of the terminal nicely, one after another.\n\n",
            ),
        }
        i += 1;
    }
    text.push_str(LAST);
    // Cut into DELTAS pieces on character boundaries.
    let chars: Vec<char> = text.chars().collect();
    let per = chars.len().div_ceil(DELTAS);
    chars.chunks(per).map(|c| c.iter().collect()).collect()
}

fn events(pieces: &[String]) -> Reply {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message", "role": "assistant",
            "model": "mock-model", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for piece in pieces {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5000}}));
    events.push(json!({"type": "message_stop"}));
    Reply::Events(events)
}

/// What the reader thread saw: bytes with the time they arrived.
#[derive(Default)]
struct Seen {
    bytes: Vec<u8>,
    reads: Vec<(Instant, usize)>,
}

fn wait_until(seen: &Arc<Mutex<Seen>>, what: &str, from: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        {
            let s = seen.lock().unwrap();
            let text = String::from_utf8_lossy(&s.bytes[from.min(s.bytes.len())..]).into_owned();
            if let Some(at) = text.find(what) {
                return from + at;
            }
        }
        assert!(Instant::now() < deadline, "riot never wrote {what:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pieces = reply_pieces();
    let reply_bytes: usize = pieces.iter().map(String::len).sum();
    let server = runtime
        .block_on(MockServer::start(Script::new(
            Wire::Anthropic,
            vec![events(&pieces)],
        )))
        .unwrap();
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 100,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_riot"));
    cmd.args([
        "--provider",
        "anthropic",
        "--base-url",
        &server.base_url(),
        "--model",
        "mock-model",
    ]);
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if key.starts_with("RIOT_") || key.ends_with("_API_KEY") || key == "XDG_CONFIG_HOME" {
            cmd.env_remove(key);
        }
    }
    cmd.env("RIOT_HOME", home.path());
    cmd.env("HOME", home.path());
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(project.path());
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let writer = Arc::new(Mutex::new(pair.master.take_writer().unwrap()));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let thread = {
        let seen = Arc::clone(&seen);
        let writer = Arc::clone(&writer);
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                // Nobody else answers the terminal's cursor-position query.
                if buf[..n].windows(4).any(|w| w == b"\x1b[6n") {
                    let mut w = writer.lock().unwrap();
                    let _ = w.write_all(b"\x1b[1;1R");
                    let _ = w.flush();
                }
                let mut s = seen.lock().unwrap();
                s.bytes.extend_from_slice(&buf[..n]);
                s.reads.push((Instant::now(), n));
            }
        })
    };

    wait_until(&seen, "shift+tab mode", 0);
    std::thread::sleep(Duration::from_millis(300));
    let (start_bytes, start_reads) = {
        let s = seen.lock().unwrap();
        (s.bytes.len(), s.reads.len())
    };
    let sent = Instant::now();
    {
        let mut w = writer.lock().unwrap();
        w.write_all(b"go\r").unwrap();
        w.flush().unwrap();
    }
    let end = wait_until(&seen, LAST, start_bytes);
    // The idle status line follows the reply's last row.
    wait_until(&seen, "shift+tab mode", end);
    let took = sent.elapsed();
    let (written, gap) = {
        let s = seen.lock().unwrap();
        let reads = &s.reads[start_reads..];
        let mut gap = Duration::ZERO;
        let mut last = sent;
        for (at, _) in reads {
            gap = gap.max(at.duration_since(last));
            last = *at;
        }
        (s.bytes.len() - start_bytes, gap)
    };
    {
        let mut w = writer.lock().unwrap();
        let _ = w.write_all(b"\x04");
        let _ = w.flush();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(writer);
    drop(pair.master);
    let _ = thread.join();
    runtime.block_on(server.shutdown());

    println!(
        "tui_stream: a {reply_bytes}-byte reply in {DELTAS} deltas on a 100x30 pseudo-terminal"
    );
    println!("  streamed in {:.0} ms", took.as_secs_f64() * 1000.0);
    println!(
        "  bytes written to the terminal: {written} = {:.2} per byte of reply (goal: at most 2)",
        written as f64 / reply_bytes as f64
    );
    println!(
        "  longest gap between writes: {:.0} ms",
        gap.as_secs_f64() * 1000.0
    );
}
