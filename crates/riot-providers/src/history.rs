//! The provider-side cleaning every wire format shares before a history is
//! serialized, and the invariant checks on what is about to be sent
//! (docs/testing.md L2: INV-1, INV-2, INV-7, INV-9).

use riot_protocol::invariants::{
    check_no_system_messages, check_thinking_model, check_tool_pairing, enforce,
};
use riot_protocol::{
    AssistantBlock, ImageSource, Message, SystemPrompt, ToolResultContent, UserBlock,
};

/// The history as it may be sent to `model`:
/// - `System` messages never reach a provider (INV-7);
/// - thinking from another model is dropped, not just its signature
///   (docs/design.md §11: Anthropic rejects unsigned thinking);
/// - empty text blocks and then empty messages are dropped.
pub fn prepare(messages: &[Message], model: &str) -> Vec<Message> {
    enforce(check_no_system_messages(messages));
    let mut out = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::System(_) => {}
            Message::User(user) => {
                let mut user = user.clone();
                user.content.retain(|b| match b {
                    UserBlock::Text { text } => !text.is_empty(),
                    UserBlock::Attachment { title, text } => !(title.is_empty() && text.is_empty()),
                    UserBlock::Image { .. } | UserBlock::ToolResult { .. } => true,
                });
                for block in &mut user.content {
                    if let UserBlock::ToolResult { content, ui, .. } = block {
                        // The `ui` payload is for faces only; never sent.
                        *ui = None;
                        content.retain(
                            |c| !matches!(c, ToolResultContent::Text { text } if text.is_empty()),
                        );
                    }
                }
                if !user.content.is_empty() {
                    out.push(Message::User(user));
                }
            }
            Message::Assistant(assistant) => {
                let mut assistant = assistant.clone();
                assistant.content.retain(|b| match b {
                    AssistantBlock::Text { text } => !text.is_empty(),
                    AssistantBlock::Thinking { model: from, .. }
                    | AssistantBlock::RedactedThinking { model: from, .. } => from == model,
                    AssistantBlock::ToolUse { .. } | AssistantBlock::WebSearch { .. } => true,
                });
                if !assistant.content.is_empty() {
                    out.push(Message::Assistant(assistant));
                }
            }
        }
    }
    enforce(check_tool_pairing(&out));
    enforce(check_thinking_model(&out, model));
    out
}

/// The text of tool-result content: a document counts as its extracted
/// text (images are carried separately).
pub fn result_text(content: &[ToolResultContent]) -> String {
    let mut text = String::new();
    for c in content {
        let t = match c {
            ToolResultContent::Text { text } | ToolResultContent::Document { text, .. } => text,
            ToolResultContent::Image { .. } => continue,
        };
        if t.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(t);
    }
    text
}

/// An attachment as the model reads it.
pub fn attachment_text(title: &str, text: &str) -> String {
    format!("<attachment title=\"{title}\">\n{text}\n</attachment>")
}

/// A `data:` URL for an inline image.
pub fn data_url(media_type: &str, data: &str) -> String {
    format!("data:{media_type};base64,{data}")
}

/// What a model without vision reads instead of an image (its
/// capabilities say `vision: false`, from the model table or a `models`
/// override). The request builders substitute it, so an image never
/// reaches a provider that would refuse it.
pub const IMAGE_OMITTED: &str = "[image not sent: this model cannot read images. Ask the person to describe it, or switch to a model that can see.]";

/// What a tool result with no text says (content is never an empty string).
pub const EMPTY_RESULT: &str = "(no output)";

/// The system prompt as one string: the stable part, then the session part.
pub fn system_text(system: &SystemPrompt) -> String {
    let mut text = system.stable.clone();
    if !system.session.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&system.session);
    }
    text
}

/// A piece of a user message for the formats whose tool outputs carry text
/// only (Chat Completions, Responses).
#[derive(Debug)]
pub enum UserPart<'a> {
    Text(String),
    Image(&'a ImageSource),
}

/// A user message split for the text-only-output formats: each tool output
/// is sent on its own, right after the assistant message that called it;
/// the person's text, attachments and every image (the outputs' too)
/// follow, in order, as one user message.
#[derive(Debug)]
pub struct SplitUser<'a> {
    /// `(tool_use_id, text)` in call order; the text is never empty and
    /// an error's starts with `Error: `.
    pub outputs: Vec<(&'a str, String)>,
    pub parts: Vec<UserPart<'a>>,
}

/// Splits a user message's blocks (see [`SplitUser`]).
pub fn split_user(content: &[UserBlock]) -> SplitUser<'_> {
    let mut split = SplitUser {
        outputs: Vec::new(),
        parts: Vec::new(),
    };
    for block in content {
        match block {
            UserBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                ..
            } => {
                let mut text = result_text(content);
                if text.is_empty() {
                    text = EMPTY_RESULT.to_owned();
                }
                if *is_error {
                    text = format!("Error: {text}");
                }
                split.outputs.push((tool_use_id.as_str(), text));
                for c in content {
                    if let ToolResultContent::Image { source } = c {
                        split.parts.push(UserPart::Image(source));
                    }
                }
            }
            UserBlock::Text { text } => split.parts.push(UserPart::Text(text.clone())),
            UserBlock::Attachment { title, text } => {
                split
                    .parts
                    .push(UserPart::Text(attachment_text(title, text)));
            }
            UserBlock::Image { source } => split.parts.push(UserPart::Image(source)),
        }
    }
    split
}
