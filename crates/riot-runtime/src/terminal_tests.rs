#![allow(clippy::disallowed_methods)] // tests read /proc, write scripts and poll with real sleeps

use std::path::Path;
use std::time::Duration;

use riot_protocol::{TerminalSize, TerminalSpec, TerminalUpdate, Terminals, Typist, WaitEnd};
use tokio_util::sync::CancellationToken;

use super::*;

fn spec(name: &str, command: &str, cwd: &Path) -> TerminalSpec {
    TerminalSpec {
        name: name.into(),
        command: command.into(),
        cwd: cwd.to_path_buf(),
        env_set: vec![("PS1".into(), "$ ".into())],
        env_remove: vec!["PYTHONSTARTUP".into()],
        size: TerminalSize { rows: 12, cols: 60 },
        outside_sandbox: false,
    }
}

/// Reads until `want` is on the screen (the program answers on its own
/// time), at most ten seconds; the output and what the person typed are
/// gathered over those reads.
async fn screen_with(terms: &PtyTerminals, name: &str, want: &str) -> TerminalView {
    screen_where(terms, name, want, |_| true).await
}

/// [`screen_with`], also waiting until `ready` holds for the view (the
/// cursor where the program leaves it).
async fn screen_where(
    terms: &PtyTerminals,
    name: &str,
    want: &str,
    ready: impl Fn(&TerminalView) -> bool,
) -> TerminalView {
    let mut seen = String::new();
    let mut output = String::new();
    let mut typed = Vec::new();
    for _ in 0..200 {
        let mut view = terms.read(name).await.unwrap();
        output.push_str(&view.output);
        typed.append(&mut view.person_typed);
        if view.screen.contains(want) && ready(&view) {
            view.output = output;
            view.person_typed = typed;
            return view;
        }
        seen = view.screen;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("`{want}` never appeared; the screen was:\n{seen}");
}

/// The processes whose process group is `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp …; comm may hold spaces, so split after ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue; // a zombie waiting for its reaper is already dead
        }
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out
}

