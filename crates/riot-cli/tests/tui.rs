//! The terminal UI end to end: the real `riot` binary in tmux (its own
//! server socket per test, killed by a guard even when a test fails)
//! against the strict mock model, driven with `send-keys` and read with
//! `capture-pane` — which also reads the pane's scrollback, where finished
//! messages go. Waiting polls the pane with a generous deadline; nothing
//! asserts on timing. Skipped, loudly, only where tmux is missing (`.ci/run`
//! installs it; under `CI=true` a missing tmux fails).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files, processes and time
#![allow(clippy::print_stderr)] // the skip reason

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::json;
use support::{PATIENCE, World, stalled_partial_answer, tool_call, tool_result};

/// A tmux server of its own with one window running `riot`.
struct Tmux {
    socket: String,
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Whether tmux can run here; if not, says why the test is skipped.
fn have_tmux(test: &str) -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let why = "tmux is not installed (apt-get install tmux)";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{test}: {why}");
        }
        eprintln!("\n!!! SKIPPING {test}: {why} !!!\n");
    }
    ok
}

impl Tmux {
    /// `riot ARGS` against `server` in a 100×30 window, in the world's
    /// project with its `RIOT_HOME` and nothing else from this process's
    /// environment.
    fn riot(world: &World, server: &MockServer, args: &[&str]) -> Self {
        Self::riot_sized(world, server, args, 100, 30)
    }

