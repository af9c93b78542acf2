//! Unasked means undoable (docs/sandbox.md, docs/rewind.md), through the
//! real `riot` binary and the strict mock model, under bubblewrap and
//! under Landlock alone (bubblewrap hidden from `PATH`):
//!
//! - a destructive command in default mode is either asked (in `riot
//!   exec`: denied, nothing changed) or, after it ran, `riot sessions
//!   rewind ID --to 1` gives back every file byte for byte and git's
//!   refs, HEAD, stash, reflogs and objects;
//! - in bypass, a command that writes a protected path leaves it as it
//!   was, whether it existed or not;
//! - ordinary work still runs unasked where the sandbox allows it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // black-box tests use real files and processes
#![allow(clippy::print_stderr)] // a skipped test says why

mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use riot_testkit::{MockServer, Reply, Script, Wire};
use serde_json::{Value, json};
use support::{World, bodies, run, tool_call};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mech {
    Bubblewrap,
    LandlockOnly,
}

impl Mech {
    fn name(self) -> &'static str {
        match self {
            Mech::Bubblewrap => "bubblewrap-landlock-seccomp",
            Mech::LandlockOnly => "landlock-seccomp",
        }
    }
}

/// A directory of links to every program on `PATH` but `bwrap`: Landlock
/// alone, with the tools a command needs still there.
fn path_without_bwrap(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = std::env::var_os("PATH").unwrap();
    for entry in std::env::split_paths(&path) {
        let Ok(list) = std::fs::read_dir(&entry) else {
            continue;
        };
        for item in list.flatten() {
            let name = item.file_name();
            if name == "bwrap" || bin.join(&name).symlink_metadata().is_ok() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(item.path(), bin.join(&name));
        }
    }
    bin
}

/// One world per test: the project, the `PATH` for the mechanism.
struct Setup {
    world: World,
    path: std::ffi::OsString,
    _links: tempfile::TempDir,
}

impl Setup {
    fn new(mech: Mech) -> Self {
        let links = tempfile::tempdir().unwrap();
        let path = match mech {
            Mech::Bubblewrap => std::env::var_os("PATH").unwrap(),
            Mech::LandlockOnly => path_without_bwrap(links.path()).into_os_string(),
        };
        Self {
            world: World::new(),
            path,
            _links: links,
        }
    }

    fn project(&self) -> &Path {
        self.world.project.path()
    }

    fn riot(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = self.world.bare(args);
        self.env(&mut cmd);
        cmd
    }

    fn exec(&self, server: &MockServer, args: &[&str]) -> tokio::process::Command {
        let mut cmd = self.world.exec(server, Wire::Anthropic, args);
        self.env(&mut cmd);
        cmd
    }

    fn env(&self, cmd: &mut tokio::process::Command) {
        cmd.env_remove("RIOT_SANDBOX")
            .env("PATH", &self.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Agent")
            .env("GIT_AUTHOR_EMAIL", "agent@example.com")
            .env("GIT_COMMITTER_NAME", "Agent")
            .env("GIT_COMMITTER_EMAIL", "agent@example.com");
        // A build inside the sandbox writes in the project, not in the
        // test runner's own target directory.
        for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"] {
            cmd.env_remove(var);
        }
        cmd.env("CARGO_HOME", "/tmp/riot-test-cargo-home");
        if std::env::var_os("RUSTUP_HOME").is_none()
            && let Some(home) = std::env::var_os("HOME")
        {
            cmd.env("RUSTUP_HOME", Path::new(&home).join(".rustup"));
        }
    }

