//! Bare `riot`: the terminal UI (riot-tui) on a session opened the way
//! `riot exec` opens one, with a gate that asks the person. A PROMPT
//! argument is sent first; `--continue` / `--resume ID` open a saved
//! session with its history shown. Without a terminal on stdin and stdout
//! it refuses with a hint to use `riot exec`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use riot_kernel::{Kernel, OpenOptions, ResumeFrom};
use riot_protocol::SessionId;
use riot_tools::tools::read_image;
use riot_tui::{Host, McpSummary, PastedImage, RunOptions, Theme};

use crate::cli::flag_layer;
use crate::cli::{ExecOptions, SharedOptions};
use riot_kernel::error::EXIT_USAGE;

/// What `riot` says when it has no terminal to draw on.
pub const NO_TERMINAL: &str = "riot: the terminal UI needs a terminal on stdin and stdout; to run a task without one, use `riot exec \"PROMPT\"` (or `riot -p`)";

/// The project's files and MCP servers, and image files pasted as
/// paths, for the UI.
struct Project {
    kernel: Kernel,
    cwd: PathBuf,
    /// The person's home, for a pasted `~/…` path.
    home: Option<PathBuf>,
}

/// A pasted path as a file: `~/…` under `home`, a relative one under the
/// project `cwd`.
fn pasted_path(path: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => cwd.join(path),
    }
}

#[async_trait::async_trait]
impl Host for Project {
    async fn files(&self, query: &str, limit: usize) -> Vec<String> {
        self.kernel
            .project_files(&self.cwd, query, limit)
            .await
            .unwrap_or_default()
    }

