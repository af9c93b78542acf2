use std::sync::Arc;

use futures::FutureExt;
use futures::executor::block_on;
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, FixedClock, Message, MessageId, ProviderEvent,
    SequentialIds, SessionId, StreamDelta, SystemPrompt, TerminalReason,
};

use super::*;
use crate::deps::{NoCompaction, NoQueue, NoStopHooks};
use crate::testing::{RecordingTranscript, ScriptItem, ScriptedProvider, ScriptedTools};

fn deps(provider: ScriptedProvider, transcript: Arc<RecordingTranscript>) -> AgentDeps {
    AgentDeps {
        provider: Arc::new(provider),
        tools: Arc::new(ScriptedTools::new(Default::default())),
        compactor: Arc::new(NoCompaction),
        transcript,
        hooks: Arc::new(NoStopHooks),
        queue: Arc::new(NoQueue),
        clock: Arc::new(FixedClock::new()),
        ids: Arc::new(SequentialIds::new()),
    }
}

fn state() -> AgentState {
    AgentState::new(SessionId::new("s"), "m", SystemPrompt::stable("You help."))
}

fn delta(text: &str) -> AgentEvent {
    AgentEvent::Delta {
        delta: StreamDelta::Text { text: text.into() },
    }
}

#[test]
fn deltas_are_handed_out_while_the_reply_is_still_streaming() {
    // The reply sends two deltas and then nothing: the deltas must already
    // be out while the provider waits, not held back until the reply ends.
    let script = vec![
        ScriptItem::Event(ProviderEvent::Started { model: "m".into() }),
        ScriptItem::Event(ProviderEvent::Delta(StreamDelta::Text {
            text: "Hel".into(),
        })),
        ScriptItem::Event(ProviderEvent::Delta(StreamDelta::Text {
            text: "lo".into(),
        })),
        ScriptItem::Stall,
    ];
    let transcript = Arc::new(RecordingTranscript::default());
    let deps = deps(ScriptedProvider::new(vec![script]), transcript);
    let mut state = state();
    let cancel = CancelScope::new();
    let prompt = Message::user_text(MessageId::new("u1"), "hi");
    let mut stream = std::pin::pin!(run_agent(&mut state, Some(prompt), &deps, cancel.clone()));

    let mut before_stop = Vec::new();
    while let Some(Some(event)) = stream.next().now_or_never() {
        before_stop.push(event);
    }
    assert_eq!(before_stop.len(), 4, "{before_stop:#?}");
    assert!(matches!(
        before_stop[1],
        AgentEvent::RequestStart { turn: 1, .. }
    ));
    assert_eq!(before_stop[2..], [delta("Hel"), delta("lo")]);

    cancel.cancel(CancelReason::User);
    let after_stop: Vec<AgentEvent> = block_on(stream.collect());
    let [AgentEvent::Message { message }, done] = &after_stop[..] else {
        panic!("expected the kept partial answer and Done: {after_stop:#?}");
    };
    let kept = message.as_assistant().expect("an assistant message");
    assert!(kept.interrupted);
    assert_eq!(
        kept.content,
        vec![AssistantBlock::Text {
            text: "Hello".into()
        }]
    );
    assert_eq!(
        done,
        &AgentEvent::Done {
            reason: TerminalReason::Aborted {
                by: AbortSource::User
            }
        }
    );
}

#[test]
#[should_panic(expected = "INV-6")]
fn stop_hooks_entered_after_a_failed_request_trip_inv6() {
    // The Stop-hook step checks the fact the reply step recorded, not a
    // constant: a route from a failed request to the hooks is caught.
    let transcript = Arc::new(RecordingTranscript::default());
    let deps = deps(ScriptedProvider::new(Vec::new()), transcript);
    let mut state = state();
    let mut machine = Machine::new(&mut state, None, &deps, CancelScope::new());
    machine.last_request_failed = true;
    machine.step = Step::StopHooks;
    block_on(machine.step());
}

