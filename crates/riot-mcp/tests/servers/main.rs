//! riot-mcp against real MCP servers from npm (`tests/mcp-servers`,
//! installed by `.ci/run`; missing under `CI=true` is a failure, elsewhere
//! a loudly skipped test). Every test stops what it starts and checks, by
//! process group, that nothing is left running.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]
#![allow(clippy::disallowed_methods)] // tests poll with real sleeps, read /proc and spawn `kill`

mod everything;
mod lifecycle;
mod permissions;
mod support;
