#![allow(clippy::disallowed_methods)] // the sandbox: looks at which protected paths exist

//! The bubblewrap command line for a [`SandboxPolicy`].

use std::path::{Path, PathBuf};

use riot_protocol::SandboxPolicy;

/// Where the private temporary directory appears inside the sandbox.
pub const SANDBOX_TMP: &str = "/tmp";

/// Where the helper (the `riot` binary) appears inside the sandbox, bound
/// read-only: the private temporary directory covers the real `/tmp`, so
/// a `riot` that lives there would not be found at its own path.
pub const HELPER_INSIDE: &str = "/tmp/.riot-sandbox-helper";

/// What a command may do to the project's git repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitAccess {
    /// Commit: `.git` writable but for its protected parts (a command the
    /// person allowed).
    Commit,
    /// Read only: the whole `.git`, and a worktree's share of its main
    /// repository, stay as they are (a command Riot allowed on its own,
    /// whose changes a rewind must be able to undo).
    ReadOnly,
}

/// bubblewrap's whole command line up to the helper's options: its
/// arguments ([`bwrap_args`]), the helper bound at [`HELPER_INSIDE`], then
/// `--` and that path.
pub fn bwrap_command(
    policy: &SandboxPolicy,
    private_tmp: &Path,
    cwd: &Path,
    helper: &Path,
    git: GitAccess,
) -> Vec<String> {
    let mut args = bwrap_args(policy, private_tmp, cwd, git);
    args.extend([
        "--ro-bind".into(),
        helper.to_string_lossy().into_owned(),
        HELPER_INSIDE.into(),
        "--".into(),
        HELPER_INSIDE.into(),
    ]);
    args
}

/// bubblewrap's arguments (everything before the helper): the root
/// read-only, `/dev` and `/proc` of its own, the private temporary
/// directory on `/tmp`, the writable paths bound writable, the git
/// directories as [`git_layout`] finds them (bound on themselves, so they
/// cannot be renamed away from their read-only parts), the protected
/// paths that exist bound read-only, the hidden paths covered,
/// new PID (and, without network, network) namespaces, and death with the
/// parent.
///
/// No `--new-session`: bubblewrap would call `setsid` before forking its
/// PID 1, taking PID 1 out of the process group Riot kills. PID 1 sets its
/// own death signal only after forking the command, so a riot killed
/// while bubblewrap was still setting up left PID 1 — and the command —
/// running with nobody to kill them. Kept in the group, PID 1 is killed
/// with it (by the group guard or the watchdog), and the whole namespace
/// with it; the helper starts the new session for the command instead
/// ([`super::helper::HelperOptions::new_session`]).
pub fn bwrap_args(
    policy: &SandboxPolicy,
    private_tmp: &Path,
    cwd: &Path,
    git: GitAccess,
) -> Vec<String> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut args: Vec<String> = [
        "--die-with-parent",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    .map(str::to_owned)
    .to_vec();
    if !policy.network {
        args.push("--unshare-net".into());
    }
    args.extend(["--bind".into(), s(private_tmp), SANDBOX_TMP.into()]);
    for path in policy.writable_paths() {
        if path.exists() {
            args.extend(["--bind".into(), s(&path), s(&path)]);
        }
    }
    let layout = git_layout(&policy.project);
    match git {
        GitAccess::Commit => {
            for path in &layout.bound {
                args.extend(["--bind".into(), s(path), s(path)]);
            }
        }
        GitAccess::ReadOnly => {
            // A main checkout's `.git` read-only on itself; a worktree's
            // share of its main repository is not bound at all, so the
            // root's read-only mount holds it.
            let dot_git = policy.project.join(".git");
            if dot_git.is_dir() {
                args.extend(["--ro-bind".into(), s(&dot_git), s(&dot_git)]);
            }
        }
    }
    for path in policy.read_only.iter().chain(&layout.read_only) {
        // A path that does not exist cannot be mounted over without
        // creating it on the person's disk.
        if path.symlink_metadata().is_ok() {
            args.extend(["--ro-bind".into(), s(path), s(path)]);
        }
    }
    for path in &policy.hidden {
        match path.symlink_metadata() {
            Ok(meta) if meta.is_dir() => args.extend(["--tmpfs".into(), s(path)]),
            Ok(_) => args.extend(["--ro-bind".into(), "/dev/null".into(), s(path)]),
            Err(_) => {}
        }
    }
    args.extend(["--chdir".into(), s(cwd)]);
    args
}

