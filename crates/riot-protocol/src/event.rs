//! The event stream of a session (docs/design.md §1.1, §4).
//!
//! Everything a session produces is an [`AgentEvent`] on one stream; faces,
//! the transcript store and tests are consumers. `Done` is emitted exactly
//! once and last on every path (INV-4).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{MessageId, RequestId, ToolUseId};
use crate::message::Message;
use crate::permission::{PermissionOutcome, PermissionRequestDetail};
use crate::ui::ProgressPayload;

/// One event of a session's stream. Serialized internally tagged with a
/// snake_case `"type"` (docs/interfaces.md: `--output-format events`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A model request is about to be sent. `after` says why the loop went
    /// round again (None for the first request of a turn).
    RequestStart {
        turn: u32,
        model: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<Transition>,
    },
    /// Streaming text, thinking or tool-input fragments.
    Delta { delta: StreamDelta },
    /// A finished message (assistant reply, tool results, a system note).
    Message { message: Message },
    /// A tool call passed validation and permission and is starting.
    ToolStarted {
        tool_use_id: ToolUseId,
        name: String,
        describe: String,
    },
    /// Live progress of a running tool.
    Progress {
        tool_use_id: ToolUseId,
        payload: ProgressPayload,
    },
    /// The person is asked to allow a call.
    PermissionRequest {
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
    },
    /// A question was answered, timed out or cancelled; faces close the dialog.
    PermissionResolved {
        request_id: RequestId,
        outcome: PermissionOutcome,
    },
    /// Context is being compacted.
    Compacting { strategy: CompactionStrategy },
    /// Context was compacted; token estimates before and after.
    Compacted {
        before: u64,
        after: u64,
        strategy: CompactionStrategy,
    },
    /// The prompt was stopped before anything was produced and removed from
    /// history.
    PromptWithdrawn { message_id: MessageId },
    /// A request failed transiently and will be retried.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// Token usage of one model request.
    Usage { model: String, usage: Usage },
    /// The turn ended. Always the last event.
    Done { reason: TerminalReason },
}

/// A fragment of a streaming reply, for live display only; the finished
/// blocks arrive in the `Message` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamDelta {
    Text {
        text: String,
    },
    Thinking {
        text: String,
    },
    /// Partial JSON of a tool call's input.
    ToolInput {
        tool_use_id: ToolUseId,
        name: String,
        partial_json: String,
    },
}

/// Why the loop went around again (docs/design.md §4, §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    /// Tool results were appended; the model continues.
    NextTurn,
    /// The context overflowed; it was compacted and the request is retried.
    ReactiveCompactRetry,
    /// The reply hit the output-token limit; retried with a higher limit.
    OutputLimitEscalation,
    /// The reply hit the limit again; the model is asked to continue.
    OutputLimitContinue,
    /// A Stop hook blocked the end of the turn and sent the loop round.
    StopHookRetry,
    /// Repeated overloads switched to the fallback model.
    FallbackModel,
}

/// Why a turn ended. The one mapping to exit codes and ACP stop reasons is
/// [`TerminalReason::exit_code`] and [`TerminalReason::acp_stop_reason`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TerminalReason {
    Completed,
    MaxTurns,
    Aborted { by: AbortSource },
    StopHookPrevented,
    Refusal,
    Error { error: AgentError },
}

impl TerminalReason {
    /// The snake_case name used in `riot exec` results.
    pub fn name(&self) -> &'static str {
        match self {
            TerminalReason::Completed => "completed",
            TerminalReason::MaxTurns => "max_turns",
            TerminalReason::Aborted { .. } => "aborted",
            TerminalReason::StopHookPrevented => "stop_hook_prevented",
            TerminalReason::Refusal => "refusal",
            TerminalReason::Error { .. } => "error",
        }
    }

    /// `riot exec`'s exit code (docs/design.md §4 table).
    pub fn exit_code(&self) -> i32 {
        match self {
            TerminalReason::Completed | TerminalReason::StopHookPrevented => 0,
            TerminalReason::MaxTurns => 3,
            TerminalReason::Aborted { .. } => 130,
            TerminalReason::Error { error } if error.kind == ErrorKind::Usage => 2,
            TerminalReason::Refusal | TerminalReason::Error { .. } => 1,
        }
    }

    /// Whether results report `is_error`.
    pub fn is_error(&self) -> bool {
        self.exit_code() != 0
    }

    /// ACP `stopReason`; `None` means the prompt request fails with a
    /// JSON-RPC error instead.
    pub fn acp_stop_reason(&self) -> Option<&'static str> {
        match self {
            TerminalReason::Completed | TerminalReason::StopHookPrevented => Some("end_turn"),
            TerminalReason::MaxTurns => Some("max_turn_requests"),
            TerminalReason::Aborted { .. } => Some("cancelled"),
            TerminalReason::Refusal => Some("refusal"),
            TerminalReason::Error { error } if error.kind == ErrorKind::OutputLimit => {
                Some("max_tokens")
            }
            TerminalReason::Error { .. } => None,
        }
    }
}

