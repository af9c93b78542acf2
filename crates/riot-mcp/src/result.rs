//! An MCP `tools/call` result as a Riot [`ToolOutcome`].
//!
//! - Text blocks are text. Images of the types models read (PNG, JPEG,
//!   GIF, WebP, up to 5 MiB) are images; other images and audio become a
//!   one-line note, so the model knows something was left out.
//! - An embedded text resource is its text under a `[resource <uri>]`
//!   line; a binary one is a note; a resource link is a line with its URI.
//! - `structuredContent` is given as JSON text when the result has no text
//!   of its own (servers are asked to send both; not all do).
//! - `isError: true` is a failed result with the server's text.
//! - Nothing at all is "(`<tool>` completed with no output)" (§6.2).

use base64::Engine;
use riot_protocol::{ImageSource, ToolOutcome, ToolResultContent, UiPayload};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Image types every model API that takes images accepts.
const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
/// Larger images are not passed on (the Read tool's limit).
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// Maps a result of the tool Riot calls `tool_name`.
pub(crate) fn outcome(tool_name: &str, result: CallToolResult) -> ToolOutcome {
    let mut content = Vec::new();
    let mut has_text = false;
    for block in result.content {
        match block {
            ContentBlock::Text(text) => {
                has_text = true;
                content.push(ToolResultContent::text(text.text));
            }
            ContentBlock::Image(image) => content.push(image_block(image.mime_type, image.data)),
            ContentBlock::Audio(audio) => content.push(ToolResultContent::text(format!(
                "[audio ({}, about {} bytes) left out: Riot does not pass audio to the model]",
                audio.mime_type,
                decoded_len(&audio.data)
            ))),
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    has_text = true;
                    content.push(ToolResultContent::text(format!("[resource {uri}]\n{text}")));
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => content.push(ToolResultContent::text(format!(
                    "[binary resource {uri} ({}, about {} bytes) not shown]",
                    mime_type.as_deref().unwrap_or("unknown type"),
                    decoded_len(&blob)
                ))),
                _ => content.push(unknown_block()),
            },
            ContentBlock::ResourceLink(link) => {
                has_text = true;
                let mut line = format!("[resource link: {} <{}>", link.name, link.uri);
                if let Some(mime) = &link.mime_type {
                    line.push_str(&format!(" ({mime})"));
                }
                if let Some(description) = &link.description {
                    line.push_str(&format!(": {description}"));
                }
                line.push(']');
                content.push(ToolResultContent::text(line));
            }
            _ => content.push(unknown_block()),
        }
    }
    if !has_text
        && let Some(structured) = &result.structured_content
        && let Ok(json) = serde_json::to_string_pretty(structured)
    {
        content.push(ToolResultContent::text(json));
    }
    let text = joined_text(&content);
    if result.is_error == Some(true) {
        let error_for_model = if text.trim().is_empty() {
            format!("{tool_name} reported an error without saying what went wrong.")
        } else {
            text.clone()
        };
        return ToolOutcome::Failed {
            error_for_model,
            ui_payload: Some(UiPayload::Text { text }),
        };
    }
    if content.is_empty() {
        content.push(ToolResultContent::text(format!(
            "({tool_name} completed with no output)"
        )));
    }
    ToolOutcome::Ok {
        model_content: content,
        ui_payload: Some(UiPayload::Text { text }),
        side_messages: Vec::new(),
    }
}

fn image_block(mime_type: String, data: String) -> ToolResultContent {
    let size = decoded_len(&data);
    if !IMAGE_TYPES.contains(&mime_type.as_str()) {
        return ToolResultContent::text(format!(
            "[image ({mime_type}, about {size} bytes) left out: models read only PNG, JPEG, GIF and WebP]"
        ));
    }
    if size > MAX_IMAGE_BYTES {
        return ToolResultContent::text(format!(
            "[image ({mime_type}, about {size} bytes) left out: over the {MAX_IMAGE_BYTES}-byte limit for images]"
        ));
    }
    // A malformed image would make the model API reject the whole request.
    if base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .is_err()
    {
        return ToolResultContent::text(format!(
            "[image ({mime_type}) left out: the server sent data that is not valid base64]"
        ));
    }
    ToolResultContent::Image {
        source: ImageSource {
            media_type: mime_type,
            data,
        },
    }
}

