//! The result object of `riot exec` (docs/interfaces.md): Claude Code's
//! result shape — `subtype`, `num_turns`, `duration_api_ms`,
//! `total_cost_usd`, `usage` in Anthropic's names, `permission_denials` —
//! with Riot's `reason` and `side_usage` beside it. It is the whole output
//! of `--output-format json` and the last line of `stream-json` and
//! `events` (after each turn, with `--input-format stream-json`).
//!
//! [`Tally`] reads one turn's events as they pass; [`Tally::result`]
//! writes the object.

use std::collections::HashMap;

use riot_protocol::{
    AgentEvent, AssistantBlock, Message, TerminalReason, ToolResultContent, ToolUseId, Usage,
    UserBlock,
};
use serde_json::{Value, json};

use super::claude::usage_json;
use super::denials::classify;

/// One call the permission checks refused.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionDenial {
    pub tool_name: String,
    pub tool_use_id: ToolUseId,
    pub tool_input: Value,
}

/// What one turn's events add up to.
#[derive(Debug, Default)]
pub struct Tally {
    /// Main-loop model requests.
    pub requests: u32,
    /// Their usage, summed.
    pub usage: Usage,
    /// The last non-empty text the model wrote.
    pub final_text: String,
    /// How the turn ended (`None` until `Done`).
    pub reason: Option<TerminalReason>,
    pub denials: Vec<PermissionDenial>,
    /// Milliseconds spent waiting for model replies.
    pub api_ms: u64,
    /// When the request in flight started.
    request_started: Option<u64>,
    /// The calls of the replies seen, by id: tool name and input.
    calls: HashMap<ToolUseId, (String, Value)>,
}

/// What the result object reports beyond the turn's own events.
#[derive(Debug, Clone)]
pub struct ResultContext<'a> {
    pub session_id: &'a str,
    /// A fresh id for the line (Claude Code's `uuid`).
    pub uuid: String,
    /// Milliseconds from the start of the turn to its end.
    pub duration_ms: u64,
    /// The session's cost so far, `None` when a price is unknown.
    pub cost_usd: Option<f64>,
    /// Side requests' usage (compaction summaries, the auto-mode
    /// classifier).
    pub side_usage: Usage,
    /// `--max-turns`, named in the error of a run that reached it.
    pub max_turns: u32,
}

