//! Snapshot tests of what the terminal UI draws, on ratatui's test backend:
//! the rows each tool payload kind leaves in the scrollback, streaming
//! Markdown, the permission prompt, AskUser and plan approval, the `/`
//! menu and `@` completion, the status line. Expected frames are plain
//! text in `tests/snapshots/*.txt`; `UPDATE_SNAPSHOTS=1` rewrites them
//! (and fails, so a rewrite is always reviewed).

#![allow(clippy::unwrap_used, clippy::panic, clippy::disallowed_methods)] // a test: its snapshot files

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::{Terminal, TerminalOptions, Viewport};
use riot_protocol::{
    AgentEvent, AssistantBlock, AssistantMessage, DecisionReason, DiffHunk, DiffLine, DiffLineKind,
    ImageSource, Message, MessageId, MessageOrigin, PermissionMode, PermissionOutcome,
    PermissionRequestDetail, Question, QuestionOption, QuestionOutcome, QuestionRequest, RequestId,
    SearchMatch, StreamDelta, TerminalReason, Todo, TodoStatus, ToolResultContent, ToolResultUi,
    ToolUseId, UiPayload, Usage, UserBlock, UserMessage,
};
use riot_tui::app::{App, Config, Effect, Mcp};
use riot_tui::menu::Entry;
use riot_tui::{PastedImage, Theme};
use serde_json::json;

// ---------------------------------------------------------------- helpers

fn app_with(width: u16, mode: PermissionMode, theme: Theme) -> App {
    App::new(config_with(width, mode, theme))
}

fn config_with(width: u16, mode: PermissionMode, theme: Theme) -> Config {
    let entry = |name: &str, description: &str, args: bool| Entry {
        name: name.into(),
        description: description.into(),
        takes_arguments: args,
    };
    Config {
        theme,
        width,
        model: "mock-model".into(),
        mode,
        commands: vec![
            entry("compact", "Summarise the conversation so far", true),
            entry("clear", "Start over with an empty conversation", false),
            entry("cost", "What the session cost so far", false),
            entry("model", "Show or switch the model", true),
            entry("help", "List the commands and skills", false),
            entry("code-review", "skill: Review a change for bugs", true),
        ],
        history: vec!["an earlier prompt".into()],
        context_window: Some(200_000),
        sandbox: None,
        // No bell and title effects here: tests/panes.rs covers them.
        notifications: riot_config::notifications::NotificationSettings {
            bell: false,
            title: false,
            desktop: false,
        },
    }
}

fn app(width: u16) -> App {
    app_with(width, PermissionMode::Default, Theme::plain())
}

