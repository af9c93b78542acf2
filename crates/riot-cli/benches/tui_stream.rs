//! How much the terminal UI writes to the terminal while a reply streams.
//!
//! Streams replies of four shapes in deltas of ten bytes from the strict
//! mock model through the real `riot` binary on a 100×30 pseudo-terminal,
//! one `riot` per reply: one 25 KB paragraph without a line break, a
//! 400-line fenced code block, a 300-item list, and a 20 KB mix of
//! headings, paragraphs, lists and code. A proxy between them lets one
//! event through every 2 ms (5 KB of reply a second, about five rows per
//! frame of the UI; a model streams slower, the mock alone much faster).
//! For each shape it prints the bytes written to the terminal per byte of
//! reply (from the prompt's Enter to the idle status line after the reply)
//! and the longest gap between two writes in that time. Goal: at most 2
//! bytes per byte for every shape. The figures are printed, never
//! asserted: CI runs this to show them.
//!
//! `cargo bench -p riot-cli --bench tui_stream`; `RIOT_BENCH_RIOT=PATH`
//! measures another `riot` binary (an older build, to compare), and
//! `RIOT_BENCH_DUMP=DIR` keeps all that each `riot` wrote, as
//! `DIR/SHAPE.out` (replayed in a terminal of the same size, it shows the
//! conversation).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark
#![allow(clippy::disallowed_methods, clippy::print_stdout)] // real processes, time and output

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;

/// Bytes of reply per delta.
const DELTA_BYTES: usize = 10;
/// The time between two events of the stream.
const EVERY: Duration = Duration::from_millis(2);
/// The reply's last words, on a row of their own.
const LAST: &str = "End of the reply.";

/// Words to build replies from, cycled.
const WORDS: [&str; 16] = [
    "the", "terminal", "writes", "only", "what", "changed", "since", "its", "last", "frame,",
    "and", "a", "settled", "row", "never", "moves.",
];

