//! Where the wire fixtures live, for the test files that read them.
//!
//! The project's own streams are in `tests/wire` (see its README) and are
//! always there. Recorded streams from real endpoints are not part of the
//! repository: where a machine has a directory of them, `RIOT_SHARED_FIXTURES`
//! names it (`.ci/run` sets it when one is there) and they are checked too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Names a directory of recorded fixtures (the one holding `wire/`).
pub const SHARED_FIXTURES_VAR: &str = "RIOT_SHARED_FIXTURES";

/// The project's own wire fixtures, inside the repository.
pub fn own_wire() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/wire"))
}

/// The recorded wire fixtures, if this machine has them.
pub fn recorded_wire() -> Option<PathBuf> {
    recorded_wire_at(std::env::var_os(SHARED_FIXTURES_VAR))
}

/// `<shared>/wire` when `shared` is given and holds that directory.
pub fn recorded_wire_at(shared: Option<OsString>) -> Option<PathBuf> {
    let wire = PathBuf::from(shared?).join("wire");
    wire.is_dir().then_some(wire)
}

/// The recorded fixtures, or `None` after printing one line saying that
/// `test` skipped its cross-check.
#[allow(clippy::print_stdout)] // the one line a skipped cross-check prints
pub fn recorded_wire_or_skip(test: &str) -> Option<PathBuf> {
    let dir = recorded_wire();
    if dir.is_none() {
        println!(
            "{test}: skipped the cross-check against recorded streams: \
             {SHARED_FIXTURES_VAR} names no directory holding wire/"
        );
    }
    dir
}

/// The JSON lines of a fixture file, empty lines dropped.
#[allow(clippy::disallowed_methods)] // test code reads its fixtures
pub fn fixture_lines(path: &Path) -> Vec<String> {
    let raw =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// The files of a fixture tree as `dir/file` paths relative to `root`.
#[allow(dead_code)] // only wire_fixtures.rs checks every file has a case
#[allow(clippy::disallowed_methods)] // test code lists its fixtures
pub fn fixture_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap();
        if !dir.file_type().unwrap().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).unwrap() {
            let file = file.unwrap();
            files.push(format!(
                "{}/{}",
                dir.file_name().to_string_lossy(),
                file.file_name().to_string_lossy()
            ));
        }
    }
    files.sort();
    files
}
