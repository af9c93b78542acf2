//! `--input-format stream-json`: user messages as JSON lines on stdin, in
//! Claude Code's shape — `{"type": "user", "message": {"role": "user",
//! "content": …}}` with content a string or a list of text blocks. Each
//! is answered in turn, in one session.

use serde_json::Value;

/// Why an input line is not a user message Riot reads; each says what to
/// send instead.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The line is not JSON.
    #[error("an input line is not JSON ({0}); send one user message per line as {SHAPE}")]
    NotJson(#[source] serde_json::Error),
    /// The line's `type` is not `user`; `found` is the one it has, if any.
    #[error(
        "an input line has {}; only user messages are read, as {SHAPE}",
        found.as_ref().map_or_else(|| "no type".to_owned(), |t| format!("type {t}"))
    )]
    NotUser {
        /// The line's `type`, when it has one.
        found: Option<Value>,
    },
    /// A user line without `message`.
    #[error("a user line has no \"message\"; send {SHAPE}")]
    NoMessage,
    /// The message's role is not `user`.
    #[error("a user line's message has role \"{role}\"; its role must be \"user\"")]
    NotUserRole {
        /// The role it has.
        role: String,
    },
    /// A content block that is not text (`kind`: its type, or `untyped`).
    #[error(
        "a user message holds a block of type `{kind}`; only text blocks ({{\"type\": \"text\", \"text\": …}}) are read"
    )]
    NotText {
        /// The block's type.
        kind: String,
    },
    /// `content` is neither a string nor a list of blocks.
    #[error(
        "a user message's \"content\" must be a string or a list of text blocks, as in {SHAPE}"
    )]
    BadContent,
    /// The message's text is blank.
    #[error("a user message is empty; send the text of the prompt")]
    Empty,
}

/// The prompt of one input line; `Ok(None)` for a blank line.
pub fn user_message(line: &str) -> Result<Option<String>, InputError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(line).map_err(InputError::NotJson)?;
    if value.get("type").and_then(Value::as_str) != Some("user") {
        return Err(InputError::NotUser {
            found: value.get("type").cloned(),
        });
    }
    let message = value.get("message").ok_or(InputError::NoMessage)?;
    if let Some(role) = message.get("role").and_then(Value::as_str)
        && role != "user"
    {
        return Err(InputError::NotUserRole {
            role: role.to_owned(),
        });
    }
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            for block in blocks {
                match (
                    block.get("type").and_then(Value::as_str),
                    block.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(text)) => texts.push(text),
                    (kind, _) => {
                        return Err(InputError::NotText {
                            kind: kind.unwrap_or("untyped").to_owned(),
                        });
                    }
                }
            }
            texts.join("\n")
        }
        _ => return Err(InputError::BadContent),
    };
    if text.trim().is_empty() {
        return Err(InputError::Empty);
    }
    Ok(Some(text))
}

/// The shape of a line, for error messages.
pub(super) const SHAPE: &str = r#"{"type": "user", "message": {"role": "user", "content": "…"}}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_a_string_or_text_blocks() {
        assert_eq!(
            user_message(r#"{"type":"user","message":{"role":"user","content":"Hi"}}"#).unwrap(),
            Some("Hi".to_owned())
        );
        assert_eq!(
            user_message(
                r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"parent_tool_use_id":null,"session_id":"x"}"#
            )
            .unwrap(),
            Some("a\nb".to_owned())
        );
        assert_eq!(user_message("   ").unwrap(), None);
    }

    #[test]
    fn anything_else_is_refused_saying_what_to_send() {
        let cases = [
            ("not json", "not JSON"),
            (r#"{"type":"control_request"}"#, "type \"control_request\""),
            (r#"{"type":"user"}"#, "no \"message\""),
            (
                r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#,
                "role \"assistant\"",
            ),
            (
                r#"{"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}"#,
                "a block of type `image`",
            ),
            (
                r#"{"type":"user","message":{"role":"user","content":42}}"#,
                "string or a list of text blocks",
            ),
            (
                r#"{"type":"user","message":{"role":"user","content":" "}}"#,
                "empty",
            ),
        ];
        for (line, says) in cases {
            let err = user_message(line).unwrap_err().to_string();
            assert!(err.contains(says), "{line}: {err}");
        }
    }
}
