#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! docs/testing.md L5 "real wire data": wire streams through the byte-level
//! SSE parser and its decoder, cut into chunks of 1, 7, 13 and 4096 bytes.
//! Each must yield the same events for every chunking, and the right text,
//! thinking (with signatures), tool calls, final usage and end.
//!
//! The project's own streams (`tests/wire`, see its README) always run,
//! with exact expectations. Recorded streams from real endpoints are not
//! in the repository: where `RIOT_SHARED_FIXTURES` names a directory of
//! them they are checked too, else the test says it skipped them and passes.

mod support;

use std::path::Path;

use riot_protocol::{
    AssistantBlock, ProviderErrorKind, ProviderEvent, StopReason, StreamDelta, Usage,
};
use riot_providers::anthropic::decode::AnthropicDecoder;
use riot_providers::chat::decode::ChatDecoder;
use riot_providers::decode::{Decoder, decode_chunks};
use riot_providers::responses::decode::ResponsesDecoder;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Anthropic,
    Chat,
    Responses,
}

#[derive(Debug, PartialEq)]
enum End {
    Stop(StopReason),
    Err(ProviderErrorKind, &'static str),
}

struct Thinking {
    text_starts: &'static str,
    text_chars: usize,
    signature: Option<(&'static str, &'static str, usize)>,
    model: &'static str,
    item_id: Option<&'static str>,
}

/// What was streamed as deltas, exactly (the project's own fixtures).
struct Streamed {
    text: &'static str,
    thinking: &'static str,
    /// The argument text streamed for each tool call, by id, in order.
    tool_json: Vec<(&'static str, &'static str)>,
}

struct Case {
    file: &'static str,
    /// Which response of a file holding several (Responses), 0-based.
    part: usize,
    format: Format,
    model: &'static str,
    text: (&'static str, &'static str, usize),
    thinking: Vec<Thinking>,
    tools: Vec<(&'static str, &'static str, &'static str)>,
    usage: Usage,
    end: End,
    /// `None`: the deltas must add up to the blocks (the recorded
    /// streams). `Some`: they must be exactly these.
    streamed: Option<Streamed>,
}

fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
        web_searches: 0,
    }
}

fn text(all: &'static str) -> (&'static str, &'static str, usize) {
    (all, all, all.chars().count())
}

