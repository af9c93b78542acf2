//! The Node side of the tests that drive Riot with the official ACP
//! TypeScript SDK (`tests/acp-client`, installed by `.ci/run` with
//! `npm ci --prefix tests/acp-client`): where it lives, and whether it can
//! run here. Under CI (`CI` set) it must: a missing piece fails the test;
//! elsewhere the test is skipped with the reason printed.

#![allow(clippy::print_stderr)] // the skip reason, for the record

use std::path::{Path, PathBuf};
use std::process::Stdio;

/// `tests/acp-client` at the repository root.
pub fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp-client")
}

/// Why the Node side cannot run here, if it cannot.
pub fn missing_prerequisite() -> Option<String> {
    let node = std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !node.is_ok_and(|s| s.success()) {
        return Some("`node` is not on PATH (install Node.js 20 or later)".into());
    }
    for package in ["@agentclientprotocol/sdk", "ajv"] {
        let installed = client_dir().join(format!("node_modules/{package}/package.json"));
        if !installed.is_file() {
            return Some(format!(
                "{package} is not installed in {} (run `npm ci --prefix tests/acp-client`)",
                client_dir().display()
            ));
        }
    }
    None
}

/// True when `test` should run; panics under CI when it cannot.
pub fn prerequisites_met(test: &str) -> bool {
    let Some(reason) = missing_prerequisite() else {
        return true;
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {reason}; CI must run this test"
    );
    eprintln!("SKIPPED {test}: {reason}");
    false
}
