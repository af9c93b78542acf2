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
            interrupted: true,
            rewound: false,
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

// ---- The list's index ----

/// A session's entry as `list()` shows it.
fn listed(store: &SessionStore, id: &str) -> SessionSummary {
    store
        .list()
        .unwrap()
        .into_iter()
        .find(|s| s.id.as_str() == id)
        .unwrap_or_else(|| panic!("{id} is not listed"))
}

/// A session's entry as `list()` shows it, checked against a full load.
fn agree(store: &SessionStore, id: &str) -> SessionSummary {
    let summary = listed(store, id);
    let loaded = store.load(&SessionId::new(id)).unwrap().summary();
    assert_eq!(summary, loaded, "the list and a full load agree");
    summary
}

/// Overwrites `len` bytes at `at` with `byte`, keeping the file's size
/// and modification time: what a reader trusting the index cannot see.
fn scribble_keeping_mtime(path: &std::path::Path, at: u64, len: usize, byte: u8) {
    use std::io::{Seek, SeekFrom};
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&vec![byte; len]).unwrap();
    file.set_modified(mtime).unwrap();
}

fn big_tool_turn(n: usize, text: &str) -> [Message; 2] {
    let call = Message::Assistant(AssistantMessage {
        id: MessageId::new(format!("a{n}")),
        content: vec![AssistantBlock::ToolUse {
            id: ToolUseId::new(format!("t{n}")),
            name: "Read".into(),
            input: json!({"file_path": "big.txt"}),
        }],
        model: "m".into(),
        stop_reason: Some(StopReason::ToolUse),
        interrupted: false,
    });
    let result = Message::User(UserMessage {
        id: MessageId::new(format!("r{n}")),
        content: vec![UserBlock::ToolResult {
            tool_use_id: ToolUseId::new(format!("t{n}")),
            content: vec![ToolResultContent::text(text)],
            is_error: false,
            ui: None,
        }],
        origin: MessageOrigin::ToolResults,
    });
    [call, result]
}

