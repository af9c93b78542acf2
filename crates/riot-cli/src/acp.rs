//! `riot acp`: an Agent Client Protocol agent on stdio for editors
//! (docs/interfaces.md). The provider options of the command line are the
//! defaults of every session the client opens; the client picks each
//! session's directory. Stdout carries protocol messages only — logs go to
//! the log file (see `logs.rs`).

use std::sync::Arc;

use riot_acp::{AcpConfig, Shutdown, serve_stdio};
use riot_kernel::Kernel;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::SharedOptions;
use crate::cli::flag_layer;
use crate::world;

/// Runs `riot acp` until the client closes stdin, asks `_riot/shutdown`,
/// or SIGTERM arrives; returns the exit code.
pub async fn run(shared: &SharedOptions) -> i32 {
    let env = world::environment();
    let home = match world::riot_home(&env) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("riot acp: {e}");
            return e.exit_code();
        }
    };
    let caps = world::capabilities();
    let fs = Arc::clone(&caps.fs);
    let config = AcpConfig {
        kernel: Kernel::new(caps, home)
            .with_language_servers(Arc::new(riot_lsp::LspHost))
            .with_browsers(world::browsers()),
        fs,
        env,
        flags: flag_layer(shared),
        trust_project: shared.trust_project,
        max_turns: shared.max_turns,
        // Editors name every session's directory themselves.
        default_cwd: None,
    };
    // SIGTERM stops like `_riot/shutdown`: running turns are cancelled and
    // end with their transcripts paired.
    let stop = Shutdown::new();
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            let stop = stop.clone();
            tokio::spawn(async move {
                if terminate.recv().await.is_some() {
                    tracing::info!("riot acp: SIGTERM; stopping");
                    stop.trigger();
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "riot acp: cannot handle SIGTERM"),
    }
    tracing::info!("riot acp: serving on stdio");
    match serve_stdio(config, stop).await {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!(error = %e, "riot acp: the connection failed");
            eprintln!("riot acp: {e}");
            1
        }
    }
}