impl Tally {
    /// Takes one event of the turn, seen at `now_ms` (the injected clock).
    pub fn event(&mut self, event: &AgentEvent, now_ms: u64) {
        match event {
            AgentEvent::RequestStart { .. } => {
                self.end_request(now_ms);
                self.requests += 1;
                self.request_started = Some(now_ms);
            }
            AgentEvent::Usage { usage, .. } => {
                self.end_request(now_ms);
                self.usage.add(usage);
            }
            AgentEvent::Message {
                message: Message::Assistant(a),
            } => {
                self.end_request(now_ms);
                let text = a.text();
                if !text.trim().is_empty() {
                    self.final_text = text;
                }
                for block in &a.content {
                    if let AssistantBlock::ToolUse { id, name, input } = block {
                        self.calls.insert(id.clone(), (name.clone(), input.clone()));
                    }
                }
            }
            AgentEvent::Message {
                message: Message::User(u),
            } => {
                for block in &u.content {
                    let UserBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error: true,
                        ..
                    } = block
                    else {
                        continue;
                    };
                    let text = content.iter().find_map(|c| match c {
                        ToolResultContent::Text { text }
                        | ToolResultContent::Document { text, .. } => Some(text.as_str()),
                        ToolResultContent::Image { .. } => None,
                    });
                    if text.and_then(classify).is_none() {
                        continue;
                    }
                    let (tool_name, tool_input) = self
                        .calls
                        .get(tool_use_id)
                        .cloned()
                        .unwrap_or_else(|| (String::new(), json!({})));
                    self.denials.push(PermissionDenial {
                        tool_name,
                        tool_use_id: tool_use_id.clone(),
                        tool_input,
                    });
                }
            }
            AgentEvent::Done { reason } => {
                self.end_request(now_ms);
                self.reason = Some(reason.clone());
            }
            _ => {}
        }
    }

    fn end_request(&mut self, now_ms: u64) {
        if let Some(started) = self.request_started.take() {
            self.api_ms += now_ms.saturating_sub(started);
        }
    }

    /// How the turn ended; a stream that stopped without `Done` is an
    /// internal error.
    pub fn reason(&self) -> TerminalReason {
        self.reason.clone().unwrap_or(TerminalReason::Error {
            error: riot_protocol::AgentError {
                kind: riot_protocol::ErrorKind::Internal,
                message: "the turn ended without a terminal reason".into(),
            },
        })
    }

    /// The result object.
    pub fn result(&self, cx: &ResultContext<'_>) -> Value {
        let reason = self.reason();
        let (subtype, error) = match &reason {
            TerminalReason::Completed | TerminalReason::StopHookPrevented => ("success", None),
            TerminalReason::MaxTurns => (
                "error_max_turns",
                Some(format!(
                    "stopped after the maximum number of turns ({}); raise --max-turns to let it go on",
                    cx.max_turns
                )),
            ),
            TerminalReason::Aborted { .. } => (
                "error_during_execution",
                Some("interrupted; the session was saved".to_owned()),
            ),
            TerminalReason::Refusal => (
                "error_during_execution",
                Some("the model refused to answer".to_owned()),
            ),
            TerminalReason::Error { error } => {
                ("error_during_execution", Some(error.message.clone()))
            }
        };
        let denials: Vec<Value> = self
            .denials
            .iter()
            .map(|d| {
                json!({
                    "tool_name": d.tool_name,
                    "tool_use_id": d.tool_use_id,
                    "tool_input": d.tool_input,
                })
            })
            .collect();
        let mut result = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": reason.is_error(),
            "result": self.final_text,
            "session_id": cx.session_id,
            "uuid": cx.uuid,
            "num_turns": self.requests,
            "duration_ms": cx.duration_ms,
            "duration_api_ms": self.api_ms,
            "total_cost_usd": cx.cost_usd,
            "usage": usage_json(&self.usage),
            "permission_denials": denials,
            "reason": reason.name(),
            "side_usage": usage_json(&cx.side_usage),
        });
        if let Some(error) = error {
            result["errors"] = json!([error]);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use riot_protocol::{AgentError, AssistantMessage, ErrorKind, MessageId, UserMessage};

    use super::*;

    fn cx() -> ResultContext<'static> {
        ResultContext {
            session_id: "ses_1",
            uuid: "msg_9".into(),
            duration_ms: 50,
            cost_usd: None,
            side_usage: Usage::default(),
            max_turns: 4,
        }
    }

    fn call(id: &str, name: &str, input: Value) -> AgentEvent {
        AgentEvent::Message {
            message: Message::Assistant(AssistantMessage {
                id: MessageId::new("msg_a"),
                content: vec![AssistantBlock::ToolUse {
                    id: ToolUseId::new(id),
                    name: name.into(),
                    input,
                }],
                model: "m".into(),
                stop_reason: None,
                interrupted: false,
            }),
        }
    }

    fn result(id: &str, text: &str, is_error: bool) -> AgentEvent {
        AgentEvent::Message {
            message: Message::User(UserMessage {
                id: MessageId::new("msg_u"),
                content: vec![UserBlock::ToolResult {
                    tool_use_id: ToolUseId::new(id),
                    content: vec![ToolResultContent::text(text)],
                    is_error,
                    ui: None,
                }],
                origin: riot_protocol::MessageOrigin::ToolResults,
            }),
        }
    }

    fn start() -> AgentEvent {
        AgentEvent::RequestStart {
            turn: 1,
            model: "m".into(),
            after: None,
        }
    }

    #[test]
    fn requests_usage_api_time_and_denials_add_up() {
        let mut tally = Tally::default();
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 3,
            cache_write_tokens: 2,
            web_searches: 0,
        };
        let denied = "Permission to run Bash (rm -rf x) was denied: it matches the deny rule Bash(rm *). Do not retry it.";
        let events = [
            (start(), 100),
            (
                AgentEvent::Usage {
                    model: "m".into(),
                    usage,
                },
                130,
            ),
            (call("toolu_1", "Bash", json!({"command": "rm -rf x"})), 131),
            (result("toolu_1", denied, true), 140),
            (start(), 150),
            (
                AgentEvent::Usage {
                    model: "m".into(),
                    usage,
                },
                170,
            ),
            (
                AgentEvent::Done {
                    reason: TerminalReason::Completed,
                },
                171,
            ),
        ];
        for (event, at) in &events {
            tally.event(event, *at);
        }
        let out = tally.result(&cx());
        assert_eq!(out["subtype"], "success");
        assert_eq!(out["is_error"], false);
        assert_eq!(out["num_turns"], 2);
        assert_eq!(out["duration_api_ms"], 50, "30 + 20 ms of the two requests");
        assert_eq!(
            out["usage"],
            json!({"input_tokens": 20, "output_tokens": 10,
                   "cache_creation_input_tokens": 4, "cache_read_input_tokens": 6})
        );
        assert_eq!(
            out["permission_denials"],
            json!([{"tool_name": "Bash", "tool_use_id": "toolu_1",
                    "tool_input": {"command": "rm -rf x"}}])
        );
        assert_eq!(out["total_cost_usd"], Value::Null);
        assert!(out.get("errors").is_none());
    }

    #[test]
    fn a_failed_tool_call_is_not_a_denial() {
        let mut tally = Tally::default();
        tally.event(&call("toolu_1", "Bash", json!({"command": "false"})), 0);
        tally.event(&result("toolu_1", "exit code 1", true), 0);
        assert!(tally.denials.is_empty());
    }

    #[test]
    fn each_terminal_reason_has_its_subtype_and_error() {
        let cases = [
            (TerminalReason::MaxTurns, "error_max_turns", "(4)"),
            (
                TerminalReason::Error {
                    error: AgentError {
                        kind: ErrorKind::InvalidRequest,
                        message: "the server said no".into(),
                    },
                },
                "error_during_execution",
                "the server said no",
            ),
            (
                TerminalReason::Aborted {
                    by: riot_protocol::AbortSource::User,
                },
                "error_during_execution",
                "interrupted",
            ),
        ];
        for (reason, subtype, error) in cases {
            let mut tally = Tally::default();
            tally.event(&AgentEvent::Done { reason }, 0);
            let out = tally.result(&cx());
            assert_eq!(out["subtype"], subtype);
            assert_eq!(out["is_error"], true);
            let errors = out["errors"].as_array().unwrap();
            assert!(errors[0].as_str().unwrap().contains(error), "{out}");
        }
    }
}
