//! Read on images (PNG, JPEG, GIF, WebP): decoded to check it is an image,
//! the first frame of an animated GIF, downscaled to the model's limit
//! keeping the aspect ratio (docs/design.md §6.4).

use std::io::Cursor;
use std::path::Path;

use base64::Engine as _;
use image::codecs::gif::GifDecoder;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{AnimationDecoder, DynamicImage, ImageFormat, ImageReader};
use riot_protocol::{ImageSource, ToolContext, ToolOutcome, ToolResultContent, UiPayload};

/// Image files larger than this are refused before decoding.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// Decoded images with more pixels than this are refused (a decompression
/// bomb would otherwise take gigabytes).
const MAX_PIXELS: u64 = 100_000_000;

/// What a model accepts in one image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// Longest side in pixels.
    pub max_side: u32,
    /// Encoded size in bytes (before base64).
    pub max_bytes: usize,
}

impl Default for ImageLimits {
    /// 1568 px on the long side, 5 MB encoded.
    fn default() -> Self {
        ImageLimits {
            max_side: 1568,
            max_bytes: 5 * 1024 * 1024,
        }
    }
}

/// The media type of an image file, by its extension.
pub fn image_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit('.').next()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// An image ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub media_type: String,
    /// The encoded bytes sent.
    pub bytes: Vec<u8>,
    /// Size of the file's image (its first frame).
    pub original: (u32, u32),
    /// Size of the image sent.
    pub sent: (u32, u32),
    /// The image was made smaller to fit the limits.
    pub downscaled: bool,
    /// Only the first frame of an animation is sent.
    pub first_frame_only: bool,
}

