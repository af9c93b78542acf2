//! # riot-runtime — the real world behind the capability traits
//!
//! Will hold the real file system (atomic writes), process runner (process
//! groups, sandbox), HTTP and clock behind the traits of `riot-protocol`.
//! The only library crate allowed the raw non-deterministic APIs.
//!
//! Empty until the kernel issue lands.
