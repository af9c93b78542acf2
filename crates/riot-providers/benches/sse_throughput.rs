//! SSE parser + decoder throughput, and evidence that parsing is linear.
//!
//! `cargo bench -p riot-providers --bench sse_throughput` (a plain
//! `--release` binary, not a timed test). Prints MB/s for ~10 MB of
//! Anthropic text events at several chunk sizes, and for one long `data:`
//! line fed a byte at a time at two sizes: a linear parser keeps the same
//! MB/s when the line grows 4×, a rescanning one collapses.

#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::unwrap_used)] // a benchmark measures wall time and prints

use std::hint::black_box;
use std::time::Instant;

use riot_providers::anthropic::decode::AnthropicDecoder;
use riot_providers::decode::decode_chunks;
use riot_providers::sse::SseParser;

fn events(target: usize) -> Vec<u8> {
    let mut out = String::new();
    out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"bench\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n");
    out.push_str("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    let mut i = 0u64;
    while out.len() < target {
        out.push_str(&format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"token {i} 你好 🙂 \"}}}}\n\n"
        ));
        i += 1;
    }
    out.push_str(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n");
    out.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out.into_bytes()
}

fn mb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / 1_000_000.0 / secs
}

fn main() {
    let body = events(10_000_000);
    for size in [65_536, 4096, 13, 1] {
        let start = Instant::now();
        let mut decoder = AnthropicDecoder::new("bench");
        let (out, err) = decode_chunks(&mut decoder, body.chunks(size));
        let secs = start.elapsed().as_secs_f64();
        assert!(err.is_none());
        black_box(out.len());
        println!(
            "decode {:>5.1} MB in {size:>5}-byte chunks: {:>7.1} MB/s",
            body.len() as f64 / 1e6,
            mb_per_s(body.len(), secs)
        );
    }
    for len in [2_000_000usize, 8_000_000] {
        let line = format!("data: {}\n\n", "é".repeat(len / 2));
        let start = Instant::now();
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for b in line.as_bytes().chunks(1) {
            parser.push(b, &mut out);
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(out.len(), 1);
        println!(
            "one {:>4.1} MB line, 1-byte chunks: {:>7.1} MB/s",
            line.len() as f64 / 1e6,
            mb_per_s(line.len(), secs)
        );
    }
}
