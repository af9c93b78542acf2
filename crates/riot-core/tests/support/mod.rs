//! Shared harness for the loop's golden, fault and chaos tests: turns a
//! case description into scripted doubles, runs one turn, and collects the
//! events.

#![allow(dead_code)] // each test binary uses a different part

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use riot_core::testing::{
    FakeCompactor, RecordingTranscript, ScriptItem, ScriptedProvider, ScriptedStopHooks,
    ScriptedTools, ToolBehavior, VecQueue,
};
use riot_core::{AgentDeps, AgentState, StopVerdict, run_agent};
use riot_protocol::*;
use serde::Deserialize;
use serde_json::Value;

pub const MODEL: &str = "test-model";

/// A case as written in `case.json`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub description: String,
    pub prompt: String,
    #[serde(default)]
    pub max_turns: Option<u32>,
    #[serde(default)]
    pub tools: BTreeMap<String, ToolSpecJson>,
    /// Cancel the turn after this many events were received.
    #[serde(default)]
    pub cancel_after_events: Option<usize>,
    /// Cancel the turn right after the first event of this `type`.
    #[serde(default)]
    pub cancel_on: Option<String>,
    /// Messages the person queues after N events.
    #[serde(default)]
    pub queue: Vec<Queued>,
    #[serde(default)]
    pub stop_hooks: Vec<StopJson>,
    #[serde(default)]
    pub fallback_model: Option<String>,
    #[serde(default)]
    pub compactor: CompactorJson,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Press stop when a stream stalls or a tool hangs (chaos runs).
    #[serde(default)]
    pub stop_when_stalled: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolSpecJson {
    Ok(String),
    Fail(String),
    Panic,
    Hang,
    Ask { allow: bool, result: String },
    Progress { lines: Vec<String>, result: String },
}