/// A thinking block expected exactly: this text and signature, bound to
/// the requested model.
fn thought(
    text: &'static str,
    signature: Option<&'static str>,
    item_id: Option<&'static str>,
) -> Thinking {
    Thinking {
        text_starts: text,
        text_chars: text.chars().count(),
        signature: signature.map(|s| (s, s, s.len())),
        model: "requested-model",
        item_id,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    /// `event: <type>` before each `data:` line (as the servers send).
    Named,
    /// `data:` lines only.
    DataOnly,
}

/// The fixture re-framed as SSE bytes as its README describes. A Chat
/// Completions stream ends with `data: [DONE]` unless its file is named
/// `cut-*` (a stream cut before its end).
fn sse_bytes(root: &Path, case: &Case, framing: Framing) -> Vec<u8> {
    let lines = support::fixture_lines(&root.join(case.file));
    // A Responses file may hold several complete responses back to back.
    let mut parts: Vec<Vec<&str>> = Vec::new();
    for line in &lines {
        let new_response =
            case.format == Format::Responses && line.contains("\"response.created\"");
        if parts.is_empty() || new_response {
            parts.push(Vec::new());
        }
        parts.last_mut().unwrap().push(line);
    }
    let mut out = String::new();
    for line in &parts[case.part] {
        if case.format == Format::Chat || framing == Framing::DataOnly {
            out.push_str(&format!("data: {line}\n\n"));
        } else {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            out.push_str(&format!(
                "event: {}\ndata: {line}\n\n",
                v["type"].as_str().unwrap()
            ));
        }
    }
    let cut = Path::new(case.file)
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("cut-"));
    if case.format == Format::Chat && !cut {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

fn decoder(format: Format) -> Box<dyn Decoder> {
    match format {
        Format::Anthropic => Box::new(AnthropicDecoder::new("requested-model")),
        Format::Chat => Box::new(ChatDecoder::new("requested-model")),
        Format::Responses => Box::new(ResponsesDecoder::new("requested-model")),
    }
}

fn check(case: &Case, events: &[ProviderEvent], end: &End) {
    let name = case.file;
    assert_eq!(
        events.first(),
        Some(&ProviderEvent::Started {
            model: case.model.into()
        }),
        "{name}: Started first"
    );
    let mut block_text = String::new();
    let mut delta_text = String::new();
    let mut delta_thinking = String::new();
    let mut tool_json: Vec<(String, String)> = Vec::new();
    let mut thinking = Vec::new();
    let mut tools = Vec::new();
    let mut last_usage = Usage::default();
    for event in events {
        match event {
            ProviderEvent::Delta(StreamDelta::Text { text }) => delta_text.push_str(text),
            ProviderEvent::Delta(StreamDelta::Thinking { text }) => delta_thinking.push_str(text),
            ProviderEvent::Delta(StreamDelta::ToolInput {
                tool_use_id,
                partial_json,
                ..
            }) => match tool_json
                .iter_mut()
                .find(|(id, _)| id == tool_use_id.as_str())
            {
                Some((_, json)) => json.push_str(partial_json),
                None => tool_json.push((tool_use_id.to_string(), partial_json.clone())),
            },
            ProviderEvent::Block(AssistantBlock::Text { text }) => block_text.push_str(text),
            ProviderEvent::Block(b @ AssistantBlock::Thinking { .. }) => thinking.push(b.clone()),
            ProviderEvent::Block(AssistantBlock::ToolUse { id, name, input }) => {
                tools.push((id.to_string(), name.clone(), input.clone()))
            }
            ProviderEvent::Usage(u) => last_usage = *u,
            _ => {}
        }
    }
    let (starts, ends, chars) = case.text;
    assert!(
        block_text.starts_with(starts),
        "{name}: text starts {block_text:?}"
    );
    assert!(
        block_text.ends_with(ends),
        "{name}: text ends {block_text:?}"
    );
    assert_eq!(block_text.chars().count(), chars, "{name}: text length");
    if case.streamed.is_none() {
        assert_eq!(
            delta_text, block_text,
            "{name}: deltas add up to the blocks"
        );
    }
    assert_eq!(
        thinking.len(),
        case.thinking.len(),
        "{name}: thinking blocks"
    );
    let mut all_thinking = String::new();
    for (got, want) in thinking.iter().zip(&case.thinking) {
        let AssistantBlock::Thinking {
            text,
            signature,
            model,
            item_id,
        } = got
        else {
            unreachable!()
        };
        all_thinking.push_str(text);
        assert!(
            text.starts_with(want.text_starts),
            "{name}: thinking {text:?}"
        );
        assert_eq!(
            text.chars().count(),
            want.text_chars,
            "{name}: thinking length"
        );
        // Bound to the requested name (what INV-9 compares), or to the
        // model a mid-stream fallback switched to.
        assert_eq!(model, want.model, "{name}: thinking bound to its model");
        assert_eq!(item_id.as_deref(), want.item_id, "{name}: item id");
        match (signature, want.signature) {
            (None, None) => {}
            (Some(sig), Some((starts, ends, len))) => {
                assert!(
                    sig.starts_with(starts) && sig.ends_with(ends),
                    "{name}: signature {sig}"
                );
                assert_eq!(sig.len(), len, "{name}: signature length");
            }
            (got, want) => panic!("{name}: signature {got:?} vs {want:?}"),
        }
    }
    if case.format != Format::Responses && case.streamed.is_none() {
        assert_eq!(
            delta_thinking, all_thinking,
            "{name}: thinking deltas add up"
        );
    }
    let want_tools: Vec<(String, String, serde_json::Value)> = case
        .tools
        .iter()
        .map(|(id, n, json)| {
            (
                (*id).into(),
                (*n).into(),
                serde_json::from_str(json).unwrap(),
            )
        })
        .collect();
    assert_eq!(tools, want_tools, "{name}: tool calls");
    assert_eq!(last_usage, case.usage, "{name}: final usage");
    assert_eq!(end, &case.end, "{name}: end");
    if let Some(streamed) = &case.streamed {
        assert_eq!(delta_text, streamed.text, "{name}: streamed text");
        assert_eq!(
            delta_thinking, streamed.thinking,
            "{name}: streamed thinking"
        );
        let want_json: Vec<(String, String)> = streamed
            .tool_json
            .iter()
            .map(|(id, json)| ((*id).into(), (*json).into()))
            .collect();
        assert_eq!(tool_json, want_json, "{name}: streamed tool arguments");
        let stops = events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::Stop { .. }))
            .count();
        let want_stops = usize::from(matches!(case.end, End::Stop(_)));
        assert_eq!(stops, want_stops, "{name}: Stop only on a normal end");
    }
}

