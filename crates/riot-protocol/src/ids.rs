//! Typed identifiers and the injected generator that makes them.
//!
//! Ids are opaque strings wrapped in newtypes so a `ToolUseId` can never be
//! passed where a `SessionId` is expected. They are produced by an [`IdGen`]
//! so tests get sequential, reproducible ids (docs/design.md §1.5).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The kind of id, used by [`IdGen`] as a prefix.
            pub const KIND: IdKind = $kind;

            /// Wraps an existing id (from a transcript, a provider, a client).
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            /// A fresh id from the injected generator.
            pub fn generate(ids: &dyn IdGen) -> Self {
                Self(ids.next_id($kind))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }
    };
}

/// What an id names; real generators use it as a readable prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    Session,
    Message,
    ToolUse,
    Request,
    Agent,
}

impl IdKind {
    /// Short prefix: `ses`, `msg`, `toolu`, `req`, `agt`.
    pub fn prefix(self) -> &'static str {
        match self {
            IdKind::Session => "ses",
            IdKind::Message => "msg",
            IdKind::ToolUse => "toolu",
            IdKind::Request => "req",
            IdKind::Agent => "agt",
        }
    }
}

typed_id!(
    /// One conversation with its transcript file.
    SessionId,
    IdKind::Session
);
typed_id!(
    /// One message in a conversation.
    MessageId,
    IdKind::Message
);
typed_id!(
    /// Pairs an assistant `tool_use` block with its `tool_result`.
    ToolUseId,
    IdKind::ToolUse
);
typed_id!(
    /// A pending question to the person (a permission request).
    RequestId,
    IdKind::Request
);
typed_id!(
    /// A subagent running under a parent session.
    AgentId,
    IdKind::Agent
);

/// Produces ids. Injected so tests are reproducible; the random
/// implementation lives in `riot-runtime`.
pub trait IdGen: Send + Sync + fmt::Debug {
    /// A new, unique id of the given kind.
    fn next_id(&self, kind: IdKind) -> String;
}

/// Deterministic ids `<prefix>_<n>` counting from 1, shared across kinds so
/// the order of generation is visible in test output.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl SequentialIds {
    /// A generator whose first id ends in `_1`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl IdGen for SequentialIds {
    fn next_id(&self, kind: IdKind) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}_{n}", kind.prefix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ids_count_across_kinds() {
        let ids = SequentialIds::new();
        assert_eq!(SessionId::generate(&ids).as_str(), "ses_1");
        assert_eq!(ToolUseId::generate(&ids).as_str(), "toolu_2");
        assert_eq!(MessageId::generate(&ids).as_str(), "msg_3");
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = ToolUseId::new("toolu_01");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"toolu_01\"");
    }
}