fn text_of(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The scrollback rows as text, trailing spaces cut.
fn scrollback(app: &mut App) -> String {
    let rows: Vec<String> = app
        .take_scrollback()
        .iter()
        .map(|l| text_of(l).trim_end().to_owned())
        .collect();
    rows.join("\n") + "\n"
}

/// The live area drawn at `width`×`height`, as text.
fn frame(app: &App, width: u16, height: u16) -> String {
    let buffer = draw(app, width, height);
    let mut out = String::new();
    for y in 0..height {
        let mut row = String::new();
        for x in 0..width {
            row.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

fn draw(app: &App, width: u16, height: u16) -> ratatui::buffer::Buffer {
    let mut terminal = Terminal::with_options(
        TestBackend::new(width, height),
        TerminalOptions {
            viewport: Viewport::Fixed(ratatui::layout::Rect::new(0, 0, width, height)),
        },
    )
    .unwrap();
    terminal.draw(|f| riot_tui::view::draw(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

/// Compares with `tests/snapshots/NAME.txt`.
fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if std::env::var("UPDATE_SNAPSHOTS").as_deref() == Ok("1") || expected.is_empty() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        panic!(
            "{name}: snapshot written to {}; review it and run again",
            path.display()
        );
    }
    assert_eq!(
        actual,
        expected,
        "{name}: the frame differs from {} (UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.key(key(KeyCode::Char(c)));
    }
}

fn assistant(blocks: Vec<AssistantBlock>) -> AgentEvent {
    AgentEvent::Message {
        message: Message::Assistant(AssistantMessage {
            id: MessageId::new("m1"),
            content: blocks,
            model: "mock-model".into(),
            stop_reason: None,
            interrupted: false,
        }),
    }
}

fn tool_use(id: &str, name: &str) -> AssistantBlock {
    AssistantBlock::ToolUse {
        id: ToolUseId::new(id),
        name: name.into(),
        input: json!({}),
    }
}

fn result(
    id: &str,
    describe: &str,
    payload: Option<UiPayload>,
    is_error: bool,
    text: &str,
) -> UserBlock {
    UserBlock::ToolResult {
        tool_use_id: ToolUseId::new(id),
        content: vec![ToolResultContent::text(text)],
        is_error,
        ui: Some(ToolResultUi {
            describe: describe.into(),
            payload,
            duration_ms: 5,
        }),
    }
}

fn results(blocks: Vec<UserBlock>) -> AgentEvent {
    AgentEvent::Message {
        message: Message::User(UserMessage {
            id: MessageId::new("m2"),
            content: blocks,
            origin: MessageOrigin::ToolResults,
        }),
    }
}

fn line(kind: DiffLineKind, text: &str) -> DiffLine {
    DiffLine {
        kind,
        text: text.into(),
    }
}

fn detail(rule: Option<&str>) -> Box<PermissionRequestDetail> {
    Box::new(PermissionRequestDetail {
        tool_use_id: ToolUseId::new("t1"),
        tool_name: "Write".into(),
        describe: "Write hello.txt".into(),
        input: json!({"file_path": "hello.txt", "content": "hi\n"}),
        path: Some("/home/me/project/hello.txt".into()),
        command: None,
        reason: DecisionReason::Mode {
            detail: "file writes need approval in the default mode".into(),
            mode: PermissionMode::Default,
        },
        message: "Allow?".into(),
        suggested_rule: rule.map(str::to_owned),
        preview: Some(UiPayload::FileDiff {
            path: "hello.txt".into(),
            created: true,
            hunks: vec![DiffHunk {
                old_start: 0,
                old_lines: 0,
                new_start: 1,
                new_lines: 1,
                lines: vec![line(DiffLineKind::Added, "hi")],
            }],
        }),
    })
}

/// A question about writing a new file of `n` lines, `line 1` to `line N`.
fn long_write(n: u64) -> Box<PermissionRequestDetail> {
    let mut detail = detail(None);
    detail.describe = "Write big.txt".into();
    detail.path = Some("/home/me/project/big.txt".into());
    detail.preview = Some(UiPayload::FileDiff {
        path: "big.txt".into(),
        created: true,
        hunks: vec![DiffHunk {
            old_start: 0,
            old_lines: 0,
            new_start: 1,
            new_lines: n,
            lines: (1..=n)
                .map(|i| line(DiffLineKind::Added, &format!("line {i}")))
                .collect(),
        }],
    });
    detail
}

/// An Edit's question: line 12 of a.rs changed, three lines of context
/// around it.
fn edit_detail() -> Box<PermissionRequestDetail> {
    let mut detail = detail(None);
    detail.tool_name = "Edit".into();
    detail.describe = "Edit src/a.rs".into();
    detail.path = Some("/home/me/project/src/a.rs".into());
    detail.preview = Some(UiPayload::FileDiff {
        path: "src/a.rs".into(),
        created: false,
        hunks: vec![DiffHunk {
            old_start: 9,
            old_lines: 7,
            new_start: 9,
            new_lines: 7,
            lines: vec![
                line(DiffLineKind::Context, "fn main() {"),
                line(DiffLineKind::Context, "    let a = 1;"),
                line(DiffLineKind::Context, "    let b = 2;"),
                line(DiffLineKind::Removed, "    old(a, b);"),
                line(DiffLineKind::Added, "    new(a, b);"),
                line(DiffLineKind::Context, "    done();"),
                line(DiffLineKind::Context, "    exit();"),
                line(DiffLineKind::Context, "}"),
            ],
        }],
    });
    detail
}

// ------------------------------------------------------------------ tests

#[test]
fn every_payload_kind_renders_compactly_into_the_scrollback() {
    let mut app = app(80);
    let ids = [
        "read", "image", "create", "edit", "ok", "fail", "bg", "glob", "grep", "todo", "text",
        "denied",
    ];
    app.event(&assistant(
        ids.iter().map(|id| tool_use(id, "Tool")).collect(),
    ));
    let hunk = DiffHunk {
        old_start: 10,
        old_lines: 3,
        new_start: 10,
        new_lines: 4,
        lines: vec![
            line(DiffLineKind::Context, "fn main() {"),
            line(DiffLineKind::Removed, "    println!(\"hi\");"),
            line(DiffLineKind::Added, "    println!(\"hello\");"),
            line(DiffLineKind::Added, "    println!(\"world\");"),
            line(DiffLineKind::Context, "}"),
        ],
    };
    let output: String = (1..=8).map(|i| format!("line {i}\n")).collect();
    app.event(&results(vec![
        result(
            "read",
            "Read src/main.rs",
            Some(UiPayload::FileRead {
                path: "src/main.rs".into(),
                start_line: 1,
                lines: 40,
                total_lines: 120,
                truncated: false,
            }),
            false,
            "",
        ),
        result(
            "image",
            "Read logo.png",
            Some(UiPayload::ImageRead {
                path: "logo.png".into(),
                media_type: "image/png".into(),
                bytes: 12_800,
            }),
            false,
            "",
        ),
        result(
            "create",
            "Write hello.txt",
            Some(UiPayload::FileDiff {
                path: "hello.txt".into(),
                created: true,
                hunks: vec![DiffHunk {
                    old_start: 0,
                    old_lines: 0,
                    new_start: 1,
                    new_lines: 2,
                    lines: vec![
                        line(DiffLineKind::Added, "hi"),
                        line(DiffLineKind::Added, "there"),
                    ],
                }],
            }),
            false,
            "",
        ),
        result(
            "edit",
            "Edit src/main.rs",
            Some(UiPayload::FileDiff {
                path: "src/main.rs".into(),
                created: false,
                hunks: vec![hunk],
            }),
            false,
            "",
        ),
        result(
            "ok",
            "Run the tests (cargo test)",
            Some(UiPayload::Command {
                command: "cargo test".into(),
                exit_code: Some(0),
                stdout: "ok\n".into(),
                stderr: String::new(),
                truncated: false,
                timed_out: false,
                background_id: None,
            }),
            false,
            "",
        ),
        result(
            "fail",
            "Count to eight (seq 8; exit 3)",
            Some(UiPayload::Command {
                command: "seq 8; exit 3".into(),
                exit_code: Some(3),
                stdout: output,
                stderr: "oops\n".into(),
                truncated: false,
                timed_out: false,
                background_id: None,
            }),
            true,
            "exit code 3",
        ),
        result(
            "bg",
            "Start the dev server (npm run dev)",
            Some(UiPayload::Command {
                command: "npm run dev".into(),
                exit_code: None,
                stdout: String::new(),
                stderr: String::new(),
                truncated: false,
                timed_out: false,
                background_id: Some("bash_1".into()),
            }),
            false,
            "",
        ),
        result(
            "glob",
            "Find **/*.rs",
            Some(UiPayload::FileList {
                pattern: "**/*.rs".into(),
                paths: (1..=7).map(|i| format!("src/m{i}.rs")).collect(),
                total: 7,
                truncated: false,
            }),
            false,
            "",
        ),
        result(
            "grep",
            "Search for \"fn main\"",
            Some(UiPayload::SearchResults {
                pattern: "fn main".into(),
                matches: vec![
                    SearchMatch {
                        path: "src/main.rs".into(),
                        line: Some(3),
                        text: Some("fn main() {".into()),
                        count: None,
                    },
                    SearchMatch {
                        path: "src/bin/tool.rs".into(),
                        line: None,
                        text: None,
                        count: Some(2),
                    },
                ],
                total: 2,
                truncated: false,
            }),
            false,
            "",
        ),
        result(
            "todo",
            "Update the todo list",
            Some(UiPayload::Todos {
                todos: vec![
                    Todo {
                        content: "Read the code".into(),
                        status: TodoStatus::Completed,
                        active_form: None,
                    },
                    Todo {
                        content: "Fix the bug".into(),
                        status: TodoStatus::InProgress,
                        active_form: Some("Fixing the bug".into()),
                    },
                    Todo {
                        content: "Run the tests".into(),
                        status: TodoStatus::Pending,
                        active_form: None,
                    },
                ],
            }),
            false,
            "",
        ),
        result(
            "text",
            "mcp__docs__search",
            Some(UiPayload::Text {
                text: "first\nsecond".into(),
            }),
            false,
            "",
        ),
        result(
            "denied",
            "Write /etc/hosts",
            None,
            true,
            "Permission denied: /etc/hosts is outside the project.\nMore detail.",
        ),
    ]));
    check("payloads", &scrollback(&mut app));
}

#[test]
fn a_streaming_reply_keeps_finished_blocks_in_the_scrollback_and_redraws_only_the_rest() {
    let mut app = app(60);
    type_text(&mut app, "explain");
    app.key(key(KeyCode::Enter));
    assert_eq!(app.take_effects(), [Effect::Prompt("explain".into())]);
    let reply = "# Plan\n\nFirst a paragraph that is long enough to wrap around the sixty columns.\n\n- one\n- two\n  - nested\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| name | size |\n|------|-----:|\n| a.rs | 10 |\n| b.rs | 200 |\n\nDone.";
    app.event(&AgentEvent::Delta {
        delta: StreamDelta::Thinking {
            text: "Let me think about the plan".into(),
        },
    });
    let thinking = frame(&app, 60, 8);
    // Halfway: the code block is still open.
    let cut = reply.find("    println").unwrap();
    for chunk in reply.as_bytes()[..cut].chunks(7) {
        app.event(&AgentEvent::Delta {
            delta: StreamDelta::Text {
                text: String::from_utf8(chunk.to_vec()).unwrap(),
            },
        });
    }
    let committed = scrollback(&mut app);
    let live = frame(&app, 60, 10);
    app.event(&AgentEvent::Delta {
        delta: StreamDelta::Text {
            text: reply[cut..].into(),
        },
    });
    app.event(&assistant(vec![AssistantBlock::Text {
        text: reply.into(),
    }]));
    app.event(&AgentEvent::Done {
        reason: TerminalReason::Completed,
    });
    let rest = scrollback(&mut app);
    check(
        "streaming",
        &format!(
            "--- thinking\n{thinking}--- committed mid-stream\n{committed}--- live area mid-stream\n{live}--- the rest, after Done\n{rest}"
        ),
    );
}

#[test]
fn the_permission_prompt_offers_always_only_when_the_chain_does() {
    let mut app = app(80);
    app.submit_text("write it");
    app.take_effects();
    app.permission(
        1,
        RequestId::new("r1"),
        detail(Some("Write(/home/me/project/**)")),
    );
    check("permission", &frame(&app, 80, 12));
    app.key(key(KeyCode::Char('a')));
    assert_eq!(
        app.take_effects(),
        [Effect::Permission {
            key: 1,
            outcome: PermissionOutcome::AllowAlways {
                rule: "Write(/home/me/project/**)".into()
            }
        }]
    );

    // Without a rule, `a` does nothing and the options are Yes / No.
    app.permission(2, RequestId::new("r2"), detail(None));
    app.key(key(KeyCode::Char('a')));
    assert_eq!(app.take_effects(), []);
    check("permission_once", &frame(&app, 80, 11));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::Permission {
            key: 2,
            outcome: PermissionOutcome::RejectOnce { feedback: None }
        }]
    );
    app.permission(3, RequestId::new("r3"), detail(None));
    app.key(key(KeyCode::Char('y')));
    app.permission(4, RequestId::new("r4"), detail(None));
    app.key(key(KeyCode::Esc));
    assert_eq!(
        app.take_effects(),
        [
            Effect::Permission {
                key: 3,
                outcome: PermissionOutcome::AllowOnce
            },
            Effect::Permission {
                key: 4,
                outcome: PermissionOutcome::RejectOnce { feedback: None }
            }
        ]
    );
    // A question the scheduler gave up on closes.
    app.permission(5, RequestId::new("r5"), detail(None));
    app.event(&AgentEvent::PermissionResolved {
        request_id: RequestId::new("r5"),
        outcome: PermissionOutcome::Cancelled,
    });
    let after = frame(&app, 80, 11);
    assert!(!after.contains("Allow Write"), "{after}");
    assert!(after.contains("\n›\n"), "the composer is back: {after}");
}

#[test]
fn an_edit_question_shows_its_diff_with_line_numbers_and_context() {
    let mut app = app(80);
    app.submit_text("edit it");
    app.take_effects();
    app.permission(1, RequestId::new("r1"), edit_detail());
    check("permission_edit", &frame(&app, 80, 18));
}

#[test]
fn a_long_preview_is_cut_above_the_answer_keys_and_v_shows_all_of_it() {
    let mut app = app(80);
    app.set_height(12);
    app.submit_text("write it");
    app.take_effects();
    app.permission(1, RequestId::new("r1"), long_write(300));
    let question = frame(&app, 80, 12);
    check("permission_long", &question);
    let rows: Vec<&str> = question.lines().collect();
    assert!(rows[10].starts_with("╰ y yes · n or esc no"), "{question}");
    assert!(
        rows[11].starts_with("? waiting for your answer"),
        "{question}"
    );
    assert!(
        question.contains("│ … 298 more lines — press v to view all"),
        "{question}"
    );

    // `v` shows every row, a page at a time, from the top.
    app.key(key(KeyCode::Char('v')));
    assert_eq!(app.take_effects(), [], "v answers nothing");
    let top = frame(&app, 80, 12);
    check("permission_view", &top);
    app.key(key(KeyCode::PageDown));
    let second = frame(&app, 80, 12);
    assert!(second.contains("rows 11–20 of 301"), "{second}");
    assert!(
        second.contains(
            "│   10 + line 10
"
        ),
        "{second}"
    );
    // End: the last page, ending at the last line; Up moves one row back.
    app.key(key(KeyCode::End));
    let end = frame(&app, 80, 12);
    assert!(end.contains("rows 292–301 of 301"), "{end}");
    assert!(
        end.contains(
            "│  300 + line 300
"
        ),
        "{end}"
    );
    app.key(key(KeyCode::Up));
    assert!(frame(&app, 80, 12).contains("rows 291–300 of 301"));
    // The answer keys wait while it is shown; Esc goes back, not no.
    app.key(key(KeyCode::Char('n')));
    app.key(key(KeyCode::Esc));
    assert_eq!(app.take_effects(), []);
    assert_eq!(frame(&app, 80, 12), question);
    app.key(key(KeyCode::Char('y')));
    assert_eq!(
        app.take_effects(),
        [Effect::Permission {
            key: 1,
            outcome: PermissionOutcome::AllowOnce
        }]
    );

    // A preview that fits is shown whole, with nothing said about a cut.
    app.permission(2, RequestId::new("r2"), long_write(3));
    let short = frame(&app, 80, 12);
    assert!(
        short.contains(
            "│    3 + line 3
"
        ),
        "{short}"
    );
    assert!(!short.contains("more line"), "{short}");
}

#[test]
fn while_a_question_is_open_the_status_line_waits_for_the_person_and_the_turns_time_stands_still() {
    let mut app = app(100);
    app.tick(0);
    app.submit_text("write it");
    app.take_effects();
    app.event(&AgentEvent::Delta {
        delta: StreamDelta::ToolInput {
            tool_use_id: ToolUseId::new("t1"),
            name: "Write".into(),
            partial_json: String::new(),
        },
    });
    app.tick(3_000);
    let status = |app: &App| {
        let frame = frame(app, 100, 14);
        frame
            .lines()
            .find(|row| row.contains("mock-model"))
            .unwrap()
            .to_owned()
    };
    assert!(
        status(&app).contains("preparing Write 3s"),
        "{}",
        status(&app)
    );
    app.permission(1, RequestId::new("r1"), detail(None));
    app.tick(12_000);
    assert!(
        status(&app).starts_with("? waiting for your answer 9s · mock-model"),
        "{}",
        status(&app)
    );
    app.key(key(KeyCode::Char('y')));
    app.take_effects();
    // Two seconds after the answer: three of the model's before the
    // question and two after, not the nine the person took.
    app.tick(14_000);
    assert!(
        status(&app).contains("preparing Write 5s"),
        "{}",
        status(&app)
    );
}

#[test]
fn ask_user_questions_and_plan_approval_are_pickers() {
    let mut app = app(80);
    app.submit_text("plan it");
    app.take_effects();
    let request = QuestionRequest {
        tool_use_id: ToolUseId::new("t1"),
        tool_name: "AskUser".into(),
        context: None,
        questions: vec![
            Question {
                question: "Which database?".into(),
                header: Some("Database".into()),
                options: vec![
                    QuestionOption {
                        label: "SQLite".into(),
                        description: Some("one file".into()),
                    },
                    QuestionOption {
                        label: "Postgres".into(),
                        description: None,
                    },
                ],
                multi_select: false,
            },
            Question {
                question: "Which features?".into(),
                header: None,
                options: vec![
                    QuestionOption {
                        label: "Auth".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "Search".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "Export".into(),
                        description: None,
                    },
                ],
                multi_select: true,
            },
            Question {
                question: "Anything else?".into(),
                header: None,
                options: vec![],
                multi_select: false,
            },
        ],
    };
    app.questions(7, request);
    let first = frame(&app, 80, 10);
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    app.key(key(KeyCode::Char(' ')));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Char(' ')));
    let second = frame(&app, 80, 10);
    app.key(key(KeyCode::Enter));
    type_text(&mut app, "tests please");
    let third = frame(&app, 80, 8);
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::Questions {
            key: 7,
            outcome: QuestionOutcome::Answered(vec![
                vec!["Postgres".into()],
                vec!["Auth".into(), "Export".into()],
                vec!["tests please".into()],
            ])
        }]
    );
    let answered = scrollback(&mut app);

    // Plan approval: the plan goes into the scrollback, the choice is a
    // picker; Esc declines.
    app.questions(
        8,
        QuestionRequest {
            tool_use_id: ToolUseId::new("t2"),
            tool_name: "ExitPlanMode".into(),
            context: Some("## The plan\n\n1. Add the table\n2. Write the tests".into()),
            questions: vec![Question {
                question: "Approve this plan?".into(),
                header: Some("Plan".into()),
                options: vec![
                    QuestionOption {
                        label: "Yes, and accept edits".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "Yes, ask before edits".into(),
                        description: None,
                    },
                    QuestionOption {
                        label: "No, keep planning".into(),
                        description: None,
                    },
                ],
                multi_select: false,
            }],
        },
    );
    let plan = format!("{}{}", scrollback(&mut app), frame(&app, 80, 8));
    app.key(key(KeyCode::Esc));
    assert_eq!(
        app.take_effects(),
        [Effect::Questions {
            key: 8,
            outcome: QuestionOutcome::Declined
        }]
    );
    check(
        "ask_user",
        &format!(
            "--- first question\n{first}--- second (multiple choice)\n{second}--- third (free text)\n{third}--- answers in the scrollback\n{answered}--- plan approval\n{plan}"
        ),
    );
}

