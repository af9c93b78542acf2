use std::fs;
use std::path::{Path, PathBuf};

use super::*;

struct World {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    fs::create_dir_all(&project).unwrap();
    World {
        _dir: dir,
        home,
        project,
    }
}

fn store(w: &World) -> CheckpointStore {
    CheckpointStore::open(&w.home, &w.project, Settings::default())
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

const FORCE_NO: FilesRewind = FilesRewind::Yes { force: false };

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_rewind_puts_back_what_the_agent_wrote_edited_and_made_and_nothing_else() {
    let w = world();
    let s = store(&w);
    write(&w.project.join("tracked.txt"), "original\n");
    write(&w.project.join(".git/config"), "[core]\n");
    write(&w.project.join(".git/refs/heads/main"), "abc\n");
    let git_before = snapshot(&w.project.join(".git"));

    // Turn 1: Write a new file, Edit a tracked one, a command makes another.
    let new = w.project.join("src/new.txt");
    let b = s
        .begin("s", 1, "Write", Scope::Files(vec![new.clone()]), 1)
        .unwrap();
    write(&new, "agent wrote this\n");
    s.finish(b, 2).unwrap();
    let tracked = w.project.join("tracked.txt");
    let b = s
        .begin("s", 1, "Edit", Scope::Files(vec![tracked.clone()]), 3)
        .unwrap();
    write(&tracked, "edited\n");
    s.finish(b, 4).unwrap();
    let b = s.begin("s", 1, "Bash", Scope::Tree, 5).unwrap();
    write(&w.project.join("made.txt"), "by a command\n");
    let changes = s.finish(b, 6).unwrap();
    assert_eq!(
        changes.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        vec!["made.txt"]
    );

    // The person's own file, made after the agent's turn.
    write(&w.project.join("mine.txt"), "person's notes\n");

    let turns = s.turns("s").unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].message, 1);
    assert_eq!(turns[0].calls, 3);
    assert_eq!(
        turns[0].files,
        vec!["made.txt", "src/new.txt", "tracked.txt"]
    );

    let report = s.rewind("s", 1, FORCE_NO, true, 7).unwrap();
    assert_eq!(report.removed, vec!["made.txt", "src/new.txt"]);
    assert_eq!(report.restored, vec!["tracked.txt"]);
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert!(!new.exists());
    assert!(!w.project.join("made.txt").exists());
    assert_eq!(read(&tracked), "original\n");
    assert_eq!(read(&w.project.join("mine.txt")), "person's notes\n");
    assert_eq!(snapshot(&w.project.join(".git")), git_before);
    // Taken back: the turn no longer lists changes.
    assert!(s.turns("s").unwrap().is_empty());
}

#[test]
fn only_turns_from_the_rewind_point_on_are_taken_back() {
    let w = world();
    let s = store(&w);
    let f = w.project.join("a.txt");
    let b = s
        .begin("s", 1, "Write", Scope::Files(vec![f.clone()]), 1)
        .unwrap();
    write(&f, "one\n");
    s.finish(b, 2).unwrap();
    let b = s
        .begin("s", 2, "Edit", Scope::Files(vec![f.clone()]), 3)
        .unwrap();
    write(&f, "two\n");
    s.finish(b, 4).unwrap();
    let b = s
        .begin("s", 3, "Edit", Scope::Files(vec![f.clone()]), 5)
        .unwrap();
    write(&f, "three\n");
    s.finish(b, 6).unwrap();

    let report = s.rewind("s", 2, FORCE_NO, true, 7).unwrap();
    assert_eq!(report.restored, vec!["a.txt"]);
    assert_eq!(read(&f), "one\n");
    // Rewinding to the same point again finds nothing more to do.
    let again = s.rewind("s", 2, FORCE_NO, true, 8).unwrap();
    assert!(again.restored.is_empty() && again.removed.is_empty());
    assert_eq!(read(&f), "one\n");
}

#[test]
fn a_file_the_person_changed_after_the_agent_is_a_conflict_kept_unless_forced() {
    let w = world();
    let s = store(&w);
    let f = w.project.join("notes.md");
    write(&f, "before\n");
    let b = s
        .begin("s", 1, "Edit", Scope::Files(vec![f.clone()]), 1)
        .unwrap();
    write(&f, "agent\n");
    s.finish(b, 2).unwrap();
    write(&f, "person\n");

    let report = s.rewind("s", 1, FORCE_NO, true, 3).unwrap();
    assert_eq!(report.conflicts, vec!["notes.md"]);
    assert!(report.restored.is_empty() && report.forced.is_empty());
    assert_eq!(read(&f), "person\n");

    // Forced: restored, and the person's version is recorded, so undoing
    // the rewind gives it back.
    s.undo("s", false, 4).unwrap();
    let forced = s
        .rewind("s", 1, FilesRewind::Yes { force: true }, true, 5)
        .unwrap();
    assert_eq!(forced.conflicts, vec!["notes.md"]);
    assert_eq!(forced.forced, vec!["notes.md"]);
    assert_eq!(forced.restored, vec!["notes.md"]);
    assert_eq!(read(&f), "before\n");
    let undone = s.undo("s", false, 6).unwrap();
    assert_eq!(undone.restored, vec!["notes.md"]);
    assert_eq!(read(&f), "person\n");
}

