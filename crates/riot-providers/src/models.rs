//! The model table (docs/design.md §11): what differs per model, found by
//! model-name pattern and overridable in settings (docs/interfaces.md: `models`,
//! keyed by a glob on the model name), and the price table beside it.

use riot_protocol::{CachingStyle, LongPromptPrice, ModelCapabilities, Price, ReasoningReplay};
use serde::{Deserialize, Serialize};

/// One settings override; absent fields keep the table's value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// PDF pages as document blocks (docs/interfaces.md: `models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caching: Option<CachingStyle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_replay: Option<ReasoningReplay>,
    /// The provider's own web search (docs/web.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_search: Option<bool>,
    /// US dollars per million tokens; replaces the table's price whole but
    /// for a `web_search` rate it does not name, which stays the table's.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "valid_price"
    )]
    pub price: Option<Price>,
}

/// A settings price whose rates are all dollars, none negative.
fn valid_price<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Price>, D::Error> {
    match Option::<Price>::deserialize(d)? {
        Some(price) if !price.is_valid() => Err(serde::de::Error::custom(
            "`price`: every rate is US dollars per million tokens, zero or more",
        )),
        price => Ok(price),
    }
}

impl ModelOverride {
    fn apply(&self, caps: &mut ModelCapabilities) {
        if let Some(v) = self.context_window {
            caps.context_window = v;
        }
        if let Some(v) = self.max_output_tokens {
            caps.max_output_tokens = v;
        }
        if let Some(v) = self.vision {
            caps.vision = v;
        }
        if let Some(v) = self.documents {
            caps.documents = v;
        }
        if let Some(v) = self.thinking {
            caps.thinking = v;
        }
        if let Some(v) = self.parallel_tools {
            caps.parallel_tools = v;
        }
        if let Some(v) = self.caching {
            caps.caching = v;
        }
        if let Some(v) = self.reasoning_replay {
            caps.reasoning_replay = v;
        }
        if let Some(v) = self.web_search {
            caps.web_search = v;
        }
        if let Some(v) = self.price {
            // A settings price without a search rate keeps the table's.
            let web_search = v.web_search.or(caps.price.and_then(|p| p.web_search));
            caps.price = Some(Price { web_search, ..v });
        }
    }
}

fn caps(
    context_window: u64,
    max_output_tokens: u32,
    vision: bool,
    thinking: bool,
    caching: CachingStyle,
    reasoning_replay: ReasoningReplay,
) -> ModelCapabilities {
    ModelCapabilities {
        context_window,
        max_output_tokens,
        vision,
        documents: false,
        thinking,
        web_search: false,
        parallel_tools: true,
        caching,
        reasoning_replay,
        price: None,
    }
}

/// An Anthropic model: it also reads PDF pages as document blocks and
/// has the API's web search (all but Claude 3 Haiku, see [`builtin`]).
fn claude(context_window: u64, max_output_tokens: u32, thinking: bool) -> ModelCapabilities {
    ModelCapabilities {
        documents: true,
        web_search: true,
        ..caps(
            context_window,
            max_output_tokens,
            true,
            thinking,
            CachingStyle::Breakpoints,
            ReasoningReplay::None,
        )
    }
}

