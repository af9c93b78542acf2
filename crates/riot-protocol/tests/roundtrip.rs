//! L1 contract tests (docs/testing.md): every variant of every wire enum
//! round-trips through JSON, no serialized object has a duplicate key (the
//! tag-collision rule of docs/design.md §4), and the samples provably cover
//! every variant — the list of variants is read from the generated JSON
//! Schema, so a new variant without a sample fails here.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is the report
#![allow(clippy::disallowed_methods)] // tests read committed fixtures directly

use std::collections::BTreeSet;
use std::fmt::Debug;

use riot_protocol::*;
use schemars::JsonSchema;
use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::{Deserializer, Serialize};
use serde_json::{Value, json};

/// Fails on an object with a repeated key anywhere in the document.
struct NoDuplicateKeys;

impl<'de> serde::de::DeserializeSeed<'de> for NoDuplicateKeys {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDuplicateKeys)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value_seed(NoDuplicateKeys)?;
        }
        Ok(())
    }
}

fn assert_no_duplicate_keys(json: &str) {
    let mut de = serde_json::Deserializer::from_str(json);
    serde::de::DeserializeSeed::deserialize(NoDuplicateKeys, &mut de)
        .unwrap_or_else(|e| panic!("tag collision in {json}: {e}"));
}

/// The values of `tag` across the variants of an internally tagged enum,
/// read from its JSON Schema.
fn schema_tags<T: JsonSchema>(tag: &str) -> BTreeSet<String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let mut tags = BTreeSet::new();
    collect_tags(&schema, tag, &mut tags);
    assert!(!tags.is_empty(), "no `{tag}` tags found in the schema");
    tags
}

fn collect_tags(schema: &Value, tag: &str, out: &mut BTreeSet<String>) {
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            for variant in variants {
                let prop = &variant["properties"][tag];
                if let Some(c) = prop.get("const").and_then(Value::as_str) {
                    out.insert(c.to_owned());
                } else if let Some(Value::Array(e)) = prop.get("enum") {
                    out.extend(e.iter().filter_map(Value::as_str).map(str::to_owned));
                }
            }
        }
    }
}

/// Round-trips each sample, checks for duplicate keys, and checks the
/// samples cover every variant the schema declares.
fn check_enum<T>(tag: &str, samples: &[T])
where
    T: Serialize + DeserializeOwned + JsonSchema + PartialEq + Debug,
{
    let mut covered = BTreeSet::new();
    for sample in samples {
        let text = serde_json::to_string(sample).unwrap();
        assert_no_duplicate_keys(&text);
        let back: T = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{text} does not deserialize: {e}"));
        assert_eq!(&back, sample, "round trip changed {text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        let tag_value = value[tag]
            .as_str()
            .unwrap_or_else(|| panic!("{text} has no string `{tag}`"));
        covered.insert(tag_value.to_owned());
    }
    let declared = schema_tags::<T>(tag);
    let missing: Vec<_> = declared.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "{}: no sample for variants {missing:?}",
        std::any::type_name::<T>()
    );
}

fn tool_ui() -> ToolResultUi {
    ToolResultUi {
        describe: "Read src/main.rs".into(),
        payload: Some(UiPayload::FileRead {
            path: "/p/src/main.rs".into(),
            start_line: 1,
            lines: 3,
            total_lines: 3,
            truncated: false,
        }),
        duration_ms: 4,
    }
}

fn image() -> ImageSource {
    ImageSource {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    }
}

fn pdf() -> ImageSource {
    ImageSource {
        media_type: "application/pdf".into(),
        data: "JVBERi0xLjU=".into(),
    }
}

fn document() -> ToolResultContent {
    ToolResultContent::Document {
        source: pdf(),
        pages: 2,
        text: "--- Page 2 ---\nIntroduction".into(),
    }
}

fn user_blocks() -> Vec<UserBlock> {
    vec![
        UserBlock::Text {
            text: "fix the test — 修复测试 🦀".into(),
        },
        UserBlock::Image { source: image() },
        UserBlock::ToolResult {
            tool_use_id: ToolUseId::new("toolu_1"),
            content: vec![
                ToolResultContent::text("     1\tfn main() {}"),
                ToolResultContent::Image { source: image() },
                document(),
            ],
            is_error: false,
            ui: Some(tool_ui()),
        },
        UserBlock::Attachment {
            title: "AGENTS.md".into(),
            text: "Run cargo test before committing.".into(),
        },
    ]
}

