//! Capabilities that later tools build on: a real browser and image
//! description (terminals are in [`crate::terminal`]). Each has a null implementation; a tool
//! whose capability is absent is not declared (docs/design.md §6.7).

use async_trait::async_trait;

use crate::message::ImageSource;

/// A capability that is not present in this session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not available in this session")]
pub struct Unavailable(pub &'static str);

/// A page as the Browser tool reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserPage {
    pub url: String,
    pub title: String,
    pub text: String,
}

/// Drives a real browser.
#[async_trait]
pub trait Browser: Send + Sync + std::fmt::Debug {
    fn available(&self) -> bool;
    async fn navigate(&self, url: &str) -> Result<BrowserPage, Unavailable>;
}

/// No browser.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBrowser;

#[async_trait]
impl Browser for NoBrowser {
    fn available(&self) -> bool {
        false
    }

    async fn navigate(&self, _url: &str) -> Result<BrowserPage, Unavailable> {
        Err(Unavailable("a browser"))
    }
}

/// Describes images with a vision-capable model.
#[async_trait]
pub trait Vision: Send + Sync + std::fmt::Debug {
    fn available(&self) -> bool;
    async fn describe(&self, image: &ImageSource, prompt: &str) -> Result<String, Unavailable>;
}

/// No vision model.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoVision;

#[async_trait]
impl Vision for NoVision {
    fn available(&self) -> bool {
        false
    }

    async fn describe(&self, _image: &ImageSource, _prompt: &str) -> Result<String, Unavailable> {
        Err(Unavailable("a vision model"))
    }
}
