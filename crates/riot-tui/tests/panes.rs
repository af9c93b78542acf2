//! The terminal pane (Ctrl+T), the background agents' list (`/tasks`) and
//! the notifications (the bell and the terminal's title), on the pure app
//! state and ratatui's test backend.

#![allow(clippy::unwrap_used, clippy::panic)] // test code

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::{Terminal, TerminalOptions, Viewport};
use riot_config::notifications::NotificationSettings;
use riot_kernel::background::{TaskState, TaskSummary};
use riot_protocol::{
    DecisionReason, PermissionMode, PermissionOutcome, PermissionRequestDetail, RequestId,
    TerminalExit, TerminalReason, TerminalSize, TerminalUpdate, ToolUseId,
};
use riot_tui::Theme;
use riot_tui::app::{App, Config, Effect, key_bytes};
use serde_json::json;

fn app_notifying(bell: bool, title: bool) -> App {
    App::new(Config {
        theme: Theme::plain(),
        width: 80,
        model: "mock-model".into(),
        mode: PermissionMode::Default,
        commands: Vec::new(),
        history: Vec::new(),
        context_window: None,
        sandbox: None,
        notifications: NotificationSettings {
            bell,
            title,
            desktop: true,
        },
    })
}

fn app() -> App {
    app_notifying(false, false)
}

/// The live area at `width`×`height`, rows without trailing spaces.
fn frame(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::with_options(
        TestBackend::new(width, height),
        TerminalOptions {
            viewport: Viewport::Fixed(ratatui::layout::Rect::new(0, 0, width, height)),
        },
    )
    .unwrap();
    terminal.draw(|f| riot_tui::view::draw(app, f)).unwrap();
    let buffer = terminal.backend().buffer().clone();
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

fn opened(name: &str, command: &str) -> TerminalUpdate {
    TerminalUpdate::Opened {
        name: name.into(),
        command: command.into(),
        size: TerminalSize {
            rows: 30,
            cols: 100,
        },
    }
}

fn screen(name: &str, rows: &[&str], cursor: (u16, u16)) -> TerminalUpdate {
    let mut all: Vec<String> = rows.iter().map(|r| (*r).to_owned()).collect();
    all.resize(30, String::new());
    TerminalUpdate::Screen {
        name: name.into(),
        rows: all,
        cursor_row: cursor.0,
        cursor_col: cursor.1,
        full_screen: false,
        scrolled: Vec::new(),
    }
}

fn writes(effects: &[Effect]) -> Vec<(String, Vec<u8>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::TerminalWrite { name, input } => Some((name.clone(), input.clone())),
            _ => None,
        })
        .collect()
}

fn detail() -> Box<PermissionRequestDetail> {
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
        suggested_rule: None,
        preview: None,
    })
}

fn task(id: &str, state: TaskState, calls: usize, last: Option<&str>) -> TaskSummary {
    TaskSummary {
        id: id.into(),
        agent: "explore".into(),
        description: format!("look around {id}"),
        state,
        calls,
        last: last.map(str::to_owned),
        result: None,
    }
}

