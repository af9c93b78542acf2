//! Background subagents (docs/parallel.md): a Task call with
//! `run_in_background` returns the task's id at once and the parent keeps
//! working; the subagent runs on its own task, with nobody to answer its
//! permission questions (each becomes a denial with its reason, through
//! [`crate::NobodyAnswers`]). When it ends, its result is queued once as a
//! message to the parent's conversation (the session's
//! [`PendingMessages`], delivered after the running batch's results, or
//! with the next prompt, or in a turn of its own a face starts with
//! `SessionHandle::deliver`); `TaskOutput` reads its progress or result on
//! demand. They stop with their session: [`BackgroundGuard`], held by the
//! session, cancels every one still running when the session is dropped.
//! Faces list them and stop one through the session handle
//! (`SessionHandle::tasks`, `stop_task`), and hear when one starts, makes
//! a tool call or ends as a `SessionUpdate::Task`
//! (`SessionHandle::watch_updates`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use riot_protocol::{
    DecisionReason, MessageOrigin, PermissionResult, PromptContext, Tool, ToolContext, ToolOutcome,
    ValidationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::queue::PendingMessages;

/// Where a background task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Running,
    Completed,
    Failed,
    Stopped,
}

impl TaskState {
    /// `running`, `completed`, `failed` or `stopped`.
    pub fn word(self) -> &'static str {
        match self {
            TaskState::Running => "running",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Stopped => "stopped",
        }
    }
}

/// One background task, as faces and `TaskOutput` see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    pub id: String,
    pub agent: String,
    pub description: String,
    pub state: TaskState,
    /// Tool calls the subagent has started.
    pub calls: usize,
    /// What it is doing now (its last tool call).
    pub last: Option<String>,
    /// Its answer (or why it failed), once it ended.
    pub result: Option<String>,
}

#[derive(Debug)]
struct Entry {
    summary: TaskSummary,
    cancel: CancellationToken,
    /// Stopped by the person (a face's stop button): its result waits
    /// for them, held, instead of starting a turn by itself.
    stopped_by_person: bool,
}

/// Told of a task each time it starts, makes a tool call or ends; called
/// outside the tasks' lock.
pub type TaskWatcher = Arc<dyn Fn(&TaskSummary) + Send + Sync>;

#[derive(Default)]
struct Inner {
    tasks: BTreeMap<u64, Entry>,
    next: u64,
    /// The parent's queue, once the session is assembled.
    queue: Option<PendingMessages>,
    /// Set when the session ended: nothing new starts.
    closed: bool,
    /// Tasks that ended and whose result is not in the queue yet.
    unqueued: usize,
    watchers: Vec<TaskWatcher>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("tasks", &self.tasks)
            .field("next", &self.next)
            .field("queue", &self.queue)
            .field("closed", &self.closed)
            .field("unqueued", &self.unqueued)
            .field("watchers", &self.watchers.len())
            .finish()
    }
}

/// A session's background tasks; clones share them.
#[derive(Debug, Clone, Default)]
pub struct BackgroundTasks {
    inner: Arc<Mutex<Inner>>,
}

/// Parses `bg_N`.
fn number(id: &str) -> Option<u64> {
    id.strip_prefix("bg_")?.parse().ok()
}

impl BackgroundTasks {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where finished tasks' results go: the parent session's queue.
    pub fn attach(&self, queue: PendingMessages) {
        self.lock().queue = Some(queue);
    }

    /// Calls `watcher` with a task's summary each time one starts, makes a
    /// tool call or ends, from now on.
    pub fn watch(&self, watcher: TaskWatcher) {
        self.lock().watchers.push(watcher);
    }

    /// Tells the watchers, with the lock released.
    fn tell(inner: MutexGuard<'_, Inner>, summary: TaskSummary) {
        let watchers = inner.watchers.clone();
        drop(inner);
        for watcher in watchers {
            watcher(&summary);
        }
    }

    /// Registers a task; its id (`bg_1`, `bg_2`, … per session) and the
    /// token that stops it. `None` once the session has ended.
    pub fn start(&self, agent: &str, description: &str) -> Option<(String, CancellationToken)> {
        let mut inner = self.lock();
        if inner.closed {
            return None;
        }
        inner.next += 1;
        let n = inner.next;
        let id = format!("bg_{n}");
        let cancel = CancellationToken::new();
        inner.tasks.insert(
            n,
            Entry {
                summary: TaskSummary {
                    id: id.clone(),
                    agent: agent.to_owned(),
                    description: description.to_owned(),
                    state: TaskState::Running,
                    calls: 0,
                    last: None,
                    result: None,
                },
                cancel: cancel.clone(),
                stopped_by_person: false,
            },
        );
        let summary = inner.tasks[&n].summary.clone();
        Self::tell(inner, summary);
        Some((id, cancel))
    }

    /// A tool call the task started.
    pub fn progress(&self, id: &str, describe: &str) {
        let mut inner = self.lock();
        let Some(entry) = number(id).and_then(|n| inner.tasks.get_mut(&n)) else {
            return;
        };
        entry.summary.calls += 1;
        entry.summary.last = Some(describe.to_owned());
        let summary = entry.summary.clone();
        Self::tell(inner, summary);
    }

