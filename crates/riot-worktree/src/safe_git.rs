//! The git Riot runs trusts nothing a project or a worktree holds:
//! [`safe_config`] is what each of its git commands carries first.

use std::path::Path;

use riot_protocol::{CaptureLimit, ProcessRunner, ProcessSpec};
use tokio_util::sync::CancellationToken;

/// How long one git command may take.
pub(crate) const GIT_TIMEOUT_MS: u64 = 60_000;
/// What every git command Riot runs carries first: a repository's or a
/// worktree's configuration cannot make it run a program (an fsmonitor
/// hook, git hooks, an external diff) or trust a cache the agent could
/// have written. Filter drivers and textconv programs are named per
/// repository, so [`safe_config`] adds those found.
pub const SAFE_CONFIG: [&str; 8] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "diff.external=",
];

/// The keys of the programs git runs through `.gitattributes`: filter
/// drivers (`clean`, `smudge`, `process`) and diff drivers (`textconv`,
/// `command`).
const DRIVER_KEYS: &str = r"^(filter|diff)\..+\.(clean|smudge|process|textconv|command)$";

/// [`SAFE_CONFIG`] and, for every filter or diff driver the configuration
/// in `cwd` names, its programs set to nothing (an empty command is no
/// command to git) and its filter not required: Riot's own git runs no
/// program the project could have chosen. Reading the configuration runs
/// nothing. (A checkout Riot makes — a worktree — so gets files as they
/// are stored: a Git LFS file is its pointer until `git lfs pull`.)
pub async fn safe_config(
    proc: &dyn ProcessRunner,
    cwd: &Path,
    git_args: &[String],
    scrub: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = SAFE_CONFIG.iter().map(|a| (*a).to_owned()).collect();
    let spec = ProcessSpec {
        program: "git".into(),
        args: args
            .iter()
            .cloned()
            .chain(git_args.iter().cloned())
            .chain(["config", "--name-only", "--get-regexp", DRIVER_KEYS].map(str::to_owned))
            .collect(),
        cwd: cwd.to_path_buf(),
        env_set: vec![("GIT_TERMINAL_PROMPT".into(), "0".into())],
        env_remove: scrub.to_vec(),
        timeout_ms: Some(GIT_TIMEOUT_MS),
        capture: CaptureLimit {
            head_bytes: 64 * 1024,
            tail_bytes: 0,
        },
        stdin: None,
        undoable_only: false,
    };
    let Ok(out) = proc.run(spec, CancellationToken::new(), None).await else {
        return args;
    };
    let mut filters = Vec::new();
    for key in out.stdout.head.lines().map(str::trim) {
        args.extend(["-c".to_owned(), format!("{key}=")]);
        if let Some(name) = key
            .strip_prefix("filter.")
            .and_then(|rest| rest.rsplit_once('.'))
            .map(|(name, _)| name.to_owned())
            && !filters.contains(&name)
        {
            args.extend(["-c".to_owned(), format!("filter.{name}.required=false")]);
            filters.push(name);
        }
    }
    args
}