#[test]
fn list_reads_a_transcripts_entry_and_appended_lines_never_its_middle() {
    let (_dir, store) = store();
    let id = SessionId::new("ses_long");
    let mut w = store.create(&meta("ses_long", "/p", 10)).unwrap();
    w.message(
        &Message::user_text(MessageId::new("u1"), "read the big file"),
        11,
    )
    .unwrap();
    let path = w.path().to_path_buf();
    let middle_start = std::fs::metadata(&path).unwrap().len();
    let filler = "x".repeat(10_000);
    for n in 0..20 {
        for m in big_tool_turn(n, &filler) {
            w.message(&m, 12 + n as u64).unwrap();
        }
    }
    let middle_end = std::fs::metadata(&path).unwrap().len();
    assert!(middle_end > middle_start + 200_000);
    w.model_changed("other", 40).unwrap();

    // The middle turns to something no parser accepts, size and time kept.
    scribble_keeping_mtime(&path, middle_start + 5, 1000, b'#');
    let err = store.load(&id).unwrap_err();
    assert!(
        matches!(err, StoreError::Corrupt { line: 3, .. }),
        "the damage is real: {err}"
    );

    // The writer's entry answers for it: nothing of the transcript is read.
    let s = listed(&store, "ses_long");
    assert_eq!(
        (s.title.as_str(), s.messages, s.model.as_str(), s.updated_ms),
        ("read the big file", 41, "other", 40)
    );

    // Someone else appends (a rename): only the new line is read.
    store.rename(&id, "Big file", 50).unwrap();
    // The writer notices it was not alone and catches up from the entry.
    w.message(&Message::user_text(MessageId::new("u2"), "again"), 60)
        .unwrap();
    let s = listed(&store, "ses_long");
    assert_eq!(
        (s.title.as_str(), s.messages, s.updated_ms),
        ("Big file", 42, 60)
    );
    // And reading anew (no entry) does meet the damage: the session is
    // skipped, not listed wrongly.
    std::fs::remove_dir_all(&store.index).unwrap();
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn a_damaged_stale_or_missing_index_never_hides_a_session() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_i", "/p", 10)).unwrap();
    w.message(&Message::user_text(MessageId::new("u1"), "first"), 11)
        .unwrap();
    let path = w.path().to_path_buf();
    let entry = store.entry_of("ses_i");
    assert!(entry.exists(), "the writer keeps an entry");
    assert_eq!(agree(&store, "ses_i").messages, 1);

    // A torn entry.
    std::fs::write(&entry, b"{\"version\":1,\"cov").unwrap();
    assert_eq!(agree(&store, "ses_i").title, "first");
    // An entry of another format version.
    let text = std::fs::read_to_string(&entry).unwrap();
    std::fs::write(&entry, text.replace("\"version\":1", "\"version\":0")).unwrap();
    assert_eq!(agree(&store, "ses_i").messages, 1);
    // No index at all.
    std::fs::remove_dir_all(&store.index).unwrap();
    assert_eq!(agree(&store, "ses_i").messages, 1);

    // A record appended without its entry (a crash between the two).
    drop(w);
    let line = serde_json::to_string(&Record::Message {
        at_ms: 20,
        message: Message::user_text(MessageId::new("u2"), "second"),
    })
    .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(file, "{line}").unwrap();
    drop(file);
    let s = agree(&store, "ses_i");
    assert_eq!((s.messages, s.updated_ms), (2, 20));

    // The transcript replaced by another, longer one under the same id.
    let entry_before = std::fs::read(&entry).unwrap();
    std::fs::remove_file(&path).unwrap();
    let mut other = store.create(&meta("ses_i", "/elsewhere", 30)).unwrap();
    std::fs::write(&entry, &entry_before).unwrap();
    for n in 0..3 {
        other
            .message(
                &Message::user_text(MessageId::new(format!("v{n}")), "other task"),
                31,
            )
            .unwrap();
    }
    std::fs::write(&entry, &entry_before).unwrap();
    let s = agree(&store, "ses_i");
    assert_eq!(
        (s.cwd.to_str(), s.messages, s.title.as_str()),
        (Some("/elsewhere"), 3, "other task")
    );

    // Cut shorter than its entry says.
    let text = std::fs::read_to_string(&path).unwrap();
    let second_line_end = text.match_indices('\n').nth(1).unwrap().0 + 1;
    std::fs::write(&path, &text[..second_line_end]).unwrap();
    assert_eq!(agree(&store, "ses_i").messages, 1);

    // Rewritten in place to the same size: a new modification time.
    let text = std::fs::read_to_string(&path).unwrap();
    let renamed = text.replace("other task", "other work");
    assert_eq!(renamed.len(), text.len());
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, renamed).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_modified(mtime + std::time::Duration::from_secs(1))
        .unwrap();
    assert_eq!(agree(&store, "ses_i").title, "other work");

    // Deleting a session deletes its entry.
    store.delete(&SessionId::new("ses_i")).unwrap();
    assert!(!entry.exists());
    assert!(store.list().unwrap().is_empty());
}