#[test]
fn ctrl_t_shows_a_terminals_screen_and_the_keys_typed_go_to_it() {
    let mut app = app();
    app.key(ctrl('t'));
    assert_eq!(app.focused_terminal(), None);
    assert!(
        frame(&app, 80, 6)
            .contains("No terminal is open: the agent opens one with its Terminal tool."),
        "{}",
        frame(&app, 80, 6)
    );

    app.terminal(&opened("py", "python3 -q"));
    app.terminal(&screen("py", &[">>> 1 + 1", "2", ">>>"], (2, 4)));
    assert!(
        frame(&app, 80, 6).contains("ask before edits · ctrl+t 1 terminal · shift+tab mode\n"),
        "the status line says a terminal is there:\n{}",
        frame(&app, 80, 6)
    );
    type_text(&mut app, "draft");
    app.key(ctrl('t'));
    assert_eq!(app.focused_terminal(), Some("py"));
    assert_eq!(
        frame(&app, 60, 6),
        "▣ py (1/1) running · $ python3 -q\n\
         >>> 1 + 1\n\
         2\n\
         >>>\n\
         \n\
         keys go to py · ctrl+f fit · ctrl+t next / conversation\n"
    );
    // Typed keys become the bytes a terminal sends; Ctrl+C and Esc too.
    type_text(&mut app, "40");
    app.key(key(KeyCode::Enter));
    app.key(ctrl('c'));
    app.key(key(KeyCode::Up));
    app.paste("a\nb");
    assert_eq!(
        writes(&app.take_effects()),
        [
            ("py".to_owned(), b"4".to_vec()),
            ("py".to_owned(), b"0".to_vec()),
            ("py".to_owned(), b"\r".to_vec()),
            ("py".to_owned(), vec![3]),
            ("py".to_owned(), b"\x1b[A".to_vec()),
            ("py".to_owned(), b"a\rb".to_vec()),
        ]
    );
    assert!(!app.exiting(), "Ctrl+C went to the terminal");
    assert_eq!(app.composer_text(), "draft", "the composer kept its text");

    // A second terminal: Ctrl+T goes to it, then back to the conversation.
    app.terminal(&opened("dev", "npm run dev"));
    app.key(ctrl('t'));
    assert_eq!(app.focused_terminal(), Some("dev"));
    assert!(frame(&app, 60, 6).starts_with("▣ dev (2/2) running · $ npm run dev\n"));
    app.terminal(&TerminalUpdate::Exited {
        name: "dev".into(),
        exit: TerminalExit {
            code: Some(1),
            signal: None,
        },
    });
    let pane = frame(&app, 60, 6);
    assert!(
        pane.starts_with("▣ dev (2/2) exited 1 · $ npm run dev\n"),
        "{pane}"
    );
    assert!(pane.contains("the program has ended"), "{pane}");
    // Its input is closed: keys and pastes are not sent, and the pane says so.
    type_text(&mut app, "x");
    app.paste("more");
    assert!(writes(&app.take_effects()).is_empty());
    assert!(
        frame(&app, 70, 6)
            .ends_with("The program in dev has ended: nothing can be typed into it.\n"),
        "{}",
        frame(&app, 70, 6)
    );
    app.key(ctrl('t'));
    assert_eq!(app.focused_terminal(), None);
    type_text(&mut app, "!");
    assert_eq!(app.composer_text(), "draft!");
    assert!(writes(&app.take_effects()).is_empty());

    // Closing the terminal shown moves the pane to another one.
    app.key(ctrl('t'));
    app.key(ctrl('t'));
    assert_eq!(app.focused_terminal(), Some("dev"));
    app.terminal(&TerminalUpdate::Closed { name: "dev".into() });
    assert_eq!(app.focused_terminal(), Some("py"));
    app.terminal(&TerminalUpdate::Closed { name: "py".into() });
    assert_eq!(app.focused_terminal(), None);
    assert!(frame(&app, 60, 6).contains("The terminal py was closed."));
}

#[test]
fn a_long_screen_shows_its_rows_up_to_the_cursor_and_a_question_takes_the_keys_back() {
    let mut app = app();
    app.terminal(&opened("log", "tail -f log"));
    let rows: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
    app.terminal(&screen("log", &refs, (12, 0)));
    app.key(ctrl('t'));
    let pane = frame(&app, 40, 6);
    let shown: Vec<&str> = pane.lines().collect();
    assert_eq!(
        shown[1..5],
        ["line 10", "line 11", "line 12", ""],
        "the newest rows and the cursor's row:\n{pane}"
    );

    app.permission(1, RequestId::new("r1"), detail());
    assert_eq!(app.focused_terminal(), None, "the question is shown");
    assert!(frame(&app, 60, 12).contains("Allow Write?"));
    app.key(key(KeyCode::Char('y')));
    assert_eq!(
        app.take_effects(),
        [Effect::Permission {
            key: 1,
            outcome: PermissionOutcome::AllowOnce
        }]
    );
}

#[test]
fn key_bytes_are_what_a_terminal_sends() {
    let alt = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT);
    assert_eq!(
        key_bytes(key(KeyCode::Char('é'))),
        Some("é".as_bytes().to_vec())
    );
    assert_eq!(key_bytes(ctrl('d')), Some(vec![4]));
    assert_eq!(key_bytes(ctrl('[')), Some(vec![0x1b]));
    assert_eq!(key_bytes(alt('b')), Some(b"\x1bb".to_vec()));
    assert_eq!(key_bytes(key(KeyCode::Backspace)), Some(vec![0x7f]));
    assert_eq!(key_bytes(key(KeyCode::Tab)), Some(b"\t".to_vec()));
    assert_eq!(key_bytes(key(KeyCode::Delete)), Some(b"\x1b[3~".to_vec()));
    assert_eq!(key_bytes(key(KeyCode::F(2))), Some(b"\x1bOQ".to_vec()));
    assert_eq!(key_bytes(key(KeyCode::F(12))), None);
}

