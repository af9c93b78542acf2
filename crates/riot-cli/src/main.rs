//! The `riot` binary. Parses the command line of INTERFACES.md and hands
//! each command to the kernel. Commands whose capability is not built yet
//! exit 2 with "not available yet: <what>" — never a fake success.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line face

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};

/// Exit code for usage and configuration errors (INTERFACES: exit codes).
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let what = match &cli.command {
        None => "the terminal UI (use `riot exec` once it lands)",
        Some(Command::Exec(_)) => "`riot exec` (the kernel issue)",
        Some(Command::Acp(_)) => "`riot acp` (the ACP issue)",
        Some(Command::Serve(_)) => "`riot serve` (the ACP issue)",
        Some(Command::Sessions(_)) => "`riot sessions` (the kernel issue)",
        Some(Command::Tools(_)) => "`riot tools` (the core-tools issue)",
        Some(Command::Mcp(_)) => "`riot mcp` (the MCP issue)",
        Some(Command::Permissions(_)) => "`riot permissions` (the permissions issue)",
        Some(Command::Config(_)) => "`riot config` (the kernel issue)",
    };
    eprintln!("riot: not available yet: {what}");
    ExitCode::from(EXIT_USAGE)
}