    /// [`Tmux::riot`] in a window of `cols`×`rows`.
    fn riot_sized(world: &World, server: &MockServer, args: &[&str], cols: u16, rows: u16) -> Self {
        let socket = format!(
            "riot-tui-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let base = server.base_url();
        let mut words = vec![
            env!("CARGO_BIN_EXE_riot").to_owned(),
            "--provider".into(),
            "anthropic".into(),
            "--base-url".into(),
            base,
            "--model".into(),
            "mock-model".into(),
        ];
        words.extend(args.iter().map(|a| (*a).to_owned()));
        let home = world.home.path().to_str().unwrap();
        let command = format!(
            "cd {} && exec env -i PATH={} HOME={} RIOT_HOME={} TERM=tmux-256color {}",
            quote(world.project.path().to_str().unwrap()),
            quote(&std::env::var("PATH").unwrap_or_default()),
            quote(home),
            quote(home),
            words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
        );
        let tmux = Tmux { socket };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "riot",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            &command,
        ]);
        // Keep the pane after riot exits, to read what it left.
        tmux.run(&["set-option", "-t", "riot", "remain-on-exit", "on"]);
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `text` literally, then presses Enter.
    fn type_line(&self, text: &str) {
        self.run(&["send-keys", "-t", "riot", "-l", text]);
        self.run(&["send-keys", "-t", "riot", "Enter"]);
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "riot"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// The whole pane, scrollback included, wrapped rows joined.
    fn capture(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "riot"])
    }

    /// What the window shows now, without the scrollback.
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "riot"])
    }

    /// Waits until the pane shows `text`; returns the pane.
    async fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let pane = self.capture();
            if pane.contains(text) {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "the pane never showed {text:?}:\n{pane}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the pane shows `rows` one after the other (trailing
    /// spaces ignored); returns the pane so trimmed.
    async fn wait_for_rows(&self, rows: &[&str]) -> String {
        let want = rows.join("\n");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let pane: Vec<String> = self
                .capture()
                .lines()
                .map(|l| l.trim_end().to_owned())
                .collect();
            let pane = pane.join("\n");
            if pane.contains(&want) {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "the pane never showed {want:?}:\n{pane}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether riot is still running in the pane.
    fn alive(&self) -> bool {
        self.run(&["display-message", "-p", "-t", "riot", "#{pane_dead}"])
            .trim()
            == "0"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

/// The mock's requests, off the test's runtime thread.
fn requests(server: &MockServer) -> Vec<serde_json::Value> {
    server.requests().into_iter().map(|r| r.body).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_its_reply_and_the_conversation_stays_in_the_scrollback_after_ctrl_d() {
    if !have_tmux("tui: prompt and scrollback") {
        return;
    }
    let world = World::new();
    let server = server(vec![Reply::Text(
        "# Greeting\n\nHello from the **mock**.\n\n- first\n- second".into(),
    )])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("say hello");
    let pane = tmux.wait_for("• second").await;
    assert!(pane.contains("› say hello"), "{pane}");
    assert!(pane.contains("Hello from the mock."), "{pane}");
    // Quit: the conversation stays, and how to resume it is printed.
    tmux.keys(&["C-d"]);
    let pane = tmux.wait_for("Resume it with: riot --resume ses_").await;
    for text in ["› say hello", "Greeting", "Hello from the mock.", "• first"] {
        assert!(pane.contains(text), "{text:?} left the scrollback:\n{pane}");
    }
    assert!(
        !pane.contains("shift+tab mode"),
        "the live area is cleared on exit:\n{pane}"
    );
    let id = pane
        .split("riot --resume ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    assert!(world.transcript(&id).is_file(), "{id}");
    let body = &requests(&server)[0];
    assert_eq!(body["messages"][0]["content"][0]["text"], "say hello");
    server.shutdown().await;

    // `riot --continue` shows the earlier messages and goes on from them.
    let server = self::server(vec![Reply::Text("Second answer.".into())]).await;
    let tmux = Tmux::riot(&world, &server, &["--continue"]);
    let pane = tmux.wait_for("shift+tab mode").await;
    for text in ["› say hello", "Hello from the mock.", "• second"] {
        assert!(
            pane.contains(text),
            "{text:?} not shown on --continue:\n{pane}"
        );
    }
    tmux.type_line("and again");
    tmux.wait_for("Second answer.").await;
    let body = &requests(&server)[0];
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body}");
    assert_eq!(messages[0]["content"][0]["text"], "say hello");
    tmux.keys(&["C-d"]);
    tmux.wait_for(&format!("riot --resume {id}")).await;
    server.shutdown().await;
}

/// `/thinking high` in the terminal UI: the status line says so and the
/// next request carries Anthropic's thinking budget; a model that cannot
/// think refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_cost_counts_a_subagents_request_as_side_usage() {
    if !have_tmux("tui: /cost with a subagent") {
        return;
    }
    let world = World::new();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            support::tool_call(
                "call_task",
                "Task",
                json!({"description": "look around", "prompt": "CHILD-PROMPT find the notes",
                       "subagent_type": "explore"}),
            ),
            Reply::Text("PARENT-DONE".into()),
        ],
    )
    .when(
        "CHILD-PROMPT",
        Reply::Text("The notes are in notes.txt.".into()),
    );
    let server = MockServer::start(script).await.unwrap();
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("find the notes");
    tmux.wait_for("PARENT-DONE").await;
    tmux.type_line("/cost");
    // The parent's two requests are the session's tokens, the child's one
    // its side requests' (10 input and 5 output tokens each, as the mock
    // reports): the same split as exec's `side_usage` and ACP's `sideUsage`.
    let pane = tmux.wait_for("Side requests").await;
    let flat = pane.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("Tokens: 20 input, 10 output, 0 read from the cache, 0 written to it."),
        "{pane}"
    );
    assert!(
        flat.contains(
            "Side requests (compaction summaries, auto mode's classifier, subagents): 10 input, 5 output, 0 read from the cache, 0 written to it."
        ),
        "{pane}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_thinking_sets_the_level_shown_in_the_status_line_and_sent() {
    if !have_tmux("tui: /thinking") {
        return;
    }
    let world = World::new();
    // The mock's model can think here, with room for the budget (settings
    // overrides; at its default 8,192 output tokens the budget is cut).
    std::fs::write(
        world.home.path().join("settings.json"),
        serde_json::json!({"models": {"mock-model": {"thinking": true, "max_output_tokens": 32000}}})
            .to_string(),
    )
    .unwrap();
    let server = server(vec![Reply::Text("Thought about it.".into())]).await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("/thinking high");
    tmux.wait_for("Thinking: high from the next request on.")
        .await;
    let screen = tmux.wait_for("mock-model · thinking high · ").await;
    assert!(
        screen.contains("mock-model · thinking high · ask before edits"),
        "{screen}"
    );
    tmux.type_line("think hard");
    tmux.wait_for("Thought about it.").await;
    let body = &requests(&server)[0];
    assert_eq!(
        body["thinking"],
        serde_json::json!({"type": "enabled", "budget_tokens": 16384})
    );
    tmux.type_line("/thinking max");
    tmux.wait_for("/thinking takes off, low, medium or high, not `max`")
        .await;
    server.shutdown().await;
}

/// `/model` alone opens a picker of the models the endpoint lists; the
/// one chosen with the arrow keys is sent as `/model ID` and reaches the
/// next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_model_picks_from_the_endpoints_models() {
    if !have_tmux("tui: /model picker") {
        return;
    }
    let world = World::new();
    let server = MockServer::start(
        Script::new(Wire::Anthropic, vec![Reply::Text("From Haiku.".into())])
            .models(&["claude-opus-4-1", "claude-haiku-4-5"]),
    )
    .await
    .unwrap();
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    // Enter on the open `/` menu completes the command (it takes an
    // argument); the second Enter sends it as it is. Keys are handled in
    // order, so the menu is open when the first one arrives.
    tmux.type_line("/model");
    tmux.keys(&["Enter"]);
    let question = "Which model should the next requests go to?";
    let pane = tmux.wait_for(question).await;
    for shown in [
        "[mock-model]",
        "Claude Opus 4 1 [claude-opus-4-1]",
        "Claude Haiku 4 5 [claude-haiku-4-5]",
    ] {
        assert!(pane.contains(shown), "{shown:?} not offered:\n{pane}");
    }
    tmux.keys(&["Down"]);
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Model: claude-haiku-4-5 from the next request on.")
        .await;
    tmux.type_line("hello");
    tmux.wait_for("From Haiku.").await;
    assert_eq!(requests(&server)[0]["model"], "claude-haiku-4-5");
    assert_eq!(server.model_listings().len(), 1);
    server.shutdown().await;
}

/// Ctrl+F in a terminal's pane gives the terminal the pane's size (the
/// window's columns, its rows but the header and keys lines), and the
/// program sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_f_fits_the_terminal_to_the_window_and_the_program_sees_it() {
    if !have_tmux("tui: terminal fit") {
        return;
    }
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"permissions": {"allow": ["Terminal"]}}).to_string(),
    )
    .unwrap();
    let server = server(vec![
        tool_call(
            "call_open",
            "Terminal",
            json!({"action": "open", "name": "py", "command": "python3 -q"}),
        ),
        Reply::Text("A Python REPL is open.".into()),
    ])
    .await;
    let tmux = Tmux::riot_sized(&world, &server, &[], 90, 24);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("open a python repl");
    tmux.wait_for("A Python REPL is open.").await;
    tmux.keys(&["C-t"]);
    tmux.wait_for("keys go to py · ctrl+f fit").await;
    tmux.keys(&["C-f"]);
    tmux.wait_for("py is now 90×22: its program was told.")
        .await;
    tmux.type_line("import os; os.get_terminal_size()");
    tmux.wait_for("os.terminal_size(columns=90, lines=22)")
        .await;
    server.shutdown().await;
}

