//! Images for a model that cannot see (docs/design.md §6.7, Vision).
//!
//! When the session's model has `vision: false` and the `small_model`
//! setting names a model that can see, [`DescribingProvider`] stands in
//! front of the session's provider: before a request goes out, each image
//! in it (a pasted screenshot, a Read of a PNG) is replaced by the small
//! model's description of it, asked once per image content and kept for
//! the session. Without such a model the images stay and the request
//! builders send the model a clear note instead (riot-providers'
//! `IMAGE_OMITTED`); a description that fails leaves that note too — the
//! turn never fails because an image could not be described.
//!
//! Descriptions are saved with the session ([`SavedDescriptions`], a JSON
//! file beside its images), so a resumed session does not ask again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use riot_protocol::{
    CacheHints, FileSystem, ImageSource, Message, MessageId, MessageOrigin, ModelCapabilities,
    ModelRequest, Provider, ProviderError, ProviderStream, SystemPrompt, ToolResultContent,
    UserBlock, UserMessage,
};
use sha2::{Digest as _, Sha256};
use tokio_util::sync::CancellationToken;

/// The describing model's instructions.
pub const SYSTEM_PROMPT: &str = "You describe one image for Riot, a coding agent whose model cannot see images. Describe what is in it precisely and completely enough to act on: transcribe all visible text, code, error messages, numbers and labels exactly; describe layout, UI elements and their state, colours that carry meaning, and anything that looks wrong or broken. Do not guess what is not visible. No preamble.";

/// Output tokens of one description.
pub const DESCRIPTION_MAX_TOKENS: u32 = 1_024;

/// Asks a model that can see to describe images.
#[derive(Debug, Clone)]
pub struct Describer {
    /// The small model's provider (its requests counted as side requests).
    pub provider: Arc<dyn Provider>,
    pub model: String,
}

impl Describer {
    /// The one-image request.
    pub fn request(&self, image: &ImageSource) -> ModelRequest {
        let capabilities = self.provider.capabilities(&self.model);
        ModelRequest {
            server_tools: Vec::new(),
            model: self.model.clone(),
            system: SystemPrompt::stable(SYSTEM_PROMPT),
            messages: vec![Message::User(UserMessage {
                id: MessageId::new("describe_image"),
                content: vec![
                    UserBlock::Image {
                        source: image.clone(),
                    },
                    UserBlock::Text {
                        text: "Describe this image.".into(),
                    },
                ],
                origin: MessageOrigin::Context,
            })],
            tools: Vec::new(),
            max_tokens: DESCRIPTION_MAX_TOKENS
                .min(capabilities.max_output_tokens)
                .max(1),
            thinking: None,
            cache: CacheHints::default(),
            stream: true,
        }
    }

    /// The description, or why there is none.
    pub async fn describe(
        &self,
        image: &ImageSource,
        cancel: CancellationToken,
    ) -> Result<String, DescribeError> {
        let reply =
            riot_core::side::side_text(self.provider.as_ref(), self.request(image), cancel).await;
        let text = reply.result?;
        let text = text.trim();
        if text.is_empty() {
            return Err(DescribeError::Empty);
        }
        Ok(text.to_owned())
    }
}

/// Why an image has no description.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescribeError {
    /// The describing model's request failed.
    #[error(transparent)]
    Model(#[from] ProviderError),
    /// The model answered with nothing.
    #[error("the model gave no description")]
    Empty,
}

/// Where a session keeps its images' descriptions: `descriptions.json`
/// (the hex SHA-256 of an image's base64 data → its description) in the
/// directory the store keeps beside the transcript.
#[derive(Debug, Clone)]
pub struct SavedDescriptions {
    pub fs: Arc<dyn FileSystem>,
    pub path: PathBuf,
}

impl SavedDescriptions {
    /// The file in `dir` (`SessionStore::files_of`).
    pub fn in_dir(fs: Arc<dyn FileSystem>, dir: &std::path::Path) -> Self {
        Self {
            fs,
            path: dir.join("descriptions.json"),
        }
    }

    /// What was saved; nothing when there is no file or it cannot be read
    /// (the images are then described again).
    pub async fn load(&self) -> HashMap<[u8; 32], Option<String>> {
        let Ok(bytes) = self.fs.read(&self.path).await else {
            return HashMap::new();
        };
        let saved: HashMap<String, String> = match serde_json::from_slice(&bytes) {
            Ok(saved) => saved,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "saved image descriptions are unreadable; images will be described again");
                return HashMap::new();
            }
        };
        saved
            .into_iter()
            .filter_map(|(hex, text)| Some((from_hex(&hex)?, Some(text))))
            .collect()
    }

    /// Saves every known description (failures are not saved: a resumed
    /// session tries again).
    async fn save(&self, known: &HashMap<[u8; 32], Option<String>>) {
        let saved: std::collections::BTreeMap<String, &String> = known
            .iter()
            .filter_map(|(key, text)| Some((to_hex(key), text.as_ref()?)))
            .collect();
        let Ok(bytes) = serde_json::to_vec_pretty(&saved) else {
            return;
        };
        if let Some(dir) = self.path.parent()
            && let Err(e) = self.fs.create_dir_all(dir).await
        {
            tracing::warn!(dir = %dir.display(), error = %e, "image descriptions not saved");
            return;
        }
        if let Err(e) = self.fs.write_atomic(&self.path, &bytes).await {
            tracing::warn!(path = %self.path.display(), error = %e, "image descriptions not saved");
        }
    }
}