/// Who stopped the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AbortSource {
    /// The person pressed stop (or sent SIGINT).
    User,
    /// The person sent a message with "stop and send".
    UserInterjection,
    /// The kernel is shutting down.
    Shutdown,
}

/// An error that ended a turn, already worded for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentError {
    pub kind: ErrorKind,
    pub message: String,
}

/// The class of a turn-ending error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The reply hit the output-token limit and could not be recovered.
    OutputLimit,
    /// The context is too large even after compaction.
    ContextOverflow,
    Auth,
    RateLimit,
    Payment,
    Overloaded,
    InvalidRequest,
    /// What the person or a client asked for cannot be done as written:
    /// an unknown slash command, a command's bad argument. Their mistake,
    /// not Riot's or the endpoint's: exit code 2, and over ACP the prompt
    /// request fails with invalid params (-32602).
    Usage,
    Network,
    /// A bug in Riot (a panic, a broken invariant in release builds).
    Internal,
    Other,
}

/// How context was reduced (docs/design.md §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStrategy {
    /// Old tool results replaced by placeholders.
    ClearToolResults,
    /// History summarized by the model.
    Summary,
}

/// Token counts of a model request. `input_tokens` excludes tokens read
/// from or written to the cache (docs/interfaces.md: the `usage` object).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Web searches the provider ran for the request (its server-side
    /// web search), priced per search.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_searches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Merges a later cumulative report of the same request: each field
    /// takes the later value unless it is zero, so a final event that omits
    /// a count never erases it (docs/design.md §11).
    pub fn merge_cumulative(&mut self, later: &Usage) {
        fn keep(current: &mut u64, later: u64) {
            if later != 0 {
                *current = later;
            }
        }
        keep(&mut self.input_tokens, later.input_tokens);
        keep(&mut self.output_tokens, later.output_tokens);
        keep(&mut self.cache_read_tokens, later.cache_read_tokens);
        keep(&mut self.cache_write_tokens, later.cache_write_tokens);
        keep(&mut self.web_searches, later.web_searches);
    }

    /// Adds another request's usage (totals across requests).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.web_searches += other.web_searches;
    }

    /// What was used after `earlier`, a reading of the same running total.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            cache_read_tokens: self
                .cache_read_tokens
                .saturating_sub(earlier.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_sub(earlier.cache_write_tokens),
            web_searches: self.web_searches.saturating_sub(earlier.web_searches),
        }
    }

    /// All input tokens of the request, cached or not.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_usage_never_overwrites_with_zero() {
        let mut usage = Usage {
            input_tokens: 120,
            output_tokens: 3,
            cache_read_tokens: 900,
            cache_write_tokens: 0,
            web_searches: 0,
        };
        usage.merge_cumulative(&Usage {
            input_tokens: 0,
            output_tokens: 57,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            web_searches: 0,
        });
        assert_eq!(
            usage,
            Usage {
                input_tokens: 120,
                output_tokens: 57,
                cache_read_tokens: 900,
                cache_write_tokens: 0,
                web_searches: 0,
            }
        );
        assert_eq!(usage.total_input(), 1020);
    }

    #[test]
    fn terminal_reasons_map_to_exit_codes_and_acp() {
        let output_limit = TerminalReason::Error {
            error: AgentError {
                kind: ErrorKind::OutputLimit,
                message: "limit".into(),
            },
        };
        let auth = TerminalReason::Error {
            error: AgentError {
                kind: ErrorKind::Auth,
                message: "bad key".into(),
            },
        };
        let cases = [
            (TerminalReason::Completed, 0, false, Some("end_turn")),
            (
                TerminalReason::StopHookPrevented,
                0,
                false,
                Some("end_turn"),
            ),
            (TerminalReason::MaxTurns, 3, true, Some("max_turn_requests")),
            (
                TerminalReason::Aborted {
                    by: AbortSource::User,
                },
                130,
                true,
                Some("cancelled"),
            ),
            (TerminalReason::Refusal, 1, true, Some("refusal")),
            (output_limit, 1, true, Some("max_tokens")),
            (auth, 1, true, None),
        ];
        for (reason, code, is_error, acp) in cases {
            assert_eq!(reason.exit_code(), code, "{reason:?}");
            assert_eq!(reason.is_error(), is_error, "{reason:?}");
            assert_eq!(reason.acp_stop_reason(), acp, "{reason:?}");
        }
    }
}
