//! How full the context is (docs/design.md §10): the last real usage from
//! the provider plus a rough estimate for what was appended after it — no
//! count-tokens call per turn — and the threshold at which to compact.

use riot_protocol::{
    AssistantBlock, Message, ModelCapabilities, SystemPrompt, ToolResultContent, ToolSpec, Usage,
    UserBlock,
};

/// The output-token limit of a normal request, capped by the model's own
/// maximum: `min(model maximum, DEFAULT_MAX_TOKENS)`. Output-limit recovery
/// raises it to the model's maximum for one retry.
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;

/// Rough tokens of an image block.
pub const IMAGE_TOKENS: u64 = 1_600;

/// Rough tokens of a document block: its text, and each page as an image
/// (a model that reads documents gets both; one that does not gets the
/// text alone, so this errs high).
pub fn document_tokens(pages: u32, text: &str) -> u64 {
    text_tokens(text) + u64::from(pages) * IMAGE_TOKENS
}
/// Room kept free below the effective window (the compaction request
/// itself needs room).
pub const COMPACT_MARGIN: u64 = 13_000;
/// Windows of this many tokens or fewer are small (docs/windows.md): only
/// the core tools are declared up front, compactly, and a summary request
/// is sent without the tool declarations.
pub const SMALL_WINDOW: u64 = 16_384;
/// At most this much of the window is reserved for output.
pub const OUTPUT_RESERVE_CAP: u64 = 20_000;

pub(crate) fn text_tokens(s: &str) -> u64 {
    (s.len() as u64).div_ceil(4)
}

fn json_tokens(v: &serde_json::Value) -> u64 {
    (v.to_string().len() as u64).div_ceil(2)
}

/// A rough token count of one message (≈4 bytes per token of text, 2 for
/// JSON, a fixed amount per image and per document page).
pub fn rough_tokens(message: &Message) -> u64 {
    match message {
        Message::System(_) => 0,
        Message::User(u) => u
            .content
            .iter()
            .map(|b| match b {
                UserBlock::Text { text } => text_tokens(text),
                UserBlock::Image { .. } => IMAGE_TOKENS,
                UserBlock::Attachment { title, text } => text_tokens(title) + text_tokens(text),
                UserBlock::ToolResult { content, .. } => content
                    .iter()
                    .map(|c| match c {
                        ToolResultContent::Text { text } => text_tokens(text),
                        ToolResultContent::Image { .. } => IMAGE_TOKENS,
                        ToolResultContent::Document { pages, text, .. } => {
                            document_tokens(*pages, text)
                        }
                    })
                    .sum(),
            })
            .sum(),
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|b| match b {
                AssistantBlock::Text { text } | AssistantBlock::Thinking { text, .. } => {
                    text_tokens(text)
                }
                AssistantBlock::RedactedThinking { data, .. } => text_tokens(data),
                AssistantBlock::ToolUse { name, input, .. } => {
                    text_tokens(name) + json_tokens(input)
                }
                // What goes back: the provider's blocks (their encrypted
                // pages are most of it), else nothing.
                AssistantBlock::WebSearch { replay, .. } => replay.iter().map(json_tokens).sum(),
            })
            .sum(),
    }
}

/// Where the last real usage applies: after `messages[..len]` the context
/// held `total` tokens (input of that request plus its reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageAnchor {
    pub len: usize,
    pub total: u64,
}

impl UsageAnchor {
    /// The anchor for a request's usage once its reply is appended.
    pub fn after_reply(len: usize, usage: &Usage) -> Self {
        Self {
            len,
            total: usage.total_input() + usage.output_tokens,
        }
    }
}

/// Estimated tokens of the next request.
pub fn estimate(
    system: &SystemPrompt,
    tools: &[ToolSpec],
    messages: &[Message],
    anchor: Option<UsageAnchor>,
) -> u64 {
    match anchor {
        Some(a) if a.len <= messages.len() => {
            a.total + messages[a.len..].iter().map(rough_tokens).sum::<u64>()
        }
        _ => {
            text_tokens(&system.stable)
                + text_tokens(&system.session)
                + tools
                    .iter()
                    .map(|t| text_tokens(&t.description) + json_tokens(&t.input_schema))
                    .sum::<u64>()
                + messages.iter().map(rough_tokens).sum::<u64>()
        }
    }
}

/// The most output a request asks for: the model's maximum, but never
/// more than a quarter of the window, so that a small window (a local
/// server's 8K) keeps room for the input: a server rejects input plus
/// `max_tokens` over the window.
pub fn output_ceiling(caps: &ModelCapabilities) -> u32 {
    let quarter = u32::try_from(caps.context_window / 4).unwrap_or(u32::MAX);
    caps.max_output_tokens.min(quarter).max(1)
}

