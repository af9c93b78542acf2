//! The world the kernel works in, as the face injects it, and the few
//! facts every part of the crate reads from it: the capabilities, the
//! session's current model, the person's home directory. It imports
//! nothing of the crate, so every module may use it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use riot_protocol::{Clock, FileSystem, IdGen, ProcessRunner};

/// The world the kernel works in, injected by the face.
#[derive(Debug, Clone)]
pub struct Capabilities {
    pub fs: Arc<dyn FileSystem>,
    pub proc: Arc<dyn ProcessRunner>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGen>,
    /// The network for WebFetch and WebSearch (`NoWeb`: neither is
    /// declared).
    pub web: Arc<dyn riot_protocol::Web>,
    /// Makes each session's terminals (`NoTerminals`: the Terminal tool is
    /// not declared).
    pub terminals: Arc<dyn riot_protocol::TerminalHost>,
    /// The OS sandbox Bash's commands run in (`NoSandbox`: none, and the
    /// status says so).
    pub sandbox: Arc<dyn riot_protocol::Sandbox>,
    /// Seeds the retry jitter (a well-mixed random value from the face).
    pub seed: u64,
}

/// The session's current model, shared with what asks a model on its
/// behalf (subagents, auto mode's classifier), so `/model` reaches them.
#[derive(Debug, Clone)]
pub struct SessionModel(Arc<Mutex<String>>);

impl SessionModel {
    /// A cell holding `model`.
    pub fn new(model: impl Into<String>) -> Self {
        Self(Arc::new(Mutex::new(model.into())))
    }

    /// The model now.
    pub fn get(&self) -> String {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Switches it.
    pub fn set(&self, model: &str) {
        model.clone_into(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// The person's home directory, for `~` in rules and tool paths.
pub fn user_home(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}