/// What the sandbox does with a project's git directories, found on disk
/// when a command starts ([`git_layout`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitLayout {
    /// Bound writable on themselves, so that they cannot be renamed away
    /// from the read-only files below them (a mount point cannot be
    /// moved); those outside the project are also what a worktree's
    /// commands may write there.
    pub bound: Vec<PathBuf>,
    /// Kept read-only: the files git follows to find its repository and
    /// configuration, which Riot's own git calls would later trust.
    pub read_only: Vec<PathBuf>,
}

impl GitLayout {
    /// The bound paths outside `project`: a worktree's share of its main
    /// repository, which Landlock must grant too.
    pub fn writable_outside(&self, project: &Path) -> Vec<PathBuf> {
        self.bound
            .iter()
            .filter(|p| !p.starts_with(project))
            .cloned()
            .collect()
    }
}

/// The pointer files of a worktree's directory in the main repository
/// (`.git/worktrees/NAME/`): where its repository and checkout are, and
/// its own configuration.
const WORKTREE_POINTERS: [&str; 3] = ["commondir", "gitdir", "config.worktree"];

/// The git directories of `project`, as they are on disk now.
///
/// - A main checkout (`.git` a directory): `.git` writable, so `git add`
///   and `git commit` work, but bound on itself; `.git/worktrees` and each
///   `.git/worktrees/NAME` bound on themselves and their pointer files
///   read-only (the protected list keeps `hooks`, `config` and
///   `config.worktree` read-only).
/// - A worktree (`.git` a file, `gitdir: MAIN/.git/worktrees/NAME`): the
///   `.git` file read-only, and — when the main repository really lists
///   this checkout as its worktree NAME — what `git commit` writes there
///   made writable: the shared `objects`, `refs`, `logs` and
///   `packed-refs`, and `worktrees/NAME` but for its pointer files. The
///   main repository's `config` and `hooks` stay read-only.
pub fn git_layout(project: &Path) -> GitLayout {
    let mut layout = GitLayout::default();
    let git = project.join(".git");
    let Ok(meta) = git.metadata() else {
        return layout;
    };
    if meta.is_dir() {
        layout.bound.push(git.clone());
        let worktrees = git.join("worktrees");
        if worktrees.is_dir() {
            layout.bound.push(worktrees.clone());
            for dir in subdirectories(&worktrees) {
                layout
                    .read_only
                    .extend(WORKTREE_POINTERS.iter().map(|f| dir.join(f)));
                layout.bound.push(dir);
            }
        }
    } else {
        layout.read_only.push(git.clone());
        if let Some((common, own)) = worktree_dirs(&git) {
            layout.bound.extend(
                ["objects", "refs", "logs", "packed-refs"]
                    .iter()
                    .map(|p| common.join(p))
                    .filter(|p| p.symlink_metadata().is_ok()),
            );
            layout
                .read_only
                .extend(WORKTREE_POINTERS.iter().map(|f| own.join(f)));
            layout.bound.push(own);
        }
    }
    layout
}

/// The directories directly in `dir`, sorted (symbolic links left out).
fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// A worktree's main git directory and its own directory there, from its
/// `.git` file — only when they are what `git worktree add` makes: the
/// file names `COMMON/worktrees/NAME`, whose `commondir` leads back to
/// `COMMON` and whose `gitdir` names this very `.git` file. Anything else
/// (a hand-made or rewritten `.git` file) widens nothing.
fn worktree_dirs(git_file: &Path) -> Option<(PathBuf, PathBuf)> {
    let text = std::fs::read_to_string(git_file).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    let project = git_file.parent()?;
    let own = project.join(target).canonicalize().ok()?;
    if own.parent()?.file_name()? != "worktrees" {
        return None;
    }
    let common = own.parent()?.parent()?.to_path_buf();
    let commondir = std::fs::read_to_string(own.join("commondir")).ok()?;
    if own.join(commondir.trim()).canonicalize().ok()? != common {
        return None;
    }
    let back = std::fs::read_to_string(own.join("gitdir")).ok()?;
    let back = Path::new(back.trim()).canonicalize().ok()?;
    (back == git_file.canonicalize().ok()? && common.join("objects").is_dir())
        .then_some((common, own))
}