/// The built-in table: first matching pattern wins.
fn builtin(model: &str) -> ModelCapabilities {
    use CachingStyle::{Automatic, None as NoCache};
    use ReasoningReplay::{None as Never, ToolTurns};
    let m = model.to_ascii_lowercase();
    // Provider prefixes (OpenRouter `vendor/model`) do not change the model.
    let m = m.rsplit('/').next().unwrap_or(&m);
    let table: &[(&str, ModelCapabilities)] = &[
        (
            "claude-3-haiku*",
            ModelCapabilities {
                web_search: false,
                ..claude(200_000, 4_096, false)
            },
        ),
        ("claude-3-5-*", claude(200_000, 8_192, false)),
        ("claude-haiku-4*", claude(200_000, 64_000, true)),
        ("claude-opus-4*", claude(200_000, 32_000, true)),
        ("claude-*", claude(200_000, 64_000, true)),
        (
            "gpt-4o*",
            caps(128_000, 16_384, true, false, Automatic, Never),
        ),
        (
            "gpt-4.1*",
            caps(1_047_576, 32_768, true, false, Automatic, Never),
        ),
        (
            "gpt-5*",
            caps(400_000, 128_000, true, true, Automatic, Never),
        ),
        (
            "gpt-*",
            caps(128_000, 16_384, true, false, Automatic, Never),
        ),
        ("o1*", caps(200_000, 100_000, true, true, Automatic, Never)),
        ("o3*", caps(200_000, 100_000, true, true, Automatic, Never)),
        ("o4*", caps(200_000, 100_000, true, true, Automatic, Never)),
        // Older DeepSeek reasoners reject `reasoning_content` in requests.
        (
            "deepseek-reasoner",
            caps(128_000, 64_000, false, true, Automatic, Never),
        ),
        (
            "deepseek-chat",
            caps(128_000, 8_192, false, false, Automatic, Never),
        ),
        // Current DeepSeek and Kimi thinking models require it back on
        // every assistant message that made tool calls.
        (
            "deepseek-*",
            caps(128_000, 64_000, false, true, Automatic, ToolTurns),
        ),
        (
            "kimi-*thinking*",
            caps(256_000, 32_000, false, true, Automatic, ToolTurns),
        ),
        (
            "kimi-k2*",
            caps(256_000, 32_000, false, true, Automatic, ToolTurns),
        ),
        (
            "kimi-*",
            caps(128_000, 8_192, false, false, Automatic, Never),
        ),
        (
            "qwen*-vl*",
            caps(128_000, 8_192, true, false, NoCache, Never),
        ),
        ("qwen*", caps(128_000, 8_192, false, true, NoCache, Never)),
        ("glm-*", caps(128_000, 16_384, false, true, NoCache, Never)),
    ];
    let mut caps = table
        .iter()
        .find(|(pattern, _)| glob_match(pattern, m))
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    // OpenAI's searching models: the Responses API's `web_search` (not
    // the nano models, nor o3-mini).
    if ["gpt-4o*", "gpt-4.1*", "gpt-5*", "o3*", "o4*"]
        .iter()
        .any(|p| glob_match(p, m))
        && !m.contains("nano")
        && !glob_match("o3-mini*", m)
    {
        caps.web_search = true;
    }
    // Both providers charge $10 per 1,000 searches on top of tokens.
    caps.price = builtin_price(m).map(|p| {
        if caps.web_search {
            p.with_web_search(WEB_SEARCH_PER_THOUSAND)
        } else {
            p
        }
    });
    caps
}

/// What Anthropic's web search and OpenAI's `web_search` tool cost, in US
/// dollars per 1,000 searches (both pricing pages named at
/// [`builtin_price`]; OpenAI bills the pages a search reads as input
/// tokens, which the usage already counts).
const WEB_SEARCH_PER_THOUSAND: f64 = 10.0;

/// Anthropic's rates: the 5-minute cache write (Riot never asks for the
/// 1-hour one) and the cache hit.
const fn anthropic(input: f64, cache_write: f64, cache_read: f64, output: f64) -> Price {
    Price::new(input, output, cache_write, cache_read)
}

/// OpenAI's and DeepSeek's rates: writing the cache costs what input costs.
const fn cached(input: f64, cache_read: f64, output: f64) -> Price {
    Price::new(input, output, input, cache_read)
}