fn assistant_blocks() -> Vec<AssistantBlock> {
    vec![
        AssistantBlock::Text {
            text: "I'll read it.".into(),
        },
        AssistantBlock::Thinking {
            text: "The test fails because…".into(),
            signature: Some("sig==".into()),
            model: "claude-sonnet-4-5".into(),
            item_id: Some("rs_1".into()),
        },
        AssistantBlock::RedactedThinking {
            data: "opaque".into(),
            model: "claude-sonnet-4-5".into(),
        },
        AssistantBlock::ToolUse {
            id: ToolUseId::new("toolu_1"),
            name: "Read".into(),
            input: json!({"file_path": "src/main.rs", "type": "not a tag"}),
        },
        AssistantBlock::WebSearch {
            id: "srvtoolu_1".into(),
            query: "riot".into(),
            results: vec![riot_protocol::WebResult {
                title: "Riot".into(),
                url: "https://riot.example/".into(),
                snippet: String::new(),
            }],
            error: Some("the search service is unavailable (unavailable)".into()),
            replay: vec![json!({"type": "server_tool_use", "id": "srvtoolu_1"})],
        },
    ]
}

fn messages() -> Vec<Message> {
    vec![
        Message::User(UserMessage {
            id: MessageId::new("msg_1"),
            content: user_blocks(),
            origin: MessageOrigin::ToolResults,
        }),
        Message::user_text(MessageId::new("msg_2"), "hello"),
        Message::Assistant(AssistantMessage {
            id: MessageId::new("msg_3"),
            content: assistant_blocks(),
            model: "claude-sonnet-4-5".into(),
            stop_reason: Some(StopReason::ToolUse),
            interrupted: true,
        }),
        Message::System(SystemMessage {
            id: MessageId::new("msg_4"),
            text: "Switched to the fallback model.".into(),
            level: SystemLevel::Warning,
        }),
    ]
}

fn reasons() -> Vec<DecisionReason> {
    vec![
        DecisionReason::Rule {
            detail: "denied by Bash(git push *)".into(),
            rule: "Bash(git push *)".into(),
            behavior: RuleBehavior::Deny,
            source: RuleSource::Project,
        },
        DecisionReason::Mode {
            detail: "default mode asks before edits".into(),
            mode: PermissionMode::Default,
        },
        DecisionReason::Safety {
            detail: "writes to ~/.zshrc".into(),
        },
        DecisionReason::Unverifiable {
            detail: "command substitution".into(),
        },
        DecisionReason::Consent {
            detail: "writes a file".into(),
        },
        DecisionReason::Classifier {
            detail: "routine test run".into(),
        },
        DecisionReason::Hook {
            detail: "blocked on Fridays".into(),
            hook: "friday.sh".into(),
        },
        DecisionReason::Sandbox {
            detail: "bubblewrap active".into(),
        },
        DecisionReason::NoAnswer {
            detail: "nobody can answer in exec".into(),
            asked: Box::new(DecisionReason::Consent {
                detail: "writes a file".into(),
            }),
        },
        DecisionReason::User {
            detail: "allowed once".into(),
        },
    ]
}

fn request_detail() -> PermissionRequestDetail {
    PermissionRequestDetail {
        tool_use_id: ToolUseId::new("toolu_9"),
        tool_name: "Bash".into(),
        describe: "Run rm -rf build".into(),
        input: json!({"command": "rm -rf build"}),
        path: None,
        command: Some("rm -rf build".into()),
        reason: DecisionReason::Unverifiable {
            detail: "not read-only".into(),
        },
        message: "Allow Bash to run `rm -rf build`?".into(),
        suggested_rule: Some("Bash(rm -rf build)".into()),
        preview: None,
    }
}

