//! What model requests cost: a model's [`Price`] (from the model table or
//! settings) and a session's running [`SessionCost`].
//!
//! An unknown price is `None`, never zero: a session whose requests include
//! one without a price has an unknown cost, and every face shows it as
//! unknown.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::Usage;

/// A model's price in US dollars per million tokens (docs/interfaces.md:
/// `models` → `price`). `input` is for input neither read from nor written
/// to the cache, as [`Usage::input_tokens`] counts it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
    /// Dearer rates for a request whose prompt is long (Anthropic's
    /// long-context pricing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_prompt: Option<LongPromptPrice>,
    /// US dollars per 1,000 of the provider's own web searches; `None`
    /// when unknown, which makes a request that searched unpriced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_search: Option<f64>,
}

/// The rates of a request whose prompt — input, cache reads and cache
/// writes — is over `above_tokens`: they apply to all of its tokens,
/// output included.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LongPromptPrice {
    pub above_tokens: u64,
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

impl Price {
    /// Rates where the cache costs what input costs.
    pub const fn flat(input: f64, output: f64) -> Self {
        Self::new(input, output, input, input)
    }

    /// The four rates, with no long-prompt tier.
    pub const fn new(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Self {
        Self {
            input,
            output,
            cache_write,
            cache_read,
            long_prompt: None,
            web_search: None,
        }
    }

    /// Adds a long-prompt tier.
    pub const fn with_long_prompt(mut self, tier: LongPromptPrice) -> Self {
        self.long_prompt = Some(tier);
        self
    }

    /// Adds the price of the provider's web search, per 1,000 searches.
    pub const fn with_web_search(mut self, per_thousand: f64) -> Self {
        self.web_search = Some(per_thousand);
        self
    }

    /// Whether every rate is a number and not negative (settings are
    /// checked with it).
    pub fn is_valid(&self) -> bool {
        let mut rates = vec![self.input, self.output, self.cache_write, self.cache_read];
        if let Some(long) = &self.long_prompt {
            rates.extend([long.input, long.output, long.cache_write, long.cache_read]);
        }
        rates.extend(self.web_search);
        rates.into_iter().all(|r| r.is_finite() && r >= 0.0)
    }

    /// What one request with `usage` costs, in US dollars; `None` when it
    /// made web searches and their price is unknown.
    pub fn cost(&self, usage: &Usage) -> Option<f64> {
        let searches = match (usage.web_searches, self.web_search) {
            (0, _) => 0.0,
            (n, Some(per_thousand)) => n as f64 * per_thousand / 1_000.0,
            (_, None) => return None,
        };
        Some(self.token_cost(usage) + searches)
    }

    /// What one request's tokens cost, in US dollars.
    fn token_cost(&self, usage: &Usage) -> f64 {
        let (input, output, cache_write, cache_read) = match &self.long_prompt {
            Some(long) if usage.total_input() > long.above_tokens => {
                (long.input, long.output, long.cache_write, long.cache_read)
            }
            _ => (self.input, self.output, self.cache_write, self.cache_read),
        };
        (usage.input_tokens as f64 * input
            + usage.output_tokens as f64 * output
            + usage.cache_write_tokens as f64 * cache_write
            + usage.cache_read_tokens as f64 * cache_read)
            / 1_000_000.0
    }
}

/// What a session has cost so far: every model request it made, in this
/// process and the earlier ones that wrote its transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionCost {
    /// US dollars; `None` once any request's model had no price (or the
    /// session made requests before Riot recorded what they cost).
    pub usd: Option<f64>,
    /// The main loop's requests.
    pub usage: Usage,
    /// Side requests: compaction summaries, auto mode's classifier, and
    /// the subagents the Task tool runs.
    pub side_usage: Usage,
    /// How many requests were counted.
    #[serde(default)]
    pub requests: u64,
    /// The models that had no price, in the order they were first used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<String>,
}

impl Default for SessionCost {
    /// A session that has made no request: it has cost nothing.
    fn default() -> Self {
        Self {
            usd: Some(0.0),
            usage: Usage::default(),
            side_usage: Usage::default(),
            requests: 0,
            unpriced: Vec::new(),
        }
    }
}

impl SessionCost {
    /// Adds one request of `model`; `price` is the model's, if known.
    /// Returns the request's own cost.
    pub fn add(
        &mut self,
        model: &str,
        usage: &Usage,
        side: bool,
        price: Option<&Price>,
    ) -> Option<f64> {
        if side {
            self.side_usage.add(usage);
        } else {
            self.usage.add(usage);
        }
        self.requests += 1;
        let cost = price.and_then(|p| p.cost(usage));
        match cost {
            Some(c) => {
                if let Some(total) = &mut self.usd {
                    *total += c;
                }
            }
            None => {
                self.usd = None;
                if !self.unpriced.iter().any(|m| m == model) {
                    self.unpriced.push(model.to_owned());
                }
            }
        }
        cost
    }

    /// All tokens, main and side.
    pub fn total_usage(&self) -> Usage {
        let mut total = self.usage;
        total.add(&self.side_usage);
        total
    }
}

