//! The session as an actor: one task owns a [`Session`]; every face (`riot
//! exec`, ACP over stdio and WebSocket, the terminal UI) drives it through
//! a cloneable [`SessionHandle`].
//!
//! Operations go in, events come out:
//!
//! - [`SessionHandle::prompt`] starts a turn and returns its events as a
//!   [`Turn`] stream (exactly one `Done`, last). A second prompt while one
//!   runs is refused with [`KernelError::Busy`]; a face that wants to
//!   send more during a turn [`queue`](SessionHandle::queue)s it.
//!   [`SessionHandle::deliver`] starts a turn from what Riot queued alone
//!   (a background agent's result that ended after the turn), for a face
//!   that waited for one with [`SessionHandle::background_result`].
//! - [`SessionHandle::set_mode`] and [`SessionHandle::set_model`] apply at
//!   once between turns. During a turn they apply between model
//!   requests: the mode from the next batch of tool calls on, the model
//!   from the next request (the loop takes the switch before it builds
//!   one). Both are recorded in the transcript.
//! - Reads of the session ([`messages`](SessionHandle::messages),
//!   [`tool_names`](SessionHandle::tool_names)) and the other changes
//!   ([`clear`](SessionHandle::clear)) run between turns, in the order
//!   they were sent.
//! - [`SessionHandle::status`] / [`SessionHandle::watch`] say whether a
//!   turn runs and which mode and model hold, so no face needs its own copy
//!   or a lock probe.
//! - The queue, the background tasks and the terminals are reached only
//!   through operations on the handle (`handle/updates.rs`), and a face
//!   hears of their changes through [`SessionHandle::watch_updates`]; the
//!   session's questions come out of [`SessionHandle::questions`] and go
//!   back in with [`SessionHandle::answer`].
//!
//! When the last handle is dropped, a running turn is cancelled, runs to
//! its end (results paired, transcript written) and the actor saves the
//! session's file state and stops. [`SessionHandle::close`] does the same
//! and waits for it.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use riot_protocol::{
    AgentEvent, CancelReason, CancelScope, Message, MessageId, ModelCapabilities, PermissionMode,
    SessionId, ThinkingLevel, Usage,
};
use riot_providers::{HttpProvider, ListedModel};
use tokio::sync::{mpsc, oneshot, watch};

use crate::session::{KernelError, Session};

mod updates;
pub use updates::{SessionUpdate, Stopper, UpdateSink};

/// What a face sees of a session without asking the actor.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionStatus {
    /// A turn is running.
    pub running: bool,
    /// The permission mode the next tool batch runs in.
    pub mode: PermissionMode,
    /// The model the next request goes to.
    pub model: String,
    /// That model's context window in tokens.
    pub context_window: u64,
    /// How hard the model thinks before it answers.
    pub thinking: ThinkingLevel,
    /// Tokens of the main loop's requests since the session was opened.
    pub usage: Usage,
    /// Main-loop model requests since the session was opened.
    pub requests: u64,
}

/// How long a session waits for its endpoint's model listing.
pub const LISTING_TIMEOUT_MS: u64 = 5_000;

type Job = Box<dyn FnOnce(&mut Session) -> futures::future::BoxFuture<'_, ()> + Send>;

/// What a turn starts from.
enum TurnInput {
    /// The person's prompt (or `/command`) and its images.
    Prompt {
        text: String,
        images: Vec<riot_protocol::ImageSource>,
    },
    /// Riot's waiting messages alone ([`SessionHandle::deliver`]).
    Queued,
}

enum Op {
    Turn {
        input: TurnInput,
        cancel: CancelScope,
        events: mpsc::UnboundedSender<AgentEvent>,
    },
    SetMode(PermissionMode, oneshot::Sender<()>),
    SetModel(String, oneshot::Sender<()>),
    SetThinking(ThinkingLevel, oneshot::Sender<()>),
    /// Runs between turns with the session borrowed.
    Between(Job),
    Close,
}

