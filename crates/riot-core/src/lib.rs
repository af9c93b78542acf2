//! # riot-core — the agent loop
//!
//! Will hold `run_agent`, the stream state machine of ARCHITECTURE §5, its
//! recovery decisions, the loop invariants (INV-1…INV-9) and the compaction
//! pipeline. Depends only on `riot-protocol`; no UI or host crate.
//!
//! Empty until the agent-loop issue lands.
