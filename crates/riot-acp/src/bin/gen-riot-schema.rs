//! Writes `schemas/riot_methods.json`, the `_riot/...` methods' schema.
//!
//! Usage: `cargo run -p riot-acp --bin gen-riot-schema [OUT_DIR]`
//! (default: `schemas/` at the workspace root).

#![allow(clippy::disallowed_methods)] // a build tool writing a file
#![allow(clippy::print_stdout, clippy::print_stderr)] // command-line output

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas"));
    let path = out.join("riot_methods.json");
    let text = match serde_json::to_string_pretty(&riot_acp::methods::riot_methods_schema()) {
        Ok(text) => text + "\n",
        Err(e) => {
            eprintln!("gen-riot-schema: cannot serialize the schema: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("gen-riot-schema: cannot write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", path.display());
    ExitCode::SUCCESS
}