#[derive(Debug)]
struct Shared {
    id: SessionId,
    cwd: PathBuf,
    notices: Vec<String>,
    sandbox: String,
    commands: Vec<riot_extensions::commands::Command>,
    skills: riot_extensions::skills::SkillCatalog,
    terminals: Arc<dyn riot_protocol::Terminals>,
    questions: Arc<crate::questions::Questions>,
    pending: crate::queue::PendingMessages,
    background: crate::background::BackgroundTasks,
    cost: Arc<riot_providers::meter::CostMeter>,
    /// Set by `prompt` before the operation is sent, cleared by the actor
    /// when the turn has ended and the session is settled.
    busy: AtomicBool,
    /// The running turn's scope.
    running: Mutex<Option<CancelScope>>,
    status: watch::Sender<SessionStatus>,
    /// Resolves when the actor has stopped.
    stopped: watch::Receiver<bool>,
    /// Told each time a background task starts, makes a call or ends.
    background_changed: Arc<tokio::sync::Notify>,
    /// The endpoint: its model listing and each model's capabilities.
    endpoint: Arc<HttpProvider>,
    /// The endpoint's listing, asked for once.
    listed: tokio::sync::OnceCell<Arc<[ListedModel]>>,
}

/// A cloneable handle on a running session. See the module docs.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    shared: Arc<Shared>,
    ops: mpsc::UnboundedSender<Op>,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Turn {
                input: TurnInput::Prompt { text, .. },
                ..
            } => f.debug_struct("Prompt").field("text", text).finish(),
            Op::Turn {
                input: TurnInput::Queued,
                ..
            } => f.write_str("Deliver"),
            Op::SetMode(mode, _) => f.debug_tuple("SetMode").field(mode).finish(),
            Op::SetModel(model, _) => f.debug_tuple("SetModel").field(model).finish(),
            Op::SetThinking(level, _) => f.debug_tuple("SetThinking").field(level).finish(),
            Op::Between(_) => f.write_str("Between"),
            Op::Close => f.write_str("Close"),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionHandle {
    /// Starts the actor that owns `session` (on the current tokio runtime).
    pub fn spawn(session: Session) -> Self {
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let (status, _) = watch::channel(SessionStatus {
            running: false,
            mode: session.mode(),
            model: session.model().to_owned(),
            context_window: session.context_window(),
            thinking: session.thinking(),
            usage: Usage::default(),
            requests: 0,
        });
        let (stopped_tx, stopped) = watch::channel(false);
        let background_changed = Arc::new(tokio::sync::Notify::new());
        {
            let changed = Arc::clone(&background_changed);
            session
                .background_tasks()
                .watch(Arc::new(move |_| changed.notify_waiters()));
        }
        let shared = Arc::new(Shared {
            id: session.id().clone(),
            cwd: session.cwd().to_owned(),
            notices: session.notices().to_vec(),
            sandbox: session.sandbox().to_owned(),
            commands: session.commands().to_vec(),
            skills: session.skills().clone(),
            terminals: Arc::clone(session.terminals()),
            questions: Arc::clone(session.questions()),
            pending: session.pending(),
            background: session.background_tasks().clone(),
            cost: session.cost_meter(),
            busy: AtomicBool::new(false),
            running: Mutex::new(None),
            status,
            stopped,
            background_changed,
            endpoint: Arc::clone(session.endpoint()),
            listed: tokio::sync::OnceCell::new(),
        });
        let actor = Actor {
            session,
            shared: Arc::clone(&shared),
            ops: ops_rx,
            deferred: VecDeque::new(),
        };
        tokio::spawn(async move {
            actor.run().await;
            let _ = stopped_tx.send(true);
        });
        Self {
            shared,
            ops: ops_tx,
        }
    }

    /// The session id.
    pub fn id(&self) -> &SessionId {
        &self.shared.id
    }

    /// The project directory the session works in.
    pub fn cwd(&self) -> &Path {
        &self.shared.cwd
    }

    /// One-line notices for the person, from opening the session.
    pub fn notices(&self) -> &[String] {
        &self.shared.notices
    }

    /// The OS sandbox around the session's commands, as every face shows
    /// it: "sandboxed (bubblewrap)", "sandboxed (Landlock)" or "not
    /// sandboxed: REASON".
    pub fn sandbox(&self) -> &str {
        &self.shared.sandbox
    }

    /// The slash commands a person can type: built-ins, then files.
    pub fn commands(&self) -> &[riot_extensions::commands::Command] {
        &self.shared.commands
    }

    /// The skills the model can load.
    pub fn skills(&self) -> &riot_extensions::skills::SkillCatalog {
        &self.shared.skills
    }

    /// The session's questions for the person — permissions, AskUser's
    /// questions, plans to approve — in the order they are asked, each
    /// answered with [`answer`](Self::answer). Given once, to the face
    /// that answers; `None` after that, and for a session opened with
    /// [`Asker::Nobody`](crate::Asker::Nobody).
    pub fn questions(&self) -> Option<mpsc::UnboundedReceiver<crate::QuestionAsked>> {
        self.shared.questions.take_stream()
    }

    /// Answers the question `id`. Refused (a usage error) when no such
    /// question waits — it was answered, timed out or its turn was
    /// stopped — or when the answer is of the other kind.
    pub fn answer(&self, id: crate::QuestionId, answer: crate::Answer) -> Result<(), KernelError> {
        self.shared.questions.answer(id, answer)
    }

    /// Whether a turn runs, the mode and model that hold, and the main
    /// loop's usage so far.
    pub fn status(&self) -> SessionStatus {
        self.shared.status.borrow().clone()
    }

    /// What the session has cost so far, main loop and side requests
    /// (readable during a turn); `usd` is `None` once a model had no price.
    pub fn cost(&self) -> riot_protocol::SessionCost {
        self.shared.cost.total()
    }

    /// A receiver that sees every change of [`status`](Self::status).
    pub fn watch(&self) -> watch::Receiver<SessionStatus> {
        self.shared.status.subscribe()
    }

    /// Whether a turn is running (or about to start).
    pub fn is_running(&self) -> bool {
        self.shared.busy.load(Ordering::SeqCst)
    }

    /// Starts a turn for `text` (a prompt or a `/command`). Refused with
    /// [`KernelError::Busy`] while another turn runs, and with
    /// [`KernelError::Closed`] after the session was closed.
    pub fn prompt(&self, text: impl Into<String>) -> Result<Turn, KernelError> {
        self.prompt_with_images(text, Vec::new())
    }

    /// [`prompt`](Self::prompt) with images sent after the text (an ACP
    /// prompt's image blocks); each is prepared as Read prepares one.
    pub fn prompt_with_images(
        &self,
        text: impl Into<String>,
        images: Vec<riot_protocol::ImageSource>,
    ) -> Result<Turn, KernelError> {
        self.start_turn(TurnInput::Prompt {
            text: text.into(),
            images,
        })
    }

    /// Starts a turn that gives the model what Riot queued while no turn
    /// ran — a background task's result — when no prompt of the person's
    /// will carry it (`riot exec` after its prompts, the terminal UI while
    /// the person is away). `Ok(None)` when nothing of Riot's waits.
    /// Refused as [`prompt`](Self::prompt) is.
    pub fn deliver(&self) -> Result<Option<Turn>, KernelError> {
        if !self.shared.pending.has_riots() {
            return Ok(None);
        }
        self.start_turn(TurnInput::Queued).map(Some)
    }

    /// Waits until something of Riot's that is not held waits in the
    /// queue for [`deliver`](Self::deliver) (`true`), or until none can
    /// come: no background task runs and every ended one's result was
    /// queued (`false`). Returns at once when either already holds. A held
    /// message (put back after the person stopped the turn that carried
    /// it) does not count: it waits for the person.
    pub async fn background_result(&self) -> bool {
        loop {
            let changed = self.shared.background_changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            // Settled first: a result queued after this reading is seen
            // below; one queued before it, too.
            let settled = self.shared.background.settled();
            if self.shared.pending.riots_waking() {
                return true;
            }
            if settled {
                return false;
            }
            changed.await;
        }
    }

    fn start_turn(&self, input: TurnInput) -> Result<Turn, KernelError> {
        if self
            .shared
            .busy
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Err(KernelError::Busy);
        }
        let cancel = CancelScope::new();
        *lock(&self.shared.running) = Some(cancel.clone());
        let (events, rx) = mpsc::unbounded_channel();
        let op = Op::Turn {
            input,
            cancel: cancel.clone(),
            events,
        };
        if self.ops.send(op).is_err() {
            lock(&self.shared.running).take();
            self.shared.busy.store(false, Ordering::SeqCst);
            return Err(KernelError::Closed);
        }
        Ok(Turn {
            events: rx,
            cancel,
            done: false,
        })
    }

    /// Stops the running turn, if any, for `reason`; whether one ran.
    pub fn cancel(&self, reason: CancelReason) -> bool {
        match lock(&self.shared.running).as_ref() {
            Some(scope) => {
                scope.cancel(reason);
                true
            }
            None => false,
        }
    }

    /// Queues a message sent during a turn: the loop delivers it after
    /// the pending tool results. Returns its id (to edit or withdraw it:
    /// [`edit_queued`](Self::edit_queued)).
    pub fn queue(&self, text: &str) -> MessageId {
        self.shared.pending.push(text)
    }

    /// Switches the permission mode: at once between turns, from the next
    /// batch of tool calls during one. Recorded in the transcript; the
    /// status says it once this returns.
    pub async fn set_mode(&self, mode: PermissionMode) -> Result<(), KernelError> {
        let (tx, rx) = oneshot::channel();
        self.ops
            .send(Op::SetMode(mode, tx))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)
    }

    /// Switches the model: at once between turns, from the next model
    /// request during one. Recorded in the transcript; the status says it
    /// once this returns.
    pub async fn set_model(&self, model: &str) -> Result<(), KernelError> {
        let (tx, rx) = oneshot::channel();
        self.ops
            .send(Op::SetModel(model.to_owned(), tx))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)
    }

    /// Sets how hard the model thinks: at once between turns, from the
    /// next turn during one. The status says it once this returns.
    pub async fn set_thinking(&self, level: ThinkingLevel) -> Result<(), KernelError> {
        let (tx, rx) = oneshot::channel();
        self.ops
            .send(Op::SetThinking(level, tx))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)
    }

    /// The models the endpoint serves, asked for once per session (at
    /// most [`LISTING_TIMEOUT_MS`]); empty when it lists none or the
    /// listing failed, which is logged.
    pub async fn listed_models(&self) -> Arc<[ListedModel]> {
        let shared = &self.shared;
        shared
            .listed
            .get_or_init(|| async {
                match shared.endpoint.list_models(LISTING_TIMEOUT_MS).await {
                    Ok(models) => models.into(),
                    Err(e) => {
                        tracing::info!(error = %e.message, "the endpoint did not list its models");
                        Arc::from(Vec::new())
                    }
                }
            })
            .await
            .clone()
    }

    /// What `model` can do on this endpoint (the model table and the
    /// settings' overrides).
    pub fn capabilities(&self, model: &str) -> ModelCapabilities {
        riot_protocol::Provider::capabilities(self.shared.endpoint.as_ref(), model)
    }

    /// The names of the tools the model is offered now, in the order sent
    /// (between turns).
    pub async fn tool_names(&self) -> Result<Vec<String>, KernelError> {
        self.read(Session::tool_names).await
    }

    /// Runs `f` on the session between turns (after the running turn, in
    /// the order operations were sent) and returns what it returns.
    async fn read<R, F>(&self, f: F) -> Result<R, KernelError>
    where
        R: Send + 'static,
        F: FnOnce(&Session) -> R + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |session: &mut Session| {
            let _ = tx.send(f(session));
            Box::pin(async {})
        });
        self.ops
            .send(Op::Between(job))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)
    }

    /// The history so far (between turns).
    pub async fn messages(&self) -> Result<Vec<Message>, KernelError> {
        self.read(|s| s.messages().to_vec()).await
    }

    /// Usage of side requests (compaction summaries, auto mode's
    /// classifier) in this process (between turns).
    pub async fn side_usage(&self) -> Result<Usage, KernelError> {
        self.read(Session::side_usage).await
    }

    /// Starts the conversation over (`/clear`), between turns.
    pub async fn clear(&self) -> Result<(), KernelError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |session: &mut Session| {
            session.clear();
            let _ = tx.send(());
            Box::pin(async {})
        });
        self.ops
            .send(Op::Between(job))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)
    }

    /// Rewinds to just before user message `to` (docs/rewind.md), between
    /// turns: files the agent changed from then on, the conversation from
    /// that message on, or both, as `what` says.
    pub async fn rewind(
        &self,
        to: u32,
        what: crate::checkpoints::RewindWhat,
        force: bool,
    ) -> Result<crate::checkpoints::RewindOutcome, KernelError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |session: &mut Session| {
            Box::pin(async move {
                let _ = tx.send(session.rewind(to, what, force).await);
            })
        });
        self.ops
            .send(Op::Between(job))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)?
    }

    /// Undoes the last rewind, if the session did nothing since.
    pub async fn undo_rewind(
        &self,
        force: bool,
    ) -> Result<crate::checkpoints::RewindOutcome, KernelError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |session: &mut Session| {
            Box::pin(async move {
                let _ = tx.send(session.undo_rewind(force).await);
            })
        });
        self.ops
            .send(Op::Between(job))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)?
    }

    /// The user messages a rewind can go back to, with the files each turn
    /// changed (between turns).
    pub async fn rewind_points(&self) -> Result<Vec<crate::checkpoints::RewindPoint>, KernelError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |session: &mut Session| {
            Box::pin(async move {
                let _ = tx.send(session.rewind_points().await);
            })
        });
        self.ops
            .send(Op::Between(job))
            .map_err(|_| KernelError::Closed)?;
        rx.await.map_err(|_| KernelError::Closed)?
    }

    /// Ends the session: a running turn is cancelled and runs to its end,
    /// what the session read is saved, and the actor stops. Waits for all
    /// of it; other clones of the handle are refused from then on.
    pub async fn close(self) {
        self.cancel(CancelReason::Shutdown);
        let _ = self.ops.send(Op::Close);
        let mut stopped = self.shared.stopped.clone();
        let _ = stopped.wait_for(|s| *s).await;
    }
}