/// `max_tokens` of a normal request: the output ceiling, at most
/// [`DEFAULT_MAX_TOKENS`] (output-limit
/// recovery may raise it to the ceiling).
pub fn request_max_tokens(caps: &ModelCapabilities) -> u32 {
    output_ceiling(caps).min(DEFAULT_MAX_TOKENS)
}

/// Room kept free below the window for a request's output: the output
/// ceiling, at most 20k.
pub fn output_reserve(caps: &ModelCapabilities) -> u64 {
    u64::from(output_ceiling(caps)).min(OUTPUT_RESERVE_CAP)
}

/// The estimate above which the loop compacts before sending: the window
/// minus the output reserve minus a margin of 13k, or an eighth of the
/// window when that is less (a small window cannot spare 13k, and the
/// summary request budgets itself).
pub fn threshold(caps: &ModelCapabilities) -> u64 {
    let margin = COMPACT_MARGIN.min(caps.context_window / 8);
    caps.context_window
        .saturating_sub(output_reserve(caps))
        .saturating_sub(margin)
}

#[cfg(test)]
mod tests {
    use riot_protocol::*;
    use serde_json::json;

    use super::*;

    fn caps(window: u64, out: u32) -> ModelCapabilities {
        ModelCapabilities {
            context_window: window,
            max_output_tokens: out,
            ..ModelCapabilities::default()
        }
    }

    #[test]
    fn threshold_reserves_output_capped_at_20k_and_a_13k_margin() {
        assert_eq!(threshold(&caps(200_000, 64_000)), 167_000);
        assert_eq!(threshold(&caps(128_000, 8_192)), 106_808);
        // Below 104k the margin is an eighth of the window.
        assert_eq!(threshold(&caps(40_000, 4_000)), 40_000 - 4_000 - 5_000);
    }

    #[test]
    fn a_small_window_keeps_a_quarter_for_output_and_compacts_at_five_eighths() {
        let eight_k = caps(8_192, 8_192);
        assert_eq!(output_ceiling(&eight_k), 2_048);
        assert_eq!(request_max_tokens(&eight_k), 2_048);
        assert_eq!(threshold(&eight_k), 8_192 - 2_048 - 1_024);
        let sixteen_k = caps(16_384, 32_000);
        assert_eq!(request_max_tokens(&sixteen_k), 4_096);
        assert_eq!(threshold(&sixteen_k), 16_384 - 4_096 - 2_048);
        // A large window asks for the default, whatever the model allows.
        assert_eq!(request_max_tokens(&caps(200_000, 64_000)), 16_384);
        assert_eq!(output_ceiling(&caps(200_000, 64_000)), 50_000);
        assert_eq!(request_max_tokens(&caps(128_000, 4_096)), 4_096);
    }

    #[test]
    fn a_document_counts_its_text_and_each_page_as_an_image() {
        let text = "x".repeat(400);
        let message = Message::User(UserMessage {
            id: MessageId::new("r1"),
            content: vec![UserBlock::ToolResult {
                tool_use_id: ToolUseId::new("t1"),
                content: vec![ToolResultContent::pdf(
                    "JVBERi0xLjU=".repeat(1_000),
                    3,
                    text,
                )],
                is_error: false,
                ui: None,
            }],
            origin: MessageOrigin::ToolResults,
        });
        assert_eq!(rough_tokens(&message), 100 + 3 * IMAGE_TOKENS);
    }

    #[test]
    fn estimate_uses_the_anchor_and_adds_only_what_came_after() {
        let history = vec![
            Message::user_text(MessageId::new("u"), "x".repeat(4000)),
            Message::Assistant(AssistantMessage {
                id: MessageId::new("a"),
                content: vec![AssistantBlock::ToolUse {
                    id: ToolUseId::new("t"),
                    name: "Read".into(),
                    input: json!({"file_path": "a"}),
                }],
                model: "m".into(),
                stop_reason: None,
                interrupted: false,
            }),
            Message::User(UserMessage {
                id: MessageId::new("r"),
                content: vec![UserBlock::ToolResult {
                    tool_use_id: ToolUseId::new("t"),
                    content: vec![ToolResultContent::text("y".repeat(400))],
                    is_error: false,
                    ui: None,
                }],
                origin: MessageOrigin::ToolResults,
            }),
        ];
        let usage = Usage {
            input_tokens: 900,
            output_tokens: 50,
            cache_read_tokens: 100,
            cache_write_tokens: 0,
            web_searches: 0,
        };
        let anchor = UsageAnchor::after_reply(2, &usage);
        let system = SystemPrompt::stable("s");
        assert_eq!(estimate(&system, &[], &history, Some(anchor)), 1050 + 100);
        // Without an anchor everything is estimated roughly.
        let rough = estimate(&system, &[], &history, None);
        assert_eq!(rough, 1 + 1000 + (1 + 9) + 100);
        // A stale anchor (history replaced by compaction) is ignored.
        let stale = UsageAnchor { len: 10, total: 5 };
        assert_eq!(estimate(&system, &[], &history, Some(stale)), rough);
    }
}
