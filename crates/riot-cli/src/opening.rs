//! How `riot exec` and the terminal UI open their session: one path from
//! the command line to a started session — the environment, Riot's home,
//! the project directory, the kernel with the real world's language
//! servers and browsers, the worktree the session works in, and the start
//! itself — so the two faces cannot drift apart. What differs stays with
//! each face: which gate answers questions, and how `--resume` without an
//! id is read (the terminal UI's picker; exec refuses it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use riot_kernel::worktree::Worktree;
use riot_kernel::{Kernel, OpenOptions, ResumeFrom, SessionHandle};

use crate::cli::SharedOptions;
use crate::world;

/// The project a session opens in, and the kernel that opens it.
pub struct Project {
    pub env: BTreeMap<String, String>,
    /// The project directory (`--cwd`, else the current one), canonical.
    pub cwd: PathBuf,
    pub kernel: Kernel,
}

/// The environment, Riot's home, the project directory and a kernel
/// for a face's session. `Err`: what is wrong, for a usage error.
pub fn project(shared: &SharedOptions) -> Result<Project, String> {
    let env = world::environment();
    let home = world::riot_home(&env)?;
    let cwd = world::project_dir(shared.cwd.as_ref())?;
    let kernel = Kernel::new(world::capabilities(), home)
        .with_language_servers(Arc::new(riot_lsp::LspHost))
        .with_browsers(world::browsers());
    Ok(Project { env, cwd, kernel })
}

/// Where the session works: the checkout of `--worktree NAME` (made, or
/// reopened; an empty name has one picked), else the worktree a resumed
/// session worked in, else the project itself. It says which on stderr;
/// `Err` is the exit code.
pub async fn workplace(
    project: &Project,
    worktree: Option<&str>,
    resume: Option<&ResumeFrom>,
) -> Result<(PathBuf, Option<Worktree>), i32> {
    let kernel = &project.kernel;
    let worktree = match worktree {
        Some(name) => Some(crate::worktree_cmd::enter(kernel, &project.cwd, name).await?),
        None => match resume {
            Some(ResumeFrom::Id(id)) => crate::worktree_cmd::resumed(kernel, id).await?,
            _ => None,
        },
    };
    let cwd = worktree
        .as_ref()
        .map_or_else(|| project.cwd.clone(), |w| w.cwd.clone());
    Ok((cwd, worktree))
}

/// Starts the session. When it cannot start, says why after `prefix`
/// (`riot exec`, `riot`), leaves the worktree it would have worked in, and
/// gives the exit code.
pub async fn start(
    kernel: &Kernel,
    open: OpenOptions,
    worktree: Option<&Worktree>,
    prefix: &str,
) -> Result<SessionHandle, i32> {
    match kernel.start(open).await {
        Ok(handle) => Ok(handle),
        Err(e) => {
            eprintln!("{prefix}: {e}");
            if let Some(w) = worktree {
                crate::worktree_cmd::leave(kernel, w).await;
            }
            Err(e.exit_code())
        }
    }
}
