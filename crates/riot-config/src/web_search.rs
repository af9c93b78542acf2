//! The `web_search` setting: which service WebSearch asks (docs/web.md).

use serde::Serialize;
use serde_json::Value;

/// Which search service WebSearch asks (`web_search` in settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API (`url` required).
    Searxng,
    /// Brave Search's API (the key from `BRAVE_API_KEY`; `url` optional).
    Brave,
    /// The model provider's own server-side search (not built yet).
    Native,
}

/// The `web_search` setting: `{"provider": "searxng"|"brave"|"native", "url": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebSearchSetting {
    pub provider: SearchProvider,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Why the `web_search` setting cannot be used. The message completes a
/// sentence that starts with the key (`web_search …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebSearchError {
    /// The setting is not a JSON object.
    #[error(
        r#"must be an object such as {{"provider": "searxng", "url": "http://localhost:8888"}}"#
    )]
    NotObject,
    /// A key other than `provider` and `url`.
    #[error("has an unknown key `{key}`; it takes `provider` and `url`")]
    UnknownKey { key: String },
    /// No `provider`, or one Riot does not know.
    #[error(r#"needs "provider": "searxng", "brave" or "native""#)]
    NoProvider,
    /// A `url` that is not an http(s) URL.
    #[error("has a `url` that is not an http:// or https:// URL")]
    BadUrl,
    /// SearXNG chosen without the instance's `url`.
    #[error(r#"with "provider": "searxng" needs the instance's "url""#)]
    SearxngWithoutUrl,
}

/// Reads `{"provider": "searxng"|"brave"|"native", "url": "…"}`.
pub(super) fn web_search_setting(value: &Value) -> Result<WebSearchSetting, WebSearchError> {
    let Value::Object(fields) = value else {
        return Err(WebSearchError::NotObject);
    };
    if let Some(key) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "provider" | "url"))
    {
        return Err(WebSearchError::UnknownKey { key: key.clone() });
    }
    let provider = match fields.get("provider").and_then(Value::as_str) {
        Some("searxng") => SearchProvider::Searxng,
        Some("brave") => SearchProvider::Brave,
        Some("native") => SearchProvider::Native,
        _ => return Err(WebSearchError::NoProvider),
    };
    let url = match fields.get("url") {
        None | Some(Value::Null) => None,
        Some(Value::String(u)) if u.starts_with("http://") || u.starts_with("https://") => {
            Some(u.clone())
        }
        Some(_) => return Err(WebSearchError::BadUrl),
    };
    if provider == SearchProvider::Searxng && url.is_none() {
        return Err(WebSearchError::SearxngWithoutUrl);
    }
    Ok(WebSearchSetting { provider, url })
}
