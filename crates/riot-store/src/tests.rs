use std::io::Write;

use riot_protocol::*;
use serde_json::json;

use super::*;

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path().join("sessions"));
    (dir, store)
}

fn meta(id: &str, cwd: &str, created: u64) -> SessionMeta {
    SessionMeta::new(SessionId::new(id), cwd.into(), "m", created)
}

fn tool_turn() -> (Message, Message) {
    let a = Message::Assistant(AssistantMessage {
        id: MessageId::new("a1"),
        content: vec![AssistantBlock::ToolUse {
            id: ToolUseId::new("t1"),
            name: "Read".into(),
            input: json!({"file_path": "a"}),
        }],
        model: "m".into(),
        stop_reason: Some(StopReason::ToolUse),
        interrupted: false,
    });
    let r = Message::User(UserMessage {
        id: MessageId::new("r1"),
        content: vec![UserBlock::ToolResult {
            tool_use_id: ToolUseId::new("t1"),
            content: vec![ToolResultContent::text("ok")],
            is_error: false,
            ui: None,
        }],
        origin: MessageOrigin::ToolResults,
    });
    (a, r)
}

#[test]
fn messages_withdrawals_compactions_and_model_changes_replay() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_a", "/p", 10)).unwrap();
    let prompt = Message::user_text(MessageId::new("u1"), "fix the test");
    let (a, r) = tool_turn();
    w.message(&prompt, 11).unwrap();
    w.message(&a, 12).unwrap();
    w.message(&r, 13).unwrap();
    let withdrawn = Message::user_text(MessageId::new("u2"), "never mind");
    w.message(&withdrawn, 14).unwrap();
    w.withdrawn(&MessageId::new("u2"), 15).unwrap();
    w.model_changed("fallback", 16).unwrap();
    w.mode_changed(PermissionMode::AcceptEdits, 17).unwrap();

    let loaded = store.load(&SessionId::new("ses_a")).unwrap();
    assert_eq!(loaded.messages, vec![prompt.clone(), a.clone(), r.clone()]);
    assert_eq!(loaded.model, "fallback");
    assert_eq!(loaded.mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(loaded.updated_ms, 17);
    assert_eq!(loaded.message_count, 4);
    assert_eq!(loaded.title(), "fix the test");
    // The stopped prompt stays in what a person reads, marked.
    let shown: Vec<(&MessageId, bool)> = loaded
        .shown
        .iter()
        .map(|s| (s.message.id(), s.interrupted))
        .collect();
    assert_eq!(
        shown,
        [
            (&MessageId::new("u1"), false),
            (&MessageId::new("a1"), false),
            (&MessageId::new("r1"), false),
            (&MessageId::new("u2"), true),
        ]
    );

    let summary = Message::User(UserMessage {
        id: MessageId::new("s1"),
        content: vec![UserBlock::Text {
            text: "summary".into(),
        }],
        origin: MessageOrigin::Summary,
    });
    w.compacted(
        std::slice::from_ref(&summary),
        CompactionStrategy::Summary,
        18,
    )
    .unwrap();
    let after = Message::user_text(MessageId::new("u3"), "next");
    w.message(&after, 19).unwrap();
    let loaded = store.load(&SessionId::new("ses_a")).unwrap();
    assert_eq!(
        loaded.messages,
        vec![summary, after],
        "resume starts at the compaction boundary"
    );

    w.cleared(20).unwrap();
    let fresh = Message::user_text(MessageId::new("u4"), "start over");
    w.message(&fresh, 21).unwrap();
    let loaded = store.load(&SessionId::new("ses_a")).unwrap();
    assert_eq!(loaded.messages, vec![fresh], "resume starts after /clear");
    assert_eq!(
        loaded.title(),
        "fix the test",
        "the title outlives compaction and /clear"
    );
    assert_eq!(loaded.updated_ms, 21);
}

#[test]
fn a_session_whose_only_prompt_was_stopped_keeps_it_as_its_title() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_stop", "/p", 10)).unwrap();
    let prompt = Message::user_text(MessageId::new("u1"), "refactor the parser");
    w.message(&prompt, 11).unwrap();
    w.withdrawn(&MessageId::new("u1"), 12).unwrap();
    let loaded = store.load(&SessionId::new("ses_stop")).unwrap();
    assert!(loaded.messages.is_empty(), "not sent to the model again");
    assert_eq!(
        loaded.shown,
        [ShownMessage {
            message: prompt,
            interrupted: true
        }]
    );
    assert_eq!(loaded.title(), "refactor the parser");
}

#[test]
fn the_endpoint_is_recorded_in_the_meta_and_older_metas_still_load() {
    let (_dir, store) = store();
    let mut m = meta("ses_ep", "/p", 1);
    m.provider = Some("openai".into());
    m.base_url = Some("http://127.0.0.1:11434/v1".into());
    store.create(&m).unwrap();
    let loaded = store.load(&SessionId::new("ses_ep")).unwrap();
    assert_eq!(loaded.meta.provider.as_deref(), Some("openai"));
    assert_eq!(
        loaded.meta.base_url.as_deref(),
        Some("http://127.0.0.1:11434/v1")
    );
    // A meta line written before the endpoint was recorded.
    let old: Record = serde_json::from_str(
        r#"{"type":"meta","id":"ses_old","cwd":"/p","model":"m","created_ms":1}"#,
    )
    .unwrap();
    let Record::Meta(old) = old else {
        panic!("meta expected")
    };
    assert_eq!((old.provider, old.base_url), (None, None));
}

