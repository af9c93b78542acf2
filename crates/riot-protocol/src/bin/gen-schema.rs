//! Writes `schemas/<type>.json` for every wire type (docs/testing.md L1).
//!
//! Usage: `cargo run -p riot-protocol --bin gen-schema [OUT_DIR]`
//! (default: `schemas/` at the workspace root).

#![allow(clippy::disallowed_methods)] // a build tool writing files, not a deterministic crate
#![allow(clippy::print_stdout, clippy::print_stderr)] // command-line output

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas"));
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("gen-schema: cannot create {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    for (stem, schema) in riot_protocol::schema::wire_schemas() {
        let path = out.join(format!("{stem}.json"));
        let mut text = match serde_json::to_string_pretty(&schema) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("gen-schema: cannot serialize {stem}: {e}");
                return ExitCode::FAILURE;
            }
        };
        text.push('\n');
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("gen-schema: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