#[test]
fn a_rewind_can_be_undone_until_the_session_goes_on() {
    let w = world();
    let s = store(&w);
    let f = w.project.join("x.txt");
    let b = s
        .begin("s", 1, "Write", Scope::Files(vec![f.clone()]), 1)
        .unwrap();
    write(&f, "agent\n");
    s.finish(b, 2).unwrap();
    s.rewind("s", 1, FORCE_NO, true, 3).unwrap();
    assert!(!f.exists());
    assert_eq!(
        s.undoable("s").unwrap(),
        Some(Undoable {
            to: 1,
            files: true,
            conversation: true
        })
    );
    let undone = s.undo("s", false, 4).unwrap();
    assert_eq!(undone.restored, vec!["x.txt"]);
    assert_eq!(read(&f), "agent\n");
    // The calls count again: the turn lists its file.
    assert_eq!(s.turns("s").unwrap()[0].files, vec!["x.txt"]);
    assert_eq!(s.undoable("s").unwrap(), None);
    let err = s.undo("s", false, 5).unwrap_err();
    assert!(err.to_string().contains("no rewind to undo"), "{err}");

    // A new call after a rewind closes the undo.
    s.rewind("s", 1, FORCE_NO, true, 6).unwrap();
    let g = w.project.join("y.txt");
    let b = s
        .begin("s", 1, "Write", Scope::Files(vec![g.clone()]), 7)
        .unwrap();
    write(&g, "new branch\n");
    s.finish(b, 8).unwrap();
    assert!(s.undo("s", false, 9).is_err());
}

#[test]
fn a_conversation_only_rewind_leaves_files_and_is_undone_in_order() {
    let w = world();
    let s = store(&w);
    let f = w.project.join("x.txt");
    let b = s
        .begin("s", 1, "Write", Scope::Files(vec![f.clone()]), 1)
        .unwrap();
    write(&f, "agent\n");
    s.finish(b, 2).unwrap();
    let report = s.rewind("s", 1, FilesRewind::No, true, 3).unwrap();
    assert!(report.restored.is_empty() && report.removed.is_empty());
    assert_eq!(read(&f), "agent\n");
    assert_eq!(
        s.undoable("s").unwrap(),
        Some(Undoable {
            to: 1,
            files: false,
            conversation: true
        })
    );
    // The calls were not taken back: a files rewind still finds them.
    let files = s.rewind("s", 1, FORCE_NO, true, 4).unwrap();
    assert_eq!(files.removed, vec!["x.txt"]);
}

#[test]
fn the_walk_records_ignored_files_but_skips_git_build_folders_and_large_files() {
    let w = world();
    let settings = Settings {
        max_file_bytes: 100,
        ..Settings::default()
    };
    let s = CheckpointStore::open(&w.home, &w.project, settings);
    write(&w.project.join(".gitignore"), "target/\n*.log\n*.db\n");
    write(&w.project.join("target/out.bin"), "built");
    write(&w.project.join("web/node_modules/x/index.js"), "dep");
    write(&w.project.join("run.log"), "log");
    write(&w.project.join("local.db"), "rows");
    write(&w.project.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&w.project.join("big.dat"), &"x".repeat(200));
    write(&w.project.join("src/lib.rs"), "fn main() {}\n");
    let b = s.begin("s", 1, "Bash", Scope::Tree, 1).unwrap();
    assert_eq!(b.skipped(), 1);
    let Before::Tree(manifest) = &b.before else {
        panic!("a tree checkpoint")
    };
    assert_eq!(
        manifest.keys().collect::<Vec<_>>(),
        vec![".gitignore", "local.db", "run.log", "src/lib.rs"]
    );
    // A command that removes an ignored file, a build output and a large
    // file: the ignored file is a change rewind restores, the others are
    // not recorded.
    fs::remove_file(w.project.join("local.db")).unwrap();
    fs::remove_file(w.project.join("target/out.bin")).unwrap();
    fs::remove_file(w.project.join("big.dat")).unwrap();
    let changes = s.finish(b, 2).unwrap();
    assert_eq!(
        changes.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        vec!["local.db"]
    );
    let files = s.rewind("s", 1, FORCE_NO, true, 3).unwrap();
    assert_eq!(files.restored, vec!["local.db"]);
    assert_eq!(
        fs::read_to_string(w.project.join("local.db")).unwrap(),
        "rows"
    );
}

