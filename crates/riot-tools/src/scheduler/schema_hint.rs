//! Translating serde's structural errors into guidance for the model
//! (docs/design.md §6.3 step 3): a missing field, an unknown field and an
//! unknown variant each get their own hint.

/// The model-facing correction for a structural input error of `tool`.
pub fn schema_hint(tool: &str, error: &serde_json::Error) -> String {
    let raw = error.to_string();
    // serde_json appends " at line L column C"; from a Value it is 0/0 noise.
    let msg = raw.split(" at line ").next().unwrap_or(&raw);
    if let Some(field) = between(msg, "missing field `", "`") {
        return format!(
            "{tool} was called without the required parameter `{field}`. Call {tool} again with `{field}` set; the tool's schema lists every required parameter."
        );
    }
    if let Some(field) = between(msg, "unknown field `", "`") {
        let expected = expected_list(msg);
        return format!(
            "`{field}` is not a parameter of {tool}. Remove it and call again{}.",
            expected
                .map(|e| format!("; the parameters are {e}"))
                .unwrap_or_default()
        );
    }
    if let Some(value) = between(msg, "unknown variant `", "`") {
        let expected = expected_list(msg);
        return format!(
            "`{value}` is not an allowed value here. Use {} and call {tool} again.",
            expected
                .map(|e| format!("one of {e}"))
                .unwrap_or_else(|| "a value from the schema".into())
        );
    }
    if msg.starts_with("invalid type") || msg.starts_with("invalid value") {
        return format!(
            "The input to {tool} has a value of the wrong type ({msg}). Send each parameter with the type the schema gives (numbers unquoted, true/false for flags) and call again."
        );
    }
    format!(
        "The input to {tool} does not match its schema ({msg}). Fix the input and call {tool} again."
    )
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}

/// `expected one of `a`, `b`` → "`a`, `b`"; `expected `a`` → "`a`".
fn expected_list(msg: &str) -> Option<String> {
    let idx = msg.find("expected ")?;
    let rest = &msg[idx + "expected ".len()..];
    let rest = rest.strip_prefix("one of ").unwrap_or(rest);
    (!rest.is_empty() && rest.contains('`')).then(|| rest.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // fields exist to shape the errors under test
    struct Input {
        path: String,
        mode: Option<Mode>,
        count: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow,
    }

    fn hint(json: serde_json::Value) -> String {
        let err = serde_json::from_value::<Input>(json).unwrap_err();
        schema_hint("Demo", &err)
    }

    #[test]
    fn missing_unknown_field_and_unknown_variant_each_get_their_own_hint() {
        assert_eq!(
            hint(serde_json::json!({})),
            "Demo was called without the required parameter `path`. Call Demo again with `path` set; the tool's schema lists every required parameter."
        );
        assert_eq!(
            hint(serde_json::json!({"path": "a", "colour": 1})),
            "`colour` is not a parameter of Demo. Remove it and call again; the parameters are `path`, `mode`, `count`."
        );
        assert_eq!(
            hint(serde_json::json!({"path": "a", "mode": "medium"})),
            "`medium` is not an allowed value here. Use one of `fast` or `slow` and call Demo again."
        );
        assert!(
            hint(serde_json::json!({"path": "a", "count": "3"}))
                .starts_with("The input to Demo has a value of the wrong type")
        );
    }
}
