//! A session's message queue belongs to the session in the kernel, not to
//! one opening of it: two openings in one process (two clients of `riot
//! serve`) share it, and messages still waiting when the last one closes
//! are there when the session is opened again (a reloaded page), through
//! real sessions and the strict mock.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // a black-box test: real files and processes

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use riot_config::FlagLayer;
use riot_kernel::{Capabilities, Kernel, OpenOptions, ResumeFrom, SessionHandle};
use riot_protocol::{AgentEvent, Message, SessionId, TerminalReason, UserBlock};
use riot_runtime::{RandomIds, RealFs, RealProcessRunner, SystemClock};
use riot_testkit::{MockServer, Reply, Script, Wire};

struct World {
    _home: tempfile::TempDir,
    project: tempfile::TempDir,
    server: MockServer,
    kernel: Kernel,
}

impl World {
    async fn new(replies: Vec<Reply>) -> Self {
        let server = MockServer::start(Script::new(Wire::Anthropic, replies))
            .await
            .unwrap();
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
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
        let kernel = Kernel::new(caps, home.path().join("riot"));
        Self {
            _home: home,
            project,
            server,
            kernel,
        }
    }

    async fn open(&self, resume: Option<&SessionId>) -> SessionHandle {
        let env = BTreeMap::from([
            ("HOME".to_owned(), self._home.path().display().to_string()),
            ("TEST_KEY".to_owned(), "test-key".to_owned()),
        ]);
        let flags = FlagLayer {
            provider: Some("anthropic".into()),
            base_url: Some(self.server.base_url()),
            model: Some("mock-model".into()),
            api_key_env: Some("TEST_KEY".into()),
            ..FlagLayer::default()
        };
        self.kernel
            .start(OpenOptions {
                cwd: self.project.path().canonicalize().unwrap(),
                env,
                flags,
                trust_project: false,
                max_turns: None,
                resume: resume.map(|id| ResumeFrom::Id(id.clone())),
                asker: riot_kernel::Asker::Nobody,
                mcp_servers: Vec::new(),
            })
            .await
            .unwrap()
    }
}

fn texts(handle: &SessionHandle) -> Vec<String> {
    handle.queued().waiting.iter().map(text_of).collect()
}

/// The text of a queued message (one text block from the person).
fn text_of(message: &Message) -> String {
    match message {
        Message::User(u) => match &u.content[..] {
            [UserBlock::Text { text }] => text.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_is_shared_by_openings_and_outlives_the_last_one_while_messages_wait() {
    let world = World::new(vec![Reply::Text("Hello.".into())]).await;
    let first = world.open(None).await;
    // A session is saved with its first turn; then it can be opened again.
    let events: Vec<AgentEvent> = first.prompt("hi").unwrap().collect().await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            AgentEvent::Done {
                reason: TerminalReason::Completed
            }
        )),
        "{events:#?}"
    );
    let id = first.id().clone();
    let second = world.open(Some(&id)).await;

    // Two openings, one queue.
    let kept = first.queue("check b too");
    assert_eq!(texts(&second), ["check b too"]);
    assert!(second.edit_queued(&kept, "check b and d"));
    assert_eq!(texts(&first), ["check b and d"]);

    // The last opening closes with a message waiting: it is there when the
    // session is opened again.
    first.close().await;
    second.close().await;
    let reopened = world.open(Some(&id)).await;
    assert_eq!(texts(&reopened), ["check b and d"]);
    // Another session, opened while it waits, never sees it.
    let other = world.open(None).await;
    assert!(texts(&other).is_empty(), "another session saw this queue");
    other.close().await;

    // Taken, and closed with nothing waiting: the next opening starts empty.
    assert_eq!(reopened.take_queued().len(), 1);
    reopened.close().await;
    let last = world.open(Some(&id)).await;
    assert!(texts(&last).is_empty());
    last.close().await;
}

/// What a face watching the session sees of its queue: every change, in
/// order, as one stream of updates, until it stops watching.
#[tokio::test]
async fn queue_changes_reach_a_watching_face_in_order_until_it_stops_watching() {
    let world = World::new(vec![]).await;
    let handle = world.open(None).await;
    let seen: Arc<std::sync::Mutex<Vec<Vec<String>>>> = Arc::default();
    let watching = Arc::new(std::sync::atomic::AtomicBool::new(true));
    {
        let (seen, watching) = (Arc::clone(&seen), Arc::clone(&watching));
        handle.watch_updates(Arc::new(move |update| {
            if let riot_kernel::SessionUpdate::Queue(change) = update {
                let texts = change.waiting.iter().map(text_of).collect();
                seen.lock().unwrap().push(texts);
            }
            watching.load(std::sync::atomic::Ordering::SeqCst)
        }));
    }
    let a = handle.queue("a");
    let b = handle.queue("b");
    assert!(handle.edit_queued(&a, "a2"));
    assert!(handle.withdraw_queued(&b));
    assert!(!handle.withdraw_queued(&b), "b no longer waits");
    assert_eq!(
        *seen.lock().unwrap(),
        [vec!["a"], vec!["a", "b"], vec!["a2", "b"], vec!["a2"]]
    );
    // The face stops watching: the change it is told last is the last.
    watching.store(false, std::sync::atomic::Ordering::SeqCst);
    handle.queue("c");
    handle.queue("d");
    assert_eq!(seen.lock().unwrap().len(), 5);
    assert_eq!(handle.take_queued().len(), 3, "a2, c and d");
    assert!(handle.queued().waiting.is_empty());
    handle.close().await;
}
