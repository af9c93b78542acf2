//! The models an endpoint serves: `GET /v1/models` on Anthropic
//! (`{"data": [{"id", "display_name"}], "has_more", "last_id"}`, paged
//! with `after_id`) and `GET /models` on OpenAI-compatible servers
//! (`{"data": [{"id"}]}`).

use serde_json::Value;

use crate::config::ProviderKind;

/// One model an endpoint lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedModel {
    pub id: String,
    /// A name for people (Anthropic's `display_name`).
    pub display_name: Option<String>,
}

/// Words in the ids of OpenAI's models that do not chat (embeddings,
/// speech, images, moderation): left out of what api.openai.com lists.
const NOT_CHAT: [&str; 10] = [
    "embedding",
    "tts",
    "whisper",
    "dall-e",
    "moderation",
    "image",
    "audio",
    "realtime",
    "transcribe",
    "search",
];

/// One page of a listing: its models, and where the next page starts
/// (Anthropic's `last_id` while `has_more`).
pub fn parse(
    kind: ProviderKind,
    body: &Value,
    openai_host: bool,
) -> (Vec<ListedModel>, Option<String>) {
    let models = body["data"]
        .as_array()
        .map(|data| {
            data.iter()
                .filter_map(|m| {
                    let id = m["id"].as_str()?.trim();
                    (!id.is_empty()).then(|| ListedModel {
                        id: id.to_owned(),
                        display_name: m["display_name"]
                            .as_str()
                            .map(str::trim)
                            .filter(|n| !n.is_empty())
                            .map(str::to_owned),
                    })
                })
                .filter(|m| !openai_host || !NOT_CHAT.iter().any(|w| m.id.contains(w)))
                .collect()
        })
        .unwrap_or_default();
    let next = match kind {
        ProviderKind::Anthropic if body["has_more"] == Value::Bool(true) => {
            body["last_id"].as_str().map(str::to_owned)
        }
        _ => None,
    };
    (models, next)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // test code
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn anthropic_pages_and_names() {
        let body = json!({
            "data": [
                {"type": "model", "id": "claude-opus-4-1", "display_name": "Claude Opus 4.1", "created_at": "2025-08-05T00:00:00Z"},
                {"type": "model", "id": "claude-haiku-4-5", "display_name": "", "created_at": "2025-10-01T00:00:00Z"}
            ],
            "has_more": true, "first_id": "claude-opus-4-1", "last_id": "claude-haiku-4-5"
        });
        let (models, next) = parse(ProviderKind::Anthropic, &body, false);
        assert_eq!(
            models,
            [
                ListedModel {
                    id: "claude-opus-4-1".into(),
                    display_name: Some("Claude Opus 4.1".into())
                },
                ListedModel {
                    id: "claude-haiku-4-5".into(),
                    display_name: None
                },
            ]
        );
        assert_eq!(next.as_deref(), Some("claude-haiku-4-5"));
        let last = json!({"data": [], "has_more": false, "last_id": null});
        assert_eq!(parse(ProviderKind::Anthropic, &last, false).1, None);
    }

    #[test]
    fn openai_keeps_chat_models_on_its_own_host_and_everything_elsewhere() {
        let body = json!({"object": "list", "data": [
            {"id": "gpt-5", "object": "model", "created": 0, "owned_by": "openai"},
            {"id": "text-embedding-3-small", "object": "model", "created": 0, "owned_by": "openai"},
            {"id": "whisper-1", "object": "model", "created": 0, "owned_by": "openai"}
        ]});
        let ids = |openai| {
            parse(ProviderKind::OpenAiChat, &body, openai)
                .0
                .into_iter()
                .map(|m| m.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(true), ["gpt-5"]);
        assert_eq!(ids(false), ["gpt-5", "text-embedding-3-small", "whisper-1"]);
    }
}
