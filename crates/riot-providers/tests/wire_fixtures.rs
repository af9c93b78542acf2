#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! VERIFICATION L5 "real wire data": every recorded stream in
//! `../shared/fixtures/wire` through the byte-level SSE parser and its
//! decoder, cut into chunks of 1, 7, 13 and 4096 bytes. Each must yield the
//! same events for every chunking, and the right text, thinking (with
//! signatures), tool calls, final usage and end.

use riot_protocol::{
    AssistantBlock, ProviderErrorKind, ProviderEvent, StopReason, StreamDelta, Usage,
};
use riot_providers::anthropic::decode::AnthropicDecoder;
use riot_providers::chat::decode::ChatDecoder;
use riot_providers::decode::{Decoder, decode_chunks};
use riot_providers::responses::decode::ResponsesDecoder;

const WIRE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/wire");

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
}

fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
    }
}

fn text(all: &'static str) -> (&'static str, &'static str, usize) {
    (all, all, all.chars().count())
}

/// The fixture re-framed as SSE bytes as its README describes.
#[allow(clippy::disallowed_methods)] // test code reads the shared fixtures
fn sse_bytes(case: &Case) -> Vec<u8> {
    let raw = std::fs::read_to_string(format!("{WIRE}/{}", case.file)).expect("fixture");
    let lines: Vec<&str> = raw.lines().filter(|l| !l.trim().is_empty()).collect();
    // A Responses file may hold several complete responses back to back.
    let mut parts: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        let new_response =
            case.format == Format::Responses && line.contains("\"response.created\"");
        if parts.is_empty() || new_response {
            parts.push(Vec::new());
        }
        parts.last_mut().unwrap().push(line);
    }
    let mut out = String::new();
    for line in &parts[case.part] {
        match case.format {
            Format::Chat => out.push_str(&format!("data: {line}\n\n")),
            _ => {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                out.push_str(&format!(
                    "event: {}\ndata: {line}\n\n",
                    v["type"].as_str().unwrap()
                ));
            }
        }
    }
    if case.format == Format::Chat {
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
    let mut thinking = Vec::new();
    let mut tools = Vec::new();
    let mut last_usage = Usage::default();
    for event in events {
        match event {
            ProviderEvent::Delta(StreamDelta::Text { text }) => delta_text.push_str(text),
            ProviderEvent::Delta(StreamDelta::Thinking { text }) => delta_thinking.push_str(text),
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
    assert_eq!(
        delta_text, block_text,
        "{name}: deltas add up to the blocks"
    );
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
    if case.format != Format::Responses {
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
}

fn cases() -> Vec<Case> {
    use Format::*;
    let sonnet5_sig_a = ("EsECCokBCBAYAipA9i3H", "+1I6L4oPGAE=", 436);
    let sonnet5_sig_b = ("EsECCokBCBAYAipA9i3H", "nc0exlyaGAE=", 436);
    let stop = |r| End::Stop(r);
    vec![
        Case {
            file: "anthropic/anthropic-text.chunks.txt",
            part: 0,
            format: Anthropic,
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
fn every_wire_fixture_decodes_to_the_right_events_in_every_chunking() {
    let cases = cases();
    // Every fixture file is covered by at least one case.
    #[allow(clippy::disallowed_methods)] // test code lists the shared fixtures
    for dir in std::fs::read_dir(WIRE).unwrap() {
        let dir = dir.unwrap();
        if !dir.file_type().unwrap().is_dir() {
            continue;
        }
        #[allow(clippy::disallowed_methods)] // test code lists the shared fixtures
        for file in std::fs::read_dir(dir.path()).unwrap() {
            let file = file.unwrap();
            let rel = format!(
                "{}/{}",
                dir.file_name().to_string_lossy(),
                file.file_name().to_string_lossy()
            );
            assert!(
                cases.iter().any(|c| c.file == rel),
                "fixture {rel} has no case"
            );
        }
    }
    for case in &cases {
        let bytes = sse_bytes(case);
        let mut reference: Option<Vec<ProviderEvent>> = None;
        for size in [1, 7, 13, 4096] {
            let mut dec = decoder(case.format);
            let (events, err) = decode_chunks(dec.as_mut(), bytes.chunks(size));
            let end = match err {
                None => match events.last() {
                    Some(ProviderEvent::Stop { reason }) => End::Stop(*reason),
                    other => panic!("{}: ends with {other:?}", case.file),
                },
                Some(e) => End::Err(e.kind, Box::leak(e.message.into_boxed_str())),
            };
            check(case, &events, &end);
            match &reference {
                None => reference = Some(events),
                Some(r) => assert_eq!(&events, r, "{} differs at chunk size {size}", case.file),
            }
        }
    }
}

#[test]
fn a_stream_cut_before_its_final_event_keeps_the_text_and_reports_stream_cut() {
    let case = &cases()[0]; // anthropic-text
    let bytes = sse_bytes(case);
    let cut = bytes.len() - 200; // inside the last events
    for size in [1, 7, 13, 4096] {
        let mut dec = decoder(Format::Anthropic);
        let (events, err) = decode_chunks(dec.as_mut(), bytes[..cut].chunks(size));
        let err = err.expect("a cut stream is an error");
        assert_eq!(err.kind, ProviderErrorKind::StreamCut);
        assert!(err.is_retryable());
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Block(AssistantBlock::Text { text }) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            text,
            "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?"
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ProviderEvent::Stop { .. }))
        );
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

#[test]
fn random_splits_give_the_same_events_as_one_piece() {
    for case in &cases() {
        let bytes = sse_bytes(case);
        let mut whole = decoder(case.format);
        let expected = decode_chunks(whole.as_mut(), [bytes.as_slice()]);
        for seed in 1..=5 {
            let mut dec = decoder(case.format);
            let got = decode_chunks(dec.as_mut(), random_pieces(&bytes, seed));
            assert_eq!(got, expected, "{} seed {seed}", case.file);
        }
    }
}