fn unknown_block() -> ToolResultContent {
    ToolResultContent::text("[a content block of a kind Riot does not know was left out]")
}

/// The size base64 `data` decodes to, near enough for a note.
fn decoded_len(data: &str) -> usize {
    data.len() / 4 * 3
}

fn joined_text(content: &[ToolResultContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => {
                Some(text.as_str())
            }
            ToolResultContent::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    #[test]
    fn text_and_images_map_block_for_block() {
        let out = outcome(
            "mcp__s__t",
            result(json!({"content": [
                {"type": "text", "text": "before"},
                {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
                {"type": "text", "text": "after"}
            ]})),
        );
        assert_eq!(
            out,
            ToolOutcome::Ok {
                model_content: vec![
                    ToolResultContent::text("before"),
                    ToolResultContent::Image {
                        source: ImageSource {
                            media_type: "image/png".into(),
                            data: PNG_1X1.into()
                        }
                    },
                    ToolResultContent::text("after"),
                ],
                ui_payload: Some(UiPayload::Text {
                    text: "before\nafter".into()
                }),
                side_messages: vec![],
            }
        );
    }

    #[test]
    fn unusable_images_audio_and_blobs_become_notes() {
        let out = outcome(
            "mcp__s__t",
            result(json!({"content": [
                {"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"},
                {"type": "image", "data": "not base64!", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "mimeType": "application/gzip", "blob": "AAAAAAAA"}},
                {"type": "resource_link", "uri": "file:///b.md", "name": "b.md", "mimeType": "text/markdown"}
            ]})),
        );
        let ToolOutcome::Ok { model_content, .. } = out else {
            panic!("{out:?}")
        };
        assert_eq!(
            model_content,
            vec![
                ToolResultContent::text(
                    "[image (image/svg+xml, about 6 bytes) left out: models read only PNG, JPEG, GIF and WebP]"
                ),
                ToolResultContent::text(
                    "[image (image/png) left out: the server sent data that is not valid base64]"
                ),
                ToolResultContent::text(
                    "[audio (audio/wav, about 6 bytes) left out: Riot does not pass audio to the model]"
                ),
                ToolResultContent::text("[resource file:///a.txt]\nhello"),
                ToolResultContent::text(
                    "[binary resource file:///a.bin (application/gzip, about 6 bytes) not shown]"
                ),
                ToolResultContent::text("[resource link: b.md <file:///b.md> (text/markdown)]"),
            ]
        );
    }

    #[test]
    fn structured_content_is_text_only_when_there_is_no_text() {
        let alone = outcome(
            "mcp__s__t",
            result(json!({"content": [], "structuredContent": {"sum": 3}})),
        );
        assert_eq!(
            alone,
            ToolOutcome::Ok {
                model_content: vec![ToolResultContent::text("{\n  \"sum\": 3\n}")],
                ui_payload: Some(UiPayload::Text {
                    text: "{\n  \"sum\": 3\n}".into()
                }),
                side_messages: vec![],
            }
        );
        let both = outcome(
            "mcp__s__t",
            result(
                json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}}),
            ),
        );
        let ToolOutcome::Ok { model_content, .. } = both else {
            panic!()
        };
        assert_eq!(model_content, vec![ToolResultContent::text("{\"sum\":3}")]);
    }

    #[test]
    fn is_error_is_a_failed_result_with_the_servers_words() {
        let out = outcome(
            "mcp__s__t",
            result(json!({"isError": true, "content": [{"type": "text", "text": "no such repo"}]})),
        );
        assert_eq!(
            out,
            ToolOutcome::Failed {
                error_for_model: "no such repo".into(),
                ui_payload: Some(UiPayload::Text {
                    text: "no such repo".into()
                }),
            }
        );
        let silent = outcome("mcp__s__t", result(json!({"isError": true, "content": []})));
        assert!(matches!(
            silent,
            ToolOutcome::Failed { ref error_for_model, .. }
                if error_for_model == "mcp__s__t reported an error without saying what went wrong."
        ));
    }

    #[test]
    fn an_empty_result_says_so() {
        let out = outcome("mcp__s__t", result(json!({"content": []})));
        let ToolOutcome::Ok { model_content, .. } = out else {
            panic!()
        };
        assert_eq!(
            model_content,
            vec![ToolResultContent::text(
                "(mcp__s__t completed with no output)"
            )]
        );
    }
}