/// Decodes `bytes` in pieces of `size`: the events and how the stream ended.
fn run(case: &Case, bytes: &[u8], size: usize) -> (Vec<ProviderEvent>, End) {
    let mut dec = decoder(case.format);
    let (events, err) = decode_chunks(dec.as_mut(), bytes.chunks(size));
    let end = match err {
        None => match events.last() {
            Some(ProviderEvent::Stop { reason }) => End::Stop(*reason),
            other => panic!("{}: ends with {other:?}", case.file),
        },
        Some(e) => End::Err(e.kind, Box::leak(e.message.into_boxed_str())),
    };
    (events, end)
}

/// Every fixture file under `root` has at least one case.
fn every_file_has_a_case(root: &Path, cases: &[Case]) {
    for rel in support::fixture_files(root) {
        if rel.ends_with(".md") {
            continue;
        }
        assert!(
            cases.iter().any(|c| c.file == rel),
            "fixture {rel} has no case"
        );
    }
}

/// Each case in every chunking gives the expected events, the same ones.
fn decode_every_chunking(root: &Path, cases: &[Case]) {
    for case in cases {
        let bytes = sse_bytes(root, case, Framing::Named);
        let mut reference: Option<Vec<ProviderEvent>> = None;
        for size in [1, 7, 13, 4096] {
            let (events, end) = run(case, &bytes, size);
            check(case, &events, &end);
            match &reference {
                None => reference = Some(events),
                Some(r) => assert_eq!(&events, r, "{} differs at chunk size {size}", case.file),
            }
        }
    }
}

/// The error every cut stream ends in.
const CUT: End = End::Err(
    ProviderErrorKind::StreamCut,
    "the connection closed before the reply was complete",
);

/// The argument text a model streams for `write_file` in the own
/// fixtures (a surrogate-pair escape for the rocket, an escaped quote).
const WRITE_RAW: &str = r#"{"path": "greetings/hello.txt", "content": "héllo — 日本\n", "emoji": "\ud83d\ude80", "quote": "say \"hi\"", "overwrite": true}"#;
/// What those arguments mean.
const WRITE_INPUT: &str = r#"{"path":"greetings/hello.txt","content":"héllo — 日本\n","emoji":"🚀","quote":"say \"hi\"","overwrite":true}"#;