/// The events of one turn; exactly one `Done`, last. Dropping it before
/// the end stops the turn (the actor still runs it to its end, so the
/// transcript stays paired).
#[derive(Debug)]
pub struct Turn {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    cancel: CancelScope,
    done: bool,
}

impl Stream for Turn {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let polled = self.events.poll_recv(cx);
        if let Poll::Ready(Some(AgentEvent::Done { .. }) | None) = &polled {
            self.done = true;
        }
        polled
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if !self.done {
            self.cancel.cancel(CancelReason::User);
        }
    }
}

struct Actor {
    session: Session,
    shared: Arc<Shared>,
    ops: mpsc::UnboundedReceiver<Op>,
    /// Operations that arrived during a turn and wait for its end.
    deferred: VecDeque<Op>,
}

impl Actor {
    async fn run(mut self) {
        loop {
            let op = match self.deferred.pop_front() {
                Some(op) => op,
                None => match self.ops.recv().await {
                    Some(op) => op,
                    None => break,
                },
            };
            match op {
                Op::Turn {
                    input,
                    cancel,
                    events,
                } => self.turn(input, cancel, &events).await,
                Op::SetMode(mode, done) => {
                    self.session.set_mode(mode);
                    self.publish();
                    let _ = done.send(());
                }
                Op::SetModel(model, done) => {
                    self.session.set_model(&model);
                    self.publish();
                    let _ = done.send(());
                }
                Op::SetThinking(level, done) => {
                    self.session.set_thinking(level);
                    self.publish();
                    let _ = done.send(());
                }
                Op::Between(job) => job(&mut self.session).await,
                Op::Close => break,
            }
            self.publish();
        }
        // Nothing more will run: drop a prompt that raced the close.
        self.ops.close();
        // A face may still hold the terminals: end them with the session.
        self.session.terminals().close_all();
        self.session.shutdown_language_servers().await;
        if let Err(e) = self.session.save_file_state().await {
            tracing::warn!(error = %e, "could not save the session's file state");
        }
    }

