//! The Responses API's checks: tools, `include`, input items and
//! function call / output pairing.

use std::collections::HashSet;

use serde_json::Value;

use super::{Rejection, check_data_url, check_effort, reject};
use crate::script::Wire;

/// What the Responses API's `include` takes.
const RESPONSES_INCLUDES: &[&str] = &[
    "reasoning.encrypted_content",
    "web_search_call.action.sources",
    "web_search_call.results",
    "code_interpreter_call.outputs",
    "computer_call_output.output.image_url",
    "file_search_call.results",
    "message.input_image.image_url",
    "message.output_text.logprobs",
];

/// `tools`, `include` and `max_tool_calls` as the Responses API checks them.
fn responses_tools(body: &Value) -> Result<(), Rejection> {
    let w = Wire::OpenaiResponses;
    for (i, tool) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match tool.get("type").and_then(Value::as_str).unwrap_or("") {
            "function" => {
                if tool
                    .get("name")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    return reject(w, format!("Missing required parameter: 'tools[{i}].name'."));
                }
            }
            "web_search" | "web_search_2025_08_26" => {
                if let Some(key) = tool
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.keys())
                    .find(|k| {
                        !matches!(
                            k.as_str(),
                            "type" | "filters" | "search_context_size" | "user_location"
                        )
                    })
                {
                    return reject(w, format!("Unknown parameter: 'tools[{i}].{key}'."));
                }
            }
            other => {
                return reject(
                    w,
                    format!(
                        "Invalid value: '{other}'. Supported values are: 'function', 'web_search', 'web_search_2025_08_26', 'file_search', 'computer_use_preview', 'code_interpreter', 'image_generation', 'mcp' and 'local_shell'."
                    ),
                );
            }
        }
    }
    for (i, value) in body
        .get("include")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = value.as_str().unwrap_or("");
        if !RESPONSES_INCLUDES.contains(&name) {
            return reject(
                w,
                format!("Invalid value: '{name}'. Supported values are listed for 'include[{i}]'."),
            );
        }
    }
    if let Some(max) = body.get("max_tool_calls")
        && max.as_u64().is_none_or(|n| n == 0)
    {
        return reject(
            w,
            "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1.".into(),
        );
    }
    Ok(())
}

/// Validates a Responses request body; `Ok` when the real API would
/// accept it.
pub(super) fn check_request(body: &Value) -> Result<(), Rejection> {
    let w = Wire::OpenaiResponses;
    responses_tools(body)?;
    check_effort(
        w,
        "reasoning.effort",
        body.get("reasoning").and_then(|r| r.get("effort")),
    )?;
    let Some(input) = body.get("input").and_then(Value::as_array) else {
        return reject(w, "Missing required parameter: 'input'.".into());
    };
    let store = body.get("store").and_then(Value::as_bool).unwrap_or(true);
    let mut calls: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for (i, item) in input.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "function_call" => {
                if !item.get("arguments").is_some_and(Value::is_string) {
                    return reject(
                        w,
                        format!(
                            "Invalid type for 'input[{i}].arguments': expected a string, but got an object instead."
                        ),
                    );
                }
                calls.push(
                    item.get("call_id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                );
            }
            "function_call_output" => {
                let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                if !calls.iter().any(|c| c == id) {
                    return reject(
                        w,
                        format!("No tool call found for function call output with call_id {id}."),
                    );
                }
                answered.insert(id.to_owned());
            }
            "reasoning" => {
                if !store
                    && item
                        .get("encrypted_content")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    let id = item.get("id").and_then(Value::as_str).unwrap_or("");
                    return reject(
                        w,
                        format!(
                            "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                        ),
                    );
                }
            }
            _ => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                check_message_parts(item, i, role)?;
                if role == "user"
                    && let Some(missing) = calls.iter().find(|c| !answered.contains(*c))
                {
                    return reject(
                        w,
                        format!("No tool output found for function call {missing}."),
                    );
                }
            }
        }
    }
    if let Some(missing) = calls.iter().find(|c| !answered.contains(*c)) {
        return reject(
            w,
            format!("No tool output found for function call {missing}."),
        );
    }
    Ok(())
}

/// The content parts of the message item `i` (of role `role`): images
/// only from the user, each a valid URL, and no Chat-style `image_url`.
fn check_message_parts(item: &Value, i: usize, role: &str) -> Result<(), Rejection> {
    let w = Wire::OpenaiResponses;
    let parts = item.get("content").and_then(Value::as_array);
    for (k, part) in parts.into_iter().flatten().enumerate() {
        let t = part.get("type").and_then(Value::as_str).unwrap_or("");
        match t {
            "input_image" if role == "assistant" => {
                return reject(
                    w,
                    format!(
                        "Invalid value: 'input_image'. Supported values are: 'output_text' and 'refusal'. (input[{i}].content[{k}])"
                    ),
                );
            }
            "input_image" => {
                let url = part.get("image_url").and_then(Value::as_str).unwrap_or("");
                if let Err(why) = check_data_url(url) {
                    return reject(
                        w,
                        format!("Invalid 'input[{i}].content[{k}].image_url'. {why}"),
                    );
                }
            }
            "image_url" => {
                return reject(
                    w,
                    format!(
                        "Invalid value: 'image_url'. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'. (input[{i}].content[{k}].type)"
                    ),
                );
            }
            _ => {}
        }
    }
    Ok(())
}