#[test]
fn the_list_and_a_full_load_agree_record_by_record() {
    let (_dir, store) = store();
    let mut sub = meta("ses_sub", "/p", 100);
    sub.parent = Some(SessionId::new("ses_top"));
    let mut w = store.create(&sub).unwrap();
    let summary_of = |text: &str, id: &str, origin| {
        Message::User(UserMessage {
            id: MessageId::new(id),
            content: vec![UserBlock::Text { text: text.into() }],
            origin,
        })
    };
    let (a, r) = tool_turn();
    let long = "a prompt that is much longer than sixty characters, so the title is cut short";
    type Step = Box<dyn Fn(&mut TranscriptWriter)>;
    let steps: Vec<Step> = vec![
        Box::new(|w| w.mode_changed(PermissionMode::Plan, 101).unwrap()),
        Box::new(move |w| w.message(&a, 102).unwrap()),
        Box::new(move |w| w.message(&r, 103).unwrap()),
        // A compaction carries a prompt in before any was recorded: the
        // last resort for a title.
        Box::new(move |w| {
            w.compacted(
                &[
                    summary_of("summary", "s1", MessageOrigin::Summary),
                    summary_of("carried   in\nprompt", "c1", MessageOrigin::Person),
                    summary_of("second carried", "c2", MessageOrigin::Person),
                ],
                CompactionStrategy::Summary,
                104,
            )
            .unwrap()
        }),
        Box::new(|w| w.withdrawn(&MessageId::new("c1"), 105).unwrap()),
        Box::new(|w| w.model_changed("fallback", 106).unwrap()),
        Box::new(|w| w.cleared(107).unwrap()),
        Box::new(move |w| {
            w.message(&Message::user_text(MessageId::new("u1"), long), 108)
                .unwrap()
        }),
        Box::new(|w| w.withdrawn(&MessageId::new("u1"), 109).unwrap()),
        Box::new(|w| {
            w.message(&Message::user_text(MessageId::new("u2"), "later"), 110)
                .unwrap()
        }),
    ];
    let mut titles = Vec::new();
    for step in &steps {
        step(&mut w);
        titles.push(agree(&store, "ses_sub").title);
    }
    assert_eq!(
        titles,
        [
            "(no prompt)",
            "(no prompt)",
            "(no prompt)",
            "carried in prompt",
            "second carried",
            "second carried",
            "(no prompt)",
            "a prompt that is much longer than sixty characters, so the …",
            "a prompt that is much longer than sixty characters, so the …",
            "a prompt that is much longer than sixty characters, so the …",
        ]
    );
    store
        .rename(&SessionId::new("ses_sub"), "Named", 200)
        .unwrap();
    let s = agree(&store, "ses_sub");
    assert_eq!(
        s,
        SessionSummary {
            id: SessionId::new("ses_sub"),
            title: "Named".into(),
            cwd: "/p".into(),
            created_ms: 100,
            updated_ms: 110,
            messages: 4,
            model: "fallback".into(),
            parent: Some(SessionId::new("ses_top")),
            cost: None,
            worktree: None,
        }
    );
}

#[test]
fn a_last_record_without_a_line_break_is_listed_and_counted_once() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_nl", "/p", 1)).unwrap();
    w.message(&Message::user_text(MessageId::new("u1"), "one"), 2)
        .unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let line = |id: &str, at: u64| {
        serde_json::to_string(&Record::Message {
            at_ms: at,
            message: Message::user_text(MessageId::new(id), "more"),
        })
        .unwrap()
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(line("u2", 3).as_bytes()).unwrap();
    assert_eq!(agree(&store, "ses_nl").messages, 2);
    assert_eq!(agree(&store, "ses_nl").messages, 2, "again, from the entry");
    writeln!(file).unwrap();
    writeln!(file, "{}", line("u3", 4)).unwrap();
    let s = agree(&store, "ses_nl");
    assert_eq!((s.messages, s.updated_ms), (3, 4));
}

#[test]
fn the_transcripts_directory_holds_only_transcripts() {
    let (dir, store) = store();
    let mut w = store.create(&meta("ses_d", "/p", 1)).unwrap();
    w.message(&Message::user_text(MessageId::new("u1"), "hi"), 2)
        .unwrap();
    store.list().unwrap();
    let names = |d: &std::path::Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&dir.path().join("sessions")), ["ses_d.jsonl"]);
    assert_eq!(names(&dir.path().join("sessions-index")), ["ses_d.json"]);
}