/// The project's own streams (`tests/wire`), expected exactly.
fn own_cases() -> Vec<Case> {
    use Format::*;
    let stop = |r| End::Stop(r);
    let streamed = |text, thinking, tool_json| {
        Some(Streamed {
            text,
            thinking,
            tool_json,
        })
    };
    vec![
        Case {
            file: "anthropic/text.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-sonnet-4-5",
            text: text("héllo — 日本! The build is green and every test passes ✓"),
            thinking: vec![],
            tools: vec![],
            // Cache read and write from message_start, output from
            // message_delta.
            usage: usage(25, 17, 4800, 1200),
            end: stop(StopReason::EndTurn),
            streamed: streamed(
                "héllo — 日本! The build is green and every test passes ✓",
                "",
                vec![],
            ),
        },
        Case {
            file: "anthropic/thinking-signature.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-opus-4-1",
            text: text("The café opens at 8:00 and closes at 18:00 — Monday to Friday."),
            thinking: vec![thought(
                "The user wants the café's hours; the notes say 8–18 on weekdays.",
                Some(
                    "UmlvdCB0ZXN0IGZpeHR1cmU6IGEgc2lnbmVkIHRoaW5raW5nIGJsb2NrIGZvciB0aGUgY2Fmw6kgcXVlc3Rpb24=",
                ),
                None,
            )],
            tools: vec![],
            usage: usage(310, 96, 0, 2048),
            end: stop(StopReason::EndTurn),
            streamed: streamed(
                "The café opens at 8:00 and closes at 18:00 — Monday to Friday.",
                "The user wants the café's hours; the notes say 8–18 on weekdays.",
                vec![],
            ),
        },
        Case {
            file: "anthropic/tool-use-split.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-sonnet-4-5",
            text: text("I'll write the greeting file."),
            thinking: vec![],
            tools: vec![("toolu_riot_write_01", "write_file", WRITE_INPUT)],
            usage: usage(1520, 64, 9000, 0),
            end: stop(StopReason::ToolUse),
            streamed: streamed(
                "I'll write the greeting file.",
                "",
                vec![("toolu_riot_write_01", WRITE_RAW)],
            ),
        },
        Case {
            file: "anthropic/tool-no-args.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-haiku-4-5",
            text: text(""),
            thinking: vec![],
            tools: vec![("toolu_riot_now_01", "current_time", "{}")],
            usage: usage(410, 12, 0, 0),
            end: stop(StopReason::ToolUse),
            // The one empty `partial_json` is not passed on.
            streamed: streamed("", "", vec![]),
        },
        Case {
            file: "anthropic/error-overloaded.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-sonnet-4-5",
            // The text block never closed: shown as deltas, not kept.
            text: text(""),
            thinking: vec![],
            tools: vec![],
            usage: usage(88, 1, 0, 0),
            end: End::Err(ProviderErrorKind::Overloaded, "Overloaded"),
            streamed: streamed("Let me check the naïve approach first…", "", vec![]),
        },
        Case {
            file: "anthropic/cut-tool-use.jsonl",
            part: 0,
            format: Anthropic,
            model: "claude-sonnet-4-5",
            // Finished blocks are kept; the half-streamed tool call is not.
            text: text("Listing “src/” now."),
            thinking: vec![thought(
                "List the directory first — “src/” only.",
                Some("c2lnbmVkOiBsaXN0IHNyYyBmaXJzdA=="),
                None,
            )],
            tools: vec![],
            usage: usage(640, 4, 2000, 0),
            end: CUT,
            streamed: streamed(
                "Listing “src/” now.",
                "List the directory first — “src/” only.",
                vec![("toolu_riot_ls_01", r#"{"path": "sr"#)],
            ),
        },
        Case {
            file: "openai-chat/text.jsonl",
            part: 0,
            format: Chat,
            model: "gpt-4.1-mini-2025-04-14",
            text: text("héllo — 日本! Tests: 12 passed, 0 failed ✓"),
            thinking: vec![],
            tools: vec![],
            // 2100 prompt tokens of which 1920 cached.
            usage: usage(180, 14, 1920, 0),
            end: stop(StopReason::EndTurn),
            streamed: streamed("héllo — 日本! Tests: 12 passed, 0 failed ✓", "", vec![]),
        },
        Case {
            file: "openai-chat/reasoning.jsonl",
            part: 0,
            format: Chat,
            model: "deepseek-reasoner",
            text: text("There is one “é” in “héllo”."),
            thinking: vec![thought(
                "Count the “é” in “héllo”: h, é, l, l, o. Just one.",
                None,
                None,
            )],
            tools: vec![],
            // DeepSeek's prompt_cache_hit_tokens: 256 of 300 cached.
            usage: usage(44, 90, 256, 0),
            end: stop(StopReason::EndTurn),
            streamed: streamed(
                "There is one “é” in “héllo”.",
                "Count the “é” in “héllo”: h, é, l, l, o. Just one.",
                vec![],
            ),
        },
        Case {
            file: "openai-chat/tool-calls.jsonl",
            part: 0,
            format: Chat,
            model: "gpt-4.1-2025-04-14",
            text: text("I’ll write “greetings/hello.txt”, then check the clock."),
            thinking: vec![],
            tools: vec![
                ("call_riot_write_01", "write_file", WRITE_INPUT),
                // Empty arguments mean no arguments.
                ("call_riot_now_02", "current_time", "{}"),
            ],
            usage: usage(82, 71, 768, 0),
            end: stop(StopReason::ToolUse),
            streamed: streamed(
                "I’ll write “greetings/hello.txt”, then check the clock.",
                "",
                vec![("call_riot_write_01", WRITE_RAW)],
            ),
        },
        Case {
            file: "openai-chat/cut-reasoning.jsonl",
            part: 0,
            format: Chat,
            model: "deepseek-reasoner",
            // The text so far is kept; the unsigned reasoning is not.
            text: text("héllo — 日本 is"),
            thinking: vec![],
            tools: vec![],
            usage: Usage::default(),
            end: CUT,
            streamed: streamed("héllo — 日本 is", "Check “日本” first.", vec![]),
        },
        Case {
            file: "openai-responses/text.jsonl",
            part: 0,
            format: Responses,
            model: "gpt-5-mini-2025-08-07",
            text: text("héllo — 日本! Deployed to “staging” in 42 s."),
            thinking: vec![],
            tools: vec![],
            // 5000 input tokens of which 4096 cached.
            usage: usage(904, 120, 4096, 0),
            end: stop(StopReason::EndTurn),
            streamed: streamed("héllo — 日本! Deployed to “staging” in 42 s.", "", vec![]),
        },
        Case {
            file: "openai-responses/reasoning-tool.jsonl",
            part: 0,
            format: Responses,
            model: "gpt-5.1-codex",
            text: text(""),
            // Two summary parts, joined by a blank line; the signature is
            // the encrypted content of output_item.done, not of .added.
            thinking: vec![thought(
                "**Planning the write**\n\nSave “héllo — 日本” to the greetings file.\n\n\
                 **Checking the clock**\n\nThen read the time.",
                Some("gAAAAABriotRmluYWwgZW5jcnlwdGVkIHJlYXNvbmluZyBmb3IgdGhlIHRvb2wgdHVybg=="),
                Some("rs_riot_reason_01"),
            )],
            tools: vec![
                ("call_riot_write_01", "write_file", WRITE_INPUT),
                ("call_riot_now_02", "current_time", "{}"),
            ],
            usage: usage(384, 210, 2816, 0),
            end: stop(StopReason::ToolUse),
            // The summary parts stream back to back, with no separator.
            streamed: streamed(
                "",
                "**Planning the write**\n\nSave “héllo — 日本” to the greetings file.\
                 **Checking the clock**\n\nThen read the time.",
                vec![
                    ("call_riot_write_01", WRITE_RAW),
                    ("call_riot_now_02", "{}"),
                ],
            ),
        },
        Case {
            file: "openai-responses/failed.jsonl",
            part: 0,
            format: Responses,
            model: "gpt-5-mini-2025-08-07",
            text: text(""),
            thinking: vec![],
            tools: vec![],
            usage: Usage::default(),
            end: End::Err(
                ProviderErrorKind::Server,
                "An internal error interrupted this response; retry it.",
            ),
            streamed: streamed(
                "Comparing the naïve plan with the indexed one — “B-tree” first…",
                "",
                vec![],
            ),
        },
        Case {
            file: "openai-responses/cut-text.jsonl",
            part: 0,
            format: Responses,
            model: "gpt-5-mini-2025-08-07",
            // The finished reasoning item and the open message's text.
            text: text("héllo — 日本, the answer is"),
            thinking: vec![thought(
                "**Answering briefly**",
                Some("gAAAAABriotY3V0IHN0cmVhbSByZWFzb25pbmc="),
                Some("rs_riot_cut_01"),
            )],
            tools: vec![],
            usage: Usage::default(),
            end: CUT,
            streamed: streamed(
                "héllo — 日本, the answer is",
                "**Answering briefly**",
                vec![],
            ),
        },
    ]
}

/// The recorded streams (outside the repository, named by
/// `RIOT_SHARED_FIXTURES`): a cross-check where a machine has them.
fn recorded_cases() -> Vec<Case> {
    use Format::*;
    let sonnet5_sig_a = ("EsECCokBCBAYAipA9i3H", "+1I6L4oPGAE=", 436);
    let sonnet5_sig_b = ("EsECCokBCBAYAipA9i3H", "nc0exlyaGAE=", 436);
    let stop = |r| End::Stop(r);
    vec![
        Case {
            file: "anthropic/anthropic-text.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-sonnet-4-5-20250929",
            text: text(
                "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
            ),
            thinking: vec![],
            tools: vec![],
            usage: usage(12, 30, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "anthropic/anthropic-tool-no-args.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-sonnet-4-5-20250929",
            text: text("I'll update the issue list for you."),
            thinking: vec![],
            tools: vec![("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", "{}")],
            usage: usage(565, 48, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "anthropic/anthropic-json-tool.1.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-haiku-4-5-20251001",
            text: text(""),
            thinking: vec![],
            tools: vec![(
                "toolu_01KFbKqPYSuAKujiL6mTfzYA",
                "json",
                r#"{"elements":[{"location":"San Francisco","temperature":58,"condition":"sunny"}]}"#,
            )],
            usage: usage(849, 47, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "anthropic/anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-sonnet-5",
            text: (
                "# Finding GCD(1071, 462) Using the Eucli",
                " = 21 × 51 ✓\n- 462 = 21 × 22 ✓",
                539,
            ),
            thinking: vec![Thinking {
                text_starts: "I'm working through the Euclid",
                text_chars: 190,
                signature: Some(sonnet5_sig_a),
                model: "requested-model",
                item_id: None,
            }],
            tools: vec![],
            usage: usage(47, 373, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "anthropic/anthropic-claude-sonnet-5-reasoning-generic.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-sonnet-5",
            text: (
                "# Finding GCD(1071, 462) Using the Eucli",
                "y 21, confirming the answer. ✅",
                890,
            ),
            thinking: vec![Thinking {
                text_starts: "",
                text_chars: 0,
                signature: Some(sonnet5_sig_b),
                model: "requested-model",
                item_id: None,
            }],
            tools: vec![],
            usage: usage(47, 496, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "anthropic/anthropic-message-delta-input-tokens.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-opus-4-5-20251101",
            text: text("pong"),
            thinking: vec![],
            tools: vec![],
            usage: usage(61, 2, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "anthropic/duplicate-message-start.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-3-haiku-20240307",
            text: text("Hello, World!"),
            thinking: vec![],
            tools: vec![],
            usage: usage(17, 227, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "anthropic/anthropic-refusal.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-fable-5",
            text: text(""),
            thinking: vec![],
            tools: vec![],
            usage: usage(18, 5, 0, 0),
            end: stop(StopReason::Refusal),
        },
        Case {
            file: "anthropic/anthropic-issue-11719-quoted-tool-input.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-sonnet-4-5-20250929",
            text: text(""),
            thinking: vec![],
            tools: vec![(
                "toolu_01Cr31vcGoeeRgi3Eo5Ds8qN",
                "website_update",
                r#"{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, but Strava does not answer the question: \"What should I do next after this run?\". It is a great log, but it is not adaptive.", "type": "feature", "passes": false}]}"#,
            )],
            usage: usage(912, 118, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "anthropic/anthropic-fallback-mid-output.chunks.txt",
            part: 0,
            format: Anthropic,
            streamed: None,
            model: "claude-opus-5-5",
            text: text(""),
            thinking: vec![
                Thinking {
                    text_starts: "Opus 5.5 thinking",
                    text_chars: 17,
                    signature: Some(("SIG_FROM_OPUS_5_5", "SIG_FROM_OPUS_5_5", 17)),
                    model: "requested-model",
                    item_id: None,
                },
                Thinking {
                    text_starts: "Opus 4.8 thinking",
                    text_chars: 17,
                    signature: Some(("SIG_FROM_OPUS_4_8", "SIG_FROM_OPUS_4_8", 17)),
                    model: "claude-opus-4-8",
                    item_id: None,
                },
            ],
            tools: vec![("toolu_1", "lookup", r#"{"q":"x"}"#)],
            usage: usage(10, 70, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "deepseek/deepseek-text.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "deepseek-chat",
            text: (
                "## **Holiday Name:** Starlight Remembran",
                "5 minutes of silent looking at",
                1855,
            ),
            thinking: vec![],
            tools: vec![],
            usage: usage(13, 400, 0, 0),
            end: End::Err(
                ProviderErrorKind::OutputLimit,
                "the reply hit the output-token limit",
            ),
        },
        Case {
            file: "deepseek/deepseek-reasoning.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "deepseek-v4-flash",
            text: (
                "There are **3** “r”s in **“strawberry”**",
                "*3** “r”s in **“strawberry”**.",
                41,
            ),
            thinking: vec![Thinking {
                text_starts: "We need answer simple. Need co",
                text_chars: 285,
                signature: None,
                model: "requested-model",
                item_id: None,
            }],
            tools: vec![],
            usage: usage(97, 106, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "deepseek/deepseek-tool-call.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "deepseek-v4-flash",
            text: text(""),
            thinking: vec![Thinking {
                text_starts: "The user asks about the weathe",
                text_chars: 80,
                signature: None,
                model: "requested-model",
                item_id: None,
            }],
            tools: vec![(
                "call_00_IhCAliIHtM9gKpgfqbBV9873",
                "weather",
                r#"{"location": "San Francisco"}"#,
            )],
            usage: usage(118, 61, 256, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "deepseek/issue-19381-thinking-reasoning.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "deepseek-v4-pro",
            text: text(""),
            thinking: vec![Thinking {
                text_starts: "We need",
                text_chars: 7,
                signature: None,
                model: "requested-model",
                item_id: None,
            }],
            tools: vec![],
            usage: usage(87, 2, 0, 0),
            end: End::Err(
                ProviderErrorKind::OutputLimit,
                "the reply hit the output-token limit",
            ),
        },
        Case {
            file: "deepseek/issue-19789-live-usage.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "deepseek-v4-flash",
            text: text("sanitized"),
            thinking: vec![],
            tools: vec![],
            usage: usage(88, 4, 0, 0),
            end: End::Err(
                ProviderErrorKind::OutputLimit,
                "the reply hit the output-token limit",
            ),
        },
        Case {
            file: "openai-chat/openai-text.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "gpt-4.1-nano-2025-04-14",
            text: (
                "**Holiday Name:** Harmony Day\n\n**Date:**",
                "xperiences and mutual respect.",
                1724,
            ),
            thinking: vec![],
            tools: vec![],
            usage: usage(16, 300, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "openai-chat/azure-model-router.1.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "gpt-5-nano-2025-08-07",
            text: text("Capital of Denmark."),
            thinking: vec![],
            tools: vec![],
            usage: usage(15, 78, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "openai-chat/issue-15789-step-1.chunks.txt",
            part: 0,
            format: Chat,
            streamed: None,
            model: "gpt-4o-2024-08-06",
            text: text("PRE_TOOL"),
            thinking: vec![],
            tools: vec![("call_NZa7xqfefoaMI2YYHowVXVlU", "weather", "{}")],
            usage: usage(58, 12, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "openai-responses/issue-19493-gpt-5.1-tool-call.chunks.txt",
            part: 0,
            format: Responses,
            streamed: None,
            model: "gpt-5.1-2025-11-13",
            text: text(""),
            thinking: vec![],
            tools: vec![(
                "call_2FQdm3Br7Qb35YUBSkDR7kue",
                "get_weather",
                r#"{"city":"Beijing"}"#,
            )],
            usage: usage(45, 25, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "openai-responses/openai-reasoning-encrypted-content.1.chunks.txt",
            part: 0,
            format: Responses,
            streamed: None,
            model: "gpt-5.1-codex-max",
            text: text(""),
            thinking: vec![Thinking {
                text_starts: "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7",
                text_chars: 163,
                signature: Some((
                    "gAAAAABpPDIVOKrsHNZ0GwsoEKA_IG",
                    "_8XMnObfNxat0wz4uQ==",
                    1060,
                )),
                model: "requested-model",
                item_id: Some("rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"),
            }],
            tools: vec![(
                "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
                "calculator",
                r#"{"a":12,"b":7,"op":"add"}"#,
            )],
            usage: usage(134, 28, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "openai-responses/openai-reasoning-encrypted-content.1.chunks.txt",
            part: 1,
            format: Responses,
            streamed: None,
            model: "gpt-5.1-codex-max",
            text: text(""),
            thinking: vec![],
            tools: vec![(
                "call_Q6pW65MUgW9vF59BmItYGos3",
                "calculator",
                r#"{"a":19,"b":3,"op":"multiply"}"#,
            )],
            usage: usage(221, 26, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "openai-responses/openai-reasoning-encrypted-content.1.chunks.txt",
            part: 2,
            format: Responses,
            streamed: None,
            model: "gpt-5.1-codex-max",
            text: text(""),
            thinking: vec![],
            tools: vec![(
                "call_Zl5vIMnD7dVAjgU6FkhmiCZh",
                "calculator",
                r#"{"a":57,"b":10,"op":"multiply"}"#,
            )],
            usage: usage(260, 26, 0, 0),
            end: stop(StopReason::ToolUse),
        },
        Case {
            file: "openai-responses/openai-reasoning-encrypted-content.1.chunks.txt",
            part: 3,
            format: Responses,
            streamed: None,
            model: "gpt-5.1-codex-max",
            text: text("The final result is **570**."),
            thinking: vec![],
            tools: vec![],
            usage: usage(299, 12, 0, 0),
            end: stop(StopReason::EndTurn),
        },
        Case {
            file: "openai-responses/openai-error.1.chunks.txt",
            part: 0,
            format: Responses,
            streamed: None,
            model: "gpt-5-nano-2025-08-07",
            text: text(""),
            thinking: vec![],
            tools: vec![],
            usage: Usage::default(),
            end: End::Err(
                ProviderErrorKind::QuotaExhausted,
                "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
            ),
        },
        Case {
            file: "openai-responses/openai-response-failed-only.1.chunks.txt",
            part: 0,
            format: Responses,
            streamed: None,
            model: "gpt-4o-mini",
            text: text(""),
            thinking: vec![],
            tools: vec![],
            usage: Usage::default(),
            end: End::Err(
                ProviderErrorKind::RateLimit,
                "Request too large for gpt-4o-mini in organization on tokens per min (TPM): Limit 30000, Requested 35364.",
            ),
        },
    ]
}

#[test]
fn own_wire_fixtures_decode_to_exactly_the_right_events_in_every_chunking() {
    let root = support::own_wire();
    let cases = own_cases();
    every_file_has_a_case(&root, &cases);
    decode_every_chunking(&root, &cases);
    for case in &cases {
        let named = sse_bytes(&root, case, Framing::Named);
        // The non-ASCII text really is cut inside a character, not only
        // by the 1-byte chunking.
        if named.iter().any(|b| !b.is_ascii()) {
            assert!(
                [7, 13]
                    .iter()
                    .any(|&size| named.chunks(size).any(|c| std::str::from_utf8(c).is_err())),
                "{}: no chunking splits a character",
                case.file
            );
        }
        // Data-only frames decode to the same events.
        if case.format != Format::Chat {
            let data_only = sse_bytes(&root, case, Framing::DataOnly);
            assert_eq!(
                run(case, &data_only, 7),
                run(case, &named, 7),
                "{}: data-only framing",
                case.file
            );
        }
    }
}

#[test]
fn recorded_wire_fixtures_decode_to_the_right_events_in_every_chunking() {
    let Some(root) = support::recorded_wire_or_skip(
        "recorded_wire_fixtures_decode_to_the_right_events_in_every_chunking",
    ) else {
        return;
    };
    let cases = recorded_cases();
    every_file_has_a_case(&root, &cases);
    decode_every_chunking(&root, &cases);
}

#[test]
fn the_recorded_streams_are_looked_for_where_the_variable_says() {
    assert_eq!(support::recorded_wire_at(None), None);
    assert_eq!(
        support::recorded_wire_at(Some("/nonexistent/riot-shared-fixtures".into())),
        None
    );
    // Any directory holding `wire/` will do; the repository's own does.
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    assert_eq!(
        support::recorded_wire_at(Some(tests.clone().into_os_string())),
        Some(tests.join("wire"))
    );
}

#[test]
fn a_stream_cut_inside_an_event_keeps_the_text_and_reports_stream_cut() {
    let case = own_cases()
        .into_iter()
        .find(|c| c.file == "anthropic/text.jsonl")
        .unwrap();
    let bytes = sse_bytes(&support::own_wire(), &case, Framing::Named);
    let text = "héllo — 日本! The build is green and every test passes ✓";
    // Cut inside the text block's stop (the open block is flushed) and
    // inside the message_delta (the block had closed).
    for event in ["event: content_block_stop", "event: message_delta"] {
        let at = bytes
            .windows(event.len())
            .position(|w| w == event.as_bytes())
            .unwrap();
        let cut = at + event.len() + 10;
        for size in [1, 7, 13, 4096] {
            let mut dec = decoder(Format::Anthropic);
            let (events, err) = decode_chunks(dec.as_mut(), bytes[..cut].chunks(size));
            let err = err.expect("a cut stream is an error");
            assert_eq!(err.kind, ProviderErrorKind::StreamCut, "{event} {size}");
            assert!(err.is_retryable());
            let blocks: Vec<&AssistantBlock> = events
                .iter()
                .filter_map(|e| match e {
                    ProviderEvent::Block(b) => Some(b),
                    _ => None,
                })
                .collect();
            assert_eq!(
                blocks,
                [&AssistantBlock::Text { text: text.into() }],
                "{event} {size}"
            );
            assert_eq!(
                events.last(),
                Some(&ProviderEvent::Block(AssistantBlock::Text {
                    text: text.into()
                })),
                "{event} {size}: nothing after the kept text"
            );
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e, ProviderEvent::Stop { .. }))
            );
        }
    }
}

/// Pieces of pseudo-random sizes (1–64 bytes), from a fixed seed.
fn random_pieces(bytes: &[u8], seed: u64) -> Vec<&[u8]> {
    let mut state = seed;
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let size = 1 + (state >> 58) as usize; // 1..=64
        let end = (at + size).min(bytes.len());
        pieces.push(&bytes[at..end]);
        at = end;
    }
    pieces
}

fn random_splits_match_one_piece(root: &Path, cases: &[Case]) {
    for case in cases {
        let bytes = sse_bytes(root, case, Framing::Named);
        let mut whole = decoder(case.format);
        let expected = decode_chunks(whole.as_mut(), [bytes.as_slice()]);
        for seed in 1..=5 {
            let mut dec = decoder(case.format);
            let got = decode_chunks(dec.as_mut(), random_pieces(&bytes, seed));
            assert_eq!(got, expected, "{} seed {seed}", case.file);
        }
    }
}

#[test]
fn random_splits_give_the_same_events_as_one_piece() {
    random_splits_match_one_piece(&support::own_wire(), &own_cases());
    if let Some(root) =
        support::recorded_wire_or_skip("random_splits_give_the_same_events_as_one_piece")
    {
        random_splits_match_one_piece(&root, &recorded_cases());
    }
}