fn words(from: usize, count: usize) -> String {
    (from..from + count)
        .map(|i| WORDS[i % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

/// One paragraph of about 25 KB with no line break in it.
fn paragraph() -> String {
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 25_000 {
        text.push_str(WORDS[i % WORDS.len()]);
        text.push(' ');
        i += 1;
    }
    format!("{text}{LAST}")
}

/// A fenced Rust block of 400 lines.
fn code_block() -> String {
    let mut text = String::from("```rust\n");
    for i in 0..400 {
        match i % 4 {
            0 => text.push_str(&format!("fn step_{i}(input: &[u8]) -> usize {{\n")),
            1 => text.push_str(&format!(
                "    let total = input.iter().map(|b| usize::from(*b)).sum::<usize>() + {i};\n"
            )),
            2 => text.push_str("    // Twice the sum, so the result is even.\n"),
            _ => text.push_str("    total * 2 }\n"),
        }
    }
    text.push_str("```\n\n");
    text.push_str(LAST);
    text
}

/// A bulleted list of 300 items, some of them wrapping.
fn list() -> String {
    let mut text = String::new();
    for i in 0..300 {
        let count = 6 + (i * 7) % 20;
        text.push_str(&format!("- item {i}: {}\n", words(i, count)));
    }
    text.push('\n');
    text.push_str(LAST);
    text
}

/// About 20 KB of headings, paragraphs, short lists and code blocks.
fn mixed() -> String {
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
    text
}

/// `text` cut into deltas of about [`DELTA_BYTES`] on character boundaries.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(DELTA_BYTES)
        .map(|c| c.iter().collect())
        .collect()
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

/// A proxy to `upstream` that passes requests as they come and lets the
/// answers' server-sent events through one per `every`, as a model streams
/// them: the mock alone sends a whole reply in a few milliseconds, in one
/// or two frames of the UI.
fn paced_proxy(upstream: SocketAddr, every: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { break };
            let Ok(server) = TcpStream::connect(upstream) else {
                continue;
            };
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_server);
                let _ = to_server.shutdown(Shutdown::Write);
            });
            let (mut from_server, mut to_client) = (server, client);
            std::thread::spawn(move || {
                let mut buf = [0u8; 16384];
                let mut last = 0u8;
                loop {
                    let n = match from_server.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let mut start = 0;
                    for i in 0..n {
                        let before = if i == 0 { last } else { buf[i - 1] };
                        // An event ends with a blank line.
                        if buf[i] == b'\n' && before == b'\n' {
                            if to_client.write_all(&buf[start..=i]).is_err() {
                                return;
                            }
                            let _ = to_client.flush();
                            std::thread::sleep(every);
                            start = i + 1;
                        }
                    }
                    if to_client.write_all(&buf[start..n]).is_err() {
                        return;
                    }
                    last = buf[n - 1];
                }
                let _ = to_client.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

/// What the reader thread saw: bytes with the time they arrived.
#[derive(Default)]
struct Seen {
    bytes: Vec<u8>,
    reads: Vec<(Instant, usize)>,
}

fn wait_until(seen: &Arc<Mutex<Seen>>, what: &str, from: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        {
            let s = seen.lock().unwrap();
            let text = String::from_utf8_lossy(&s.bytes[from.min(s.bytes.len())..]).into_owned();
            if let Some(at) = text.find(what) {
                return from + at;
            }
        }
        if Instant::now() >= deadline {
            let s = seen.lock().unwrap();
            let tail = String::from_utf8_lossy(&s.bytes[s.bytes.len().saturating_sub(3000)..]);
            panic!("riot never wrote {what:?}; its last output: {tail:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What streaming one reply cost.
struct Measured {
    reply_bytes: usize,
    deltas: usize,
    written: usize,
    took: Duration,
    gap: Duration,
}

/// Streams `text` through a fresh `riot` on a 100×30 pseudo-terminal.
fn measure(runtime: &tokio::runtime::Runtime, name: &str, text: &str) -> Measured {
    let pieces = pieces(text);
    let reply_bytes: usize = pieces.iter().map(String::len).sum();
    let server = runtime
        .block_on(MockServer::start(Script::new(
            Wire::Anthropic,
            vec![events(&pieces)],
        )))
        .unwrap();
    let upstream: SocketAddr = server
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let proxy = paced_proxy(upstream, EVERY);
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
    let riot =
        std::env::var_os("RIOT_BENCH_RIOT").unwrap_or_else(|| env!("CARGO_BIN_EXE_riot").into());
    let mut cmd = CommandBuilder::new(riot);
    cmd.args([
        "--provider",
        "anthropic",
        "--base-url",
        &format!("http://{proxy}"),
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
    // The terminal's title says the turn is done (the reply's last row may
    // be written in pieces, never whole), and the idle status line follows.
    let end = wait_until(&seen, "riot · done", start_bytes);
    wait_until(&seen, "shift+tab mode", end);
    let took = sent.elapsed();
    let (written, gap) = {
        let s = seen.lock().unwrap();
        if let Some(dir) = std::env::var_os("RIOT_BENCH_DUMP") {
            let file = format!("{}.out", name.replace(' ', "-"));
            std::fs::write(std::path::Path::new(&dir).join(file), &s.bytes).unwrap();
        }
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
    Measured {
        reply_bytes,
        deltas: pieces.len(),
        written,
        took,
        gap,
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let shapes: [(&str, String); 4] = [
        ("one paragraph", paragraph()),
        ("400-line code block", code_block()),
        ("300-item list", list()),
        ("mixed Markdown", mixed()),
    ];
    println!(
        "tui_stream: replies in deltas of {DELTA_BYTES} bytes, one every {} ms, on a 100x30 pseudo-terminal",
        EVERY.as_millis()
    );
    println!("  bytes written to the terminal per byte of reply (goal: at most 2)");
    if cfg!(debug_assertions) {
        println!("  (Riot's own crates unoptimised, as CI runs it and the README reports it)");
    }
    let mut worst: f64 = 0.0;
    for (name, text) in &shapes {
        let m = measure(&runtime, name, text);
        let ratio = m.written as f64 / m.reply_bytes as f64;
        worst = worst.max(ratio);
        println!(
            "  {name:<20} {:>6} bytes in {:>5} deltas: {:>7} written = {ratio:.2} per byte; streamed in {:.0} ms, longest gap between writes {:.0} ms",
            m.reply_bytes,
            m.deltas,
            m.written,
            m.took.as_secs_f64() * 1000.0,
            m.gap.as_secs_f64() * 1000.0,
        );
    }
    println!("  worst: {worst:.2} per byte");
}