    /// Whether the sandbox runs here by `mech`; skipped (saying why) only
    /// outside CI, which installs bubblewrap.
    async fn enforced(&self, mech: Mech) -> bool {
        let out = run(self.riot(&["sandbox", "check", "--json"])).await;
        let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        if value["mechanism"] == mech.name() {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs bubblewrap and must run this test under {}: {value}",
            mech.name()
        );
        eprintln!("skipped: no {} here: {value}", mech.name());
        false
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Person", "-c", "user.email=p@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Two commits, a branch, a stash entry, an ignored file, an untracked
/// file and uncommitted work.
fn repository(project: &Path) {
    git(project, &["init", "-q", "-b", "main"]);
    write(&project.join(".gitignore"), "*.db\n");
    write(&project.join("src/lib.rs"), "pub fn one() {}\n");
    write(&project.join("a.txt"), "alpha\n");
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", "first"]);
    write(&project.join("b.txt"), "beta\n");
    git(project, &["add", "-A"]);
    git(project, &["commit", "-q", "-m", "second"]);
    git(project, &["branch", "feature"]);
    write(&project.join("a.txt"), "stashed change\n");
    git(project, &["stash", "-q"]);
    write(&project.join("local.db"), "rows of the person's data\n");
    write(&project.join("notes.txt"), "untracked notes\n");
    write(&project.join("a.txt"), "uncommitted work\n");
}

/// Every file, link and directory under `root`, `.git` included: bytes
/// and permission bits, link targets. Git's state is files, so this is
/// the refs, HEAD, packed-refs, stash, reflogs, index and objects too.
fn state(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("link {}", target.display()));
            } else if meta.is_dir() {
                out.insert(rel, "dir".into());
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let mode = meta.permissions().mode() & 0o777;
                out.insert(rel, format!("{mode:o} {}", String::from_utf8_lossy(&bytes)));
            }
        }
    }
    out
}

/// What changed between two states, for a readable failure.
fn difference(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> String {
    let mut lines = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => lines.push(format!("gone: {k}")),
            Some(w) if w != v => lines.push(format!("changed: {k}")),
            _ => {}
        }
    }
    for k in after.keys().filter(|k| !before.contains_key(*k)) {
        lines.push(format!("new: {k}"));
    }
    lines.join("\n")
}

async fn server(replies: Vec<Reply>) -> MockServer {
    MockServer::start(Script::new(Wire::Anthropic, replies))
        .await
        .unwrap()
}

/// Runs `command` through the Bash tool in a `riot exec` turn; returns
/// the session and what the model read back.
async fn bash_turn(setup: &Setup, mode: &str, command: &str) -> (String, Value) {
    let server = server(vec![
        tool_call("call_1", "Bash", json!({"command": command})),
        Reply::Text("Done.".into()),
    ])
    .await;
    let out = run(setup.exec(
        &server,
        &[
            "--permission-mode",
            mode,
            "--output-format",
            "json",
            "Do it",
        ],
    ))
    .await;
    assert_eq!(out.code, Some(0), "{command}: {out:?}");
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    let result = support::tool_result(&bodies(&server)[1], "call_1");
    server.shutdown().await;
    (id, result)
}

fn denied(result: &Value) -> bool {
    result["is_error"] == true
        && result
            .to_string()
            .contains("nobody can answer permission questions in this session")
}

/// The commands that must not cost the person anything unasked.
const DESTRUCTIVE: [&str; 18] = [
    "find . -delete",
    "git reset --hard HEAD~1",
    "git branch -D feature",
    "git stash drop",
    "git clean -fdx",
    "rm -f local.db",
    "git reflog expire --expire=now --all && git gc --prune=now",
    "python3 -c \"import shutil; shutil.rmtree('.git/refs')\"",
    "git rebase HEAD~1",
    "git commit --amend -m rewritten",
    "git update-ref -d refs/heads/feature",
    "truncate -s 0 src/lib.rs a.txt",
    "mv notes.txt /tmp/elsewhere.txt",
    "rm -rf .git",
    "python3 -c \"import os; os.remove('local.db'); open('a.txt', 'w').write('')\"",
    "git checkout -- .",
    "for f in *.txt; do rm \"$f\"; done",
    "python3 -c \"import os; [os.remove(os.path.join(d, f)) for d, _, fs in os.walk('.git/objects') for f in fs]\"",
];