/// Why an image cannot be sent. The message follows the image's name
/// ("photo.png is not a valid …").
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The bytes could not be read to guess the format.
    #[error("could not be read ({0})")]
    Unreadable(#[source] std::io::Error),
    /// The bytes are not one of the four formats.
    #[error("is not a PNG, JPEG, GIF or WebP image although its name says {media_type}")]
    NotAnImage {
        /// The type the file's name gave.
        media_type: String,
    },
    /// The image did not decode.
    #[error("is not a valid {media_type} image ({source}); the file may be corrupt or truncated")]
    Corrupt {
        /// The type found in the bytes.
        media_type: String,
        #[source]
        source: image::ImageError,
    },
    /// The resized image could not be encoded.
    #[error("could not be encoded again after resizing ({0})")]
    Encode(#[source] image::ImageError),
    /// Base64 data declared a type that is not one of the four formats.
    #[error("is {media_type}, not a PNG, JPEG, GIF or WebP image")]
    UnknownType {
        /// The declared media type.
        media_type: String,
    },
    /// Base64 data that does not decode.
    #[error("is not valid base64 data")]
    Base64(#[source] base64::DecodeError),
}

fn media_type_of(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

fn encode(img: &DynamicImage, jpeg: bool) -> Result<Vec<u8>, ImageError> {
    let mut out = Vec::new();
    let result = if jpeg {
        let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
        rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, 85))
    } else {
        img.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
    };
    result.map_err(ImageError::Encode)?;
    Ok(out)
}

/// Decodes `bytes` (the file's contents; the format is taken from the bytes,
/// `media_type` is the extension's guess) and fits it to `limits`. An
/// unchanged image is sent as the file's own bytes; a resized one or a first
/// frame is encoded again (PNG, or JPEG for a JPEG or when PNG is too big).
/// `Err` is the reason, to follow the file's name.
pub fn prepare(
    bytes: &[u8],
    media_type: &str,
    limits: ImageLimits,
) -> Result<Prepared, ImageError> {
    let mut reader = ImageReader::new(Cursor::new(bytes));
    reader = reader
        .with_guessed_format()
        .map_err(ImageError::Unreadable)?;
    let format = match reader.format() {
        Some(f) if media_type_of(f).is_some() => f,
        _ => {
            return Err(ImageError::NotAnImage {
                media_type: media_type.to_owned(),
            });
        }
    };
    let actual_type = media_type_of(format).unwrap_or(media_type);
    let mut decoder_limits = image::Limits::default();
    decoder_limits.max_alloc = Some(MAX_PIXELS * 4);
    reader.limits(decoder_limits);
    let img = reader.decode().map_err(|source| ImageError::Corrupt {
        media_type: actual_type.to_owned(),
        source,
    })?;
    let original = (img.width(), img.height());
    let first_frame_only = format == ImageFormat::Gif && gif_is_animated(bytes);
    let long = original.0.max(original.1);
    if !first_frame_only && long <= limits.max_side && bytes.len() <= limits.max_bytes {
        return Ok(Prepared {
            media_type: actual_type.to_owned(),
            bytes: bytes.to_vec(),
            original,
            sent: original,
            downscaled: false,
            first_frame_only,
        });
    }
    let mut side = long.min(limits.max_side);
    let jpeg = format == ImageFormat::Jpeg;
    loop {
        let resized = if side < long {
            // `resize` fits within side × side keeping the aspect ratio.
            img.resize(side, side, FilterType::Triangle)
        } else {
            img.clone()
        };
        let mut out = encode(&resized, jpeg)?;
        let mut out_type = if jpeg { "image/jpeg" } else { "image/png" };
        if out.len() > limits.max_bytes && !jpeg {
            out = encode(&resized, true)?;
            out_type = "image/jpeg";
        }
        if out.len() <= limits.max_bytes || side <= 64 {
            let sent = (resized.width(), resized.height());
            return Ok(Prepared {
                media_type: out_type.to_owned(),
                bytes: out,
                original,
                sent,
                downscaled: sent != original,
                first_frame_only,
            });
        }
        side = side * 3 / 4;
    }
}

/// [`prepare`] for an image that came as base64 data (an image block in
/// a prompt): `Err` is the reason, to follow the image's name.
pub fn prepare_source(source: &ImageSource, limits: ImageLimits) -> Result<Prepared, ImageError> {
    let known = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    if !known.contains(&source.media_type.as_str()) {
        return Err(ImageError::UnknownType {
            media_type: source.media_type.clone(),
        });
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(source.data.as_bytes())
        .map_err(ImageError::Base64)?;
    prepare(&bytes, &source.media_type, limits)
}

fn gif_is_animated(bytes: &[u8]) -> bool {
    GifDecoder::new(Cursor::new(bytes))
        .map(|d| d.into_frames().take(2).count() > 1)
        .unwrap_or(false)
}

/// The note the model reads beside the image: its name and size, and
/// whether it was downscaled or cut to its first frame.
pub fn note(display: &str, p: &Prepared, limits: ImageLimits) -> String {
    let (w, h) = p.original;
    let mut text = format!("Image {display} ({w}x{h} px)");
    if p.first_frame_only {
        text.push_str(", an animated GIF: only its first frame is shown");
    }
    if p.downscaled {
        let (sw, sh) = p.sent;
        text.push_str(&format!(
            ", downscaled to {sw}x{sh} px to fit the model's limit ({} px on the long side, {} MB)",
            limits.max_side,
            limits.max_bytes / (1024 * 1024)
        ));
    }
    text.push('.');
    text
}

impl Prepared {
    /// The image as inline base64 data.
    pub fn source(&self) -> ImageSource {
        ImageSource {
            media_type: self.media_type.clone(),
            data: base64::engine::general_purpose::STANDARD.encode(&self.bytes),
        }
    }
}

/// Read's image path: `path` is resolved, `len` its size in bytes.
pub async fn read(
    ctx: &ToolContext,
    path: &Path,
    display: String,
    len: u64,
    media_type: &str,
) -> ToolOutcome {
    if len > MAX_FILE_BYTES {
        return ToolOutcome::failed(format!(
            "{display} is {len} bytes, over the {MAX_FILE_BYTES}-byte limit for images. Make a smaller copy (or a screenshot of the part you need) and read that."
        ));
    }
    let bytes = match ctx.env.fs.read(path).await {
        Ok(b) => b,
        Err(e) => return ToolOutcome::failed(format!("{display} could not be read ({e}).")),
    };
    let limits = ImageLimits::default();
    let owned_type = media_type.to_owned();
    // Decoding and resizing is CPU work: off the async threads.
    let prepared = tokio::task::spawn_blocking(move || prepare(&bytes, &owned_type, limits)).await;
    let prepared = match prepared {
        Ok(Ok(p)) => p,
        Ok(Err(reason)) => {
            return ToolOutcome::failed(format!(
                "{display} {reason}. Check that it is the image you meant; open and save it again if it is damaged."
            ));
        }
        Err(e) => return ToolOutcome::failed(format!("{display} could not be decoded ({e}).")),
    };
    let text = note(&display, &prepared, limits);
    ToolOutcome::Ok {
        model_content: vec![
            ToolResultContent::text(text),
            ToolResultContent::Image {
                source: prepared.source(),
            },
        ],
        ui_payload: Some(UiPayload::ImageRead {
            path: display,
            media_type: prepared.media_type,
            bytes: prepared.bytes.len() as u64,
        }),
        side_messages: Vec::new(),
    }
}

#[cfg(test)]
#[path = "read_image_tests.rs"]
mod tests;