impl From<ToolSpecJson> for ToolBehavior {
    fn from(t: ToolSpecJson) -> Self {
        match t {
            ToolSpecJson::Ok(s) => ToolBehavior::Ok(s),
            ToolSpecJson::Fail(s) => ToolBehavior::Fail(s),
            ToolSpecJson::Panic => ToolBehavior::Panic,
            ToolSpecJson::Hang => ToolBehavior::Hang,
            ToolSpecJson::Ask { allow, result } => ToolBehavior::Ask { allow, result },
            ToolSpecJson::Progress { lines, result } => ToolBehavior::Progress { lines, result },
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queued {
    /// Queue right after the first event of this `type`.
    pub on: String,
    pub text: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum StopJson {
    Allow,
    Continue(String),
    Prevent(String),
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CompactorJson {
    #[serde(default)]
    pub proactive: bool,
    #[serde(default)]
    pub failures: u32,
    #[serde(default)]
    pub keep: usize,
}

/// One item of a scripted reply in `responses/NNN.json`.
pub fn script_item(item: &Value) -> Vec<ScriptItem> {
    let obj = item.as_object().expect("response items are objects");
    let (key, v) = obj.iter().next().expect("one key per item");
    let ev = ScriptItem::Event;
    match key.as_str() {
        "text" => {
            let text = v.as_str().unwrap();
            let mut items: Vec<ScriptItem> = text
                .split('|')
                .map(|p| ev(ProviderEvent::Delta(StreamDelta::Text { text: p.into() })))
                .collect();
            items.push(ev(ProviderEvent::Block(AssistantBlock::Text {
                text: text.replace('|', ""),
            })));
            items
        }
        "partial_text" => vec![ev(ProviderEvent::Delta(StreamDelta::Text {
            text: v.as_str().unwrap().into(),
        }))],
        "thinking_delta" => vec![ev(ProviderEvent::Delta(StreamDelta::Thinking {
            text: v.as_str().unwrap().into(),
        }))],
        "thinking" => vec![
            ev(ProviderEvent::Delta(StreamDelta::Thinking {
                text: v["text"].as_str().unwrap().into(),
            })),
            ev(ProviderEvent::Block(AssistantBlock::Thinking {
                text: v["text"].as_str().unwrap().into(),
                signature: v["signature"].as_str().map(str::to_owned),
                model: v["model"].as_str().unwrap_or(MODEL).into(),
                item_id: None,
            })),
        ],
        "tool_use" => {
            let id = ToolUseId::new(v["id"].as_str().unwrap());
            let name = v["name"].as_str().unwrap().to_owned();
            vec![
                ev(ProviderEvent::Delta(StreamDelta::ToolInput {
                    tool_use_id: id.clone(),
                    name: name.clone(),
                    partial_json: v["input"].to_string(),
                })),
                ev(ProviderEvent::Block(AssistantBlock::ToolUse {
                    id,
                    name,
                    input: v["input"].clone(),
                })),
            ]
        }
        "usage" => vec![ev(ProviderEvent::Usage(
            serde_json::from_value(v.clone()).unwrap(),
        ))],
        "stop" => vec![ev(ProviderEvent::Stop {
            reason: serde_json::from_value(v.clone()).unwrap(),
        })],
        "retrying" => vec![ev(ProviderEvent::Retrying {
            attempt: v["attempt"].as_u64().unwrap() as u32,
            delay_ms: v["delay_ms"].as_u64().unwrap(),
            kind: serde_json::from_value(v["kind"].clone()).unwrap(),
            reason: v["reason"].as_str().unwrap().into(),
        })],
        "error" => {
            let mut e = ProviderError::new(
                serde_json::from_value(v["kind"].clone()).unwrap(),
                v["message"].as_str().unwrap(),
            );
            e.status = v["status"].as_u64().map(|s| s as u16);
            vec![ScriptItem::Error(e)]
        }
        "stall" => vec![ScriptItem::Stall],
        other => panic!("unknown response item `{other}`"),
    }
}

/// What a run produced.
pub struct Run {
    pub events: Vec<AgentEvent>,
    pub state: AgentState,
    pub provider: Arc<ScriptedProvider>,
    pub tools: Arc<ScriptedTools>,
    pub transcript: Arc<RecordingTranscript>,
    pub hooks: Arc<ScriptedStopHooks>,
    pub compactor: Arc<FakeCompactor>,
}

/// Runs one turn of `case` against `responses` (one script per request).
pub async fn run_case(case: &Case, responses: Vec<Vec<ScriptItem>>) -> Run {
    let cancel = CancelScope::new();
    let mut provider = ScriptedProvider::new(responses);
    let mut tools = ScriptedTools::new(
        case.tools
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect(),
    );
    if case.stop_when_stalled {
        let stop = cancel.clone();
        let hook: riot_core::testing::StallHook = Arc::new(move || stop.cancel(CancelReason::User));
        provider = provider.with_stall_hook(hook.clone());
        tools = tools.with_hang_hook(hook);
    }
    let provider = Arc::new(provider);
    let tools = Arc::new(tools);
    let transcript = Arc::new(RecordingTranscript::default());
    let hooks = Arc::new(ScriptedStopHooks::new(
        case.stop_hooks
            .iter()
            .map(|s| match s {
                StopJson::Allow => StopVerdict::Allow,
                StopJson::Continue(r) => StopVerdict::Continue { reason: r.clone() },
                StopJson::Prevent(r) => StopVerdict::Prevent { reason: r.clone() },
            })
            .collect(),
    ));
    let compactor = Arc::new(FakeCompactor {
        proactive: case.compactor.proactive,
        failures: Mutex::new(case.compactor.failures),
        keep: case.compactor.keep,
        seen: Mutex::new(Vec::new()),
    });
    let queue = VecQueue::default();
    let ids = Arc::new(SequentialIds::new());
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: tools.clone(),
        compactor: compactor.clone(),
        transcript: transcript.clone(),
        hooks: hooks.clone(),
        queue: Arc::new(queue.clone()),
        clock: Arc::new(FixedClock::new()),
        ids: ids.clone(),
    };
    let mut state = AgentState::new(
        SessionId::new("ses_test"),
        MODEL,
        SystemPrompt::stable("You are a test agent."),
    );
    state.tools = riot_protocol::ToolRunner::specs(tools.as_ref());
    state.fallback_model = case.fallback_model.clone();
    if let Some(n) = case.max_turns {
        state.max_turns = n;
    }
    if let Some(n) = case.max_tokens {
        state.max_tokens = n;
    }
    let prompt = Message::user_text(MessageId::new("msg_prompt"), case.prompt.clone());
    let mut events = Vec::new();
    {
        let mut stream = std::pin::pin!(run_agent(&mut state, Some(prompt), &deps, cancel.clone()));
        let mut fired: Vec<String> = Vec::new();
        while let Some(event) = stream.next().await {
            let kind = serde_json::to_value(&event).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned();
            let first_of_kind = !fired.contains(&kind);
            fired.push(kind.clone());
            events.push(event);
            for (i, q) in case.queue.iter().enumerate() {
                if first_of_kind && q.on == kind {
                    queue.push(Message::user_text(
                        MessageId::new(format!("msg_queued_{i}")),
                        q.text.clone(),
                    ));
                }
            }
            let cancel_now = case.cancel_after_events == Some(events.len())
                || (first_of_kind && case.cancel_on.as_deref() == Some(kind.as_str()));
            if cancel_now {
                cancel.cancel(CancelReason::User);
            }
        }
    }
    Run {
        events,
        state,
        provider,
        tools,
        transcript,
        hooks,
        compactor,
    }
}

/// One line per event, for aligned diffs.
pub fn summarize(event: &AgentEvent) -> String {
    match event {
        AgentEvent::RequestStart { turn, model, after } => format!(
            "request_start turn={turn} model={model}{}",
            after
                .map(|a| format!(
                    " after={}",
                    serde_json::to_value(a).unwrap().as_str().unwrap()
                ))
                .unwrap_or_default()
        ),
        AgentEvent::Delta { delta } => format!("delta {delta:?}"),
        AgentEvent::Message { message } => match message {
            Message::User(u) => {
                let parts: Vec<String> = u
                    .content
                    .iter()
                    .map(|b| match b {
                        UserBlock::Text { text } => format!("text {}", clip(text)),
                        UserBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                            ..
                        } => format!(
                            "result {tool_use_id}{} {}",
                            if *is_error { " ERR" } else { "" },
                            clip(&content_text(content))
                        ),
                        UserBlock::Image { .. } => "image".into(),
                        UserBlock::Attachment { title, .. } => format!("attachment {title}"),
                    })
                    .collect();
                format!("message user/{:?}: {}", u.origin, parts.join(" | "))
            }
            Message::Assistant(a) => {
                let parts: Vec<String> = a
                    .content
                    .iter()
                    .map(|b| match b {
                        AssistantBlock::Text { text } => format!("text {}", clip(text)),
                        AssistantBlock::Thinking { model, .. } => format!("thinking({model})"),
                        AssistantBlock::RedactedThinking { .. } => "redacted".into(),
                        AssistantBlock::ToolUse { id, name, .. } => format!("tool_use {id} {name}"),
                        AssistantBlock::WebSearch { query, .. } => format!("web_search {query}"),
                    })
                    .collect();
                format!(
                    "message assistant{}: {}",
                    if a.interrupted { " (interrupted)" } else { "" },
                    parts.join(" | ")
                )
            }
            Message::System(s) => format!("message system/{:?}: {}", s.level, clip(&s.text)),
        },
        AgentEvent::ToolStarted {
            tool_use_id, name, ..
        } => format!("tool_started {tool_use_id} {name}"),
        AgentEvent::Progress { tool_use_id, .. } => format!("progress {tool_use_id}"),
        AgentEvent::PermissionRequest { request_id, detail } => {
            format!("permission_request {request_id} {}", detail.tool_name)
        }
        AgentEvent::PermissionResolved {
            request_id,
            outcome,
        } => {
            format!("permission_resolved {request_id} {outcome:?}")
        }
        AgentEvent::Compacting { strategy } => format!("compacting {strategy:?}"),
        AgentEvent::Compacted {
            before,
            after,
            strategy,
        } => {
            format!("compacted {before}->{after} {strategy:?}")
        }
        AgentEvent::PromptWithdrawn { message_id } => format!("prompt_withdrawn {message_id}"),
        AgentEvent::Retrying {
            attempt, delay_ms, ..
        } => format!("retrying #{attempt} {delay_ms}ms"),
        AgentEvent::Usage { usage, .. } => {
            format!(
                "usage in={} out={}",
                usage.input_tokens, usage.output_tokens
            )
        }
        AgentEvent::Done { reason } => format!("done {}", serde_json::to_string(reason).unwrap()),
    }
}

fn content_text(content: &[ToolResultContent]) -> String {
    content
        .iter()
        .map(|c| match c {
            ToolResultContent::Text { text } => text.as_str(),
            ToolResultContent::Image { .. } => "[image]",
            ToolResultContent::Document { .. } => "[document]",
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn clip(s: &str) -> String {
    let one_line = s.replace('\n', "⏎");
    if one_line.chars().count() > 48 {
        format!("{:?}…", one_line.chars().take(48).collect::<String>())
    } else {
        format!("{one_line:?}")
    }
}

/// Every `tool_use` in `history` is answered exactly once (INV-1/2).
pub fn assert_paired(history: &[Message]) {
    if let Err(v) = riot_protocol::invariants::check_tool_pairing(history) {
        panic!("pairing broken: {v}");
    }
}
