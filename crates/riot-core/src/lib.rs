//! # riot-core — the agent loop
//!
//! [`run_agent`] streams one turn of a session as [`AgentEvent`]s: it asks
//! the model, runs the tools the reply asks for through an injected
//! [`ToolRunner`](riot_protocol::ToolRunner), feeds the results back and goes
//! round until the model stops asking for tools — never losing a
//! `tool_result`, never looping forever on an error, and always ending with
//! exactly one `Done` (docs/design.md §5).
//!
//! What lives here: the loop as an explicit state machine ([`agent`]), the state and its
//! recovery guards ([`state`]), the pure recovery decision ([`recovery`]),
//! the one request builder ([`request`]), the loop's invariants
//! ([`invariants`], [`done_guard`]) and the interfaces of its collaborators
//! ([`deps`]). What does not: tools, permission rules, HTTP, storage, UI —
//! they are injected. This crate depends only on `riot-protocol`.
//!
//! ```
//! use futures::StreamExt;
//! use riot_core::testing::{ScriptedProvider, ScriptedTools, reply};
//! use riot_core::{AgentDeps, AgentState, NoCompaction, NoQueue, NoStopHooks, NoTranscript, run_agent};
//! use riot_protocol::*;
//! use std::sync::Arc;
//!
//! let mut script = reply::text("m", "Hello");
//! script.extend(reply::stop(StopReason::EndTurn, 10, 2));
//! let deps = AgentDeps {
//!     provider: Arc::new(ScriptedProvider::new(vec![script])),
//!     tools: Arc::new(ScriptedTools::new(Default::default())),
//!     compactor: Arc::new(NoCompaction),
//!     transcript: Arc::new(NoTranscript),
//!     hooks: Arc::new(NoStopHooks),
//!     queue: Arc::new(NoQueue),
//!     clock: Arc::new(FixedClock::new()),
//!     ids: Arc::new(SequentialIds::new()),
//! };
//! let mut state = AgentState::new(SessionId::new("s"), "m", SystemPrompt::stable("You help."));
//! let prompt = Message::user_text(MessageId::new("u1"), "hi");
//! let events: Vec<AgentEvent> = futures::executor::block_on(
//!     run_agent(&mut state, Some(prompt), &deps, CancelScope::new()).collect(),
//! );
//! assert_eq!(events.last(), Some(&AgentEvent::Done { reason: TerminalReason::Completed }));
//! ```

pub mod agent;
pub mod compaction;
pub mod context;
pub mod deps;
pub mod done_guard;
pub mod interrupted;
pub mod invariants;
pub mod recovery;
pub mod request;
pub mod side;
pub mod state;
#[cfg(feature = "testing")]
pub mod testing;

pub use agent::{compact_now, run_agent};
pub use compaction::{ContextManager, NoWorkingSet, WorkingSet};
pub use context::DEFAULT_MAX_TOKENS;
pub use deps::{
    AgentDeps, CompactError, CompactRequest, CompactTrigger, Compaction, Compactor, MessageQueue,
    NoCompaction, NoQueue, NoStopHooks, NoTranscript, StopHooks, StopVerdict, TranscriptSink,
};
pub use interrupted::INTERRUPTED_RESULT;
pub use recovery::{RecoveryDecision, RecoveryLimits, RetryPlan, attempt_recovery};
pub use request::{RetryContext, build_request};
pub use state::{AgentState, RecoveryState};

#[doc(no_inline)]
pub use riot_protocol::AgentEvent;