/// A highlighted code block is in the terminal's own palette (short SGR
/// codes that follow its light or dark theme), by kind: keywords magenta,
/// a defined name blue, strings green, numbers yellow, comments grey, and
/// everything else in the default colour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_block_is_coloured_in_the_terminals_palette_by_kind() {
    if !have_tmux("tui: code block colours") {
        return;
    }
    let world = World::new();
    let server = server(vec![Reply::Text(
        "```rust\nfn main() {\n    let s = \"hi\"; // greet\n    s.len() + 42\n}\n```\n\nDone."
            .into(),
    )])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("show code");
    tmux.wait_for("Done.").await;
    let pane = tmux.run(&["capture-pane", "-p", "-e", "-S", "-", "-t", "riot"]);
    let pane = pane.replace('\x1b', "~");
    for coloured in [
        "~[35mfn ~[34mmain~[39m() {",
        "~[35mlet~[39m s = ~[32m\"hi\"~[39m; ~[90m// greet",
        "s.len() + ~[33m42",
    ] {
        assert!(pane.contains(coloured), "{coloured:?} not in:\n{pane}");
    }
    assert!(
        !pane.contains("~[38;2;"),
        "a 24-bit colour was used:\n{pane}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_asks_y_writes_the_file_and_n_leaves_it_absent_and_tells_the_model() {
    if !have_tmux("tui: permission prompt") {
        return;
    }
    let world = World::new();
    let server = server(vec![
        tool_call(
            "w1",
            "Write",
            json!({"file_path": "yes.txt", "content": "allowed\n"}),
        ),
        Reply::Text("Wrote yes.txt.".into()),
        tool_call(
            "w2",
            "Write",
            json!({"file_path": "no.txt", "content": "refused\n"}),
        ),
        Reply::Text("Understood, no file.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("write yes.txt");
    let pane = tmux.wait_for("Allow Write?").await;
    let path = world.cwd().join("yes.txt");
    assert!(
        pane.contains(path.to_str().unwrap()),
        "the question names the resolved path:\n{pane}"
    );
    assert!(pane.contains("(y)") && pane.contains("n or esc"), "{pane}");
    tmux.keys(&["y"]);
    tmux.wait_for("Wrote yes.txt.").await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "allowed\n");

    tmux.type_line("now no.txt");
    let pane = tmux.wait_for("Allow Write?").await;
    assert!(pane.contains("no.txt"), "{pane}");
    tmux.keys(&["n"]);
    tmux.wait_for("Understood, no file.").await;
    assert!(!Path::new(&world.cwd().join("no.txt")).exists());
    let reqs = requests(&server);
    let told = tool_result(&reqs[3], "w2");
    assert_eq!(told["is_error"], true, "{told}");
    let text = told["content"].to_string().to_lowercase();
    assert!(text.contains("denied") || text.contains("reject"), "{told}");
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_stops_a_stalled_reply_and_the_next_prompt_works() {
    if !have_tmux("tui: esc") {
        return;
    }
    let world = World::new();
    let server = server(vec![
        stalled_partial_answer(),
        Reply::Text("The next answer.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("start");
    tmux.wait_for("Partial answer").await;
    tmux.wait_for("esc to stop").await;
    tmux.keys(&["Escape"]);
    let pane = tmux.wait_for("shift+tab mode").await;
    assert!(
        pane.contains("Partial answer"),
        "what arrived is kept:\n{pane}"
    );
    tmux.type_line("go on");
    tmux.wait_for("The next answer.").await;
    assert_eq!(requests(&server).len(), 2);
    assert!(tmux.alive());
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resize_mid_stream_does_not_crash() {
    if !have_tmux("tui: resize") {
        return;
    }
    let world = World::new();
    let server = server(vec![
        stalled_partial_answer(),
        Reply::Text("After the resize.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("start");
    tmux.wait_for("Partial answer").await;
    tmux.run(&["resize-window", "-t", "riot", "-x", "60", "-y", "20"]);
    tmux.run(&["resize-window", "-t", "riot", "-x", "120", "-y", "40"]);
    tmux.wait_for("esc to stop").await;
    assert!(tmux.alive(), "{}", tmux.capture());
    tmux.keys(&["Escape"]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("again");
    tmux.wait_for("After the resize.").await;
    assert!(tmux.alive());
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_riot_points_at_exec() {
    let world = World::new();
    let out = support::run(world.bare(&["hello"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "riot: the terminal UI needs a terminal on stdin and stdout; to run a task without one, use `riot exec \"PROMPT\"` (or `riot -p`)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_without_an_id_lists_the_sessions_and_opens_the_chosen_one() {
    if !have_tmux("tui: resume picker") {
        return;
    }
    let world = World::new();
    // Two earlier sessions here, the older one first.
    for (prompt, answer) in [
        ("first task", "First answer."),
        ("second task", "Second answer."),
    ] {
        let server = server(vec![Reply::Text(answer.into())]).await;
        let out = support::run(world.exec(&server, Wire::Anthropic, &[prompt])).await;
        assert_eq!(out.code, Some(0), "{out:?}");
        server.shutdown().await;
    }
    let server = server(vec![Reply::Text("Back again.".into())]).await;
    let tmux = Tmux::riot(&world, &server, &["--resume"]);
    let pane = tmux.wait_for("enter resume").await;
    // Newest first, the newest selected.
    let second = pane.find("› second task").expect(&pane);
    let first = pane.find("  first task").expect(&pane);
    assert!(second < first, "{pane}");
    // Down to the older one, and open it: its history is shown.
    tmux.keys(&["Down"]);
    tmux.wait_for("› first task").await;
    tmux.keys(&["Enter"]);
    let pane = tmux.wait_for("shift+tab mode").await;
    assert!(pane.contains("First answer."), "{pane}");
    tmux.type_line("more");
    tmux.wait_for("Back again.").await;
    let body = &requests(&server)[0];
    assert_eq!(
        body["messages"][0]["content"][0]["text"], "first task",
        "{body}"
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_resume_without_an_id_is_a_usage_error() {
    let world = World::new();
    let server = server(vec![]).await;
    let out = support::run(world.exec(&server, Wire::Anthropic, &["--resume", "--", "hi"])).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("--resume needs a session id here"),
        "{}",
        out.stderr
    );
    assert!(requests(&server).is_empty(), "no request was made");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_image_path_is_attached_and_reaches_the_model_as_an_image() {
    use base64::Engine as _;
    if !have_tmux("tui: pasted image path") {
        return;
    }
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"models": {"mock-model": {"vision": true}}}).to_string(),
    )
    .unwrap();
    // A 3x2 PNG made here, under a name with a space, as a drag delivers it.
    let shot = world.project.path().join("my shot.png");
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(3, 2, image::Rgb([200, 0, 0])))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    std::fs::write(&shot, &png).unwrap();
    let server = server(vec![Reply::Text("A red rectangle.".into())]).await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.run(&["send-keys", "-t", "riot", "-l", "what is "]);
    // A bracketed paste of the quoted path (tmux pastes bracketed with -p).
    tmux.run(&[
        "set-buffer",
        "-b",
        "drop",
        "--",
        &quote(shot.to_str().unwrap()),
    ]);
    tmux.run(&["paste-buffer", "-p", "-d", "-b", "drop", "-t", "riot"]);
    tmux.wait_for("what is [image: my shot.png]").await;
    tmux.type_line("?");
    let pane = tmux.wait_for("A red rectangle.").await;
    assert!(pane.contains("› what is [image: my shot.png]?"), "{pane}");
    let body = &requests(&server)[0];
    let content = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(
        content[0]["text"], "what is [image: my shot.png]?",
        "{body}"
    );
    let images: Vec<_> = content.iter().filter(|b| b["type"] == "image").collect();
    assert_eq!(images.len(), 1, "{body}");
    assert_eq!(
        images[0]["source"],
        json!({
            "type": "base64",
            "media_type": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(&png),
        })
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_t_shows_the_terminal_the_model_opened_and_the_persons_typing_reaches_it() {
    if !have_tmux("tui: terminal pane") {
        return;
    }
    let world = World::new();
    std::fs::write(
        world.home.path().join("settings.json"),
        json!({"permissions": {"allow": ["Terminal"]}}).to_string(),
    )
    .unwrap();
    let server = server(vec![
        tool_call(
            "call_open",
            "Terminal",
            json!({"action": "open", "name": "py", "command": "python3 -q"}),
        ),
        Reply::Text("A Python REPL is open.".into()),
        tool_call(
            "call_read",
            "Terminal",
            json!({"action": "read", "name": "py"}),
        ),
        Reply::Text("You printed 42.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("open a python repl");
    tmux.wait_for("A Python REPL is open.").await;
    tmux.wait_for("ctrl+t 1 terminal").await;
    tmux.keys(&["C-t"]);
    tmux.wait_for("▣ py (1/1) running · $ python3 -q").await;
    tmux.wait_for("keys go to py").await;
    // Typed into the REPL: Python's own answer appears in the pane.
    tmux.type_line("print(6*7)");
    let pane = tmux.wait_for_rows(&[">>> print(6*7)", "42", ">>>"]).await;
    assert!(
        !pane.contains("› print(6*7)"),
        "not sent as a prompt:\n{pane}"
    );
    // Back to the conversation; the next prompt tells the agent what was
    // typed, and its read after that does not repeat it.
    tmux.keys(&["C-t"]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("what did I do?");
    tmux.wait_for("You printed 42.").await;
    let reqs = requests(&server);
    assert_eq!(reqs.len(), 4, "{reqs:#?}");
    let told = reqs[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        told.contains(
            "The person typed into terminal `py` since you last read it: print(6*7)<Enter>."
        ),
        "{told}"
    );
    let read = tool_result(&reqs[3], "call_read").to_string();
    assert!(!read.contains("The person typed"), "{read}");
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_tasks_lists_a_running_background_agent_and_x_stops_it() {
    if !have_tmux("tui: background agents") {
        return;
    }
    let world = World::new();
    let script = Script::new(
        Wire::Anthropic,
        vec![
            tool_call(
                "call_bg",
                "Task",
                json!({"description": "look around", "prompt": "CHILD-STALL wait",
                       "subagent_type": "explore", "run_in_background": true}),
            ),
            Reply::Text("Started it.".into()),
            // The answer to the person's next message, which carries the
            // stopped agent's result.
            Reply::Text("The search was stopped.".into()),
        ],
    )
    // The background agent's request never answers: it runs until stopped.
    .when("CHILD-STALL", stalled_partial_answer());
    let server = MockServer::start(script).await.unwrap();
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("start a background agent");
    tmux.wait_for("Started it.").await;
    tmux.wait_for("ask before edits · 1 background (/tasks) ·")
        .await;
    tmux.type_line("/tasks");
    tmux.wait_for("╭ Background agents").await;
    tmux.wait_for("› bg_1 explore — look around · running · 0 calls")
        .await;
    // Stopped only once it has asked the model (it starts on its own
    // task: the list may show it first).
    support::wait_until("the agent's request to reach the model", || {
        requests(&server)
            .iter()
            .any(|b| b.to_string().contains("CHILD-STALL wait"))
    })
    .await;
    tmux.keys(&["x"]);
    tmux.wait_for("› bg_1 explore — look around · stopped · 0 calls")
        .await;
    tmux.keys(&["Escape"]);
    let pane = tmux.wait_for("shift+tab mode").await;
    assert!(!pane.contains("background (/tasks)"), "{pane}");
    // The person stopped it: its result waits for their next message
    // instead of starting a turn, and goes with it, once.
    let parents = |server: &MockServer| {
        requests(server)
            .into_iter()
            .filter(|b| b.to_string().contains("start a background agent"))
            .count()
    };
    assert_eq!(parents(&server), 2);
    tmux.type_line("what happened?");
    tmux.wait_for("The search was stopped.").await;
    assert_eq!(parents(&server), 3);
    let last = requests(&server).pop().unwrap();
    let told = last["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(
        told.contains("what happened?")
            && told
                .contains(r#"<background-task id=\"bg_1\" agent=\"explore\" status=\"stopped\">"#),
        "{told}"
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

/// What riot wrote to the pane, raw, from when this is called.
fn record_output(tmux: &Tmux, file: &Path) {
    tmux.run(&[
        "pipe-pane",
        "-t",
        "riot",
        &format!("cat >> {}", quote(file.to_str().unwrap())),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_turn_rings_the_bell_and_titles_the_terminal_unless_turned_off() {
    if !have_tmux("tui: bell and title") {
        return;
    }
    for on in [true, false] {
        let world = World::new();
        if !on {
            std::fs::write(
                world.home.path().join("settings.json"),
                json!({"notifications": {"bell": false, "title": false}}).to_string(),
            )
            .unwrap();
        }
        let raw = world.home.path().join("pane.raw");
        let server = server(vec![Reply::Text("Hi there.".into())]).await;
        let tmux = Tmux::riot(&world, &server, &[]);
        record_output(&tmux, &raw);
        tmux.wait_for("shift+tab mode").await;
        tmux.type_line("say hi");
        tmux.wait_for("Hi there.").await;
        let done = "\x1b]0;riot · done · say hi\x1b\\";
        if on {
            support::wait_until("the title says done", || {
                std::fs::read_to_string(&raw).is_ok_and(|s| s.contains(done))
            })
            .await;
            let title = tmux.run(&["display-message", "-p", "-t", "riot", "#{pane_title}"]);
            assert_eq!(title.trim(), "riot · done · say hi");
            let out = std::fs::read(&raw).unwrap();
            assert!(out.contains(&0x07), "no bell was rung");
        }
        tmux.keys(&["C-d"]);
        tmux.wait_for("Resume it with").await;
        if !on {
            let out = std::fs::read(&raw).unwrap();
            let text = String::from_utf8_lossy(&out);
            assert!(text.contains("Hi there."), "the output was recorded");
            assert!(!out.contains(&0x07), "a bell rang though it is off");
            assert!(
                !text.contains("\x1b]0;"),
                "the title was set though it is off"
            );
        }
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agent_that_ends_while_idle_wakes_the_model() {
    if !have_tmux("tui: a late background result") {
        return;
    }
    let world = World::new();
    let script = support::background_agent_script(
        "sleep 1",
        "CHILD-ANSWER notes.txt",
        vec![
            Reply::Text("Started it.".into()),
            Reply::Text("The notes are in notes.txt.".into()),
        ],
    );
    let server = MockServer::start(script).await.unwrap();
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("find the notes in the background");
    tmux.wait_for("Started it.").await;
    // Nobody types: the agent's result starts a turn of its own.
    tmux.wait_for("⎿ background agent bg_1 (explore) completed")
        .await;
    tmux.wait_for("The notes are in notes.txt.").await;
    let pane = tmux.wait_for("shift+tab mode").await;
    assert!(!pane.contains("background (/tasks)"), "{pane}");
    let reqs = requests(&server);
    let parents: Vec<&serde_json::Value> = reqs
        .iter()
        .filter(|b| b.to_string().contains("find the notes in the background"))
        .collect();
    assert_eq!(parents.len(), 3, "{reqs:#?}");
    let told = parents[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(told.contains("CHILD-ANSWER notes.txt"), "{told}");
    assert_eq!(parents[2].to_string().matches("CHILD-ANSWER").count(), 1);
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_on_the_turn_that_gave_the_model_a_background_result_does_not_start_it_again() {
    if !have_tmux("tui: a stopped delivery") {
        return;
    }
    let world = World::new();
    let script = support::background_agent_script(
        "sleep 1",
        "CHILD-ANSWER notes.txt",
        vec![
            Reply::Text("Started it.".into()),
            // The turn of Riot's with the result: no reply before Esc.
            Reply::Stall(String::new()),
            Reply::Text("It found notes.txt.".into()),
        ],
    );
    let server = MockServer::start(script).await.unwrap();
    let parents = |server: &MockServer| -> Vec<serde_json::Value> {
        requests(server)
            .into_iter()
            .filter(|b| b.to_string().contains("find the notes in the background"))
            .collect()
    };
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("find the notes in the background");
    tmux.wait_for("Started it.").await;
    tmux.wait_for("⎿ background agent bg_1 (explore) completed")
        .await;
    support::wait_until("the turn of Riot's to reach the model", || {
        parents(&server).len() == 3
    })
    .await;
    tmux.wait_for("esc to stop").await;
    tmux.keys(&["Escape"]);
    tmux.wait_for("shift+tab mode").await;
    // The person asks: the result goes with the question, and nothing
    // asked the model in between.
    tmux.type_line("what did it find?");
    tmux.wait_for("It found notes.txt.").await;
    let parents = parents(&server);
    assert_eq!(parents.len(), 4, "{parents:#?}");
    let last = parents[3].to_string();
    assert!(last.contains("what did it find?"), "{last}");
    assert_eq!(last.matches("CHILD-ANSWER notes.txt").count(), 1, "{last}");
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

/// The mock model reads a project file and edits one line of it; the
/// question shows the removed and the added line with their numbers and
/// the lines around them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_question_shows_the_removed_and_added_line_with_their_numbers() {
    if !have_tmux("tui: edit preview") {
        return;
    }
    let world = World::new();
    std::fs::write(
        world.project.path().join("a.txt"),
        "one\ntwo\nthree\nfour\nfive\n",
    )
    .unwrap();
    let server = server(vec![
        tool_call("r1", "Read", json!({"file_path": "a.txt"})),
        tool_call(
            "e1",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "three", "new_string": "THREE"}),
        ),
        Reply::Text("Edited a.txt.".into()),
    ])
    .await;
    // Tall enough for the whole diff above the answer keys.
    let tmux = Tmux::riot_sized(&world, &server, &[], 100, 40);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("shout line three");
    let pane = tmux
        .wait_for_rows(&[
            "│ +1 −1",
            "│    1   one",
            "│    2   two",
            "│    3 - three",
            "│    3 + THREE",
            "│    4   four",
            "│    5   five",
        ])
        .await;
    assert!(pane.contains("╭ Allow Edit?"), "{pane}");
    tmux.keys(&["y"]);
    tmux.wait_for("Edited a.txt.").await;
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("a.txt")).unwrap(),
        "one\ntwo\nTHREE\nfour\nfive\n"
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_question_shows_a_new_files_lines_and_count_and_an_existing_files_diff() {
    if !have_tmux("tui: write preview") {
        return;
    }
    let world = World::new();
    std::fs::write(world.project.path().join("old.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let server = server(vec![
        tool_call(
            "w1",
            "Write",
            json!({"file_path": "new.txt", "content": "first\nsecond\nthird\n"}),
        ),
        Reply::Text("Created new.txt.".into()),
        tool_call("r1", "Read", json!({"file_path": "old.txt"})),
        tool_call(
            "w2",
            "Write",
            json!({"file_path": "old.txt", "content": "alpha\nBETA\ngamma\n"}),
        ),
        Reply::Text("Rewrote old.txt.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &[]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("make new.txt");
    tmux.wait_for_rows(&[
        "│ new file, 3 lines",
        "│    1 + first",
        "│    2 + second",
        "│    3 + third",
    ])
    .await;
    tmux.keys(&["y"]);
    tmux.wait_for("Created new.txt.").await;

    tmux.type_line("now change old.txt");
    tmux.wait_for_rows(&[
        "│ +1 −1",
        "│    1   alpha",
        "│    2 - beta",
        "│    2 + BETA",
        "│    3   gamma",
    ])
    .await;
    tmux.keys(&["n"]);
    tmux.wait_for("Rewrote old.txt.").await;
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("old.txt")).unwrap(),
        "alpha\nbeta\ngamma\n",
        "denied: unchanged"
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_300_line_write_at_80x24_keeps_the_answer_keys_on_screen_and_v_shows_its_last_line() {
    if !have_tmux("tui: long preview") {
        return;
    }
    let world = World::new();
    let content: String = (1..=300).map(|i| format!("row number {i}\n")).collect();
    let server = server(vec![
        tool_call(
            "w1",
            "Write",
            json!({"file_path": "big.txt", "content": content}),
        ),
        Reply::Text("Wrote big.txt.".into()),
    ])
    .await;
    let tmux = Tmux::riot_sized(&world, &server, &[], 80, 24);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("write 300 lines");
    tmux.wait_for("more lines — press v to view all").await;
    // While the question is open Riot waits for the person, and says so.
    tmux.wait_for("waiting for your answer").await;
    let screen = tmux.screen();
    for keys in [
        "╰ y yes",
        "n or esc no",
        "│ new file, 300 lines",
        "│    1 + row number 1",
    ] {
        assert!(
            screen.contains(keys),
            "{keys:?} is not on screen:\n{screen}"
        );
    }
    assert!(!screen.contains("preparing"), "{screen}");
    assert!(!screen.contains("row number 300"), "{screen}");

    // `v` shows everything; End goes to the last line.
    tmux.keys(&["v"]);
    tmux.wait_for("esc or q back to the question").await;
    tmux.keys(&["End"]);
    tmux.wait_for("│  300 + row number 300").await;
    assert!(tmux.screen().contains("of 301"), "{}", tmux.screen());
    // q goes back to the question, which y answers.
    tmux.keys(&["q"]);
    tmux.wait_for("╰ y yes").await;
    assert!(!big_exists(&world), "nothing is written before the answer");
    tmux.keys(&["y"]);
    tmux.wait_for("Wrote big.txt.").await;
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("big.txt")).unwrap(),
        content
    );
    tmux.keys(&["C-d"]);
    tmux.wait_for("Resume it with").await;
    server.shutdown().await;
}

fn big_exists(world: &World) -> bool {
    world.project.path().join("big.txt").exists()
}

/// `/rewind` with no number opens a picker of the person's messages; the
/// chosen one is rewound to, files and conversation, by the kernel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_rewind_picks_a_message_and_puts_the_files_back() {
    if !have_tmux("tui: rewind picker") {
        return;
    }
    let world = World::new();
    std::fs::write(world.project.path().join("notes.txt"), "before\n").unwrap();
    let server = server(vec![
        tool_call(
            "w1",
            "Write",
            json!({"file_path": "made.txt", "content": "made by the model\n"}),
        ),
        Reply::Text("Made it.".into()),
    ])
    .await;
    let tmux = Tmux::riot(&world, &server, &["--permission-mode", "accept-edits"]);
    tmux.wait_for("shift+tab mode").await;
    tmux.type_line("make a file");
    tmux.wait_for("Made it.").await;
    let made = world.project.path().join("made.txt");
    assert!(made.exists());

    // Enter on the open `/` menu completes the command (it takes an
    // argument); a second Enter sends it as it is.
    tmux.type_line("/rewind");
    tmux.wait_for("› /rewind ").await;
    tmux.keys(&["Enter"]);
    let pane = tmux.wait_for("Rewind files and conversation").await;
    assert!(pane.contains("make a file (message 1)"), "{pane}");
    assert!(pane.contains("changed made.txt"), "{pane}");
    tmux.keys(&["Enter"]);
    let deadline = Instant::now() + PATIENCE;
    while made.exists() {
        assert!(Instant::now() < deadline, "{}", tmux.capture());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        std::fs::read_to_string(world.project.path().join("notes.txt")).unwrap(),
        "before\n"
    );
    let pane = tmux.wait_for("Rewound to just before message 1.").await;
    assert!(
        pane.contains("› /rewind 1"),
        "the choice is sent as /rewind 1:\n{pane}"
    );
    tmux.wait_for("shift+tab mode").await;
    tmux.keys(&["C-d"]);
    // Nothing is left to resume: the conversation went back to before its
    // only message; the UI just ends.
    let deadline = Instant::now() + PATIENCE;
    while tmux.alive() {
        assert!(Instant::now() < deadline, "{}", tmux.capture());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.shutdown().await;
}
