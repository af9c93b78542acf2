//! One running language server: its process (a [`PipedChild`] in its own
//! process group), a writer task, a reader task that answers the server's
//! own requests and keeps each file's latest published diagnostics, and
//! the documents it has open with their versions.
//!
//! No task holds the [`Client`]: dropping it drops the child, which kills
//! the server's group; the reader then sees the end of its stdout and
//! the writer the end of its queue.

#![allow(clippy::disallowed_methods)] // the real process and clock: this crate is a runtime

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lsp_types::notification::{
    DidChangeConfiguration, DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Exit, Initialized, Notification, PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request, Shutdown, WorkspaceConfiguration};
use lsp_types::{
    ClientCapabilities, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, InitializeParams, InitializedParams,
    NumberOrString, PublishDiagnosticsClientCapabilities, PublishDiagnosticsParams,
    TextDocumentClientCapabilities, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, TextDocumentSyncClientCapabilities, Uri, VersionedTextDocumentIdentifier,
    WorkspaceFolder,
};
use riot_protocol::{Diagnostic, ProcessSpec, Severity};
use riot_runtime::PipedChild;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::sync::{mpsc, oneshot, watch};

use crate::framing::{read_message, write_message};

/// Lines of a server's stderr kept to say why it exited.
const STDERR_LINES: usize = 5;

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Life {
    /// Started, `initialize` not yet answered.
    Starting,
    /// Initialized: documents may be opened.
    Ready,
    /// Gone (or its initialization failed): why.
    Exited(Gone),
}

/// Why a server is gone, or will never be ready.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Gone {
    /// Its output ended; the last lines it wrote on stderr, if any.
    #[error("it exited{}", last_words(.0))]
    Exited(Vec<String>),
    /// It answered `initialize` with an error: the server's message.
    #[error("it refused to initialize: {0}")]
    RefusedInit(String),
    /// Riot stopped it.
    #[error("it was stopped")]
    Stopped,
}

/// `; its last words: a | b` after "it exited", when it said anything.
fn last_words(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last words: {}", tail.join(" | "))
    }
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// Its process could not be spawned.
    #[error(transparent)]
    Spawn(#[from] riot_protocol::ProcessError),
    /// It started without all three pipes.
    #[error("its pipes could not be opened")]
    NoPipes,
}

#[derive(Debug)]
struct Published {
    /// Which publish this was, counted per server.
    seq: u64,
    version: Option<i32>,
    diagnostics: Vec<Diagnostic>,
}

/// What the reader and the client share.
#[derive(Debug)]
struct Shared {
    name: String,
    project: PathBuf,
    life: Mutex<Life>,
    published: Mutex<HashMap<PathBuf, Published>>,
    publishes: AtomicU64,
    /// Bumped on every publish and every change of life; waiters watch it.
    bump: watch::Sender<u64>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Value>>>,
    stderr: Mutex<VecDeque<String>>,
    was_ready: std::sync::atomic::AtomicBool,
    /// The server takes incremental changes (`textDocumentSync` 2).
    incremental: std::sync::atomic::AtomicBool,
    /// The server's configuration from the settings, for
    /// `workspace/configuration`.
    settings: Option<Value>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn poke(&self) {
        self.bump.send_modify(|n| *n += 1);
    }

    fn set_life(&self, life: Life) {
        let mut now = lock(&self.life);
        // Once exited, a server stays exited.
        if !matches!(*now, Life::Exited(_)) {
            *now = life;
        }
        drop(now);
        self.poke();
    }

    fn exited_detail(&self) -> Gone {
        Gone::Exited(lock(&self.stderr).iter().cloned().collect())
    }
}

