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