#[test]
fn the_slash_menu_lists_commands_and_skills_and_completes() {
    let mut app = app(80);
    type_text(&mut app, "/c");
    let menu = frame(&app, 80, 10);
    assert_eq!(
        app.menu_entries(),
        ["compact", "clear", "cost", "code-review"]
    );
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Tab));
    assert_eq!(app.composer_text(), "/clear ");
    assert_eq!(
        app.menu_entries(),
        Vec::<String>::new(),
        "closed after completing"
    );
    app.key(ctrl('u'));
    type_text(&mut app, "/cos");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::Prompt("/cost ".into())],
        "Enter on a command without arguments sends it"
    );
    // One that takes arguments is completed, not sent.
    let mut app = self::app(80);
    type_text(&mut app, "/mod");
    app.key(key(KeyCode::Enter));
    assert_eq!(app.composer_text(), "/model ");
    assert_eq!(app.take_effects(), []);
    // Esc closes the menu and leaves the text.
    type_text(&mut app, "x");
    app.key(ctrl('u'));
    type_text(&mut app, "/h");
    app.key(key(KeyCode::Esc));
    assert_eq!(app.menu_entries(), Vec::<String>::new());
    assert_eq!(app.composer_text(), "/h");
    check("slash_menu", &menu);
}

#[test]
fn at_completion_asks_for_the_projects_files_and_inserts_the_chosen_path() {
    let mut app = app(80);
    type_text(&mut app, "look at @ma");
    let effects = app.take_effects();
    assert_eq!(effects.last(), Some(&Effect::FindFiles("ma".into())));
    // An answer for an older query is ignored.
    app.files_found("m", vec!["old.rs".into()]);
    assert_eq!(app.menu_entries(), Vec::<String>::new());
    app.files_found(
        "ma",
        vec![
            "src/main.rs".into(),
            "src/map.rs".into(),
            "docs/manual.md".into(),
        ],
    );
    let menu = frame(&app, 80, 9);
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    assert_eq!(app.composer_text(), "look at @src/map.rs ");
    assert_eq!(
        app.take_effects(),
        [],
        "Enter completed the path; nothing was sent"
    );
    check("at_completion", &menu);
}

