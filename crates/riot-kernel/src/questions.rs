//! The one way a session asks its person: every question — a permission
//! for a tool call, AskUser's questions, a plan to approve — becomes a
//! [`QuestionAsked`] on the session's question stream
//! ([`SessionHandle::questions`](crate::SessionHandle::questions)), and its
//! answer comes back as [`SessionHandle::answer`](crate::SessionHandle::answer)
//! with the question's id. The terminal UI shows them inline; ACP turns
//! them into `session/request_permission`; `riot exec` has nobody to ask
//! and opens its sessions with [`Asker::Nobody`], so every question is
//! denied at once with the reason.
//!
//! The scheduler keeps the timeout and the turn's cancellation: a question
//! it gives up on is forgotten here, and a late answer to it is refused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use riot_protocol::{
    PermissionGate, PermissionOutcome, PermissionRequestDetail, QuestionOutcome, QuestionRequest,
    RequestId,
};
use tokio::sync::{mpsc, oneshot};

use crate::error::KernelError;

/// Who answers a session's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asker {
    /// A person, through the face that takes
    /// [`SessionHandle::questions`](crate::SessionHandle::questions).
    Person,
    /// Nobody (`riot exec`): an Ask is a Deny, and the model is told why.
    Nobody,
}

/// The id of one question while it waits, unique in its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QuestionId(pub u64);

impl std::fmt::Display for QuestionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "q{}", self.0)
    }
}

/// A question for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct QuestionAsked {
    pub id: QuestionId,
    pub question: Question,
}

/// What is asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// May this tool call run? Answered with [`Answer::Permission`]. The
    /// turn's `PermissionRequest` event has the same `request_id`.
    Permission {
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
    },
    /// AskUser's questions, or a plan to approve. Answered with
    /// [`Answer::Questions`].
    Questions(QuestionRequest),
}

/// The person's answer to a [`Question`] of the same kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Permission(PermissionOutcome),
    Questions(QuestionOutcome),
}

impl Answer {
    fn kind(&self) -> &'static str {
        match self {
            Answer::Permission(_) => "a permission answer",
            Answer::Questions(_) => "answers to questions",
        }
    }
}

/// The session's questions while they wait; its [`PermissionGate`].
#[derive(Debug)]
pub(crate) struct Questions {
    asker: Asker,
    asked: mpsc::UnboundedSender<QuestionAsked>,
    /// The stream's receiving end until a face takes it.
    stream: Mutex<Option<mpsc::UnboundedReceiver<QuestionAsked>>>,
    waiting: Mutex<HashMap<QuestionId, Waiting>>,
    next: AtomicU64,
}

/// Where the answer to a waiting question goes.
#[derive(Debug)]
enum Waiting {
    Permission(oneshot::Sender<PermissionOutcome>),
    Questions(oneshot::Sender<QuestionOutcome>),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Questions {
    pub(crate) fn new(asker: Asker) -> Self {
        let (asked, stream) = mpsc::unbounded_channel();
        Self {
            asker,
            asked,
            stream: Mutex::new(Some(stream)),
            waiting: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        }
    }

    /// The question stream, once: `None` for a session nobody answers or
    /// when a face already took it.
    pub(crate) fn take_stream(&self) -> Option<mpsc::UnboundedReceiver<QuestionAsked>> {
        match self.asker {
            Asker::Person => lock(&self.stream).take(),
            Asker::Nobody => None,
        }
    }

    /// Gives `answer` to the question `id`.
    pub(crate) fn answer(&self, id: QuestionId, answer: Answer) -> Result<(), KernelError> {
        let mut waiting = lock(&self.waiting);
        let Some(slot) = waiting.remove(&id) else {
            return Err(KernelError::Input(format!(
                "no question `{id}` is waiting: it was answered, timed out or its turn was stopped"
            )));
        };
        let delivered = match (slot, answer) {
            (Waiting::Permission(reply), Answer::Permission(outcome)) => {
                reply.send(outcome).is_ok()
            }
            (Waiting::Questions(reply), Answer::Questions(outcome)) => reply.send(outcome).is_ok(),
            (slot, answer) => {
                let asked = match &slot {
                    Waiting::Permission(_) => "a permission question",
                    Waiting::Questions(_) => "AskUser questions",
                };
                let message = format!(
                    "question `{id}` is {asked}; {} does not fit it",
                    answer.kind()
                );
                waiting.insert(id, slot);
                return Err(KernelError::Input(message));
            }
        };
        if delivered {
            Ok(())
        } else {
            Err(KernelError::Input(format!(
                "no question `{id}` is waiting: it timed out or its turn was stopped"
            )))
        }
    }

    /// Puts `question` on the stream and waits for its answer; `None` when
    /// no face reads the stream any more. Dropping the future (a timeout,
    /// a cancelled turn) forgets the question.
    async fn ask<T>(
        &self,
        question: Question,
        waiting: impl FnOnce(oneshot::Sender<T>) -> Waiting,
    ) -> Option<T> {
        let id = QuestionId(self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (reply, answer) = oneshot::channel();
        lock(&self.waiting).insert(id, waiting(reply));
        let _forget = Forget {
            questions: self,
            id,
        };
        self.asked.send(QuestionAsked { id, question }).ok()?;
        answer.await.ok()
    }
}

/// Removes a question from the waiting ones when its asker stops waiting.
struct Forget<'a> {
    questions: &'a Questions,
    id: QuestionId,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.questions.waiting).remove(&self.id);
    }
}

