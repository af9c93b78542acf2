//! # riot-store — durable sessions
//!
//! Will hold append-only JSONL transcripts and their rebuildable index
//! (ARCHITECTURE §12).
//!
//! Empty until the kernel issue lands.
