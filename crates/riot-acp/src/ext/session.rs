//! The requests on saved sessions (`_riot/files`, `_riot/session_rename`,
//! `_riot/session_delete`, `_riot/set_model`) and the `_meta.riot` Riot
//! adds to ACP's session methods: the model and sandbox, and the
//! worktree a session works in.

use agent_client_protocol::v1::schema::Meta;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{FILES, SESSION_DELETE, SESSION_RENAME, SET_MODEL};
use crate::error::BadWorktreeAsk;
use crate::rpc::{DoneResponse, riot_request};

/// `_riot/files`: project files matching what follows an `@`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilesRequest {
    pub cwd: String,
    #[serde(default)]
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(FilesRequest, FILES, FilesResponse);

/// `_riot/files`' result: project-relative paths, best first.
#[derive(
    schemars::JsonSchema,
    Debug,
    Clone,
    Default,
    Serialize,
    Deserialize,
    agent_client_protocol::JsonRpcResponse,
)]
#[serde(rename_all = "camelCase")]
pub struct FilesResponse {
    pub files: Vec<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

/// `_riot/session_rename`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRenameRequest {
    pub session_id: String,
    pub title: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SessionRenameRequest, SESSION_RENAME, DoneResponse);

/// `_riot/session_delete`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionDeleteRequest {
    pub session_id: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SessionDeleteRequest, SESSION_DELETE, DoneResponse);

/// `_riot/set_model`.
#[derive(schemars::JsonSchema, Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetModelRequest {
    pub session_id: String,
    pub model: String,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub meta: Option<Meta>,
}

riot_request!(SetModelRequest, SET_MODEL, DoneResponse);

/// The `_meta` of `session/new`, `session/load` and `session/resume`
/// responses: the session's model, and its OS sandbox as every face shows
/// it ("sandboxed (bubblewrap)", "sandboxed (Landlock)", "not sandboxed:
/// REASON").
pub fn session_meta(model: &str, sandbox: &str) -> Meta {
    let mut meta = Meta::new();
    meta.insert("riot".into(), json!({ "model": model, "sandbox": sandbox }));
    meta
}

/// The worktree a `session/new` asks for in `_meta.riot.worktree`: a
/// name, or `""` / `true` for one Riot picks; `None` when not asked
/// (absent or `null`). Anything else is refused.
pub fn worktree_asked(meta: Option<&Meta>) -> Result<Option<String>, BadWorktreeAsk> {
    let Some(asked) = meta
        .and_then(|m| m.get("riot"))
        .and_then(|riot| riot.get("worktree"))
    else {
        return Ok(None);
    };
    match asked {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::String(name) => Ok(Some(name.clone())),
        serde_json::Value::Bool(true) => Ok(Some(String::new())),
        other => Err(BadWorktreeAsk {
            asked: other.clone(),
        }),
    }
}

/// Adds the session's worktree to `_meta.riot` of `session/new`'s answer:
/// `{name, branch, path, project, cwd}` — `cwd` is where the session
/// works (the worktree's counterpart of the directory asked from).
pub fn add_worktree(meta: &mut Meta, worktree: &riot_worktree::Worktree) {
    if let Some(serde_json::Value::Object(riot)) = meta.get_mut("riot") {
        riot.insert(
            "worktree".into(),
            json!({
                "name": worktree.name,
                "branch": worktree.branch,
                "path": worktree.path,
                "project": worktree.project,
                "cwd": worktree.cwd,
            }),
        );
    }
}

/// `_meta.riot.worktree` of a `session/list` entry whose session works in
/// a worktree: the transcript's record of it, `{name, branch, path,
/// project}`, and `present`: whether the worktree is still there (a
/// session whose worktree was removed cannot be opened).
pub fn listed_worktree(worktree: &impl serde::Serialize, present: bool) -> Meta {
    let mut listed = json!(worktree);
    if let Some(fields) = listed.as_object_mut() {
        fields.insert("present".into(), json!(present));
    }
    let mut meta = Meta::new();
    meta.insert("riot".into(), json!({ "worktree": listed }));
    meta
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_worktree_asked_for_is_a_name_or_true_and_anything_else_is_refused() {
        let meta = |worktree: Value| {
            let mut meta = Meta::new();
            meta.insert("riot".into(), json!({ "worktree": worktree }));
            meta
        };
        assert_eq!(worktree_asked(None), Ok(None));
        assert_eq!(worktree_asked(Some(&Meta::new())), Ok(None));
        assert_eq!(worktree_asked(Some(&meta(Value::Null))), Ok(None));
        assert_eq!(
            worktree_asked(Some(&meta(json!("w1")))),
            Ok(Some("w1".to_owned()))
        );
        assert_eq!(
            worktree_asked(Some(&meta(json!("")))),
            Ok(Some(String::new()))
        );
        assert_eq!(
            worktree_asked(Some(&meta(json!(true)))),
            Ok(Some(String::new()))
        );
        for (bad, shown) in [
            (json!(false), "false"),
            (json!(3), "3"),
            (json!({"name": "w1"}), r#"{"name":"w1"}"#),
            (json!(["w1"]), r#"["w1"]"#),
        ] {
            assert_eq!(
                worktree_asked(Some(&meta(bad))).map_err(|e| e.to_string()),
                Err(format!(
                    "_meta.riot.worktree must be a worktree name (a string; \"\" for one Riot picks) or true, not {shown}; leave it out to work in the project itself"
                ))
            );
        }
    }
}
