//! The notifications of a turn's progress: `_riot/usage` after each
//! prompt turn and `_riot/compaction` around a compaction of the
//! session's history.

use agent_client_protocol::v1::schema::Meta;
use riot_protocol::{CompactionStrategy, Usage};
use serde::{Deserialize, Serialize};

/// Token counts in ACP's camelCase.
#[derive(
    schemars::JsonSchema, Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

impl From<Usage> for UsageFigures {
    fn from(u: Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
        }
    }
}

/// `_riot/usage`: one prompt turn's usage.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_riot/usage")]
#[serde(rename_all = "camelCase")]
pub struct UsageNotification {
    pub session_id: String,
    /// The model of the turn's last request.
    pub model: String,
    /// How many model requests the turn made.
    pub requests: u32,
    /// Summed over those requests.
    pub usage: UsageFigures,
    /// The side requests made while the turn ran (its subagents,
    /// compaction summaries, the auto-mode classifier, image descriptions,
    /// WebFetch's answers), as `riot exec`'s `side_usage` counts them.
    pub side_usage: UsageFigures,
    /// The session's cost so far, in US dollars (`Session::cost`); always
    /// sent, `null` when unknown.
    pub cost_usd: Option<f64>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/compaction`'s status.
#[derive(schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionStatus {
    Compacting,
    Compacted,
}

/// `_riot/compaction`: compaction started or finished.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcNotification,
)]
#[notification(method = "_riot/compaction")]
#[serde(rename_all = "camelCase")]
pub struct CompactionNotification {
    pub session_id: String,
    pub status: CompactionStatus,
    /// `clear_tool_results` or `summary`.
    pub strategy: CompactionStrategy,
    /// Estimated context tokens before and after (when `compacted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn an_unknown_cost_is_sent_as_null_never_left_out_or_zero() {
        let notification = UsageNotification {
            session_id: "s1".into(),
            model: "local".into(),
            requests: 1,
            usage: UsageFigures::default(),
            side_usage: UsageFigures::default(),
            cost_usd: None,
            meta: None,
        };
        let value = serde_json::to_value(&notification).unwrap();
        assert_eq!(value["costUsd"], Value::Null);
        assert!(value.as_object().unwrap().contains_key("costUsd"));
        let known = UsageNotification {
            cost_usd: Some(0.25),
            ..notification
        };
        assert_eq!(
            serde_json::to_value(&known).unwrap()["costUsd"],
            json!(0.25)
        );
    }
}