/// The price of a model by its exact name or dated snapshot (`-20??-…`,
/// `-2025…`); a model not named here has no price, never a guessed one.
///
/// US dollars per million tokens, from the providers' pricing pages as
/// they read on 2026-12-01: <https://platform.claude.com/docs/en/about-claude/pricing>,
/// <https://developers.openai.com/api/docs/pricing> and
/// <https://api-docs.deepseek.com/quick_start/pricing>; GPT-5.4's and
/// 5.5's long-prompt rule from OpenAI's model page
/// (<https://developers.openai.com/api/docs/models/gpt-5.4>, read
/// 2026-12-03, which also confirms GPT-5.4's rates). Standard tier
/// only: batch, priority/fast and regional rates are not modelled.
/// DeepSeek bills half its rates off-peak; the table holds the peak ones,
/// so its figures are an upper bound. Settings override any of these
/// (`models` → `price`).
fn builtin_price(m: &str) -> Option<Price> {
    anthropic_price(m)
        .or_else(|| openai_price(m))
        .or_else(|| deepseek_price(m))
}

/// The price in the first row of `table` with a pattern matching `m`.
fn first_match(table: &[(&[&str], Price)], m: &str) -> Option<Price> {
    table
        .iter()
        .find(|(patterns, _)| patterns.iter().any(|p| glob_match(p, m)))
        .map(|(_, price)| *price)
}

/// Anthropic's prices, by model name pattern.
fn anthropic_price(m: &str) -> Option<Price> {
    // Sonnet 4 and 4.5: a prompt over 200k tokens (1M-context beta) pays
    // the long-context rates on the whole request.
    let sonnet_4_long = anthropic(3.0, 3.75, 0.30, 15.0).with_long_prompt(LongPromptPrice {
        above_tokens: 200_000,
        input: 6.0,
        output: 22.5,
        cache_write: 7.5,
        cache_read: 0.60,
    });
    // Haiku 5.5: a prompt over 100k tokens pays five times the rates.
    let haiku_5_5 = anthropic(0.10, 0.125, 0.01, 0.50).with_long_prompt(LongPromptPrice {
        above_tokens: 100_000,
        input: 0.50,
        output: 2.50,
        cache_write: 0.625,
        cache_read: 0.05,
    });
    let table: &[(&[&str], Price)] = &[
        (&["claude-fable-5-2*"], anthropic(8.0, 10.0, 0.20, 40.0)),
        (
            &["claude-fable-5-1*", "claude-mythos-5-1*"],
            anthropic(10.0, 12.5, 0.25, 50.0),
        ),
        (
            &[
                "claude-fable-5",
                "claude-fable-5-20*",
                "claude-mythos-5",
                "claude-mythos-5-20*",
            ],
            anthropic(10.0, 12.5, 1.0, 50.0),
        ),
        (&["claude-opus-5-5*"], anthropic(4.0, 5.0, 0.20, 20.0)),
        (
            &[
                "claude-opus-5",
                "claude-opus-5-20*",
                "claude-opus-4-8*",
                "claude-opus-4-7*",
                "claude-opus-4-6*",
                "claude-opus-4-5*",
            ],
            anthropic(5.0, 6.25, 0.50, 25.0),
        ),
        (
            &[
                "claude-opus-4-1*",
                "claude-opus-4-0",
                "claude-opus-4-20*",
                "claude-3-opus*",
            ],
            anthropic(15.0, 18.75, 1.50, 75.0),
        ),
        (&["claude-sonnet-5-5*"], anthropic(2.0, 2.5, 0.10, 10.0)),
        (
            &["claude-sonnet-5", "claude-sonnet-5-20*"],
            anthropic(2.0, 2.5, 0.20, 10.0),
        ),
        (&["claude-sonnet-4-6*"], anthropic(3.0, 3.75, 0.30, 15.0)),
        (
            &[
                "claude-sonnet-4-5*",
                "claude-sonnet-4-0",
                "claude-sonnet-4-20*",
            ],
            sonnet_4_long,
        ),
        (
            &["claude-3-7-sonnet*", "claude-3-5-sonnet*"],
            anthropic(3.0, 3.75, 0.30, 15.0),
        ),
        (&["claude-haiku-5-5*"], haiku_5_5),
        (&["claude-haiku-4-5*"], anthropic(1.0, 1.25, 0.10, 5.0)),
        (&["claude-3-5-haiku*"], anthropic(0.80, 1.0, 0.08, 4.0)),
        (&["claude-3-haiku*"], anthropic(0.25, 0.30, 0.03, 1.25)),
    ];
    first_match(table, m)
}