#[test]
fn slash_tasks_lists_the_background_agents_and_x_stops_a_running_one() {
    let mut app = app();
    type_text(&mut app, "/tas");
    assert_eq!(app.menu_entries(), ["tasks"]);
    app.key(key(KeyCode::Enter));
    assert!(app.tasks_open());
    assert!(app.take_effects().is_empty(), "no prompt is sent");
    assert!(
        frame(&app, 90, 6).contains("None in this session"),
        "{}",
        frame(&app, 90, 6)
    );

    assert!(app.background(vec![
        task("bg_1", TaskState::Completed, 3, Some("Read a.rs")),
        task("bg_2", TaskState::Running, 1, Some("Grep TODO")),
    ]));
    assert!(!app.background(vec![
        task("bg_1", TaskState::Completed, 3, Some("Read a.rs")),
        task("bg_2", TaskState::Running, 1, Some("Grep TODO")),
    ]));
    assert_eq!(
        frame(&app, 90, 6),
        "╭ Background agents\n\
         │ › bg_1 explore — look around bg_1 · completed · 3 calls\n\
         │   bg_2 explore — look around bg_2 · running · 1 call · Grep TODO\n\
         ╰ ↑↓ move · x stop · esc close\n\
         mock-model · ask before edits · 1 background (/tasks) · shift+tab mode\n\
         \n"
    );
    app.key(key(KeyCode::Char('x')));
    assert!(app.take_effects().is_empty(), "bg_1 has ended");
    assert!(frame(&app, 90, 6).contains("bg_1 is not running."));
    app.key(key(KeyCode::Down));
    app.key(key(KeyCode::Char('x')));
    assert_eq!(app.take_effects(), [Effect::StopTask("bg_2".into())]);
    assert!(frame(&app, 90, 6).contains("Stopping bg_2…"));
    app.background(vec![
        task("bg_1", TaskState::Completed, 3, None),
        task("bg_2", TaskState::Stopped, 1, Some("Grep TODO")),
    ]);
    assert!(
        frame(&app, 90, 6).contains("│ › bg_2 explore — look around bg_2 · stopped · 1 call\n")
    );
    app.key(key(KeyCode::Esc));
    assert!(!app.tasks_open());
    assert!(frame(&app, 90, 6).contains("\n›\n"), "the composer is back");
}

/// The bell and title effects of one turn that asks a question.
fn turn(app: &mut App) -> Vec<Vec<Effect>> {
    let mut out = vec![app.take_effects()];
    type_text(app, "fix   the login\tbug");
    app.key(key(KeyCode::Enter));
    out.push(app.take_effects());
    app.permission(1, RequestId::new("r1"), detail());
    out.push(app.take_effects());
    app.key(key(KeyCode::Char('y')));
    out.push(app.take_effects());
    app.event(&riot_protocol::AgentEvent::Done {
        reason: TerminalReason::Completed,
    });
    out.push(app.take_effects());
    out
}

#[test]
fn the_bell_rings_when_a_turn_ends_or_a_question_waits_and_the_title_follows_the_state() {
    let mut app = app_notifying(true, true);
    let title = |t: &str| Effect::Title(t.to_owned());
    let allow = Effect::Permission {
        key: 1,
        outcome: PermissionOutcome::AllowOnce,
    };
    assert_eq!(
        turn(&mut app),
        [
            vec![title("riot")],
            vec![
                Effect::Prompt("fix   the login\tbug".into()),
                title("riot · working · fix the login bug"),
            ],
            vec![
                Effect::Bell,
                title("riot · waiting for you · fix the login bug")
            ],
            vec![allow.clone(), title("riot · working · fix the login bug")],
            vec![Effect::Bell, title("riot · done · fix the login bug")],
        ]
    );

    // Each setting alone.
    let mut app = app_notifying(true, false);
    let effects = turn(&mut app);
    assert!(
        effects
            .iter()
            .flatten()
            .all(|e| !matches!(e, Effect::Title(_)))
    );
    assert_eq!(effects[2], [Effect::Bell]);
    assert_eq!(effects[4], [Effect::Bell]);
    let mut app = app_notifying(false, true);
    let effects = turn(&mut app);
    assert!(!effects.iter().flatten().any(|e| *e == Effect::Bell));
    assert_eq!(effects[4], [title("riot · done · fix the login bug")]);
    let mut app = app_notifying(false, false);
    assert_eq!(
        turn(&mut app),
        [
            vec![],
            vec![Effect::Prompt("fix   the login\tbug".into())],
            vec![],
            vec![allow],
            vec![],
        ]
    );
}

#[test]
fn a_resumed_sessions_listed_title_names_the_terminal() {
    let mut app = app_notifying(false, true);
    app.set_session_title("Fix the   login\nbug, renamed");
    assert_eq!(
        app.take_effects(),
        [Effect::Title("riot · Fix the login bug, renamed".into())]
    );
    type_text(&mut app, "go on");
    app.key(key(KeyCode::Enter));
    assert_eq!(
        app.take_effects(),
        [
            Effect::Prompt("go on".into()),
            Effect::Title("riot · working · Fix the login bug, renamed".into())
        ]
    );
}