/// A file path as a `file:` URI.
pub(crate) fn file_uri(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// A `file:` URI's path.
fn uri_path(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

/// One started server.
#[derive(Debug)]
pub(crate) struct Client {
    shared: Arc<Shared>,
    tx: mpsc::UnboundedSender<Value>,
    child: tokio::sync::Mutex<Option<PipedChild>>,
    pid: Option<u32>,
    next_id: AtomicI64,
    /// Open documents: the version and the text last sent.
    docs: Mutex<HashMap<PathBuf, Doc>>,
}

/// What a server was last told of an open document.
#[derive(Debug, Clone)]
struct Doc {
    version: i32,
    text: String,
}

/// The one-range change that turns `old` into `new` (what differs between
/// their common start and common end), in LSP positions: line and UTF-16
/// column, the protocol's default encoding.
fn change_of(old: &str, new: &str) -> TextDocumentContentChangeEvent {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or_else(|| old.len().min(new.len()), |((i, _), _)| i);
    // The common end, not reaching back into the common start of either.
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum::<usize>();
    let start = position_at(old, prefix);
    let end = position_at(old, old.len() - suffix);
    TextDocumentContentChangeEvent {
        range: Some(lsp_types::Range { start, end }),
        range_length: None,
        text: new[prefix..new.len() - suffix].to_owned(),
    }
}

/// The LSP position of byte offset `at` (on a char boundary) in `text`.
fn position_at(text: &str, at: usize) -> lsp_types::Position {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    lsp_types::Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        character: u32::try_from(character).unwrap_or(u32::MAX),
    }
}

impl Client {
    /// Spawns `program args…` in `project` and starts initializing it in
    /// the background.
    pub(crate) fn start(
        name: String,
        program: PathBuf,
        args: Vec<String>,
        project: PathBuf,
        env_set: Vec<(String, String)>,
        env_remove: Vec<String>,
        config: ServerConfig,
    ) -> Result<Arc<Client>, StartError> {
        let spec = ProcessSpec {
            program: program.display().to_string(),
            args,
            cwd: project.clone(),
            env_set,
            env_remove,
            timeout_ms: None,
            capture: Default::default(),
            stdin: None,
            undoable_only: false,
        };
        let mut child = PipedChild::spawn(&spec)?;
        let pid = child.pid();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.take_stdin(), child.take_stdout(), child.take_stderr())
        else {
            return Err(StartError::NoPipes);
        };
        let (bump, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            name,
            project: project.clone(),
            life: Mutex::new(Life::Starting),
            published: Mutex::new(HashMap::new()),
            publishes: AtomicU64::new(0),
            bump,
            pending: Mutex::new(HashMap::new()),
            stderr: Mutex::new(VecDeque::new()),
            was_ready: std::sync::atomic::AtomicBool::new(false),
            incremental: std::sync::atomic::AtomicBool::new(false),
            settings: config.settings.clone(),
        });
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();

        // Writer: the queue to stdin, in order.
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(msg) = rx.recv().await {
                if write_message(&mut stdin, &msg).await.is_err() {
                    break;
                }
            }
        });
        // Stderr: drained, its last lines kept.
        {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let line = line.trim().to_owned();
                    if line.is_empty() {
                        continue;
                    }
                    let mut tail = lock(&shared.stderr);
                    if tail.len() == STDERR_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(line.chars().take(300).collect());
                }
            });
        }
        // Reader.
        {
            let shared = Arc::clone(&shared);
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut input = BufReader::new(stdout);
                loop {
                    match read_message(&mut input).await {
                        Ok(Some(msg)) => dispatch(&shared, &tx, msg),
                        Ok(None) => break,
                        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                            tracing::debug!(server = %shared.name, "unreadable message: {e}");
                        }
                        Err(_) => break,
                    }
                }
                lock(&shared.pending).clear();
                let detail = shared.exited_detail();
                shared.set_life(Life::Exited(detail));
            });
        }

        let client = Arc::new(Client {
            shared: Arc::clone(&shared),
            tx: tx.clone(),
            child: tokio::sync::Mutex::new(Some(child)),
            pid,
            next_id: AtomicI64::new(1),
            docs: Mutex::new(HashMap::new()),
        });

        // Initialization, in the background: a turn never waits for it
        // longer than an edit's wait.
        let init = client.request(
            Initialize::METHOD,
            initialize_params(&project, config.initialization_options),
        );
        let settings = config.settings;
        let tx_init = tx;
        tokio::spawn(async move {
            match init.await {
                Some(reply) if reply.get("result").is_some() => {
                    // `textDocumentSync`: a kind, or options with `change`.
                    let sync = &reply["result"]["capabilities"]["textDocumentSync"];
                    let kind = sync.as_u64().or_else(|| sync["change"].as_u64());
                    shared.incremental.store(kind == Some(2), Ordering::SeqCst);
                    let _ = tx_init.send(notification(
                        Initialized::METHOD,
                        serde_json::to_value(InitializedParams {}).unwrap_or(Value::Null),
                    ));
                    if let Some(settings) = settings {
                        let _ = tx_init.send(notification(
                            DidChangeConfiguration::METHOD,
                            json!({ "settings": settings }),
                        ));
                    }
                    shared.was_ready.store(true, Ordering::SeqCst);
                    shared.set_life(Life::Ready);
                }
                Some(reply) => {
                    let why = reply["error"]["message"]
                        .as_str()
                        .unwrap_or("no reason given")
                        .to_owned();
                    shared.set_life(Life::Exited(Gone::RefusedInit(why)));
                }
                None => {}
            }
        });
        Ok(client)
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    pub(crate) fn life(&self) -> Life {
        lock(&self.shared.life).clone()
    }

    /// Whether the server ever finished initializing.
    pub(crate) fn was_ready(&self) -> bool {
        self.shared.was_ready.load(Ordering::SeqCst)
    }

    /// Sends a request; the reply, or `None` if the server went away.
    fn request(&self, method: &str, params: Value) -> impl Future<Output = Option<Value>> + use<> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (reply_tx, reply_rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, reply_tx);
        let _ = self
            .tx
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        async move { reply_rx.await.ok() }
    }

    /// Waits until the server is initialized; `Err` with why it never
    /// will be.
    pub(crate) async fn ready(&self) -> Result<(), Gone> {
        let mut rx = self.shared.bump.subscribe();
        loop {
            match self.life() {
                Life::Ready => return Ok(()),
                Life::Exited(why) => return Err(why),
                Life::Starting => {}
            }
            if rx.changed().await.is_err() {
                return Err(Gone::Exited(Vec::new()));
            }
        }
    }

    /// Sends `text` as `path`'s content (didOpen the first time, then a
    /// whole-document didChange); the version sent and the publish count
    /// before sending it.
    pub(crate) fn sync(&self, path: &Path, language_id: &str, text: String) -> Option<(i32, u64)> {
        let uri = file_uri(path)?;
        let before = self.shared.publishes.load(Ordering::SeqCst);
        let incremental = self.shared.incremental.load(Ordering::SeqCst);
        let mut docs = lock(&self.docs);
        let (method, params, version) = match docs.get(path).map(|d| (d.version, &d.text)) {
            None => (
                DidOpenTextDocument::METHOD,
                serde_json::to_value(DidOpenTextDocumentParams {
                    text_document: TextDocumentItem {
                        uri,
                        language_id: language_id.to_owned(),
                        version: 1,
                        text: text.clone(),
                    },
                }),
                1,
            ),
            Some((v, before)) => (
                DidChangeTextDocument::METHOD,
                serde_json::to_value(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier {
                        uri,
                        version: v + 1,
                    },
                    // Only what changed, to a server that takes that;
                    // the whole text otherwise.
                    content_changes: vec![if incremental {
                        change_of(before, &text)
                    } else {
                        TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text: text.clone(),
                        }
                    }],
                }),
                v + 1,
            ),
        };
        docs.insert(path.to_path_buf(), Doc { version, text });
        drop(docs);
        let _ = self.tx.send(notification(method, params.ok()?));
        // The edit is on disk already: servers that check on save (and
        // watchers keyed to it) see it as saved.
        let saved = DidSaveTextDocumentParams {
            text_document: TextDocumentIdentifier {
                uri: file_uri(path)?,
            },
            text: None,
        };
        if let Ok(saved) = serde_json::to_value(saved) {
            let _ = self
                .tx
                .send(notification(DidSaveTextDocument::METHOD, saved));
        }
        Some((version, before))
    }

    /// Re-reads the open documents from disk after a command: one whose
    /// text changed is sent again (`didChange`, `didSave`), one that is
    /// gone is closed. Before the server is ready nothing is open yet.
    pub(crate) async fn resync(&self) {
        let mut open: Vec<(PathBuf, String)> = lock(&self.docs)
            .iter()
            .map(|(path, doc)| (path.clone(), doc.text.clone()))
            .collect();
        // In path order: the server hears of them the same way each time.
        open.sort();
        for (path, sent) in open {
            match tokio::fs::read_to_string(&path).await {
                // The language id only goes with `didOpen`: this is a change.
                Ok(text) if text != sent => {
                    let _ = self.sync(&path, "", text);
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    lock(&self.docs).remove(&path);
                    self.send_close(&path);
                }
                // Unreadable for now (or no longer text): left as it was.
                Err(_) => {}
            }
        }
    }

    fn send_close(&self, path: &Path) {
        let Some(uri) = file_uri(path) else { return };
        let closed = DidCloseTextDocumentParams {
            text_document: TextDocumentIdentifier { uri },
        };
        if let Ok(closed) = serde_json::to_value(closed) {
            let _ = self
                .tx
                .send(notification(DidCloseTextDocument::METHOD, closed));
        }
    }

    /// Waits for `path`'s diagnostics published after publish number
    /// `after` and for `version` or later (when the server says which).
    pub(crate) async fn diagnostics(
        &self,
        path: &Path,
        version: i32,
        after: u64,
    ) -> Result<Vec<Diagnostic>, Gone> {
        let mut rx = self.shared.bump.subscribe();
        loop {
            if let Some(p) = lock(&self.shared.published).get(path)
                && p.seq > after
                && p.version.is_none_or(|v| v >= version)
            {
                return Ok(p.diagnostics.clone());
            }
            if let Life::Exited(why) = self.life() {
                return Err(why);
            }
            if rx.changed().await.is_err() {
                return Err(Gone::Exited(Vec::new()));
            }
        }
    }

    /// Asks the server to shut down (briefly) and to exit, gives it a
    /// moment to do so on its own, then kills its group (what it started
    /// included).
    pub(crate) async fn stop(&self) {
        let mut asked_to_exit = false;
        if self.life() == Life::Ready {
            // The documents Riot opened are closed first, as an editor
            // closing its files would.
            let open: Vec<PathBuf> = lock(&self.docs).drain().map(|(path, _)| path).collect();
            for path in open {
                self.send_close(&path);
            }
            let bye = self.request(Shutdown::METHOD, Value::Null);
            if tokio::time::timeout(std::time::Duration::from_millis(500), bye)
                .await
                .is_ok()
            {
                asked_to_exit = self
                    .tx
                    .send(notification(Exit::METHOD, Value::Null))
                    .is_ok();
            }
        }
        if let Some(mut child) = self.child.lock().await.take() {
            if asked_to_exit {
                let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
            }
            let _ = child.kill().await;
        }
        self.shared.set_life(Life::Exited(Gone::Stopped));
    }
}

