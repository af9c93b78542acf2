//! ACP's side of a session's questions: each question the session asks
//! ([`riot_kernel::SessionHandle::questions`]) becomes a
//! `session/request_permission` request to the client, and the option the
//! person picked goes back as the session's answer
//! ([`riot_kernel::SessionHandle::answer`]). Questions are asked side by
//! side, as the scheduler may ask for several calls at once; the scheduler
//! keeps the timeout and the turn's cancellation.

use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Meta, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use riot_kernel::{Answer, Question, QuestionAsked};
use riot_protocol::{PermissionOutcome, PermissionRequestDetail, QuestionOutcome, QuestionRequest};

use super::Slot;
use crate::mapping::{self, ToolCalls};

/// Puts the questions of the session in `slot` to the client until the
/// slot is closed.
pub(super) fn watch(cx: ConnectionTo<Client>, session_id: String, slot: Arc<Slot>) {
    let Some(mut questions) = slot.session.questions() else {
        return;
    };
    tokio::spawn(async move {
        loop {
            let asked = tokio::select! {
                () = slot.closed.cancelled() => break,
                asked = questions.recv() => match asked {
                    Some(asked) => asked,
                    None => break,
                },
            };
            let asker = Asker {
                connection: cx.clone(),
                session_id: session_id.clone(),
                calls: Arc::clone(&slot.calls),
            };
            let slot = Arc::clone(&slot);
            tokio::spawn(async move {
                let QuestionAsked { id, question } = asked;
                let answer = match question {
                    Question::Permission { detail, .. } => {
                        Answer::Permission(asker.ask(*detail).await)
                    }
                    Question::Questions(request) => {
                        Answer::Questions(asker.ask_user(request).await)
                    }
                };
                if let Err(e) = slot.session.answer(id, answer) {
                    tracing::debug!(error = %e, "the client answered too late");
                }
            });
        }
    });
}

/// Asks the client one question of a session.
struct Asker {
    connection: ConnectionTo<Client>,
    session_id: String,
    calls: Arc<Mutex<ToolCalls>>,
}

impl Asker {
    /// Tells the client about a call the first time it is mentioned.
    fn announce(
        &self,
        session_id: &str,
        id: &str,
        tool_name: &str,
        title: &str,
        input: Option<&serde_json::Value>,
    ) {
        let first = self
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .announce(id);
        if first {
            let update = mapping::tool_call(id, tool_name, title, input, ToolCallStatus::Pending);
            if let Err(e) = self
                .connection
                .send_notification(SessionNotification::new(session_id.to_owned(), update))
            {
                tracing::warn!(error = %e, "could not announce a tool call");
            }
        }
    }

    /// A permission question, with what the call would change.
    async fn ask(&self, detail: PermissionRequestDetail) -> PermissionOutcome {
        let session_id = self.session_id.clone();
        let id = detail.tool_use_id.as_str().to_owned();
        // A question names a call the client must already know: announce it
        // first (the scheduler asks before the call starts), after what the
        // turn said before it.
        mapping::caught_up(&self.calls).await;
        self.announce(
            &session_id,
            &id,
            &detail.tool_name,
            &detail.describe,
            Some(&detail.input),
        );
        let fields = ToolCallUpdateFields::new()
            .title(detail.describe.clone())
            .name(detail.tool_name.clone())
            .kind(mapping::tool_kind(&detail.tool_name))
            .status(ToolCallStatus::Pending)
            .raw_input(detail.input.clone())
            .locations(detail.path.as_ref().map(|p| vec![ToolCallLocation::new(p)]))
            // What the call would change, from the question's preview.
            .content(mapping::question_diff(&detail).map(|diff| vec![diff]));
        // The whole question as Riot sees it — the resolved path, the full
        // command, the reason — for a client that shows more than ACP has.
        let mut meta = Meta::new();
        meta.insert("riot".into(), serde_json::json!({ "detail": &detail }));
        let rule = detail.suggested_rule.as_deref();
        let request = RequestPermissionRequest::new(
            session_id,
            ToolCallUpdate::new(id, fields).meta(meta),
            mapping::permission_options(rule),
        );
        match self.connection.send_request(request).block_task().await {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(chosen) => {
                    mapping::chosen_outcome(&chosen.option_id.0, rule)
                }
                _ => PermissionOutcome::Cancelled,
            },
            Err(e) => {
                tracing::warn!(error = %e, "the client did not answer a permission request");
                PermissionOutcome::Cancelled
            }
        }
    }

    /// Each multiple-choice question becomes a permission request whose
    /// options are the choices (ACP has no question request of its own).
    /// A free-text question cannot be shown and stays unanswered.
    async fn ask_user(&self, request: QuestionRequest) -> QuestionOutcome {
        let session_id = self.session_id.clone();
        if request.questions.iter().all(|q| q.options.is_empty()) {
            // Someone is there, but ACP can only show choices.
            return QuestionOutcome::Answered(vec![Vec::new(); request.questions.len()]);
        }
        let id = request.tool_use_id.as_str().to_owned();
        let first_title = request
            .questions
            .first()
            .map(|q| q.question.clone())
            .unwrap_or_default();
        mapping::caught_up(&self.calls).await;
        self.announce(&session_id, &id, &request.tool_name, &first_title, None);
        let mut answers = Vec::with_capacity(request.questions.len());
        for question in &request.questions {
            if question.options.is_empty() {
                answers.push(Vec::new());
                continue;
            }
            let title = match &question.header {
                Some(header) => format!("{header}: {}", question.question),
                None => question.question.clone(),
            };
            let mut fields = ToolCallUpdateFields::new()
                .title(title)
                .kind(mapping::tool_kind(&request.tool_name))
                .status(ToolCallStatus::Pending);
            if let Some(context) = &request.context {
                fields = fields.content(vec![ToolCallContent::from(context.clone())]);
            }
            let permission = RequestPermissionRequest::new(
                session_id.clone(),
                ToolCallUpdate::new(id.clone(), fields),
                mapping::question_options(question),
            );
            let chosen = match self.connection.send_request(permission).block_task().await {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(chosen) => {
                        mapping::chosen_label(question, &chosen.option_id.0)
                    }
                    _ => None,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "the client did not answer a question");
                    None
                }
            };
            match chosen {
                Some(label) => answers.push(vec![label]),
                None => return QuestionOutcome::Declined,
            }
        }
        QuestionOutcome::Answered(answers)
    }
}