#[test]
fn a_pasted_image_path_is_attached_shown_as_its_name_and_sent_with_the_prompt() {
    let mut app = app(80);
    type_text(&mut app, "what is wrong in ");
    // A terminal delivers a dragged file as a paste of its quoted path.
    app.paste("'/home/me/Screen Shot.png' file:///home/me/logo%201.webp");
    assert_eq!(
        app.take_effects(),
        [Effect::ReadImages {
            pasted: "'/home/me/Screen Shot.png' file:///home/me/logo%201.webp".into(),
            paths: vec![
                "/home/me/Screen Shot.png".into(),
                "/home/me/logo 1.webp".into()
            ],
        }],
    );
    assert_eq!(
        app.composer_text(),
        "what is wrong in ",
        "nothing is inserted before the files are read"
    );
    let png = ImageSource {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
    };
    let webp = ImageSource {
        media_type: "image/webp".into(),
        data: "UklGRg==".into(),
    };
    app.images_read(
        "'/home/me/Screen Shot.png' file:///home/me/logo%201.webp",
        vec![
            (
                "/home/me/Screen Shot.png".into(),
                PastedImage::Image(png.clone()),
            ),
            (
                "/home/me/logo 1.webp".into(),
                PastedImage::Image(webp.clone()),
            ),
        ],
    );
    type_text(&mut app, " here?");
    let composer = frame(&app, 80, 5);
    assert_eq!(
        app.composer_text(),
        "what is wrong in [image: Screen Shot.png] [image: logo 1.webp] here?"
    );
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::PromptWithImages {
            text: "what is wrong in [image: Screen Shot.png] [image: logo 1.webp] here?".into(),
            images: vec![png.clone(), webp],
        }],
    );
    assert_eq!(
        scrollback(&mut app),
        "› what is wrong in [image: Screen Shot.png] [image: logo 1.webp] here?\n"
    );
    check("pasted_image", &composer);

    // While a turn runs, a message with an image waits in the composer.
    app.paste("/tmp/a.png");
    let effects: [Effect; 1] = app.take_effects().try_into().unwrap();
    let [Effect::ReadImages { pasted, paths }] = effects else {
        panic!("the path is read as an image");
    };
    app.images_read(&pasted, vec![(paths[0].clone(), PastedImage::Image(png))]);
    app.key(key(KeyCode::Enter));
    assert_eq!(app.take_effects(), []);
    assert_eq!(app.composer_text(), "[image: a.png]");
    assert!(
        frame(&app, 80, 6).contains("Images go with a new prompt: send this when the turn ends"),
        "{}",
        frame(&app, 80, 6)
    );
}