/// How long a server that was asked to exit has to do so before its group
/// is killed.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(1_000);

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// What the settings give a server beyond its command.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerConfig {
    pub initialization_options: Option<Value>,
    pub settings: Option<Value>,
}

/// The part of `settings` a `workspace/configuration` item asks for: a
/// dotted `section` (`python.analysis`), or everything; null when absent.
fn section(settings: Option<&Value>, section: Option<&str>) -> Value {
    let Some(mut at) = settings else {
        return Value::Null;
    };
    for key in section.unwrap_or("").split('.').filter(|k| !k.is_empty()) {
        match at.get(key) {
            Some(inner) => at = inner,
            None => return Value::Null,
        }
    }
    at.clone()
}

#[allow(deprecated)] // root_uri: older servers read only it
fn initialize_params(project: &Path, initialization_options: Option<Value>) -> Value {
    let uri = file_uri(project);
    let params = InitializeParams {
        initialization_options,
        process_id: Some(std::process::id()),
        root_uri: uri.clone(),
        workspace_folders: uri.map(|uri| {
            vec![WorkspaceFolder {
                uri,
                name: project.file_name().map_or_else(
                    || "project".to_owned(),
                    |n| n.to_string_lossy().into_owned(),
                ),
            }]
        }),
        capabilities: ClientCapabilities {
            text_document: Some(TextDocumentClientCapabilities {
                synchronization: Some(TextDocumentSyncClientCapabilities {
                    dynamic_registration: Some(false),
                    will_save: Some(false),
                    will_save_wait_until: Some(false),
                    did_save: Some(true),
                }),
                publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                    version_support: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    serde_json::to_value(params).unwrap_or(Value::Null)
}

/// One message from the server: a reply, a request of its own (answered
/// at once), or a notification.
fn dispatch(shared: &Shared, tx: &mpsc::UnboundedSender<Value>, msg: Value) {
    let method = msg.get("method").and_then(Value::as_str);
    let id = msg.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            if let Some(id) = id.as_i64()
                && let Some(waiter) = lock(&shared.pending).remove(&id)
            {
                let _ = waiter.send(msg);
            }
        }
        (Some(method), Some(id)) => {
            // workspace/configuration wants one answer per item: the
            // section of the configured settings it names (all of them
            // without a section), or null. Everything else
            // (registerCapability, progress tokens, …) is acknowledged.
            let result = if method == WorkspaceConfiguration::METHOD {
                let items = msg["params"]["items"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                Value::Array(
                    items
                        .iter()
                        .map(|item| section(shared.settings.as_ref(), item["section"].as_str()))
                        .collect(),
                )
            } else {
                Value::Null
            };
            let _ = tx.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        (Some(PublishDiagnostics::METHOD), None) => {
            let Ok(params) =
                serde_json::from_value::<PublishDiagnosticsParams>(msg["params"].clone())
            else {
                return;
            };
            let Some(path) = uri_path(&params.uri) else {
                return;
            };
            let diagnostics = params
                .diagnostics
                .iter()
                .map(|d| convert(shared, &path, d))
                .collect();
            let seq = shared.publishes.fetch_add(1, Ordering::SeqCst) + 1;
            lock(&shared.published).insert(
                path,
                Published {
                    seq,
                    version: params.version,
                    diagnostics,
                },
            );
            shared.poke();
        }
        _ => {}
    }
}

fn convert(shared: &Shared, path: &Path, d: &lsp_types::Diagnostic) -> Diagnostic {
    let shown = match path.strip_prefix(&shared.project) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    };
    Diagnostic {
        path: shown,
        line: u64::from(d.range.start.line) + 1,
        column: u64::from(d.range.start.character) + 1,
        severity: match d.severity {
            Some(lsp_types::DiagnosticSeverity::WARNING) => Severity::Warning,
            Some(lsp_types::DiagnosticSeverity::INFORMATION) => Severity::Info,
            Some(lsp_types::DiagnosticSeverity::HINT) => Severity::Hint,
            _ => Severity::Error,
        },
        code: d.code.as_ref().map(|c| match c {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s.clone(),
        }),
        message: d.message.clone(),
        source: d.source.clone().unwrap_or_else(|| shared.name.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `old` with `change` applied, positions read as LSP reads them.
    fn apply(old: &str, change: &TextDocumentContentChangeEvent) -> String {
        let offset = |p: lsp_types::Position| {
            let line_start: usize = old
                .split_inclusive('\n')
                .take(p.line as usize)
                .map(str::len)
                .sum();
            let mut units = 0;
            let mut at = line_start;
            for c in old[line_start..].chars() {
                if units >= p.character as usize {
                    break;
                }
                units += c.len_utf16();
                at += c.len_utf8();
            }
            at
        };
        let range = change.range.expect("a ranged change");
        let (start, end) = (offset(range.start), offset(range.end));
        format!("{}{}{}", &old[..start], change.text, &old[end..])
    }

    #[test]
    fn a_gone_server_says_its_last_words() {
        assert_eq!(Gone::Exited(Vec::new()).to_string(), "it exited");
        assert_eq!(
            Gone::Exited(vec!["error: no toolchain".into(), "bye".into()]).to_string(),
            "it exited; its last words: error: no toolchain | bye"
        );
        assert_eq!(
            Gone::RefusedInit("no reason given".into()).to_string(),
            "it refused to initialize: no reason given"
        );
    }

    #[test]
    fn a_change_is_the_one_range_that_differs_in_utf16_positions() {
        let cases = [
            ("fn main() {}\n", "fn main() { run(); }\n"),
            ("a\nb\nc\n", "a\nB\nB2\nc\n"),
            ("let s = \"😀 x\";\n", "let s = \"😀 y\";\n"),
            ("keep\ndrop this\nkeep\n", "keep\nkeep\n"),
            ("aaaa", "aa"),
            ("", "new\n"),
            ("same\n", "same\n"),
        ];
        for (old, new) in cases {
            let change = change_of(old, new);
            assert_eq!(apply(old, &change), new, "{old:?} -> {new:?}: {change:?}");
        }
        // Only what changed is sent, at UTF-16 columns: the emoji counts 2.
        let change = change_of("let s = \"😀 x\";\n", "let s = \"😀 y\";\n");
        assert_eq!(change.text, "y");
        let range = change.range.unwrap();
        assert_eq!((range.start.line, range.start.character), (0, 12));
        assert_eq!((range.end.line, range.end.character), (0, 13));
    }
}
