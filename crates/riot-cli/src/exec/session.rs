//! Opening the run's session: in the project or its worktree, resumed
//! when asked.

use std::collections::BTreeMap;
use std::path::PathBuf;

use riot_config::FlagLayer;
use riot_kernel::{Kernel, OpenOptions, ResumeFrom, SessionHandle};
use riot_protocol::SessionId;
use riot_worktree::Worktree;

use crate::cli::{ExecOptions, SharedOptions};

use super::background::background_wait;
use super::{DEFAULT_MAX_TURNS, usage};

/// The run's session and what it was opened with.
pub(super) struct Opened {
    pub(super) kernel: Kernel,
    pub(super) env: BTreeMap<String, String>,
    /// Where the session works: the project, or its worktree.
    pub(super) cwd: PathBuf,
    pub(super) worktree: Option<Worktree>,
    pub(super) session: SessionHandle,
    /// How long a prompt's run waits for background agents after its turn.
    pub(super) background_wait_ms: Option<u64>,
    pub(super) max_turns: u32,
}

/// Opens the run's session in the project (or its worktree), resumed when
/// asked, and says its notices on stderr. `Err` is the exit code, said on
/// stderr.
pub(super) async fn open_session(
    shared: &SharedOptions,
    options: &ExecOptions,
    flags: &FlagLayer,
) -> Result<Opened, i32> {
    let project = crate::opening::project(shared).map_err(usage)?;
    // How long a prompt's run waits for background agents after its turn.
    let background_wait_ms = background_wait(&project.env).map_err(usage)?;
    let resume = resume_from(options).map_err(usage)?;
    // `--worktree`, or a resumed session's own: a checkout of its own.
    let (cwd, worktree) =
        crate::opening::workplace(&project, options.worktree.as_deref(), resume.as_ref()).await?;
    let crate::opening::Project { env, kernel, .. } = project;
    let max_turns = shared.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
    let open = OpenOptions {
        cwd: cwd.clone(),
        env: env.clone(),
        flags: flags.clone(),
        trust_project: shared.trust_project,
        max_turns: Some(max_turns),
        resume,
        asker: riot_kernel::Asker::Nobody,
        mcp_servers: Vec::new(),
    };
    let session = crate::opening::start(&kernel, open, worktree.as_ref(), "riot exec").await?;
    for notice in session.notices() {
        eprintln!("riot: {notice}");
    }
    Ok(Opened {
        kernel,
        env,
        cwd,
        worktree,
        session,
        background_wait_ms,
        max_turns,
    })
}

/// The session `--resume ID` or `--continue` asks for; `Err` is a usage
/// error's line.
fn resume_from(options: &ExecOptions) -> Result<Option<ResumeFrom>, &'static str> {
    match (&options.resume, options.r#continue) {
        (Some(id), _) if id.is_empty() => Err(
            "--resume needs a session id here (`riot sessions list` shows them); only the terminal UI, bare `riot --resume`, lets you choose one",
        ),
        (Some(id), _) => Ok(Some(ResumeFrom::Id(SessionId::new(id.clone())))),
        (None, true) => Ok(Some(ResumeFrom::Latest)),
        (None, false) => Ok(None),
    }
}