#[test]
fn a_pasted_path_that_is_not_an_image_stays_text() {
    let mut app = app(80);
    // Not image paths at all: text at once.
    app.paste("see /tmp/notes.txt");
    assert_eq!(app.take_effects(), []);
    assert_eq!(app.composer_text(), "see /tmp/notes.txt");
    app.key(ctrl('u'));
    // An image name that is no file, and a file that does not decode.
    app.paste("/tmp/missing.png");
    app.take_effects();
    app.images_read(
        "/tmp/missing.png",
        vec![("/tmp/missing.png".into(), PastedImage::NotAFile)],
    );
    assert_eq!(app.composer_text(), "/tmp/missing.png");
    assert!(!frame(&app, 80, 5).contains("pasted as text"));
    app.key(ctrl('u'));
    app.paste("/tmp/bad.png");
    app.take_effects();
    app.images_read(
        "/tmp/bad.png",
        vec![(
            "/tmp/bad.png".into(),
            PastedImage::Refused("is not a valid image/png image (truncated)".into()),
        )],
    );
    assert_eq!(app.composer_text(), "/tmp/bad.png");
    assert!(
        frame(&app, 80, 5)
            .contains("bad.png is not a valid image/png image (truncated); it was pasted as text."),
        "{}",
        frame(&app, 80, 5)
    );
    app.key(key(KeyCode::Enter));
    assert_eq!(app.take_effects(), [Effect::Prompt("/tmp/bad.png".into())]);
}