#[test]
fn a_failed_request_is_recorded_and_a_finished_retry_clears_it() {
    // Output limit on the first request (a failure the loop recovers from
    // by escalating), then a finished reply: the Stop hooks run, INV-6 holds.
    let mut first = crate::testing::reply::text("m", "cut");
    first.extend(crate::testing::reply::stop(
        StopReason::MaxTokens,
        10,
        8_192,
    ));
    let mut second = crate::testing::reply::text("m", "whole");
    second.extend(crate::testing::reply::stop(StopReason::EndTurn, 10, 20));
    let transcript = Arc::new(RecordingTranscript::default());
    let deps = deps(ScriptedProvider::new(vec![first, second]), transcript);
    let mut state = state();
    let mut machine = Machine::new(&mut state, None, &deps, CancelScope::new());
    machine.step = Step::Request;
    let mut seen_failed = false;
    while !matches!(machine.step, Step::StopHooks | Step::Ended) {
        block_on(machine.step());
        seen_failed |= machine.last_request_failed;
    }
    assert!(seen_failed, "the output-limit reply counts as failed");
    assert!(matches!(machine.step, Step::StopHooks));
    assert!(!machine.last_request_failed);
}

#[test]
fn a_message_queued_on_seeing_the_results_goes_out_with_the_next_request() {
    // The step that appends the results ends there: what the person queues
    // on seeing them is drained before the next request, not a round later.
    let mut first = crate::testing::reply::tool_use("t1", "Read", serde_json::json!({}));
    first.extend(crate::testing::reply::stop(StopReason::ToolUse, 10, 5));
    let mut second = crate::testing::reply::text("m", "done");
    second.extend(crate::testing::reply::stop(StopReason::EndTurn, 20, 5));
    let provider = Arc::new(ScriptedProvider::new(vec![first, second]));
    let queue = crate::testing::VecQueue::default();
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: Arc::new(ScriptedTools::new(
            [(
                "Read".to_owned(),
                crate::testing::ToolBehavior::Ok("text".into()),
            )]
            .into(),
        )),
        queue: Arc::new(queue.clone()),
        ..deps(
            ScriptedProvider::new(Vec::new()),
            Arc::new(RecordingTranscript::default()),
        )
    };
    let mut state = state();
    state.tools = riot_protocol::ToolRunner::specs(deps.tools.as_ref());
    let prompt = Message::user_text(MessageId::new("u1"), "read it");
    let mut stream = std::pin::pin!(run_agent(
        &mut state,
        Some(prompt),
        &deps,
        CancelScope::new()
    ));
    block_on(async {
        while let Some(event) = stream.next().await {
            if let AgentEvent::Message {
                message: Message::User(u),
            } = &event
                && u.origin == MessageOrigin::ToolResults
            {
                queue.push(Message::user_text(MessageId::new("q1"), "and the tests"));
            }
        }
    });
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    let Some(Message::User(last)) = requests[1].messages.last() else {
        panic!("the second request ends with the person's side");
    };
    assert_eq!(
        last.content.last(),
        Some(&UserBlock::Text {
            text: "and the tests".into()
        })
    );
}

/// A face's choice as a queue that keeps returning it once made, so the
/// test sees that the loop itself switches only when the model differs.
#[derive(Debug, Default)]
struct StickyChoice(std::sync::Mutex<Option<String>>);

impl crate::deps::MessageQueue for StickyChoice {
    fn drain(&self) -> Vec<Message> {
        Vec::new()
    }

    fn model_switch(&self) -> Option<String> {
        self.0.lock().unwrap().clone()
    }
}

fn read_call(id: &str) -> Vec<ScriptItem> {
    let mut script = crate::testing::reply::tool_use(id, "Read", serde_json::json!({}));
    script.extend(crate::testing::reply::stop(StopReason::ToolUse, 10, 5));
    script
}

fn read_tools() -> Arc<ScriptedTools> {
    Arc::new(ScriptedTools::new(
        [(
            "Read".to_owned(),
            crate::testing::ToolBehavior::Ok("text".into()),
        )]
        .into(),
    ))
}

fn model_changes(transcript: &RecordingTranscript) -> Vec<String> {
    transcript
        .records()
        .into_iter()
        .filter_map(|r| match r {
            crate::testing::TranscriptRecord::ModelChanged(m) => Some(m),
            _ => None,
        })
        .collect()
}

