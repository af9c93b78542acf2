//! The permission gate of the terminal UI: each question the scheduler asks
//! (a permission, AskUser questions, a plan to approve) is sent to the UI's
//! loop over a channel with a one-shot reply, and shown inline.

use riot_protocol::{
    PermissionGate, PermissionOutcome, PermissionRequestDetail, QuestionOutcome, QuestionRequest,
    RequestId,
};
use tokio::sync::{mpsc, oneshot};

/// A question for the person, with where the answer goes.
#[derive(Debug)]
pub enum GateRequest {
    Permission {
        request_id: RequestId,
        detail: Box<PermissionRequestDetail>,
        reply: oneshot::Sender<PermissionOutcome>,
    },
    Questions {
        request: QuestionRequest,
        reply: oneshot::Sender<QuestionOutcome>,
    },
}

/// Forwards questions to the UI; see the module docs.
#[derive(Debug, Clone)]
pub struct TuiGate {
    tx: mpsc::UnboundedSender<GateRequest>,
}

impl TuiGate {
    /// A gate and the receiver the UI's loop reads questions from.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<GateRequest>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }
}

#[async_trait::async_trait]
impl PermissionGate for TuiGate {
    fn can_answer(&self) -> bool {
        !self.tx.is_closed()
    }

    async fn ask(
        &self,
        request_id: RequestId,
        detail: PermissionRequestDetail,
    ) -> PermissionOutcome {
        let (reply, answer) = oneshot::channel();
        let request = GateRequest::Permission {
            request_id,
            detail: Box::new(detail),
            reply,
        };
        if self.tx.send(request).is_err() {
            return PermissionOutcome::Cancelled;
        }
        // The UI dropping the question (it closed) is a denial.
        answer.await.unwrap_or(PermissionOutcome::Cancelled)
    }

    async fn ask_user(&self, request: QuestionRequest) -> QuestionOutcome {
        let (reply, answer) = oneshot::channel();
        if self
            .tx
            .send(GateRequest::Questions { request, reply })
            .is_err()
        {
            return QuestionOutcome::NoOneToAsk;
        }
        answer.await.unwrap_or(QuestionOutcome::Declined)
    }
}

#[cfg(test)]
mod tests {
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

    #[tokio::test]
    async fn a_question_is_answered_through_the_channel_and_a_gone_ui_denies() {
        let (gate, mut rx) = TuiGate::new();
        let asking = tokio::spawn({
            let gate = gate.clone();
            async move { gate.ask(RequestId::new("r1"), detail()).await }
        });
        let Some(GateRequest::Permission {
            reply,
            detail: asked,
            ..
        }) = rx.recv().await
        else {
            panic!("expected a permission question");
        };
        assert_eq!(asked.path.as_deref(), Some("/p/a.txt"));
        reply.send(PermissionOutcome::AllowOnce).unwrap();
        assert_eq!(asking.await.unwrap(), PermissionOutcome::AllowOnce);

        drop(rx);
        assert!(!gate.can_answer());
        assert_eq!(
            gate.ask(RequestId::new("r2"), detail()).await,
            PermissionOutcome::Cancelled
        );
    }
}
