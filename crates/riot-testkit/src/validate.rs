//! Strict request validation (docs/testing.md "a strict mock model server"):
//! reject what the real APIs reject, with realistic 400 bodies. A lenient
//! mock is how pairing bugs reach users.

mod anthropic;
mod chat;
mod responses;

use serde_json::{Value, json};

pub use self::anthropic::{MAX_ANTHROPIC_BODY_BYTES, MAX_DOCUMENT_PAGES};
use crate::script::{ReasoningRule, Wire};

/// A rejection: HTTP status and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub status: u16,
    pub body: Value,
}

/// An error body in the wire's own shape.
pub fn error_body(wire: Wire, message: &str) -> Value {
    match wire {
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        Wire::Openai | Wire::OpenaiResponses => {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        }
    }
}

/// A 400 rejection with the wire's error body, as any `Result` the caller returns.
fn reject<T>(wire: Wire, message: String) -> Result<T, Rejection> {
    Err(Rejection {
        status: 400,
        body: error_body(wire, &message),
    })
}

/// Validates a request body; `Ok` when the real API would accept it.
pub fn validate(wire: Wire, rule: ReasoningRule, body: &Value) -> Result<(), Rejection> {
    match wire {
        Wire::Anthropic => anthropic::check_request(body),
        Wire::Openai => chat::check_request(body, rule),
        Wire::OpenaiResponses => responses::check_request(body),
    }
}

/// Rejects a request that does not fit a context window of `window`
/// tokens, as the real APIs do: the input, counted as body bytes / 4, plus
/// the output the request reserves (`max_tokens`, `max_completion_tokens`
/// or `max_output_tokens`) must fit. The message is the wire's own.
pub fn check_window(
    wire: Wire,
    body: &Value,
    body_bytes: usize,
    window: u64,
) -> Result<(), Rejection> {
    let input = (body_bytes as u64).div_ceil(4);
    let output = ["max_tokens", "max_completion_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .unwrap_or(0);
    if input + output <= window {
        return Ok(());
    }
    let (message, code) = match wire {
        Wire::Anthropic if input > window => (
            format!("prompt is too long: {input} tokens > {window} maximum"),
            None,
        ),
        Wire::Anthropic => (
            format!(
                "input length and `max_tokens` exceed context limit: {input} + {output} > {window}, decrease input length or `max_tokens` and try again"
            ),
            None,
        ),
        Wire::Openai => (
            format!(
                "This model's maximum context length is {window} tokens. However, you requested {} tokens ({input} in the messages, {output} in the completion). Please reduce the length of the messages or completion.",
                input + output
            ),
            Some("context_length_exceeded"),
        ),
        Wire::OpenaiResponses => (
            "Your input exceeds the context window of this model. Please adjust your input and try again.".to_owned(),
            Some("context_length_exceeded"),
        ),
    };
    let mut body = error_body(wire, &message);
    if let Some(code) = code {
        body["error"]["code"] = json!(code);
    }
    Err(Rejection { status: 400, body })
}

/// Rejects, as an endpoint requiring strict alternation would, two user
/// messages in a row, or two assistant messages without a tool message
/// between them (Chat Completions). Responses input is not checked. Used by
/// the server when the script says [`RoleRule::Alternate`]; the rest of
/// [`validate`] applies as well.
///
/// [`RoleRule::Alternate`]: crate::script::RoleRule::Alternate
pub fn check_alternation(wire: Wire, body: &Value) -> Result<(), Rejection> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Ok(());
    };
    let mut previous: Option<&str> = None;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        match wire {
            Wire::OpenaiResponses => return Ok(()),
            Wire::Anthropic => {
                if previous == Some(role) {
                    return reject(
                        wire,
                        format!(
                            "messages.{i}: roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"
                        ),
                    );
                }
            }
            Wire::Openai => {
                if role == "system" || role == "developer" {
                    continue;
                }
                if previous == Some(role) && (role == "user" || role == "assistant") {
                    return reject(
                        wire,
                        format!(
                            "Conversation roles must alternate user/assistant/user/assistant/... (messages[{i}] is a second '{role}' message in a row)"
                        ),
                    );
                }
            }
        }
        previous = Some(role);
    }
    Ok(())
}