#[test]
fn the_list_reads_a_sessions_cost_from_its_last_usage_record() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_cost", "/p", 1)).unwrap();
    w.message(&Message::user_text(MessageId::new("u1"), "hi"), 2)
        .unwrap();
    assert_eq!(
        agree(&store, "ses_cost").cost,
        None,
        "no request recorded yet"
    );
    let usage = Usage {
        input_tokens: 1_000,
        output_tokens: 100,
        cache_read_tokens: 5_000,
        cache_write_tokens: 200,
        web_searches: 0,
    };
    let price = Price::new(3.0, 15.0, 3.75, 0.30);
    let mut total = SessionCost::default();
    let first = total.add("m", &usage, false, Some(&price));
    w.write(&Record::Usage {
        at_ms: 3,
        model: "m".into(),
        usage,
        side: false,
        cost_usd: first,
        total: total.clone(),
    })
    .unwrap();
    let listed = agree(&store, "ses_cost");
    assert_eq!(listed.cost.as_ref(), Some(&total));
    assert_eq!(listed.updated_ms, 3, "a request is activity");
    // The index keeps the figure and catches up with the next record.
    assert_eq!(agree(&store, "ses_cost").cost.as_ref(), Some(&total));
    let second = total.add("local", &usage, true, None);
    w.write(&Record::Usage {
        at_ms: 4,
        model: "local".into(),
        usage,
        side: true,
        cost_usd: second,
        total: total.clone(),
    })
    .unwrap();
    let listed = agree(&store, "ses_cost");
    let cost = listed.cost.expect("a cost");
    assert_eq!(cost.usd, None, "one unknown price makes the total unknown");
    assert_eq!(cost.requests, 2);
    assert_eq!(cost.side_usage, usage);
    let loaded = store.load(&SessionId::new("ses_cost")).unwrap();
    assert_eq!(loaded.cost(), Some(&cost));
    assert_eq!(loaded.messages.len(), 1, "usage records are not history");

    // The line as it is written.
    let last = std::fs::read_to_string(store.path_of(&SessionId::new("ses_cost")).unwrap())
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&last).unwrap(),
        json!({"type": "usage", "at_ms": 4, "model": "local",
               "usage": {"input_tokens": 1000, "output_tokens": 100,
                         "cache_read_tokens": 5000, "cache_write_tokens": 200},
               "side": true,
               "total": {"usd": null,
                         "usage": {"input_tokens": 1000, "output_tokens": 100,
                                   "cache_read_tokens": 5000, "cache_write_tokens": 200},
                         "side_usage": {"input_tokens": 1000, "output_tokens": 100,
                                        "cache_read_tokens": 5000, "cache_write_tokens": 200},
                         "requests": 2, "unpriced": ["local"]}})
    );
}

#[test]
fn a_sessions_worktree_is_recorded_in_its_meta_and_listed() {
    let (_dir, store) = store();
    let mut m = meta("ses_wt", "/home/r/worktrees/p-1/w1", 5);
    let worktree = SessionWorktree {
        name: "w1".into(),
        branch: "riot/w1".into(),
        path: "/home/r/worktrees/p-1/w1".into(),
        project: "/work/p".into(),
    };
    m.worktree = Some(worktree.clone());
    let mut w = store.create(&m).unwrap();
    w.message(&Message::user_text(MessageId::new("u1"), "go"), 6)
        .unwrap();
    assert_eq!(agree(&store, "ses_wt").worktree, Some(worktree.clone()));
    let loaded = store.load(&SessionId::new("ses_wt")).unwrap();
    assert_eq!(loaded.meta.worktree, Some(worktree));
    // A session without one says nothing about it in its meta line.
    let mut plain = store.create(&meta("ses_plain", "/work/p", 7)).unwrap();
    plain
        .message(&Message::user_text(MessageId::new("u2"), "go"), 8)
        .unwrap();
    let path = store.path_of(&SessionId::new("ses_plain")).unwrap();
    let first = std::fs::read_to_string(&path).unwrap();
    assert!(
        !first.lines().next().unwrap().contains("worktree"),
        "{first}"
    );
    assert_eq!(agree(&store, "ses_plain").worktree, None);
}

