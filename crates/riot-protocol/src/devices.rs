//! Capabilities that later tools build on: a real browser and image
//! description (terminals are in [`crate::terminal`]). Each has a null implementation; a tool
//! whose capability is absent is not declared (docs/design.md §6.7).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use crate::message::ImageSource;

/// A capability that is not present in this session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not available in this session")]
pub struct Unavailable(pub &'static str);

/// The element an action works on: a ref from the last snapshot (`e12`)
/// or a CSS selector (the first match).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserTarget {
    Ref(String),
    Selector(String),
}

/// One thing the Browser tool asks of the browser (docs/browser.md). No
/// action runs a script the model wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserAction {
    /// Loads a URL whose host the tool already judged.
    Navigate {
        url: String,
    },
    /// The page's accessibility tree as text, interactive elements with refs.
    Snapshot,
    Click {
        target: BrowserTarget,
    },
    /// Replaces the element's text with `text`.
    Type {
        target: BrowserTarget,
        text: String,
    },
    /// Chooses the option whose value or label is `value` in a `<select>`.
    Select {
        target: BrowserTarget,
        value: String,
    },
    /// Presses a key (`Enter`, `Tab`, `a`…), on the target if given, else
    /// on whatever has the focus.
    Press {
        target: Option<BrowserTarget>,
        key: String,
    },
    /// A PNG of the viewport.
    Screenshot,
    /// Console messages and uncaught errors since the last `Console`.
    Console,
    /// The previous page of the history.
    Back,
    /// Ends the browser (a later action starts a new one).
    Close,
}

/// What an action produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BrowserResult {
    /// The page's URL after the action (empty when closed).
    pub url: String,
    pub title: String,
    /// What the model reads: a snapshot, console lines or a sentence.
    pub text: String,
    /// A screenshot (PNG).
    pub image: Option<ImageSource>,
}

/// A failed action, worded for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrowserError {
    #[error("no browser is available in this session")]
    Unavailable,
    #[error("{0}")]
    Failed(String),
}

/// Drives a real browser: one per session, started on first use.
#[async_trait]
pub trait Browser: Send + Sync + std::fmt::Debug {
    /// Whether a browser can be started (the Browser tool is declared).
    fn available(&self) -> bool;
    /// Runs one action, starting the browser if it is not running.
    async fn act(&self, action: BrowserAction) -> Result<BrowserResult, BrowserError>;
    /// Stops the browser and everything it started, if it runs.
    async fn close(&self);
}

/// No browser.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBrowser;

#[async_trait]
impl Browser for NoBrowser {
    fn available(&self) -> bool {
        false
    }

    async fn act(&self, _action: BrowserAction) -> Result<BrowserResult, BrowserError> {
        Err(BrowserError::Unavailable)
    }

    async fn close(&self) {}
}

/// The `browser` settings (docs/browser.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserOptions {
    /// `browser.executable`: the Chromium to run; found on the system when
    /// `None`.
    pub executable: Option<PathBuf>,
    /// `browser.headless` (default `true`); `false` opens a window.
    pub headless: bool,
}

impl Default for BrowserOptions {
    fn default() -> Self {
        Self {
            executable: None,
            headless: true,
        }
    }
}

/// Makes each session's browser.
pub trait BrowserHost: Send + Sync + std::fmt::Debug {
    /// A browser for one session (not started yet); [`NoBrowser`] when
    /// none can run.
    fn session_browser(&self, options: &BrowserOptions) -> Arc<dyn Browser>;
}

/// No browsers for any session.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBrowserHost;

impl BrowserHost for NoBrowserHost {
    fn session_browser(&self, _options: &BrowserOptions) -> Arc<dyn Browser> {
        Arc::new(NoBrowser)
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