    /// The status from the session itself, between turns.
    fn publish(&self) {
        let mode = self.session.mode();
        let model = self.session.model().to_owned();
        let window = self.session.context_window();
        let thinking = self.session.thinking();
        self.shared.status.send_if_modified(|s| {
            let changed = s.mode != mode
                || s.model != model
                || s.context_window != window
                || s.thinking != thinking;
            s.mode = mode;
            s.model = model;
            s.context_window = window;
            s.thinking = thinking;
            changed
        });
    }

    async fn turn(
        &mut self,
        input: TurnInput,
        cancel: CancelScope,
        events: &mpsc::UnboundedSender<AgentEvent>,
    ) {
        self.shared.status.send_modify(|s| s.running = true);
        let mode_cell = self.session.mode_cell();
        let model_switch = self.session.model_switch();
        let mut closing = false;
        let mut done = None;
        // A thinking level set during the turn applies to the next one.
        let mut thinking_after = None;
        {
            let stream = match input {
                TurnInput::Prompt { text, images } => {
                    self.session.attach_images(images);
                    futures::future::Either::Left(self.session.turn(&text, cancel.clone()))
                }
                TurnInput::Queued => {
                    futures::future::Either::Right(self.session.deliver_turn(cancel.clone()))
                }
            };
            let mut stream = std::pin::pin!(stream);
            loop {
                tokio::select! {
                    biased;
                    event = stream.next() => {
                        let Some(event) = event else { break };
                        if let AgentEvent::Usage { model, usage } = &event {
                            self.shared.status.send_modify(|s| {
                                s.usage.add(usage);
                                s.requests += 1;
                                model.clone_into(&mut s.model);
                            });
                        }
                        // `Done` waits until the session has settled, so
                        // a face that saw it may prompt again at once.
                        if let AgentEvent::Done { .. } = &event {
                            done = Some(event);
                            continue;
                        }
                        // A face that stopped listening dropped its `Turn`,
                        // which cancelled the turn; it still runs to its end.
                        let _ = events.send(event);
                    }
                    op = self.ops.recv(), if !closing => match op {
                        Some(Op::SetMode(mode, done)) => {
                            mode_cell.set(mode);
                            self.shared.status.send_modify(|s| s.mode = mode);
                            let _ = done.send(());
                        }
                        Some(Op::SetModel(model, done)) => {
                            model_switch.switch(&model);
                            self.shared.status.send_modify(|s| model.clone_into(&mut s.model));
                            let _ = done.send(());
                        }
                        Some(Op::SetThinking(level, done)) => {
                            thinking_after = Some(level);
                            self.shared.status.send_modify(|s| s.thinking = level);
                            let _ = done.send(());
                        }
                        Some(Op::Close) | None => {
                            closing = true;
                            cancel.cancel(CancelReason::Shutdown);
                            self.deferred.push_back(Op::Close);
                        }
                        Some(other) => self.deferred.push_back(other),
                    },
                }
            }
        }
        // A model switch the loop did not get to (no request after it)
        // applies now.
        if let Some(model) = model_switch.take() {
            self.session.set_model(&model);
        }
        if let Some(level) = thinking_after {
            self.session.set_thinking(level);
        }
        lock(&self.shared.running).take();
        self.publish();
        self.shared.status.send_modify(|s| s.running = false);
        self.shared.busy.store(false, Ordering::SeqCst);
        if let Some(done) = done {
            let _ = events.send(done);
        }
    }
}

impl crate::session::Kernel {
    /// Opens a new or resumed session and starts its actor: what every
    /// face drives.
    pub async fn start(
        &self,
        options: crate::session::OpenOptions,
    ) -> Result<SessionHandle, KernelError> {
        Ok(SessionHandle::spawn(self.open(options).await?))
    }
}
