//! The page's accessibility tree (`Accessibility.getFullAXTree`) as compact
//! text: one line per meaningful node, indented by depth, each interactive
//! element with a ref (`e1`, `e2`, …) the Browser tool's actions name.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

/// Roles a person can act on: they get refs.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Roles that only group others: shown only when named.
const STRUCTURAL: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "InlineTextBox",
    "LineBreak",
    "RootWebArea",
    "WebArea",
    "paragraph",
    "group",
    "Section",
    "ListMarker",
];

#[derive(Debug, Deserialize)]
struct AxValue {
    #[serde(default)]
    value: Value,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AxProperty {
    name: String,
    value: AxValue,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AxNode {
    node_id: String,
    #[serde(default)]
    ignored: bool,
    role: Option<AxValue>,
    name: Option<AxValue>,
    value: Option<AxValue>,
    #[serde(default)]
    properties: Vec<AxProperty>,
    #[serde(default)]
    child_ids: Vec<String>,
    #[serde(rename = "backendDOMNodeId")]
    backend_dom_node_id: Option<i64>,
}

fn text_of(v: &Option<AxValue>) -> String {
    match v.as_ref().map(|v| &v.value) {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A snapshot: the text, and each ref's DOM node (`backendNodeId`).
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub text: String,
    pub refs: HashMap<String, i64>,
}

/// Renders the reply of `Accessibility.getFullAXTree`.
pub(crate) fn render(reply: &Value) -> Snapshot {
    let nodes: Vec<AxNode> = reply
        .get("nodes")
        .cloned()
        .and_then(|n| serde_json::from_value(n).ok())
        .unwrap_or_default();
    let by_id: HashMap<&str, &AxNode> = nodes.iter().map(|n| (n.node_id.as_str(), n)).collect();
    let mut snapshot = Snapshot::default();
    if let Some(root) = nodes.first() {
        walk(root, &by_id, 0, &mut snapshot);
    }
    snapshot
}

fn walk(node: &AxNode, by_id: &HashMap<&str, &AxNode>, depth: usize, out: &mut Snapshot) {
    let role = text_of(&node.role);
    let name = text_of(&node.name);
    // Grouping nodes (paragraphs, generic boxes) are not lines of their
    // own: their content is shown through their children.
    let structural = STRUCTURAL.contains(&role.as_str()) && role != "RootWebArea";
    let empty_text = role == "StaticText" && name.is_empty();
    let shown = !(node.ignored || structural || empty_text);
    let mut child_depth = depth;
    if shown {
        let mut line = "  ".repeat(depth);
        if role == "StaticText" {
            line.push_str(&format!("text \"{name}\""));
        } else {
            line.push_str(&role);
            if !name.is_empty() {
                line.push_str(&format!(" \"{name}\""));
            }
        }
        let value = text_of(&node.value);
        if !value.is_empty() && role != "StaticText" {
            line.push_str(&format!(" value=\"{value}\""));
        }
        for prop in &node.properties {
            match (prop.name.as_str(), &prop.value.value) {
                ("level", Value::Number(n)) => line.push_str(&format!(" level={n}")),
                ("checked" | "pressed" | "selected", Value::String(s)) if s == "true" => {
                    line.push_str(&format!(" {}", prop.name));
                }
                (
                    "checked" | "pressed" | "selected" | "expanded" | "disabled",
                    Value::Bool(true),
                ) => {
                    line.push_str(&format!(" {}", prop.name));
                }
                _ => {}
            }
        }
        if INTERACTIVE.contains(&role.as_str())
            && let Some(backend) = node.backend_dom_node_id
        {
            let r = format!("e{}", out.refs.len() + 1);
            line.push_str(&format!(" [ref={r}]"));
            out.refs.insert(r, backend);
        }
        out.text.push_str(&line);
        out.text.push('\n');
        child_depth += 1;
        // A link's or button's text is its name: its text children repeat it.
        if INTERACTIVE.contains(&role.as_str()) || role == "heading" {
            let only_text = node.child_ids.iter().all(|c| {
                by_id
                    .get(c.as_str())
                    .is_none_or(|n| text_of(&n.role) == "StaticText")
            });
            if only_text {
                return;
            }
        }
    }
    for child in &node.child_ids {
        if let Some(c) = by_id.get(child.as_str()) {
            walk(c, by_id, child_depth, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn headings_text_and_refs_for_interactive_elements() {
        let reply = json!({"nodes": [
            {"nodeId": "1", "ignored": false, "role": {"value": "RootWebArea"}, "name": {"value": "Demo"}, "childIds": ["2", "3", "5", "7"], "backendDOMNodeId": 1},
            {"nodeId": "2", "ignored": false, "role": {"value": "heading"}, "name": {"value": "Hello"}, "properties": [{"name": "level", "value": {"type": "integer", "value": 1}}], "childIds": ["4"], "backendDOMNodeId": 2},
            {"nodeId": "4", "ignored": false, "role": {"value": "StaticText"}, "name": {"value": "Hello"}, "childIds": [], "backendDOMNodeId": 9},
            {"nodeId": "3", "ignored": false, "role": {"value": "generic"}, "name": {"value": ""}, "childIds": ["6"], "backendDOMNodeId": 3},
            {"nodeId": "6", "ignored": false, "role": {"value": "StaticText"}, "name": {"value": "Some words"}, "childIds": [], "backendDOMNodeId": 10},
            {"nodeId": "5", "ignored": false, "role": {"value": "button"}, "name": {"value": "Go"}, "childIds": [], "backendDOMNodeId": 5},
            {"nodeId": "7", "ignored": false, "role": {"value": "textbox"}, "name": {"value": "Name"}, "value": {"value": "Ann"}, "childIds": [], "backendDOMNodeId": 7}
        ]});
        let snap = render(&reply);
        assert_eq!(
            snap.text,
            "RootWebArea \"Demo\"\n  heading \"Hello\" level=1\n  text \"Some words\"\n  button \"Go\" [ref=e1]\n  textbox \"Name\" value=\"Ann\" [ref=e2]\n"
        );
        assert_eq!(snap.refs.get("e1"), Some(&5));
        assert_eq!(snap.refs.get("e2"), Some(&7));
    }
}
