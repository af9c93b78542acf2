//! # riot-kernel — the one API every face drives
//!
//! Will hold the session manager, configuration layering, system prompt
//! assembly, memory files, skills, slash commands, hooks, subagents and the
//! ACP mapping (ARCHITECTURE §2, §13).
//!
//! Empty until the kernel issue lands.