fn pid_of(terms: &PtyTerminals, name: &str) -> u32 {
    terms.find(name).unwrap().pid.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_repl_is_written_to_and_read_back_as_a_rendered_screen() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    let opened = terms
        .open(spec("py", "python3 -q", dir.path()))
        .await
        .unwrap();
    assert!(opened.exit.is_none());
    // A loaded machine may start Python after `open` stopped waiting for
    // its first output: read until the prompt is there.
    let first = screen_with(&terms, "py", ">>>").await;
    assert_eq!(first.screen, ">>>", "the prompt, trailing space trimmed");

    terms.write("py", b"6 * 7\r", Typist::Agent).await.unwrap();
    // The answer and the whole next prompt: Python may draw them apart.
    let view = screen_where(&terms, "py", "42\n>>>", |v| v.cursor == (2, 4)).await;
    assert_eq!(view.screen, ">>> 6 * 7\n42\n>>>");
    assert_eq!(view.cursor, (2, 4), "after the new prompt");
    assert!(!view.full_screen);
    assert!(view.output.contains("6 * 7\r\n42") || view.output.contains("6 * 7\n42"));
    assert!(view.person_typed.is_empty());

    // The person types: the agent's next read says so, once.
    terms
        .write("py", b"print('hi' * 2)\r", Typist::Person)
        .await
        .unwrap();
    let view = screen_with(&terms, "py", "hihi").await;
    assert_eq!(view.person_typed, ["print('hi' * 2)<Enter>"]);
    assert!(view.output.contains("hihi"), "{:?}", view.output);
    assert!(terms.read("py").await.unwrap().person_typed.is_empty());

    // Ctrl-D ends the REPL: the exit is reported and input is refused.
    terms.write("py", b"\x04", Typist::Agent).await.unwrap();
    let (end, view) = terms
        .wait("py", "never printed", 10_000, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, WaitEnd::Exited);
    assert_eq!(
        view.exit,
        Some(TerminalExit {
            code: Some(0),
            signal: None
        })
    );
    assert_eq!(
        terms.write("py", b"1\r", Typist::Agent).await,
        Err(TerminalError::InputClosed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_returns_when_a_dev_server_prints_its_ready_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("serve.sh"),
        "echo compiling...\nsleep 0.4\necho 'compiled 12 modules'\nsleep 0.3\necho 'ready on http://127.0.0.1:5173'\nexec sleep 300\n",
    )
    .unwrap();
    let terms = PtyTerminals::default();
    terms
        .open(spec("dev", "bash serve.sh", dir.path()))
        .await
        .unwrap();
    let (end, view) = terms
        .wait("dev", r"ready on (\S+)", 20_000, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        end,
        WaitEnd::Matched("ready on http://127.0.0.1:5173".into())
    );
    assert!(
        view.screen
            .ends_with("compiled 12 modules\nready on http://127.0.0.1:5173"),
        "{}",
        view.screen
    );
    assert!(view.exit.is_none());

    // Nothing new arrives: a wait for what was already read times out.
    let (end, _) = terms
        .wait("dev", "ready", 300, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, WaitEnd::TimedOut);

    // A bad pattern is refused with the pattern named.
    assert_eq!(
        terms
            .wait("dev", "(", 10, CancellationToken::new())
            .await
            .unwrap_err(),
        TerminalError::BadPattern("(".into())
    );
    terms.close("dev").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_screen_program_is_read_as_its_screen() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("board.py"),
        "import curses\n\
         def main(w):\n\
         \x20   curses.curs_set(0)\n\
         \x20   w.addstr(0, 0, 'SCOREBOARD')\n\
         \x20   w.addstr(3, 10, 'alice 12')\n\
         \x20   w.addstr(4, 10, 'bob    7')\n\
         \x20   w.addstr(11, 0, 'q: quit')\n\
         \x20   w.refresh()\n\
         \x20   while w.getch() != ord('q'):\n\
         \x20       pass\n\
         curses.wrapper(main)\n",
    )
    .unwrap();
    let terms = PtyTerminals::default();
    terms
        .open(spec("board", "python3 board.py", dir.path()))
        .await
        .unwrap();
    let view = screen_with(&terms, "board", "q: quit").await;
    assert!(view.full_screen);
    assert_eq!(
        view.output, "",
        "a full-screen program's bytes are not text"
    );
    let rows: Vec<&str> = view.screen.lines().collect();
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[0], "SCOREBOARD");
    assert_eq!(rows[3], "          alice 12");
    assert_eq!(rows[4], "          bob    7");
    assert_eq!(rows[11], "q: quit");

    // `q` leaves: the primary screen is back, the program ended.
    terms.write("board", b"q", Typist::Agent).await.unwrap();
    let (end, view) = terms
        .wait("board", "never printed", 10_000, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, WaitEnd::Exited);
    assert!(!view.full_screen);
    assert!(!view.screen.contains("SCOREBOARD"), "{}", view.screen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    terms
        .open(spec(
            "jobs",
            "sleep 301 & sleep 302 & echo started; wait",
            dir.path(),
        ))
        .await
        .unwrap();
    let pgid = pid_of(&terms, "jobs");
    // `started` comes after both sleeps were started.
    screen_with(&terms, "jobs", "started").await;
    assert_eq!(group_members(pgid).len(), 3, "bash and two sleeps");

    let view = terms.close("jobs").await.unwrap();
    assert_eq!(
        view.exit,
        Some(TerminalExit {
            code: None,
            signal: Some(libc::SIGKILL)
        })
    );
    for _ in 0..100 {
        if group_members(pgid).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(group_members(pgid), Vec::<u32>::new());
    assert!(terms.list().is_empty());
    assert_eq!(
        terms.read("jobs").await.unwrap_err(),
        TerminalError::Unknown {
            name: "jobs".into(),
            open: vec![]
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_session_terminals_kills_every_group() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    terms
        .open(spec("a", "sleep 303 & echo a; wait", dir.path()))
        .await
        .unwrap();
    terms
        .open(spec("b", "sleep 304 & echo b; wait", dir.path()))
        .await
        .unwrap();
    assert_eq!(
        terms.open(spec("a", "true", dir.path())).await.unwrap_err(),
        TerminalError::NameTaken("a".into())
    );
    let names: Vec<String> = terms.list().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["a", "b"]);
    let groups = [pid_of(&terms, "a"), pid_of(&terms, "b")];
    drop(terms);
    for _ in 0..100 {
        if groups.iter().all(|g| group_members(*g).is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for g in groups {
        assert_eq!(group_members(g), Vec::<u32>::new(), "group {g}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_get_the_screen_as_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    terms.subscribe(Arc::new(move |u: &TerminalUpdate| {
        let _ = tx.send(u.clone());
    }));
    terms
        .open(spec("echo", "read line; echo \"got $line\"", dir.path()))
        .await
        .unwrap();
    terms.write("echo", b"abc\r", Typist::Person).await.unwrap();
    let mut seen = Vec::new();
    let last_screen = loop {
        let update = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("updates keep coming until the program ends")
            .unwrap();
        seen.push(update.clone());
        if let TerminalUpdate::Exited { exit, .. } = update {
            assert_eq!(exit.code, Some(0));
            break seen
                .iter()
                .rev()
                .find_map(|u| match u {
                    TerminalUpdate::Screen { rows, .. } => Some(rows.clone()),
                    _ => None,
                })
                .unwrap();
        }
    };
    assert_eq!(
        seen[0],
        TerminalUpdate::Opened {
            name: "echo".into(),
            command: "read line; echo \"got $line\"".into(),
            size: TerminalSize { rows: 12, cols: 60 }
        }
    );
    assert_eq!(&last_screen[..2], ["abc", "got abc"]);
    assert_eq!(last_screen.len(), 12);
}

/// A program that leaves a process behind holding the terminal still has
/// its exit reported, with its last output on the screen: the exit waits
/// for the output to be read to its end only for a moment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exit_is_reported_while_a_process_left_behind_holds_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    terms.subscribe(Arc::new(move |u: &TerminalUpdate| {
        let _ = tx.send(u.clone());
    }));
    // The shell waits, through a fifo, until the child ignores SIGHUP:
    // otherwise the hang-up the shell's exit sends the terminal's group
    // could reach the child first, and nothing would be left behind.
    terms
        .open(spec(
            "left",
            "mkfifo armed; (trap '' HUP; echo > armed; exec sleep 305) & read x < armed; echo started",
            dir.path(),
        ))
        .await
        .unwrap();
    let mut last_screen = Vec::new();
    let exit = loop {
        let update = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the exit is reported although `sleep` still holds the terminal")
            .unwrap();
        match update {
            TerminalUpdate::Screen { rows, .. } => last_screen = rows,
            TerminalUpdate::Exited { exit, .. } => break exit,
            _ => {}
        }
    };
    assert_eq!(exit.code, Some(0));
    assert_eq!(last_screen.first().map(String::as_str), Some("started"));
    // The sleep is still there, in the terminal's group, until the
    // terminals are dropped.
    let group = pid_of(&terms, "left");
    assert_eq!(
        group_members(group).len(),
        1,
        "the sleep outlives its shell"
    );
    drop(terms);
    for _ in 0..100 {
        if group_members(group).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(group_members(group), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_that_scroll_off_the_top_reach_the_watchers_once_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    terms.subscribe(Arc::new(move |u: &TerminalUpdate| {
        let _ = tx.send(u.clone());
    }));
    // 40 numbered lines on a 12-row screen: the first ones scroll off.
    terms
        .open(spec(
            "seq",
            "for i in $(seq 1 40); do echo line $i; done",
            dir.path(),
        ))
        .await
        .unwrap();
    let mut scrolled: Vec<String> = Vec::new();
    let mut last_rows = Vec::new();
    loop {
        let update = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("updates keep coming until the program ends")
            .unwrap();
        match update {
            TerminalUpdate::Screen {
                rows, scrolled: s, ..
            } => {
                scrolled.extend(s);
                last_rows = rows;
            }
            TerminalUpdate::Exited { .. } => break,
            _ => {}
        }
    }
    // What scrolled off and what the screen shows last are the 40 lines,
    // each once, in order.
    let shown: Vec<String> = scrolled
        .iter()
        .chain(last_rows.iter())
        .filter(|r| !r.is_empty())
        .cloned()
        .collect();
    let expected: Vec<String> = (1..=40).map(|i| format!("line {i}")).collect();
    assert_eq!(
        shown, expected,
        "scrolled {scrolled:?}, screen {last_rows:?}"
    );
    assert!(scrolled.len() >= 28, "{scrolled:?}");
}

#[test]
fn input_is_described_with_key_names() {
    assert_eq!(describe_input(b"ls\r"), "ls<Enter>");
    assert_eq!(
        describe_input(b"\x03\x1b\t\x7f"),
        "<C-c><Esc><Tab><Backspace>"
    );
}

/// What the model reads of `output` written to a terminal.
fn plain(output: &str) -> String {
    let mut parser = vte::Parser::new();
    let mut text = PlainText::default();
    parser.advance(&mut text, output.as_bytes());
    text.text
}

#[test]
fn a_redrawn_line_is_read_as_it_was_left_not_as_every_redraw() {
    // A progress bar redrawn with carriage returns, then a line feed.
    assert_eq!(
        plain("Building [=>  ] 1/3\rBuilding [==> ] 2/3\rBuilding [===>] 3/3\r\nDone.\r\n"),
        "Building [===>] 3/3\nDone.\n"
    );
    // A shorter redraw leaves the end of the longer line, as a screen does.
    assert_eq!(plain("abcdef\rXY\r\n"), "XYcdef\n");
    // Overwriting goes on past the old end of the line.
    assert_eq!(plain("ab\rWXYZ\n"), "WXYZ\n");
    // Characters of any width replace characters, not bytes.
    assert_eq!(plain("naïve\rNAÏ\n"), "NAÏve\n");
    // A carriage return at the start of a line changes nothing.
    assert_eq!(plain("one\n\rtwo\n"), "one\ntwo\n");
    // Backspace moves back over the line being overwritten, not past it.
    assert_eq!(plain("one\nabc\r\x08\x08X\n"), "one\nXbc\n");
    assert_eq!(plain("abc\rab\x08Z\n"), "aZc\n");
    // At the end of the text it takes the last character back, as before.
    assert_eq!(plain("abc\x08\x08Z\n"), "aZ\n");
    // Erasing the line (cargo's bar giving way to the next message)
    // leaves none of the old line behind.
    assert_eq!(
        plain("Building [====>   ] 3/9: foo, bar, baz\r\x1b[K   Compiling qux\r\n"),
        "   Compiling qux\n"
    );
    assert_eq!(plain("abc\x1b[2K\rxy\n"), "xy\n");
    assert_eq!(plain("done\n\x1b[K"), "done\n");
    // Escape sequences are dropped throughout.
    assert_eq!(
        plain("\x1b[32m50%\x1b[0m\r\x1b[32m100%\x1b[0m\r\n"),
        "100%\n"
    );
}

#[test]
fn a_cut_keeps_the_carriage_return_on_the_same_character() {
    let mut parser = vte::Parser::new();
    let mut text = PlainText::default();
    parser.advance(&mut text, b"0123456789\nprogress 10%\r");
    text.cap(16);
    parser.advance(&mut text, b"progress 99%\r\n");
    assert!(text.text.ends_with("progress 99%\n"), "{:?}", text.text);
    assert_eq!(text.text.matches("progress").count(), 1, "{:?}", text.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_bar_redrawn_a_thousand_times_is_read_as_its_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    // The bar starts when Enter is typed, after the opening view: it is
    // all new output for the wait (after the Enter's echo).
    terms
        .open(spec(
            "bar",
            "read -r go; for i in $(seq 1000); do printf '\\rprogress %d/1000' $i; done; echo; echo finished; exec sleep 300",
            dir.path(),
        ))
        .await
        .unwrap();
    terms.write("bar", b"\r", Typist::Agent).await.unwrap();
    let (end, view) = terms
        .wait("bar", "finished\n", 20_000, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(end, WaitEnd::Matched("finished\n".into()));
    // 19 bytes, where the redraws run together were 16,893.
    assert_eq!(view.output, "\nprogress 1000/1000\nfinished\n");
    assert_eq!(view.screen, "\nprogress 1000/1000\nfinished");
    terms.close("bar").await.unwrap();
}

/// The names the terminal's foreground programs go by, or a panic saying
/// what was reported instead.
fn foreground_names(terms: &PtyTerminals, name: &str) -> Vec<String> {
    match terms.foreground(name) {
        riot_protocol::TerminalForeground::Programs(names) => names,
        other => panic!("no foreground programs for `{name}`: {other:?}"),
    }
}

/// What runs in a terminal's foreground is what runs there now: the
/// program it was opened with, then what a shell in it started, then the
/// shell again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_foreground_program_is_what_the_terminal_runs_now() {
    let dir = tempfile::tempdir().unwrap();
    let terms = PtyTerminals::default();
    terms
        .open(spec("py", "python3 -q", dir.path()))
        .await
        .unwrap();
    screen_with(&terms, "py", ">>>").await;
    let names = foreground_names(&terms, "py");
    assert!(names.iter().any(|n| n == "python3"), "{names:?}");
    assert!(!names.iter().any(|n| n == "bash"), "{names:?}");

    terms
        .open(spec(
            "sh",
            "PS1='$ ' exec bash --norc --noprofile",
            dir.path(),
        ))
        .await
        .unwrap();
    screen_with(&terms, "sh", "$").await;
    assert_eq!(foreground_names(&terms, "sh"), ["bash"]);
    // The shell's job control gives python3 the terminal while it runs.
    terms
        .write("sh", b"python3 -q\r", Typist::Agent)
        .await
        .unwrap();
    screen_with(&terms, "sh", ">>>").await;
    let names = foreground_names(&terms, "sh");
    assert!(names.iter().any(|n| n == "python3"), "{names:?}");
    assert!(!names.iter().any(|n| n == "bash"), "{names:?}");
    terms.write("sh", b"exit()\r", Typist::Agent).await.unwrap();
    // Until the shell takes the terminal back, its foreground group is
    // the one Python left: no programs to report for a moment.
    let mut now = riot_protocol::TerminalForeground::Unknown;
    for _ in 0..200 {
        now = terms.foreground("sh");
        if now == riot_protocol::TerminalForeground::Programs(vec!["bash".into()]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        now,
        riot_protocol::TerminalForeground::Programs(vec!["bash".into()])
    );

    assert_eq!(
        terms.foreground("nope"),
        riot_protocol::TerminalForeground::Unknown
    );
    terms.close_all();
}

/// `/proc` is read for the group's members only, by the last `)` of a
/// command name that may hold spaces and parentheses, skipping zombies.
#[test]
fn a_process_group_is_read_from_proc_by_its_members_names() {
    let proc = tempfile::tempdir().unwrap();
    let process = |pid: &str, stat: &str, exe: Option<&str>| {
        let dir = proc.path().join(pid);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("stat"), stat).unwrap();
        if let Some(exe) = exe {
            std::os::unix::fs::symlink(exe, dir.join("exe")).unwrap();
        }
    };
    process(
        "40",
        "40 (odd) name)) S 1 40 40 34816 40 4194560 0 0",
        Some("/usr/bin/python3.12"),
    );
    process(
        "41",
        "41 (bash) S 40 40 40 34816 40 0",
        Some("/usr/bin/bash (deleted)"),
    );
    process("42", "42 (sh) Z 40 40 40 34816 40 0", None);
    process("43", "43 (zsh) S 1 43 43 34816 40 0", None);
    std::fs::create_dir(proc.path().join("self")).unwrap();
    assert_eq!(
        group_programs(proc.path(), 40),
        riot_protocol::TerminalForeground::Programs(vec![
            "odd) name)".into(),
            "python3.12".into(),
            "bash".into(),
        ])
    );
    assert_eq!(
        group_programs(proc.path(), 7),
        riot_protocol::TerminalForeground::Unknown
    );
}