    /// The task ended: records its result and queues it, once, as a
    /// message to the parent's conversation (Riot's, not the person's:
    /// [`MessageOrigin::Context`]). Watchers hear of the end after the
    /// result is in the queue, so one that then finds the tasks
    /// [`settled`](Self::settled) finds every result waiting.
    pub fn finish(&self, id: &str, state: TaskState, result: String) {
        let mut inner = self.lock();
        let Some(entry) = number(id).and_then(|n| inner.tasks.get_mut(&n)) else {
            return;
        };
        if entry.summary.state != TaskState::Running {
            return;
        }
        entry.summary.state = state;
        entry.summary.result = Some(result.clone());
        let text = format!(
            "<background-task id=\"{id}\" agent=\"{}\" status=\"{}\">\n{}\n</background-task>\nThe background task \"{}\" has ended; this is its result.",
            entry.summary.agent,
            state.word(),
            result,
            entry.summary.description
        );
        let summary = entry.summary.clone();
        let held = entry.stopped_by_person;
        let queue = inner.queue.clone();
        inner.unqueued += 1;
        drop(inner);
        // Pushed outside the tasks' lock: the queue's watchers may read
        // the tasks.
        if let Some(queue) = queue {
            if held {
                queue.push_held(&text, MessageOrigin::Context);
            } else {
                queue.push_from(&text, MessageOrigin::Context);
            }
        }
        let mut inner = self.lock();
        inner.unqueued -= 1;
        Self::tell(inner, summary);
    }

    /// No task runs and every ended task's result is in the parent's
    /// queue: nothing more will arrive unless a new task starts.
    pub fn settled(&self) -> bool {
        let inner = self.lock();
        inner.unqueued == 0
            && inner
                .tasks
                .values()
                .all(|e| e.summary.state != TaskState::Running)
    }

    /// Every task, oldest first.
    pub fn list(&self) -> Vec<TaskSummary> {
        self.lock()
            .tasks
            .values()
            .map(|e| e.summary.clone())
            .collect()
    }

    /// One task.
    pub fn get(&self, id: &str) -> Option<TaskSummary> {
        let inner = self.lock();
        number(id)
            .and_then(|n| inner.tasks.get(&n))
            .map(|e| e.summary.clone())
    }

    /// Stops one running task at the person's word (a face's stop
    /// button): its `stopped` result waits for them, held (it goes with
    /// their next prompt rather than starting a turn). False if there is
    /// none of that id running.
    pub fn stop(&self, id: &str) -> bool {
        self.stop_as(id, true)
    }

    /// Stops one running task for Riot's own reason (`riot exec`'s wait
    /// ran out): its result wakes the session as any result does.
    pub fn stop_for_riot(&self, id: &str) -> bool {
        self.stop_as(id, false)
    }