#[test]
fn the_status_line_says_whether_commands_run_sandboxed() {
    let status = |label: &str| {
        let mut config = config_with(120, PermissionMode::Default, Theme::plain());
        config.sandbox = Some(label.to_owned());
        let app = App::new(config);
        let shown = frame(&app, 120, 8);
        shown
            .lines()
            .find(|l| l.contains("mock-model"))
            .unwrap_or_else(|| panic!("{shown}"))
            .trim_end()
            .to_owned()
    };
    assert_eq!(
        status("sandboxed (bubblewrap)"),
        "mock-model · ask before edits · shift+tab mode · sandboxed (bubblewrap)"
    );
    assert_eq!(
        status("sandboxed (Landlock)"),
        "mock-model · ask before edits · shift+tab mode · sandboxed (Landlock)"
    );
    // A long reason is cut; `riot sandbox check` has it whole.
    assert_eq!(
        status(
            "not sandboxed: bubblewrap cannot create a user namespace here (kernel.unprivileged_userns_clone=0)"
        ),
        "mock-model · ask before edits · shift+tab mode · not sandboxed: bubblewrap cannot create a user namespac…"
    );
}

#[test]
fn the_status_line_shows_model_mode_context_tokens_mcp_and_the_running_turn() {
    let mut app = app(100);
    app.mcp(Mcp {
        starting: 1,
        ready: 2,
        failed: 0,
    });
    app.tick(1_000);
    app.submit_text("go");
    app.take_effects();
    app.event(&AgentEvent::Usage {
        model: "mock-model".into(),
        usage: Usage {
            input_tokens: 12_000,
            output_tokens: 345,
            cache_read_tokens: 8_000,
            cache_write_tokens: 0,
            web_searches: 0,
        },
    });
    app.cost(Some(0.0421));
    app.event(&AgentEvent::ToolStarted {
        tool_use_id: ToolUseId::new("t1"),
        name: "Bash".into(),
        describe: "Run the tests (cargo test)".into(),
    });
    app.event(&AgentEvent::Progress {
        tool_use_id: ToolUseId::new("t1"),
        payload: riot_protocol::ProgressPayload::Output {
            stream: riot_protocol::OutputStream::Stdout,
            text: "compiling a\ncompiling b\nrunning 3 tests\ntest a ... ok\n".into(),
        },
    });
    // Typed during the turn: queued, and shown as queued.
    type_text(&mut app, "also check the docs");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::Queue("also check the docs".into())]
    );
    app.tick(13_500);
    let running = frame(&app, 100, 10);
    // Esc stops the turn and keeps what is typed.
    type_text(&mut app, "draft");
    app.key(key(KeyCode::Esc));
    assert_eq!(app.take_effects(), [Effect::Cancel]);
    assert_eq!(app.composer_text(), "draft");
    app.event(&AgentEvent::Done {
        reason: TerminalReason::Aborted {
            by: riot_protocol::AbortSource::User,
        },
    });
    assert_eq!(
        app.take_effects(),
        [Effect::SendQueued],
        "what was still queued is sent next"
    );
    check("status_running", &running);
}