/// A question about a write, with the diff the write would make.
fn write_detail() -> PermissionRequestDetail {
    PermissionRequestDetail {
        tool_use_id: ToolUseId::new("toolu_10"),
        tool_name: "Write".into(),
        describe: "Write notes.txt".into(),
        input: json!({"file_path": "notes.txt", "content": "one\n"}),
        path: Some("/p/notes.txt".into()),
        command: None,
        reason: DecisionReason::Mode {
            detail: "file writes need approval in the default mode".into(),
            mode: PermissionMode::Default,
        },
        message: "Allow Write?".into(),
        suggested_rule: None,
        preview: Some(UiPayload::FileDiff {
            path: "notes.txt".into(),
            created: true,
            hunks: vec![DiffHunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: 1,
                lines: vec![DiffLine {
                    kind: DiffLineKind::Added,
                    text: "one".into(),
                }],
            }],
        }),
    }
}

fn outcomes() -> Vec<PermissionOutcome> {
    vec![
        PermissionOutcome::AllowOnce,
        PermissionOutcome::AllowAlways {
            rule: "Bash(cargo test *)".into(),
        },
        PermissionOutcome::RejectOnce {
            feedback: Some("use the Makefile".into()),
        },
        PermissionOutcome::RejectAlways {
            rule: "Bash(git push *)".into(),
        },
        PermissionOutcome::TimedOut,
        PermissionOutcome::Cancelled,
    ]
}

fn ui_payloads() -> Vec<UiPayload> {
    vec![
        UiPayload::FileRead {
            path: "/p/a.rs".into(),
            start_line: 10,
            lines: 20,
            total_lines: 400,
            truncated: true,
        },
        UiPayload::ImageRead {
            path: "/p/logo.png".into(),
            media_type: "image/png".into(),
            bytes: 2048,
        },
        UiPayload::NotebookRead {
            path: "/p/n.ipynb".into(),
            cells: vec![NotebookCell {
                id: "c1".into(),
                cell_type: "code".into(),
                lines: 2,
                outputs: 1,
            }],
        },
        UiPayload::PdfRead {
            path: "/p/spec.pdf".into(),
            first_page: 3,
            last_page: 7,
            total_pages: 40,
        },
        UiPayload::DocumentRead {
            path: "/p/book.xlsx".into(),
            summary: "Sales: A1:C40".into(),
        },
        UiPayload::FileDiff {
            path: "/p/a.rs".into(),
            created: false,
            hunks: vec![DiffHunk {
                old_start: 3,
                old_lines: 1,
                new_start: 3,
                new_lines: 1,
                lines: vec![
                    DiffLine {
                        kind: DiffLineKind::Removed,
                        text: "let x = 1;".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Added,
                        text: "let x = 2;".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Context,
                        text: "}".into(),
                    },
                ],
            }],
        },
        UiPayload::NotebookCellDiff {
            path: "analysis.ipynb".into(),
            cell_id: "a1b2c3d4".into(),
            hunks: vec![DiffHunk {
                old_start: 1,
                old_lines: 2,
                new_start: 1,
                new_lines: 2,
                lines: vec![
                    DiffLine {
                        kind: DiffLineKind::Context,
                        text: "import pandas as pd".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Removed,
                        text: "df = pd.read_csv('a.csv')".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Added,
                        text: "df = pd.read_csv('b.csv')".into(),
                    },
                ],
            }],
        },
        UiPayload::Command {
            command: "cargo test".into(),
            exit_code: Some(101),
            stdout: "running 3 tests".into(),
            stderr: "error".into(),
            truncated: false,
            timed_out: false,
            background_id: None,
        },
        UiPayload::FileList {
            pattern: "**/*.rs".into(),
            paths: vec!["src/lib.rs".into()],
            total: 1,
            truncated: false,
        },
        UiPayload::SearchResults {
            pattern: "fn main".into(),
            matches: vec![SearchMatch {
                path: "src/main.rs".into(),
                line: Some(1),
                text: Some("fn main() {}".into()),
                count: None,
            }],
            total: 1,
            truncated: false,
        },
        UiPayload::Todos {
            todos: vec![Todo {
                content: "Run the tests".into(),
                status: TodoStatus::InProgress,
                active_form: Some("Running the tests".into()),
            }],
        },
        UiPayload::Text { text: "ok".into() },
        UiPayload::WebPage {
            url: "https://docs.rs/serde".into(),
            status: 200,
            bytes: 5120,
            content_type: Some("text/html; charset=utf-8".into()),
            title: Some("serde - Rust".into()),
            redirect: None,
            truncated: false,
            cached: false,
        },
        UiPayload::WebResults {
            query: "serde derive".into(),
            results: vec![WebResult {
                title: "Derive".into(),
                url: "https://serde.rs/derive.html".into(),
                snippet: "Using derive".into(),
            }],
        },
        UiPayload::Diagnostics {
            checkers: vec!["cargo check --message-format=json".into()],
            diagnostics: vec![riot_protocol::Diagnostic {
                path: "src/main.rs".into(),
                line: 3,
                column: 18,
                severity: riot_protocol::Severity::Error,
                code: Some("E0308".into()),
                message: "mismatched types".into(),
                source: "cargo".into(),
            }],
            total: 1,
            truncated: false,
        },
    ]
}

