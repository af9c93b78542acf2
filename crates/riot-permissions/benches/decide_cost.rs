#![allow(clippy::disallowed_methods)] // a benchmark: builds its tree with std::fs, runs grep, reads the wall clock
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)] // benchmark binary

//! What the permission chain's disk checks cost: one decision for a plain
//! command (`ls -la`, the reference) against decisions that expand a glob
//! or search a tree for secret files (`grep -rn`), on a real disk through
//! `RealFs`, and against running that `grep -rn` itself. Prints each
//! decision's mean time and its ratio to the reference, measured in the
//! same run.
//!
//! Run: `cargo bench -p riot-permissions --bench decide_cost` (release).
//! `RIOT_BENCH_FILES` sets the number of files (default 5000).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use riot_permissions::{Policy, builtin_query};
use riot_protocol::{PermissionMode, PermissionPolicy};
use serde_json::json;

/// `files` small files in 100-file directories, a `.git` directory and a
/// `node_modules` the secret search skips.
fn build_tree(root: &Path, files: usize) {
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), format!("fn f{i}() {{}}\n")).unwrap();
    }
    std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
    std::fs::write(root.join("node_modules/x/index.js"), "1\n").unwrap();
}

fn mean_per_call(rounds: u32, mut f: impl FnMut()) -> Duration {
    // One warm-up round (file system caches).
    f();
    let start = Instant::now();
    for _ in 0..rounds {
        f();
    }
    start.elapsed() / rounds
}

fn main() {
    let files: usize = std::env::var("RIOT_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    build_tree(&root, files);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let policy = Policy::new(root.clone(), Some("/home/nobody".into()))
        .with_file_system(Arc::new(riot_runtime::RealFs));
    let decide = |command: &str| {
        let q = builtin_query(
            "Bash",
            &json!({ "command": command }),
            &root,
            PermissionMode::Default,
        );
        rt.block_on(policy.decide(&q))
    };
    let rounds = 20;
    let reference = mean_per_call(200, || {
        decide("ls -la");
    });
    println!("riot-permissions decide_cost: {files} files");
    println!(
        "  {:<44} {:>10.1} µs  1.00×  (reference)",
        "decide `ls -la`",
        reference.as_secs_f64() * 1e6
    );
    for command in [
        "cat src/m000/*.rs",
        "echo x > .gi[t]/config",
        "grep -rn needle src",
        "grep -rn needle .",
        "x=.git; cd src && echo y > ../$x/config",
    ] {
        let t = mean_per_call(rounds, || {
            decide(command);
        });
        println!(
            "  {:<44} {:>10.1} µs  {:.2}×",
            format!("decide `{command}`"),
            t.as_secs_f64() * 1e6,
            t.as_secs_f64() / reference.as_secs_f64()
        );
    }
    // What the same search costs when it runs: the chain's look for
    // secrets should be a small part of it.
    if std::process::Command::new("grep")
        .arg("--version")
        .output()
        .is_ok()
    {
        let run = mean_per_call(5, || {
            std::process::Command::new("grep")
                .args(["-rn", "needle", "."])
                .current_dir(&root)
                .output()
                .unwrap();
        });
        let walk = mean_per_call(rounds, || {
            decide("grep -rn needle .");
        });
        println!(
            "  running `grep -rn needle .` itself: {:.1} µs; the decision costs {:.2}× of that",
            run.as_secs_f64() * 1e6,
            walk.as_secs_f64() / run.as_secs_f64()
        );
    }
}