/// OpenAI's prices, by model name pattern. The pro models take no cached
/// input.
fn openai_price(m: &str) -> Option<Price> {
    // GPT-5.4 and 5.5 (and their pro models), with their 1.05M windows:
    // a prompt over 272K input tokens pays twice the input rates and 1.5
    // times the output rate, on the whole request (OpenAI's model pages).
    let openai_long = |price: Price| {
        price.with_long_prompt(LongPromptPrice {
            above_tokens: 272_000,
            input: price.input * 2.0,
            output: price.output * 1.5,
            cache_write: price.cache_write * 2.0,
            cache_read: price.cache_read * 2.0,
        })
    };
    let table: &[(&[&str], Price)] = &[
        (
            &[
                "gpt-5.5-pro",
                "gpt-5.5-pro-20*",
                "gpt-5.4-pro",
                "gpt-5.4-pro-20*",
            ],
            openai_long(Price::flat(30.0, 180.0)),
        ),
        (
            &["gpt-5.5", "gpt-5.5-20*"],
            openai_long(cached(5.0, 0.50, 30.0)),
        ),
        (
            &["gpt-5.4", "gpt-5.4-20*"],
            openai_long(cached(2.50, 0.25, 15.0)),
        ),
        (
            &["gpt-5.4-mini", "gpt-5.4-mini-20*"],
            cached(0.75, 0.075, 4.50),
        ),
        (
            &["gpt-5.4-nano", "gpt-5.4-nano-20*"],
            cached(0.20, 0.02, 1.25),
        ),
        (
            &["gpt-5.2-pro", "gpt-5.2-pro-20*"],
            Price::flat(21.0, 168.0),
        ),
        (
            &["gpt-5.2", "gpt-5.2-20*", "gpt-5.2-codex"],
            cached(1.75, 0.175, 14.0),
        ),
        (
            &[
                "gpt-5.1",
                "gpt-5.1-20*",
                "gpt-5.1-codex",
                "gpt-5",
                "gpt-5-20*",
                "gpt-5-codex",
                "gpt-5-chat-latest",
            ],
            cached(1.25, 0.125, 10.0),
        ),
        (
            &["gpt-5.1-codex-mini", "gpt-5-mini", "gpt-5-mini-20*"],
            cached(0.25, 0.025, 2.0),
        ),
        (&["gpt-5-nano", "gpt-5-nano-20*"], cached(0.05, 0.005, 0.40)),
        (&["gpt-5-pro", "gpt-5-pro-20*"], Price::flat(15.0, 120.0)),
        (&["gpt-4.1", "gpt-4.1-20*"], cached(2.0, 0.50, 8.0)),
        (
            &["gpt-4.1-mini", "gpt-4.1-mini-20*"],
            cached(0.40, 0.10, 1.60),
        ),
        (
            &["gpt-4.1-nano", "gpt-4.1-nano-20*"],
            cached(0.10, 0.025, 0.40),
        ),
        (&["gpt-4o", "gpt-4o-20*"], cached(2.50, 1.25, 10.0)),
        (
            &["gpt-4o-mini", "gpt-4o-mini-20*"],
            cached(0.15, 0.075, 0.60),
        ),
        (&["o3-pro", "o3-pro-20*"], Price::flat(20.0, 80.0)),
        (&["o3", "o3-20*"], cached(2.0, 0.50, 8.0)),
        (&["o3-mini", "o3-mini-20*"], cached(1.10, 0.55, 4.40)),
        (&["o4-mini", "o4-mini-20*"], cached(1.10, 0.275, 4.40)),
        (&["o1", "o1-20*"], cached(15.0, 7.50, 60.0)),
    ];
    first_match(table, m)
}