#[test]
fn the_status_line_shows_the_sessions_cost_and_an_unknown_one_as_a_dash() {
    let mut app = app(120);
    let status = |app: &App| {
        frame(app, 120, 6)
            .lines()
            .find(|l| l.contains("mock-model"))
            .unwrap()
            .to_owned()
    };
    assert!(!status(&app).contains('$'), "nothing before a report");
    assert!(!status(&app).contains('—'), "{}", status(&app));
    app.cost(Some(0.0421));
    assert!(status(&app).contains(" $0.0421"), "{}", status(&app));
    app.cost(Some(12.5));
    assert!(status(&app).contains(" $12.50"), "{}", status(&app));
    // A model without a price: unknown, never $0.
    app.cost(None);
    let line = status(&app);
    assert!(
        line.contains(" — ") || line.trim_end().ends_with('—'),
        "{line}"
    );
    assert!(!line.contains('$'), "{line}");
}

#[test]
fn ctrl_c_clears_then_exits_ctrl_d_exits_on_an_empty_composer_and_shift_tab_cycles_modes() {
    let mut app = app(80);
    type_text(&mut app, "half a thought");
    app.key(ctrl('c'));
    assert_eq!(app.composer_text(), "");
    assert!(frame(&app, 80, 6).contains("Press Ctrl+C again to exit"));
    app.key(ctrl('c'));
    assert_eq!(app.take_effects(), [Effect::Exit]);
    assert!(app.exiting());

    let mut app = self::app(80);
    type_text(&mut app, "x");
    app.key(ctrl('d'));
    assert!(!app.exiting(), "Ctrl+D deletes while there is text");
    app.key(key(KeyCode::Backspace));
    app.key(ctrl('d'));
    assert!(app.exiting());

    let back = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
    let mut app = self::app(80);
    for _ in 0..3 {
        app.key(back);
    }
    assert_eq!(
        app.take_effects(),
        [
            Effect::SetMode(PermissionMode::AcceptEdits),
            Effect::SetMode(PermissionMode::Plan),
            Effect::SetMode(PermissionMode::Default),
        ],
        "bypass is never reached by cycling"
    );
    let mut app = app_with(80, PermissionMode::Bypass, Theme::plain());
    app.key(back);
    app.key(back);
    app.key(back);
    app.key(back);
    assert_eq!(
        app.take_effects(),
        [
            Effect::SetMode(PermissionMode::Default),
            Effect::SetMode(PermissionMode::AcceptEdits),
            Effect::SetMode(PermissionMode::Plan),
            Effect::SetMode(PermissionMode::Bypass),
        ],
        "a session started in bypass keeps it in the cycle"
    );

    // Up brings back earlier prompts; Alt+Enter and Ctrl+J add lines.
    let mut app = self::app(80);
    app.key(key(KeyCode::Up));
    assert_eq!(app.composer_text(), "an earlier prompt");
    app.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    app.key(ctrl('j'));
    type_text(&mut app, "more");
    assert_eq!(app.composer_text(), "an earlier prompt\n\nmore");
    app.paste(&"pasted line\n".repeat(20));
    assert_eq!(
        app.composer_text(),
        "an earlier prompt\n\nmore[Pasted text #1 +20 lines]"
    );
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [Effect::Prompt(format!(
            "an earlier prompt\n\nmore{}",
            "pasted line\n".repeat(20)
        ))]
    );
}

#[test]
fn a_resumed_conversation_is_shown_as_it_happened() {
    let mut app = app(80);
    app.history(&[
        Message::user_text(MessageId::new("u1"), "write hello.txt"),
        Message::Assistant(AssistantMessage {
            id: MessageId::new("a1"),
            content: vec![
                AssistantBlock::Text {
                    text: "Writing it.".into(),
                },
                tool_use("w1", "Write"),
            ],
            model: "mock-model".into(),
            stop_reason: None,
            interrupted: false,
        }),
        Message::User(UserMessage {
            id: MessageId::new("u2"),
            content: vec![result(
                "w1",
                "Write hello.txt",
                Some(UiPayload::FileDiff {
                    path: "hello.txt".into(),
                    created: true,
                    hunks: vec![],
                }),
                false,
                "",
            )],
            origin: MessageOrigin::ToolResults,
        }),
        Message::Assistant(AssistantMessage {
            id: MessageId::new("a2"),
            content: vec![AssistantBlock::Text {
                text: "Done: **hello.txt** exists.".into(),
            }],
            model: "mock-model".into(),
            stop_reason: None,
            interrupted: false,
        }),
    ]);
    check("history", &scrollback(&mut app));
}

#[test]
fn no_color_draws_without_colour_and_colour_marks_diffs_otherwise() {
    let diff_event = |app: &mut App| {
        app.event(&assistant(vec![tool_use("e", "Edit")]));
        app.event(&results(vec![result(
            "e",
            "Edit a.rs",
            Some(UiPayload::FileDiff {
                path: "a.rs".into(),
                created: false,
                hunks: vec![DiffHunk {
                    old_start: 1,
                    old_lines: 1,
                    new_start: 1,
                    new_lines: 1,
                    lines: vec![
                        line(DiffLineKind::Removed, "a"),
                        line(DiffLineKind::Added, "b"),
                    ],
                }],
            }),
            false,
            "",
        )]));
    };
    let colours = |app: &mut App| -> Vec<Color> {
        app.take_scrollback()
            .iter()
            .flat_map(|l| l.spans.iter().filter_map(|s| s.style.fg))
            .collect()
    };
    let mut plain = app_with(80, PermissionMode::Default, Theme::from_no_color(Some("1")));
    diff_event(&mut plain);
    assert_eq!(colours(&mut plain), Vec::<Color>::new());
    plain.submit_text("x");
    plain.permission(1, RequestId::new("r"), detail(None));
    let buffer = draw(&plain, 80, 12);
    assert!(
        buffer
            .content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
        "NO_COLOR: no cell has a colour"
    );

    let mut coloured = app_with(80, PermissionMode::Default, Theme::from_no_color(None));
    diff_event(&mut coloured);
    let found = colours(&mut coloured);
    assert!(
        found.contains(&Color::Green) && found.contains(&Color::Red),
        "{found:?}"
    );
}

