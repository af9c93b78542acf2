//! Kernel errors are classified once, by their source: opening a session
//! whose id does not exist is the person's mistake (exit 2, JSON-RPC
//! -32602); a transcript store that cannot be read is a failure (exit 1,
//! -32603) — the same store, two different answers, each from its cause.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // a real store on a temporary disk

use std::collections::BTreeMap;
use std::sync::Arc;

use riot_config::FlagLayer;
use riot_kernel::{Capabilities, Kernel, KernelError, OpenOptions, ResumeFrom, Session};
use riot_protocol::SessionId;
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};

struct World {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    fn kernel(&self) -> Kernel {
        let caps = Capabilities {
            fs: Arc::new(RealFs),
            proc: Arc::new(RealProcessRunner::new()),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds::new()),
            web: Arc::new(riot_protocol::NoWeb),
            terminals: Arc::new(riot_protocol::NoTerminals),
            sandbox: Arc::new(riot_protocol::NoSandbox),
            seed: 7,
        };
        Kernel::new(caps, self.home.path().join("riot"))
    }

    async fn open(&self, resume: ResumeFrom) -> Result<Session, KernelError> {
        let flags = FlagLayer {
            provider: Some("openai".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("local-model".into()),
            ..FlagLayer::default()
        };
        self.kernel()
            .open(OpenOptions {
                cwd: self.project.path().canonicalize().unwrap(),
                env: BTreeMap::from([("HOME".to_owned(), self.home.path().display().to_string())]),
                flags,
                trust_project: false,
                max_turns: None,
                resume: Some(resume),
                asker: riot_kernel::Asker::Nobody,
                mcp_servers: Vec::new(),
            })
            .await
    }
}

#[tokio::test]
async fn resuming_a_session_that_does_not_exist_is_a_usage_error() {
    let world = World::new();
    let error = world
        .open(ResumeFrom::Id(SessionId::new("ses_nope")))
        .await
        .unwrap_err();
    assert!(
        matches!(error, KernelError::Store(_)),
        "the store's error is kept: {error:?}"
    );
    assert_eq!(
        error.to_string(),
        "no session `ses_nope`; `riot sessions list` shows the sessions that exist"
    );
    assert_eq!((error.exit_code(), error.jsonrpc_code()), (2, -32602));
}

#[tokio::test]
async fn a_store_that_cannot_be_read_is_a_failure() {
    let world = World::new();
    let riot = world.home.path().join("riot");
    std::fs::create_dir_all(&riot).unwrap();
    // The sessions directory is a file: every read of it fails.
    std::fs::write(riot.join("sessions"), "not a directory").unwrap();
    let error = world.open(ResumeFrom::Latest).await.unwrap_err();
    assert!(
        matches!(error, KernelError::Store(_)),
        "the store's error is kept: {error:?}"
    );
    assert_eq!(
        (error.exit_code(), error.jsonrpc_code()),
        (1, -32603),
        "{error}"
    );
    assert!(
        std::error::Error::source(&error).is_some(),
        "the I/O error underneath is kept: {error:?}"
    );
}