/// Each destructive command, in default mode: asked (denied in exec,
/// nothing changed) or undone by a rewind to message 1, byte for byte.
async fn destructive_commands_are_asked_or_undone(mech: Mech) {
    let mut report = Vec::new();
    for command in DESTRUCTIVE {
        let setup = Setup::new(mech);
        if !setup.enforced(mech).await {
            return;
        }
        let project = setup.project();
        repository(project);
        let before = state(project);
        let (id, result) = bash_turn(&setup, "default", command).await;
        let outcome = if denied(&result) {
            assert_eq!(
                difference(&before, &state(project)),
                "",
                "`{command}` was denied but something changed"
            );
            "asked"
        } else {
            let out = run(setup.riot(&["sessions", "rewind", &id, "--to", "1"])).await;
            assert_eq!(out.code, Some(0), "{command}: {out:?}");
            assert_eq!(
                difference(&before, &state(project)),
                "",
                "`{command}` ran unasked ({result}) and the rewind did not undo it: {}",
                out.stdout
            );
            "ran, undone"
        };
        report.push(format!("{outcome:>12}: {command}"));
        // What only a person may do is never run unasked.
        if command.starts_with("git ") {
            assert_eq!(outcome, "asked", "{command}: {result}");
        }
    }
    eprintln!("{}:\n{}", mech.name(), report.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_destructive_commands_are_asked_or_undone() {
    destructive_commands_are_asked_or_undone(Mech::Bubblewrap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_destructive_commands_are_asked_or_undone() {
    destructive_commands_are_asked_or_undone(Mech::LandlockOnly).await;
}

/// Under bubblewrap the commands that only touch files run unasked (and
/// were undone above); what reaches `.git` fails on its read-only mount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_a_script_that_deletes_refs_runs_unasked_and_meets_a_read_only_git() {
    let setup = Setup::new(Mech::Bubblewrap);
    if !setup.enforced(Mech::Bubblewrap).await {
        return;
    }
    repository(setup.project());
    let before = state(setup.project());
    let (_, result) = bash_turn(
        &setup,
        "default",
        "python3 -c \"import shutil; shutil.rmtree('.git/refs')\"",
    )
    .await;
    assert!(!denied(&result), "{result}");
    let text = result.to_string();
    assert!(text.contains("Read-only file system"), "{result}");
    assert!(
        text.contains(
            "Note: the project's .git is read-only to commands Riot runs without asking the person"
        ),
        "{result}"
    );
    assert_eq!(difference(&before, &state(setup.project())), "");
}

/// In bypass, a script writes each protected path; each is as it was
/// after the command, whether it existed before or not, and the model
/// reads that Riot put it back.
async fn protected_paths_stay_as_they_were(mech: Mech) {
    const PROTECTED: [&str; 5] = [
        ".git/config",
        ".git/hooks/pre-commit",
        ".riot/settings.json",
        ".claude/settings.json",
        ".mcp.json",
    ];
    for existing in [false, true] {
        let setup = Setup::new(mech);
        if !setup.enforced(mech).await {
            return;
        }
        let project = setup.project();
        repository(project);
        if existing {
            for p in PROTECTED {
                let path = project.join(p);
                let text = match p {
                    ".git/config" => std::fs::read_to_string(&path).unwrap() + "# the person's\n",
                    ".git/hooks/pre-commit" => "#!/bin/sh\n# the person's\n".to_owned(),
                    _ => "{}\n".to_owned(),
                };
                write(&path, &text);
            }
        }
        let before = state(project);
        // Every write is tried, whether an earlier one was refused.
        let list = PROTECTED
            .iter()
            .map(|p| format!("'{p}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let command = format!(
            "python3 -c \"import os\nfor p in [{list}]:\n    try:\n        os.makedirs(os.path.dirname(p) or '.', exist_ok=True)\n        open(p, 'a').write('[core]\\n\\tfsmonitor = evil\\n')\n        print('wrote', p)\n    except OSError as e:\n        print('refused', p, e.strerror)\n\""
        );
        let (_, result) = bash_turn(&setup, "bypass", &command).await;
        assert_eq!(
            difference(&before, &state(project)),
            "",
            "{} (existing: {existing}): {result}",
            mech.name()
        );
        let text = result.to_string();
        // Under bubblewrap an existing protected path is a read-only
        // mount: the write fails before anything needs putting back.
        if !(existing && mech == Mech::Bubblewrap) {
            assert!(
                text.contains(
                    "riot: the command changed protected paths, which Riot put back as they were"
                ),
                "{text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_protected_paths_stay_as_they_were() {
    protected_paths_stay_as_they_were(Mech::Bubblewrap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_protected_paths_stay_as_they_were() {
    protected_paths_stay_as_they_were(Mech::LandlockOnly).await;
}

/// Ordinary work runs unasked under bubblewrap: a loop copying files, a
/// script writing a file, `cargo test` on a small crate, `git status`,
/// `git diff`. Under Landlock alone, only the read-only ones do.
async fn ordinary_work(mech: Mech) {
    let setup = Setup::new(mech);
    if !setup.enforced(mech).await {
        return;
    }
    let project = setup.project();
    repository(project);
    write(
        &project.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\npath = \"src/lib.rs\"\n",
    );
    write(
        &project.join("src/lib.rs"),
        "pub fn one() -> u32 { 1 }\n#[test]\nfn it_is_one() { assert_eq!(one(), 1); }\n",
    );
    let cases: [(&str, bool); 5] = [
        ("for f in *.txt; do cp \"$f\" \"$f.bak\"; done", false),
        (
            "python3 -c \"open('out.txt', 'w').write('written')\"",
            false,
        ),
        ("cargo test --offline -q 2>&1 | tail -3", false),
        ("git status --short", true),
        ("git diff --stat", true),
    ];
    for (command, read_only) in cases {
        let (_, result) = bash_turn(&setup, "default", command).await;
        let unasked = mech == Mech::Bubblewrap || read_only;
        assert_eq!(!denied(&result), unasked, "{command}: {result}");
        if unasked {
            assert_ne!(result["is_error"], true, "{command}: {result}");
        }
    }
    if mech == Mech::Bubblewrap {
        assert_eq!(
            std::fs::read_to_string(project.join("a.txt.bak")).unwrap(),
            "uncommitted work\n"
        );
        assert_eq!(
            std::fs::read_to_string(project.join("out.txt")).unwrap(),
            "written"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bubblewrap_ordinary_work_runs_unasked() {
    ordinary_work(Mech::Bubblewrap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn landlock_ordinary_work_is_asked_but_for_what_only_reads() {
    ordinary_work(Mech::LandlockOnly).await;
}

/// `riot sandbox check` from a copy of the binary under the system's
/// temporary directory: bubblewrap still runs it (the private `/tmp` the
/// sandbox makes used to hide it, and Riot fell back to Landlock alone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_riot_binary_under_tmp_still_runs_under_bubblewrap() {
    let setup = Setup::new(Mech::Bubblewrap);
    if !setup.enforced(Mech::Bubblewrap).await {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("riot-bin-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    let copy = dir.path().join("riot");
    std::fs::copy(env!("CARGO_BIN_EXE_riot"), &copy).unwrap();
    let mut cmd = tokio::process::Command::new(&copy);
    cmd.args(["sandbox", "check", "--json"])
        .env("RIOT_HOME", setup.world.home.path())
        .env("HOME", setup.world.home.path())
        .env_remove("RIOT_SANDBOX")
        .current_dir(setup.project())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let out = run(cmd).await;
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(value["mechanism"], "bubblewrap-landlock-seccomp", "{value}");
    assert_eq!(value["auto_allow"], true, "{value}");
}
