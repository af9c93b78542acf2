#![allow(clippy::disallowed_methods)] // a benchmark: builds its tree with std::fs, runs `rg`, reads the wall clock
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // benchmark binary

//! Grep (the tool, in-process, through `Tool::call`) against the `rg`
//! binary on the same deterministic tree (ISSUE 4: target ≤ 1.3×).
//!
//! Run: `cargo bench -p riot-tools --features testing --bench grep_vs_rg`
//! (release), or
//! `cargo test -p riot-tools --features testing --bench grep_vs_rg` for a
//! quick dev-profile
//! smoke run. `RIOT_BENCH_FILES` sets the number of files (default 30000).

use std::path::Path;
use std::time::{Duration, Instant};

use riot_protocol::Tool;
use riot_tools::testing::{TempProject, text_of};
use riot_tools::tools::grep::{Grep, GrepInput};

const WORDS: [&str; 16] = [
    "alpha", "beta", "gamma", "delta", "let", "mut", "value", "count", "index", "buffer", "self",
    "return", "match", "impl", "struct", "other",
];

/// A deterministic tree: `files` files in 100-file directories, one in 20
/// holding the needle, a gitignored directory and a .git directory.
fn build_tree(root: &Path, files: usize) {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "generated/\n").unwrap();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..files {
        let dir = if i % 50 == 49 {
            "generated".to_owned()
        } else {
            format!("src/m{:03}", i / 100)
        };
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut body = String::with_capacity(2_000);
        for line in 0..40 {
            if i % 20 == 0 && line == 17 {
                body.push_str(&format!("fn process_item_{i}(input: &str) -> usize {{\n"));
                continue;
            }
            for _ in 0..6 {
                body.push_str(WORDS[(next() % 16) as usize]);
                body.push(' ');
            }
            body.push('\n');
        }
        std::fs::write(dir.join(format!("f{i:05}.rs")), body).unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists before running
    }
    let files: usize = std::env::var("RIOT_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000);
    let project = TempProject::new();
    build_tree(project.root(), files);
    let pattern = r"fn\s+process_\w+";
    let runs = 7;

    let mut rg_times = Vec::new();
    let mut rg_count = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let out = std::process::Command::new("rg")
            .args(["-l", "-e", pattern, "."])
            .current_dir(project.root())
            .output()
            .expect("`rg` must be on PATH for this benchmark");
        rg_times.push(start.elapsed());
        rg_count = out
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
    }

    let mut grep_times = Vec::new();
    let mut grep_text = String::new();
    for _ in 0..runs {
        let input: GrepInput = serde_json::from_value(serde_json::json!({
            "pattern": pattern,
            "head_limit": 100000
        }))
        .unwrap();
        let start = Instant::now();
        let out = Grep.call(input, &project.ctx()).await;
        grep_times.push(start.elapsed());
        grep_text = text_of(&out);
    }
    let grep_count = grep_text.lines().skip(1).filter(|l| !l.is_empty()).count();
    assert_eq!(grep_count, rg_count, "Grep and rg must find the same files");

    let rg = median(rg_times);
    let grep = median(grep_times);
    println!(
        "grep_vs_rg: {files} files, {rg_count} matching; rg {:.1} ms, Grep {:.1} ms, ratio {:.2}x (target <= 1.3x)",
        rg.as_secs_f64() * 1e3,
        grep.as_secs_f64() * 1e3,
        grep.as_secs_f64() / rg.as_secs_f64()
    );
}
