//! Step 6 of the pipeline: putting a permission question to the person
//! through the gate, under the clock's timeout and the cancel scope
//! (docs/design.md §9.2: nobody answering, a timeout or a cancellation is
//! never an allow, and the dialog is always closed), and the text of a
//! refusal. The pipeline (`pipeline.rs`) calls in; nothing here knows it.

use futures::future::Either;
use riot_protocol::{
    AgentEvent, CancelScope, ClockExt, DecisionReason, PermissionGate, PermissionOutcome,
    PermissionPolicy, PermissionRequestDetail, PermissionRule, PermissionTarget, RequestId,
    RuleBehavior, RulePattern, RuleSource, ToolCall, ToolEnv, UiPayload,
};

/// Why a call the person was asked about does not run.
pub(super) enum NotAllowed {
    /// Refused (by the person, by nobody answering in time, or because
    /// nobody can answer): the message for the model.
    Refused(String),
    /// Cancelled while asking: the call never started.
    Cancelled,
}

/// What asking the person needs.
pub(super) struct Asker<'a> {
    pub env: &'a ToolEnv,
    pub policy: &'a dyn PermissionPolicy,
    pub gate: &'a dyn PermissionGate,
    pub timeout_ms: u64,
}

impl Asker<'_> {
    /// Asks the person through the gate, under the timeout and the cancel
    /// scope; always closes the question with `PermissionResolved`. The
    /// question's events go to `emit`; `preview` is what the call will do
    /// (`Tool::preview`).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn ask(
        &self,
        call: &ToolCall,
        target: &PermissionTarget,
        reason: DecisionReason,
        message: String,
        suggested_rule: Option<String>,
        preview: Option<UiPayload>,
        scope: &CancelScope,
        describe: &str,
        emit: &(dyn Fn(AgentEvent) + Sync),
    ) -> Result<(), NotAllowed> {
        if !self.gate.can_answer() {
            // docs/design.md §9.2: nobody can answer → Deny, never Allow.
            return Err(NotAllowed::Refused(format!(
                "Permission to run {} ({describe}) was denied: it needs the person's approval ({}), and nobody can answer permission questions in this session. Do not retry it; find another way that does not need this permission, or tell the person what you need and why.",
                call.name,
                reason.detail()
            )));
        }
        let request_id = RequestId::generate(self.env.ids.as_ref());
        let (path, command) = match target {
            PermissionTarget::Path { path, .. } => (Some(path.display().to_string()), None),
            PermissionTarget::Command { command } => (None, Some(command.clone())),
            PermissionTarget::Url { url } => (Some(url.clone()), None),
            PermissionTarget::Opaque => (None, None),
        };
        let offered = suggested_rule.clone();
        let detail = PermissionRequestDetail {
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            describe: describe.to_owned(),
            input: call.input.clone(),
            path,
            command,
            reason: reason.clone(),
            message,
            suggested_rule,
            preview,
        };
        emit(AgentEvent::PermissionRequest {
            request_id: request_id.clone(),
            detail: Box::new(detail.clone()),
        });
        let timeout_ms = self.timeout_ms;
        let asking = self
            .env
            .clock
            .timeout(timeout_ms, self.gate.ask(request_id.clone(), detail));
        let outcome =
            match futures::future::select(Box::pin(asking), Box::pin(scope.cancelled())).await {
                Either::Left((Ok(outcome), _)) => outcome,
                Either::Left((Err(_elapsed), _)) => PermissionOutcome::TimedOut,
                Either::Right(((), _)) => PermissionOutcome::Cancelled,
            };
        emit(AgentEvent::PermissionResolved {
            request_id,
            outcome: outcome.clone(),
        });
        if !matches!(
            outcome,
            PermissionOutcome::TimedOut | PermissionOutcome::Cancelled
        ) {
            self.policy.answered_by_person();
        }
        match outcome {
            PermissionOutcome::AllowOnce => Ok(()),
            PermissionOutcome::AllowAlways { rule } => {
                // Only the rule that was offered is remembered: a face (or
                // a client) cannot widen "always" beyond what the chain
                // said would stick.
                if offered.as_deref() == Some(rule.as_str()) {
                    self.remember(&rule, RuleBehavior::Allow);
                } else {
                    tracing::warn!(
                        rule,
                        "ignoring an \"always\" rule that was not offered; allowed once"
                    );
                }
                Ok(())
            }
            PermissionOutcome::RejectOnce { feedback } => {
                Err(NotAllowed::Refused(match feedback {
                    Some(f) if !f.trim().is_empty() => format!(
                        "The person denied permission to run {} ({describe}) and said: {f}\nFollow their guidance instead of retrying.",
                        call.name
                    ),
                    _ => format!(
                        "The person denied permission to run {} ({describe}). Do not retry it; ask what they would prefer or take another approach.",
                        call.name
                    ),
                }))
            }
            PermissionOutcome::RejectAlways { rule }
                if offered.as_deref() == Some(rule.as_str()) =>
            {
                self.remember(&rule, RuleBehavior::Deny);
                Err(NotAllowed::Refused(format!(
                    "The person denied permission to run {} ({describe}) and asked not to be asked again (rule `{rule}`). Do not retry it; take another approach.",
                    call.name
                )))
            }
            // A rule that was not offered is not remembered: a rejection
            // this once.
            PermissionOutcome::RejectAlways { .. } => Err(NotAllowed::Refused(format!(
                "The person denied permission to run {} ({describe}). Do not retry it; ask what they would prefer or take another approach.",
                call.name
            ))),
            PermissionOutcome::TimedOut => Err(NotAllowed::Refused(format!(
                "Permission to run {} ({describe}) was denied: nobody answered the question within {} seconds. Continue without it, or tell the person what you need.",
                call.name,
                timeout_ms / 1000
            ))),
            PermissionOutcome::Cancelled => Err(NotAllowed::Cancelled),
        }
    }

    fn remember(&self, rule: &str, behavior: RuleBehavior) {
        match RulePattern::parse(rule) {
            Ok(pattern) => self.policy.remember(PermissionRule {
                pattern,
                behavior,
                source: RuleSource::Session,
            }),
            Err(e) => {
                tracing::warn!(rule, error = %e, "ignoring an unparsable rule from a permission answer")
            }
        }
    }
}

pub(super) fn denied_text(
    tool: &str,
    describe: &str,
    message: &str,
    reason: &DecisionReason,
) -> String {
    let why = if message.trim().is_empty() {
        reason.detail()
    } else {
        message
    };
    // The sentence ends here: a message that already ends one keeps its own.
    let why = why.trim_end().trim_end_matches('.');
    format!(
        "Permission to run {tool} ({describe}) was denied: {why}. Do not retry the same call; choose an approach this permission allows, or tell the person what you need."
    )
}