fn terminal_reasons() -> Vec<TerminalReason> {
    vec![
        TerminalReason::Completed,
        TerminalReason::MaxTurns,
        TerminalReason::Aborted {
            by: AbortSource::UserInterjection,
        },
        TerminalReason::StopHookPrevented,
        TerminalReason::Refusal,
        TerminalReason::Error {
            error: AgentError {
                kind: ErrorKind::OutputLimit,
                message: "The reply hit the output limit twice.".into(),
            },
        },
    ]
}

fn events() -> Vec<AgentEvent> {
    let mut events = vec![
        AgentEvent::RequestStart {
            turn: 2,
            model: "gpt-5".into(),
            after: Some(Transition::ReactiveCompactRetry),
        },
        AgentEvent::Delta {
            delta: StreamDelta::Text { text: "Hel".into() },
        },
        AgentEvent::Delta {
            delta: StreamDelta::Thinking { text: "hmm".into() },
        },
        AgentEvent::Delta {
            delta: StreamDelta::ToolInput {
                tool_use_id: ToolUseId::new("toolu_1"),
                name: "Read".into(),
                partial_json: "{\"file_pa".into(),
            },
        },
        AgentEvent::ToolStarted {
            tool_use_id: ToolUseId::new("toolu_1"),
            name: "Read".into(),
            describe: "Read src/main.rs".into(),
        },
        AgentEvent::Progress {
            tool_use_id: ToolUseId::new("toolu_2"),
            payload: ProgressPayload::Output {
                stream: OutputStream::Stderr,
                text: "Compiling riot".into(),
            },
        },
        AgentEvent::Progress {
            tool_use_id: ToolUseId::new("toolu_2"),
            payload: ProgressPayload::Status {
                text: "searched 1200 files".into(),
            },
        },
        AgentEvent::PermissionRequest {
            request_id: RequestId::new("req_1"),
            detail: Box::new(request_detail()),
        },
        AgentEvent::PermissionRequest {
            request_id: RequestId::new("req_2"),
            detail: Box::new(write_detail()),
        },
        AgentEvent::Compacting {
            strategy: CompactionStrategy::ClearToolResults,
        },
        AgentEvent::Compacted {
            before: 180_000,
            after: 40_000,
            strategy: CompactionStrategy::Summary,
        },
        AgentEvent::PromptWithdrawn {
            message_id: MessageId::new("msg_1"),
        },
        AgentEvent::Retrying {
            attempt: 1,
            delay_ms: 500,
            reason: "rate limited (429)".into(),
        },
        AgentEvent::Usage {
            model: "gpt-5".into(),
            usage: Usage {
                input_tokens: 10,
                output_tokens: 20,
                cache_read_tokens: 30,
                cache_write_tokens: 40,
                web_searches: 0,
            },
        },
    ];
    events.extend(
        messages()
            .into_iter()
            .map(|message| AgentEvent::Message { message }),
    );
    events.extend(
        outcomes()
            .into_iter()
            .map(|outcome| AgentEvent::PermissionResolved {
                request_id: RequestId::new("req_1"),
                outcome,
            }),
    );
    events.extend(
        terminal_reasons()
            .into_iter()
            .map(|reason| AgentEvent::Done { reason }),
    );
    events
}

#[test]
fn every_agent_event_round_trips() {
    check_enum("type", &events());
}

#[test]
fn every_message_and_block_round_trips() {
    check_enum("role", &messages());
    check_enum("type", &user_blocks());
    check_enum("type", &assistant_blocks());
    check_enum(
        "type",
        &[
            ToolResultContent::text("x"),
            ToolResultContent::Image { source: image() },
            document(),
        ],
    );
}