fn to_hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

/// The session's provider, with each image replaced by its description
/// for models that cannot see (see the module docs).
#[derive(Debug)]
pub struct DescribingProvider {
    inner: Arc<dyn Provider>,
    describer: Describer,
    /// Descriptions by the SHA-256 of the image's base64 data; `None`
    /// where describing failed (asked once, not on every request).
    cache: Arc<Mutex<HashMap<[u8; 32], Option<String>>>>,
    /// Where new descriptions are saved, if anywhere.
    saved: Option<SavedDescriptions>,
}

impl DescribingProvider {
    /// Wraps `inner` when the small model can see; otherwise `inner` as it
    /// is. With `saved`, the descriptions saved earlier are known from the
    /// start and new ones are saved there.
    pub async fn wrap(
        inner: Arc<dyn Provider>,
        describer: Option<Describer>,
        saved: Option<SavedDescriptions>,
    ) -> Arc<dyn Provider> {
        match describer {
            Some(d) if d.provider.capabilities(&d.model).vision => {
                let known = match &saved {
                    Some(s) => s.load().await,
                    None => HashMap::new(),
                };
                Arc::new(Self {
                    inner,
                    describer: d,
                    cache: Arc::new(Mutex::new(known)),
                    saved,
                })
            }
            _ => inner,
        }
    }
}

fn key(image: &ImageSource) -> [u8; 32] {
    Sha256::digest(image.data.as_bytes()).into()
}

/// Every image of a request's user messages, mutably, in order.
fn images_mut(request: &mut ModelRequest) -> Vec<ImageSlot<'_>> {
    let mut out = Vec::new();
    for message in &mut request.messages {
        let Message::User(user) = message else {
            continue;
        };
        for block in &mut user.content {
            match block {
                UserBlock::Image { .. } => out.push(ImageSlot::Block(block)),
                UserBlock::ToolResult { content, .. } => {
                    for part in content.iter_mut() {
                        if matches!(part, ToolResultContent::Image { .. }) {
                            out.push(ImageSlot::Result(part));
                        }
                    }
                }
                UserBlock::Text { .. } | UserBlock::Attachment { .. } => {}
            }
        }
    }
    out
}

enum ImageSlot<'a> {
    Block(&'a mut UserBlock),
    Result(&'a mut ToolResultContent),
}

impl ImageSlot<'_> {
    fn source(&self) -> Option<&ImageSource> {
        match self {
            ImageSlot::Block(UserBlock::Image { source })
            | ImageSlot::Result(ToolResultContent::Image { source }) => Some(source),
            _ => None,
        }
    }

    fn replace(&mut self, text: String) {
        match self {
            ImageSlot::Block(block) => **block = UserBlock::Text { text },
            ImageSlot::Result(part) => **part = ToolResultContent::Text { text },
        }
    }
}

/// What the model reads in place of an image.
pub fn described(model: &str, description: &str) -> String {
    format!(
        "[An image, described by {model} because this model cannot read images:]\n{description}"
    )
}

impl Provider for DescribingProvider {
    fn stream(&self, mut request: ModelRequest, cancel: CancellationToken) -> ProviderStream {
        if self.inner.capabilities(&request.model).vision || images_mut(&mut request).is_empty() {
            return self.inner.stream(request, cancel);
        }
        let inner = Arc::clone(&self.inner);
        let describer = self.describer.clone();
        let cache = Arc::clone(&self.cache);
        let saved = self.saved.clone();
        Box::pin(async_stream::stream! {
            let mut missing: Vec<ImageSource> = Vec::new();
            {
                let known = cache.lock().unwrap_or_else(|p| p.into_inner());
                for slot in images_mut(&mut request) {
                    if let Some(source) = slot.source()
                        && !known.contains_key(&key(source))
                        && !missing.iter().any(|m| m.data == source.data)
                    {
                        missing.push(source.clone());
                    }
                }
            }
            let asked = !missing.is_empty();
            for image in missing {
                if cancel.is_cancelled() {
                    break;
                }
                let described = match describer.describe(&image, cancel.child_token()).await {
                    Ok(text) => Some(text),
                    // The image stays; the request builder sends the
                    // model the note that it cannot read images.
                    Err(e) => {
                        tracing::warn!(error = %e, model = %describer.model, "an image could not be described");
                        None
                    }
                };
                // A cancelled turn asks again next time.
                if !cancel.is_cancelled() {
                    cache
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(key(&image), described);
                }
            }
            if asked && let Some(saved) = &saved {
                let known = cache.lock().unwrap_or_else(|p| p.into_inner()).clone();
                saved.save(&known).await;
            }
            {
                let known = cache.lock().unwrap_or_else(|p| p.into_inner());
                for mut slot in images_mut(&mut request) {
                    let text = slot
                        .source()
                        .and_then(|s| known.get(&key(s)))
                        .and_then(Option::as_deref)
                        .map(|d| described(&describer.model, d));
                    if let Some(text) = text {
                        slot.replace(text);
                    }
                }
            }
            let mut stream = inner.stream(request, cancel);
            while let Some(event) = stream.next().await {
                yield event;
            }
        })
    }

    fn capabilities(&self, model: &str) -> ModelCapabilities {
        self.inner.capabilities(model)
    }
}