#[test]
fn a_torn_last_line_is_ignored_and_appending_continues_on_a_new_line() {
    let (_dir, store) = store();
    let id = SessionId::new("ses_torn");
    let mut w = store.create(&meta("ses_torn", "/p", 1)).unwrap();
    let prompt = Message::user_text(MessageId::new("u1"), "hi");
    w.message(&prompt, 2).unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    // A crash in the middle of writing the next record.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"type":"message","at_ms":3,"message":{"role":"assis"#)
        .unwrap();
    drop(f);

    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, vec![prompt.clone()]);

    let mut w = store.append_to(&id).unwrap();
    let next = Message::user_text(MessageId::new("u2"), "again");
    w.message(&next, 4).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, vec![prompt, next]);
}

#[test]
fn damage_before_the_last_line_is_reported_with_file_and_line() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_bad", "/p", 1)).unwrap();
    let path = w.path().to_path_buf();
    w.message(&Message::user_text(MessageId::new("u1"), "hi"), 2)
        .unwrap();
    drop(w);
    let text = std::fs::read_to_string(&path).unwrap();
    let damaged = text.replacen("\"type\":\"message\"", "\"type\":\"mess", 1)
        + "{\"type\":\"model_changed\",\"at_ms\":5,\"model\":\"x\"}\n";
    std::fs::write(&path, damaged).unwrap();
    let err = store.load(&SessionId::new("ses_bad")).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("ses_bad.jsonl:2:"), "{msg}");
}

#[test]
fn list_is_newest_first_and_latest_in_matches_the_directory() {
    let (_dir, store) = store();
    let mut old = store.create(&meta("ses_old", "/p", 1)).unwrap();
    old.message(&Message::user_text(MessageId::new("u"), "old task"), 5)
        .unwrap();
    let mut new = store.create(&meta("ses_new", "/p", 2)).unwrap();
    new.message(&Message::user_text(MessageId::new("u"), "new task"), 9)
        .unwrap();
    let mut other = store.create(&meta("ses_other", "/q", 3)).unwrap();
    other
        .message(&Message::user_text(MessageId::new("u"), "elsewhere"), 20)
        .unwrap();

    let ids: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|s| s.id.to_string())
        .collect();
    assert_eq!(ids, vec!["ses_other", "ses_new", "ses_old"]);
    let latest = store
        .latest_in(std::path::Path::new("/p"))
        .unwrap()
        .unwrap();
    assert_eq!(latest.id.as_str(), "ses_new");
    assert_eq!(latest.title, "new task");
    assert_eq!(latest.messages, 1);
}

#[test]
fn ids_cannot_escape_the_store_and_unknown_ids_say_what_to_do() {
    let (_dir, store) = store();
    assert!(matches!(
        store.load(&SessionId::new("../../etc/passwd")),
        Err(StoreError::BadId(_))
    ));
    let err = store.load(&SessionId::new("ses_missing")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no session `ses_missing`; `riot sessions list` shows the sessions that exist"
    );
    assert!(matches!(
        store.delete(&SessionId::new("ses_missing")),
        Err(StoreError::UnknownSession(_))
    ));
}

#[test]
fn creating_an_existing_session_fails_instead_of_overwriting() {
    let (_dir, store) = store();
    let mut first = store.create(&meta("ses_x", "/p", 1)).unwrap();
    first
        .message(&Message::user_text(MessageId::new("u1"), "keep me"), 2)
        .unwrap();
    let err = store.create(&meta("ses_x", "/other", 9)).unwrap_err();
    assert!(
        err.to_string().contains("ses_x.jsonl"),
        "names the file: {err}"
    );
    let kept = store.load(&SessionId::new("ses_x")).unwrap();
    assert_eq!(kept.meta.created_ms, 1, "the first transcript is untouched");
    assert_eq!(kept.messages.len(), 1);
}

#[test]
fn a_name_replaces_the_first_prompt_as_title_without_moving_the_session() {
    let (_dir, store) = store();
    let id = SessionId::new("ses_named");
    let mut w = store.create(&meta("ses_named", "/p", 10)).unwrap();
    w.message(
        &Message::user_text(MessageId::new("u1"), "fix the flaky test"),
        11,
    )
    .unwrap();
    assert_eq!(store.load(&id).unwrap().title(), "fix the flaky test");

    let title = store.rename(&id, "  Flaky\n test   hunt ", 50).unwrap();
    assert_eq!(title, "Flaky test hunt");
    let later = store.rename(&id, "Test hunt", 60).unwrap();
    let summary = store
        .list()
        .unwrap()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap();
    assert_eq!(summary.title, later, "the latest name wins");
    assert_eq!(summary.updated_ms, 11, "naming is not activity");
    // The session's own writer keeps appending after the rename.
    w.message(&Message::user_text(MessageId::new("u2"), "go on"), 70)
        .unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.title(), "Test hunt");
    assert_eq!(loaded.messages.len(), 2);

    assert!(matches!(
        store.rename(&id, " \n ", 80),
        Err(StoreError::EmptyTitle)
    ));
    assert!(matches!(
        store.rename(&SessionId::new("ses_nobody"), "x", 80),
        Err(StoreError::UnknownSession(_))
    ));

    // A record half written (by the running session, or cut short by a
    // crash) is neither cut nor appended to by a rename.
    let path = store.path_of(&id).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"type\":\"message\",").unwrap();
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        store.rename(&id, "x", 90),
        Err(StoreError::Busy(_))
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
