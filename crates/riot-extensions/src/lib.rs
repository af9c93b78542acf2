//! # riot-extensions — what a person adds to Riot from files
//!
//! Skills ([`skills`]), slash commands ([`commands`]), hooks ([`hooks`])
//! and memory files ([`memory`]), found in the project, the user's Riot
//! home and the places other agents keep them ([`extension_files`]), with
//! their shared front matter ([`frontmatter`]).
//!
//! Each module turns files into values the kernel puts into a session:
//! tool descriptions, prompt text, user blocks and hook runners. A
//! project's files are read only when the project is trusted, and a bad
//! file is skipped with a notice naming it: the session goes on. Files and
//! processes come in through the capability traits of `riot-protocol`.

pub mod commands;
pub mod extension_files;
pub mod frontmatter;
pub mod hooks;
pub mod memory;
pub mod skills;
