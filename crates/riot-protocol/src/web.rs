//! Web capability for WebFetch / WebSearch. [`NoWeb`] is the null
//! implementation: tools that need the web are not declared when it is used.

use async_trait::async_trait;

/// An HTTP GET as a tool needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRequest {
    pub url: String,
    pub max_bytes: usize,
}

/// The fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResponse {
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

/// A failed fetch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("web access is not available in this session")]
    Unavailable,
    #[error("fetching {url} failed: {reason}")]
    Failed { url: String, reason: String },
}

/// Fetches URLs.
#[async_trait]
pub trait Web: Send + Sync + std::fmt::Debug {
    /// Whether this implementation can fetch at all.
    fn available(&self) -> bool;

    async fn fetch(&self, request: WebRequest) -> Result<WebResponse, WebError>;
}

/// No web access.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWeb;

#[async_trait]
impl Web for NoWeb {
    fn available(&self) -> bool {
        false
    }

    async fn fetch(&self, _request: WebRequest) -> Result<WebResponse, WebError> {
        Err(WebError::Unavailable)
    }
}
