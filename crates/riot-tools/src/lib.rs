//! # riot-tools — built-in tools and the scheduler
//!
//! Will hold the built-in tools (Read, Write, Edit, Glob, Grep, Bash, …),
//! the registry with `builtin()` in append-only order, and the scheduler
//! (batching, order, cascade, pairing, result budgets) of ARCHITECTURE §6–§7.
//! Talks to the loop only through `riot-protocol` types.
//!
//! Empty until the core-tools issue lands.
