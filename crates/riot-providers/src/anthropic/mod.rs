//! The anthropic wire format: request builder and stream decoder.

pub mod decode;
pub mod request;