    /// Reads the file through the session's file system and prepares it
    /// as Read prepares an image (decoded to check it, downscaled to the
    /// model's limit, an animated GIF's first frame).
    async fn image(&self, path: &str) -> PastedImage {
        let file = pasted_path(path, &self.cwd, self.home.as_deref());
        let fs = &self.kernel.capabilities().fs;
        let Ok(meta) = fs.metadata(&file).await else {
            return PastedImage::NotAFile;
        };
        if meta.kind != riot_protocol::FileKind::File {
            return PastedImage::NotAFile;
        }
        let Some(media_type) = read_image::image_type(path) else {
            return PastedImage::NotAFile;
        };
        if meta.len > read_image::MAX_FILE_BYTES {
            return PastedImage::Refused(format!(
                "is {} MB; images over {} MB are not read",
                meta.len / (1024 * 1024),
                read_image::MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        let bytes = match fs.read(&file).await {
            Ok(b) => b,
            Err(e) => return PastedImage::Refused(format!("could not be read ({e})")),
        };
        let limits = read_image::ImageLimits::default();
        let prepared =
            tokio::task::spawn_blocking(move || read_image::prepare(&bytes, media_type, limits))
                .await;
        match prepared {
            Ok(Ok(p)) => PastedImage::Image(p.source()),
            Ok(Err(reason)) => PastedImage::Refused(reason.to_string()),
            Err(_) => PastedImage::Refused("could not be decoded".to_owned()),
        }
    }

    fn mcp(&self) -> McpSummary {
        let mut summary = McpSummary::default();
        for server in self.kernel.mcp_servers() {
            if server.project != self.cwd {
                continue;
            }
            match server.status {
                riot_mcp::ServerStatus::Connecting => summary.starting += 1,
                riot_mcp::ServerStatus::Ready { .. } => summary.ready += 1,
                riot_mcp::ServerStatus::Failed { .. } => summary.failed += 1,
                riot_mcp::ServerStatus::Disabled => {}
            }
        }
        summary
    }
}

/// The print-mode options that bare `riot` takes too: `--continue` and
/// `--resume` open a saved session in the UI, `--worktree` runs it in a
/// worktree. What is left belongs to
/// print mode alone.
pub fn print_only(options: &ExecOptions) -> ExecOptions {
    ExecOptions {
        resume: None,
        r#continue: false,
        worktree: None,
        ..options.clone()
    }
}

/// `riot --resume` with no id: the sessions of this directory, newest
/// first, to choose from. `Ok(None)`: none there (said on stderr) or the
/// person left the list; `Err`: the exit code of a failure.
fn choose_session(
    kernel: &Kernel,
    cwd: &std::path::Path,
    theme: Theme,
) -> Result<Option<SessionId>, i32> {
    let sessions = match kernel.store().list() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("riot: could not list the sessions: {e}");
            return Err(1);
        }
    };
    let sessions: Vec<_> = sessions
        .into_iter()
        .filter(|s| s.parent.is_none() && s.cwd == cwd)
        .collect();
    if sessions.is_empty() {
        eprintln!(
            "riot: no earlier session in {}; run `riot` to start one",
            cwd.display()
        );
        return Ok(None);
    }
    let choices = sessions
        .iter()
        .map(|s| riot_tui::picker::Choice {
            title: if s.title.is_empty() {
                "(untitled)".to_owned()
            } else {
                s.title.clone()
            },
            when: crate::inspect::utc_minute(s.updated_ms),
            messages: s.messages,
        })
        .collect();
    match riot_tui::picker::pick(choices, theme) {
        Ok(chosen) => Ok(chosen.map(|i| sessions[i].id.clone())),
        Err(e) => {
            eprintln!("riot: the session list failed: {e}");
            Err(1)
        }
    }
}

/// Runs the terminal UI; returns the exit code.
pub async fn run(shared: &SharedOptions, options: &ExecOptions, prompt: Option<String>) -> i32 {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("{NO_TERMINAL}");
        return EXIT_USAGE;
    }
    let project = match crate::opening::project(shared) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("riot: {e}");
            return EXIT_USAGE;
        }
    };
    let theme = Theme::from_no_color(project.env.get("NO_COLOR").map(String::as_str));
    let resume = match (&options.resume, options.r#continue) {
        (Some(id), _) if id.is_empty() => {
            match choose_session(&project.kernel, &project.cwd, theme) {
                Ok(Some(id)) => Some(ResumeFrom::Id(id)),
                Ok(None) => return 0,
                Err(code) => return code,
            }
        }
        (Some(id), _) => Some(ResumeFrom::Id(SessionId::new(id.clone()))),
        (None, true) => Some(ResumeFrom::Latest),
        (None, false) => None,
    };
    let (cwd, worktree) =
        match crate::opening::workplace(&project, options.worktree.as_deref(), resume.as_ref())
            .await
        {
            Ok(w) => w,
            Err(code) => return code,
        };
    let crate::opening::Project { env, kernel, .. } = project;
    let show_history = resume.is_some();
    // How the UI gets the person's attention (`notifications`); a settings
    // problem is reported when the session opens, below.
    let notifications = kernel
        .load_config(&cwd, &env, &flag_layer(shared), shared.trust_project)
        .await
        .map(|loaded| loaded.config.notifications.settings)
        .unwrap_or_default();
    let open = OpenOptions {
        cwd: cwd.clone(),
        env: env.clone(),
        flags: flag_layer(shared),
        trust_project: shared.trust_project,
        max_turns: shared.max_turns,
        resume,
        asker: riot_kernel::Asker::Person,
        mcp_servers: Vec::new(),
    };
    let handle = match crate::opening::start(&kernel, open, worktree.as_ref(), "riot").await {
        Ok(h) => h,
        Err(code) => return code,
    };
    let id = handle.id().to_string();
    // A resumed session's title as listed (a rename included), for the
    // terminal's title.
    let title = if show_history {
        kernel.store().list().ok().and_then(|sessions| {
            sessions
                .into_iter()
                .find(|s| s.id == *handle.id())
                .map(|s| s.title)
        })
    } else {
        None
    };
    let host = Arc::new(Project {
        kernel: kernel.clone(),
        cwd,
        home: riot_kernel::world::user_home(&env),
    });
    let options = RunOptions {
        theme,
        prompt,
        show_history,
        context_window: Some(handle.status().context_window),
        notifications,
        title,
    };
    let code = match riot_tui::run(handle, host, options).await {
        Ok(summary) => {
            if summary.messages > 0 {
                let flag = worktree
                    .as_ref()
                    .map(|w| format!("--worktree {} ", w.name))
                    .unwrap_or_default();
                println!("Session {id} saved. Resume it with: riot {flag}--resume {id}");
            }
            0
        }
        Err(e) => {
            eprintln!("riot: the terminal UI failed: {e}");
            1
        }
    };
    if let Some(w) = &worktree {
        crate::opening::leave(&kernel, w).await;
    }
    code
}