#[test]
fn everything_fits_a_narrow_terminal() {
    let mut app = app(40);
    app.submit_text("a prompt long enough that it has to wrap across rows");
    app.event(&AgentEvent::Delta {
        delta: StreamDelta::Text {
            text: "A reply with a `very_long_identifier_that_cannot_wrap_anywhere_at_all` in it\n\nand more".into(),
        },
    });
    app.permission(
        1,
        RequestId::new("r"),
        detail(Some("Write(/home/me/project/**)")),
    );
    for row in scrollback(&mut app).lines() {
        assert!(unicode_width::UnicodeWidthStr::width(row) <= 40, "{row:?}");
    }
    check("narrow", &frame(&app, 40, 14));
}

#[test]
fn slash_rewind_alone_opens_a_picker_of_the_messages_newest_first() {
    use riot_tui::app::RewindChoice;
    let mut app = app(80);
    app.submit_text("/rewind");
    assert_eq!(app.take_effects(), [Effect::RewindPoints]);
    let point = |number: u32, text: &str, files: &[&str], in_history: bool| RewindChoice {
        number,
        text: text.into(),
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        in_history,
    };
    app.rewind_points(vec![
        point(1, "set up the project", &["Cargo.toml"], false),
        point(
            2,
            "fix the parser",
            &["src/parser.rs", "src/lexer.rs", "tests/p.rs"],
            true,
        ),
        point(3, "explain it", &[], true),
    ]);
    let shown = frame(&app, 80, 16);
    let rows: Vec<&str> = shown.lines().map(str::trim_end).collect();
    let at = |text: &str| {
        rows.iter()
            .position(|r| r.contains(text))
            .unwrap_or_else(|| panic!("no {text:?} in\n{shown}"))
    };
    assert!(
        shown.contains("Rewind files and conversation to just before which message?"),
        "{shown}"
    );
    // Newest first, each with what its turn changed.
    assert!(
        at("1. explain it (message 3)") < at("2. fix the parser (message 2)"),
        "{shown}"
    );
    assert!(
        at("2. fix the parser (message 2)") < at("3. set up the project (message 1)"),
        "{shown}"
    );
    assert!(
        shown.contains("changed src/parser.rs and 2 other files"),
        "{shown}"
    );
    assert!(shown.contains("no file changed"), "{shown}");
    assert!(
        shown.contains("changed Cargo.toml; before a compaction:"),
        "{shown}"
    );

    // Down to the second, Enter: the kernel's `/rewind 2`.
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Enter));
    assert_eq!(app.take_effects(), [Effect::Prompt("/rewind 2".into())]);

    // Esc leaves everything as it was.
    let mut app = self::app(80);
    app.submit_text("/rewind");
    app.take_effects();
    app.rewind_points(vec![point(1, "one", &[], true)]);
    app.key(key(KeyCode::Esc));
    assert_eq!(app.take_effects(), []);
    assert!(frame(&app, 80, 10).contains("Nothing was rewound."));

    // With nothing to go back to, it says so.
    let mut app = self::app(80);
    app.rewind_points(Vec::new());
    assert!(frame(&app, 80, 10).contains("Nothing to rewind to yet"));
}

#[test]
fn ctrl_d_mid_reply_keeps_what_streamed_in_the_scrollback() {
    let mut app = app(80);
    app.submit_text("say hello");
    app.take_effects();
    scrollback(&mut app);
    app.event(&AgentEvent::Delta {
        delta: StreamDelta::Text {
            text: "Hello.\n\n- first\n- second".into(),
        },
    });
    app.settle();
    app.key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL));
    assert_eq!(app.take_effects(), [Effect::Exit]);
    let kept = scrollback(&mut app);
    for text in ["Hello.", "• first", "• second"] {
        assert!(kept.contains(text), "{text:?} missing:\n{kept}");
    }
}

#[test]
fn a_provider_search_is_drawn_like_a_web_search_call_after_the_reply_it_was_part_of() {
    let mut app = app(60);
    app.event(&assistant(vec![
        AssistantBlock::WebSearch {
            id: "srvtoolu_1".into(),
            query: "riot agent".into(),
            results: vec![riot_protocol::WebResult {
                title: "Riot".into(),
                url: "https://riot.example/".into(),
                snippet: String::new(),
            }],
            error: None,
            replay: Vec::new(),
        },
        AssistantBlock::WebSearch {
            id: "srvtoolu_2".into(),
            query: "riot docs".into(),
            results: Vec::new(),
            error: Some("the search service is unavailable (unavailable)".into()),
            replay: Vec::new(),
        },
        AssistantBlock::Text {
            text: "Riot is an agent.".into(),
        },
    ]));
    check("provider_search", &scrollback(&mut app));
}