/// `bwrap` on `path_var` (the `PATH` value), if any.
pub fn find_bwrap(path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .map(|dir| dir.join("bwrap"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_binds_writable_then_protects() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
        std::fs::write(project.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(project.join("secrets")).unwrap();
        std::fs::write(project.join("token"), "").unwrap();
        let mut policy = SandboxPolicy::for_project(&project, None);
        policy.hidden = vec![
            project.join("secrets"),
            project.join("token"),
            project.join("gone"),
        ];
        let tmp = dir.path().join("tmp");
        let args = bwrap_args(&policy, &tmp, &project, GitAccess::Commit);
        let p = |rel: &str| project.join(rel).to_string_lossy().into_owned();
        let expected: Vec<String> = [
            "--die-with-parent",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-net",
            "--bind",
            &tmp.to_string_lossy(),
            "/tmp",
            "--bind",
            &p(""),
            &p(""),
            "--bind",
            &p(".git"),
            &p(".git"),
            "--ro-bind",
            &p(".git/hooks"),
            &p(".git/hooks"),
            "--ro-bind",
            &p(".git/config"),
            &p(".git/config"),
            "--tmpfs",
            &p("secrets"),
            "--ro-bind",
            "/dev/null",
            &p("token"),
            "--chdir",
            &p(""),
        ]
        .map(str::to_owned)
        .to_vec();
        // `p("")` ends in a slash; compare what bwrap would see.
        let norm = |v: Vec<String>| -> Vec<String> {
            v.into_iter()
                .map(|a| a.trim_end_matches('/').to_owned())
                .collect()
        };
        assert_eq!(norm(args), norm(expected));
    }

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// A main checkout with a worktree `wt` (made by git), and the worktree.
    fn repo_with_worktree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let main = base.join("main");
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q"]);
        git(
            &main,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "first",
            ],
        );
        git(&main, &["worktree", "add", "-q", "-b", "wt", "../wt"]);
        (dir, main, base.join("wt"))
    }

    #[test]
    fn a_main_checkouts_worktree_pointers_are_read_only() {
        let (_dir, main, _wt) = repo_with_worktree();
        std::fs::write(main.join(".git/config.worktree"), "").unwrap();
        let layout = git_layout(&main);
        let g = |rel: &str| main.join(".git").join(rel);
        assert_eq!(
            layout.bound,
            [main.join(".git"), g("worktrees"), g("worktrees/wt")]
        );
        assert_eq!(
            layout.read_only,
            [
                g("worktrees/wt/commondir"),
                g("worktrees/wt/gitdir"),
                g("worktrees/wt/config.worktree")
            ]
        );
        assert_eq!(layout.writable_outside(&main), Vec::<PathBuf>::new());
        let args = bwrap_args(
            &SandboxPolicy::for_project(&main, None),
            &main,
            &main,
            GitAccess::Commit,
        );
        let after = |flag: &str, path: &Path| {
            args.windows(3)
                .any(|w| w[0] == flag && w[1] == w[2] && Path::new(&w[1]) == path)
        };
        for ro in [
            "worktrees/wt/commondir",
            "worktrees/wt/gitdir",
            "config.worktree",
            "config",
            "hooks",
        ] {
            assert!(after("--ro-bind", &g(ro)), "{ro}: {args:?}");
        }
        assert!(after("--bind", &g("worktrees/wt")), "{args:?}");
        // `config.worktree` does not exist in the worktree's directory:
        // nothing is mounted there.
        assert!(
            !args
                .iter()
                .any(|a| Path::new(a) == g("worktrees/wt/config.worktree"))
        );
    }

    #[test]
    fn a_worktrees_git_file_is_read_only_and_its_share_of_the_main_repository_writable() {
        let (_dir, main, wt) = repo_with_worktree();
        let layout = git_layout(&wt);
        let g = |rel: &str| main.join(".git").join(rel);
        assert_eq!(
            layout.bound,
            [g("objects"), g("refs"), g("logs"), g("worktrees/wt")],
            "no packed-refs yet"
        );
        assert_eq!(
            layout.read_only,
            [
                wt.join(".git"),
                g("worktrees/wt/commondir"),
                g("worktrees/wt/gitdir"),
                g("worktrees/wt/config.worktree")
            ]
        );
        assert_eq!(layout.writable_outside(&wt), layout.bound);
        let args = bwrap_args(
            &SandboxPolicy::for_project(&wt, None),
            &wt,
            &wt,
            GitAccess::Commit,
        );
        let ro = args
            .iter()
            .position(|a| Path::new(a) == wt.join(".git"))
            .unwrap();
        assert_eq!(args[ro - 1], "--ro-bind", "{args:?}");
        assert!(
            !args
                .iter()
                .any(|a| Path::new(a) == g("config") || Path::new(a) == g("hooks"))
        );
    }

    #[test]
    fn a_git_file_that_git_did_not_make_widens_nothing() {
        let (_dir, main, wt) = repo_with_worktree();
        // Pointing at the main repository itself, or at a worktree entry
        // that names another checkout.
        let elsewhere = main.parent().unwrap().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        for target in [main.join(".git"), main.join(".git/worktrees/wt")] {
            std::fs::write(
                elsewhere.join(".git"),
                format!("gitdir: {}\n", target.display()),
            )
            .unwrap();
            let layout = git_layout(&elsewhere);
            assert_eq!(layout.bound, Vec::<PathBuf>::new(), "{target:?}");
            assert_eq!(layout.read_only, [elsewhere.join(".git")]);
        }
        // The real worktree still gets its share.
        assert_eq!(git_layout(&wt).bound.len(), 4);
    }

    #[test]
    fn a_command_riot_allowed_gets_git_read_only_and_no_share_of_a_main_repository() {
        let (_dir, main, wt) = repo_with_worktree();
        let pairs = |args: &[String], flag: &str| -> Vec<PathBuf> {
            args.windows(3)
                .filter(|w| w[0] == flag && w[1] == w[2])
                .map(|w| PathBuf::from(&w[1]))
                .collect()
        };
        let args = bwrap_args(
            &SandboxPolicy::for_project(&main, None),
            &main,
            &main,
            GitAccess::ReadOnly,
        );
        let git = main.join(".git");
        assert!(pairs(&args, "--ro-bind").contains(&git), "{args:?}");
        assert!(
            !pairs(&args, "--bind").iter().any(|p| p.starts_with(&git)),
            "nothing in .git is writable: {args:?}"
        );
        // In the worktree the main repository's objects, refs and logs are
        // not bound writable: the root's read-only mount holds them.
        let args = bwrap_args(
            &SandboxPolicy::for_project(&wt, None),
            &wt,
            &wt,
            GitAccess::ReadOnly,
        );
        assert!(
            !pairs(&args, "--bind").iter().any(|p| p.starts_with(&git)),
            "{args:?}"
        );
        assert!(pairs(&args, "--ro-bind").contains(&wt.join(".git")));
    }

    #[test]
    fn the_helper_is_bound_where_the_private_tmp_cannot_hide_it() {
        let dir = tempfile::tempdir().unwrap();
        let policy = SandboxPolicy::for_project(dir.path(), None);
        let helper = Path::new("/tmp/somewhere/riot");
        let args = bwrap_command(&policy, dir.path(), dir.path(), helper, GitAccess::Commit);
        let tmp = args.iter().position(|a| a == SANDBOX_TMP).unwrap();
        let n = args.len();
        assert_eq!(
            args[n - 5..],
            [
                "--ro-bind",
                "/tmp/somewhere/riot",
                HELPER_INSIDE,
                "--",
                HELPER_INSIDE
            ]
        );
        assert!(tmp < n - 5, "bound after the private /tmp: {args:?}");
    }

    #[test]
    fn the_network_namespace_stays_when_the_network_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = SandboxPolicy::for_project(dir.path(), None);
        policy.network = true;
        let args = bwrap_args(&policy, dir.path(), dir.path(), GitAccess::Commit);
        assert!(!args.iter().any(|a| a == "--unshare-net"), "{args:?}");
    }
}
