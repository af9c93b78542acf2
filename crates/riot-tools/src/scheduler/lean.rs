//! Lean declarations (docs/windows.md): what schemars writes into a tool's
//! input schema that tells the model nothing is dropped before the schema
//! is declared, and in a small window the per-field descriptions go too
//! (the compact prompt names the fields that matter). Only Riot's own
//! tools are leaned; an MCP server's schema is sent as the server wrote it.

use serde_json::{Map, Value};

/// Numeric formats schemars adds for Rust integer and float types; the
/// model only needs "integer" or "number".
const NUMERIC_FORMATS: &[&str] = &[
    "uint", "uint8", "uint16", "uint32", "uint64", "int", "int8", "int16", "int32", "int64",
    "float", "double",
];

/// `schema` without its `$schema` and `title`, numeric formats, `default:
/// null`, and the `null` alternative of optional fields (an optional field
/// is one the model may leave out; Riot still accepts an explicit null).
/// With `compact`, property descriptions are dropped as well.
pub(crate) fn lean(schema: Value, compact: bool) -> Value {
    let Value::Object(mut root) = schema else {
        return schema;
    };
    root.remove("$schema");
    root.remove("title");
    lean_object(&mut root, compact);
    Value::Object(root)
}

fn lean_object(object: &mut Map<String, Value>, compact: bool) {
    if object.get("default") == Some(&Value::Null) {
        object.remove("default");
    }
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| NUMERIC_FORMATS.contains(&f))
    {
        object.remove("format");
    }
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                drop_null_alternative(property);
            }
            if compact && let Value::Object(p) = property {
                p.remove("description");
            }
        }
    }
    for value in object.values_mut() {
        match value {
            Value::Object(inner) => lean_object(inner, compact),
            Value::Array(items) => {
                for item in items.iter_mut() {
                    if let Value::Object(inner) = item {
                        lean_object(inner, compact);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `{"type": ["T", "null"]}` becomes `{"type": "T"}`, and `{"anyOf": [X,
/// {"type": "null"}]}` becomes X (keeping the property's own keys).
fn drop_null_alternative(property: &mut Value) {
    let Value::Object(p) = property else {
        return;
    };
    if let Some(Value::Array(types)) = p.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if kept.len() < types.len() {
            let single = match kept.as_slice() {
                [one] => one.clone(),
                _ => Value::Array(kept),
            };
            p.insert("type".to_owned(), single);
        }
    }
    let Some(Value::Array(any_of)) = p.get("anyOf") else {
        return;
    };
    let kept: Vec<Value> = any_of
        .iter()
        .filter(|alt| alt.get("type").and_then(Value::as_str) != Some("null"))
        .cloned()
        .collect();
    if let ([one], true) = (kept.as_slice(), kept.len() < any_of.len()) {
        let one = one.clone();
        p.remove("anyOf");
        if let Value::Object(inner) = one {
            for (k, v) in inner {
                p.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemars_noise_goes_and_meaning_stays() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "GrepInput",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "pattern": {"type": "string", "description": "A regex."},
                "head_limit": {"type": ["integer", "null"], "format": "uint", "minimum": 0,
                    "description": "At most.", "default": null},
                "mode": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}], "description": "How."},
                "either": {"type": ["string", "integer", "null"]}
            },
            "required": ["pattern"],
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"], "format": "uri"}}
        });
        assert_eq!(
            lean(schema.clone(), false),
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "pattern": {"type": "string", "description": "A regex."},
                    "head_limit": {"type": "integer", "minimum": 0, "description": "At most."},
                    "mode": {"$ref": "#/$defs/Mode", "description": "How."},
                    "either": {"type": ["string", "integer"]}
                },
                "required": ["pattern"],
                "$defs": {"Mode": {"type": "string", "enum": ["a", "b"], "format": "uri"}}
            })
        );
        let compact = lean(schema, true);
        assert_eq!(compact["properties"]["pattern"], json!({"type": "string"}));
        assert_eq!(
            compact["properties"]["mode"],
            json!({"$ref": "#/$defs/Mode"})
        );
    }

    #[test]
    fn a_required_nullable_field_keeps_its_null() {
        let schema = json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}, "required": ["x"]});
        assert_eq!(lean(schema.clone(), false), schema);
    }
}
