//! # riot-lsp — language servers that tell the agent what an edit broke
//!
//! [`LspHost`] is the real [`LanguageServerHost`]: each session gets an
//! [`LspSession`], whose servers start lazily on the first edit of a file
//! they serve (the `lsp` settings' servers, and rust-analyzer,
//! pyright-langserver, typescript-language-server and gopls when found on
//! `PATH`), each in its own process group (riot-runtime's `PipedChild`).
//! After each edit the kernel calls [`LanguageServers::after_edit`]: the
//! file's new text goes to its server (`didOpen`, then `didChange` —
//! the one range that changed when the server takes incremental changes,
//! else the whole document — each followed by `didSave`) and the session waits, at most the configured `wait_ms`
//! in all, for the server to publish that file's diagnostics. After each
//! Bash call ([`LanguageServers::after_command`]) the open documents are
//! read again: a changed one is sent as an edit would be, a deleted one
//! is closed.
//!
//! A default server that exits before it is initialized counts as not
//! installed for the session (rustup's `rust-analyzer` proxy without the
//! component does that). Any other server that exits is restarted on a later edit after a doubling
//! backoff (1 s, 2 s, 4 s, … at most a minute); until then, and while it
//! does not answer, edits hear [`EditDiagnostics::NoAnswer`] and go on.
//! Servers stop when the session ends ([`LanguageServers::shutdown`], or
//! dropping the session, which kills every server's group).
//!
//! The JSON-RPC framing over stdio is [`framing`]; the message types are
//! the `lsp-types` crate's.

#![allow(clippy::disallowed_methods)] // the real clock and file system: this crate is a runtime

mod client;
pub mod framing;
pub mod servers;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use riot_protocol::{EditDiagnostics, LanguageServerHost, LanguageServers, LspSettings};

use crate::client::{Client, Gone, Life};
use crate::servers::{ServerSpec, extension_of, find_program, server_for};

/// The longest wait before a crashed server is started again.
pub const MAX_BACKOFF_MS: u64 = 60_000;

/// The wait before restarting a server that exited `failures` times in a
/// row: 1 s, doubling, at most [`MAX_BACKOFF_MS`].
pub fn backoff_ms(failures: u32) -> u64 {
    1_000u64
        .saturating_mul(1u64 << failures.saturating_sub(1).min(16))
        .min(MAX_BACKOFF_MS)
}

/// The real language servers: one [`LspSession`] per session.
#[derive(Debug, Clone, Copy, Default)]
pub struct LspHost;

impl LanguageServerHost for LspHost {
    fn session(
        &self,
        project: &Path,
        settings: &LspSettings,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    ) -> Arc<dyn LanguageServers> {
        Arc::new(LspSession::new(project, settings, env, env_remove))
    }
}

