#![allow(clippy::disallowed_methods)] // the sandbox: looks at which protected paths exist

//! The bubblewrap command line for a [`SandboxPolicy`].

use std::path::{Path, PathBuf};

use riot_protocol::SandboxPolicy;

/// Where the private temporary directory appears inside the sandbox.
pub const SANDBOX_TMP: &str = "/tmp";

/// bubblewrap's arguments (everything before the helper): the root
/// read-only, `/dev` and `/proc` of its own, the private temporary
/// directory on `/tmp`, the writable paths bound writable, `.git` bound
/// on itself (so it cannot be renamed away from its read-only parts), the
/// protected paths that exist bound read-only, the hidden paths covered,
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
pub fn bwrap_args(policy: &SandboxPolicy, private_tmp: &Path, cwd: &Path) -> Vec<String> {
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
    let git = policy.project.join(".git");
    if git.is_dir() {
        args.extend(["--bind".into(), s(&git), s(&git)]);
    }
    for path in &policy.read_only {
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
        let args = bwrap_args(&policy, &tmp, &project);
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

    #[test]
    fn the_network_namespace_stays_when_the_network_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = SandboxPolicy::for_project(dir.path(), None);
        policy.network = true;
        let args = bwrap_args(&policy, dir.path(), dir.path());
        assert!(!args.iter().any(|a| a == "--unshare-net"), "{args:?}");
    }
}
