//! How `riot exec` and the terminal UI open their session: one path from
//! the command line to a started session — the environment, Riot's home,
//! the project directory, the kernel with the real world's language
//! servers and browsers, the worktree the session works in, and the start
//! itself — so the two faces cannot drift apart. What differs stays with
//! each face: which gate answers questions, and how `--resume` without an
//! id is read (the terminal UI's picker; exec refuses it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_kernel::{Kernel, KernelError, OpenOptions, ResumeFrom, SessionHandle};
use riot_worktree::Worktree;

use crate::cli::SharedOptions;
use crate::out::errln;
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
pub fn project(shared: &SharedOptions) -> Result<Project, world::WorldError> {
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
        Some(name) => Some(enter(kernel, &project.cwd, name).await?),
        None => match resume {
            Some(ResumeFrom::Id(id)) => resumed(kernel, id).await?,
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
                leave(kernel, w).await;
            }
            Err(e.exit_code())
        }
    }
}

/// Makes (or reopens) the worktree `name` (empty: a name is picked) of
/// the project `cwd` is in and says so on stderr; `Err` is the exit code.
pub async fn enter(kernel: &Kernel, cwd: &Path, name: &str) -> Result<Worktree, i32> {
    let name = (!name.is_empty()).then_some(name);
    match kernel
        .worktrees()
        .create(cwd, name)
        .await
        .map_err(KernelError::from)
    {
        Ok(worktree) => {
            errln!(
                "riot: working in worktree {} at {} (branch {})",
                worktree.name,
                worktree.path.display(),
                worktree.branch
            );
            Ok(worktree)
        }
        Err(e) => {
            errln!("riot: {e}");
            Err(e.exit_code())
        }
    }
}

/// The worktree a resumed session (`--resume ID` without `--worktree`)
/// worked in, reopened so it goes on working there: `None` when it worked
/// in the project itself. A session whose worktree was removed is
/// refused (`Err` is the exit code) rather than run in the main checkout.
pub async fn resumed(
    kernel: &Kernel,
    id: &riot_protocol::SessionId,
) -> Result<Option<Worktree>, i32> {
    match kernel.session_worktree(id).await {
        Ok(Some(worktree)) => {
            errln!(
                "riot: working in worktree {} at {} (branch {}), where this session worked",
                worktree.name,
                worktree.path.display(),
                worktree.branch
            );
            Ok(Some(worktree))
        }
        Ok(None) => Ok(None),
        Err(e) => {
            errln!("riot: {e}");
            Err(e.exit_code())
        }
    }
}

/// At the session's end: removes the worktree if nothing changed in it,
/// else keeps it; says which on stderr.
pub async fn leave(kernel: &Kernel, worktree: &Worktree) {
    match kernel
        .worktrees()
        .finish(worktree)
        .await
        .map_err(KernelError::from)
    {
        Ok(end) => {
            errln!("riot: {}", end.describe(worktree));
        }
        Err(e) => errln!(
            "riot: worktree {} kept at {} (branch {}): {e}",
            worktree.name,
            worktree.path.display(),
            worktree.branch
        ),
    }
}
