//! `--input-format stream-json`: user messages as JSON lines on stdin, in
//! Claude Code's shape — `{"type": "user", "message": {"role": "user",
//! "content": …}}` with content a string or a list of text blocks. Each
//! is answered in turn, in one session.

use serde_json::Value;

/// The prompt of one input line; `Ok(None)` for a blank line. The error
/// is one sentence saying what to send instead.
pub fn user_message(line: &str) -> Result<Option<String>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(line).map_err(|e| {
        format!("an input line is not JSON ({e}); send one user message per line as {SHAPE}")
    })?;
    if value.get("type").and_then(Value::as_str) != Some("user") {
        let kind = value
            .get("type")
            .map_or_else(|| "no type".to_owned(), |t| format!("type {t}"));
        return Err(format!(
            "an input line has {kind}; only user messages are read, as {SHAPE}"
        ));
    }
    let message = value
        .get("message")
        .ok_or_else(|| format!("a user line has no \"message\"; send {SHAPE}"))?;
    if let Some(role) = message.get("role").and_then(Value::as_str)
        && role != "user"
    {
        return Err(format!(
            "a user line's message has role \"{role}\"; its role must be \"user\""
        ));
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
                        return Err(format!(
                            "a user message holds a block of type `{}`; only text blocks ({{\"type\": \"text\", \"text\": …}}) are read",
                            kind.unwrap_or("untyped")
                        ));
                    }
                }
            }
            texts.join("\n")
        }
        _ => {
            return Err(format!(
                "a user message's \"content\" must be a string or a list of text blocks, as in {SHAPE}"
            ));
        }
    };
    if text.trim().is_empty() {
        return Err("a user message is empty; send the text of the prompt".to_owned());
    }
    Ok(Some(text))
}

/// The shape of a line, for error messages.
const SHAPE: &str = r#"{"type": "user", "message": {"role": "user", "content": "…"}}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_a_string_or_text_blocks() {
        assert_eq!(
            user_message(r#"{"type":"user","message":{"role":"user","content":"Hi"}}"#),
            Ok(Some("Hi".to_owned()))
        );
        assert_eq!(
            user_message(
                r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"parent_tool_use_id":null,"session_id":"x"}"#
            ),
            Ok(Some("a\nb".to_owned()))
        );
        assert_eq!(user_message("   "), Ok(None));
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
            let err = user_message(line).unwrap_err();
            assert!(err.contains(says), "{line}: {err}");
        }
    }
}