#[test]
fn an_unchanged_file_is_not_read_again_by_the_next_walk() {
    let w = world();
    let s = store(&w);
    for i in 0..50 {
        write(&w.project.join(format!("f{i}.txt")), &format!("file {i}\n"));
    }
    // Make every file older than the racy window.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for i in 0..50 {
        let f = fs::File::options()
            .write(true)
            .open(w.project.join(format!("f{i}.txt")))
            .unwrap();
        f.set_modified(old).unwrap();
    }
    let first = s.walk().unwrap();
    assert_eq!(first.read, 50);
    let second = s.walk().unwrap();
    assert_eq!(second.read, 0);
    assert_eq!(second.manifest, first.manifest);
    // A new store (another process) reads the cache from the disk.
    let third = store(&w).walk().unwrap();
    assert_eq!(third.read, 0);
    // A changed file is read again.
    write(&w.project.join("f3.txt"), "changed\n");
    let fourth = s.walk().unwrap();
    assert_eq!(fourth.read, 1);
    assert_ne!(fourth.manifest["f3.txt"], first.manifest["f3.txt"]);
}

#[test]
fn a_command_whose_end_was_never_recorded_is_still_rewound_safely() {
    let w = world();
    let s = store(&w);
    write(&w.project.join("kept.txt"), "original\n");
    let b = s.begin("s", 1, "Bash", Scope::Tree, 1).unwrap();
    write(&w.project.join("kept.txt"), "changed by the command\n");
    write(&w.project.join("appeared.txt"), "who made this?\n");
    drop(b); // the process died before `finish`

    // A later process, from the disk alone.
    let s = store(&w);
    let report = s.rewind("s", 1, FORCE_NO, true, 2).unwrap();
    assert_eq!(report.restored, vec!["kept.txt"]);
    assert!(report.removed.is_empty());
    assert_eq!(read(&w.project.join("kept.txt")), "original\n");
    assert_eq!(read(&w.project.join("appeared.txt")), "who made this?\n");
    assert_eq!(report.notes.len(), 1, "{report:?}");
}

#[test]
fn modes_and_symlinks_are_restored() {
    use std::os::unix::fs::PermissionsExt;
    let w = world();
    let s = store(&w);
    let script = w.project.join("run.sh");
    write(&script, "#!/bin/sh\n");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let link = w.project.join("link");
    std::os::unix::fs::symlink("run.sh", &link).unwrap();
    let b = s.begin("s", 1, "Bash", Scope::Tree, 1).unwrap();
    fs::remove_file(&script).unwrap();
    fs::remove_file(&link).unwrap();
    s.finish(b, 2).unwrap();
    let report = s.rewind("s", 1, FORCE_NO, true, 3).unwrap();
    assert_eq!(report.restored, vec!["link", "run.sh"]);
    assert_eq!(
        fs::metadata(&script).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(fs::read_link(&link).unwrap(), PathBuf::from("run.sh"));
}

#[test]
fn retention_prunes_old_sessions_and_their_objects_and_keeps_the_newest() {
    let w = world();
    let s = store(&w);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let day = 24 * 60 * 60 * 1000;
    let f = w.project.join("old.txt");
    let b = s
        .begin(
            "old",
            1,
            "Write",
            Scope::Files(vec![f.clone()]),
            now_ms - 40 * day,
        )
        .unwrap();
    write(&f, "old agent version\n");
    s.finish(b, now_ms - 40 * day).unwrap();
    let g = w.project.join("new.txt");
    let b = s
        .begin("new", 1, "Write", Scope::Files(vec![g.clone()]), now_ms)
        .unwrap();
    write(&g, "new agent version\n");
    s.finish(b, now_ms).unwrap();
    // Objects just written are protected for an hour: age them.
    let old_id = objects::id_of(b"old agent version\n");
    let aged = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 60 * 60);
    fs::File::options()
        .write(true)
        .open(s.objects.path_of(&old_id))
        .unwrap()
        .set_modified(aged)
        .unwrap();

    let report = s.prune(now_ms).unwrap();
    assert_eq!(report.sessions, vec!["old"]);
    assert_eq!(report.objects, 1);
    assert!(!s.objects.path_of(&old_id).exists());
    assert!(
        s.objects
            .path_of(&objects::id_of(b"new agent version\n"))
            .exists()
    );
    assert!(s.turns("old").unwrap().is_empty());
    assert_eq!(s.turns("new").unwrap().len(), 1);

    // A size budget of one byte: only the newest session stays.
    let tiny = CheckpointStore::open(
        &w.home,
        &w.project,
        Settings {
            max_bytes: 1,
            ..Settings::default()
        },
    );
    let b = tiny
        .begin(
            "newest",
            1,
            "Write",
            Scope::Files(vec![f.clone()]),
            now_ms + 1,
        )
        .unwrap();
    s.finish(b, now_ms + 1).unwrap();
    let report = tiny.prune(now_ms + 2).unwrap();
    assert_eq!(report.sessions, vec!["new"]);
}

#[test]
fn the_project_key_is_stable_and_apart_per_path() {
    let home = Path::new("/h");
    let a = project_dir(home, Path::new("/work/app"));
    assert_eq!(a, project_dir(home, Path::new("/work/app")));
    assert_ne!(a, project_dir(home, Path::new("/other/app")));
    assert!(a.starts_with("/h/checkpoints"));
    assert!(a.file_name().unwrap().to_str().unwrap().starts_with("app-"));
}
