//! The model table (docs/design.md §11): what differs per model, found by
//! model-name pattern and overridable in settings (docs/interfaces.md: `models`,
//! keyed by a glob on the model name).

use riot_protocol::{CachingStyle, ModelCapabilities, ReasoningReplay};
use serde::{Deserialize, Serialize};

/// One settings override; absent fields keep the table's value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caching: Option<CachingStyle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_replay: Option<ReasoningReplay>,
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
        thinking,
        parallel_tools: true,
        caching,
        reasoning_replay,
    }
}

/// The built-in table: first matching pattern wins.
fn builtin(model: &str) -> ModelCapabilities {
    use CachingStyle::{Automatic, Breakpoints, None as NoCache};
    use ReasoningReplay::{None as Never, ToolTurns};
    let m = model.to_ascii_lowercase();
    // Provider prefixes (OpenRouter `vendor/model`) do not change the model.
    let m = m.rsplit('/').next().unwrap_or(&m);
    let table: &[(&str, ModelCapabilities)] = &[
        (
            "claude-3-haiku*",
            caps(200_000, 4_096, true, false, Breakpoints, Never),
        ),
        (
            "claude-3-5-*",
            caps(200_000, 8_192, true, false, Breakpoints, Never),
        ),
        (
            "claude-haiku-4*",
            caps(200_000, 64_000, true, true, Breakpoints, Never),
        ),
        (
            "claude-opus-4*",
            caps(200_000, 32_000, true, true, Breakpoints, Never),
        ),
        (
            "claude-*",
            caps(200_000, 64_000, true, true, Breakpoints, Never),
        ),
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
    table
        .iter()
        .find(|(pattern, _)| glob_match(pattern, m))
        .map(|(_, c)| c.clone())
        .unwrap_or_default()
}

/// The model a provider gets when nothing names one but its key
/// (docs/interfaces.md: "the model table's default model").
pub fn default_model(kind: crate::ProviderKind) -> &'static str {
    match kind {
        crate::ProviderKind::Anthropic => "claude-sonnet-4-5",
        crate::ProviderKind::OpenAiChat | crate::ProviderKind::OpenAiResponses => "gpt-5",
    }
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
}
