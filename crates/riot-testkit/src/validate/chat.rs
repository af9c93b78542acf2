//! The Chat Completions API's checks: content, images, reasoning fields
//! and `tool_calls` / tool message pairing.

use serde_json::Value;

use super::{Rejection, check_data_url, check_effort, reject};
use crate::script::{ReasoningRule, Wire};

/// Validates a Chat Completions request body; `Ok` when the real API
/// would accept it.
pub(super) fn check_request(body: &Value, rule: ReasoningRule) -> Result<(), Rejection> {
    let w = Wire::Openai;
    check_effort(w, "reasoning_effort", body.get("reasoning_effort"))?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return reject(w, "Missing required parameter: 'messages'.".into());
    };
    // Ids of the last assistant `tool_calls` still waiting for answers.
    let mut open: Option<(usize, Vec<String>)> = None;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        check_content(m, i, role)?;
        if m.get("reasoning_content").is_some() && rule == ReasoningRule::Reject {
            return reject(
                w,
                format!("Unrecognized request argument supplied: messages[{i}].reasoning_content"),
            );
        }
        if role != "tool"
            && let Some((at, ids)) = &open
            && !ids.is_empty()
        {
            return reject_unanswered(*at, ids);
        }
        match role {
            "system" | "developer" | "user" => open = None,
            "assistant" => open = Some((i, assistant_calls(m, i, rule)?)),
            "tool" => answer_call(m, &mut open)?,
            other => {
                return reject(
                    w,
                    format!(
                        "Invalid value: '{other}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'."
                    ),
                );
            }
        }
    }
    if let Some((at, ids)) = open
        && !ids.is_empty()
    {
        return reject_unanswered(at, &ids);
    }
    Ok(())
}

/// Rejects the tool calls `ids` of the assistant message `at` that no tool
/// message answered.
fn reject_unanswered(at: usize, ids: &[String]) -> Result<(), Rejection> {
    reject(
        Wire::Openai,
        format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {} (messages[{at}])",
            ids.join(", ")
        ),
    )
}

/// The content of message `i` (of role `role`): not an empty string, and
/// images only from the user, each a valid URL.
fn check_content(m: &Value, i: usize, role: &str) -> Result<(), Rejection> {
    let w = Wire::Openai;
    if let Some(Value::String(s)) = m.get("content")
        && s.is_empty()
    {
        return reject(
            w,
            format!(
                "Invalid 'messages[{i}].content': string too short. Expected a string with minimum length 1, but got an empty string instead."
            ),
        );
    }
    if let Some(parts) = m.get("content").and_then(Value::as_array) {
        for (k, part) in parts.iter().enumerate() {
            if part.get("type").and_then(Value::as_str) != Some("image_url") {
                continue;
            }
            if role != "user" {
                return reject(
                    w,
                    format!(
                        "Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL."
                    ),
                );
            }
            let url = part
                .pointer("/image_url/url")
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Err(why) = check_data_url(url) {
                return reject(
                    w,
                    format!("Invalid image URL: 'messages[{i}].content[{k}].image_url.url'. {why}"),
                );
            }
        }
    }
    Ok(())
}

/// Checks the assistant message `i`: its `tool_calls` are functions with
/// string arguments, it passes reasoning back when `rule` requires, and it
/// has content or calls. Returns the ids of its calls.
fn assistant_calls(m: &Value, i: usize, rule: ReasoningRule) -> Result<Vec<String>, Rejection> {
    let w = Wire::Openai;
    let calls = m.get("tool_calls").and_then(Value::as_array);
    let mut ids = Vec::new();
    for (j, call) in calls.into_iter().flatten().enumerate() {
        if call.get("type").and_then(Value::as_str) != Some("function") {
            return reject(
                w,
                format!("Missing required parameter: 'messages[{i}].tool_calls[{j}].type'."),
            );
        }
        let args = call.pointer("/function/arguments");
        if !args.is_some_and(Value::is_string) {
            let got = match args {
                Some(Value::Object(_)) => "an object",
                Some(Value::Array(_)) => "an array",
                None => "nothing",
                _ => "a non-string value",
            };
            return reject(
                w,
                format!(
                    "Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string, but got {got} instead."
                ),
            );
        }
        ids.push(
            call.get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        );
    }
    if !ids.is_empty()
        && rule == ReasoningRule::RequireOnToolTurns
        && m.get("reasoning_content").is_none()
    {
        return reject(
            w,
            format!(
                "Missing `reasoning_content` field in the assistant message at message index {i}. In thinking mode, the `reasoning_content` of assistant messages that made tool calls must be passed back to the API."
            ),
        );
    }
    let content_ok = match m.get("content") {
        Some(Value::String(_)) | Some(Value::Array(_)) => true,
        None | Some(Value::Null) => !ids.is_empty(),
        _ => false,
    };
    if !content_ok {
        return reject(
            w,
            format!(
                "Invalid value for 'messages[{i}].content': an assistant message needs content or tool_calls."
            ),
        );
    }
    Ok(ids)
}

/// The tool message `m` answers one of the `open` calls, which it removes.
fn answer_call(m: &Value, open: &mut Option<(usize, Vec<String>)>) -> Result<(), Rejection> {
    let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
    let answered = match open {
        Some((_, ids)) => match ids.iter().position(|x| x == id) {
            Some(p) => {
                ids.remove(p);
                true
            }
            None => false,
        },
        None => false,
    };
    if !answered {
        return reject(Wire::Openai, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into());
    }
    Ok(())
}