#[async_trait::async_trait]
impl PermissionGate for Questions {
    fn can_answer(&self) -> bool {
        self.asker == Asker::Person && !self.asked.is_closed()
    }

    async fn ask(
        &self,
        request_id: RequestId,
        detail: PermissionRequestDetail,
    ) -> PermissionOutcome {
        let question = Question::Permission {
            request_id,
            detail: Box::new(detail),
        };
        // The face went away without answering: a denial.
        self.ask(question, Waiting::Permission)
            .await
            .unwrap_or(PermissionOutcome::Cancelled)
    }

    async fn ask_user(&self, request: QuestionRequest) -> QuestionOutcome {
        if !self.can_answer() {
            return QuestionOutcome::NoOneToAsk;
        }
        self.ask(Question::Questions(request), Waiting::Questions)
            .await
            .unwrap_or(QuestionOutcome::Declined)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use riot_protocol::{DecisionReason, ToolUseId};

    use super::*;

    fn detail() -> PermissionRequestDetail {
        PermissionRequestDetail {
            tool_use_id: ToolUseId::new("t1"),
            tool_name: "Write".into(),
            describe: "Write a.txt".into(),
            input: serde_json::json!({}),
            path: Some("/p/a.txt".into()),
            command: None,
            reason: DecisionReason::Consent {
                detail: "writes need approval".into(),
            },
            message: "Allow?".into(),
            suggested_rule: None,
            preview: None,
        }
    }

    fn request() -> QuestionRequest {
        QuestionRequest {
            tool_use_id: ToolUseId::new("t2"),
            tool_name: "AskUser".into(),
            context: None,
            questions: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_question_goes_out_on_the_stream_and_its_answer_comes_back_by_id() {
        let questions = Arc::new(Questions::new(Asker::Person));
        let mut stream = questions.take_stream().expect("the stream, once");
        assert!(questions.take_stream().is_none(), "only one face reads it");
        let asking = tokio::spawn({
            let questions = Arc::clone(&questions);
            async move { PermissionGate::ask(questions.as_ref(), RequestId::new("r1"), detail()).await }
        });
        let asked = stream.recv().await.expect("a question");
        assert_eq!(asked.id, QuestionId(1));
        let Question::Permission {
            request_id,
            detail: d,
        } = &asked.question
        else {
            panic!("a permission question: {asked:?}");
        };
        assert_eq!(
            (request_id.as_str(), d.describe.as_str()),
            ("r1", "Write a.txt")
        );
        // The wrong kind of answer is refused, and the question still waits.
        let wrong = questions.answer(asked.id, Answer::Questions(QuestionOutcome::Declined));
        assert_eq!(
            wrong.unwrap_err().to_string(),
            "question `q1` is a permission question; answers to questions does not fit it"
        );
        questions
            .answer(asked.id, Answer::Permission(PermissionOutcome::AllowOnce))
            .expect("answered");
        assert_eq!(asking.await.unwrap(), PermissionOutcome::AllowOnce);
        // Answered once: a second answer names the question and why.
        let again = questions.answer(asked.id, Answer::Permission(PermissionOutcome::AllowOnce));
        let e = again.unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "no question `q1` is waiting: it was answered, timed out or its turn was stopped"
        );
    }

    #[tokio::test]
    async fn a_question_given_up_on_is_forgotten() {
        let questions = Questions::new(Asker::Person);
        let mut stream = questions.take_stream().unwrap();
        // Asked (polled once), then dropped as the scheduler's timeout does.
        let asking = PermissionGate::ask(&questions, RequestId::new("r1"), detail());
        assert!(futures::FutureExt::now_or_never(asking).is_none());
        let asked = stream.recv().await.unwrap();
        assert!(lock(&questions.waiting).is_empty());
        assert!(
            questions
                .answer(asked.id, Answer::Permission(PermissionOutcome::AllowOnce))
                .is_err()
        );
    }

    #[tokio::test]
    async fn nobody_answers_a_session_without_a_person_or_whose_face_left() {
        let nobody = Questions::new(Asker::Nobody);
        assert!(!nobody.can_answer());
        assert!(nobody.take_stream().is_none());
        assert_eq!(
            nobody.ask_user(request()).await,
            QuestionOutcome::NoOneToAsk
        );

        let person = Questions::new(Asker::Person);
        assert!(person.can_answer());
        drop(person.take_stream());
        assert!(!person.can_answer(), "the face dropped its stream");
        assert_eq!(
            PermissionGate::ask(&person, RequestId::new("r1"), detail()).await,
            PermissionOutcome::Cancelled
        );
        assert_eq!(
            person.ask_user(request()).await,
            QuestionOutcome::NoOneToAsk
        );
    }
}