/// The media types every one of the three APIs accepts for an image.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Anthropic's limit on one image (encoded, before base64).
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

fn magic_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Why an inline image is refused; the message is the API's, without the
/// field's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadImage {
    /// A media type none of the APIs take.
    #[error(
        "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got '{media_type}')"
    )]
    MediaType { media_type: String },
    /// The data is not standard, padded base64.
    #[error("The image data is not valid base64.")]
    Base64(#[source] base64::DecodeError),
    /// The bytes are not the kind of image the media type says.
    #[error("Image does not match the provided media type {media_type}")]
    Mismatch { media_type: String },
    /// More than [`MAX_IMAGE_BYTES`].
    #[error("image exceeds 5 MB maximum: {bytes} bytes > {max} bytes", max = MAX_IMAGE_BYTES)]
    TooLarge { bytes: usize },
    /// An image URL that is neither `data:…;base64,` nor `http(s):`.
    #[error(
        "Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,...') or an https URL."
    )]
    NotDataUrl,
}

/// Checks an inline image as the APIs do: a known media type, valid
/// base64 (standard alphabet, padded), bytes that are that kind of image,
/// at most 5 MB.
fn check_image_data(media_type: &str, data: &str) -> Result<(), BadImage> {
    use base64::Engine as _;
    if !IMAGE_TYPES.contains(&media_type) {
        return Err(BadImage::MediaType {
            media_type: media_type.to_owned(),
        });
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(BadImage::Base64)?;
    if magic_type(&bytes) != Some(media_type) {
        return Err(BadImage::Mismatch {
            media_type: media_type.to_owned(),
        });
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(BadImage::TooLarge { bytes: bytes.len() });
    }
    Ok(())
}

/// Checks an OpenAI image URL: `http(s):`, or a `data:` URL holding an
/// image [`check_image_data`] accepts.
fn check_data_url(url: &str) -> Result<(), BadImage> {
    if url.starts_with("https://") || url.starts_with("http://") {
        return Ok(());
    }
    let Some((media_type, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    else {
        return Err(BadImage::NotDataUrl);
    };
    check_image_data(media_type, data)
}

/// The reasoning efforts OpenAI's APIs take.
const EFFORTS: [&str; 5] = ["none", "minimal", "low", "medium", "high"];

/// Rejects a reasoning effort (at `field`) OpenAI's APIs do not take.
fn check_effort(w: Wire, field: &str, effort: Option<&Value>) -> Result<(), Rejection> {
    match effort {
        None => Ok(()),
        Some(Value::String(e)) if EFFORTS.contains(&e.as_str()) => Ok(()),
        Some(other) => reject(
            w,
            format!(
                "Invalid value for '{field}': {other}. Supported values are: 'none', 'minimal', 'low', 'medium', and 'high'."
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_refusals_read_as_the_apis_write_them() {
        assert_eq!(
            BadImage::TooLarge { bytes: 6_000_000 }.to_string(),
            "image exceeds 5 MB maximum: 6000000 bytes > 5242880 bytes"
        );
        assert_eq!(
            check_data_url("data:image/tiff;base64,AAAA")
                .unwrap_err()
                .to_string(),
            "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got 'image/tiff')"
        );
        assert!(matches!(
            check_image_data("image/png", "not base64!"),
            Err(BadImage::Base64(_))
        ));
        assert_eq!(
            check_data_url("ftp://example.com/a.png"),
            Err(BadImage::NotDataUrl)
        );
        assert_eq!(check_data_url("https://example.com/a.png"), Ok(()));
    }
}