    fn stop_as(&self, id: &str, by_person: bool) -> bool {
        let mut inner = self.lock();
        match number(id).and_then(|n| inner.tasks.get_mut(&n)) {
            Some(entry) if entry.summary.state == TaskState::Running => {
                entry.stopped_by_person = by_person;
                entry.cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// Stops every running task and refuses new ones: the session ended.
    pub fn stop_all(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        for entry in inner.tasks.values() {
            entry.cancel.cancel();
        }
    }
}

/// Held by the session alone (the tasks hold [`BackgroundTasks`] clones):
/// dropping it — the session's end — stops every background task.
#[derive(Debug)]
pub struct BackgroundGuard(pub BackgroundTasks);

impl Drop for BackgroundGuard {
    fn drop(&mut self) {
        self.0.stop_all();
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutputInput {
    /// The id a background Task call returned (`bg_1`, …).
    pub task_id: String,
}

/// `TaskOutput`: a background task's progress, or its result once ended.
#[derive(Debug, Clone)]
pub struct TaskOutput {
    pub tasks: BackgroundTasks,
}

#[async_trait]
impl Tool for TaskOutput {
    type Input = TaskOutputInput;

    fn name(&self) -> &str {
        "TaskOutput"
    }

    fn input_schema(&self) -> Value {
        schemars::schema_for!(TaskOutputInput).to_value()
    }

    fn prompt(&self, _cx: &PromptContext) -> String {
        "Reads a background task started by Task with `run_in_background`: whether it is still running, how many tool calls it made and its latest, or its result once it ended. You do not need to poll: a background task's result arrives by itself as a message when it ends. Use this only when you need to know where it stands now.\n\nNEVER:\n- call it in a loop waiting for a task to end — go on with other work, the result will come;\n- report a task's result to the person before it has arrived.".to_owned()
    }

    fn describe(&self, input: &TaskOutputInput) -> String {
        format!("TaskOutput {}", input.task_id)
    }

    fn is_read_only(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    async fn check_permissions(
        &self,
        _input: &TaskOutputInput,
        ctx: &ToolContext,
    ) -> PermissionResult {
        PermissionResult::Allow {
            reason: DecisionReason::Mode {
                detail: "reading a background task's state changes nothing".into(),
                mode: ctx.mode,
            },
            updated_input: None,
        }
    }

    async fn validate_input(
        &self,
        input: &TaskOutputInput,
        _ctx: &ToolContext,
    ) -> Result<(), ValidationError> {
        if self.tasks.get(&input.task_id).is_none() {
            let known: Vec<String> = self.tasks.list().into_iter().map(|t| t.id).collect();
            return Err(ValidationError::rejected(if known.is_empty() {
                format!(
                    "There is no background task `{}`: none was started in this session.",
                    input.task_id
                )
            } else {
                format!(
                    "There is no background task `{}`. The tasks are: {}.",
                    input.task_id,
                    known.join(", ")
                )
            }));
        }
        Ok(())
    }

    async fn call(&self, input: TaskOutputInput, _ctx: &ToolContext) -> ToolOutcome {
        let Some(task) = self.tasks.get(&input.task_id) else {
            return ToolOutcome::failed(format!(
                "There is no background task `{}`.",
                input.task_id
            ));
        };
        let mut text = format!(
            "Task {} ({}: {}) is {}; {} tool call{}.",
            task.id,
            task.agent,
            task.description,
            task.state.word(),
            task.calls,
            if task.calls == 1 { "" } else { "s" }
        );
        if let Some(last) = &task.last {
            text.push_str(&format!(" Latest: {last}."));
        }
        if let Some(result) = &task.result {
            text.push_str(&format!("\n\nResult:\n{result}"));
        }
        ToolOutcome::text(text, None)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use riot_core::MessageQueue;
    use riot_protocol::{Message, SequentialIds, UserBlock};

    use super::*;

    fn text_of(message: &Message) -> String {
        match message {
            Message::User(u) => u
                .content
                .iter()
                .filter_map(|b| match b {
                    UserBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect(),
            other => panic!("not a user message: {other:?}"),
        }
    }

    #[test]
    fn a_result_is_queued_once_and_stop_all_cancels_and_refuses_new_tasks() {
        let tasks = BackgroundTasks::default();
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        tasks.attach(queue.clone());
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = Arc::clone(&seen);
        tasks.watch(Arc::new(move |t: &TaskSummary| {
            log.lock().unwrap().push(format!(
                "{} {} {} {:?}",
                t.id,
                t.state.word(),
                t.calls,
                t.last
            ));
        }));
        let (id, cancel) = tasks.start("explore", "find the config").unwrap();
        assert_eq!(id, "bg_1");
        tasks.progress(&id, "Read src/config.rs");
        assert_eq!(tasks.get(&id).unwrap().calls, 1);
        tasks.finish(&id, TaskState::Completed, "It is in src/config.rs.".into());
        // A second end (a late cancellation) changes nothing.
        tasks.finish(&id, TaskState::Stopped, "stopped".into());
        let delivered = queue.drain();
        assert_eq!(delivered.len(), 1);
        assert_eq!(
            text_of(&delivered[0]),
            "<background-task id=\"bg_1\" agent=\"explore\" status=\"completed\">\nIt is in src/config.rs.\n</background-task>\nThe background task \"find the config\" has ended; this is its result."
        );
        let Message::User(u) = &delivered[0] else {
            unreachable!()
        };
        assert_eq!(
            u.origin,
            MessageOrigin::Context,
            "Riot's message, not the person's"
        );
        assert!(queue.drain().is_empty());
        assert_eq!(tasks.get(&id).unwrap().state, TaskState::Completed);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "bg_1 running 0 None",
                "bg_1 running 1 Some(\"Read src/config.rs\")",
                "bg_1 completed 1 Some(\"Read src/config.rs\")",
            ]
        );

        let (second, cancel2) = tasks.start("general-purpose", "write").unwrap();
        assert_eq!(second, "bg_2");
        assert!(!cancel.is_cancelled() && !cancel2.is_cancelled());
        drop(BackgroundGuard(tasks.clone()));
        assert!(cancel2.is_cancelled());
        assert!(tasks.start("explore", "late").is_none());
    }

    #[test]
    fn a_result_the_person_stopped_waits_held_and_one_riot_stopped_does_not() {
        let queue = PendingMessages::new(Arc::new(SequentialIds::new()));
        let tasks = BackgroundTasks::default();
        tasks.attach(queue.clone());
        let (person, _) = tasks.start("explore", "stopped by the person").unwrap();
        let (riot, _) = tasks.start("explore", "stopped by Riot").unwrap();
        assert!(tasks.stop(&person));
        assert!(tasks.stop_for_riot(&riot));
        tasks.finish(&person, TaskState::Stopped, "stopped".into());
        assert!(!queue.riots_waking(), "the person's stop wakes nothing");
        tasks.finish(&riot, TaskState::Stopped, "stopped".into());
        assert!(queue.riots_waking(), "Riot's stop does");
        let held: Vec<bool> = queue.list().iter().map(|m| queue.is_held(m.id())).collect();
        assert_eq!(held, vec![true, false]);
        assert!(tasks.settled());
    }
}