#[test]
fn a_model_chosen_mid_turn_is_used_from_the_next_request_and_recorded_once() {
    let mut last = crate::testing::reply::text("m", "done");
    last.extend(crate::testing::reply::stop(StopReason::EndTurn, 20, 5));
    let provider = Arc::new(ScriptedProvider::new(vec![
        read_call("t1"),
        read_call("t2"),
        last,
    ]));
    let transcript = Arc::new(RecordingTranscript::default());
    let choice = Arc::new(StickyChoice::default());
    let deps = AgentDeps {
        provider: provider.clone(),
        tools: read_tools(),
        queue: choice.clone(),
        ..deps(ScriptedProvider::new(Vec::new()), transcript.clone())
    };
    let mut state = state();
    state.tools = riot_protocol::ToolRunner::specs(deps.tools.as_ref());
    let prompt = Message::user_text(MessageId::new("u1"), "read twice");
    let mut announced = Vec::new();
    {
        let mut stream = std::pin::pin!(run_agent(
            &mut state,
            Some(prompt),
            &deps,
            CancelScope::new()
        ));
        block_on(async {
            while let Some(event) = stream.next().await {
                match &event {
                    // The person picks another model while the first tool runs.
                    AgentEvent::ToolStarted { .. } => {
                        *choice.0.lock().unwrap() = Some("m-2".into());
                    }
                    AgentEvent::RequestStart { model, .. } => announced.push(model.clone()),
                    _ => {}
                }
            }
        });
    }

    let sent: Vec<(String, u32)> = provider
        .requests()
        .iter()
        .map(|r| (r.model.clone(), r.max_tokens))
        .collect();
    // The scripted model allows 32,000 output tokens: capped at 16,384.
    assert_eq!(
        sent,
        [
            ("m".to_owned(), 8_192),
            ("m-2".to_owned(), crate::DEFAULT_MAX_TOKENS),
            ("m-2".to_owned(), crate::DEFAULT_MAX_TOKENS),
        ]
    );
    assert_eq!(announced, ["m", "m-2", "m-2"]);
    assert_eq!(model_changes(&transcript), ["m-2"]);
    // Recorded after the first results, before the reply of the new model.
    let records = transcript.records();
    let changed = records
        .iter()
        .position(|r| matches!(r, crate::testing::TranscriptRecord::ModelChanged(_)))
        .unwrap();
    assert!(matches!(
        &records[changed - 1],
        crate::testing::TranscriptRecord::Message(Message::User(u))
            if u.origin == MessageOrigin::ToolResults
    ));
    assert!(matches!(
        &records[changed + 1],
        crate::testing::TranscriptRecord::Message(Message::Assistant(a)) if a.model == "m-2"
    ));
    assert_eq!((state.model.as_str(), state.max_tokens), ("m-2", 16_384));
}

#[test]
fn a_model_chosen_before_the_first_request_is_used_for_it_within_its_output_limit() {
    let mut only = crate::testing::reply::text("small", "hi");
    only.extend(crate::testing::reply::stop(StopReason::EndTurn, 10, 2));
    let provider = Arc::new(ScriptedProvider::new(vec![only]).with_capabilities(
        riot_protocol::ModelCapabilities {
            max_output_tokens: 4_096,
            ..Default::default()
        },
    ));
    let transcript = Arc::new(RecordingTranscript::default());
    let queue = crate::testing::VecQueue::default();
    queue.choose_model("small");
    let deps = AgentDeps {
        provider: provider.clone(),
        queue: Arc::new(queue),
        ..deps(ScriptedProvider::new(Vec::new()), transcript.clone())
    };
    let mut state = state();
    let prompt = Message::user_text(MessageId::new("u1"), "hi");
    let events: Vec<AgentEvent> =
        block_on(run_agent(&mut state, Some(prompt), &deps, CancelScope::new()).collect());
    assert!(matches!(
        &events[1],
        AgentEvent::RequestStart { turn: 1, model, .. } if model == "small"
    ));
    let request = &provider.requests()[0];
    assert_eq!(
        (request.model.as_str(), request.max_tokens),
        ("small", 4_096)
    );
    assert_eq!(model_changes(&transcript), ["small"]);
}