fn png_source(seed: u8) -> ImageSource {
    use base64::Engine as _;
    // Not a decodable PNG: the store keeps bytes, it does not judge them.
    let bytes = [0x89, b'P', b'N', b'G', seed, seed, 0, 1];
    ImageSource {
        media_type: "image/png".into(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

fn image_messages(source: &ImageSource) -> [Message; 2] {
    let prompt = Message::User(UserMessage {
        id: MessageId::new("u1"),
        content: vec![
            UserBlock::Text {
                text: "what is this?".into(),
            },
            UserBlock::Image {
                source: source.clone(),
            },
        ],
        origin: MessageOrigin::Person,
    });
    let result = Message::User(UserMessage {
        id: MessageId::new("r1"),
        content: vec![UserBlock::ToolResult {
            tool_use_id: ToolUseId::new("t1"),
            content: vec![
                ToolResultContent::text("Image shot.png"),
                ToolResultContent::Image {
                    source: source.clone(),
                },
            ],
            is_error: false,
            ui: None,
        }],
        origin: MessageOrigin::ToolResults,
    });
    [prompt, result]
}

#[test]
fn images_are_stored_once_beside_the_transcript_and_loaded_back() {
    let (dir, store) = store();
    let source = png_source(7);
    let [prompt, result] = image_messages(&source);
    let mut w = store.create(&meta("ses_img", "/p", 1)).unwrap();
    w.message(&prompt, 2).unwrap();
    w.message(&result, 3).unwrap();
    w.compacted(
        std::slice::from_ref(&prompt),
        CompactionStrategy::Summary,
        4,
    )
    .unwrap();

    // The transcript holds references, not the data.
    let text = std::fs::read_to_string(dir.path().join("sessions/ses_img.jsonl")).unwrap();
    assert!(!text.contains(&source.data), "{text}");
    assert_eq!(text.matches(STORED_IMAGE_PREFIX).count(), 3, "{text}");
    // One file for the three uses, holding the decoded bytes.
    let images = dir.path().join("sessions-images/ses_img");
    let files: Vec<_> = std::fs::read_dir(&images)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        std::fs::read(&files[0]).unwrap(),
        [0x89, b'P', b'N', b'G', 7, 7, 0, 1]
    );
    assert_eq!(files[0].extension().unwrap(), "png");

    // Loading (resume) and the raw records both get the data back.
    let loaded = store.load(&SessionId::new("ses_img")).unwrap();
    assert_eq!(loaded.messages, vec![prompt.clone()]);
    let records = store.records(&SessionId::new("ses_img")).unwrap();
    assert_eq!(
        records[2],
        Record::Message {
            at_ms: 3,
            message: result
        }
    );

    // Deleting the session deletes its images.
    store.delete(&SessionId::new("ses_img")).unwrap();
    assert!(!images.exists());
}

#[test]
fn a_missing_image_file_loads_as_a_note_not_an_error() {
    let (dir, store) = store();
    let [prompt, result] = image_messages(&png_source(9));
    let mut w = store.create(&meta("ses_gone", "/p", 1)).unwrap();
    w.message(&prompt, 2).unwrap();
    w.message(&result, 3).unwrap();
    std::fs::remove_dir_all(dir.path().join("sessions-images/ses_gone")).unwrap();

    let loaded = store.load(&SessionId::new("ses_gone")).unwrap();
    let note = |text: &str| {
        text.starts_with("[an image was attached here, but its file ")
            && text.ends_with(".png is missing from the session]")
    };
    let user = loaded.messages[0].as_user().unwrap();
    assert!(matches!(&user.content[1], UserBlock::Text { text } if note(text)));
    let tool = loaded.messages[1].as_user().unwrap();
    let UserBlock::ToolResult { content, .. } = &tool.content[0] else {
        panic!("{tool:?}")
    };
    assert!(matches!(&content[1], ToolResultContent::Text { text } if note(text)));
}

fn pdf_result(data: &str) -> Message {
    Message::User(UserMessage {
        id: MessageId::new("r2"),
        content: vec![UserBlock::ToolResult {
            tool_use_id: ToolUseId::new("t2"),
            content: vec![
                ToolResultContent::text("doc.pdf: page 2 of 5 (PDF text).\n"),
                ToolResultContent::pdf(data, 1, "--- Page 2 ---\nIntroduction\n"),
            ],
            is_error: false,
            ui: None,
        }],
        origin: MessageOrigin::ToolResults,
    })
}

#[test]
fn a_documents_pdf_is_stored_beside_the_transcript_and_its_text_stands_in_when_gone() {
    use base64::Engine as _;
    let (dir, store) = store();
    let bytes = b"%PDF-1.5\n% pages two\n%%EOF\n";
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let result = pdf_result(&data);
    let mut w = store.create(&meta("ses_pdf", "/p", 1)).unwrap();
    w.message(&result, 2).unwrap();

    let text = std::fs::read_to_string(dir.path().join("sessions/ses_pdf.jsonl")).unwrap();
    assert!(!text.contains(&data), "{text}");
    assert_eq!(text.matches(STORED_IMAGE_PREFIX).count(), 1, "{text}");
    let files: Vec<_> = std::fs::read_dir(dir.path().join("sessions-images/ses_pdf"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].extension().unwrap(), "pdf");
    assert_eq!(std::fs::read(&files[0]).unwrap(), bytes);

    let loaded = store.load(&SessionId::new("ses_pdf")).unwrap();
    assert_eq!(loaded.messages, vec![result]);

    // Without its file, the document loads as its pages' text.
    std::fs::remove_file(&files[0]).unwrap();
    let loaded = store.load(&SessionId::new("ses_pdf")).unwrap();
    let tool = loaded.messages[0].as_user().unwrap();
    let UserBlock::ToolResult { content, .. } = &tool.content[0] else {
        panic!("{tool:?}")
    };
    assert_eq!(
        content,
        &vec![
            ToolResultContent::text("doc.pdf: page 2 of 5 (PDF text).\n"),
            ToolResultContent::text("--- Page 2 ---\nIntroduction\n"),
        ]
    );
}

#[test]
fn a_reference_naming_another_path_is_not_followed() {
    let (dir, store) = store();
    std::fs::write(dir.path().join("secret.png"), b"not yours").unwrap();
    let w = store.create(&meta("ses_ref", "/p", 1)).unwrap();
    // Written by hand, as a crafted transcript would be.
    let crafted = format!(
        r#"{{"type":"message","at_ms":2,"message":{{"role":"user","id":"u1","content":[{{"type":"image","source":{{"media_type":"image/png","data":"{STORED_IMAGE_PREFIX}../../secret.png"}}}}],"origin":"person"}}}}"#
    );
    let path = w.path().to_owned();
    drop(w);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(file, "{crafted}").unwrap();
    let loaded = store.load(&SessionId::new("ses_ref")).unwrap();
    let user = loaded.messages[0].as_user().unwrap();
    assert!(
        matches!(&user.content[0], UserBlock::Text { text } if text.contains("../../secret.png is missing")),
        "{user:?}"
    );
}

#[test]
fn a_rewind_withdraws_from_a_prompt_on_keeps_the_records_and_can_be_undone() {
    let (_dir, store) = store();
    let mut w = store.create(&meta("ses_rw", "/p", 1)).unwrap();
    let u1 = Message::user_text(MessageId::new("u1"), "first");
    let a1 = reply("a1", "one");
    let u2 = Message::user_text(MessageId::new("u2"), "second");
    let a2 = reply("a2", "two");
    for (m, at) in [(&u1, 2), (&a1, 3), (&u2, 4), (&a2, 5)] {
        w.message(m, at).unwrap();
    }
    let id = SessionId::new("ses_rw");
    let loaded = store.load(&id).unwrap();
    let numbered: Vec<(u32, &str, &str)> = loaded
        .prompts
        .iter()
        .map(|p| (p.number, p.id.as_str(), p.text.as_str()))
        .collect();
    assert_eq!(numbered, [(1, "u1", "first"), (2, "u2", "second")]);
    assert!(!loaded.undoable_rewind);

    w.rewound(2, &MessageId::new("u2"), 6).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, [u1.clone(), a1.clone()]);
    assert_eq!(loaded.prompts.len(), 1);
    assert!(loaded.undoable_rewind);
    // The records stay, marked, for the person.
    let marks: Vec<(&str, bool)> = loaded
        .shown
        .iter()
        .map(|s| (s.message.id().as_str(), s.rewound))
        .collect();
    assert_eq!(
        marks,
        [("u1", false), ("a1", false), ("u2", true), ("a2", true)]
    );

    w.rewind_undone(7).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, [u1.clone(), a1.clone(), u2, a2]);
    assert_eq!(loaded.prompts.len(), 2);
    assert!(loaded.shown.iter().all(|s| !s.rewound));
    assert!(!loaded.undoable_rewind);

    // Rewound again, then the conversation goes on: the new prompt takes
    // number 2, and the rewind can no longer be undone.
    w.rewound(2, &MessageId::new("u2"), 8).unwrap();
    let u3 = Message::user_text(MessageId::new("u3"), "instead");
    w.message(&u3, 9).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, [u1, a1, u3]);
    assert_eq!(loaded.prompts[1].number, 2);
    assert_eq!(loaded.prompts[1].id.as_str(), "u3");
    assert!(!loaded.undoable_rewind);
}

fn reply(id: &str, text: &str) -> Message {
    Message::Assistant(AssistantMessage {
        id: MessageId::new(id),
        content: vec![AssistantBlock::Text { text: text.into() }],
        model: "m".into(),
        stop_reason: Some(StopReason::EndTurn),
        interrupted: false,
    })
}