/// A US dollar figure for people: `$0.0123` below a dollar (four
/// decimals, so a cheap request is not shown as `$0.00`), `$1.23` above;
/// unknown is `—`.
pub fn format_usd(usd: Option<f64>) -> String {
    match usd {
        None => "—".to_owned(),
        Some(v) if v < 1.0 => format!("${v:.4}"),
        Some(v) => format!("${v:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
            web_searches: 0,
        }
    }

    #[test]
    fn each_kind_of_token_pays_its_own_rate() {
        let price = Price::new(3.0, 15.0, 3.75, 0.30);
        // 1,000 × 3 + 500 × 15 + 2,000 × 3.75 + 10,000 × 0.30 = 21,000 per million.
        let cost = price.cost(&usage(1_000, 500, 10_000, 2_000)).unwrap();
        assert!((cost - 0.021).abs() < 1e-12, "{cost}");
    }

    #[test]
    fn a_long_prompt_pays_the_dearer_rates_on_every_token() {
        let price = Price::new(0.10, 0.50, 0.125, 0.01).with_long_prompt(LongPromptPrice {
            above_tokens: 100_000,
            input: 0.50,
            output: 2.50,
            cache_write: 0.625,
            cache_read: 0.05,
        });
        // A prompt of exactly 100,000 tokens is not over the threshold.
        let at = price.cost(&usage(20_000, 1_000, 80_000, 0)).unwrap();
        assert!((at - (2_000.0 + 500.0 + 800.0) / 1e6).abs() < 1e-12, "{at}");
        let over = price.cost(&usage(20_001, 1_000, 80_000, 0)).unwrap();
        let expected = (20_001.0 * 0.50 + 1_000.0 * 2.50 + 80_000.0 * 0.05) / 1e6;
        assert!((over - expected).abs() < 1e-12, "{over}");
    }

    #[test]
    fn web_searches_pay_their_rate_and_an_unknown_rate_makes_the_request_unpriced() {
        let searched = Usage {
            web_searches: 3,
            ..usage(1_000, 0, 0, 0)
        };
        let price = Price::flat(3.0, 15.0).with_web_search(10.0);
        // 1,000 × 3 per million, and 3 searches at $10 per 1,000.
        let cost = price.cost(&searched).unwrap();
        assert!((cost - (0.003 + 0.03)).abs() < 1e-12, "{cost}");
        assert_eq!(Price::flat(3.0, 15.0).cost(&searched), None);
        let mut total = SessionCost::default();
        assert_eq!(
            total.add("m", &searched, false, Some(&Price::flat(3.0, 15.0))),
            None
        );
        assert_eq!(total.usd, None);
        assert_eq!(total.unpriced, vec!["m".to_owned()]);
        // A request that did not search needs no search rate.
        assert!(Price::flat(3.0, 15.0).cost(&usage(1, 0, 0, 0)).is_some());
    }

    #[test]
    fn settings_name_every_rate_and_misspell_none() {
        let p: Price = serde_json::from_str(
            r#"{"input": 2, "output": 8, "cache_write": 2, "cache_read": 0.5}"#,
        )
        .unwrap();
        assert_eq!(p, Price::new(2.0, 8.0, 2.0, 0.5));
        assert!(p.is_valid());
        let e = serde_json::from_str::<Price>(
            r#"{"input": 2, "output": 8, "cache_write": 2, "cached": 0.5}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `cached`"), "{e}");
        let e = serde_json::from_str::<Price>(r#"{"input": 2, "output": 8}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field `cache_write`"), "{e}");
        assert!(!Price::new(-1.0, 8.0, 1.0, 1.0).is_valid());
    }

    #[test]
    fn one_unknown_price_makes_the_total_unknown_for_good() {
        let mut cost = SessionCost::default();
        let price = Price::new(1.0, 2.0, 1.25, 0.1);
        assert_eq!(
            cost.add("a", &usage(1_000_000, 0, 0, 0), false, Some(&price)),
            Some(1.0)
        );
        assert_eq!(cost.usd, Some(1.0));
        assert_eq!(cost.add("local", &usage(10, 10, 0, 0), true, None), None);
        assert_eq!(cost.usd, None);
        cost.add("a", &usage(1_000_000, 0, 0, 0), false, Some(&price));
        assert_eq!(cost.usd, None, "still unknown after a priced request");
        assert_eq!(cost.unpriced, vec!["local".to_owned()]);
        assert_eq!(cost.requests, 3);
        assert_eq!(cost.usage.input_tokens, 2_000_000);
        assert_eq!(cost.side_usage.output_tokens, 10);
        assert_eq!(cost.total_usage().input_tokens, 2_000_010);
    }

    #[test]
    fn dollars_are_shown_so_that_small_sums_are_not_zero_and_unknown_is_a_dash() {
        assert_eq!(format_usd(None), "—");
        assert_eq!(format_usd(Some(0.0)), "$0.0000");
        assert_eq!(format_usd(Some(0.00123)), "$0.0012");
        assert_eq!(format_usd(Some(12.345)), "$12.35");
    }
}