#[test]
fn every_payload_reason_and_outcome_round_trips() {
    check_enum("type", &ui_payloads());
    check_enum("type", &terminal_reasons());
    check_enum("kind", &reasons());
    check_enum("outcome", &outcomes());
    check_enum(
        "type",
        &[
            StreamDelta::Text { text: "a".into() },
            StreamDelta::Thinking { text: "b".into() },
            StreamDelta::ToolInput {
                tool_use_id: ToolUseId::new("t"),
                name: "Bash".into(),
                partial_json: "{".into(),
            },
        ],
    );
    check_enum(
        "decision",
        &[
            PermissionResult::Allow {
                reason: reasons()[0].clone(),
                updated_input: Some(json!({"command": "ls"})),
            },
            PermissionResult::Ask {
                reason: reasons()[3].clone(),
                message: "Allow?".into(),
            },
            PermissionResult::Deny {
                reason: reasons()[2].clone(),
                message: "Denied.".into(),
            },
            PermissionResult::Passthrough,
        ],
    );
    let size = TerminalSize { rows: 12, cols: 60 };
    check_enum(
        "type",
        &[
            TerminalUpdate::Opened {
                name: "py".into(),
                command: "python3 -q".into(),
                size,
            },
            TerminalUpdate::Screen {
                name: "py".into(),
                rows: vec![">>>".into()],
                cursor_row: 0,
                cursor_col: 4,
                full_screen: false,
                scrolled: vec!["line 1".into()],
            },
            TerminalUpdate::Resized {
                name: "py".into(),
                size,
            },
            TerminalUpdate::Exited {
                name: "py".into(),
                exit: TerminalExit {
                    code: Some(0),
                    signal: None,
                },
            },
            TerminalUpdate::Closed { name: "py".into() },
        ],
    );
}

#[test]
fn stream_json_shapes_match_interfaces() {
    // docs/interfaces.md: `{"type": "message", "message": {"role": …, "content": […]}}`.
    let event = AgentEvent::Message {
        message: Message::user_text(MessageId::new("msg_1"), "hi"),
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"type": "message", "message": {"id": "msg_1", "role": "user",
               "content": [{"type": "text", "text": "hi"}]}})
    );
    let start = AgentEvent::RequestStart {
        turn: 1,
        model: "m".into(),
        after: None,
    };
    assert_eq!(
        serde_json::to_string(&start).unwrap(),
        r#"{"type":"request_start","turn":1,"model":"m"}"#
    );
}

#[test]
fn a_document_block_keeps_its_pdf_page_count_and_text() {
    assert_eq!(
        serde_json::to_value(document()).unwrap(),
        json!({"type": "document",
               "source": {"media_type": "application/pdf", "data": "JVBERi0xLjU="},
               "pages": 2,
               "text": "--- Page 2 ---\nIntroduction"})
    );
}

#[test]
fn capabilities_saved_before_documents_existed_read_as_no_documents() {
    let mut saved = serde_json::to_value(riot_protocol::ModelCapabilities::default()).unwrap();
    saved.as_object_mut().unwrap().remove("documents");
    let back: riot_protocol::ModelCapabilities = serde_json::from_value(saved).unwrap();
    assert!(!back.documents);
}

#[test]
fn a_newtype_variant_whose_struct_has_the_tag_field_is_caught() {
    // Demonstrates what the tag-collision check guards against: an inner
    // struct with its own `type` field serializes to a duplicate key.
    #[derive(Serialize)]
    struct Inner {
        r#type: &'static str,
    }
    #[derive(Serialize)]
    #[serde(tag = "type")]
    enum Outer {
        Wrapped(Inner),
    }
    let text = serde_json::to_string(&Outer::Wrapped(Inner { r#type: "x" })).unwrap();
    let mut de = serde_json::Deserializer::from_str(&text);
    assert!(serde::de::DeserializeSeed::deserialize(NoDuplicateKeys, &mut de).is_err());
}

#[test]
fn committed_schemas_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    for (stem, schema) in riot_protocol::schema::wire_schemas() {
        let path = dir.join(format!("{stem}.json"));
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `cargo run -p riot-protocol --bin gen-schema`",
                path.display()
            )
        });
        let current = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        assert!(
            committed == current,
            "{} is stale; run `cargo run -p riot-protocol --bin gen-schema`",
            path.display()
        );
    }
}