/// DeepSeek's prices (peak rates), by model name pattern.
fn deepseek_price(m: &str) -> Option<Price> {
    let table: &[(&[&str], Price)] = &[
        // DeepSeek (peak rates). The retired `deepseek-v4-flash` names are
        // served by the current Flash model at its price; `deepseek-chat`
        // and `deepseek-reasoner` no longer answer and have none.
        (
            &[
                "deepseek-flash",
                "deepseek-v4-flash",
                "deepseek-v4-flash-vision-exp",
            ],
            cached(0.30, 0.006, 1.20),
        ),
        (&["deepseek-v4-pro"], cached(1.32, 0.044, 3.96)),
    ];
    first_match(table, m)
}

/// Capabilities of `model`: the built-in table, then each matching
/// settings override in order (later ones win field by field).
pub fn capabilities_for(model: &str, overrides: &[(String, ModelOverride)]) -> ModelCapabilities {
    let mut caps = builtin(model);
    for (pattern, o) in overrides {
        if glob_match(&pattern.to_ascii_lowercase(), &model.to_ascii_lowercase()) {
            o.apply(&mut caps);
        }
    }
    caps
}

/// `*` matches any run of characters (including none); `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_replay_is_a_per_model_policy() {
        let none: &[(String, ModelOverride)] = &[];
        assert_eq!(
            capabilities_for("gpt-5.1", none).reasoning_replay,
            ReasoningReplay::None
        );
        assert_eq!(
            capabilities_for("o3-mini", none).reasoning_replay,
            ReasoningReplay::None
        );
        assert_eq!(
            capabilities_for("deepseek-v4-flash", none).reasoning_replay,
            ReasoningReplay::ToolTurns
        );
        assert_eq!(
            capabilities_for("deepseek-reasoner", none).reasoning_replay,
            ReasoningReplay::None
        );
        assert_eq!(
            capabilities_for("kimi-k2-thinking", none).reasoning_replay,
            ReasoningReplay::ToolTurns
        );
        assert_eq!(
            capabilities_for("claude-sonnet-4-5", none).caching,
            CachingStyle::Breakpoints
        );
        assert_eq!(
            capabilities_for("deepseek/deepseek-v4-pro", none).reasoning_replay,
            ReasoningReplay::ToolTurns
        );
        let unknown = capabilities_for("my-local-llama", none);
        assert_eq!(
            (unknown.context_window, unknown.max_output_tokens),
            (128_000, 8_192)
        );
    }

    #[test]
    fn vision_comes_from_the_table_and_a_models_override_changes_it() {
        let none: &[(String, ModelOverride)] = &[];
        assert!(capabilities_for("claude-sonnet-4-5", none).vision);
        assert!(capabilities_for("gpt-4o", none).vision);
        assert!(!capabilities_for("deepseek-v4-pro", none).vision);
        assert!(!capabilities_for("my-local-llama", none).vision);
        // The settings shape: `"models": {"deepseek-*": {"vision": false}}`.
        let parse = |glob: &str, json: &str| -> (String, ModelOverride) {
            (glob.to_owned(), serde_json::from_str(json).unwrap())
        };
        let overrides = vec![
            parse("claude-*", r#"{"vision": false}"#),
            parse("deepseek-*", r#"{"vision": true}"#),
        ];
        assert!(!capabilities_for("claude-sonnet-4-5", &overrides).vision);
        assert!(capabilities_for("deepseek-v4-pro", &overrides).vision);
        assert!(capabilities_for("gpt-4o", &overrides).vision);
    }

    #[test]
    fn documents_are_for_anthropic_models_unless_settings_say_otherwise() {
        let none: &[(String, ModelOverride)] = &[];
        for model in [
            "claude-3-haiku-20240307",
            "claude-3-5-haiku-latest",
            "claude-haiku-4-5",
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "anthropic/claude-sonnet-4-5",
        ] {
            assert!(capabilities_for(model, none).documents, "{model}");
        }
        for model in ["gpt-5", "gpt-4o", "deepseek-v4-pro", "my-local-llama"] {
            assert!(!capabilities_for(model, none).documents, "{model}");
        }
        // The settings shape: `"models": {"my-*": {"documents": true}}`.
        let overrides: Vec<(String, ModelOverride)> = serde_json::from_value(serde_json::json!([
            ["claude-opus-*", {"documents": false}],
            ["my-*", {"documents": true}],
        ]))
        .unwrap();
        assert!(!capabilities_for("claude-opus-4-1", &overrides).documents);
        assert!(capabilities_for("claude-sonnet-4-5", &overrides).documents);
        assert!(capabilities_for("my-local-llama", &overrides).documents);
    }

    #[test]
    fn settings_override_the_table_field_by_field() {
        let overrides = vec![(
            "deepseek-*".to_owned(),
            ModelOverride {
                reasoning_replay: Some(ReasoningReplay::All),
                context_window: Some(64_000),
                ..ModelOverride::default()
            },
        )];
        let caps = capabilities_for("deepseek-v4-flash", &overrides);
        assert_eq!(caps.reasoning_replay, ReasoningReplay::All);
        assert_eq!(caps.context_window, 64_000);
        assert_eq!(
            caps.max_output_tokens, 64_000,
            "untouched fields keep the table value"
        );
        assert!(glob_match("claude-*", "claude-opus-4-5"));
        assert!(glob_match("*thinking*", "kimi-k2-thinking-turbo"));
        assert!(!glob_match("gpt-*", "chatgpt-4o"));
    }

    #[test]
    fn prices_are_found_by_name_and_snapshot_and_unknown_models_have_none() {
        let none: &[(String, ModelOverride)] = &[];
        let price = |m: &str| capabilities_for(m, none).price;
        let sonnet = price("claude-sonnet-4-5-20250929").expect("a price");
        assert_eq!(
            (
                sonnet.input,
                sonnet.output,
                sonnet.cache_write,
                sonnet.cache_read
            ),
            (3.0, 15.0, 3.75, 0.30)
        );
        assert_eq!(price("claude-sonnet-4-5"), Some(sonnet));
        assert_eq!(
            price("claude-opus-4-20250514").map(|p| p.input),
            Some(15.0),
            "Opus 4.0 is not priced as 4.5"
        );
        assert_eq!(
            price("claude-opus-4-5-20251101").map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(price("claude-sonnet-5-5").map(|p| p.cache_read), Some(0.10));
        assert_eq!(price("claude-sonnet-5").map(|p| p.cache_read), Some(0.20));
        let gpt5 = price("gpt-5-2025-08-07").expect("a price");
        assert_eq!(
            (gpt5.input, gpt5.output, gpt5.cache_write, gpt5.cache_read),
            (1.25, 10.0, 1.25, 0.125)
        );
        assert_eq!(price("openai/gpt-5-mini").map(|p| p.input), Some(0.25));
        // GPT-5.4's long prompts: 2× input (cached too), 1.5× output.
        let gpt54 = price("gpt-5.4").expect("a price");
        assert_eq!(
            gpt54.long_prompt,
            Some(LongPromptPrice {
                above_tokens: 272_000,
                input: 5.0,
                output: 22.5,
                cache_write: 5.0,
                cache_read: 0.5,
            })
        );
        assert_eq!(
            price("gpt-5.5-pro")
                .and_then(|p| p.long_prompt)
                .map(|l| (l.input, l.output)),
            Some((60.0, 270.0))
        );
        assert_eq!(price("gpt-5.4-mini").and_then(|p| p.long_prompt), None);
        // The provider's search, priced per 1,000, only where a model has it.
        assert_eq!(
            price("claude-sonnet-4-5").and_then(|p| p.web_search),
            Some(10.0)
        );
        assert_eq!(price("gpt-5").and_then(|p| p.web_search), Some(10.0));
        assert_eq!(price("deepseek-v4-pro").and_then(|p| p.web_search), None);
        for model in [
            "gpt-4.1-nano",
            "gpt-5-nano",
            "o3-mini",
            "claude-3-haiku-20240307",
        ] {
            assert!(!capabilities_for(model, none).web_search, "{model}");
        }
        for model in ["gpt-4.1", "o3", "o4-mini", "gpt-5-mini", "claude-haiku-4-5"] {
            assert!(capabilities_for(model, none).web_search, "{model}");
        }
        // A settings price without a search rate keeps the table's.
        let overridden: Vec<(String, ModelOverride)> = vec![(
            "claude-*".into(),
            ModelOverride {
                price: Some(Price::flat(1.0, 2.0)),
                ..ModelOverride::default()
            },
        )];
        let kept = capabilities_for("claude-sonnet-4-5", &overridden)
            .price
            .unwrap();
        assert_eq!((kept.input, kept.web_search), (1.0, Some(10.0)));
        assert_eq!(price("deepseek-v4-pro").map(|p| p.output), Some(3.96));
        // Near misses are not guessed: a new model has no price until the
        // table or settings give it one.
        for unknown in [
            "gpt-5.9",
            "claude-sonnet-9",
            "deepseek-chat",
            "my-local-llama",
            "gpt-5-turbo",
        ] {
            assert_eq!(price(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn every_built_in_price_is_valid() {
        for model in [
            "claude-fable-5-2",
            "claude-fable-5-1",
            "claude-fable-5",
            "claude-opus-5-5",
            "claude-opus-5",
            "claude-opus-4-1",
            "claude-sonnet-5-5",
            "claude-sonnet-4-6",
            "claude-sonnet-4-0",
            "claude-haiku-5-5",
            "claude-haiku-4-5",
            "claude-3-5-haiku-latest",
            "claude-3-haiku-20240307",
            "gpt-5.5-pro",
            "gpt-5.5",
            "gpt-5.4-nano",
            "gpt-5.2",
            "gpt-5.1-codex-mini",
            "gpt-5-nano",
            "gpt-5-pro",
            "gpt-4.1-mini",
            "gpt-4o-mini",
            "o3-pro",
            "o3",
            "o4-mini",
            "o1",
            "deepseek-flash",
        ] {
            let price = capabilities_for(model, &[]).price;
            assert!(price.is_some_and(|p| p.is_valid()), "{model}: {price:?}");
        }
    }

    #[test]
    fn a_settings_price_replaces_the_table_price_or_gives_one() {
        let mine = Price::new(0.5, 1.5, 0.5, 0.05);
        let overrides: Vec<(String, ModelOverride)> = serde_json::from_value(serde_json::json!([
            ["claude-*", {"price": {"input": 0.5, "output": 1.5, "cache_write": 0.5, "cache_read": 0.05}}],
            ["my-*", {"price": {"input": 0, "output": 0, "cache_write": 0, "cache_read": 0}}],
        ]))
        .unwrap();
        // Its token rates replace the table's; the search rate it does not
        // name stays the table's.
        assert_eq!(
            capabilities_for("claude-sonnet-4-5", &overrides).price,
            Some(mine.with_web_search(10.0))
        );
        assert_eq!(
            capabilities_for("my-local-llama", &overrides).price,
            Some(Price::new(0.0, 0.0, 0.0, 0.0)),
            "a free local model is free because settings say so"
        );
        assert_eq!(
            capabilities_for("gpt-5", &overrides).price.map(|p| p.input),
            Some(1.25),
            "a model no override names keeps the table's price"
        );
        let negative = serde_json::from_value::<ModelOverride>(serde_json::json!(
            {"price": {"input": -1, "output": 1, "cache_write": 1, "cache_read": 1}}
        ))
        .unwrap_err()
        .to_string();
        assert!(
            negative.contains("every rate is US dollars per million tokens, zero or more"),
            "{negative}"
        );
    }
}
