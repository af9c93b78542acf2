//! # riot-providers — model endpoints
//!
//! Will turn `riot_protocol::ModelRequest`s into HTTP for Anthropic Messages,
//! OpenAI Chat Completions (and every compatible server) and OpenAI
//! Responses, and reply bytes into `ProviderEvent`s (ARCHITECTURE §11).
//!
//! Empty until the providers issue lands.