/// Why an edit's diagnostics did not come from a running server.
#[derive(Debug, thiserror::Error)]
enum Unanswered {
    /// The server is gone, or never became ready.
    #[error(transparent)]
    Gone(#[from] Gone),
    /// The edited path has no `file:` URI to send.
    #[error("the path cannot be named as a file URI")]
    NoUri,
}

#[derive(Debug)]
enum Slot {
    /// A default server whose program is not installed.
    Missing,
    Running {
        client: Arc<Client>,
        failures: u32,
    },
    /// Exited or could not start: started again at `retry_at`.
    Down {
        retry_at: Instant,
        failures: u32,
        detail: String,
    },
}

/// The language servers of one session.
#[derive(Debug)]
pub struct LspSession {
    project: PathBuf,
    specs: Vec<ServerSpec>,
    wait: Duration,
    env: Vec<(String, String)>,
    env_remove: Vec<String>,
    slots: tokio::sync::Mutex<HashMap<String, Slot>>,
    closed: std::sync::atomic::AtomicBool,
}

impl LspSession {
    /// Servers for a session in `project`; none starts until an edit.
    pub fn new(
        project: &Path,
        settings: &LspSettings,
        env: Vec<(String, String)>,
        env_remove: Vec<String>,
    ) -> Self {
        Self {
            project: project.to_path_buf(),
            specs: servers::servers(settings),
            wait: Duration::from_millis(settings.wait_ms()),
            env,
            env_remove,
            slots: tokio::sync::Mutex::new(HashMap::new()),
            closed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The process ids (= process-group ids) of the servers running now.
    pub async fn pids(&self) -> Vec<u32> {
        let slots = self.slots.lock().await;
        let mut pids: Vec<u32> = slots
            .values()
            .filter_map(|s| match s {
                Slot::Running { client, .. } => client.pid(),
                _ => None,
            })
            .collect();
        pids.sort_unstable();
        pids
    }

    fn path_var(&self) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PATH").ok())
    }

    fn start(&self, spec: &ServerSpec, failures: u32) -> Slot {
        let program = spec.command.first().cloned().unwrap_or_default();
        let Some(found) = find_program(&program, self.path_var().as_deref(), &self.project) else {
            if spec.default {
                return Slot::Missing;
            }
            let failures = failures + 1;
            return Slot::Down {
                retry_at: Instant::now() + Duration::from_millis(backoff_ms(failures)),
                failures,
                detail: format!("`{program}` was not found"),
            };
        };
        match Client::start(
            spec.name(),
            found,
            spec.command[1..].to_vec(),
            self.project.clone(),
            self.env.clone(),
            self.env_remove.clone(),
            crate::client::ServerConfig {
                initialization_options: spec.initialization_options.clone(),
                settings: spec.settings.clone(),
            },
        ) {
            Ok(client) => Slot::Running { client, failures },
            Err(why) => {
                let failures = failures + 1;
                Slot::Down {
                    retry_at: Instant::now() + Duration::from_millis(backoff_ms(failures)),
                    failures,
                    detail: format!("it could not start: {why}"),
                }
            }
        }
    }

    /// The running client for `spec`, starting or restarting it as due;
    /// `Err` with why there is none now (`None`: not installed).
    async fn client(&self, spec: &ServerSpec) -> Result<Arc<Client>, Option<String>> {
        let mut slots = self.slots.lock().await;
        let slot = slots
            .remove(&spec.language)
            .unwrap_or_else(|| self.start(spec, 0));
        let slot = match slot {
            Slot::Running { client, failures } => match client.life() {
                Life::Exited(gone) => {
                    // Ready once: this crash starts the count anew.
                    let failures = failures + 1;
                    Slot::Down {
                        retry_at: Instant::now() + Duration::from_millis(backoff_ms(failures)),
                        failures,
                        detail: gone.to_string(),
                    }
                }
                _ => Slot::Running { client, failures },
            },
            other => other,
        };
        let slot = match slot {
            Slot::Down {
                retry_at, failures, ..
            } if Instant::now() >= retry_at => self.start(spec, failures),
            other => other,
        };
        let answer = match &slot {
            Slot::Missing => Err(None),
            Slot::Running { client, .. } => Ok(Arc::clone(client)),
            Slot::Down {
                retry_at, detail, ..
            } => {
                let secs = retry_at
                    .saturating_duration_since(Instant::now())
                    .as_millis()
                    .div_ceil(1000);
                Err(Some(format!("{detail}; it is started again in {secs} s")))
            }
        };
        slots.insert(spec.language.clone(), slot);
        answer
    }

    /// After a successful start, the crash count starts over.
    async fn answered(&self, spec: &ServerSpec) {
        if let Some(Slot::Running { failures, .. }) =
            self.slots.lock().await.get_mut(&spec.language)
        {
            *failures = 0;
        }
    }
}

#[async_trait]
impl LanguageServers for LspSession {
    async fn after_edit(&self, path: &Path) -> EditDiagnostics {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return EditDiagnostics::NoServer;
        }
        let Some(spec) = server_for(&self.specs, path) else {
            return EditDiagnostics::NoServer;
        };
        let server = spec.name();
        let client = match self.client(spec).await {
            Ok(client) => client,
            Err(None) => return EditDiagnostics::NoServer,
            Err(Some(detail)) => return EditDiagnostics::NoAnswer { server, detail },
        };
        let Ok(text) = tokio::fs::read_to_string(path).await else {
            return EditDiagnostics::NoAnswer {
                server,
                detail: "the file could not be read back as text".into(),
            };
        };
        let language_id = spec.language_id(&extension_of(path).unwrap_or_default());
        let wait_ms = self.wait.as_millis();
        let exchange = async {
            client.ready().await?;
            let Some((version, after)) = client.sync(path, &language_id, text) else {
                return Err(Unanswered::NoUri);
            };
            Ok(client.diagnostics(path, version, after).await?)
        };
        match tokio::time::timeout(self.wait, exchange).await {
            Ok(Ok(diagnostics)) => {
                self.answered(spec).await;
                EditDiagnostics::Reported {
                    server,
                    diagnostics,
                }
            }
            Ok(Err(_)) if spec.default && !client.was_ready() => {
                // A default found on PATH that cannot even start (rustup's
                // rust-analyzer proxy without the component): not
                // installed, as far as this session is concerned.
                self.slots
                    .lock()
                    .await
                    .insert(spec.language.clone(), Slot::Missing);
                EditDiagnostics::NoServer
            }
            Ok(Err(why)) => EditDiagnostics::NoAnswer {
                server,
                detail: why.to_string(),
            },
            Err(_) => EditDiagnostics::NoAnswer {
                server,
                detail: format!("it did not report diagnostics within {wait_ms} ms"),
            },
        }
    }

    async fn after_command(&self) {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let clients: Vec<Arc<Client>> = self
            .slots
            .lock()
            .await
            .values()
            .filter_map(|s| match s {
                Slot::Running { client, .. } => Some(Arc::clone(client)),
                _ => None,
            })
            .collect();
        for client in clients {
            client.resync().await;
        }
    }

    async fn shutdown(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let slots: Vec<Slot> = self.slots.lock().await.drain().map(|(_, s)| s).collect();
        for slot in slots {
            if let Slot::Running { client, .. } = slot {
                client.stop().await;
            }
        }
    }
}
