//! What a checkpoint costs on a generated 20,000-file project with 1,000
//! ignored files (recorded: a command may delete them) and 1,000 files of
//! build output in `target/` (left out): the first (every file read and
//! stored), then the next ones (a walk reusing the stats), against a
//! reference measured in the same run — walking the tree with the `ignore`
//! crate, `.gitignore` honoured, and stat-ing each file. Git's state costs
//! nothing here: `.git` is read-only to the commands Riot runs unasked,
//! so it is not recorded.
//!
//! `cargo bench -p riot-checkpoint` (add `-- --files N` for another size).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // reason: a benchmark binary prints its results
#![allow(clippy::disallowed_methods, clippy::disallowed_types)] // reason: a benchmark measures the real disk and clock

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use riot_checkpoint::{CheckpointStore, Scope, Settings};

fn generate(root: &Path, files: usize) {
    fs::write(root.join(".gitignore"), "target/\ndata/\n").unwrap();
    let per_dir = 100;
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}", i / per_dir));
        if i % per_dir == 0 {
            fs::create_dir_all(&dir).unwrap();
        }
        let body = format!("// file {i}\npub fn f{i}() -> usize {{ {i} }}\n").repeat(8);
        fs::write(dir.join(format!("f{i}.rs")), body).unwrap();
    }
    // Build output the walk leaves out, and ignored data it records.
    fs::create_dir_all(root.join("target")).unwrap();
    fs::create_dir_all(root.join("data")).unwrap();
    for i in 0..1000 {
        fs::write(root.join(format!("target/o{i}.bin")), "x".repeat(512)).unwrap();
        fs::write(root.join(format!("data/d{i}.db")), "y".repeat(512)).unwrap();
    }
}

fn walk_and_stat(root: &Path) -> usize {
    let mut n = 0;
    for entry in ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .build()
    {
        let entry = entry.unwrap();
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let _ = fs::symlink_metadata(entry.path()).unwrap();
            n += 1;
        }
    }
    n
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files = args
        .iter()
        .position(|a| a == "--files")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let home = dir.path().join("home");
    fs::create_dir_all(&project).unwrap();
    generate(&project, files);
    // Checkpoints reuse a file's version only when it is older than two
    // seconds (a change within the timestamp resolution would not show).
    std::thread::sleep(Duration::from_millis(2100));

    // The reference: the cheapest run first warms the disk cache for both.
    walk_and_stat(&project);
    let mut walks = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let n = walk_and_stat(&project);
        walks.push(t.elapsed());
        assert_eq!(n, files + 1);
    }
    walks.sort();
    let walk = walks[walks.len() / 2];

    let store = CheckpointStore::open(&home, &project, Settings::default());
    let t = Instant::now();
    let begun = store.begin("bench", 1, "Bash", Scope::Tree, 1).unwrap();
    let first = t.elapsed();
    store.finish(begun, 2).unwrap();

    let mut next = Vec::new();
    for i in 0..5 {
        // One file changes between commands, as a command would change it.
        fs::write(
            project.join(format!("src/m000/f{i}.rs")),
            format!("changed {i}\n"),
        )
        .unwrap();
        let t = Instant::now();
        let begun = store.begin("bench", 2 + i, "Bash", Scope::Tree, 3).unwrap();
        next.push(t.elapsed());
        store.finish(begun, 4).unwrap();
    }
    next.sort();
    let subsequent = next[next.len() / 2];

    let target = project.join("src/m001/f100.rs");
    let t = Instant::now();
    let begun = store
        .begin("bench", 9, "Edit", Scope::Files(vec![target]), 5)
        .unwrap();
    let one_file = t.elapsed();
    store.finish(begun, 6).unwrap();

    println!(
        "checkpoint cost on a {files}-file tree (+1,000 ignored files recorded, +1,000 in target/ left out)"
    );
    println!("  reference: walk + stat every file   {:>9.1} ms", ms(walk));
    println!(
        "  first tree checkpoint               {:>9.1} ms  ({:.1}x the walk)",
        ms(first),
        first.as_secs_f64() / walk.as_secs_f64()
    );
    println!(
        "  next tree checkpoint (median of 5)  {:>9.1} ms  ({:.1}x the walk)",
        ms(subsequent),
        subsequent.as_secs_f64() / walk.as_secs_f64()
    );
    println!(
        "  one-file checkpoint (Edit)          {:>9.3} ms",
        ms(one_file)
    );
}
